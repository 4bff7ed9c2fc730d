// `npm run chaos`: does every example scenario end in the same state whatever the delivery does? Runs
// each of examples/scenarios/*.yaml once without --chaos, then under several chaos profiles × seeds, and
// counts, per example and profile, the runs that ended in the chaos-free run's final state: every node's
// Ready status and taints (as a set), the set of pods the controller deleted, and each pod's count of
// "Marking for deletion" Events (docs/simulate.md, "npm run chaos"). Each mismatch is printed with what differs and the `nlc simulate --chaos …` line
// that reproduces it. Exit 0 when every run matched, 1 otherwise, 2 for a bad option.
//
// Runs are independent: they go to a pool of worker processes (scripts/chaosWorker.ts, `--jobs`, the
// number of CPUs by default), each running the simulator in process. Too long for `npm test`.
//
// CLI: npm run chaos -- [--seeds 1-20] [--profile SPEC]... [--example GLOB]... [--jobs N] [--json]
//      (with --json, `npm run --silent chaos` or `npx tsx scripts/chaos.ts`, so npm adds nothing to stdout)
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { readdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parseChaos, type ChaosSettings } from '../local/simulate/chaos.js';
import { globToRegExp } from '../local/simulate/scenarioSchema.js';
import type { TimelineLine } from '../local/simulate/timeline.js';
import { ConfigError } from '../shared/errors.js';

const root = resolve(import.meta.dirname, '..');
export const ExamplesDir = join(root, 'examples', 'scenarios');

/** The profiles run by default: many late copies; late, failing and retried; some dead-lettered. */
export const DefaultProfiles: readonly string[] = [
  'duplicates=10,maxDelay=10s',
  'duplicates=3,maxDelay=30s,failures=0.2',
  'deadLetter=0.05',
];
export const DefaultSeeds = '1-20';

// ---------------------------------------------------------------------------------------------------
// Options

export interface ChaosOptions {
  readonly seeds: readonly number[];
  /** The profiles as given (no seed: the seeds come from `seeds`). */
  readonly profiles: readonly string[];
  /** Globs on the examples' names (without `.yaml`); every example when empty. */
  readonly examples: readonly string[];
  readonly jobs: number;
  /** Every run (with and without chaos) with the relay's quiet digests as deployed. */
  readonly quietDigests: boolean;
  readonly json: boolean;
  readonly help: boolean;
}

/** A bad option, naming it (exit 2). */
export class ChaosOptionsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'ChaosOptionsError';
  }
}

export const Usage = `Usage: npm run chaos -- [options]

Runs every example scenario without --chaos, then under each chaos profile and seed, and counts the
runs that ended in the same final state (every node's Ready and taints, the set of pods deleted, each
pod's "Marking for deletion" Events).

Options:
  --seeds LIST       seeds of each profile: "1-20" (the default), "7", "1,3,10-12"
  --profile SPEC     a --chaos spec without seed (repeatable); by default:
                       ${DefaultProfiles.join('\n                       ')}
  --example GLOB     the examples to run, by name without .yaml (repeatable; "zone-*"); all by default
  --jobs N           worker processes (the number of CPUs by default)
  --quiet-digests    every run with the relay's quiet digests as deployed (nlc simulate --quiet-digests)
  --json             the results as one JSON document on stdout
  -h, --help         this text

Exit status: 0 every run matched, 1 some did not (or failed), 2 a bad option.
`;

/** `1-20`, `7`, `1,3,10-12`: the seeds in order, each once. */
export function parseSeeds(text: string): number[] {
  const seeds: number[] = [];
  for (const part of text.split(',').map((p) => p.trim())) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part);
    const from = match === null ? NaN : Number(match[1]);
    const to = match?.[2] === undefined ? from : Number(match[2]);
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || to < from || to > 2 ** 32 - 1) {
      throw new ChaosOptionsError([
        `--seeds: expected seeds like "1-20", "7" or "1,3,10-12" (0 to 4294967295), got ${JSON.stringify(text)}`,
      ]);
    }
    if (to - from >= 10_000) {
      throw new ChaosOptionsError([`--seeds: expected at most 10,000 seeds, got ${JSON.stringify(text)}`]);
    }
    for (let seed = from; seed <= to; seed++) if (!seeds.includes(seed)) seeds.push(seed);
  }
  return seeds;
}

