// What the monitor costs in steady state, measured by running the real services (shared/app/monitor.ts,
// shared/app/drainer.ts) against the real DynamoDB stores on dynalite:
//   npx tsx bench/monitorCost.ts [nodes ...] [--json] [--entry-max-bytes N]     (default: 1000 5000)
//   (--entry-max-bytes: the relay's NLC_RELAY_DIGEST_ENTRY_MAX_BYTES; default 261120 up to 20,000 nodes and
//   1000000 above, as infra/relay-large sets it for those clusters)
//   (--json: one JSON document of the same figures, unrounded, instead of Markdown, for bench/scale.ts)
//
// Healthy nodes renew their lease every 10 s; in steady state (every node Ready and renewing) the
// relay sends one Heartbeat Digest every quiet period, 15 s (4 a minute; docs/relay.md#quiet-digests),
// instead of every 5 s. For each size: seed the node cache (as node-taints would), run the first pass and the next
// ones until every node is registered (MaxRegistrationsPerPass a pass, docs/monitor.md#registration),
// let the zones settle, then measure one minute of warm passes (the function kept its LoadedState), one cold
// pass (a full load after a cold start), one drainer run and one scheduled check. A digest too large
// for one event (above ~20,000 nodes with fingerprints) reaches the monitor in parts, one invocation
// each, the last one running the pass: a "pass" row is then every part's invocation together. The cluster is an
// in-memory fake: in steady state the monitor makes no API call at all (asserted below).
//
// Units are what dynalite reports through the stores' capacity counter. dynalite reports 0 for a Query
// that returns nothing, where DynamoDB bills every read request at least 0.5 (eventually consistent) or
// 1 RRU; the "billed" column counts each read request as at least that (an upper bound).
import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CapacityCounter, type CapacitySnapshot } from '../shared/adapters/dynamodb/index.js';
import { runDrainer } from '../shared/app/drainer.js';
import {
  MaxRegistrationsPerPass,
  runMonitorPass,
  type MonitorDeps,
  type MonitorOutcome,
  type RunMonitorPassOptions,
} from '../shared/app/monitor.js';
import { runScheduledCheck } from '../shared/app/scheduledCheck.js';
import { UPSTREAM_DEFAULTS, type ControllerConfig } from '../shared/config.js';
import type { Effect, ResultOf } from '../shared/domain/effects.js';
import { HeartbeatDigestDetailType, RelaySource, utf8Bytes, type HeartbeatDigest } from '../shared/events.js';
import {
  DefaultDigestEntryMaxBytes,
  DigestEntryOverheadBytes,
  fitDigest,
  heartbeatDigestBytes,
} from '../shared/heartbeatDigest.js';
import type { LogFields, Observer } from '../shared/ports/observer.js';
import type { LoadedState } from '../shared/ports/stores.js';
import { startDynamoDb } from '../test/helpers/dynamodb.js';
import { eksNode, steadyDigests, t0 } from './eksNodes.js';
import { FakeCluster } from '../test/helpers/fakeCluster.js';

// AWS list prices, us-east-1, as of November 2026 (on-demand / pay-per-use):
const PRICE = {
  dynamoWriteUnitPerMillion: 0.625, // DynamoDB on-demand WRU
  dynamoReadUnitPerMillion: 0.125, // DynamoDB on-demand RRU
  eventBridgeEventPerMillion: 1.0, // custom events put, per 64 KB chunk of an entry
  lambdaRequestPerMillion: 0.2,
  lambdaArmGbSecond: 0.0000133334, // arm64
  logsIngestedPerGb: 0.5, // CloudWatch Logs, standard class
  customMetricPerMonth: 0.3, // CloudWatch, first 10,000 metrics
} as const;
const MINUTES_PER_MONTH = 30 * 24 * 60;
/** The relay's NLC_RELAY_QUIET_DIGEST_PERIOD (its default): a steady cluster's digest period. */
const QUIET_PERIOD_MS = 15_000;
const PASSES_PER_MINUTE = 60_000 / QUIET_PERIOD_MS;
/** Lambda's START/END/REPORT lines: none at serverless.yml's lambdaSystemLogLevel WARN (its default). */
const PLATFORM_LOG_BYTES_PER_INVOCATION = 0;
const CHUNK = 64 * 1024;
const MONITOR_MEMORY_GB = 1; // serverless.yml monitorMemorySize
const DRAINER_MEMORY_GB = 0.5; // serverless.yml memorySize
// Powertools adds these to every JSON log line (level, timestamp, service, cold start, function name,
// ARN, memory, request id, sampling rate, xray id): measured on a real line, about 330 bytes.
const LOG_LINE_OVERHEAD = 330;
// An EMF document: the _aws block, the namespace and one dimension set, plus the service dimension.
const EMF_DOC_OVERHEAD = 260;
const EMF_PER_METRIC = 90;

