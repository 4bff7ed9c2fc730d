// A seeded local stack for the CLI tests: dynalite on loopback with the state tables, filled by the
// real controller passes over a fake cluster and committed with the real DynamoDB stores, the way the
// functions write them:
// - monitorNodeHealth every 5 s (a digest each), driven through the DecidingExecutor (source
//   `monitor`), so the Decisions trail is the one the monitor function leaves; queueing decisions are
//   recorded as `enqueue` (docs/state.md, "Decisions");
// - doNoExecuteTaintingPass after each monitor pass (source `drainer`);
// - the taint eviction controller's handleNodeUpdate on the tainted node, its schedules added to
//   PodEvictions;
// - the node cache as node-taints stores it (putNode), then one ControllerStateStore commit.
//
// The seed emulates v1.33 (emulationVersion), where the NoExecute taint is queued one pass after the
// Unknown mark: two instants in the trail, so the CLI's ordering and verdicts have something to tell.
//
// The story: zone region1:zone-a has a-1 … a-4, zone-b has b-1 and b-2 (b-2 excluded from disruption
// checks). a-1 and a-2 stop renewing at t0. At t0+55s the monitor marks them Ready=Unknown; at t0+60s
// it queues them, and the drainer taints a-1 with the zone's one token; a-2 waits for the next token
// (0.01 qps: 100 s), keeping its place and times. The last digest is at t0+70s.
import type { ControllerConfig } from '../../../shared/config.js';
import { DecidingExecutor } from '../../../shared/app/decisions.js';
import { emptyControllerState, type ControllerState } from '../../../shared/domain/controllerState.js';
import { driveAsync, type Effect, type ResultOf } from '../../../shared/domain/effects.js';
import { monitorNodeHealth, type MonitorPassResult } from '../../../shared/domain/monitorNodeHealth.js';
import { doNoExecuteTaintingPass } from '../../../shared/domain/taintBasedEviction.js';
import { handleNodeUpdate } from '../../../shared/domain/taintEviction.js';
import type { Lease, Pod } from '../../../shared/domain/types.js';
import { formatZoneKey } from '../../../shared/domain/zones.js';
import type { StateStores } from '../../../shared/ports/stores.js';
import { testConfig } from '../../helpers/controllerHarness.js';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';
import { FakeCluster, newNode, newPod, ready, t, zoneLabels } from '../../helpers/fakeCluster.js';

export const CLUSTER = 'prod';
export const PREFIX = 'nlc-cli';
export const t0 = t('2026-01-29T09:00:00Z');
/** The last digest's observedAt. */
export const lastObservedAt = t0 + 70_000;
/** When a-1 and a-2 entered zone-a's queue; a-2 keeps that place while it waits. */
export const queuedAt = t0 + 60_000;
export const dead: ReadonlySet<string> = new Set(['a-1', 'a-2']);
export const iso = (ms: number): string => new Date(ms).toISOString();

const config: ControllerConfig = {
  ...testConfig,
  emulationVersion: '1.33',
  cluster: CLUSTER,
  nodeEvictionRate: 0.01,
  secondaryNodeEvictionRate: 0.001,
  largeClusterSizeThreshold: 50,
};

function fakeCluster(): FakeCluster {
  const names = ['a-1', 'a-2', 'a-3', 'a-4', 'b-1', 'b-2'];
  const nodes = names.map((name) =>
    newNode(name, {
      created: t0 - 3_600_000,
      labels: {
        ...zoneLabels('region1', `zone-${name.charAt(0)}`),
        'kubernetes.io/hostname': name,
        ...(name === 'b-2' && { 'node.kubernetes.io/exclude-disruption': '' }),
      },
      conditions: [ready('True', t0 - 10_000, t0 - 3_600_000)],
    }),
  );
  const tolerate = (seconds: number): Pod['tolerations'] => [
    {
      key: 'node.kubernetes.io/unreachable',
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: seconds,
    },
    {
      key: 'node.kubernetes.io/not-ready',
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: seconds,
    },
  ];
  const pods = [
    newPod('web-1', 'a-1', { tolerations: tolerate(300) }),
    newPod('web-2', 'a-1', { tolerations: tolerate(30) }),
    newPod('web-3', 'a-3', { tolerations: tolerate(300) }),
  ];
  return new FakeCluster(nodes, pods);
}

