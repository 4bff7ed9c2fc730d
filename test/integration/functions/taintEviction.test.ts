// The taint eviction controller's service (shared/app/taintEviction.ts) against the API simulator and
// dynalite. Upstream's taint_eviction_test.go cases (TestCreatePod, TestUpdatePod, TestUpdateNode,
// TestEventualConsistency) run end to end as Pod Changed / Node Changed events: "patch + delete" is a pod
// left Terminating with the DisruptionTarget condition; a finite toleration is a PodEvictions entry with
// its fireAt (the drainer fires it). Then what the service adds: duplicate and stale events, the five
// deletion attempts on API errors, shadow mode, and the cheap skip.
import { DefaultEmulationVersion, type EmulationVersion } from '../../../shared/domain/upstreamVersion.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  handleNodeChanged,
  handlePodChanged,
  type TaintEvictionDeps,
} from '../../../shared/app/taintEviction.js';
import { daemonPodTolerations } from '../../../shared/domain/daemonSetTolerations.js';
import { TaintNodeUnreachable } from '../../../shared/domain/taints.js';
import type { Toleration } from '../../../shared/domain/types.js';
import type { NodeChanged } from '../../../shared/events.js';
import {
  createNode,
  createPod,
  eventLines,
  nodeChanged,
  nodeOf,
  podChanged,
  podCondition,
  podOf,
  RecordingObserver,
  startFunctionsFixture,
  updateNode,
  type FunctionsFixture,
  type WireTaint,
} from '../../helpers/functionsFixture.js';

const START = Date.parse('2024-05-01T10:00:00Z');

/** upstream createNoExecuteTaint(i). */
const taint = (i: number): WireTaint => ({ key: `testTaint${i}`, value: `test${i}`, effect: 'NoExecute' });
/** upstream addToleration(pod, i, d): d < 0 is forever. */
const toleration = (i: number, seconds: number): Toleration => ({
  key: `testTaint${i}`,
  value: `test${i}`,
  effect: 'NoExecute',
  ...(seconds >= 0 && { tolerationSeconds: seconds }),
});

let fx: FunctionsFixture;
let observer: RecordingObserver;
let cluster: string;
const sleeps: number[] = [];

beforeAll(async () => {
  fx = await startFunctionsFixture(START);
});
afterAll(async () => {
  await fx.stop();
});
beforeEach(() => {
  cluster = fx.nextCluster();
  observer = new RecordingObserver();
  sleeps.length = 0;
  fx.clock.time = START;
  fx.mark();
});
afterEach(() => {
  fx.cleanApi();
});

function deps(
  options: { dryRun?: boolean; legacy?: boolean; emulationVersion?: EmulationVersion } = {},
): TaintEvictionDeps {
  return {
    config: {
      dryRun: options.dryRun ?? false,
      evictionMode: options.legacy === true ? 'legacy' : 'taint',
      emulationVersion:
        options.emulationVersion ?? (options.legacy === true ? '1.26' : DefaultEmulationVersion),
    },
    stores: fx.stores,
    cluster: fx.cluster,
    observer,
    clock: fx.clock,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
  };
}

/** upstream sets taintedNodes directly; here the node cache (node-taints' copy) holds the node. */
async function storeNode(name: string): Promise<void> {
  await fx.stores.nodes.putNode(cluster, nodeOf(fx.api, name));
}

const pod = (name = 'pod1') => fx.api.store.pods.get(name, { namespace: 'default' });

/** upstream verifyPodActions(expectPatch: true, expectDelete: true): DisruptionTarget, then Terminating. */
function expectEvicted(name = 'pod1'): void {
  expect(podCondition(fx.api, name, 'DisruptionTarget'), name).toMatchObject({
    status: 'True',
    reason: 'DeletionByTaintManager',
  });
  expect(pod(name).metadata?.deletionTimestamp, name).toBeDefined();
}

/** upstream verifyPodActions(false, false). */
function expectUntouched(name = 'pod1'): void {
  expect(podCondition(fx.api, name, 'DisruptionTarget'), name).toBeUndefined();
  expect(pod(name).metadata?.deletionTimestamp, name).toBeUndefined();
}

