// pod-processing (shared/app/podProcessing.ts) against the API simulator and dynalite: upstream processPod
// for pods newly bound to a node whose saved Ready condition is not True (TestPodStatusChange's pod
// worker half), the podUpdated filter, and the legacy (≤ v1.26) branch: immediate deletion on a node
// already evicted, queueing the node otherwise. The node's health row is seeded through the monitor's own
// store (ControllerStateStore.commit), as a monitor pass would have left it.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { processPodChange, type PodProcessingDeps } from '../../../shared/app/podProcessing.js';
import type { NodeEvictionStatus } from '../../../shared/domain/legacyEviction.js';
import { newRateLimitedTimedQueue } from '../../../shared/domain/rateLimitedTimedQueue.js';
import { newTokenBucketRateLimiter } from '../../../shared/domain/tokenBucket.js';
import type { ConditionStatus, EpochMillis, Pod } from '../../../shared/domain/types.js';
import type { PodChanged } from '../../../shared/events.js';
import { getZoneKey } from '../../../shared/domain/zones.js';
import { RequeueError } from '../../../shared/errors.js';
import {
  createNode,
  createPod,
  eventLines,
  nodeOf,
  podChanged,
  podCondition,
  podOf,
  RecordingObserver,
  startFunctionsFixture,
  type FunctionsFixture,
} from '../../helpers/functionsFixture.js';

const START = Date.parse('2024-05-01T10:00:00Z');
const ZONE_LABELS = { 'topology.kubernetes.io/region': 'r1', 'topology.kubernetes.io/zone': 'z1' };

let fx: FunctionsFixture;
let observer: RecordingObserver;
let cluster: string;

beforeAll(async () => {
  fx = await startFunctionsFixture(START);
});
afterAll(async () => {
  await fx.stop();
});
beforeEach(() => {
  cluster = fx.nextCluster();
  observer = new RecordingObserver();
  fx.clock.time = START;
  fx.mark();
});
afterEach(() => {
  fx.cleanApi();
});

function deps(options: { dryRun?: boolean; legacy?: boolean } = {}): PodProcessingDeps {
  return {
    config: {
      dryRun: options.dryRun ?? false,
      evictionMode: options.legacy === true ? 'legacy' : 'taint',
      podEvictionTimeout: 5 * 60_000,
    },
    stores: fx.stores,
    cluster: fx.cluster,
    observer,
    clock: fx.clock,
  };
}

interface Seed {
  readonly ready: ConditionStatus;
  /** The node's Ready in the API and the node cache, when the health row lags it (default: `ready`). */
  readonly apiReady?: ConditionStatus;
  readonly probe?: EpochMillis;
  readonly transition?: EpochMillis;
  readonly evictionStatus?: NodeEvictionStatus;
  /** Create the zone's eviction queue (the monitor does when it first sees the zone). */
  readonly zoneQueue?: boolean;
}

/** The node in the node cache (node-taints) and its health row (the monitor), as a pass leaves them. */
async function seedNode(name: string, seed: Seed): Promise<void> {
  createNode(fx.api, name, {
    labels: ZONE_LABELS,
    conditions: [{ type: 'Ready', status: seed.apiReady ?? seed.ready }],
  });
  const node = nodeOf(fx.api, name);
  await fx.stores.nodes.putNode(cluster, node);
  const loaded = await fx.stores.controllerState.load(cluster);
  const zone = getZoneKey(node.labels);
  await fx.stores.controllerState.commit(loaded, {
    meta: loaded.meta,
    state: {
      ...loaded.state,
      knownNodes: new Map([[name, node.uid]]),
      nodeHealth: new Map([
        [
          name,
          {
            probeTimestamp: seed.probe ?? START,
            readyTransitionTimestamp: seed.transition ?? START,
            status: [{ type: 'Ready', status: seed.ready }],
          },
        ],
      ]),
      nodeEvictionStatus: new Map(seed.evictionStatus === undefined ? [] : [[name, seed.evictionStatus]]),
      ...(seed.zoneQueue === true && {
        zoneStates: new Map([[zone, 'Normal' as const]]),
        zoneQueues: new Map([[zone, newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, START))]]),
      }),
    },
  });
}

const ready = (name = 'pod1') => podCondition(fx.api, name, 'Ready')?.status;

/** The Pod Changed of a pod that lost Ready (True → False), as the relay sends it. */
const readyLost = (pod: Pod, extra: Partial<Pick<PodChanged, 'nodeReady'>> = {}): PodChanged => ({
  ...podChanged(cluster, { ...pod, ready: 'False' }, 'MODIFIED'),
  oldReady: 'True',
  ...extra,
});

