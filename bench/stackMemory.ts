// The local stack's memory while idle (issue: `npm start` grew ~7 MB a minute doing nothing; the budget
// is at most +20 MiB over 30 idle minutes):
//
//   npm run bench:stack-memory
//   npx tsx bench/stackMemory.ts [--minutes 10] [--every 30] [--warmup 2] [--ephemeral] [--use] [--json]
//
// With --use the cluster is in use throughout (budget: at most +50 MiB over 30 minutes of use): every
// 10 s the bench, through the API with the stack's kubeconfig, cordons or uncordons a node (node-taints
// adds or removes the unschedulable taint: Node Changed, a write, Decisions) and creates a pod bound to a
// node while deleting the one it created before (Pod Changed for taint-eviction and pod-processing, the
// kubelets' deletion).
//
// Starts `nlc start --no-ui` (the built CLI, as `npm start` runs it) on free ports in a temporary data
// directory, waits for "local stack ready", and samples every `--every` seconds the resident memory of
// the stack's process and of each process under it (serverless-offline, esbuild), from /proc (Linux),
// and the stack process's V8 heap from the relay's /metrics (the relay runs in the stack's process:
// nodejs_heap_size_used_bytes, nodejs_external_memory_bytes). After `--warmup` minutes (start-up, first
// passes, JIT) the growth is fitted as a line over the rest: MiB per minute, and that times 30.
// Numbers are reported, never asserted: the machines are shared and noisy.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  V1Container,
  V1ObjectMeta,
  V1Pod,
  V1PodSpec,
} from '@kubernetes/client-node';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const value = i < 0 ? undefined : Number(args[i + 1]);
  return value === undefined || !Number.isFinite(value) ? fallback : value;
};
const options = {
  minutes: flag('--minutes', 10),
  everySeconds: flag('--every', 30),
  warmupMinutes: flag('--warmup', 2),
  ephemeral: args.includes('--ephemeral'),
  use: args.includes('--use'),
  json: args.includes('--json'),
};
const log = (message: string): void => {
  process.stderr.write(`[bench:stack-memory] ${message}\n`);
};
const MiB = 2 ** 20;
const mib = (bytes: number): number => +(bytes / MiB).toFixed(1);

interface ProcessSample {
  readonly pid: number;
  readonly name: string;
  readonly rssBytes: number;
}

interface Sample {
  readonly seconds: number;
  readonly processes: readonly ProcessSample[];
  /** The stack process's V8 heap (used) and memory outside it, from the relay's metrics. */
  readonly heapUsedBytes: number | null;
  readonly externalBytes: number | null;
}

/** pid → parent pid, for every process (/proc/PID/stat's fourth field). */
async function parents(): Promise<Map<number, number>> {
  const map = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // The name (second field) is in parentheses and may hold spaces: the fields after its end.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      map.set(Number(entry), Number(fields[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  return map;
}

/** The process and its descendants, parents first. */
async function tree(root: number): Promise<number[]> {
  const ppid = await parents();
  const pids = [root];
  for (let i = 0; i < pids.length; i++) {
    for (const [pid, parent] of ppid) if (parent === pids[i]) pids.push(pid);
  }
  return pids;
}

/** A process's resident memory (VmRSS) and a short name from its command line; undefined once gone. */
async function processSample(pid: number): Promise<ProcessSample | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter((a) => a !== '');
    const words = argv.map((a) => a.split('/').at(-1) ?? a);
    const name = words.includes('bin.mjs')
      ? 'stack (nlc start)'
      : words.includes('serverless.js')
        ? 'functions (osls offline)'
        : (words[0] ?? String(pid));
    return { pid, name, rssBytes: Number(kb ?? 0) * 1024 };
  } catch {
    return undefined;
  }
}

