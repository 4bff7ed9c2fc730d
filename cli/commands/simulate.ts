// `nlc simulate FILE`: what would the controller do if …? Runs a scenario (docs/simulate.md) in virtual
// time through the real relay, functions, state stores and API simulator (local/simulate/), and prints
// what the controller did to the cluster: a timeline and a summary per zone for people, or with `--json`
// the JSON Lines of docs/simulate.md "Output" (a public interface). On a terminal a progress line on
// stderr tells how far a long run is. Exit 0 when the run completed (even if a function failed: that is
// part of the answer, reported on stderr), 2 for invalid input naming the field, 1 for an internal
// failure. A scenario of several clusters prints a section per cluster, and its lines name their
// cluster (docs/simulate.md, "Several clusters").
import { readFile } from 'node:fs/promises';
import { getHeapStatistics } from 'node:v8';
import { Command } from 'commander';
import { z } from 'zod';
import type { AgreementReport, AgreementRow } from '../../shared/agreement.js';
import { formatDuration } from '../../shared/duration.js';
import { ScenarioError } from '../../shared/errors.js';
import { formatChaos, parseChaos } from '../../local/simulate/chaos.js';
import {
  checkReportFile,
  recordReport,
  renderReport,
  writeReport,
} from '../../local/simulate/report/index.js';
import { simulationNodeOptions } from '../../local/simulate/heapLimit.js';
import { progressLine } from '../../local/simulate/progress.js';
import {
  isMultiCluster,
  parseScenarioDocument,
  type AnyScenario,
  type Scenario,
} from '../../local/simulate/scenario.js';
import { runSimulation, type Diagnostic, type SimulationResult } from '../../local/simulate/simulation.js';
import {
  recordDetail,
  toJsonLines,
  type SummaryRecord,
  type TimelineLine,
} from '../../local/simulate/timeline.js';
import { parseOptions } from '../errors.js';
import { naturalCompare } from '../../shared/present/names.js';
import {
  renderTable,
  stdoutPaint,
  type CliIo,
  type Colour,
  type Column,
  type CommandContext,
  type OutputStream,
  type Paint,
} from '../../shared/present/output.js';

export const SimulateOptionsSchema = z.object({
  file: z.string().min(1, 'expected a scenario file'),
  json: z.boolean().default(false),
  /** `-o wide`: the summary lists every node; `-o json`: the same as --json. */
  output: z
    .enum(['wide', 'json'], {
      error: (issue) =>
        `${JSON.stringify(String(issue.input))} is not an output format for simulate: expected wide or json`,
    })
    .optional(),
  verbose: z.boolean().default(false),
  /** `duplicates=N,maxDelay=D,failures=P,deadLetter=Q,seed=S` (local/simulate/chaos.ts); parsed by runSimulate. */
  chaos: z.string().optional(),
  /** The relay sends quiet digests as deployed (SimulationOptions.relayQuietDigestPeriod 'asDeployed'). */
  quietDigests: z.boolean().default(false),
  /** Also write the run as one self-contained HTML page (local/simulate/report/). */
  report: z.string().min(1, 'expected a file name, e.g. out.html').optional(),
});
export type SimulateOptions = z.output<typeof SimulateOptionsSchema>;

const SIMULATE_HELP = `
The scenario format, the output (--json, -o wide) and the progress line: docs/simulate.md. Examples to
start from: examples/scenarios/*.yaml.

Examples:
  nlc simulate examples/scenarios/single-node-failure.yaml
  nlc simulate -o wide examples/scenarios/zone-partial-disruption.yaml
  nlc simulate --json examples/scenarios/zone-partial-disruption.yaml | jq -c 'select(.kind == "TaintAdded")'
  nlc simulate --chaos duplicates=3,maxDelay=30s,failures=0.1,seed=7 examples/scenarios/single-node-failure.yaml
  nlc simulate --quiet-digests examples/scenarios/node-failure-after-an-hour.yaml
  nlc simulate --report out.html examples/scenarios/zone-partial-disruption.yaml
  nlc simulate examples/scenarios/two-clusters-one-zone-down.yaml   # one deployment serving two clusters
`;

// ---------------------------------------------------------------------------------------------------
// The human timeline

type Event = Exclude<TimelineLine, { kind: 'Summary' }>;