describe('processPod (taint mode)', () => {
  it('a pod bound to a NotReady node is marked Ready=False, with the Warning NodeNotReady Event', async () => {
    await seedNode('node1', { ready: 'False' });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });

    const outcome = await processPodChange(deps(), podChanged(cluster, podOf(fx.api, 'pod1')));

    expect(outcome).toEqual({ kind: 'processed', savedReady: 'False', markedNotReady: true });
    expect(ready()).toBe('False');
    expect(eventLines(fx.api)).toEqual(['NodeNotReady: Node is not ready']);
    const trail = await fx.stores.decisions.query(cluster, 'node1', { newestFirst: false });
    expect(trail.map((d) => [d.source, d.what, d.result])).toEqual([
      ['pod-processing', 'markPodsNotReady', 'intended'],
      ['pod-processing', 'markPodsNotReady', 'ok'],
    ]);
    expect(trail[0]?.inputs).toMatchObject({ pods: ['default/pod1'], savedReady: 'False' });
  });

  it('a pod bound to an Unknown node is marked too; a duplicate event writes nothing (Ready=False is idempotent)', async () => {
    await seedNode('node1', { ready: 'Unknown' });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    const event = podChanged(cluster, podOf(fx.api, 'pod1'));
    await processPodChange(deps(), event);
    expect(ready()).toBe('False');
    fx.mark();
    fx.clock.advance(1_000);

    await processPodChange(deps(), event);
    expect(fx.writes()).toEqual([]);
  });

  it('a saved condition not True that the API no longer shows (a health row catching up) is not acted on', async () => {
    // After a zone comes back, health rows are written a few hundred a commit (healthWritesPerCommit).
    await seedNode('node1', { ready: 'Unknown', apiReady: 'True' });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });

    const outcome = await processPodChange(deps(), podChanged(cluster, podOf(fx.api, 'pod1')));

    expect(outcome).toEqual({ kind: 'skipped', reason: 'healthBehindNode' });
    expect(ready()).toBe('True');
    expect(fx.writes()).toEqual([]);
  });

  it('legacy mode: a node the API shows Ready again is neither queued nor its pod deleted', async () => {
    await seedNode('node1', {
      ready: 'Unknown',
      apiReady: 'True',
      evictionStatus: 'evicted',
      zoneQueue: true,
    });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });

    const outcome = await processPodChange(
      deps({ legacy: true }),
      podChanged(cluster, podOf(fx.api, 'pod1')),
    );

    expect(outcome).toEqual({ kind: 'skipped', reason: 'healthBehindNode' });
    expect(podOf(fx.api, 'pod1').name).toBe('pod1');
    expect(fx.writes()).toEqual([]);
  });

  it('a pod bound to a Ready node is left alone', async () => {
    await seedNode('node1', { ready: 'True' });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    expect(await processPodChange(deps(), podChanged(cluster, podOf(fx.api, 'pod1')))).toEqual({
      kind: 'processed',
      savedReady: 'True',
      markedNotReady: false,
    });
    expect(ready()).toBe('True');
    expect(fx.writes()).toEqual([]);
  });

  it.each([
    { name: 'a deletion', type: 'DELETED' as const, oldNodeName: undefined },
    {
      name: 'an update on the same node (oldNodeName only comes with a rebind)',
      type: 'MODIFIED' as const,
      oldNodeName: 'node1',
    },
  ])('only newly bound pods are processed: $name is not', async ({ type, oldNodeName }) => {
    await seedNode('node1', { ready: 'False' });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    const outcome = await processPodChange(
      deps(),
      podChanged(cluster, podOf(fx.api, 'pod1'), type, oldNodeName),
    );
    expect(outcome).toEqual({ kind: 'skipped', reason: 'notNewlyBound' });
    expect(ready()).toBe('True');
  });

  it('a pod rebound from another node is processed', async () => {
    await seedNode('node1', { ready: 'False' });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    await processPodChange(deps(), podChanged(cluster, podOf(fx.api, 'pod1'), 'MODIFIED', 'node0'));
    expect(ready()).toBe('False');
  });

  it('a node without health data drops the pod (the monitor handles it later)', async () => {
    createNode(fx.api, 'node1', { conditions: [{ type: 'Ready', status: 'False' }] });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    expect(await processPodChange(deps(), podChanged(cluster, podOf(fx.api, 'pod1')))).toEqual({
      kind: 'skipped',
      reason: 'noNodeHealth',
    });
    expect(fx.writes()).toEqual([]);
  });

  it('a node with health data but gone from the node cache requeues (throws for a Lambda retry)', async () => {
    await seedNode('node1', { ready: 'False' });
    await fx.stores.nodes.deleteNode(cluster, 'node1', undefined);
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    await expect(processPodChange(deps(), podChanged(cluster, podOf(fx.api, 'pod1')))).rejects.toThrow(
      RequeueError,
    );
    expect(ready()).toBe('True');
  });

  it('a failed status write throws so Lambda retries the event', async () => {
    await seedNode('node1', { ready: 'False' });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    fx.api.faults.inject({
      kind: 'internalError',
      match: { verb: 'patch', resource: 'pods', subresource: 'status' },
    });
    await expect(processPodChange(deps(), podChanged(cluster, podOf(fx.api, 'pod1')))).rejects.toThrow(
      /cluster writes for node "node1" failed/,
    );
  });

  it('dryRun records the decision and writes nothing to the cluster', async () => {
    await seedNode('node1', { ready: 'False' });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    fx.mark();
    await processPodChange(deps({ dryRun: true }), podChanged(cluster, podOf(fx.api, 'pod1')));
    expect(fx.writes()).toEqual([]);
    expect(ready()).toBe('True');
    const trail = await fx.stores.decisions.query(cluster, 'node1');
    expect(trail.map((d) => [d.what, d.result, d.dryRun])).toEqual([['markPodsNotReady', 'dryRun', true]]);
  });
});