function leasesAt(cluster: FakeCluster, now: number): Map<string, Lease> {
  return new Map([...cluster.nodes.keys()].map((name) => [name, { renewTime: dead.has(name) ? t0 : now }]));
}

function executor(stores: StateStores, cluster: FakeCluster, source: string, at: number): DecidingExecutor {
  return new DecidingExecutor({
    cluster: CLUSTER,
    // FakeCluster answers each effect with its kind's result type (the driver contract of effects.ts).
    port: {
      execute: <E extends Effect>(effect: E) => Promise.resolve(cluster.execute(effect) as ResultOf<E>),
    },
    decisions: stores.decisions,
    source,
    at,
    dryRun: false,
  });
}

/** The monitor's queueing decisions: nodes that entered a zone queue in this pass. */
async function recordEnqueues(
  exec: DecidingExecutor,
  before: ControllerState,
  result: MonitorPassResult,
): Promise<void> {
  for (const [zone, queue] of result.state.zoneQueues) {
    const previous = new Set(before.zoneQueues.get(zone)?.queue.map((v) => v.value));
    const added = queue.queue.filter((v) => !previous.has(v.value));
    await exec.record(
      added.map((v) => ({
        node: v.value,
        what: 'enqueue',
        why: `markNodeForTainting: Ready=${result.readiness.get(v.value)?.observed.status ?? '?'}`,
        inputs: { zone: formatZoneKey(zone), processAt: iso(v.processAt) },
      })),
    );
  }
}

export interface SeededStack {
  readonly db: DynamoFixture;
  readonly endpoint: string;
  /** When the drainer tainted a-1 (and the taint eviction controller scheduled its pods). */
  readonly taintedAt: number;
  stop(): Promise<void>;
}

/** Starts dynalite with the `nlc-cli-*` tables and seeds cluster `prod`. */
export async function seedStack(): Promise<SeededStack> {
  const db = await startDynamoDb(PREFIX);
  const stores = db.stores();
  const cluster = fakeCluster();
  let state = emptyControllerState();
  let last: MonitorPassResult | undefined;
  let taintedAt: number | undefined;
  for (let step = 0; step <= 14; step++) {
    const now = t0 + step * 5_000;
    const monitor = executor(stores, cluster, 'monitor', now);
    const result = await driveAsync(
      monitorNodeHealth(state, { nodes: cluster.list(), leases: leasesAt(cluster, now) }, now, config),
      monitor.execute,
    );
    await recordEnqueues(monitor, state, result);
    state = result.state;
    last = result;

    const drainer = executor(stores, cluster, 'drainer', now);
    const nodes = new Map(cluster.list().map((n) => [n.name, n]));
    const drained = await driveAsync(
      doNoExecuteTaintingPass(state.zoneQueues, nodes, () => now),
      drainer.execute,
    );
    state = { ...state, zoneQueues: drained.zoneQueues };
    if (taintedAt === undefined && drainer.recorded.some((d) => d.what === 'swapNodeTaints')) {
      taintedAt = now;
      // The taint eviction controller sees the tainted node (Node Changed) and schedules its pods.
      const node = cluster.node('a-1');
      const outcome = handleNodeUpdate(
        'a-1',
        node,
        cluster.pods.filter((p) => p.nodeName === 'a-1'),
        () => undefined,
        now,
      );
      for (const action of outcome.actions) {
        if (action.kind !== 'schedule') continue;
        await stores.podEvictions.add(CLUSTER, { ...action, now });
      }
    }
  }
  if (last === undefined || taintedAt === undefined) throw new Error('seed: the story did not unfold');

  for (const node of cluster.nodes.values()) await stores.nodes.putNode(CLUSTER, node);
  // Committed by a function whose clock agrees with the relay's, at the last digest, whatever the test
  // machine's time.
  const committer = db.stores({ clock: { now: () => lastObservedAt } });
  const empty = await committer.controllerState.load(CLUSTER);
  await committer.controllerState.commit(empty, {
    state,
    meta: {
      lastSequence: 15,
      lastObservedAt,
      relayLastSeen: lastObservedAt,
      masterDisruption: false,
      nodeMonitorGracePeriodMs: config.nodeMonitorGracePeriod,
    },
    gauges: last.disruption.gauges,
  });
  return { db, endpoint: db.endpoint, taintedAt, stop: () => db.stop() };
}