/** A gauge's value from a Prometheus text exposition. */
function gauge(text: string, name: string): number | null {
  const match = new RegExp(`^${name} ([0-9.e+]+)$`, 'm').exec(text);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/** Least-squares slope of y over x. */
function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

/**
 * Keeps the cluster in use (--use): every 10 s a node cordoned or uncordoned in turn, and a pod created
 * on a node while the previous one is deleted. Stops after its current cycle.
 */
function startUse(dir: string): { stop(): Promise<{ done: number; failed: number }> } {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(join(dir, 'kubeconfig'));
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const run = { stopped: false };
  let done = 0;
  let failed = 0;
  const loop = (async () => {
    let previous: string | undefined;
    for (let i = 0; !run.stopped; i++) {
      try {
        const nodes = (await core.listNode()).items
          .map((n) => n.metadata?.name ?? '')
          .filter((n) => n !== '');
        const name = nodes[i % nodes.length] ?? '';
        const node = await core.readNode({ name });
        await core.patchNode(
          { name, body: { spec: { unschedulable: node.spec?.unschedulable !== true } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        const pod = `bench-use-${String(i)}`;
        const body = new V1Pod();
        body.metadata = Object.assign(new V1ObjectMeta(), { name: pod, namespace: 'default' });
        body.spec = Object.assign(new V1PodSpec(), {
          nodeName: nodes[(i * 7) % nodes.length] ?? name,
          containers: [Object.assign(new V1Container(), { name: 'c', image: 'busybox' })],
        });
        await core.createNamespacedPod({ namespace: 'default', body });
        if (previous !== undefined) await core.deleteNamespacedPod({ name: previous, namespace: 'default' });
        previous = pod;
        done++;
      } catch (error) {
        failed++;
        log(`use cycle ${i} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      await sleep(10_000);
    }
  })();
  return {
    stop: async () => {
      run.stopped = true;
      await loop;
      return { done, failed };
    },
  };
}

async function main(): Promise<void> {
  const root = fileURLToPath(new URL('../', import.meta.url));
  const dir = await mkdtemp(join(tmpdir(), 'nlc-bench-stack-memory-'));
  const stack = spawn(
    process.execPath,
    [
      join(root, 'cli', 'bin.mjs'),
      'start',
      '--no-ui',
      '--data-dir',
      dir,
      ...['apiserver', 'dynamodb', 'eventbridge', 'eventbridge-pubsub', 'lambda', 'relay'].flatMap((p) => [
        `--port-${p}`,
        '0',
      ]),
      ...(options.ephemeral ? ['--ephemeral'] : []),
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const pid = stack.pid;
  if (pid === undefined) throw new Error('nlc start did not start');
  const exited = new Promise<void>((resolve) =>
    stack.once('exit', () => {
      resolve();
    }),
  );
  log(`nlc start --no-ui${options.ephemeral ? ' --ephemeral' : ''} (pid ${pid}), data directory ${dir}`);
  const relayUrl = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: stack.stdout });
    lines.on('line', (line) => {
      if (!line.includes('"local stack ready"')) return;
      const ready = JSON.parse(line) as { relay?: unknown };
      if (typeof ready.relay === 'string') resolve(ready.relay);
    });
    void exited.then(() => {
      reject(new Error('nlc start exited before it was ready'));
    });
  });
  // The log lines keep coming: read and drop them, so the pipe never fills.
  stack.stdout.resume();
  log(`ready; sampling every ${options.everySeconds} s for ${options.minutes} min`);
  const use = options.use ? startUse(dir) : undefined;

  const samples: Sample[] = [];
  const started = performance.now();
  // Counted, not timed: a sample taken a moment early must not add one more interval.
  const count = Math.floor((options.minutes * 60) / options.everySeconds) + 1;
  while (samples.length < count) {
    if (samples.length > 0) {
      await sleep(Math.max(0, started + samples.length * options.everySeconds * 1000 - performance.now()));
    }
    const seconds = (performance.now() - started) / 1000;
    const processes = (await Promise.all((await tree(pid)).map(processSample))).filter(
      (p): p is ProcessSample => p !== undefined,
    );
    const metrics = await fetch(`${relayUrl}/metrics`)
      .then((r) => r.text())
      .catch(() => '');
    const sample: Sample = {
      seconds: Math.round(seconds),
      processes,
      heapUsedBytes: gauge(metrics, 'nodejs_heap_size_used_bytes'),
      externalBytes: gauge(metrics, 'nodejs_external_memory_bytes'),
    };
    samples.push(sample);
    log(
      `${String(sample.seconds).padStart(5)} s  ${processes.map((p) => `${p.name} ${mib(p.rssBytes)}`).join(', ')} MiB` +
        (sample.heapUsedBytes === null ? '' : `; stack heap used ${mib(sample.heapUsedBytes)} MiB`),
    );
  }
  const cycles = await use?.stop();
  if (cycles !== undefined) log(`use: ${cycles.done} cycles, ${cycles.failed} failed`);
  stack.kill('SIGTERM');
  await exited;
  await rm(dir, { recursive: true, force: true });

  const measured = samples.filter((s) => s.seconds >= options.warmupMinutes * 60);
  const first = measured[0];
  const last = measured.at(-1);
  if (first === undefined || last === undefined) throw new Error('no samples after the warm-up');
  // One row per process name (a pid that came and went is its own row).
  const names = [...new Set(samples.flatMap((s) => s.processes.map((p) => `${p.name}#${p.pid}`)))];
  const rows = names.map((key) => {
    const [name = key, pidText] = key.split('#');
    const series = measured.flatMap((s) => {
      const p = s.processes.find((q) => q.pid === Number(pidText));
      return p === undefined ? [] : [[s.seconds / 60, p.rssBytes / MiB] as const];
    });
    const perMinute = slope(series);
    return {
      name,
      pid: Number(pidText),
      rssMiB: {
        start: +(series[0]?.[1] ?? 0).toFixed(1),
        end: +(series.at(-1)?.[1] ?? 0).toFixed(1),
      },
      slopeMiBPerMinute: +perMinute.toFixed(2),
      projectedMiBPer30Minutes: +(perMinute * 30).toFixed(1),
    };
  });
  const heapSeries = measured.flatMap((s) =>
    s.heapUsedBytes === null ? [] : [[s.seconds / 60, s.heapUsedBytes / MiB] as const],
  );
  const report = {
    machine: {
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
      node: process.version,
    },
    stack: {
      ephemeral: options.ephemeral,
      use: options.use,
      minutes: options.minutes,
      warmupMinutes: options.warmupMinutes,
    },
    window: { fromSeconds: first.seconds, toSeconds: last.seconds },
    processes: rows,
    stackHeapUsed: {
      startMiB: heapSeries[0] === undefined ? null : +heapSeries[0][1].toFixed(1),
      endMiB: heapSeries.at(-1) === undefined ? null : +(heapSeries.at(-1)?.[1] ?? 0).toFixed(1),
      slopeMiBPerMinute: +slope(heapSeries).toFixed(2),
    },
    samples: samples.map((s) => ({
      seconds: s.seconds,
      rssMiB: Object.fromEntries(s.processes.map((p) => [`${p.name} ${p.pid}`, mib(p.rssBytes)])),
      heapUsedMiB: s.heapUsedBytes === null ? null : mib(s.heapUsedBytes),
      externalMiB: s.externalBytes === null ? null : mib(s.externalBytes),
    })),
  };

  if (options.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  const r = report;
  process.stdout.write(
    [
      `Local stack memory, ${r.stack.use ? 'in use' : 'idle'}: ${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}`,
      `nlc start --no-ui${r.stack.ephemeral ? ' --ephemeral' : ''}, ${r.stack.minutes} min; fitted from ${r.window.fromSeconds} s to ${r.window.toSeconds} s (after ${r.stack.warmupMinutes} min warm-up)`,
      ...r.processes.map(
        (p) =>
          `  ${p.name.padEnd(26)} RSS ${String(p.rssMiB.start).padStart(6)} → ${String(p.rssMiB.end).padStart(6)} MiB, ${p.slopeMiBPerMinute} MiB/min (${p.projectedMiBPer30Minutes} MiB per 30 min)`,
      ),
      `  stack heap used            ${r.stackHeapUsed.startMiB ?? '?'} → ${r.stackHeapUsed.endMiB ?? '?'} MiB, ${r.stackHeapUsed.slopeMiBPerMinute} MiB/min`,
      r.stack.use
        ? `Budget (in use): at most +50 MiB per 30 min`
        : `Budget (idle): at most +20 MiB per 30 min`,
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