function object(line: Event): string {
  switch (line.kind) {
    case 'NodeCondition':
    case 'TaintAdded':
    case 'TaintRemoved':
      return `node/${line.node}`;
    case 'PodNotReady':
    case 'PodDeleted':
      return `pod/${line.pod}`;
    case 'ZoneState':
      return `zone/${line.zone === '' ? '""' : line.zone}`;
    case 'Event': {
      // kubectl's spelling: node/a-1, pod/default/web-1.
      const slash = line.object.indexOf('/');
      return `${line.object.slice(0, slash).toLowerCase()}${line.object.slice(slash)}`;
    }
  }
}

function colourOf(line: Event): Colour | undefined {
  switch (line.kind) {
    case 'NodeCondition':
      return line.status === 'True' ? 'green' : 'yellow';
    case 'TaintAdded':
      return line.effect === 'NoExecute' ? 'red' : 'yellow';
    case 'TaintRemoved':
      return 'green';
    case 'PodNotReady':
      return 'yellow';
    case 'PodDeleted':
      return 'red';
    case 'ZoneState':
      return line.to === 'Normal' ? 'green' : 'red';
    case 'Event':
      return line.type === 'Warning' ? 'yellow' : 'dim';
  }
}

const timelineColumns: readonly Column<Event>[] = [
  { header: 't', value: (l) => formatDuration(l.t * 1000), align: 'right' },
  { header: 'time', value: (l) => l.time },
  { header: 'what', value: (l) => l.kind, colour: colourOf },
  { header: 'object', value: object },
  { header: 'detail', value: recordDetail },
];

interface ZoneRow {
  readonly zone: string;
  readonly state: string;
  readonly size: number;
  readonly unhealthy: number;
  readonly nodes: string;
}

const zoneColumns: readonly Column<ZoneRow>[] = [
  { header: 'zone', value: (z) => (z.zone === '' ? '""' : z.zone) },
  { header: 'state', value: (z) => z.state, colour: (z) => (z.state === 'Normal' ? 'green' : 'red') },
  { header: 'size', value: (z) => String(z.size), align: 'right' },
  { header: 'unhealthy', value: (z) => String(z.unhealthy), align: 'right' },
  { header: 'nodes (Ready; taints)', value: (z) => z.nodes },
];

/** How many nodes a zone's summary names one by one; a larger zone is summed up by state. */
export const NodesListed = 10;
/** How many names a group of nodes in the same state shows before "… and N more". */
export const NamesShown = 3;

function nodeState(node: SummaryRecord['nodes'][number]): string {
  const taints = node.taints.map((t) => `${t.key.replace(/^node\.kubernetes\.io\//, '')}:${t.effect}`);
  return `${node.ready === '' ? 'no Ready' : node.ready}${taints.length === 0 ? '' : `; ${taints.join(', ')}`}`;
}

/**
 * A zone's nodes as the NODES column shows them: each with its state (`a-1 (Unknown; …), a-2 (True)`)
 * when the zone has at most NodesListed nodes or `wide` is asked; else one group per state, in the
 * order of their first node, with a count and the first names (`920 nodes (Unknown; …): a-81, a-82,
 * a-83 … and 917 more`), so a line stays readable at thousands of nodes.
 */
export function describeZoneNodes(nodes: SummaryRecord['nodes'], wide: boolean): string {
  const sorted = [...nodes].sort((a, b) => naturalCompare(a.node, b.node));
  if (wide || sorted.length <= NodesListed) {
    return sorted.map((node) => `${node.node} (${nodeState(node)})`).join(', ');
  }
  const groups = new Map<string, string[]>();
  for (const node of sorted) {
    const state = nodeState(node);
    const names = groups.get(state);
    if (names === undefined) groups.set(state, [node.node]);
    else names.push(node.node);
  }
  return [...groups]
    .map(([state, names]) => {
      const shown = names.slice(0, NamesShown).join(', ');
      const more = names.length > NamesShown ? ` … and ${names.length - NamesShown} more` : '';
      return `${names.length} ${names.length === 1 ? 'node' : 'nodes'} (${state}): ${shown}${more}`;
    })
    .join('; ');
}

