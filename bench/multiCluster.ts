// One deployment serving many clusters: monitor passes of different clusters overlap, passes of one
// cluster never do, and a cluster's pass takes as long as with one cluster. Runs the real monitor
// through the real dispatch (shared/app/dispatch.ts: the pass lease, then shared/app/monitor.ts)
// against the real DynamoDB stores on dynalite, every cluster in the same tables:
//   npm run bench:multi-cluster -- [clusters ...]     (default: 1 10 50; 1,000 nodes each, --nodes N)
//   (--json: one JSON document of the same figures instead of the table, for bench/scale.ts)
//
// For each cluster count: seed every cluster's node cache (as node-taints would), register and settle
// each cluster, then ROUNDS rounds of one Heartbeat Digest per cluster (5 s of virtual time apart):
//   - serial: the clusters' passes one after another (one invocation at a time): each pass alone, with
//     every other cluster's state in the same tables;
//   - parallel: every cluster's digest at once, N concurrent "invocations", each with its cluster's warm
//     state (as Lambda runs them, one container each), plus a duplicate delivery of each digest at the
//     same moment: the pass lease lets exactly one of the two pass.
// Reported: per-cluster pass time percentiles, the round's wall time, the most passes running at once,
// how many pairs of passes of different clusters overlapped and of the same cluster (must be 0), and
// how many deliveries found their cluster's lease held. Numbers are reported, never asserted.
//
// Caveat: here every "invocation" shares one Node.js process and its event loop with dynalite, on a
// shared 2-core machine; in Lambda each has its own container and CPU. The parallel column measures
// that overlap happens (nothing serializes clusters), not Lambda's per-invocation speed: the serial
// column is the per-cluster timing to compare with one cluster.
import { performance } from 'node:perf_hooks';
import { Dispatch, newWarmState, type FunctionDeps, type WarmState } from '../shared/app/dispatch.js';
import { runMonitorPass, type MonitorDeps } from '../shared/app/monitor.js';
import { UPSTREAM_DEFAULTS } from '../shared/config.js';
import type { Effect, ResultOf } from '../shared/domain/effects.js';
import type { Node } from '../shared/domain/types.js';
import { HeartbeatDigestDetailType, type HeartbeatDigest } from '../shared/events.js';
import type { LogFields, Observer } from '../shared/ports/observer.js';
import type { DynamoDbStores } from '../shared/adapters/dynamodb/index.js';
import { startDynamoDb } from '../test/helpers/dynamodb.js';
import { FakeCluster } from '../test/helpers/fakeCluster.js';
import { eksNode, steadyDigests, t0 } from './eksNodes.js';

const ROUNDS = 6;
const PERIOD = 5_000;
/** The monitor's Lambda timeout: a lease runs until the invocation's deadline. */
const REMAINING_MS = 60_000;

const args = process.argv.slice(2);
const nodesFlag = args.indexOf('--nodes');
const NODES = nodesFlag >= 0 ? Number(args[nodesFlag + 1]) : 1_000;
const counts = args
  .filter((_, i) => nodesFlag < 0 || (i !== nodesFlag && i !== nodesFlag + 1))
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0);

/** Logs nothing; keeps who held the lease each time a delivery found it held. */
class LeaseObserver implements Observer {
  readonly heldBy: string[] = [];
  debug(): void {}
  info(message: string, fields?: LogFields): void {
    if (message.startsWith('a pass of this cluster is running') && typeof fields?.holder === 'string')
      this.heldBy.push(fields.holder);
  }
  warn(): void {}
  error(): void {}
  metric(): void {}
}

interface ClusterUnderTest {
  readonly name: string;
  readonly deps: FunctionDeps & MonitorDeps;
  readonly warm: WarmState;
  readonly observer: LeaseObserver;
  readonly digestAt: (now: number) => HeartbeatDigest;
}

interface Pass {
  readonly cluster: string;
  readonly id: string;
  readonly start: number;
  readonly end: number;
}