describe("shadow mode: what the cluster's own controller did to a pod (nlc agreement)", () => {
  it("records a NotReady mark on a node that is not Ready, and a taint eviction begun, as the cluster's (source cluster)", async () => {
    await seedNode('node1', { ready: 'Unknown' });
    // The cluster's controller marks the node Unknown in the API and in the copy node-taints keeps.
    await fx.stores.nodes.putNode(cluster, {
      ...nodeOf(fx.api, 'node1'),
      conditions: [
        { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', lastTransitionTime: START },
      ],
      resourceVersion: '999999',
    });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    const before = podOf(fx.api, 'pod1');
    const markedAt = START + 1_000;
    fx.clock.time = markedAt;
    const notReady = readyLost(before);
    expect(await processPodChange(deps({ dryRun: true }), notReady)).toEqual({
      kind: 'skipped',
      reason: 'notNewlyBound',
    });
    fx.clock.time = START + 2_000;
    const evicted = {
      ...podChanged(
        cluster,
        {
          ...before,
          ready: 'False' as const,
          deletionTimestamp: START + 32_000,
          disruptionTarget: 'DeletionByTaintManager',
        },
        'MODIFIED',
      ),
      oldReady: 'False' as const,
    };
    await processPodChange(deps({ dryRun: true }), evicted);
    // A redelivery at the same instant is the same row; a later one the reader counts once
    // (shared/agreement.ts).
    await processPodChange(deps({ dryRun: true }), evicted);

    const trail = await fx.stores.decisions.query(cluster, 'node1', { newestFirst: false });
    expect(trail.map((d) => [d.source, d.what, d.at, d.inputs])).toEqual([
      ['cluster', 'podNotReady', markedAt, { pod: 'default/pod1', uid: before.uid }],
      ['cluster', 'podDeleted', START + 2_000, { pod: 'default/pod1', uid: before.uid }],
    ]);
    expect(trail[0]?.why).toBe(
      "observed: the cluster's own controller marked pod default/pod1 Ready=False (its node is Unknown)",
    );
    expect(fx.writes()).toEqual([]);
  });

  it("a NotReady mark seen before node-taints stored the node's marking: the API's node decides", async () => {
    await seedNode('node1', { ready: 'True' });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    const pod = podOf(fx.api, 'pod1');
    // The cluster's controller marked node1 in the API; the stored copy still says Ready.
    fx.api.store.nodes.patch(
      'node1',
      { status: { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }] } },
      { type: 'strategic', subresource: 'status' },
    );
    const lost = readyLost(pod);
    await processPodChange(deps({ dryRun: true }), lost);
    const trail = await fx.stores.decisions.query(cluster, 'node1');
    expect(trail.map((d) => [d.source, d.what])).toEqual([['cluster', 'podNotReady']]);
  });

  it("a NotReady mark processed after the node is back: the relay's view of the node then decides", async () => {
    await seedNode('node1', { ready: 'True' });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    const pod = podOf(fx.api, 'pod1');
    const lost = readyLost(pod, { nodeReady: 'Unknown' });
    fx.mark();
    await processPodChange(deps({ dryRun: true }), lost);
    expect(fx.requests().filter((r) => r.resource === 'nodes')).toEqual([]);
    const trail = await fx.stores.decisions.query(cluster, 'node1');
    expect(trail.map((d) => [d.source, d.what])).toEqual([['cluster', 'podNotReady']]);
  });

  it('records nothing on a Ready node, for an eviction by another writer, or when active', async () => {
    await seedNode('node1', { ready: 'True' });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    const pod = podOf(fx.api, 'pod1');
    const lost = readyLost(pod);
    await processPodChange(deps({ dryRun: true }), lost);
    const drained = podChanged(
      cluster,
      { ...pod, deletionTimestamp: START + 30_000, disruptionTarget: 'EvictionByEvictionAPI' },
      'MODIFIED',
    );
    await processPodChange(deps({ dryRun: true }), drained);
    const evicted = podChanged(
      cluster,
      { ...pod, deletionTimestamp: START + 30_000, disruptionTarget: 'DeletionByTaintManager' },
      'MODIFIED',
    );
    await processPodChange(deps(), evicted);
    expect(await fx.stores.decisions.query(cluster, 'node1')).toEqual([]);
  });
});