/** The chaos of one run: the profile and the seed. */
export function chaosOf(profile: string, seed: number): ChaosSettings {
  return parseChaos(profile === '' ? `seed=${seed}` : `${profile},seed=${seed}`);
}

/** Reads the command line; throws ChaosOptionsError naming every bad option. */
export function parseChaosArgs(argv: readonly string[], cpus = availableParallelism()): ChaosOptions {
  let values: ReturnType<typeof parseRaw>['values'];
  try {
    ({ values } = parseRaw(argv));
  } catch (error) {
    throw new ChaosOptionsError([error instanceof Error ? error.message : String(error)]);
  }
  const problems: string[] = [];
  let seeds: number[] = [];
  try {
    seeds = parseSeeds(values.seeds ?? DefaultSeeds);
  } catch (error) {
    if (!(error instanceof ChaosOptionsError)) throw error;
    problems.push(...error.problems);
  }
  const profiles = (values.profile ?? [...DefaultProfiles]).map((p) => p.trim());
  for (const profile of profiles) {
    if (/(^|,)\s*seed\s*=/.test(profile)) {
      problems.push(`--profile: give the seeds with --seeds, not in the profile: ${JSON.stringify(profile)}`);
      continue;
    }
    try {
      chaosOf(profile, 0);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.issues.map((i) => `${i.path.replace(/^--chaos/, '--profile')}: ${i.message}`));
    }
  }
  let jobs = cpus;
  if (values.jobs !== undefined) {
    jobs = Number(values.jobs);
    if (!Number.isInteger(jobs) || jobs < 1 || jobs > 256) {
      problems.push(
        `--jobs: expected a number of processes from 1 to 256, got ${JSON.stringify(values.jobs)}`,
      );
    }
  }
  if (problems.length > 0) throw new ChaosOptionsError(problems);
  return {
    seeds,
    profiles,
    examples: values.example ?? [],
    jobs,
    quietDigests: values['quiet-digests'] === true,
    json: values.json === true,
    help: values.help === true,
  };
}