const evictionOf = (name = 'pod1') => fx.stores.podEvictions.get(cluster, `default/${name}`);
const podCalls = (verb: string) =>
  fx.requests().filter((r) => r.verb === verb && r.resource === 'pods').length;

describe('TestCreatePod (Pod Changed ADDED, the node already tainted)', () => {
  const cases = [
    { name: 'not scheduled - ignore', nodeName: '', taints: [], tolerations: [], evicted: false },
    { name: 'scheduled on untainted Node', nodeName: 'node1', taints: [], tolerations: [], evicted: false },
    {
      name: 'schedule on tainted Node',
      nodeName: 'node1',
      taints: [taint(1)],
      tolerations: [],
      evicted: true,
    },
    {
      name: 'schedule on tainted Node with finite toleration',
      nodeName: 'node1',
      taints: [taint(1)],
      tolerations: [toleration(1, 100)],
      evicted: false,
      fireIn: 100_000,
    },
    {
      name: 'schedule on tainted Node with infinite toleration',
      nodeName: 'node1',
      taints: [taint(1)],
      tolerations: [toleration(1, -1)],
      evicted: false,
    },
    {
      name: 'schedule on tainted Node with infinite invalid toleration',
      nodeName: 'node1',
      taints: [taint(1)],
      tolerations: [toleration(2, -1)],
      evicted: true,
    },
  ];

  it.each(cases)('$name', async ({ nodeName, taints, tolerations, evicted, fireIn }) => {
    createNode(fx.api, 'node1', { taints });
    await storeNode('node1');
    createPod(fx.api, 'pod1', { ...(nodeName !== '' && { nodeName }), tolerations });

    await handlePodChanged(deps(), podChanged(cluster, podOf(fx.api, 'pod1')));

    if (evicted) {
      expectEvicted();
      expect(eventLines(fx.api)).toEqual(['TaintManagerEviction: Marking for deletion Pod default/pod1']);
      expect(observer.count('taint_eviction_controller_pod_deletions_total')).toBe(1);
    } else {
      expectUntouched();
      expect(eventLines(fx.api)).toEqual([]);
    }
    const entry = await evictionOf();
    if (fireIn === undefined) expect(entry).toBeUndefined();
    else {
      expect(entry).toMatchObject({
        nodeName: 'node1',
        createdAt: START,
        fireAt: START + fireIn,
        firesAt: START + fireIn,
        timerBacked: true,
        firing: false,
      });
    }
  });

  it('files the immediate deletion under the node with the taints and tolerations that made it so', async () => {
    createNode(fx.api, 'node1', { taints: [taint(1)] });
    await storeNode('node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1', tolerations: [toleration(2, -1)] });
    await handlePodChanged(deps(), podChanged(cluster, podOf(fx.api, 'pod1')));

    const trail = await fx.stores.decisions.query(cluster, 'node1', { newestFirst: false });
    expect(trail.map((d) => [d.source, d.what, d.result])).toEqual([
      ['taint-eviction', 'deletePodForTaintEviction', 'intended'],
      ['taint-eviction', 'deletePodForTaintEviction', 'ok'],
    ]);
    expect(trail[0]?.why).toBe('processPodOnNode: a NoExecute taint is not tolerated: delete now');
    expect(trail[0]?.inputs).toEqual({
      pod: 'default/pod1',
      taints: ['testTaint1=test1:NoExecute'],
      tolerations: ['testTaint1=test1:NoExecute <- not tolerated'],
    });
    // The entry of immediate work is gone once the deletion ran (upstream CompleteWork).
    expect(await evictionOf()).toBeUndefined();
  });
});