const config: ControllerConfig = { ...UPSTREAM_DEFAULTS, cluster: 'bench' };

/** Counts what the services would log and emit through Powertools, in bytes. */
class CountingObserver implements Observer {
  lines = 0;
  logBytes = 0;
  zoneMetricValues = 0;
  metricValues = 0;
  /** Lines and bytes by message, and values by metric name: the breakdown of the log bill. */
  readonly byMessage = new Map<string, { lines: number; bytes: number }>();
  readonly byMetric = new Map<string, number>();
  private line(message: string, fields: LogFields | undefined): void {
    const bytes = LOG_LINE_OVERHEAD + utf8Bytes(JSON.stringify({ message, ...fields }));
    this.lines++;
    this.logBytes += bytes;
    const entry = this.byMessage.get(message) ?? { lines: 0, bytes: 0 };
    entry.lines++;
    entry.bytes += bytes;
    this.byMessage.set(message, entry);
  }
  debug(): void {
    // POWERTOOLS_LOG_LEVEL=INFO in serverless.yml: debug lines are not written.
  }
  info(message: string, fields?: LogFields): void {
    this.line(message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.line(message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.line(message, fields);
  }
  metric(name: string, _unit: string, _value: number, dimensions?: { readonly zone?: string }): void {
    this.byMetric.set(name, (this.byMetric.get(name) ?? 0) + 1);
    if (dimensions?.zone !== undefined) this.zoneMetricValues++;
    else this.metricValues++;
  }
  reset(): void {
    this.lines = this.logBytes = this.zoneMetricValues = this.metricValues = 0;
    this.byMessage.clear();
    this.byMetric.clear();
  }
  /** "message" × lines (bytes), …: what was logged since the last reset. */
  breakdown(): string {
    const lines = [...this.byMessage].map(
      ([m, e]) => `"${m}" × ${e.lines} (${e.bytes.toLocaleString('en-US')} B)`,
    );
    const metrics = [...this.byMetric].map(([m, n]) => `${m} × ${n}`);
    return `${lines.join(', ') || 'no line'}; EMF values: ${metrics.join(', ') || 'none'}`;
  }
  /** Log bytes including EMF: one document per invocation, one per zone-labelled value. */
  bytesWithMetrics(invocations: number): number {
    const emf =
      (invocations > 0 && this.metricValues > 0 ? invocations * EMF_DOC_OVERHEAD : 0) +
      this.metricValues * EMF_PER_METRIC +
      this.zoneMetricValues * (EMF_DOC_OVERHEAD + EMF_PER_METRIC);
    return this.logBytes + emf;
  }
}

interface Row {
  readonly label: string;
  readonly used: CapacitySnapshot;
  readonly wallMs: number;
  /** CPU time of this process meanwhile (the services and dynalite: an upper bound for the services'). */
  readonly cpuMs: number;
  /** V8 heap in use as the step ends (dynalite's included), as bench/massFailure.ts samples it. */
  readonly heapMiB: number;
  /** The most V8 heap in use during the step (sampled every 10 ms and at its end). */
  readonly heapPeakMiB: number;
}

// A full GC on demand (the bench runs under tsx, without --expose-gc): the monitor's own heap is told
// from dynalite's and the fake API's by collecting before and after what it holds.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const heapUsedMiB = (): number => getHeapStatistics().used_heap_size / 2 ** 20;
const collectedHeapMiB = (): number => {
  collect();
  return heapUsedMiB();
};

/**
 * A DynamoDB request's round trip from a Lambda function in the same region: single-digit
 * milliseconds; 5 ms each, counted as if every request waited alone (an upper bound: commits write in
 * parallel). dynalite answers in process, so its time is CPU time here instead.
 */
const DYNAMO_ROUND_TRIP_MS = 5;
/**
 * Lambda's billed duration of a step: its CPU time plus a round trip per DynamoDB request. Not the
 * wall time, which on a machine shared with other benchmarks measures them too (a warm pass at 1,000
 * nodes took 22 to 109 ms of wall time between runs on 2026-11-28).
 */
const billedMs = (row: Row): number => row.cpuMs + DYNAMO_ROUND_TRIP_MS * row.used.requests;

const READ_OPS = ['GetItem', 'Query', 'BatchGetItem'];
/** At least the minimum of each read request: 1 RRU strongly consistent, 0.5 eventually consistent. */
const billedReads = (used: CapacitySnapshot): number => {
  const requests = READ_OPS.reduce((n, op) => n + (used.byOperation[op] ?? 0), 0);
  return Math.max(used.readUnits, requests - 0.5 * used.eventuallyConsistentReads);
};

/** The relay's entry limit for a cluster of this size (--entry-max-bytes, or the overlay's). */
function entryMaxBytesFor(nodeCount: number): number {
  return entryMaxBytesOption ?? (nodeCount > 20_000 ? 1_000_000 : DefaultDigestEntryMaxBytes);
}

async function run(nodeCount: number) {
  const db = await startDynamoDb(`nlc-mcost-${nodeCount}`);
  let wall = t0;
  const stores = db.stores({ clock: { now: () => wall }, settings: { writeConcurrency: 32 } });
  const nodes = Array.from({ length: nodeCount }, (_, i) => eksNode(i));
  const fake = new FakeCluster(nodes);
  const execute = <E extends Effect>(effect: E): Promise<ResultOf<E>> =>
    Promise.resolve(fake.execute(effect) as ResultOf<E>);
  const unused = (): Promise<never> => Promise.reject(new Error('unused in a healthy cluster'));
  const cluster = {
    execute,
    getNode: (name: string) => execute({ kind: 'getNode', node: name }),
    addNodeLabels: unused,
    listPodsOnNode: unused,
    deletePodForTaintEviction: unused,
    // No leader election in the bench: every term is taken as it comes (one read per term).
    getLeaderLease: () =>
      Promise.resolve({ ok: false as const, reason: 'NotFound' as const, message: 'no leader election' }),
    // Read only for a node about to be marked Unknown: never in a healthy cluster.
    getNodeLeaseVersion: unused,
    // Read once an hour for the cluster row (shared/app/clusterVersion.ts): one GET in the bench.
    getServerVersion: () => Promise.resolve({ ok: true as const, value: 'v1.37.0' }),
  } satisfies MonitorDeps['cluster'];
  const observer = new CountingObserver();
  let triggers = 0;
  const deps: MonitorDeps = {
    config,
    stores,
    cluster,
    observer,
    // The functions' clock, on which digests are received (it decides their time: shared/digestClock.ts).
    clock: { now: () => wall },
    triggerDrainer: () => {
      triggers++;
      return Promise.resolve();
    },
  };
  const cache = new Map<string, LoadedState>();

  // Seed the node cache as node-taints does on the first Node Changed events.
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < nodes.length) {
        const node = nodes[next++];
        if (node !== undefined) await stores.nodes.putNode(config.cluster, node);
      }
    }),
  );

  const digestAt = steadyDigests(config.cluster, nodes);
  const rows: Row[] = [];
  const step = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
    const before = stores.capacity.snapshot();
    let heapPeakMiB = heapUsedMiB();
    const sampler = setInterval(() => {
      heapPeakMiB = Math.max(heapPeakMiB, heapUsedMiB());
    }, 10);
    const started = performance.now();
    const cpu = process.cpuUsage();
    const result = await fn();
    const spent = process.cpuUsage(cpu);
    clearInterval(sampler);
    const heapMiB = heapUsedMiB();
    rows.push({
      label,
      used: CapacityCounter.difference(stores.capacity.snapshot(), before),
      wallMs: performance.now() - started,
      cpuMs: (spent.user + spent.system) / 1000,
      heapMiB,
      heapPeakMiB: Math.max(heapPeakMiB, heapMiB),
    });
    return result;
  };
  const waiting = (outcome: MonitorOutcome): number =>
    outcome.kind === 'processed' ? (outcome.summary.waitingToRegister ?? 0) : 0;

  let now = t0;
  let outcome = await step(FIRST_PASS, () => runMonitorPass(deps, digestAt(now), { cache }));
  // The nodes the first pass left wait for the next digests.
  while (waiting(outcome) > 0) {
    now += 5_000;
    wall = now;
    outcome = await step(REGISTRATION_PASS, () => runMonitorPass(deps, digestAt(now), { cache }));
  }
  // A digest too large for one entry is sent in parts, each its own event and invocation
  // (docs/events.md#size): the warm passes get them as the relay sends them, part by part.
  // As the relay fits it (relay/digestLoop.ts): plain, packed, a shard of the fingerprints, or parts.
  const detailMaxBytes = entryMaxBytesFor(nodeCount) - DigestEntryOverheadBytes;
  const inParts = async (digest: HeartbeatDigest, options: RunMonitorPassOptions): Promise<void> => {
    for (const part of fitDigest(digest, detailMaxBytes).parts) await runMonitorPass(deps, part, options);
  };
  // Settle: zones become Normal, and the seeding leaves refresh's 60 s window.
  for (let i = 0; i < 14; i++) {
    now += 5_000;
    wall = now;
    await runMonitorPass(deps, digestAt(now), { cache });
  }
  const requestsBefore = fake.requestCount + fake.effects.length;
  observer.reset();
  triggers = 0;
  let lastDigest = digestAt(now);
  for (let i = 0; i < PASSES_PER_MINUTE; i++) {
    now += QUIET_PERIOD_MS;
    wall = now;
    lastDigest = { ...digestAt(now), quietPeriodMs: QUIET_PERIOD_MS };
    const digest = lastDigest;
    await step('steady pass, warm', () => inParts(digest, { cache }));
  }
  const monitorLogBytesPerMinute = observer.bytesWithMetrics(PASSES_PER_MINUTE);
  const monitorLogBreakdown = observer.breakdown();
  const steadyTriggers = triggers;
  const apiCalls = fake.requestCount + fake.effects.length - requestsBefore;
  now += QUIET_PERIOD_MS;
  wall = now;
  // The heap with the warm instance's state (the cache) and without: what a warm instance keeps. The
  // rest (dynalite's tables, the fake API's nodes, the bench's own) is the base the cold pass adds to.
  const withWarmState = collectedHeapMiB();
  cache.clear(); // the warm instance is done with: nothing after this step reads it
  const base = collectedHeapMiB();
  // A new function instance: it loads everything for the digest's first part and keeps it for the
  // others (its own cache, empty at first).
  await step('steady pass, cold (full load)', () =>
    inParts({ ...digestAt(now), quietPeriodMs: QUIET_PERIOD_MS }, { cache: new Map() }),
  );
  const coldPeakMiB = rows.at(-1)?.heapPeakMiB ?? Number.NaN;
  const monitorHeap = {
    /** The state a warm instance keeps between passes (its LoadedState). */
    warmStateMiB: withWarmState - base,
    /**
     * A cold instance's peak over what the process held without it: the full load's items, the state
     * built from them and the pass. An upper bound: dynalite's own allocations answering are in it.
     */
    coldPassPeakMiB: coldPeakMiB - base,
  };
  observer.reset();
  await step('drainer run, nothing queued', () =>
    runDrainer(
      {
        config,
        stores,
        cluster: {
          ...cluster,
          deletePodForTaintEviction: () => Promise.reject(new Error('unused')),
          listPodsOnNode: () => Promise.reject(new Error('unused')),
        },
        observer,
      },
      wall,
    ),
  );
  const drainerLogBytes = observer.bytesWithMetrics(1);
  observer.reset();
  await step('scheduled check', () => runScheduledCheck(deps, wall));
  const checkLogBytes = observer.bytesWithMetrics(1);
  await db.stop();

  const parts = fitDigest(lastDigest, detailMaxBytes).parts;
  const entryBytes = parts.map(
    (p) => utf8Bytes(RelaySource) + utf8Bytes(HeartbeatDigestDetailType) + heartbeatDigestBytes(p),
  );
  return {
    rows,
    apiCalls,
    triggers: steadyTriggers,
    monitorLogBytesPerMinute,
    monitorLogBreakdown,
    drainerLogBytes,
    checkLogBytes,
    entryBytes,
    monitorHeap,
  };
}

