// bench/scaleReport.ts (`npm run bench:scale`'s report): a run's JSON in, Markdown out; a child that
// failed, or printed something other than its bench's document, is a failed row with its stderr, and
// the other benches' figures are still reported. The benches themselves are not run here.
import { describe, expect, it } from 'vitest';
import {
  buildReport,
  lastJsonDocument,
  ScaleRunSchema,
  validateOutput,
  type ChildResult,
  type ScaleRun,
} from '../../../bench/scaleReport.js';

const relayOutput = {
  cluster: { nodes: 1000, pods: 10000, leaseRenewalSeconds: 10 },
  relayNodeOptions: '--max-old-space-size=288',
  startup: { syncSeconds: 1.1, cpuSecondsToSync: 0.9 },
  relist: { seconds: 1.0, cpuSeconds: 0.8, rssMiBMax: 130 },
  relay: {
    cpuPercentOfOneCore: 1.04,
    rssMiB: { max: 116.3, mean: 115.5 },
    peakRssMiB: 138.2,
    heapUsedMiB: { afterGc: 31.4 },
    leaseRenewalsPerSecond: 100,
  },
};

const step = (label: string, wallMs: number, rru: number, wru: number, heapMiB: number) => ({
  label,
  readUnits: rru,
  billedReadUnits: rru,
  writeUnits: wru,
  requests: 4,
  wallMs,
  cpuMs: wallMs / 2,
  lambdaMs: wallMs,
  heapMiB,
});

const monitorCostOutput = (nodes: number) => ({
  prices: {},
  sizes: [
    {
      nodes,
      firstPass: step('first pass', 860, 335, 872, 85),
      coldPass: step('steady pass, cold (full load)', 190, 589, 0, 111),
      steps: [],
      registeringTotal: { passes: 5, billedReadUnits: 997, writeUnits: 4020, wallMs: 3060 },
      warmMean: {
        passes: 12,
        billedReadUnits: 2,
        writeUnits: 0.25,
        wallMs: 16,
        cpuMs: 15,
        heapMiBMax: 102,
      },
      apiCalls: 0,
      monitorHeap: { warmStateMiB: 1.7, coldPassPeakMiB: 25.2 },
      monthly: {
        readUnits: 2_230_560,
        writeUnits: 129_600,
        putEventsUsd: 0.52,
        dynamoDbUsd: 0.36,
        lambdaUsd: 0.37,
        logsUsd: 0.27,
        totalUsd: 1.51,
        usdPerThousandNodes: 1.51,
      },
    },
  ],
});

const pass = (at: number, marked: number) => ({
  at,
  wallMs: 300,
  apiMs: 22_000,
  apiRequests: 442,
  marked,
  wru: 426,
  nodesWru: 204,
  heapMiB: 150,
});

/** 1,000 nodes, every silent node marked: the time is measured. */
const massMeasured = {
  options: { nodes: 1000, podsPerNode: 10, maxMarkingPasses: null },
  results: [
    {
      qps: 20,
      config: { kubeApiBurst: 30 },
      failed: 333,
      rows: [pass(0, 30), pass(25_000, 303)],
      recovery: [pass(90_000, 0), pass(95_000, 0)],
      heapPeak: 199,
      firstDue: 0,
      lastMarked: 241_000,
      notMarked: 0,
    },
  ],
};

/** 20,000 nodes stopped after two marking passes: 60 of 6,667 marked in 47.3 s (virtual). */
const massCapped = {
  options: { nodes: 20000, podsPerNode: 10, maxMarkingPasses: 2 },
  results: [
    {
      qps: 20,
      config: { kubeApiBurst: 30 },
      failed: 6667,
      rows: [pass(0, 30), pass(25_000, 30)],
      recovery: [],
      heapPeak: 900,
      firstDue: 0,
      notMarked: 6607,
    },
  ],
};

const multiOutput = (clusters: number) => ({
  nodesPerCluster: 1000,
  rounds: 6,
  results: [
    {
      clusters,
      serialPassMs: { p50: 82, p95: 556, max: 556 },
      serialPassCpuMs: { p50: 77, p95: 508 },
      parallelPassMs: { p50: 857, p95: 3944, max: 3950 },
      parallelRoundWallMsMean: 1403,
      maxConcurrentPasses: clusters,
      overlappingPairs: { differentClusters: clusters === 1 ? 0 : 270, sameCluster: 0 },
      refusedByLease: 6 * clusters,
      deliveries: 12 * clusters,
      failures: [],
    },
  ],
});

