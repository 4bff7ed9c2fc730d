// The report of bench/scale.ts: the JSON each bench prints (validated here, since it crosses a process
// boundary), the run's document that scale.ts writes, and the Markdown built from it. Pure: JSON in,
// Markdown out (test/unit/bench/scaleReport.test.ts), so a saved run can be reported again
// (`npm run bench:scale -- --report FILE`).
import { z } from 'zod';
import { markingPasses, markingSpan } from './massFailureSummary.js';

// Only the fields the report reads: the run's file keeps each child's whole document.

const relayOutput = z.object({
  cluster: z.object({ nodes: z.number(), pods: z.number(), leaseRenewalSeconds: z.number() }),
  relayNodeOptions: z.string(),
  startup: z.object({ syncSeconds: z.number(), cpuSecondsToSync: z.number() }),
  relist: z.object({ seconds: z.number(), cpuSeconds: z.number(), rssMiBMax: z.number() }),
  relay: z.object({
    cpuPercentOfOneCore: z.number(),
    rssMiB: z.object({ max: z.number(), mean: z.number() }),
    peakRssMiB: z.number().nullable(),
    heapUsedMiB: z.object({ afterGc: z.number().nullable() }),
    leaseRenewalsPerSecond: z.number(),
  }),
});

const monitorStep = z.object({
  label: z.string(),
  readUnits: z.number(),
  billedReadUnits: z.number(),
  writeUnits: z.number(),
  requests: z.number(),
  wallMs: z.number(),
  cpuMs: z.number(),
  heapMiB: z.number(),
});

const monitorCostOutput = z.object({
  sizes: z
    .array(
      z.object({
        nodes: z.number(),
        firstPass: monitorStep.nullable(),
        coldPass: monitorStep.nullable(),
        steps: z.array(monitorStep),
        registeringTotal: z.object({
          passes: z.number(),
          billedReadUnits: z.number(),
          writeUnits: z.number(),
          wallMs: z.number(),
        }),
        warmMean: z.object({
          passes: z.number(),
          billedReadUnits: z.number(),
          writeUnits: z.number(),
          wallMs: z.number(),
          cpuMs: z.number(),
          heapMiBMax: z.number(),
        }),
        apiCalls: z.number(),
        /** The monitor's own heap, told from the rest of the bench process by full GCs. */
        monitorHeap: z.object({ warmStateMiB: z.number(), coldPassPeakMiB: z.number() }).optional(),
        monthly: z.object({
          readUnits: z.number(),
          writeUnits: z.number(),
          putEventsUsd: z.number(),
          dynamoDbUsd: z.number(),
          lambdaUsd: z.number(),
          logsUsd: z.number(),
          totalUsd: z.number(),
          usdPerThousandNodes: z.number(),
        }),
      }),
    )
    .min(1),
});

const massFailurePass = z.object({
  at: z.number(),
  wallMs: z.number(),
  apiMs: z.number(),
  apiRequests: z.number(),
  marked: z.number(),
  wru: z.number(),
  nodesWru: z.number(),
  heapMiB: z.number(),
});

const massFailureOutput = z.object({
  // Infinity (no cap) is null in JSON.
  options: z.object({
    nodes: z.number(),
    podsPerNode: z.number(),
    maxMarkingPasses: z.number().nullable(),
  }),
  results: z
    .array(
      z.object({
        qps: z.number(),
        config: z.object({ kubeApiBurst: z.number() }),
        failed: z.number(),
        rows: z.array(massFailurePass),
        recovery: z.array(massFailurePass),
        heapPeak: z.number(),
        firstDue: z.number().optional(),
        lastMarked: z.number().optional(),
        notMarked: z.number(),
      }),
    )
    .min(1),
});

const percentiles = z.object({ p50: z.number(), p95: z.number(), max: z.number() });
const multiClusterOutput = z.object({
  nodesPerCluster: z.number(),
  rounds: z.number(),
  results: z
    .array(
      z.object({
        clusters: z.number(),
        serialPassMs: percentiles,
        serialPassCpuMs: z.object({ p50: z.number(), p95: z.number() }),
        parallelPassMs: percentiles,
        parallelRoundWallMsMean: z.number(),
        maxConcurrentPasses: z.number(),
        overlappingPairs: z.object({ differentClusters: z.number(), sameCluster: z.number() }),
        refusedByLease: z.number(),
        deliveries: z.number(),
        failures: z.array(z.string()),
      }),
    )
    .min(1),
});