function zoneRows(summary: SummaryRecord, wide: boolean): ZoneRow[] {
  const zones = new Map<string, ZoneRow>(summary.zones.map((z) => [z.zone, { ...z, nodes: '' }]));
  const nodesByZone = new Map<string, SummaryRecord['nodes'][number][]>();
  for (const node of summary.nodes) {
    const inZone = nodesByZone.get(node.zone);
    if (inZone === undefined) nodesByZone.set(node.zone, [node]);
    else inZone.push(node);
    if (!zones.has(node.zone))
      zones.set(node.zone, { zone: node.zone, state: '-', size: 0, unhealthy: 0, nodes: '' });
  }
  return [...zones.values()]
    .map((z) => ({ ...z, nodes: describeZoneNodes(nodesByZone.get(z.zone) ?? [], wide) }))
    .sort((a, b) => naturalCompare(a.zone, b.zone));
}

const agreementColumns: readonly Column<AgreementRow>[] = [
  { header: 'kind', value: (r) => r.kind },
  { header: 'subject', value: (r) => (r.detail === '' ? r.subject : `${r.subject} ${r.detail}`) },
  { header: 'ours', value: (r) => (r.ours === undefined ? '-' : new Date(r.ours).toISOString()) },
  { header: 'theirs', value: (r) => (r.theirs === undefined ? '-' : new Date(r.theirs).toISOString()) },
  { header: 'why', value: (r) => r.why ?? '' },
];

/** With a managed controller: the shadow's agreement with it, and every disagreement with its why. */
function renderAgreement(report: AgreementReport, paint: Paint): string {
  const share = report.decisions === 0 ? 100 : Math.round((100 * report.agreed) / report.decisions);
  const out = [
    `\nAgreement with the cluster's controller: ${report.agreed} of ${report.decisions} decisions (${share}%), ` +
      `median lag ${formatDuration(report.medianLagMs)}, largest ${formatDuration(report.maxLagMs)}\n`,
  ];
  const disagreed = report.rows.filter((r) => !r.agreed);
  if (disagreed.length > 0) out.push(renderTable(agreementColumns, disagreed, { wide: false, paint }));
  return out.join('');
}

/** The timeline table, then the summary per zone. */
export function renderSimulation(
  name: string,
  result: Pick<SimulationResult, 'lines' | 'agreement'>,
  paint: Paint,
  options: { readonly wide?: boolean } = {},
): string {
  const events = result.lines.filter((l): l is Event => l.kind !== 'Summary');
  const summary = result.lines.find((l): l is TimelineLine & SummaryRecord => l.kind === 'Summary');
  const out: string[] = [];
  if (name !== '') out.push(`${paint('bold', name)}\n\n`);
  out.push(
    events.length === 0
      ? 'The controller did nothing to the cluster.\n'
      : renderTable(timelineColumns, events, { wide: false, paint }),
  );
  if (summary !== undefined) {
    out.push(`\nAt ${formatDuration(summary.t * 1000)} (${summary.time}):\n`);
    out.push(renderTable(zoneColumns, zoneRows(summary, options.wide === true), { wide: false, paint }));
    out.push(`\nPods evicted: ${summary.evictions}\n`);
  }
  if (result.agreement !== undefined) out.push(renderAgreement(result.agreement, paint));
  return out.join('');
}

/**
 * Writes `text` and, on a Node stream, waits until it has been handed to the system: process.stdout
 * on a pipe writes asynchronously, so without waiting a line written to stderr next could land first.
 */
async function written(stream: OutputStream, text: string): Promise<void> {
  const write: unknown = Reflect.get(stream, 'write');
  if (typeof Reflect.get(stream, 'once') !== 'function' || typeof write !== 'function') {
    stream.write(text);
    return;
  }
  await new Promise<void>((resolve) => {
    Reflect.apply(write, stream, [
      text,
      () => {
        resolve();
      },
    ]);
  });
}

/**
 * A scenario of several clusters: its name, then each cluster's section (the timeline and the summary
 * of renderSimulation), headed by the cluster's name, in the scenario's order.
 */
export function renderClusters(
  name: string,
  clusters: readonly string[],
  result: Pick<SimulationResult, 'lines'>,
  paint: Paint,
  options: { readonly wide?: boolean } = {},
): string {
  const out: string[] = [];
  if (name !== '') out.push(`${paint('bold', name)}\n\n`);
  clusters.forEach((cluster, i) => {
    if (i > 0) out.push('\n');
    const lines = result.lines.filter((line) => line.cluster === cluster);
    out.push(renderSimulation(`cluster ${cluster}`, { lines }, paint, options));
  });
  return out.join('');
}