describe('processPod (legacy mode: processNoTaintBaseEviction for the pod)', () => {
  const longAgo = START - 10 * 60_000; // past the 5 m podEvictionTimeout

  it('a pod arriving on a node already evicted is deleted at once (NodeLost, then DELETE), bypassing the queue', async () => {
    await seedNode('node1', { ready: 'Unknown', probe: longAgo, evictionStatus: 'evicted', zoneQueue: true });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    const event = podChanged(cluster, podOf(fx.api, 'pod1'));

    const outcome = await processPodChange(deps({ legacy: true }), event);

    expect(outcome).toMatchObject({ legacy: 'deletedPods', markedNotReady: true });
    const pod = fx.api.store.pods.get('pod1', { namespace: 'default' });
    expect(pod.status?.reason).toBe('NodeLost');
    expect(pod.metadata?.deletionTimestamp).toBeDefined();
    expect(eventLines(fx.api)).toEqual([
      'DeletingAllPods: Node node1 event: Deleting all Pods from Node node1.',
      'NodeControllerEviction: Marking for deletion Pod pod1 from Node node1',
      'NodeNotReady: Node is not ready',
    ]);

    // A duplicate reads the pod again: it is terminating, so nothing is deleted twice.
    fx.mark();
    fx.clock.advance(1_000);
    await processPodChange(deps({ legacy: true }), event);
    expect(fx.requests().filter((r) => r.verb === 'delete')).toEqual([]);
  });

  it('a pod on a node unreachable for longer than podEvictionTimeout queues the node in its zone', async () => {
    await seedNode('node1', { ready: 'Unknown', probe: longAgo, zoneQueue: true });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });

    const outcome = await processPodChange(
      deps({ legacy: true }),
      podChanged(cluster, podOf(fx.api, 'pod1')),
    );

    expect(outcome).toMatchObject({ legacy: 'enqueued', markedNotReady: true });
    const zone = getZoneKey(ZONE_LABELS);
    const { queues } = await fx.stores.zoneQueues.loadZoneQueues(cluster);
    expect(queues.get(zone)?.queue.map((v) => [v.value, v.addedAt])).toEqual([['node1', START]]);
    expect(
      fx.api.store.pods.get('pod1', { namespace: 'default' }).metadata?.deletionTimestamp,
    ).toBeUndefined();
    const trail = await fx.stores.decisions.query(cluster, 'node1', { newestFirst: false });
    expect(trail.map((d) => d.what)).toEqual(['enqueue', 'markPodsNotReady', 'markPodsNotReady']);

    // Queued once: a second pod finds it in the set.
    createPod(fx.api, 'pod2', { nodeName: 'node1' });
    expect(
      await processPodChange(deps({ legacy: true }), podChanged(cluster, podOf(fx.api, 'pod2'))),
    ).toMatchObject({
      legacy: 'alreadyQueued',
    });
  });

  it('a pod on a node NotReady for less than podEvictionTimeout is only marked NotReady', async () => {
    await seedNode('node1', { ready: 'False', transition: START - 60_000, zoneQueue: true });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    expect(
      await processPodChange(deps({ legacy: true }), podChanged(cluster, podOf(fx.api, 'pod1'))),
    ).toEqual({
      kind: 'processed',
      savedReady: 'False',
      legacy: 'none',
      markedNotReady: true,
    });
  });
});
