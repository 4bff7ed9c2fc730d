// A zone failing at once in a large cluster (issue #22): how long until every node of the zone is
// marked Unknown with its pods Ready=False, what each pass costs, and whether the cluster's DynamoDB
// partitions stay inside their limits. The real monitor service (shared/app/monitor.ts) runs against the
// real DynamoDB stores on dynalite; the API server is an in-memory cluster whose requests go through the
// functions' own request throttle (kubeApiQps, kubeApiBurst) on a virtual clock, with a fixed latency
// per request: the API time of a pass is what the throttle and that latency make it, not this
// machine's speed.
//
//   npx tsx bench/massFailure.ts [--nodes 100000] [--failed-fraction 0.333] [--pods-per-node 10]
//                                [--qps 20,100,500] [--latency-ms 5] [--burst-factor 1.5]
//                                [--max-marking-passes N] [--deadline-hours 12] [--json]
//
// Timeline (virtual): every node renews every 10 s; at tFail the first zone's kubelets all stop. A digest
// comes every 5 s; a pass takes its measured compute time plus its API time, and the next pass takes the
// newest digest at or after its end (the monitor is serialized: digests that arrive during a pass wait).
// What node-taints does on each Node Changed (the node cache follows the API) is done between passes and
// reported apart. Reported per qps: passes, time from the zone's grace period expiring to the last node
// marked, per-pass wall, API and DynamoDB figures, the heap's peak, and the Nodes partition's write rate.
import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { cpus, loadavg } from 'node:os';
import { CapacityCounter } from '../shared/adapters/dynamodb/index.js';
import { createRequestThrottle } from '../shared/adapters/kubernetes/resilientHttp.js';
import {
  runMonitorPass,
  passApiBudget,
  type MonitorDeps,
  type MonitorOutcome,
} from '../shared/app/monitor.js';
import { UPSTREAM_DEFAULTS, type ControllerConfig } from '../shared/config.js';
import type { Effect, EffectResult, ResultOf } from '../shared/domain/effects.js';
import { effectRequests } from '../shared/domain/monitorNodeHealth.js';
import { doNoScheduleTaintingPass, taintsAfterSwap } from '../shared/domain/taints.js';
import type { Node, Pod } from '../shared/domain/types.js';
import { nodeFingerprint } from '../shared/nodeFingerprint.js';
import type { LoadedState } from '../shared/ports/stores.js';
import { startDynamoDb } from '../test/helpers/dynamodb.js';
import { benchClusterPort, eksNode, seedNodeCache, steadyDigests, t0 } from './eksNodes.js';
import { markingSpan } from './massFailureSummary.js';

const args = process.argv.slice(2);
const value = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
};
const number = (name: string, fallback: number): number => {
  const v = Number(value(name));
  return value(name) === undefined || !Number.isFinite(v) ? fallback : v;
};
const options = {
  nodes: number('--nodes', 100_000),
  failedFraction: number('--failed-fraction', 1 / 3),
  podsPerNode: number('--pods-per-node', 10),
  qps: (value('--qps') ?? '20,100,500').split(',').map(Number),
  latencyMs: number('--latency-ms', 5),
  burstFactor: number('--burst-factor', 1.5),
  /** Stop after this many marking passes (and skip the recovery): per-pass figures of a large cluster. */
  maxMarkingPasses: number('--max-marking-passes', Infinity),
  /** Give up this many virtual hours after the failure: upstream's 20 qps needs about 7 h for 33,333 nodes. */
  deadlineHours: number('--deadline-hours', 12),
  json: args.includes('--json'),
};
const log = (message: string): void => {
  process.stderr.write(`[bench:mass-failure] ${message}\n`);
};
const PERIOD = 5_000;
const PARTITION_WCU = 1_000;

