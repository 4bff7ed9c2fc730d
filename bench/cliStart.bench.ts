// How long `nlc` takes to start and answer, against `node -e 0` and `kubectl --help` (when kubectl is on
// the PATH; the goal: nlc's start within 3× kubectl's) on the same machine: `nlc --help`,
// `nlc config`, and `nlc status` finding a local stack by itself (seeded tables on a local
// DynamoDB-compatible server, the stack's record in the working directory's .nlc-data/). Each command
// is a real process running the built CLI (cli/bin.mjs → dist/nlc/, rebuilt first if a source changed).
// Run: npm run bench. Reported, never asserted: after the runs, a table of each command's median wall
// time, its ratios to `node -e 0` and to `kubectl --help`, and its peak resident memory (/usr/bin/time,
// when present).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { StackRecordFile, type StackRecord } from '../local/stack/stackRecord.js';
import { buildCliIfStale } from '../scripts/build-cli.js';
import { CLUSTER, seedStack, type SeededStack } from '../test/integration/cli/seed.js';

const bin = fileURLToPath(new URL('../cli/bin.mjs', import.meta.url));
const time = '/usr/bin/time';

let seeded: SeededStack | undefined;
let project = '';

/** kubectl on the PATH, if any: the CLI operators compare ours with. */
const kubectl = (process.env.PATH ?? '')
  .split(delimiter)
  .map((dir) => join(dir, 'kubectl'))
  .find((file) => existsSync(file));

interface Command {
  /** The executable (default: this Node). */
  readonly file?: string;
  readonly args: readonly string[];
}

// The commands, run from `project`, whose .nlc-data/stack.json points at the seeded tables.
const commands: Readonly<Record<string, Command>> = {
  'node -e 0': { args: ['-e', '0'] },
  ...(kubectl !== undefined && { 'kubectl --help': { file: kubectl, args: ['--help'] } }),
  'nlc --help': { args: [bin, '--help'] },
  'nlc config': { args: [bin, 'config'] },
  'nlc status (local stack, no flags)': { args: [bin, 'status'] },
};

const env = (): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('NLC_') && !name.startsWith('AWS_')),
  ),
  HOME: project,
});

// Asynchronous: the seeded DynamoDB-compatible server runs in this process and must answer `nlc status`.
const execFileAsync = promisify(execFile);

async function run(args: readonly string[], file = process.execPath): Promise<string> {
  const { stderr } = await execFileAsync(file, [...args], { cwd: project, env: env() });
  return stderr;
}

const wallMs = new Map<string, number[]>();

function timed(name: string, command: Command): () => Promise<void> {
  return async () => {
    const started = performance.now();
    await run(command.args, command.file);
    const list = wallMs.get(name) ?? [];
    list.push(performance.now() - started);
    wallMs.set(name, list);
  };
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

/** Peak RSS in MiB of a command, the median of five runs, through /usr/bin/time; undefined without it. */
async function peakRssMiB(command: Command): Promise<number | undefined> {
  if (!existsSync(time)) return undefined;
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const stderr = await run(['-f', '%M', command.file ?? process.execPath, ...command.args], time);
    const kib = Number(stderr.trim().split('\n').at(-1));
    if (Number.isFinite(kib)) samples.push(kib / 1024);
  }
  return samples.length === 0 ? undefined : median(samples);
}

beforeAll(async () => {
  await buildCliIfStale();
  project = await mkdtemp(join(tmpdir(), 'nlc-bench-start-'));
  seeded = await seedStack();
  const record: StackRecord = {
    pid: process.pid,
    startedAt: new Date().toISOString(),
    cluster: CLUSTER,
    stage: 'dev',
    region: 'us-east-1',
    tables: seeded.db.tables,
    endpoints: {
      dynamodb: seeded.endpoint,
      eventBridge: 'http://127.0.0.1:4010',
      lambda: 'http://127.0.0.1:3002',
      relay: 'http://127.0.0.1:18080',
    },
    kubeconfig: join(project, '.nlc-data', 'kubeconfig'),
  };
  await mkdir(join(project, '.nlc-data'));
  await writeFile(join(project, '.nlc-data', StackRecordFile), JSON.stringify(record));
  // A failing command would measure its error path: check each once first.
  for (const command of Object.values(commands)) await run(command.args, command.file);
});

afterAll(async () => {
  const baseline = median(wallMs.get('node -e 0') ?? []);
  const kubectlMs = kubectl === undefined ? undefined : median(wallMs.get('kubectl --help') ?? []);
  const rows = [];
  for (const [name, command] of Object.entries(commands)) {
    const ms = median(wallMs.get(name) ?? []);
    const rss = await peakRssMiB(command);
    rows.push({
      command: name,
      'median ms': Math.round(ms),
      'x node -e 0': baseline > 0 ? Number((ms / baseline).toFixed(2)) : NaN,
      'x kubectl --help':
        kubectlMs === undefined || kubectlMs <= 0 ? 'n/a (no kubectl)' : Number((ms / kubectlMs).toFixed(2)),
      'peak RSS MiB': rss === undefined ? 'n/a' : Math.round(rss),
      runs: wallMs.get(name)?.length ?? 0,
    });
  }
  console.log(`\nnlc start-up (Node ${process.version}, ${String(rows.length)} commands):`);
  console.table(rows);
  await seeded?.stop();
  await rm(project, { recursive: true, force: true });
});

describe('nlc start-up, one process per run', () => {
  for (const [name, command] of Object.entries(commands)) {
    bench(name, timed(name, command), { iterations: 20, warmupIterations: 2, time: 0 });
  }
});