function parseRaw(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      seeds: { type: 'string' },
      profile: { type: 'string', multiple: true },
      example: { type: 'string', multiple: true },
      jobs: { type: 'string' },
      'quiet-digests': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/** The examples the globs pick (by name without `.yaml`), in name order; a glob picking none is an error. */
export function selectExamples(names: readonly string[], globs: readonly string[]): string[] {
  if (globs.length === 0) return [...names].sort();
  const problems: string[] = [];
  const chosen = new Set<string>();
  for (const glob of globs) {
    const pattern = globToRegExp(glob.replace(/\.yaml$/, ''));
    const matched = names.filter((name) => pattern.test(name));
    if (matched.length === 0) problems.push(`--example: no example matches ${JSON.stringify(glob)}`);
    for (const name of matched) chosen.add(name);
  }
  if (problems.length > 0) throw new ChaosOptionsError(problems);
  return [...chosen].sort();
}

// ---------------------------------------------------------------------------------------------------
// Final states and their differences

/** A node at the end: its Ready status and its taints, `key:effect`, sorted. */
export interface NodeEnd {
  readonly ready: string;
  readonly taints: readonly string[];
}

/**
 * What a run must end in: every node's Ready and taints, the set of pods deleted, and how many "Marking
 * for deletion" Events each pod got (one per decided deletion, however often its events came).
 */
export interface FinalState {
  readonly nodes: Readonly<Record<string, NodeEnd>>;
  /** `namespace/name`, sorted, each once. */
  readonly podsDeleted: readonly string[];
  /** `Pod/namespace/name` → its "Marking for deletion" Events, in name order. */
  readonly markings: Readonly<Record<string, number>>;
}

/**
 * The final state of a run's lines: the Summary's nodes and the PodDeleted lines' pods. In a run of
 * several clusters every cluster's Summary counts, and each name is `cluster/name`.
 */
export function finalStateOf(lines: readonly TimelineLine[]): FinalState {
  const summaries = lines.filter((line) => line.kind === 'Summary');
  if (summaries.length === 0) throw new Error('the run has no Summary line');
  const named = (line: TimelineLine, name: string): string =>
    line.cluster === undefined ? name : `${line.cluster}/${name}`;
  const ends: [string, NodeEnd][] = summaries.flatMap((summary) =>
    summary.nodes.map((node): [string, NodeEnd] => [
      named(summary, node.node),
      {
        ready: node.ready,
        taints: [...new Set(node.taints.map((t) => `${t.key}:${t.effect}`))].sort(compare),
      },
    ]),
  );
  const nodes: Record<string, NodeEnd> = {};
  for (const [name, end] of ends.sort(([a], [b]) => compare(a, b))) nodes[name] = end;
  const podsDeleted = new Set<string>();
  const markings = new Map<string, number>();
  for (const line of lines) {
    if (line.kind === 'PodDeleted') podsDeleted.add(named(line, line.pod));
    if (line.kind === 'Event' && line.message.startsWith('Marking for deletion')) {
      const object = named(line, line.object);
      markings.set(object, (markings.get(object) ?? 0) + 1);
    }
  }
  return {
    nodes,
    podsDeleted: [...podsDeleted].sort(compare),
    markings: Object.fromEntries([...markings].sort(([a], [b]) => compare(a, b))),
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** How a run's end differs from the expected one; undefined when it does not. */
export interface StateDifference {
  /** Nodes whose Ready or taints differ (a node missing on one side has no entry there). */
  readonly nodes: readonly {
    readonly node: string;
    readonly expected?: NodeEnd;
    readonly actual?: NodeEnd;
  }[];
  /** Pods deleted in the chaos-free run only. */
  readonly podsDeletedOnlyWithoutChaos: readonly string[];
  /** Pods deleted under chaos only. */
  readonly podsDeletedOnlyWithChaos: readonly string[];
  /** Pods whose count of "Marking for deletion" Events differs (0 when they got none). */
  readonly markings: readonly {
    readonly object: string;
    readonly expected: number;
    readonly actual: number;
  }[];
}

export function compareStates(expected: FinalState, actual: FinalState): StateDifference | undefined {
  const names = [...new Set([...Object.keys(expected.nodes), ...Object.keys(actual.nodes)])].sort(compare);
  const nodes: { node: string; expected?: NodeEnd; actual?: NodeEnd }[] = [];
  for (const node of names) {
    const want = expected.nodes[node];
    const got = actual.nodes[node];
    if (want !== undefined && got !== undefined && sameNode(want, got)) continue;
    nodes.push({
      node,
      ...(want !== undefined && { expected: want }),
      ...(got !== undefined && { actual: got }),
    });
  }
  const withChaos = new Set(actual.podsDeleted);
  const without = new Set(expected.podsDeleted);
  const onlyWithout = expected.podsDeleted.filter((pod) => !withChaos.has(pod));
  const onlyWith = actual.podsDeleted.filter((pod) => !without.has(pod));
  const markings = [...new Set([...Object.keys(expected.markings), ...Object.keys(actual.markings)])]
    .sort(compare)
    .map((object) => ({
      object,
      expected: expected.markings[object] ?? 0,
      actual: actual.markings[object] ?? 0,
    }))
    .filter((m) => m.expected !== m.actual);
  if (nodes.length === 0 && onlyWithout.length === 0 && onlyWith.length === 0 && markings.length === 0) {
    return undefined;
  }
  return { nodes, podsDeletedOnlyWithoutChaos: onlyWithout, podsDeletedOnlyWithChaos: onlyWith, markings };
}

function sameNode(a: NodeEnd, b: NodeEnd): boolean {
  return (
    a.ready === b.ready && a.taints.length === b.taints.length && a.taints.every((t, i) => t === b.taints[i])
  );
}

// ---------------------------------------------------------------------------------------------------
// Results and their report

/** One chaos run: same end as without chaos, or what differed, or why it failed. */
export interface RunResult {
  readonly example: string;
  readonly profile: string;
  readonly seed: number;
  /** Run with the relay's quiet digests (--quiet-digests). */
  readonly quietDigests?: boolean;
  readonly same: boolean;
  readonly difference?: StateDifference;
  /** The run (or the chaos-free run of its example) failed: the error. */
  readonly error?: string;
}

export interface Tally {
  readonly example: string;
  readonly profile: string;
  readonly same: number;
  readonly runs: number;
}

/** Per example and profile, in the order the results give them: how many runs ended the same. */
export function tally(results: readonly RunResult[]): Tally[] {
  const byKey = new Map<string, { example: string; profile: string; same: number; runs: number }>();
  for (const result of results) {
    const key = `${result.example}\u0000${result.profile}`;
    let entry = byKey.get(key);
    if (entry === undefined) {
      entry = { example: result.example, profile: result.profile, same: 0, runs: 0 };
      byKey.set(key, entry);
    }
    entry.runs++;
    if (result.same) entry.same++;
  }
  return [...byKey.values()];
}

/** The command line that reproduces a run. */
export function reproduce(result: Pick<RunResult, 'example' | 'profile' | 'seed' | 'quietDigests'>): string {
  const spec = result.profile === '' ? `seed=${result.seed}` : `${result.profile},seed=${result.seed}`;
  const quiet = result.quietDigests === true ? ' --quiet-digests' : '';
  return `nlc simulate --chaos ${spec}${quiet} examples/scenarios/${result.example}.yaml`;
}

function describeNode(end: NodeEnd | undefined): string {
  if (end === undefined) return 'absent';
  return `Ready=${end.ready === '' ? '(none)' : end.ready}, taints ${end.taints.length === 0 ? '(none)' : end.taints.map((t) => t.replace(/^node\.kubernetes\.io\//, '')).join(' ')}`;
}

/** A mismatch, for people: which run, what differs, how to reproduce it. */
export function describeMismatch(result: RunResult): string {
  const lines = [
    `${result.example} · ${result.profile === '' ? '(defaults)' : result.profile} · seed ${result.seed}`,
  ];
  if (result.error !== undefined) lines.push(`  failed: ${result.error}`);
  const difference = result.difference;
  if (difference !== undefined) {
    for (const { node, expected, actual } of difference.nodes) {
      lines.push(`  node ${node}: ${describeNode(actual)} (without chaos: ${describeNode(expected)})`);
    }
    if (difference.podsDeletedOnlyWithoutChaos.length > 0)
      lines.push(`  pods deleted only without chaos: ${difference.podsDeletedOnlyWithoutChaos.join(', ')}`);
    if (difference.podsDeletedOnlyWithChaos.length > 0)
      lines.push(`  pods deleted only under chaos: ${difference.podsDeletedOnlyWithChaos.join(', ')}`);
    for (const { object, expected, actual } of difference.markings) {
      lines.push(`  ${object}: ${actual} "Marking for deletion" Events (without chaos: ${expected})`);
    }
  }
  lines.push(`  reproduce: ${reproduce(result)}`);
  return lines.join('\n');
}

/** The report for people: every mismatch, then a line per example and profile, then the total. */
export function formatReport(results: readonly RunResult[]): string {
  const out: string[] = [];
  const mismatches = results.filter((r) => !r.same);
  if (mismatches.length > 0) {
    out.push(`Runs that did not end as without chaos (${mismatches.length}):`, '');
    for (const mismatch of mismatches) out.push(describeMismatch(mismatch), '');
  }
  const rows = tally(results);
  const exampleWidth = Math.max('EXAMPLE'.length, ...rows.map((r) => r.example.length));
  const profileWidth = Math.max('PROFILE'.length, ...rows.map((r) => r.profile.length));
  const row = (example: string, profile: string, same: string) =>
    `${example.padEnd(exampleWidth)}   ${profile.padEnd(profileWidth)}   ${same}`.trimEnd();
  out.push(row('EXAMPLE', 'PROFILE', 'SAME END'));
  for (const r of rows)
    out.push(row(r.example, r.profile === '' ? '(defaults)' : r.profile, `${r.same}/${r.runs}`));
  const same = results.filter((r) => r.same).length;
  out.push(row('TOTAL', '', `${same}/${results.length}`));
  return `${out.join('\n')}\n`;
}

/** The results as JSON: every run, the tally, the total. */
export function formatJson(results: readonly RunResult[]): string {
  const same = results.filter((r) => r.same).length;
  return `${JSON.stringify(
    {
      total: { same, runs: results.length },
      tally: tally(results),
      runs: results.map((r) => ({ ...r, reproduce: reproduce(r) })),
    },
    null,
    2,
  )}\n`;
}

// ---------------------------------------------------------------------------------------------------
// Running: a pool of worker processes

/** A run a worker does: an example, with or without chaos. */
export interface Task {
  readonly id: number;
  readonly file: string;
  readonly chaos?: ChaosSettings;
  readonly quietDigests?: boolean;
}

/** What a worker answers. */
export type TaskAnswer =
  { readonly id: number; readonly state: FinalState } | { readonly id: number; readonly error: string };

/** Runs the tasks on `jobs` worker processes; answers in task order. */
async function runPool(
  tasks: readonly Task[],
  jobs: number,
  onDone: (done: number) => void,
): Promise<TaskAnswer[]> {
  const answers = new Map<number, TaskAnswer>();
  let next = 0;
  const worker = resolve(import.meta.dirname, 'chaosWorker.ts');
  const spawnOne = (): Promise<void> =>
    new Promise((done, fail) => {
      const child: ChildProcess = fork(worker, [], {
        execArgv: ['--import', 'tsx'],
        cwd: root,
        env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      let current: Task | undefined;
      const give = () => {
        current = tasks[next++];
        if (current === undefined) child.disconnect();
        else child.send(current);
      };
      child.on('message', (answer: TaskAnswer) => {
        answers.set(answer.id, answer);
        onDone(answers.size);
        give();
      });
      child.on('exit', (code) => {
        if (current !== undefined && !answers.has(current.id)) {
          fail(
            new Error(`a chaos worker exited (code ${String(code)}) during ${relative(root, current.file)}`),
          );
        } else done();
      });
      child.on('error', fail);
      give();
    });
  await Promise.all(Array.from({ length: Math.min(jobs, tasks.length) }, spawnOne));
  return tasks.map((task) => answers.get(task.id) ?? { id: task.id, error: 'no answer' });
}

export async function main(argv: readonly string[]): Promise<number> {
  let options: ChaosOptions;
  let examples: string[];
  try {
    options = parseChaosArgs(argv);
    if (options.help) {
      process.stdout.write(Usage);
      return 0;
    }
    const names = (await readdir(ExamplesDir)).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -5));
    examples = selectExamples(names, options.examples);
  } catch (error) {
    if (!(error instanceof ChaosOptionsError)) throw error;
    for (const problem of error.problems) process.stderr.write(`error: ${problem}\n`);
    process.stderr.write('See: npm run chaos -- --help\n');
    return 2;
  }
  const tasks: Task[] = [];
  const runs: {
    example: string;
    profile: string;
    seed: number;
    quietDigests: boolean;
    calm: number;
    task: number;
  }[] = [];
  const calm = new Map<string, number>();
  for (const example of examples) {
    const file = join(ExamplesDir, `${example}.yaml`);
    calm.set(example, tasks.push({ id: tasks.length, file, quietDigests: options.quietDigests }) - 1);
  }
  for (const example of examples) {
    const file = join(ExamplesDir, `${example}.yaml`);
    for (const profile of options.profiles) {
      for (const seed of options.seeds) {
        const id = tasks.length;
        tasks.push({ id, file, chaos: chaosOf(profile, seed), quietDigests: options.quietDigests });
        runs.push({
          example,
          profile,
          seed,
          quietDigests: options.quietDigests,
          calm: calm.get(example) ?? 0,
          task: id,
        });
      }
    }
  }
  const started = performance.now();
  const tty = process.stderr.isTTY;
  const answers = await runPool(tasks, options.jobs, (done) => {
    if (tty) process.stderr.write(`\rchaos: ${done}/${tasks.length} runs`);
  });
  if (tty) process.stderr.write('\r\u001b[K');
  const results: RunResult[] = runs.map(({ example, profile, seed, quietDigests, calm: calmId, task }) => {
    const without = answers[calmId];
    const withChaos = answers[task];
    const base = { example, profile, seed, ...(quietDigests && { quietDigests }) };
    if (without === undefined || 'error' in without)
      return {
        ...base,
        same: false,
        error: `the run without chaos failed: ${without?.error ?? 'no answer'}`,
      };
    if (withChaos === undefined || 'error' in withChaos)
      return { ...base, same: false, error: withChaos?.error ?? 'no answer' };
    const difference = compareStates(without.state, withChaos.state);
    return difference === undefined ? { ...base, same: true } : { ...base, same: false, difference };
  });
  process.stdout.write(options.json ? formatJson(results) : formatReport(results));
  process.stderr.write(
    `${tasks.length} runs (${examples.length} examples without chaos, then ${options.profiles.length} profiles × ${options.seeds.length} seeds) in ${((performance.now() - started) / 1000).toFixed(0)}s on ${Math.min(options.jobs, tasks.length)} processes\n`,
  );
  return results.every((r) => r.same) ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv.slice(2));
}