function fakeClusterPort(nodes: readonly Node[]): MonitorDeps['cluster'] & FunctionDeps['cluster'] {
  const fake = new FakeCluster(nodes);
  const execute = <E extends Effect>(effect: E): Promise<ResultOf<E>> =>
    Promise.resolve(fake.execute(effect) as ResultOf<E>);
  const unused = (): Promise<never> => Promise.reject(new Error('unused in a healthy cluster'));
  return {
    execute,
    getNode: (name: string) => execute({ kind: 'getNode', node: name }),
    addNodeLabels: unused,
    listPodsOnNode: unused,
    deletePodForTaintEviction: unused,
    swapNodeTaints: unused,
    listNodes: unused,
    getLeaderLease: () =>
      Promise.resolve({ ok: false as const, reason: 'NotFound' as const, message: 'no leader election' }),
    getNodeLeaseVersion: unused,
    getServerVersion: () => Promise.resolve({ ok: true as const, value: 'v1.37.0' }),
  } as unknown as MonitorDeps['cluster'] & FunctionDeps['cluster'];
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;

/** Pairs of passes (that ran) overlapping in time: of different clusters, and of the same cluster. */
function overlaps(ran: readonly Pass[]): { different: number; same: number; maxConcurrent: number } {
  let different = 0;
  let same = 0;
  for (let i = 0; i < ran.length; i++) {
    for (let j = i + 1; j < ran.length; j++) {
      const a = ran[i];
      const b = ran[j];
      if (a === undefined || b === undefined || a.start >= b.end || b.start >= a.end) continue;
      if (a.cluster === b.cluster) same++;
      else different++;
    }
  }
  const edges = ran.flatMap((p) => [
    { at: p.start, d: 1 },
    { at: p.end, d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let current = 0;
  let maxConcurrent = 0;
  for (const e of edges) {
    current += e.d;
    maxConcurrent = Math.max(maxConcurrent, current);
  }
  return { different, same, maxConcurrent };
}

async function seed(stores: DynamoDbStores, cluster: string, nodes: readonly Node[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < nodes.length) {
        const node = nodes[next++];
        if (node !== undefined) await stores.nodes.putNode(cluster, node);
      }
    }),
  );
}

async function run(clusterCount: number) {
  const db = await startDynamoDb(`nlc-multi-${clusterCount}`);
  let wall = t0;
  const clock = { now: () => wall };
  const stores = db.stores({ clock, settings: { writeConcurrency: 32 } });
  const nodes = Array.from({ length: NODES }, (_, i) => eksNode(i));
  const clusters: ClusterUnderTest[] = [];
  const seedStarted = performance.now();
  for (let c = 0; c < clusterCount; c++) {
    const name = `cluster-${String(c).padStart(2, '0')}`;
    await seed(stores, name, nodes);
    const observer = new LeaseObserver();
    clusters.push({
      observer,
      name,
      deps: {
        config: { ...UPSTREAM_DEFAULTS, cluster: name },
        stores,
        cluster: fakeClusterPort(nodes),
        observer,
        clock,
        triggerDrainer: () => Promise.resolve(),
      },
      warm: newWarmState(),
      digestAt: steadyDigests(name, nodes),
    });
  }
  const seedMs = performance.now() - seedStarted;

  let now = t0;
  /** Deliveries that threw (Lambda would retry them): counted and reported, not fatal to the bench. */
  const failures: string[] = [];
  /** One delivery of `digest` through the monitor's dispatch, timed. */
  const deliver = async (c: ClusterUnderTest, digest: HeartbeatDigest, id: string): Promise<Pass> => {
    const start = performance.now();
    try {
      await Dispatch.monitorNodeHealth(
        { deps: c.deps, warm: c.warm, remainingMs: () => REMAINING_MS, invocationId: id },
        { kind: 'event', event: { 'detail-type': HeartbeatDigestDetailType, detail: digest } },
      );
    } catch (error) {
      failures.push(`${c.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return { cluster: c.name, id, start, end: performance.now() };
  };
  // Register and settle every cluster (first pass, then zones to Normal), as the steady state.
  for (let i = 0; i < 3; i++) {
    for (const c of clusters) await runMonitorPass(c.deps, c.digestAt(now), { cache: c.warm.cache });
    now += PERIOD;
    wall = now;
  }

  const serial: number[] = [];
  /** CPU time of the process during each serial pass (dynalite's included): what other processes' load leaves alone. */
  const serialCpu: number[] = [];
  const parallel: number[] = [];
  const rounds: { wallMs: number; different: number; same: number; maxConcurrent: number }[] = [];
  let busy = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // Serial: one invocation at a time.
    for (const c of clusters) {
      const cpu = process.cpuUsage();
      const p = await deliver(c, c.digestAt(now), `serial-${round}-${c.name}`);
      const used = process.cpuUsage(cpu);
      serial.push(p.end - p.start);
      serialCpu.push((used.user + used.system) / 1000);
    }
    now += PERIOD;
    wall = now;
    // Parallel: every cluster at once, each digest delivered twice at the same moment.
    const held = new Map(clusters.map((c) => [c.name, c.observer.heldBy.length]));
    const started = performance.now();
    const passes = await Promise.all(
      clusters.flatMap((c) => {
        const digest = c.digestAt(now);
        return [deliver(c, digest, `a-${round}-${c.name}`), deliver(c, digest, `b-${round}-${c.name}`)];
      }),
    );
    const wallMs = performance.now() - started;
    // A delivery that found the lease held names the holder: the other delivery is the one that passed.
    const ran: Pass[] = [];
    for (const c of clusters) {
      const refusals = c.observer.heldBy.slice(held.get(c.name) ?? 0);
      busy += refusals.length;
      const mine = passes.filter((p) => p.cluster === c.name);
      const passed = refusals.length === 0 ? mine : mine.filter((p) => refusals.includes(p.id));
      ran.push(...passed);
      // Without a refusal the two ran one after the other, and the second was a stale no-op.
      parallel.push(Math.max(...passed.map((p) => p.end - p.start)));
    }
    rounds.push({ wallMs, ...overlaps(ran) });
    now += PERIOD;
    wall = now;
  }
  await db.stop();
  serial.sort((a, b) => a - b);
  serialCpu.sort((a, b) => a - b);
  parallel.sort((a, b) => a - b);
  return {
    clusterCount,
    failures,
    seedMs,
    serial,
    serialCpu,
    parallel,
    rounds,
    busy,
    deliveries: ROUNDS * clusterCount * 2,
  };
}

const fmt = (n: number): string => n.toFixed(1);
/** One cluster count's figures, as the Markdown row and --json show them. */
function summarize(r: Awaited<ReturnType<typeof run>>) {
  const s = r.serial;
  const p = r.parallel;
  return {
    clusters: r.clusterCount,
    serialPassMs: { p50: percentile(s, 50), p95: percentile(s, 95), max: percentile(s, 100) },
    serialPassCpuMs: { p50: percentile(r.serialCpu, 50), p95: percentile(r.serialCpu, 95) },
    parallelPassMs: { p50: percentile(p, 50), p95: percentile(p, 95), max: percentile(p, 100) },
    parallelRoundWallMsMean: r.rounds.reduce((a, x) => a + x.wallMs, 0) / r.rounds.length,
    maxConcurrentPasses: Math.max(...r.rounds.map((x) => x.maxConcurrent)),
    overlappingPairs: {
      differentClusters: r.rounds.reduce((a, x) => a + x.different, 0),
      sameCluster: r.rounds.reduce((a, x) => a + x.same, 0),
    },
    refusedByLease: r.busy,
    deliveries: r.deliveries,
    failures: r.failures,
    seedMs: r.seedMs,
  };
}
const json = args.includes('--json');
if (!json) {
  console.log(
    `Monitor passes, ${NODES.toLocaleString('en-US')} nodes per cluster, ${ROUNDS} rounds, one shared set of tables on dynalite`,
  );
  console.log(
    '| clusters | serial pass p50 / p95 / max ms | its CPU p50 / p95 ms | parallel pass p50 / p95 / max ms | parallel round wall ms (mean) | most passes at once | overlapping pairs, different clusters | same cluster | deliveries refused by the lease | deliveries failed (Lambda would retry) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
}
const load = (await import('node:os')).loadavg();
if (!json) console.log(`load average at start: ${load.map((l) => l.toFixed(1)).join(' ')}`);
const results = [];
for (const n of counts.length > 0 ? counts : [1, 10, 50]) {
  const r = summarize(await run(n));
  results.push(r);
  if (json) continue;
  console.log(
    `| ${n} | ${fmt(r.serialPassMs.p50)} / ${fmt(r.serialPassMs.p95)} / ${fmt(r.serialPassMs.max)} | ` +
      `${fmt(r.serialPassCpuMs.p50)} / ${fmt(r.serialPassCpuMs.p95)} | ` +
      `${fmt(r.parallelPassMs.p50)} / ${fmt(r.parallelPassMs.p95)} / ${fmt(r.parallelPassMs.max)} | ${fmt(r.parallelRoundWallMsMean)} | ` +
      `${r.maxConcurrentPasses} | ${r.overlappingPairs.differentClusters} | ${r.overlappingPairs.sameCluster} | ${r.refusedByLease} of ${r.deliveries} | ${r.failures.length} |`,
  );
  for (const failure of r.failures.slice(0, 5)) console.log(`  failed: ${failure}`);
}
// One document for every cluster count (bench/scale.ts reads it): the table's figures, unrounded.
if (json)
  console.log(
    JSON.stringify({ nodesPerCluster: NODES, rounds: ROUNDS, loadAverageAtStart: load, results }, null, 2),
  );