/** The API server: nodes and their pods in memory, every request paced by the functions' throttle. */
class PacedCluster {
  readonly nodes = new Map<string, Node>();
  readonly notReadyPods = new Set<string>();
  readonly changed = new Set<string>();
  /** Virtual milliseconds spent in API calls (throttle waits and latency). */
  apiMs = 0;
  requests = 0;
  private readonly throttle;
  private resourceVersion = 2_000_000;

  constructor(
    nodes: readonly Node[],
    qps: number,
    burst: number,
    private readonly latencyMs: number,
    private readonly podsPerNode: number,
  ) {
    for (const node of nodes) this.nodes.set(node.name, node);
    let virtual = 0;
    this.throttle = createRequestThrottle({
      qps,
      burst,
      now: () => virtual + this.apiMs,
      sleep: (ms) => {
        this.apiMs += ms;
        return Promise.resolve();
      },
    });
    // The throttle's clock runs on between passes too (set by the caller through advance()).
    this.advance = (ms) => {
      virtual += ms;
    };
  }

  readonly advance: (ms: number) => void;

  private async paced(requests: number): Promise<void> {
    for (let i = 0; i < requests; i++) {
      await this.throttle.wait();
      this.apiMs += this.latencyMs;
      this.requests++;
    }
  }

  pods(node: string): Pod[] {
    return Array.from({ length: this.podsPerNode }, (_, k) => {
      const name = `${node.slice(0, 20)}-p${k}`;
      return {
        namespace: 'default',
        name,
        uid: `${node}/${k}`,
        nodeName: node,
        tolerations: [],
        ready: this.notReadyPods.has(`${node}/${k}`) ? 'False' : 'True',
      } satisfies Pod;
    });
  }

  readonly byKind = new Map<string, number>();

  readonly execute = async (effect: Effect): Promise<EffectResult> => {
    await this.paced(effectRequests(effect));
    this.byKind.set(effect.kind, (this.byKind.get(effect.kind) ?? 0) + effectRequests(effect));
    switch (effect.kind) {
      case 'updateNodeStatus': {
        const node = this.nodes.get(effect.node);
        if (node === undefined) return { ok: false, reason: 'NotFound', message: 'not found' };
        const written = {
          ...node,
          conditions: effect.conditions,
          resourceVersion: String(this.resourceVersion++),
        };
        this.nodes.set(node.name, written);
        this.changed.add(node.name);
        return { ok: true, node: written };
      }
      case 'getNode': {
        const node = this.nodes.get(effect.node);
        return node === undefined
          ? { ok: false, reason: 'NotFound', message: 'not found' }
          : { ok: true, value: node };
      }
      case 'listPodsOnNode':
        return { ok: true, value: this.pods(effect.node) };
      case 'markPodsNotReady':
        for (const pod of effect.pods) this.notReadyPods.add(pod.uid);
        return { ok: true };
      case 'recordEvent':
        return { ok: true };
      default:
        throw new Error(`unexpected in a mass failure: ${effect.kind}`);
    }
  };
}

interface PassRow {
  readonly at: number;
  readonly wallMs: number;
  readonly apiMs: number;
  readonly apiRequests: number;
  readonly waitingToMark: number;
  readonly rru: number;
  readonly wru: number;
  readonly nodesWru: number;
  /** Write units per table (each table is one partition per cluster). */
  readonly wruByTable: Readonly<Record<string, number>>;
  readonly requests: number;
  readonly heapMiB: number;
  readonly zones: Readonly<Record<string, string>>;
  /** Nodes whose status this pass wrote. */
  readonly marked: number;
  /** Health rows left for the next commits (healthWritesPerCommit). */
  readonly healthRowsBehind: number;
  /** Zone queue entry changes left for the next commits (queueEntriesPerCommit). */
  readonly queueEntriesBehind: number;
}

/** Recovery passes measured at most (a 33,000-node zone at 200 rows a commit needs 165). */
const MaxRecoveryPasses = 400;