describe('TestUpdatePod (Pod Changed MODIFIED)', () => {
  it('removing toleration: the scheduled eviction is replaced by an immediate deletion', async () => {
    createNode(fx.api, 'node1', { taints: [taint(1)] });
    await storeNode('node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1', tolerations: [toleration(1, 100)] });
    await handlePodChanged(deps(), podChanged(cluster, podOf(fx.api, 'pod1')));
    expect(await evictionOf()).toBeDefined();

    // Tolerations cannot be removed from a live pod; recreate it (same key) as the update would read.
    fx.api.store.pods.delete('pod1', { namespace: 'default', gracePeriodSeconds: 0 });
    createPod(fx.api, 'pod1', { nodeName: 'node1', tolerations: [] });
    fx.clock.advance(1_000);
    await handlePodChanged(deps(), podChanged(cluster, podOf(fx.api, 'pod1'), 'MODIFIED'));

    expectEvicted();
    expect(eventLines(fx.api)).toEqual([
      'TaintManagerEviction: Cancelling deletion of Pod default/pod1',
      'TaintManagerEviction: Marking for deletion Pod default/pod1',
    ]);
    expect(await evictionOf()).toBeUndefined();
  });

  it("lengthening toleration shouldn't work: the first eviction time stands", async () => {
    createNode(fx.api, 'node1', { taints: [taint(1)] });
    await storeNode('node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1', tolerations: [toleration(1, 1)] });
    await handlePodChanged(deps(), podChanged(cluster, podOf(fx.api, 'pod1')));
    const before = await evictionOf();
    expect(before).toMatchObject({ fireAt: START + 1_000 });

    fx.clock.advance(500);
    const lengthened = { ...podOf(fx.api, 'pod1'), tolerations: [toleration(1, 100)] };
    await handlePodChanged(deps(), podChanged(cluster, lengthened, 'MODIFIED'));

    expect(await evictionOf()).toEqual(before);
    expectUntouched();
    expect(eventLines(fx.api)).toEqual([]);
  });

  it('scheduling onto tainted Node (a binding): deleted at once', async () => {
    createNode(fx.api, 'node1', { taints: [taint(1)] });
    await storeNode('node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    await handlePodChanged(deps(), podChanged(cluster, podOf(fx.api, 'pod1'), 'MODIFIED'));
    expectEvicted();
  });

  it('a deleted pod has its scheduled eviction cancelled, with the Event', async () => {
    createNode(fx.api, 'node1', { taints: [taint(1)] });
    await storeNode('node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1', tolerations: [toleration(1, 100)] });
    const added = podOf(fx.api, 'pod1');
    await handlePodChanged(deps(), podChanged(cluster, added));
    fx.api.store.pods.delete('pod1', { namespace: 'default', gracePeriodSeconds: 0 });
    fx.clock.advance(1_000);

    await handlePodChanged(deps(), podChanged(cluster, added, 'DELETED'));

    expect(await evictionOf()).toBeUndefined();
    expect(eventLines(fx.api)).toEqual(['TaintManagerEviction: Cancelling deletion of Pod default/pod1']);
    const trail = await fx.stores.decisions.query(cluster, 'node1', { newestFirst: false });
    expect(trail.map((d) => [d.what, d.why, d.result])).toEqual([
      [
        'schedulePodEviction',
        'processPodOnNode: every NoExecute taint is tolerated; the shortest tolerationSeconds is 100s',
        `fires at 2024-05-01T10:01:40Z`,
      ],
      ['cancelPodEviction', 'cancelWorkWithEvent: handlePodUpdate: the pod was deleted', 'cancelled'],
    ]);
  });
});