const ok = (
  bench: ChildResult['bench'],
  nodes: number,
  output: unknown,
  extra: { clusters?: number; note?: string } = {},
): ChildResult => ({
  bench,
  nodes,
  ...extra,
  command: ['node', '--import', 'tsx', `bench/${bench}.ts`],
  wallMs: 10_000,
  ok: true,
  output,
});

const run = (children: ChildResult[]): ScaleRun => ({
  startedAt: '2026-11-28T13:06:11.361Z',
  finishedAt: '2026-11-28T13:08:08.051Z',
  machine: {
    cpu: 'AMD EPYC',
    cores: 2,
    memoryGiB: 23.5,
    node: 'v20.20.2',
    loadAverageStart: [4.99, 6.53, 6.59],
    loadAverageEnd: [6.46, 6.46, 6.55],
  },
  options: { sizes: [1000, 20000], clusters: [1, 10], clusterNodes: 1000, quick: false },
  children,
});

const failedRelay: ChildResult = {
  bench: 'relay',
  nodes: 20000,
  command: ['node', '--import', 'tsx', 'bench/relay.ts', '--nodes', '20000'],
  wallMs: 95_000,
  ok: false,
  error: 'exited with code 1',
  exitCode: 1,
  signal: null,
  stderrTail: '[bench:relay] seeding 20000 nodes\nError: listen EADDRINUSE | port 6443',
};

const sample = run([
  ok('relay', 1000, relayOutput),
  ok('monitorCost', 1000, monitorCostOutput(1000)),
  ok('massFailure', 1000, massMeasured),
  failedRelay,
  // Exited 0 but printed another bench's document: reported as failed, not read as figures.
  ok('monitorCost', 20000, { nodes: 20000, virtualMinutes: 15 }),
  ok('massFailure', 20000, massCapped, { note: 'stopped after 2 marking passes' }),
  ok('multiCluster', 1000, multiOutput(1), { clusters: 1 }),
  ok('multiCluster', 1000, multiOutput(10), { clusters: 10 }),
  ok('simulate', 20000, {
    nodes: 20000,
    virtualMinutes: 15,
    wallMs: 300_000,
    events: 1_500_000,
    lines: 50_000,
    maxRssMiB: 1900,
  }),
]);