const FIRST_PASS = `first pass (registers up to ${MaxRegistrationsPerPass.toLocaleString('en-US')} nodes)`;
const REGISTRATION_PASS = 'registration pass';

/** A step's figures as --json prints them. */
const rowJson = (row: Row) => ({
  label: row.label,
  readUnits: row.used.readUnits,
  billedReadUnits: billedReads(row.used),
  writeUnits: row.used.writeUnits,
  requests: row.used.requests,
  wallMs: row.wallMs,
  cpuMs: row.cpuMs,
  lambdaMs: billedMs(row),
  heapMiB: row.heapMiB,
  heapPeakMiB: row.heapPeakMiB,
});

/** Every figure of one size: what the Markdown prints, and what --json prints. */
function summarize(nodeCount: number, r: Awaited<ReturnType<typeof run>>) {
  const warm = r.rows.filter((row) => row.label === 'steady pass, warm');
  const cold = r.rows.find((row) => row.label.startsWith('steady pass, cold'));
  const drainer = r.rows.find((row) => row.label.startsWith('drainer'));
  const check = r.rows.find((row) => row.label === 'scheduled check');
  const avg = (f: (row: Row) => number, xs: readonly Row[] = warm): number =>
    xs.reduce((a, x) => a + f(x), 0) / xs.length;
  const registering = r.rows.filter((row) => row.label === FIRST_PASS || row.label === REGISTRATION_PASS);
  const rest = registering.slice(1);
  const slowest = rest.length > 0 ? rest.reduce((a, b) => (b.wallMs > a.wallMs ? b : a)) : undefined;
  const sum = (f: (row: Row) => number): number => registering.reduce((a, x) => a + f(x), 0);
  const sumOps = (xs: readonly Row[]): Record<string, number> => {
    const ops: Record<string, number> = {};
    for (const x of xs)
      for (const [op, n] of Object.entries(x.used.byOperation)) ops[op] = (ops[op] ?? 0) + n;
    return ops;
  };
  const tables = new Map<string, { r: number; w: number; n: number }>();
  for (const x of warm)
    for (const [t, c] of Object.entries(x.used.byTable)) {
      const e = tables.get(t) ?? { r: 0, w: 0, n: 0 };
      e.r += c.readUnits;
      e.w += c.writeUnits;
      e.n += c.requests;
      tables.set(t, e);
    }

  // Per month.
  const passes = PASSES_PER_MINUTE * MINUTES_PER_MONTH;
  const entriesPerMinute = PASSES_PER_MINUTE * r.entryBytes.length;
  const bytesPerMinute = PASSES_PER_MINUTE * r.entryBytes.reduce((a, b) => a + b, 0);
  const chunksPerDigest = r.entryBytes.reduce((a, b) => a + Math.ceil(b / CHUNK), 0);
  const putEvents = (passes * chunksPerDigest * PRICE.eventBridgeEventPerMillion) / 1e6;
  const fullLoadsPerMonth = 2 * 24 * 30; // the hourly safety net plus, say, one cold start an hour
  const rru =
    passes * avg((x) => billedReads(x.used)) +
    fullLoadsPerMonth * (cold === undefined ? 0 : billedReads(cold.used)) +
    2 * MINUTES_PER_MONTH * (drainer === undefined ? 0 : billedReads(drainer.used)) + // its schedule + the check's invoke
    MINUTES_PER_MONTH * (check === undefined ? 0 : billedReads(check.used));
  // A cold pass writes what a warm one does (the parts of a split digest included): counted with them.
  const wru = passes * avg((x) => x.used.writeUnits);
  const dynamo = (rru * PRICE.dynamoReadUnitPerMillion + wru * PRICE.dynamoWriteUnitPerMillion) / 1e6;
  // One invocation per part of a digest (each part is its own event), and the schedule's check.
  const monitorInvocations = passes * r.entryBytes.length + MINUTES_PER_MONTH;
  const drainerInvocations = 2 * MINUTES_PER_MONTH;
  // Lambda duration: CPU time plus a DynamoDB round trip per request (billedMs).
  const gbSeconds =
    ((passes * avg(billedMs)) / 1000) * MONITOR_MEMORY_GB +
    ((MINUTES_PER_MONTH * (check === undefined ? 0 : billedMs(check))) / 1000) * MONITOR_MEMORY_GB +
    ((drainerInvocations * (drainer === undefined ? 0 : billedMs(drainer))) / 1000) * DRAINER_MEMORY_GB;
  const lambda =
    ((monitorInvocations + drainerInvocations) * PRICE.lambdaRequestPerMillion) / 1e6 +
    gbSeconds * PRICE.lambdaArmGbSecond;
  const logBytes =
    r.monitorLogBytesPerMinute * MINUTES_PER_MONTH +
    r.checkLogBytes * MINUTES_PER_MONTH +
    r.drainerLogBytes * drainerInvocations +
    PLATFORM_LOG_BYTES_PER_INVOCATION * (monitorInvocations + drainerInvocations);
  const logs = (logBytes / 1024 ** 3) * PRICE.logsIngestedPerGb;
  const total = putEvents + dynamo + lambda + logs;
  const zoneMetrics = 3 * 4; // zone_health, zone_size, unhealthy_nodes, evictions_total per zone
  const globalMetrics = 5;
  return {
    nodes: nodeCount,
    warm,
    cold,
    drainer,
    check,
    registering,
    slowestRegistration: slowest,
    registeringTotal: {
      passes: registering.length,
      digestSeconds: (registering.length - 1) * 5,
      readUnits: sum((x) => x.used.readUnits),
      billedReadUnits: sum((x) => billedReads(x.used)),
      writeUnits: sum((x) => x.used.writeUnits),
      requests: sum((x) => x.used.requests),
      wallMs: sum((x) => x.wallMs),
      cpuMs: sum((x) => x.cpuMs),
      lambdaMs: sum(billedMs),
    },
    warmMean: {
      passes: warm.length,
      readUnits: avg((x) => x.used.readUnits),
      billedReadUnits: avg((x) => billedReads(x.used)),
      writeUnits: avg((x) => x.used.writeUnits),
      requests: avg((x) => x.used.requests),
      wallMs: avg((x) => x.wallMs),
      cpuMs: avg((x) => x.cpuMs),
      lambdaMs: avg(billedMs),
      heapMiBMax: Math.max(...warm.map((x) => x.heapMiB)),
    },
    apiCalls: r.apiCalls,
    drainerTriggers: r.triggers,
    monitorHeap: r.monitorHeap,
    warmDynamoDb: {
      byOperation: Object.fromEntries(Object.entries(sumOps(warm)).filter(([, n]) => n > 0)),
      byTable: Object.fromEntries(
        [...tables]
          .filter(([, e]) => e.n > 0)
          .map(([t, e]) => [t.replace(/^.*-/, ''), { requests: e.n, readUnits: e.r, writeUnits: e.w }]),
      ),
    },
    monitorLog: { bytesPerMinute: r.monitorLogBytesPerMinute, breakdown: r.monitorLogBreakdown },
    putEvents: {
      entriesPerMinute,
      entryBytes: r.entryBytes,
      bytesPerMinute,
      chunksPerDigest,
    },
    monthly: {
      putEventsChunks: passes * chunksPerDigest,
      putEventsUsd: putEvents,
      readUnits: rru,
      writeUnits: wru,
      dynamoDbUsd: dynamo,
      lambdaRequests: monitorInvocations + drainerInvocations,
      lambdaGbSeconds: gbSeconds,
      lambdaUsd: lambda,
      logBytes,
      logsUsd: logs,
      totalUsd: total,
      usdPerThousandNodes: total / (nodeCount / 1000),
    },
    customMetrics: {
      count: zoneMetrics + globalMetrics,
      usdPerMonth: (zoneMetrics + globalMetrics) * PRICE.customMetricPerMonth,
    },
  };
}