const messages = new Map<string, number>();
async function run(qps: number) {
  const config: ControllerConfig = {
    ...UPSTREAM_DEFAULTS,
    cluster: 'bench',
    kubeApiQps: qps,
    kubeApiBurst: Math.max(1, Math.round(qps * options.burstFactor)),
  };
  const db = await startDynamoDb(`nlc-mass-${qps}`);
  let wall = t0;
  /** performance.now() when the measured pass began: the functions' clock then runs with it. */
  let computeStartedAt: number | undefined;
  const stores = db.stores({ clock: { now: () => wall }, settings: { writeConcurrency: 32 } });
  const nodes = Array.from({ length: options.nodes }, (_, i) => eksNode(i));
  const api = new PacedCluster(
    nodes,
    config.kubeApiQps,
    config.kubeApiBurst,
    options.latencyMs,
    options.podsPerNode,
  );
  const failedZone = nodes[0]?.labels['topology.kubernetes.io/zone'] ?? '';
  const zoneNodes = nodes.filter((n) => n.labels['topology.kubernetes.io/zone'] === failedZone);
  // The first zone's nodes, up to the failed fraction of the cluster (a third: the whole zone).
  const indexOf = new Map(nodes.map((n, i) => [n.name, i]));
  // When the failed zone's kubelets come back (set once the zone is marked).
  const back: { at?: number } = {};
  const failed = new Set(
    zoneNodes.slice(0, Math.round(options.nodes * options.failedFraction)).map((n) => n.name),
  );
  const execute = <E extends Effect>(effect: E): Promise<ResultOf<E>> =>
    api.execute(effect) as Promise<ResultOf<E>>;
  const deps: MonitorDeps = {
    config,
    stores,
    cluster: benchClusterPort(execute, 'in a mass failure'),
    observer: {
      debug() {},
      info: (m: string) => {
        messages.set(m, (messages.get(m) ?? 0) + 1);
      },
      warn: (m: string) => {
        messages.set(m, (messages.get(m) ?? 0) + 1);
      },
      error() {},
      metric() {},
    },
    // The functions' clock runs with the pass's compute, as Lambda's does: what a pass has taken so far
    // (its load) comes off its API budget (passApiBudget).
    clock: { now: () => wall + (computeStartedAt === undefined ? 0 : performance.now() - computeStartedAt) },
    triggerDrainer: () => Promise.resolve(),
  };
  const cache = new Map<string, LoadedState>();
  const seed = (list: readonly Node[]): Promise<void> => seedNodeCache(stores, config.cluster, list);
  const started = performance.now();
  await seed(nodes);
  log(`qps ${qps}: ${options.nodes} nodes seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);

  // Fingerprints as the relay computes them from the API's nodes, recomputed for those that changed.
  const fingerprints = new Map(nodes.map((n) => [n.name, nodeFingerprint(n)]));
  const tFail = t0 + 120_000;
  // The failed nodes' kubelets stop at tFail: their digests keep the last renewal before it.
  const digestAt = steadyDigests(config.cluster, nodes, {
    probe: (name, renewed, i) =>
      failed.has(name) && (back.at === undefined || renewed < back.at)
        ? Math.min(renewed, tFail - ((i * 7919) % 10_000))
        : renewed,
    fingerprints,
  });
  // What node-taints does with each Node Changed (its own function and API client): the NoSchedule
  // taint the new conditions call for (doNoScheduleTaintingPass), and the cache follows the API.
  let nodeTaintsRequests = 0;
  const followApi = async (): Promise<number> => {
    const list = [...api.changed].flatMap((name) => {
      const node = api.nodes.get(name);
      if (node === undefined) return [];
      const swap = doNoScheduleTaintingPass(node);
      if (swap === undefined) return [node];
      nodeTaintsRequests++;
      const tainted = {
        ...node,
        taints: taintsAfterSwap(node.taints, swap.toAdd, swap.toRemove, wall),
        resourceVersion: String(Number(node.resourceVersion) + 1),
      };
      api.nodes.set(name, tainted);
      return [tainted];
    });
    await seed(list);
    for (const node of list) fingerprints.set(node.name, nodeFingerprint(node));
    return list.length;
  };

  // Register every node (not measured here: docs/monitor.md#registration), then settle.
  let now = t0;
  const setup = { ...deps, registrationsPerPass: 20_000, markingLimit: { nodes: 0, requests: 0 } };
  for (;;) {
    wall = now;
    const outcome = await runMonitorPass(setup, digestAt(now), { cache });
    now += PERIOD;
    if (outcome.kind === 'processed' && outcome.summary.waitingToRegister === undefined) break;
  }
  log(`qps ${qps}: registered at ${((performance.now() - started) / 1000).toFixed(0)} s`);
  while (now < tFail) {
    wall = now;
    await runMonitorPass(deps, digestAt(now), { cache });
    now += PERIOD;
  }
  await followApi();
  api.changed.clear();

  const rows: PassRow[] = [];
  let heapPeak = 0;
  let nodeTaintsWru = 0;
  /** One measured pass at `now`, then node-taints' follow-up; the instant the pass ends. */
  const measuredPass = async (into: PassRow[]): Promise<{ end: number; marked: number; row: PassRow }> => {
    wall = now;
    const digest = digestAt(now);
    const before = stores.capacity.snapshot();
    const apiBefore = api.apiMs;
    const requestsBefore = api.requests;
    const t = performance.now();
    computeStartedAt = t;
    const outcome: MonitorOutcome = await runMonitorPass(deps, digest, { cache }).finally(() => {
      computeStartedAt = undefined;
    });
    const wallMs = performance.now() - t;
    const used = CapacityCounter.difference(stores.capacity.snapshot(), before);
    const heap = getHeapStatistics().used_heap_size / 2 ** 20;
    heapPeak = Math.max(heapPeak, heap);
    if (outcome.kind !== 'processed') throw new Error(`pass not processed: ${outcome.kind}`);
    const apiMs = api.apiMs - apiBefore;
    const marked = api.changed.size;
    const row: PassRow = {
      at: now,
      wallMs,
      apiMs,
      apiRequests: api.requests - requestsBefore,
      waitingToMark: outcome.summary.waitingToMark ?? 0,
      rru: used.readUnits,
      wru: used.writeUnits,
      nodesWru: used.byTable[db.tables.nodes]?.writeUnits ?? used.writeUnits,
      wruByTable: Object.fromEntries(
        Object.entries(used.byTable)
          .filter(([, t]) => t.writeUnits > 0)
          .map(([table, t]) => [table, t.writeUnits]),
      ),
      requests: used.requests,
      heapMiB: heap,
      zones: outcome.summary.zones,
      marked,
      healthRowsBehind: outcome.summary.healthRowsBehind ?? 0,
      queueEntriesBehind: outcome.summary.queueEntriesBehind ?? 0,
    };
    into.push(row);
    const cacheBefore = stores.capacity.snapshot();
    // node-taints gets the Node Changed events a moment after the writes.
    wall = now + wallMs + 1_000;
    await followApi();
    nodeTaintsWru += CapacityCounter.difference(stores.capacity.snapshot(), cacheBefore).writeUnits;
    api.changed.clear();
    // The pass ends after its compute and its API time; the next digest is the first at or after that.
    const end = now + wallMs + apiMs;
    api.advance(end - now);
    return { end, marked, row };
  };
  const nextDigest = (end: number): number => Math.max(now + PERIOD, Math.ceil(end / PERIOD) * PERIOD);

  const notMarked = (): number =>
    [...failed].filter(
      (name) => api.nodes.get(name)?.conditions.find((c) => c.type === 'Ready')?.status !== 'Unknown',
    ).length;
  const deadline = tFail + options.deadlineHours * 3_600_000;
  let firstDue: number | undefined;
  let lastMarked: number | undefined;
  while (now < deadline) {
    const { end, marked, row } = await measuredPass(rows);
    if (firstDue === undefined && (marked > 0 || row.waitingToMark > 0)) firstDue = now;
    if (firstDue !== undefined && notMarked() === 0) {
      lastMarked = end;
      break;
    }
    if (rows.filter((r) => r.apiRequests > 0).length >= options.maxMarkingPasses) break;
    now = nextDigest(end);
  }
  const notMarkedAtDeadline = notMarked();

  // A minute later the zone comes back: its kubelets post Ready=True and renew again. Every node's
  // health row changes in the pass that sees it (the write-heavy pass of a mass failure).
  const recovery: PassRow[] = [];
  const result = async () => {
    await db.stop();
    log(`qps ${qps}: API requests by kind ${JSON.stringify(Object.fromEntries(api.byKind))}`);
    log(`log lines ${JSON.stringify(Object.fromEntries(messages))}`);
    return {
      qps,
      config,
      failed: failed.size,
      failedZone,
      rows,
      recovery,
      heapPeak,
      nodeTaintsWru,
      nodeTaintsRequests,
      firstDue,
      lastMarked,
      notMarked: notMarkedAtDeadline,
    };
  };
  // Stopped early (--max-marking-passes): no recovery to measure.
  if (lastMarked === undefined) return result();
  const recoveryDigest = Math.ceil((lastMarked + 60_000) / PERIOD) * PERIOD;
  // Digests go on meanwhile (a longer silence would be an observation gap: every node a fresh probe).
  now = nextDigest(lastMarked);
  while (now < recoveryDigest) now = nextDigest((await measuredPass([])).end);
  now = recoveryDigest;
  back.at = now - 10_000;
  for (const name of failed) {
    const node = api.nodes.get(name);
    const i = indexOf.get(name);
    if (node === undefined || i === undefined) continue;
    const conditions = eksNode(i).conditions.map((c) => ({
      ...c,
      lastHeartbeatTime: now - 5_000,
      ...(c.type === 'Ready' && { lastTransitionTime: now - 5_000 }),
    }));
    api.nodes.set(name, { ...node, conditions, resourceVersion: String(Number(node.resourceVersion) + 1) });
    api.changed.add(name);
  }
  wall = now - 2_000;
  await followApi();
  api.changed.clear();
  // Until every recovered node's health row and queue entry is stored (healthWritesPerCommit and
  // queueEntriesPerCommit a commit), at least 4.
  for (let k = 0; k < MaxRecoveryPasses; k++) {
    const { end, row } = await measuredPass(recovery);
    now = nextDigest(end);
    if (k >= 3 && row.healthRowsBehind === 0 && row.queueEntriesBehind === 0) break;
  }
  return result();
}

/**
 * The table whose writes of a pass share one partition and took the most units: Nodes and Zones are
 * keyed by cluster, EvictionQueue by zone (the bench fails one zone). Decisions are keyed by node, so
 * spread over the table's partitions.
 */
function busiestPartition(row: PassRow): [string, number] {
  const [table, units] = Object.entries(row.wruByTable)
    .filter(([name]) => !name.endsWith('-decisions'))
    .reduce<[string, number]>((a, b) => (b[1] > a[1] ? b : a), ['-', 0]);
  return [table.replace(/^nlc-mass-\d+-/, ''), units];
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const results = [];
for (const qps of options.qps) results.push(await run(qps));
if (options.json) {
  console.log(JSON.stringify({ options, results }, null, 2));
} else {
  console.log(
    `# Mass failure: ${fmt(options.nodes)} nodes in 3 zones, ${fmt(results[0]?.failed ?? 0)} of them silent at once, ${options.podsPerNode} pods each; API latency ${options.latencyMs} ms; ${cpus().length} cores, load ${loadavg()[0]?.toFixed(1)}`,
  );
  console.log(
    '\n| kubeApiQps / burst | pass API budget | marking passes | grace expiry → last node marked | slowest pass (compute + API) | requests per pass | WRU per pass (Nodes table) | Nodes WCU/s at most | node-taints WRU (cache) | heap peak | not marked |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const marking = r.rows.filter((row) => row.apiRequests > 0);
    const slowest = marking.reduce<PassRow | undefined>(
      (a, b) => (a === undefined || b.wallMs + b.apiMs > a.wallMs + a.apiMs ? b : a),
      undefined,
    );
    const wcu = Math.max(
      ...marking.map((row) => row.nodesWru / Math.max(1, (row.wallMs + row.apiMs) / 1000)),
    );
    // Stopped early (--max-marking-passes): the marking rate so far, extrapolated to the whole zone.
    const measured = markingSpan(r);
    const span =
      measured.kind === 'measured'
        ? `${fmt(measured.seconds)} s`
        : measured.kind === 'extrapolated'
          ? `≈ ${fmt(measured.seconds)} s (extrapolated from ${fmt(measured.markedSoFar)} marked)`
          : 'n/a';
    console.log(
      `| ${r.qps} / ${r.config.kubeApiBurst} | ${fmt(passApiBudget(r.config))} | ${marking.length} | ${span} | ${fmt((slowest?.wallMs ?? 0) / 1000, 1)} + ${fmt((slowest?.apiMs ?? 0) / 1000, 1)} s | ${fmt(Math.max(...marking.map((row) => row.apiRequests)))} | ${fmt(Math.max(...marking.map((row) => row.wru)))} (${fmt(Math.max(...marking.map((row) => row.nodesWru)))}) | ${fmt(wcu)} of ${fmt(PARTITION_WCU)} | ${fmt(r.nodeTaintsWru)} | ${fmt(r.heapPeak)} MiB | ${r.notMarked} |`,
    );
  }
}
if (!options.json) {
  console.log(
    '\n| kubeApiQps | recovery pass | wall | WRU (Nodes table) | busiest partition: WRU, WCU/s over the pass | requests | health rows behind | queue entries behind | failed zone after |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const wcu = (row: PassRow): number => row.nodesWru / Math.max(1, (row.wallMs + row.apiMs) / 1000);
    const line = (row: PassRow, k: number): void => {
      const [table, units] = busiestPartition(row);
      console.log(
        `| ${r.qps} | ${k + 1} | ${fmt(row.wallMs / 1000, 1)} s | ${fmt(row.wru)} (${fmt(row.nodesWru)}) | ${table}: ${fmt(units)}, ${fmt(units / Math.max(1, (row.wallMs + row.apiMs) / 1000))} | ${fmt(row.requests)} | ${fmt(row.healthRowsBehind)} | ${fmt(row.queueEntriesBehind)} | ${Object.entries(row.zones).find(([zone]) => zone.endsWith(r.failedZone))?.[1] ?? '-'} |`,
      );
    };
    // The first passes, and the last one when the rows took longer to catch up.
    r.recovery.slice(0, 3).forEach(line);
    const last = r.recovery.at(-1);
    if (r.recovery.length > 3 && last !== undefined) line(last, r.recovery.length - 1);
    if (r.recovery.length > 0) {
      const lastRow = r.recovery.at(-1);
      const behind = (lastRow?.healthRowsBehind ?? 0) + (lastRow?.queueEntriesBehind ?? 0);
      console.log(
        `\nRecovery at qps ${r.qps}: ${r.recovery.length} passes${behind > 0 ? ` (${fmt(behind)} rows still behind)` : ' until every health row and queue entry is stored'}; at most ${fmt(Math.max(...r.recovery.map((x) => x.nodesWru)))} WRU and ${fmt(Math.max(...r.recovery.map(wcu)))} WCU/s a pass on the Nodes partition, at most ${fmt(Math.max(...r.recovery.map((x) => busiestPartition(x)[1])))} WRU a pass on any one partition.`,
      );
    }
  }
}
