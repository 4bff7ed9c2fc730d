// Every scale figure in one command: runs the benches one after another, each in a process of its own
// with --json, and prints one Markdown report (docs/architecture.md#scale says how long each size takes).
//
//   npm run bench:scale                       sizes 1,000 5,000 20,000 100,000; clusters 1 10 50
//   npm run bench:scale -- --quick            a smoke run: 1,000 nodes, clusters 1 and 10, short windows
//   npm run bench:scale -- --sizes 1000,5000 --clusters 1,10 [--cluster-nodes 1000] [--qps 20,100]
//                          [--mass-full-up-to 5000] [--max-marking-passes 20] [--simulate-nodes 20000]
//                          [--relay-seconds 60] [--relay-warmup 10] [--only relay,monitorCost,...]
//                          [--timeout-minutes 360] [--out FILE]
//   npm run bench:scale -- --report FILE     the report of a saved run, nothing run
//
// Per size: bench/relay.ts (10 pods a node), bench/monitorCost.ts, bench/massFailure.ts (a third of the
// nodes silent; above --mass-full-up-to nodes it stops after --max-marking-passes and extrapolates).
// Then bench/multiCluster.ts once per cluster count (clusters of --cluster-nodes nodes: 50 clusters of
// 100,000 would not fit this machine), and bench/simulateRun.ts (`nlc simulate`, 15 virtual minutes).
// One child at a time: on 2 shared cores, two benches would measure each other. A child that fails, times
// out or prints no valid document is reported as failed with the end of its stderr, and the run goes
// on. The run's document (every child's whole JSON) is written to --out after each child, so an
// interrupted run keeps what it measured; the exit code is 1 when any child failed.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { simulationNodeOptions } from '../local/simulate/heapLimit.js';
import {
  BenchNames,
  buildReport,
  ScaleRunSchema,
  validateOutput,
  type BenchName,
  type ChildResult,
  type ScaleRun,
} from './scaleReport.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const log = (message: string): void => {
  process.stderr.write(`[bench:scale] ${message}\n`);
};

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    sizes: { type: 'string' },
    clusters: { type: 'string' },
    'cluster-nodes': { type: 'string' },
    qps: { type: 'string' },
    'mass-full-up-to': { type: 'string' },
    'max-marking-passes': { type: 'string' },
    'simulate-nodes': { type: 'string' },
    'relay-seconds': { type: 'string' },
    'relay-warmup': { type: 'string' },
    only: { type: 'string' },
    'timeout-minutes': { type: 'string' },
    out: { type: 'string' },
    report: { type: 'string' },
  },
});

if (flags.report !== undefined) {
  const saved = ScaleRunSchema.parse(JSON.parse(readFileSync(flags.report, 'utf8')));
  process.stdout.write(buildReport(saved));
  process.exit(0);
}

const count = z.coerce.number().int().nonnegative();
const positiveList = z
  .string()
  .transform((s) => s.split(',').map((x) => Number(x.trim())))
  .pipe(z.array(z.number().int().positive()).min(1));
const quick = flags.quick;
/** A flag's value, or its default (another with --quick). */
const pick = (flag: string | undefined, full: string, smoke: string): string =>
  flag ?? (quick ? smoke : full);