const fmt = (n: number, digits = 2): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function printMarkdown(s: ReturnType<typeof summarize>): void {
  const { warm, registering } = s;
  console.log(`\n## ${s.nodes.toLocaleString('en-US')} healthy nodes, 3 zones, steady state`);
  console.log(
    '| step | RRU measured | RRU billed (≤) | WRU | requests | wall ms (this machine) | CPU ms | Lambda ms (CPU + 5 ms a request) |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  const line = (row: Row): void => {
    console.log(
      `| ${row.label} | ${fmt(row.used.readUnits, 1)} | ${fmt(billedReads(row.used), 1)} | ${fmt(row.used.writeUnits, 1)} | ${row.used.requests} | ${fmt(row.wallMs, 0)} | ${fmt(row.cpuMs, 0)} | ${fmt(billedMs(row), 0)} |`,
    );
  };
  for (const row of registering.slice(0, 1)) line(row);
  if (s.slowestRegistration !== undefined) {
    const t = s.registeringTotal;
    line({
      ...s.slowestRegistration,
      label: `slowest of the ${registering.length - 1} registration passes after it`,
    });
    console.log(
      `| every registering pass (${t.passes}, ${t.digestSeconds} s of digests) | ${fmt(t.readUnits, 1)} | ${fmt(
        t.billedReadUnits,
        1,
      )} | ${fmt(t.writeUnits, 1)} | ${t.requests} | ${fmt(t.wallMs, 0)} | ${fmt(t.cpuMs, 0)} | ${fmt(t.lambdaMs, 0)} |`,
    );
  }
  for (const row of [s.cold, s.drainer, s.check]) if (row !== undefined) line(row);
  for (const row of warm.slice(0, 1)) line(row);
  const m = s.warmMean;
  console.log(
    `| steady pass, warm (mean of ${m.passes}) | ${fmt(m.readUnits, 1)} | ${fmt(m.billedReadUnits, 1)} | ${fmt(
      m.writeUnits,
      1,
    )} | ${fmt(m.requests, 1)} | ${fmt(m.wallMs, 0)} | ${fmt(m.cpuMs, 0)} | ${fmt(m.lambdaMs, 0)} |`,
  );
  console.log(
    `API calls in steady state: ${s.apiCalls}; drainer triggers after passes: ${s.drainerTriggers}`,
  );
  console.log(
    `DynamoDB over the ${warm.length} warm passes: ${Object.entries(s.warmDynamoDb.byOperation)
      .map(([op, n]) => `${op} ${n}`)
      .join(', ')}; by table: ${Object.entries(s.warmDynamoDb.byTable)
      .map(([t, e]) => `${t} ${e.requests} req/${fmt(e.readUnits, 1)} RRU/${fmt(e.writeUnits, 1)} WRU`)
      .join(', ')}`,
  );
  console.log(`Monitor log per minute of warm passes: ${s.monitorLog.breakdown}`);
  console.log(
    `Monitor heap: a warm instance keeps ${fmt(s.monitorHeap.warmStateMiB, 1)} MiB of state; a cold pass peaks at ${fmt(
      s.monitorHeap.coldPassPeakMiB,
      1,
    )} MiB over the rest of this process (dynalite's answers included: an upper bound)`,
  );
  const p = s.putEvents;
  const month = s.monthly;
  console.log(
    `PutEvents: ${p.entriesPerMinute} entries/min (${p.entryBytes.length} part(s) of ${p.entryBytes.map((b) => b.toLocaleString('en-US')).join(', ')} bytes), ` +
      `${fmt(p.bytesPerMinute / 1024, 1)} KiB/min, ${p.chunksPerDigest} billed 64 KB chunk(s) per digest`,
  );
  console.log('| component (per month) | quantity | US$ |');
  console.log('|---|---|---|');
  console.log(
    `| PutEvents (relay → bus) | ${fmt(month.putEventsChunks / 1e6, 3)} M chunks | ${fmt(month.putEventsUsd)} |`,
  );
  console.log(
    `| DynamoDB | ${fmt(month.readUnits / 1e6, 3)} M RRU + ${fmt(month.writeUnits / 1e6, 3)} M WRU | ${fmt(month.dynamoDbUsd)} |`,
  );
  console.log(
    `| Lambda (monitor ${MONITOR_MEMORY_GB * 1024} MB, drainer ${DRAINER_MEMORY_GB * 1024} MB, arm64) | ${fmt(month.lambdaRequests / 1e6, 3)} M requests, ${fmt(month.lambdaGbSeconds, 0)} GB-s | ${fmt(month.lambdaUsd)} |`,
  );
  console.log(
    `| CloudWatch Logs ingestion (incl. EMF) | ${fmt(month.logBytes / 1024 ** 3, 3)} GB | ${fmt(month.logsUsd)} |`,
  );
  console.log(
    `| **total** | | **${fmt(month.totalUsd)}** (US$${fmt(month.usdPerThousandNodes)} per 1,000 nodes) |`,
  );
  console.log(
    `CloudWatch custom metrics (fixed, separate): 3 zones × 4 + 5 = ${s.customMetrics.count} metrics, US$${fmt(s.customMetrics.usdPerMonth)} a month`,
  );
}