const simulateOutput = z.object({
  nodes: z.number(),
  virtualMinutes: z.number(),
  wallMs: z.number(),
  events: z.number(),
  lines: z.number(),
  maxRssMiB: z.number(),
});

export const BenchOutputs = {
  relay: relayOutput,
  monitorCost: monitorCostOutput,
  massFailure: massFailureOutput,
  multiCluster: multiClusterOutput,
  simulate: simulateOutput,
} as const;
export type BenchName = keyof typeof BenchOutputs;
export const BenchNames = Object.keys(BenchOutputs) as BenchName[];

const childBase = {
  bench: z.enum(['relay', 'monitorCost', 'massFailure', 'multiCluster', 'simulate']),
  /** Nodes of the run (per cluster for multiCluster). */
  nodes: z.number(),
  clusters: z.number().optional(),
  command: z.array(z.string()),
  wallMs: z.number(),
  /** What the run was told to leave out or cut short, said in the report beside its figures. */
  note: z.string().optional(),
};
const childResult = z.discriminatedUnion('ok', [
  z.object({ ...childBase, ok: z.literal(true), output: z.unknown() }),
  z.object({
    ...childBase,
    ok: z.literal(false),
    error: z.string(),
    exitCode: z.number().nullable(),
    signal: z.string().nullable(),
    stderrTail: z.string(),
  }),
]);
export type ChildResult = z.infer<typeof childResult>;

export const ScaleRunSchema = z.object({
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  machine: z.object({
    cpu: z.string(),
    cores: z.number(),
    memoryGiB: z.number(),
    node: z.string(),
    loadAverageStart: z.array(z.number()),
    loadAverageEnd: z.array(z.number()).nullable(),
  }),
  options: z.object({
    sizes: z.array(z.number()),
    clusters: z.array(z.number()),
    clusterNodes: z.number(),
    quick: z.boolean(),
  }),
  children: z.array(childResult),
});
export type ScaleRun = z.infer<typeof ScaleRunSchema>;

/**
 * The last JSON document in a child's stdout: a bench's children may write lines of their own before
 * it (the relay's logs), and --json documents are printed last, pretty or on one line.
 */
export function lastJsonDocument(stdout: string): unknown {
  const lines = stdout.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!(lines[i]?.startsWith('{') ?? false)) continue;
    try {
      return JSON.parse(lines.slice(i).join('\n'));
    } catch {
      // Not where the document starts (or not JSON): look further up.
    }
  }
  throw new Error('no JSON document in its output');
}