describe('TestUpdateNode (Node Changed)', () => {
  /** node1 untainted with pod1, seen once; then its taints become `taints` and the change arrives. */
  async function taintNode(tolerations: Toleration[], taints: WireTaint[]): Promise<void> {
    createNode(fx.api, 'node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1', tolerations });
    expect(await handleNodeChanged(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node1'), 'ADDED'))).toEqual({
      kind: 'skipped',
      reason: 'nothingToEvict',
    });
    updateNode(fx.api, 'node1', { taints });
    await handleNodeChanged(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node1')));
  }

  it('Added taint, expect node patched and deleted', async () => {
    await taintNode([], [taint(1)]);
    expectEvicted();
    expect(await evictionOf()).toBeUndefined();
  });

  it('Added tolerated taint', async () => {
    await taintNode([toleration(1, 100)], [taint(1)]);
    expectUntouched();
    expect(await evictionOf()).toMatchObject({ createdAt: START, fireAt: START + 100_000 });
  });

  it('Only one added taint tolerated', async () => {
    await taintNode([toleration(1, 100)], [taint(1), taint(2)]);
    expectEvicted();
  });

  it('Taint removed: the entry is cancelled and the "Cancelling deletion" Event is visible through the API', async () => {
    await taintNode([toleration(1, 1)], [taint(1)]);
    expect(await evictionOf()).toMatchObject({ fireAt: START + 1_000 });
    updateNode(fx.api, 'node1', { taints: [] });
    fx.clock.advance(200);

    const outcome = await handleNodeChanged(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node1')));

    expect(outcome).toMatchObject({ kind: 'processed', summary: { cancelled: ['default/pod1'] } });
    expect(await evictionOf()).toBeUndefined();
    expectUntouched();
    const events = fx.api.store.events.list({ namespace: 'default' }).items;
    expect(
      events.map((e) => [e.reason, e.message, e.type, e.involvedObject.kind, e.involvedObject.name]),
    ).toEqual([['TaintManagerEviction', 'Cancelling deletion of Pod default/pod1', 'Normal', 'Pod', 'pod1']]);
  });

  it.each([
    { version: '1.28', source: 'taint-controller' },
    { version: '1.29', source: 'taint-eviction-controller' },
  ] as const)(
    'at emulationVersion $version the Events come from $source (KEP-3902, v1.29)',
    async ({ version, source }) => {
      createNode(fx.api, 'node1');
      createPod(fx.api, 'pod1', { nodeName: 'node1', tolerations: [toleration(1, 1)] });
      createPod(fx.api, 'pod2', { nodeName: 'node1', tolerations: [] });
      updateNode(fx.api, 'node1', { taints: [taint(1)] });
      await handleNodeChanged(
        deps({ emulationVersion: version }),
        nodeChanged(cluster, nodeOf(fx.api, 'node1')),
      );
      updateNode(fx.api, 'node1', { taints: [] });
      await handleNodeChanged(
        deps({ emulationVersion: version }),
        nodeChanged(cluster, nodeOf(fx.api, 'node1')),
      );
      const events = fx.api.store.events
        .list({ namespace: 'default' })
        .items.sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));
      expect(events.map((e) => [e.message, e.source?.component])).toEqual([
        ['Marking for deletion Pod default/pod2', source],
        ['Cancelling deletion of Pod default/pod1', source],
      ]);
    },
  );

  it.each([
    { version: '1.25', condition: false, observedGeneration: undefined },
    { version: '1.26', condition: true, observedGeneration: undefined },
    { version: '1.33', condition: true, observedGeneration: undefined },
    { version: '1.34', condition: true, observedGeneration: 1 },
  ] as const)(
    'at emulationVersion $version: DisruptionTarget $condition, observedGeneration $observedGeneration',
    async ({ version, condition, observedGeneration }) => {
      createNode(fx.api, 'node1');
      createPod(fx.api, 'pod1', { nodeName: 'node1', tolerations: [] });
      updateNode(fx.api, 'node1', { taints: [taint(1)] });
      await handleNodeChanged(
        deps({ emulationVersion: version }),
        nodeChanged(cluster, nodeOf(fx.api, 'node1')),
      );
      expect(pod().metadata?.deletionTimestamp).toBeDefined();
      const written = podCondition(fx.api, 'pod1', 'DisruptionTarget');
      if (!condition) expect(written).toBeUndefined();
      else expect(written).toMatchObject({ status: 'True', reason: 'DeletionByTaintManager' });
      expect(written?.observedGeneration).toBe(observedGeneration);
    },
  );

  it('Pod with multiple tolerations are evicted when first one runs out', async () => {
    await taintNode([toleration(1, 1), toleration(2, 100)], [taint(1), taint(2)]);
    expectUntouched();
    expect(await evictionOf()).toMatchObject({ createdAt: START, fireAt: START + 1_000, timerBacked: true });
  });

  it('a pod tolerating the unreachable taint for the default 300 s gets a PodEvictions entry firing then', async () => {
    createNode(fx.api, 'node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1' }); // admission adds the 300 s default tolerations
    updateNode(fx.api, 'node1', { taints: [{ key: TaintNodeUnreachable, effect: 'NoExecute' }] });

    await handleNodeChanged(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node1')));

    expect(await evictionOf()).toEqual({
      key: 'default/pod1',
      // Bound to this pod: a pod re-created under the name is another pod.
      uid: pod('pod1').metadata?.uid,
      nodeName: 'node1',
      createdAt: START,
      fireAt: START + 300_000,
      firesAt: START + 300_000,
      token: expect.any(Number) as number,
      timerBacked: true,
      firing: false,
    });
    const trail = await fx.stores.decisions.query(cluster, 'node1', { newestFirst: false });
    expect(trail).toHaveLength(1);
    expect(trail[0]).toMatchObject({
      what: 'schedulePodEviction',
      inputs: {
        taints: [`${TaintNodeUnreachable}:NoExecute`],
        tolerations: [
          `${TaintNodeUnreachable}:NoExecute <- ${TaintNodeUnreachable} Exists:NoExecute for 300s`,
        ],
        fireAt: '2024-05-01T10:05:00Z',
      },
    });
  });

  it('a DaemonSet pod is never scheduled: its tolerations last forever', async () => {
    createNode(fx.api, 'node1');
    createPod(fx.api, 'ds1', {
      nodeName: 'node1',
      ownerKind: 'DaemonSet',
      tolerations: [...daemonPodTolerations(false)],
    });
    updateNode(fx.api, 'node1', { taints: [{ key: TaintNodeUnreachable, effect: 'NoExecute' }] });

    const outcome = await handleNodeChanged(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node1')));

    expect(outcome).toEqual({
      kind: 'processed',
      summary: { scheduled: [], cancelled: [], deleted: [], failed: [] },
    });
    expect(await evictionOf('ds1')).toBeUndefined();
    expectUntouched('ds1');
  });

  it("a deleted node keeps its pods' scheduled evictions (docs/upstream.md#quirk-20)", async () => {
    await taintNode([toleration(1, 100)], [taint(1)]);
    const last = nodeOf(fx.api, 'node1');
    fx.api.store.nodes.delete('node1');
    expect(await handleNodeChanged(deps(), nodeChanged(cluster, last, 'DELETED'))).toEqual({
      kind: 'skipped',
      reason: 'nodeDeleted',
    });
    expect(await evictionOf()).toBeDefined();
  });
});