describe('buildReport', () => {
  const report = buildReport(sample);
  const lines = report.split('\n');
  const row = (start: string, after?: string): string | undefined => {
    const from = after === undefined ? 0 : lines.indexOf(after);
    return lines.slice(from).find((l) => l.startsWith(start));
  };

  it('names the machine, its load and the date', () => {
    expect(report).toContain('- Machine: AMD EPYC, 2 cores, 23.5 GiB, Node v20.20.2');
    expect(report).toContain('4.99 6.53 6.59 at the start, 6.46 6.46 6.55 at the end');
    expect(report).toContain('Started 2026-11-28T13:06:11.361Z');
  });

  it('reports each dimension in a table of its own', () => {
    for (const heading of [
      '## Relay (`bench/relay.ts`)',
      '## Monitor passes (`bench/monitorCost.ts`, `bench/massFailure.ts`)',
      '## DynamoDB units',
      '## Monthly cost, steady state (us-east-1 list prices, US$)',
      '## A third of the nodes silent at once (`bench/massFailure.ts`)',
      '## One deployment, many clusters of 1,000 nodes (`bench/multiCluster.ts`)',
      '## `nlc simulate`, one zone failing (`bench/simulateRun.ts`)',
      '## Runs',
    ])
      expect(lines).toContain(heading);
    expect(row('| 1,000 / 10,000 |')).toBe(
      '| 1,000 / 10,000 | 116.3 / 115.5 MiB | 138.2 MiB | 31.4 MiB | 1.1 s (0.9 s) | 1.0 s (0.8 s) | 1.0 % of a core | 100 (every 10 s) |',
    );
    expect(row('| 1,000 |', '## Monitor passes (`bench/monitorCost.ts`, `bench/massFailure.ts`)')).toBe(
      '| 1,000 | 0.86 s (0.43 s) | 4, 2.2 s | 16 ms (15 ms) | 0.19 s (0.10 s) | 0.30 s / 0.3 s + 22.0 s | 85 / 102 / 111 MiB | 1.7 / 25.2 MiB | 199 MiB |',
    );
    expect(row('| 1,000 |', '## Monthly cost, steady state (us-east-1 list prices, US$)')).toBe(
      '| 1,000 | 0.52 | 0.36 | 0.37 | 0.27 | **1.51** | 1.51 |',
    );
    expect(row('| 10 |')).toBe(
      '| 10 | 82 / 556 / 556 ms | 77 / 508 ms | 857 / 3,944 / 3,950 ms | 1,403 ms | 10 | 270 / 0 | 60 of 120 | 0 |',
    );
    expect(row('| 20,000 | 15 |')).toBe(
      '| 20,000 | 15 | 300.0 s | 1,500,000 | 50,000 | 1,900 MiB | 10.0 s |',
    );
  });

  it('gives a measured marking time as measured, and says when it is extrapolated', () => {
    const silent = '## A third of the nodes silent at once (`bench/massFailure.ts`)';
    expect(row('| 1,000 |', silent)).toBe('| 1,000 | 20 / 30 | 333 | 2 | 241 s | 442 | 0 | 2 |');
    // 60 marked over 47.3 s: 6,667 take 111 times that, in about 223 passes.
    expect(row('| 20,000 |', silent)).toBe(
      '| 20,000 | 20 / 30 | 6,667 | 2 run, ≈ 223 extrapolated | ≈ 5,256 s (extrapolated from 60 of 6,667 marked) | 442 | 6,607 | not measured |',
    );
    expect(report).toContain('- 20,000 nodes: stopped after 2 marking passes');
    expect(row('| massFailure | 20,000 |')).toMatch(/\| stopped after 2 marking passes \|$/);
  });

  it('reports a failed child and a child with a wrong document as failed, with the stderr tail', () => {
    expect(row('| 20,000 |', '## Relay (`bench/relay.ts`)')).toBe(
      '| 20,000 | **failed**: exited with code 1 (stderr below) | – | – | – | – | – | – |',
    );
    expect(row('| 20,000 |', '## Monthly cost, steady state (us-east-1 list prices, US$)')).toMatch(
      /^\| 20,000 \| \*\*failed\*\*: output does not match the monitorCost schema/,
    );
    // The rest of the size is still reported.
    expect(row('| 20,000 |', '## DynamoDB units')).toMatch(/\| 426 \(204\) \|$/);
    expect(report).toContain(
      '### relay, 20,000 nodes\n\nexited with code 1. The end of its stderr:\n\n```\n[bench:relay] seeding 20000 nodes\nError: listen EADDRINUSE | port 6443\n```',
    );
    expect(row('| relay | 20,000 |')).toContain('| **failed** | 95 s |');
  });

  it('adds up the time each size took', () => {
    expect(report).toContain(
      'Per size (relay, monitor cost and mass failure): 1,000 nodes 30 s, 20,000 nodes 115 s; every run: 2.9 min.',
    );
  });

  it('rebuilds the same report from the saved JSON', () => {
    const saved = ScaleRunSchema.parse(JSON.parse(JSON.stringify(sample)));
    expect(buildReport(saved)).toBe(report);
  });
});

describe('validateOutput', () => {
  it('takes the last JSON document after lines of logs', () => {
    const stdout = `{"level":"info","message":"relay started"}\nsome line\n${JSON.stringify(relayOutput, null, 2)}\n`;
    expect(lastJsonDocument(stdout)).toEqual(relayOutput);
    expect(validateOutput('relay', stdout)).toEqual({ ok: true, output: relayOutput });
  });

  it('refuses garbage and a document of another shape', () => {
    expect(validateOutput('simulate', 'Segmentation fault\n')).toEqual({
      ok: false,
      error: 'no JSON document in its output',
    });
    const wrong = validateOutput('simulate', '{"nodes": "many"}\n');
    expect(wrong.ok).toBe(false);
    expect(!wrong.ok && wrong.error).toMatch(/^output does not match the simulate schema: nodes: /);
  });
});