/** A child's stdout checked against its bench's schema: the document, or why it is not one. */
export function validateOutput(
  bench: BenchName,
  stdout: string,
): { ok: true; output: unknown } | { ok: false; error: string } {
  let output: unknown;
  try {
    output = lastJsonDocument(stdout);
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  const parsed = BenchOutputs[bench].safeParse(output);
  if (parsed.success) return { ok: true, output };
  const issues = parsed.error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
  return { ok: false, error: `output does not match the ${bench} schema: ${issues}` };
}

const num = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const seconds = (ms: number, digits = 1): string => `${num(ms / 1000, digits)} s`;
/** A table cell: no pipe or line break of a message may split the row. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const duration = (ms: number): string =>
  ms < 120_000
    ? seconds(ms, 0)
    : ms < 7_200_000
      ? `${num(ms / 60_000, 1)} min`
      : `${num(ms / 3_600_000, 1)} h`;

type Parsed<B extends BenchName> = z.infer<(typeof BenchOutputs)[B]>;
type Outcome<B extends BenchName> =
  | { readonly ok: true; readonly child: ChildResult; readonly data: Parsed<B> }
  | { readonly ok: false; readonly child: ChildResult; readonly error: string };

/** The run's children of one bench, each with its parsed document or why it failed. */
function outcomes<B extends BenchName>(run: ScaleRun, bench: B): Outcome<B>[] {
  return run.children
    .filter((c) => c.bench === bench)
    .map((child): Outcome<B> => {
      if (!child.ok) return { ok: false, child, error: child.error };
      const parsed = BenchOutputs[bench].safeParse(child.output);
      return parsed.success
        ? { ok: true, child, data: parsed.data as Parsed<B> }
        : { ok: false, child, error: `output does not match the ${bench} schema` };
    });
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

/** A row for a child that failed: its first cell, then the reason across the rest. */
const failedRow = (first: string, width: number, error: string): string[] => [
  first,
  `**failed**: ${cell(error)} (stderr below)`,
  ...Array.from({ length: Math.max(0, width - 2) }, () => '–'),
];

const nodesLabel = (n: number): string => num(n);

/** The Markdown report of a run: one table per dimension, the machine, every child's time, failures. */
export function buildReport(run: ScaleRun): string {
  const out: string[] = [];
  const m = run.machine;
  const load = (l: readonly number[]): string => l.map((x) => x.toFixed(2)).join(' ');
  out.push(
    `# Scale report${run.options.quick ? ' (--quick: a smoke run, not figures to quote)' : ''}`,
    '',
    `- Machine: ${m.cpu}, ${m.cores} cores, ${num(m.memoryGiB, 1)} GiB, Node ${m.node}`,
    `- Load average (1, 5, 15 min): ${load(m.loadAverageStart)} at the start, ${
      m.loadAverageEnd === null ? 'unfinished' : `${load(m.loadAverageEnd)} at the end`
    }`,
    `- Started ${run.startedAt}, ${run.finishedAt === null ? 'not finished' : `finished ${run.finishedAt}`}`,
    `- Sizes: ${run.options.sizes.map(nodesLabel).join(', ')} nodes; clusters: ${run.options.clusters.join(', ')} of ${nodesLabel(run.options.clusterNodes)} nodes each`,
    '',
    "Every bench ran in a process of its own, one at a time. Wall times are this machine's (shared: see the load); CPU times, units and requests are not.",
  );

  const relay = outcomes(run, 'relay');
  if (relay.length > 0) {
    const header = [
      'nodes / pods',
      'relay resident, steady max / mean',
      'peak since start',
      'heap after GC',
      'first lists (CPU)',
      'relist of all three (CPU)',
      'relay CPU, steady',
      'lease renewals/s served',
    ];
    out.push('', '## Relay (`bench/relay.ts`)', '');
    out.push(
      ...table(
        header,
        relay.map((o) => {
          if (!o.ok) return failedRow(nodesLabel(o.child.nodes), header.length, o.error);
          const d = o.data;
          return [
            `${num(d.cluster.nodes)} / ${num(d.cluster.pods)}`,
            `${num(d.relay.rssMiB.max, 1)} / ${num(d.relay.rssMiB.mean, 1)} MiB`,
            d.relay.peakRssMiB === null ? 'n/a' : `${num(d.relay.peakRssMiB, 1)} MiB`,
            d.relay.heapUsedMiB.afterGc === null ? 'n/a' : `${num(d.relay.heapUsedMiB.afterGc, 1)} MiB`,
            `${num(d.startup.syncSeconds, 1)} s (${num(d.startup.cpuSecondsToSync, 1)} s)`,
            `${num(d.relist.seconds, 1)} s (${num(d.relist.cpuSeconds, 1)} s)`,
            `${num(d.relay.cpuPercentOfOneCore, 1)} % of a core`,
            `${num(d.relay.leaseRenewalsPerSecond, 0)} (every ${d.cluster.leaseRenewalSeconds} s)`,
          ];
        }),
      ),
    );
    const options = [...new Set(relay.flatMap((o) => (o.ok ? [`\`${o.data.relayNodeOptions}\``] : [])))].join(
      ', ',
    );
    if (options !== '') out.push('', `Relay NODE_OPTIONS: ${options}.`);
  }

  const monitor = outcomes(run, 'monitorCost');
  const mass = outcomes(run, 'massFailure');
  const sizes = [...new Set([...monitor, ...mass].map((o) => o.child.nodes))].sort((a, b) => a - b);
  const monitorOf = (n: number) => monitor.find((o) => o.child.nodes === n);
  const massOf = (n: number) => mass.find((o) => o.child.nodes === n);
  if (sizes.length > 0) {
    const header = [
      'nodes',
      'first pass (CPU)',
      'registration passes after it (wall, all)',
      'steady warm pass, mean (CPU)',
      'cold pass, full load (CPU)',
      'mass failure: marking pass, mean / slowest compute + API',
      'heap after a step: first / warm / cold',
      "monitor's own heap: warm state / cold peak (≤)",
      'heap peak, mass failure',
    ];
    out.push('', '## Monitor passes (`bench/monitorCost.ts`, `bench/massFailure.ts`)', '');
    out.push(
      ...table(
        header,
        sizes.map((n) => {
          const mc = monitorOf(n);
          const mf = massOf(n);
          const row: string[] = [nodesLabel(n)];
          if (mc === undefined) row.push('–', '–', '–', '–');
          else if (!mc.ok) row.push(`**failed**: ${cell(mc.error)}`, '–', '–', '–');
          else {
            const s = mc.data.sizes[0];
            if (s === undefined) row.push('–', '–', '–', '–');
            else {
              const first = s.firstPass;
              const cold = s.coldPass;
              row.push(
                first === null ? 'n/a' : `${seconds(first.wallMs, 2)} (${seconds(first.cpuMs, 2)})`,
                s.registeringTotal.passes > 1
                  ? `${s.registeringTotal.passes - 1}, ${seconds(s.registeringTotal.wallMs - (first?.wallMs ?? 0))}`
                  : 'none',
                `${num(s.warmMean.wallMs)} ms (${num(s.warmMean.cpuMs)} ms)`,
                cold === null ? 'n/a' : `${seconds(cold.wallMs, 2)} (${seconds(cold.cpuMs, 2)})`,
              );
            }
          }
          const marking = mf?.ok === true ? mf.data.results.flatMap((r) => markingPasses(r.rows)) : [];
          if (mf === undefined) row.push('–');
          else if (!mf.ok) row.push(`**failed**: ${cell(mf.error)}`);
          else if (marking.length === 0) row.push('no marking pass');
          else {
            const slowest = marking.reduce((a, b) => (b.wallMs + b.apiMs > a.wallMs + a.apiMs ? b : a));
            const mean = marking.reduce((a, r) => a + r.wallMs, 0) / marking.length;
            row.push(`${seconds(mean, 2)} / ${seconds(slowest.wallMs, 1)} + ${seconds(slowest.apiMs, 1)}`);
          }
          if (mc?.ok === true && mc.data.sizes[0] !== undefined) {
            const s = mc.data.sizes[0];
            const h = (x: { heapMiB: number } | null | undefined): string =>
              x === null || x === undefined ? '?' : num(x.heapMiB);
            row.push(`${h(s.firstPass)} / ${num(s.warmMean.heapMiBMax)} / ${h(s.coldPass)} MiB`);
            row.push(
              s.monitorHeap === undefined
                ? '?'
                : `${num(s.monitorHeap.warmStateMiB, 1)} / ${num(s.monitorHeap.coldPassPeakMiB, 1)} MiB`,
            );
          } else row.push('–', '–');
          row.push(mf?.ok === true ? `${num(Math.max(...mf.data.results.map((r) => r.heapPeak)))} MiB` : '–');
          return row;
        }),
      ),
    );
    out.push(
      '',
      "Heap: V8 heap in use as each step ends (dynalite, in the same process, included); the monitor's own: a warm instance's state, and a cold pass's peak over the rest of the process (dynalite's answers included, so at most); for the mass failure, the most of it after any pass. The marking pass's API time is virtual (the throttle and a fixed latency), its compute this machine's.",
    );

    const units = [
      'nodes',
      'first pass RRU / WRU',
      'every registering pass RRU / WRU',
      'steady warm pass RRU (billed) / WRU',
      'cold pass RRU',
      'per month RRU / WRU',
      'mass failure: WRU a marking pass (Nodes table), at most',
    ];
    out.push('', '## DynamoDB units', '');
    out.push(
      ...table(
        units,
        sizes.map((n) => {
          const mc = monitorOf(n);
          const mf = massOf(n);
          const row: string[] = [nodesLabel(n)];
          const s = mc?.ok === true ? mc.data.sizes[0] : undefined;
          if (mc !== undefined && !mc.ok) row.push(`**failed**: ${cell(mc.error)}`, '–', '–', '–', '–');
          else if (s === undefined) row.push('–', '–', '–', '–', '–');
          else
            row.push(
              s.firstPass === null
                ? 'n/a'
                : `${num(s.firstPass.billedReadUnits, 1)} / ${num(s.firstPass.writeUnits, 1)}`,
              `${num(s.registeringTotal.billedReadUnits, 1)} / ${num(s.registeringTotal.writeUnits, 1)}`,
              `${num(s.warmMean.billedReadUnits, 1)} / ${num(s.warmMean.writeUnits, 2)}`,
              s.coldPass === null ? 'n/a' : num(s.coldPass.billedReadUnits, 1),
              `${num(s.monthly.readUnits / 1e6, 3)} M / ${num(s.monthly.writeUnits / 1e6, 3)} M`,
            );
          const marking = mf?.ok === true ? mf.data.results.flatMap((r) => markingPasses(r.rows)) : [];
          row.push(
            marking.length === 0
              ? '–'
              : `${num(Math.max(...marking.map((r) => r.wru)))} (${num(Math.max(...marking.map((r) => r.nodesWru)))})`,
          );
          return row;
        }),
      ),
    );
    out.push(
      '',
      'RRU billed counts every read request as at least its minimum (an upper bound; `bench/monitorCost.ts`).',
    );

    const cost = [
      'nodes',
      'PutEvents',
      'DynamoDB',
      'Lambda',
      'CloudWatch Logs',
      'total a month',
      'per 1,000 nodes',
    ];
    out.push('', '## Monthly cost, steady state (us-east-1 list prices, US$)', '');
    out.push(
      ...table(
        cost,
        sizes.flatMap((n) => {
          const mc = monitorOf(n);
          if (mc === undefined) return [];
          if (!mc.ok) return [failedRow(nodesLabel(n), cost.length, mc.error)];
          const s = mc.data.sizes[0];
          if (s === undefined) return [];
          const c = s.monthly;
          return [
            [
              nodesLabel(n),
              num(c.putEventsUsd, 2),
              num(c.dynamoDbUsd, 2),
              num(c.lambdaUsd, 2),
              num(c.logsUsd, 2),
              `**${num(c.totalUsd, 2)}**`,
              num(c.usdPerThousandNodes, 2),
            ],
          ];
        }),
      ),
    );
    out.push('', 'CloudWatch custom metrics are a fixed cost apart (17 metrics with 3 zones).');
  }

  if (mass.length > 0) {
    const header = [
      'nodes',
      'kubeApiQps / burst',
      'silent nodes',
      'marking passes',
      'grace expiry → last node marked',
      'requests a pass, at most',
      'not marked',
      'recovery passes',
    ];
    const notes: string[] = [];
    const podsPerNode = mass.flatMap((o) => (o.ok ? [o.data.options.podsPerNode] : []))[0];
    out.push('', '## A third of the nodes silent at once (`bench/massFailure.ts`)', '');
    out.push(
      ...table(
        header,
        mass.flatMap((o) => {
          if (!o.ok) return [failedRow(nodesLabel(o.child.nodes), header.length, o.error)];
          if (o.child.note !== undefined) notes.push(`${nodesLabel(o.child.nodes)} nodes: ${o.child.note}`);
          return o.data.results.map((r) => {
            const span = markingSpan(r);
            const marking = markingPasses(r.rows);
            const [passes, time] =
              span.kind === 'measured'
                ? [num(span.passes), seconds(span.seconds * 1000, 0)]
                : span.kind === 'extrapolated'
                  ? [
                      `${num(span.passesRun)} run, ≈ ${num(span.passes)} extrapolated`,
                      `≈ ${seconds(span.seconds * 1000, 0)} (extrapolated from ${num(span.markedSoFar)} of ${num(r.failed)} marked)`,
                    ]
                  : [num(span.passes), 'n/a'];
            return [
              nodesLabel(o.data.options.nodes),
              `${r.qps} / ${r.config.kubeApiBurst}`,
              num(r.failed),
              passes,
              time,
              marking.length === 0 ? '–' : num(Math.max(...marking.map((x) => x.apiRequests))),
              num(r.notMarked),
              r.recovery.length === 0 ? 'not measured' : num(r.recovery.length),
            ];
          });
        }),
      ),
    );
    out.push(
      '',
      `${podsPerNode === undefined ? '' : `${podsPerNode} pods a node. `}Time is virtual: a pass's compute as measured plus its API time at the throttle's rate.` +
        ' A run stopped early (`--max-marking-passes`) carries the rate of its passes to every silent node, as `bench/massFailure.ts` does, and measures no recovery.',
    );
    for (const note of notes) out.push(`- ${note}`);
  }

  const multi = outcomes(run, 'multiCluster');
  if (multi.length > 0) {
    const header = [
      'clusters',
      'serial pass p50 / p95 / max',
      'its CPU p50 / p95',
      'parallel pass p50 / p95 / max',
      'parallel round wall (mean)',
      'most passes at once',
      'overlapping pairs, different clusters / same cluster',
      'deliveries refused by the lease',
      'deliveries failed',
    ];
    const ms = (p: { p50: number; p95: number; max?: number }): string =>
      [p.p50, p.p95, ...(p.max === undefined ? [] : [p.max])].map((x) => num(x)).join(' / ') + ' ms';
    out.push(
      '',
      `## One deployment, many clusters of ${nodesLabel(run.options.clusterNodes)} nodes (\`bench/multiCluster.ts\`)`,
      '',
    );
    out.push(
      ...table(
        header,
        multi.flatMap((o) => {
          if (!o.ok) return [failedRow(String(o.child.clusters ?? '?'), header.length, o.error)];
          return o.data.results.map((r) => [
            String(r.clusters),
            ms(r.serialPassMs),
            ms(r.serialPassCpuMs),
            ms(r.parallelPassMs),
            `${num(r.parallelRoundWallMsMean)} ms`,
            String(r.maxConcurrentPasses),
            `${num(r.overlappingPairs.differentClusters)} / ${num(r.overlappingPairs.sameCluster)}`,
            `${num(r.refusedByLease)} of ${num(r.deliveries)}`,
            String(r.failures.length),
          ]);
        }),
      ),
    );
    out.push(
      '',
      'Every "invocation" shares one process with dynalite here: the parallel columns show that passes of different clusters overlap, the serial ones a cluster\'s own pass time.',
    );
  }

  const simulate = outcomes(run, 'simulate');
  if (simulate.length > 0) {
    const header = ['nodes', 'virtual minutes', 'wall', 'events', 'log lines', 'peak RSS', 'process wall'];
    out.push('', '## `nlc simulate`, one zone failing (`bench/simulateRun.ts`)', '');
    out.push(
      ...table(
        header,
        simulate.map((o) =>
          !o.ok
            ? failedRow(nodesLabel(o.child.nodes), header.length, o.error)
            : [
                nodesLabel(o.data.nodes),
                String(o.data.virtualMinutes),
                seconds(o.data.wallMs),
                num(o.data.events),
                num(o.data.lines),
                `${num(o.data.maxRssMiB)} MiB`,
                seconds(o.child.wallMs),
              ],
        ),
      ),
    );
  }

  out.push('', '## Runs', '');
  out.push(
    ...table(
      ['bench', 'nodes', 'clusters', 'result', 'wall', 'command', 'note'],
      run.children.map((c) => [
        c.bench,
        nodesLabel(c.nodes),
        c.clusters === undefined ? '' : String(c.clusters),
        c.ok ? 'ok' : '**failed**',
        duration(c.wallMs),
        `\`${cell(c.command.join(' '))}\``,
        cell(c.note ?? ''),
      ]),
    ),
  );
  const bySize = new Map<number, number>();
  for (const c of run.children)
    if (c.bench === 'relay' || c.bench === 'monitorCost' || c.bench === 'massFailure')
      bySize.set(c.nodes, (bySize.get(c.nodes) ?? 0) + c.wallMs);
  const total = run.children.reduce((a, c) => a + c.wallMs, 0);
  out.push(
    '',
    `Per size (relay, monitor cost and mass failure): ${
      [...bySize].map(([n, ms]) => `${nodesLabel(n)} nodes ${duration(ms)}`).join(', ') || 'none'
    }; every run: ${duration(total)}.`,
  );

  const failed = run.children.filter((c): c is Extract<ChildResult, { ok: false }> => !c.ok);
  if (failed.length > 0) {
    out.push('', '## Failed runs', '');
    for (const c of failed) {
      const what = `${c.bench}, ${nodesLabel(c.nodes)} nodes${c.clusters === undefined ? '' : `, ${c.clusters} clusters`}`;
      // How it ended, unless the error already says so.
      const exit = c.error.startsWith('exited')
        ? ''
        : ` (${c.signal !== null ? `signal ${c.signal}` : `exit code ${String(c.exitCode)}`})`;
      if (c.stderrTail.trim() === '') {
        out.push(`### ${what}`, '', `${cell(c.error)}${exit}. Its stderr was empty.`, '');
        continue;
      }
      out.push(`### ${what}`, '', `${cell(c.error)}${exit}. The end of its stderr:`, '');
      // A fence longer than any run of backticks in the text, so the text cannot close it.
      const fence = '`'.repeat(Math.max(3, ...[...c.stderrTail.matchAll(/`+/g)].map((x) => x[0].length + 1)));
      out.push(fence, c.stderrTail.trimEnd(), fence, '');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}