describe('TestEventualConsistency', () => {
  it("new pod2 created on tainted Node: the node is stored before its pods are listed, so the pod's own event catches it", async () => {
    createNode(fx.api, 'node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    updateNode(fx.api, 'node1', { taints: [taint(1)] });
    // The taint eviction controller sees the Node Changed before node-taints has stored it.
    expect(await fx.stores.nodes.getNode(cluster, 'node1')).toBeUndefined();
    await handleNodeChanged(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node1')));
    expectEvicted('pod1');

    createPod(fx.api, 'pod2', { nodeName: 'node1' });
    await handlePodChanged(deps(), podChanged(cluster, podOf(fx.api, 'pod2')));
    expectEvicted('pod2');
  });
});

describe('delivery: duplicates, stale events, failures', () => {
  it('duplicate events act once', async () => {
    createNode(fx.api, 'node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    createPod(fx.api, 'pod2', { nodeName: 'node1', tolerations: [toleration(1, 100)] });
    updateNode(fx.api, 'node1', { taints: [taint(1)] });
    const nodeEvent = nodeChanged(cluster, nodeOf(fx.api, 'node1'));
    await handleNodeChanged(deps(), nodeEvent);
    createPod(fx.api, 'pod3', { nodeName: 'node1' });
    const podEvent = podChanged(cluster, podOf(fx.api, 'pod3'));
    await handlePodChanged(deps(), podEvent);
    const entry = await evictionOf('pod2');
    const trail = await fx.stores.decisions.query(cluster, 'node1');
    fx.mark();

    fx.clock.advance(1_000);
    await handleNodeChanged(deps(), nodeEvent);
    await handlePodChanged(deps(), podEvent);

    expect(podCalls('delete')).toBe(0);
    expect(fx.writes().filter((r) => r.resource === 'pods' || r.resource === 'events')).toEqual([]);
    expect(eventLines(fx.api)).toEqual([
      'TaintManagerEviction: Marking for deletion Pod default/pod1',
      'TaintManagerEviction: Marking for deletion Pod default/pod3',
    ]);
    expect(observer.count('taint_eviction_controller_pod_deletions_total')).toBe(2);
    expect(await evictionOf('pod2')).toEqual(entry);
    expect(await fx.stores.decisions.query(cluster, 'node1')).toEqual(trail);
  });

  it('events for two pods of one node decided in the same millisecond keep both decisions', async () => {
    createNode(fx.api, 'node1', { taints: [taint(1)] });
    await storeNode('node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1', tolerations: [toleration(1, 100)] });
    createPod(fx.api, 'pod2', { nodeName: 'node1', tolerations: [toleration(1, 200)] });
    await Promise.all([
      handlePodChanged(deps(), podChanged(cluster, podOf(fx.api, 'pod1'))),
      handlePodChanged(deps(), podChanged(cluster, podOf(fx.api, 'pod2'))),
    ]);
    const trail = await fx.stores.decisions.query(cluster, 'node1');
    expect(trail.map((d) => d.inputs?.pod).sort()).toEqual(['default/pod1', 'default/pod2']);
  });

  it('a stale Node Changed (older resourceVersion than the stored copy) schedules nothing', async () => {
    createNode(fx.api, 'node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    updateNode(fx.api, 'node1', { taints: [taint(1)] });
    const tainted = nodeChanged(cluster, nodeOf(fx.api, 'node1'));
    updateNode(fx.api, 'node1', { taints: [] });
    await storeNode('node1'); // node-taints already stored the untainted, newer copy

    expect(await handleNodeChanged(deps(), tainted)).toEqual({ kind: 'skipped', reason: 'stale' });
    expectUntouched();
    expect(podCalls('list')).toBe(0);
  });

  it('reordered: a later change with the same NoExecute taints first, the tainting change after, still evicts', async () => {
    // The relay sends each update with the NoExecute taints the node had before it (upstream's
    // NodeUpdated filter). Delivered in the wrong order, the later update is filtered out (its taints did
    // not change) and the tainting one is older than the stored copy; upstream's worker reads the node
    // from its lister when it processes the update, so it decides on the newest copy.
    createNode(fx.api, 'node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    await storeNode('node1');
    updateNode(fx.api, 'node1', { taints: [taint(1)] });
    const tainting: NodeChanged = {
      ...nodeChanged(cluster, nodeOf(fx.api, 'node1')),
      oldNoExecuteTaints: [],
    };
    updateNode(fx.api, 'node1', {
      taints: [taint(1), { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }],
    });
    const later: NodeChanged = {
      ...nodeChanged(cluster, nodeOf(fx.api, 'node1')),
      oldNoExecuteTaints: tainting.node.taints,
    };
    await storeNode('node1'); // node-taints stored the later copy first

    expect(await handleNodeChanged(deps(), later)).toEqual({
      kind: 'skipped',
      reason: 'noExecuteTaintsUnchanged',
    });
    expectUntouched();
    expect(await handleNodeChanged(deps(), tainting)).toMatchObject({ kind: 'processed' });
    expectEvicted();
  });

  it('API 500 on delete: 5 attempts 10 ms apart, then left for the next event', async () => {
    createNode(fx.api, 'node1', { taints: [taint(1)] });
    await storeNode('node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    fx.api.faults.inject({ kind: 'internalError', match: { verb: 'delete', resource: 'pods' } });

    const outcome = await handlePodChanged(deps(), podChanged(cluster, podOf(fx.api, 'pod1')));

    expect(outcome).toMatchObject({ kind: 'processed', summary: { deleted: [], failed: ['default/pod1'] } });
    expect(podCalls('delete')).toBe(5);
    expect(sleeps).toEqual([10, 10, 10, 10]);
    expect(pod().metadata?.deletionTimestamp).toBeUndefined();
    expect(await evictionOf()).toBeUndefined(); // completed anyway: upstream does not requeue
    expect(observer.count('taint_eviction_controller_pod_deletions_total')).toBe(0);
    const trail = await fx.stores.decisions.query(cluster, 'node1', { newestFirst: false });
    expect(trail.map((d) => d.result)).toEqual([
      'intended',
      expect.stringMatching(/^Failed: delete pod "default\/pod1": HTTP 500 .* \(5 attempts\)$/) as string,
    ]);

    // The next event for the pod decides again, and this time the API answers.
    fx.api.faults.clear();
    fx.clock.advance(1_000);
    await handlePodChanged(deps(), podChanged(cluster, podOf(fx.api, 'pod1'), 'MODIFIED'));
    expectEvicted();
    expect(observer.count('taint_eviction_controller_pod_deletions_total')).toBe(1);
  });

  it('a failed pod list throws (Lambda retries the event) before any action', async () => {
    createNode(fx.api, 'node1', { taints: [taint(1)] });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    fx.api.faults.inject({ kind: 'internalError', match: { verb: 'list', resource: 'pods' } });
    await expect(handleNodeChanged(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node1')))).rejects.toThrow(
      /requeued \(listPodsFailed\)/,
    );
    expectUntouched();
  });

  it('a Node Changed without NoExecute taints and nothing scheduled on the node lists no pods and writes nothing', async () => {
    createNode(fx.api, 'node1', { taints: [{ key: 'example.com/x', effect: 'NoSchedule' }] });
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    fx.dynamo.commands.reset();

    const outcome = await handleNodeChanged(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node1')));

    expect(outcome).toEqual({ kind: 'skipped', reason: 'nothingToEvict' });
    expect(fx.requests()).toEqual([]);
    expect(Object.fromEntries(fx.dynamo.commands.counts)).toEqual({ Query: 1 });
  });

  it('legacy mode (--enable-taint-manager=false): the taint eviction controller does not run', async () => {
    createNode(fx.api, 'node1', { taints: [taint(1)] });
    await storeNode('node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    fx.mark();
    const skipped = { kind: 'skipped', reason: 'taintManagerDisabled' };
    expect(
      await handleNodeChanged(deps({ legacy: true }), nodeChanged(cluster, nodeOf(fx.api, 'node1'))),
    ).toEqual(skipped);
    expect(
      await handlePodChanged(deps({ legacy: true }), podChanged(cluster, podOf(fx.api, 'pod1'))),
    ).toEqual(skipped);
    expect(fx.requests()).toEqual([]);
    expectUntouched();
  });

  it('dryRun touches nothing in the cluster, and files every decision as dryRun', async () => {
    createNode(fx.api, 'node1');
    createPod(fx.api, 'pod1', { nodeName: 'node1' });
    createPod(fx.api, 'pod2', { nodeName: 'node1', tolerations: [toleration(1, 100)] });
    updateNode(fx.api, 'node1', { taints: [taint(1)] });
    fx.mark();

    const outcome = await handleNodeChanged(
      deps({ dryRun: true }),
      nodeChanged(cluster, nodeOf(fx.api, 'node1')),
    );

    expect(outcome).toMatchObject({
      kind: 'processed',
      summary: { scheduled: ['default/pod2'], deleted: ['default/pod1'] },
    });
    expect(fx.writes()).toEqual([]);
    expectUntouched('pod1');
    expect(eventLines(fx.api)).toEqual([]);
    const trail = await fx.stores.decisions.query(cluster, 'node1', { newestFirst: false });
    expect(trail.map((d) => [d.what, d.result, d.dryRun])).toEqual([
      ['deletePodForTaintEviction', 'dryRun', true],
      ['schedulePodEviction', 'fires at 2024-05-01T10:01:40Z', true],
    ]);
  });
});