const options = {
  sizes: positiveList.parse(pick(flags.sizes, '1000,5000,20000,100000', '1000')),
  clusters: positiveList.parse(pick(flags.clusters, '1,10,50', '1,10')),
  clusterNodes: count.parse(pick(flags['cluster-nodes'], '1000', '1000')),
  qps: positiveList.parse(pick(flags.qps, '20', '20')),
  massFullUpTo: count.parse(pick(flags['mass-full-up-to'], '5000', '5000')),
  maxMarkingPasses: count.parse(pick(flags['max-marking-passes'], '20', '20')),
  // 0 leaves the simulate run out.
  simulateNodes: count.parse(pick(flags['simulate-nodes'], '20000', '1000')),
  relaySeconds: count.parse(pick(flags['relay-seconds'], '60', '10')),
  relayWarmup: count.parse(pick(flags['relay-warmup'], '10', '5')),
  only: z
    .array(z.enum(BenchNames as [BenchName, ...BenchName[]]))
    .parse(flags.only === undefined ? BenchNames : flags.only.split(',').map((s) => s.trim())),
  // A guard against a hung child, not a budget: a 100,000-node relay run took 35 minutes.
  timeoutMinutes: count.parse(pick(flags['timeout-minutes'], '360', '15')),
};
const out = resolve(
  flags.out ?? `.bench-results/scale-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
);

interface Plan {
  readonly bench: BenchName;
  readonly nodes: number;
  readonly clusters?: number;
  readonly script: string;
  readonly args: readonly string[];
  readonly nodeArgs?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly note?: string;
}

/** The relay's heap cap per docs/relay.md#sizing; up to 5,000 nodes the deployment's own options. */
function relayNodeOptions(nodes: number): Record<string, string> {
  if (nodes <= 5_000) return {};
  const heap = nodes <= 20_000 ? 384 : 768;
  return {
    BENCH_RELAY_NODE_OPTIONS: `--enable-source-maps --max-old-space-size=${heap} --max-semi-space-size=4`,
  };
}

/** Above 20,000 nodes dynalite and the node cache may outgrow V8's default heap (about 4 GB): untested. */
const largeHeap = (nodes: number): string[] => (nodes > 20_000 ? ['--max-old-space-size=8192'] : []);

function plans(): Plan[] {
  const wanted = new Set(options.only);
  const list: Plan[] = [];
  for (const nodes of options.sizes) {
    // Above 20,000 nodes the simulator cannot host every kubelet's renewal every 10 s on a small
    // machine: they renew every 100 s, as in docs/relay.md#sizing.
    const slowKubelets = nodes > 20_000;
    list.push({
      bench: 'relay',
      nodes,
      script: 'bench/relay.ts',
      args: [
        ...['--nodes', String(nodes), '--pods', String(nodes * 10)],
        ...['--seconds', String(options.relaySeconds), '--warmup', String(options.relayWarmup)],
        ...(slowKubelets ? ['--renew-every', '100', '--status-every', '3000'] : []),
        '--json',
      ],
      env: relayNodeOptions(nodes),
      ...(slowKubelets && { note: 'kubelets renew every 100 s, status every 50 minutes' }),
    });
    list.push({
      bench: 'monitorCost',
      nodes,
      script: 'bench/monitorCost.ts',
      args: [String(nodes), '--json'],
      nodeArgs: largeHeap(nodes),
    });
    const capped = nodes > options.massFullUpTo;
    list.push({
      bench: 'massFailure',
      nodes,
      script: 'bench/massFailure.ts',
      args: [
        ...['--nodes', String(nodes), '--qps', options.qps.join(',')],
        ...(capped ? ['--max-marking-passes', String(options.maxMarkingPasses)] : []),
        '--json',
      ],
      nodeArgs: largeHeap(nodes),
      ...(capped && {
        note: `stopped after ${options.maxMarkingPasses} marking passes (above ${options.massFullUpTo.toLocaleString('en-US')} nodes): the time to mark is extrapolated, no recovery measured`,
      }),
    });
  }
  for (const clusters of options.clusters)
    list.push({
      bench: 'multiCluster',
      nodes: options.clusterNodes,
      clusters,
      script: 'bench/multiCluster.ts',
      args: ['--nodes', String(options.clusterNodes), String(clusters), '--json'],
    });
  if (options.simulateNodes > 0)
    list.push({
      bench: 'simulate',
      nodes: options.simulateNodes,
      script: 'bench/simulateRun.ts',
      args: [],
      // The heap `nlc simulate` gives a run of this size (one pod per node), as bench/simulate.bench.ts.
      nodeArgs: simulationNodeOptions(options.simulateNodes, options.simulateNodes),
      env: { NODES: String(options.simulateNodes) },
    });
  return list.filter((p) => wanted.has(p.bench));
}

/** The child running now: stopped with its process group if this process is interrupted. */
let current: ChildProcess | undefined;
/** Signals a child's whole process group (bench/relay.ts starts two processes of its own). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

const STDERR_TAIL_LINES = 40;

async function runChild(plan: Plan): Promise<ChildResult> {
  const nodeArgs = plan.nodeArgs ?? [];
  const envPrefix = Object.entries(plan.env ?? {}).map(([k, v]) => `${k}='${v}'`);
  const base = {
    bench: plan.bench,
    nodes: plan.nodes,
    ...(plan.clusters !== undefined && { clusters: plan.clusters }),
    command: [...envPrefix, 'node', ...nodeArgs, '--import', 'tsx', plan.script, ...plan.args],
    ...(plan.note !== undefined && { note: plan.note }),
  };
  const label = `${plan.bench} ${plan.nodes.toLocaleString('en-US')}${plan.clusters === undefined ? '' : ` × ${plan.clusters}`}`;
  log(`${label}: ${base.command.join(' ')}`);
  const started = performance.now();
  // Its own process group (detached), so a timeout or an interruption stops its children too.
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', plan.script, ...plan.args], {
    cwd: root,
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...plan.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  current = child;
  let stdout = '';
  const stderrLines: string[] = [];
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  // Its progress goes on to this stderr, line by line, with its name; the last lines are kept.
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      process.stderr.write(`  [${label}] ${line}\n`);
      stderrLines.push(line);
    }
    stderrLines.splice(0, Math.max(0, stderrLines.length - STDERR_TAIL_LINES));
  });
  // An object: the timer's callback sets it, which a plain let's narrowing would not see.
  const timeout = { fired: false };
  const timer = setTimeout(() => {
    timeout.fired = true;
    signalGroup(child, 'SIGTERM');
    setTimeout(() => {
      signalGroup(child, 'SIGKILL');
    }, 10_000).unref();
  }, options.timeoutMinutes * 60_000);
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (done) => {
      child.once('error', (error) => {
        done({ code: null, signal: null, error });
      });
      child.once('close', (code, signal) => {
        done({ code, signal });
      });
    },
  );
  clearTimeout(timer);
  current = undefined;
  if (partial !== '') stderrLines.push(partial);
  const wallMs = performance.now() - started;
  const failed = (error: string): ChildResult => ({
    ...base,
    wallMs,
    ok: false,
    error,
    exitCode: exit.code,
    signal: exit.signal,
    stderrTail: stderrLines.slice(-STDERR_TAIL_LINES).join('\n').slice(-6_000),
  });
  let result: ChildResult;
  if (exit.error !== undefined) result = failed(`could not start: ${exit.error.message}`);
  else if (timeout.fired) result = failed(`timed out after ${options.timeoutMinutes} minutes`);
  else if (exit.code !== 0) result = failed(`exited with ${exit.signal ?? `code ${String(exit.code)}`}`);
  else {
    const valid = validateOutput(plan.bench, stdout);
    result = valid.ok ? { ...base, wallMs, ok: true, output: valid.output } : failed(valid.error);
  }
  log(`${label}: ${result.ok ? 'ok' : `failed (${result.error})`} in ${(wallMs / 1000).toFixed(0)} s`);
  return result;
}

const loads = (): number[] => loadavg().map((l) => +l.toFixed(2));
const run: ScaleRun = {
  startedAt: new Date().toISOString(),
  finishedAt: null,
  machine: {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
    loadAverageStart: loads(),
    loadAverageEnd: null,
  },
  options: {
    sizes: options.sizes,
    clusters: options.clusters,
    clusterNodes: options.clusterNodes,
    quick,
  },
  children: [],
};
const save = (): void => {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(run, null, 2)}\n`);
};

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    if (current !== undefined) signalGroup(current, 'SIGKILL');
    save();
    log(`interrupted: what was measured is in ${relative(process.cwd(), out)}`);
    process.exit(130);
  });

const todo = plans();
log(`${todo.length} runs, one at a time; the run's JSON goes to ${relative(process.cwd(), out)}`);
for (const plan of todo) {
  run.children.push(await runChild(plan));
  save();
}
run.finishedAt = new Date().toISOString();
run.machine.loadAverageEnd = loads();
save();
process.stdout.write(buildReport(run));
log(`raw JSON: ${relative(process.cwd(), out)}`);
if (run.children.some((c) => !c.ok)) process.exitCode = 1;