const args = process.argv.slice(2);
const json = args.includes('--json');
const entryFlag = args.indexOf('--entry-max-bytes');
const entryMaxBytesOption = entryFlag < 0 ? undefined : Number(args[entryFlag + 1]);
if (
  entryMaxBytesOption !== undefined &&
  !(Number.isInteger(entryMaxBytesOption) && entryMaxBytesOption >= 65_536)
) {
  throw new Error(
    `--entry-max-bytes: expected an integer of at least 65536, got ${String(args[entryFlag + 1])}`,
  );
}
const sizes = args
  .filter((_, i) => entryFlag < 0 || (i !== entryFlag && i !== entryFlag + 1))
  .map(Number)
  .filter((n) => n > 0);
if (!json) console.log('Prices (us-east-1, list):', JSON.stringify(PRICE));
const results = [];
for (const nodeCount of sizes.length > 0 ? sizes : [1_000, 5_000]) {
  const s = summarize(nodeCount, await run(nodeCount));
  if (!json) {
    printMarkdown(s);
    continue;
  }
  const { warm, cold, drainer, check, registering, slowestRegistration, ...figures } = s;
  results.push({
    ...figures,
    firstPass: registering[0] === undefined ? null : rowJson(registering[0]),
    slowestRegistrationPass: slowestRegistration === undefined ? null : rowJson(slowestRegistration),
    firstWarmPass: warm[0] === undefined ? null : rowJson(warm[0]),
    coldPass: cold === undefined ? null : rowJson(cold),
    drainerRun: drainer === undefined ? null : rowJson(drainer),
    scheduledCheck: check === undefined ? null : rowJson(check),
    steps: [...registering, ...warm, cold, drainer, check].flatMap((row) =>
      row === undefined ? [] : [rowJson(row)],
    ),
  });
}
// One document for every size (bench/scale.ts reads it): the Markdown's figures, unrounded.
if (json) console.log(JSON.stringify({ prices: PRICE, sizes: results }, null, 2));