function describeDiagnostic(d: Diagnostic): string {
  const fields = d.fields === undefined ? '' : ` ${JSON.stringify(d.fields)}`;
  const cluster = d.cluster === undefined ? '' : `[${d.cluster}] `;
  return `${d.level}: t=${formatDuration(d.t * 1000)} ${cluster}${d.source}: ${d.message}${fields}\n`;
}

/** The clusters of a scenario, each alone (one for a scenario of one cluster). */
function clustersOf(scenario: AnyScenario): readonly Scenario[] {
  return isMultiCluster(scenario) ? scenario.clusters : [scenario];
}

/** `out.html` for one cluster, `out-alpha.html` for cluster alpha of several: one page per cluster. */
export function reportFileOf(file: string, cluster: string | undefined): string {
  if (cluster === undefined) return file;
  const dot = file.lastIndexOf('.');
  const slash = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  return dot > slash + 1 ? `${file.slice(0, dot)}-${cluster}${file.slice(dot)}` : `${file}-${cluster}`;
}

// ---------------------------------------------------------------------------------------------------

async function readScenario(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code: unknown = error instanceof Error ? Reflect.get(error, 'code') : undefined;
    const problem =
      code === 'ENOENT' ? 'no such file' : error instanceof Error ? error.message : String(error);
    throw new ScenarioError(
      [{ path: '(file)', message: `cannot read ${JSON.stringify(file)}: ${problem}` }],
      file,
      {
        cause: error,
      },
    );
  }
}

/** The heap limit for the scenario in `file`; undefined when it does not parse (runSimulate says why). */
async function nodeOptionsFor(file: string): Promise<string[] | undefined> {
  try {
    const clusters = clustersOf(parseScenarioDocument(await readScenario(file), file));
    // One process runs every cluster: its heap is sized for all of them.
    return simulationNodeOptions(
      clusters.reduce((sum, cluster) => sum + cluster.nodes.length, 0),
      clusters.reduce((sum, cluster) => sum + cluster.pods.length, 0),
    );
  } catch {
    return undefined;
  }
}

/**
 * Runs `nlc simulate` and returns its exit code.
 *
 * @example
 * const code = await runSimulate({ file: 'examples/scenarios/single-node-failure.yaml', json: true, verbose: false }, io);
 */
export async function runSimulate(options: SimulateOptions, io: CliIo): Promise<number> {
  const json = options.json || options.output === 'json';
  const chaos = options.chaos === undefined ? undefined : parseChaos(options.chaos);
  const scenario = parseScenarioDocument(await readScenario(options.file), options.file);
  const multi = isMultiCluster(scenario);
  const clusters = clustersOf(scenario);
  if (options.verbose) {
    const limit = Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
    io.stderr.write(`heap limit ${limit} MiB (set NODE_OPTIONS=--max-old-space-size=MB to choose another)\n`);
  }
  // Checked before the run, which can be long: a report that cannot be written fails at once (exit 1).
  const reports =
    options.report === undefined
      ? []
      : clusters.map((cluster) => ({
          cluster,
          file: reportFileOf(options.report ?? '', multi ? cluster.config.cluster : undefined),
        }));
  for (const { file } of reports) await checkReportFile(file);
  const recorder = options.report === undefined ? undefined : recordReport();
  // JSON is for machines: nothing extra on stderr then, even on a terminal.
  const progress = json
    ? progressLine({ write: () => undefined }, () => 0)
    : progressLine(io.stderr, () => io.clock.now());
  let result: SimulationResult;
  try {
    result = await runSimulation(scenario, {
      ...(chaos !== undefined && { chaos }),
      ...(options.quietDigests && { relayQuietDigestPeriod: 'asDeployed' as const }),
      ...recorder?.hooks,
      onProgress: (p) => {
        progress.update(p);
      },
      onDiagnostic: (d) => {
        // Failed invocations always; the services' warnings (observation gaps, retries) when asked.
        if (d.level !== 'error' && !options.verbose) return;
        progress.clear();
        io.stderr.write(describeDiagnostic(d));
      },
    });
  } catch (error) {
    progress.clear();
    // A scenario that turns out wrong as it runs (an injectEvent about a pod evicted by then): exit 2,
    // naming the file as the parser does.
    if (error instanceof ScenarioError && error.source === undefined)
      throw new ScenarioError(error.issues, options.file, { cause: error });
    throw error;
  }
  progress.clear();
  if (recorder !== undefined) {
    for (const { cluster, file } of reports) {
      // A page per cluster: its lines, Ready changes and decisions alone (all of them for one cluster).
      const name = multi ? cluster.config.cluster : undefined;
      const own = <T extends { readonly cluster?: string }>(items: readonly T[]): T[] =>
        items.filter((item) => item.cluster === name);
      const page = renderReport(
        cluster,
        { lines: own(result.lines) },
        { readyChanges: own(recorder.readyChanges), decisions: own(recorder.decisions) },
      );
      await writeReport(file, page);
      io.stderr.write(`report written to ${file}\n`);
    }
  }
  if (json) {
    io.stdout.write(toJsonLines(result.lines));
    return 0;
  }
  // Written out before the closing line on stderr: with `2>&1` into a pipe, a large output still being
  // written would take that line into its middle ("Pods evicted: 0simulated …").
  const wide = { wide: options.output === 'wide' };
  await written(
    io.stdout,
    multi
      ? renderClusters(
          scenario.name,
          clusters.map((cluster) => cluster.config.cluster),
          result,
          stdoutPaint(io),
          wide,
        )
      : renderSimulation(scenario.name, result, stdoutPaint(io), wide),
  );
  const { wallMs, invocations, deliveries } = result.stats;
  const calls = Object.values(invocations).reduce((a, b) => a + b, 0);
  const chaotic =
    chaos === undefined
      ? ''
      : `; chaos ${formatChaos(chaos)}: ${deliveries.deliveries} deliveries, ${deliveries.failures} failed, ${deliveries.deadLettered} dead-lettered`;
  const nodes = clusters.reduce((sum, cluster) => sum + cluster.nodes.length, 0);
  const what = multi ? `${clusters.length} clusters (${nodes} nodes)` : `${nodes} nodes`;
  io.stderr.write(
    `simulated ${formatDuration(scenario.duration)} of ${what} in ${(wallMs / 1000).toFixed(1)}s (${calls} function invocations${chaotic})\n`,
  );
  return 0;
}

export function simulateCommand(ctx: CommandContext): Command {
  return new Command('simulate')
    .description('run a scenario in virtual time and print what the controller would do')
    .argument('<FILE>', 'scenario file (YAML or JSON)')
    .option('--json', 'JSON Lines, one record per line (docs/simulate.md "Output"), full data')
    .option(
      '-o, --output <format>',
      'wide: the summary names every node (by default a large zone is summed up by state); json: as --json',
    )
    .option('--verbose', 'also print the warnings the functions and the relay logged')
    .option(
      '--chaos <spec>',
      'deliver every event, schedule firing and invocation 1..N times, each after a random delay up to D, failing with probability P (retried as Lambda does, then dead-lettered) and dead-lettered outright with probability Q (default 0); seeded by S: duplicates=N,maxDelay=D,failures=P,deadLetter=Q,seed=S',
    )
    .option(
      '--quiet-digests',
      'the relay sends quiet digests as deployed (every 15 s while nothing goes on, NLC_RELAY_QUIET_DIGEST_PERIOD; docs/relay.md) instead of one every monitor period: the same decisions, fewer invocations',
    )
    .option(
      '--report <file>',
      'also write the run as one self-contained HTML page: a timeline picture (a lane per zone and per node that did something) and the summary',
    )
    .addHelpText('after', SIMULATE_HELP)
    .action(async (file: string, _opts: unknown, command: Command) => {
      // `--verbose` is also nlc's own option (stack traces): read it wherever it was given.
      const opts = command.optsWithGlobals<{
        json?: boolean;
        output?: string;
        verbose?: boolean;
        chaos?: string;
        quietDigests?: boolean;
        report?: string;
      }>();
      const options = parseOptions(SimulateOptionsSchema, { ...opts, file }, { file: 'FILE' });
      const nodeOptions = await nodeOptionsFor(options.file);
      // The run in a process whose heap is sized for it (local/simulate/heapLimit.ts).
      const relaunched = nodeOptions === undefined ? undefined : ctx.io.relaunch?.(nodeOptions);
      ctx.exitCode = relaunched ?? (await runSimulate(options, ctx.io));
    });
}
