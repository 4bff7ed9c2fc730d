// Pod-level decisions of the NodeLifecycleController: MarkPodsNotReady (plan + outcome), the monitor
// pass's trigger for it, podUpdated and processPod.
//
// Covered at pass level elsewhere (monitorNodeHealth tests, written by the lead), not here:
// - TestMonitorNodeHealthMarkPodsNotReady (T5): the two monitor passes and the pods/status action count;
// - TestMonitorNodeHealthMarkPodsNotReadyWithWorkerSize (T6): `workers: 0` / `workers: 1` through the
//   whole pass (worker count has no counterpart; the 5000 pods/50 nodes split is checked here);
// - TestMonitorNodeHealthMarkPodsNotReadyRetry (T7): nodesToRetry bookkeeping across real passes, and
//   the "unsuccessful pod list" subtest's pod-list failure;
// - TestMonitorNodeHealthUpdateStatus (T3) and TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease (T4):
//   the "pod status update" column, which follows from tryUpdateNodeHealth's observed/current pair;
// - TestPodStatusChange (T2): see legacyEviction.test.ts for its pod-level part.
// Here the T5/T7 cases are replayed at decision level: the observed/current Ready pair each monitor pass
// would produce is derived in comments from tryUpdateNodeHealth's rules (docs/upstream.md#node-health).
import { describe, expect, it } from 'vitest';
import type { WriteResult } from '../../../shared/domain/effects.js';
import {
  aggregateErrorMessage,
  markPodsNotReady,
  markPodsNotReadyOutcome,
  markPodsNotReadyTrigger,
  podUpdated,
  processPod,
} from '../../../shared/domain/podStatus.js';
import type { ConditionStatus, NodeCondition, Pod } from '../../../shared/domain/types.js';

/** testutil.NewPod(name, node): namespace default, bound to `node`, Ready=True. */
function newPod(name: string, nodeName: string, overrides: Partial<Pod> = {}): Pod {
  return {
    namespace: 'default',
    name,
    uid: `${name}-uid`,
    nodeName,
    tolerations: [],
    ready: 'True',
    ...overrides,
  };
}

const fakeNow = Date.parse('2015-01-01T12:00:00Z');

function ready(status: ConditionStatus): NodeCondition {
  return { type: 'Ready', status, lastHeartbeatTime: fakeNow, lastTransitionTime: fakeNow };
}

const ok: WriteResult = { ok: true };

describe('markPodsNotReady', () => {
  it('5000 pods over 50 nodes: exactly the pods of the given node (T6 shape)', () => {
    // T6: pod{i} on node{i % 50}, 100 pods per node.
    const pods = Array.from({ length: 5000 }, (_, i) => newPod(`pod${i}`, `node${i % 50}`));
    const written = markPodsNotReady(pods, 'node7');
    expect(written).toHaveLength(100);
    expect(written.map((p) => p.name)).toEqual(Array.from({ length: 100 }, (_, k) => `pod${7 + 50 * k}`));
    expect(written.every((p) => p.nodeName === 'node7' && p.ready === 'False')).toBe(true);
    // Over all 50 nodes (as T6's pass does), every pod is written exactly once: 5000 updates.
    const all = Array.from({ length: 50 }, (_, n) => markPodsNotReady(pods, `node${n}`)).flat();
    expect(all).toHaveLength(5000);
    expect(new Set(all.map((p) => p.name)).size).toBe(5000);
  });

  it.each<{ name: string; pod: Pod; written: boolean }>([
    { name: 'Ready True is written', pod: newPod('p', 'node0'), written: true },
    { name: 'Ready Unknown is written', pod: newPod('p', 'node0', { ready: 'Unknown' }), written: true },
    {
      name: 'Ready already False: no write (UpdatePodCondition reports no change)',
      pod: newPod('p', 'node0', { ready: 'False' }),
      written: false,
    },
    {
      name: 'no Ready condition: untouched',
      pod: newPod('p', 'node0', { ready: undefined }),
      written: false,
    },
    { name: 'bound to another node: skipped', pod: newPod('p', 'node1'), written: false },
    { name: 'not bound: skipped', pod: newPod('p', ''), written: false },
  ])('$name', ({ pod, written }) => {
    expect(markPodsNotReady([pod], 'node0')).toEqual(written ? [{ ...pod, ready: 'False' }] : []);
  });

  it('returns new values and leaves its input alone', () => {
    const pod = newPod('p', 'node0');
    const input = [pod];
    const [written] = markPodsNotReady(input, 'node0');
    expect(written).not.toBe(pod);
    expect(pod.ready).toBe('True');
    expect(input).toEqual([newPod('p', 'node0')]);
  });
});

describe('markPodsNotReadyOutcome', () => {
  const p0 = newPod('pod0', 'node0');
  const p1 = newPod('pod1', 'node0');
  const warning = (pod: Pod) => ({
    involvedObject: { kind: 'Pod', namespace: 'default', name: pod.name, uid: pod.uid },
    type: 'Warning',
    reason: 'NodeNotReady',
    message: 'Node is not ready',
    source: 'node-controller',
  });

  it.each<{ name: string; results: WriteResult[]; events: Pod[]; error: string | undefined }>([
    {
      name: 'all writes succeed: one Warning event per pod',
      results: [ok, ok],
      events: [p0, p1],
      error: undefined,
    },
    {
      name: 'NotFound is skipped: no event, no error',
      results: [{ ok: false, reason: 'NotFound', message: 'not found' }, ok],
      events: [p1],
      error: undefined,
    },
    {
      name: 'an error is returned, and the event is still recorded',
      results: [{ ok: false, reason: 'Failed', message: 'fake error' }, ok],
      events: [p0, p1],
      error: 'fake error',
    },
    {
      name: 'a conflict is an error like any other',
      results: [ok, { ok: false, reason: 'Conflict', message: 'conflict' }],
      events: [p0, p1],
      error: 'conflict',
    },
    {
      name: 'several errors aggregate',
      results: [
        { ok: false, reason: 'Failed', message: 'a' },
        { ok: false, reason: 'Failed', message: 'b' },
      ],
      events: [p0, p1],
      error: '[a, b]',
    },
  ])('$name', ({ results, events, error }) => {
    expect(markPodsNotReadyOutcome([p0, p1], results)).toEqual({ events: events.map(warning), error });
  });

  it('no writes: no events, no error', () => {
    expect(markPodsNotReadyOutcome([], [])).toEqual({ events: [], error: undefined });
  });

  it('rejects results that do not match the writes', () => {
    expect(() => markPodsNotReadyOutcome([p0], [])).toThrow(/1 writes/);
  });
});

describe('aggregateErrorMessage (utilerrors.NewAggregate)', () => {
  it.each<{ messages: string[]; want: string | undefined }>([
    { messages: [], want: undefined },
    { messages: ['x'], want: 'x' },
    { messages: ['x', 'y'], want: '[x, y]' },
    { messages: ['x', 'x'], want: 'x' },
    { messages: ['x', 'y', 'x'], want: '[x, y]' },
  ])('$messages → $want', ({ messages, want }) => {
    expect(aggregateErrorMessage(messages)).toBe(want);
  });
});

describe('markPodsNotReadyTrigger', () => {
  it.each<{
    name: string;
    observed: ConditionStatus;
    current: ConditionStatus | undefined;
    needsRetry: boolean;
    event: boolean;
    mark: boolean;
  }>([
    {
      name: 'True → True: nothing',
      observed: 'True',
      current: 'True',
      needsRetry: false,
      event: false,
      mark: false,
    },
    {
      name: 'True → Unknown (marked by this pass): event and mark',
      observed: 'True',
      current: 'Unknown',
      needsRetry: false,
      event: true,
      mark: true,
    },
    {
      name: 'True → False: event and mark',
      observed: 'True',
      current: 'False',
      needsRetry: false,
      event: true,
      mark: true,
    },
    {
      name: 'transition while a retry is pending: event and mark once',
      observed: 'True',
      current: 'Unknown',
      needsRetry: true,
      event: true,
      mark: true,
    },
    {
      name: 'retry pending, observed False: mark without event',
      observed: 'False',
      current: 'False',
      needsRetry: true,
      event: false,
      mark: true,
    },
    {
      name: 'retry pending, observed Unknown: mark without event',
      observed: 'Unknown',
      current: 'Unknown',
      needsRetry: true,
      event: false,
      mark: true,
    },
    {
      name: 'retry pending but the node is Ready again: nothing',
      observed: 'True',
      current: 'True',
      needsRetry: true,
      event: false,
      mark: false,
    },
    {
      // Upstream quirk (#125618): the kubelet reports False itself; the NLC never sees True → non-True.
      name: 'kubelet-posted False with a fresh lease, no retry: nothing (#125618)',
      observed: 'False',
      current: 'False',
      needsRetry: false,
      event: false,
      mark: false,
    },
    {
      name: 'no current Ready condition: node skipped',
      observed: 'Unknown',
      current: undefined,
      needsRetry: true,
      event: false,
      mark: false,
    },
  ])('$name', ({ observed, current, needsRetry, event, mark }) => {
    expect(
      markPodsNotReadyTrigger(
        ready(observed),
        current === undefined ? undefined : ready(current),
        needsRetry,
      ),
    ).toEqual({ recordNodeNotReady: event, markPodsNotReady: mark });
  });
});

describe('TestMonitorNodeHealthMarkPodsNotReady', () => {
  // Each case: pod0 (Ready True) on node0; the second pass runs 1 minute later (grace 50s).
  it.each<{
    name: string;
    observed: ConditionStatus;
    current: ConditionStatus | undefined;
    expectedPodStatusUpdate: boolean;
  }>([
    {
      // No Ready condition and within the 60s startup grace: current stays absent, pods untouched.
      name: 'Node created recently, without status.',
      observed: 'Unknown',
      current: undefined,
      expectedPodStatusUpdate: false,
    },
    {
      // Ready True, heartbeat within the 50s grace: observed = current = True.
      name: 'Node created long time ago, with status updated recently.',
      observed: 'True',
      current: 'True',
      expectedPodStatusUpdate: false,
    },
    {
      // probe = fakeNow (first sight), status unchanged at +1m > 50s: the pass flips Ready to Unknown,
      // so observed True, current Unknown.
      name: 'Node created long time ago, with status updated by kubelet exceeds grace period.',
      observed: 'True',
      current: 'Unknown',
      expectedPodStatusUpdate: true,
    },
  ])('$name', ({ observed, current, expectedPodStatusUpdate }) => {
    const trigger = markPodsNotReadyTrigger(
      ready(observed),
      current === undefined ? undefined : ready(current),
      false,
    );
    const writes = trigger.markPodsNotReady ? markPodsNotReady([newPod('pod0', 'node0')], 'node0') : [];
    expect(writes.length > 0).toBe(expectedPodStatusUpdate);
  });
});

describe('TestMonitorNodeHealthMarkPodsNotReadyRetry', () => {
  // node0 created at timeNow, pod0 Ready True. Iterations (derived from tryUpdateNodeHealth):
  // 1. t+0, Ready True LHT=LTT=timeNow: first sight, probe = t → observed True, current True.
  // 2. t+1m, same status: probe still t, 60s > 50s grace → Ready flipped to Unknown:
  //    observed True, current Unknown.
  // 3. t+1m, Ready False LHT=LTT=12:00:02: new heartbeat → probe = now, not stale:
  //    observed False, current False.
  const iterations: { observed: ConditionStatus; current: ConditionStatus }[] = [
    { observed: 'True', current: 'True' },
    { observed: 'True', current: 'Unknown' },
    { observed: 'False', current: 'False' },
  ];

  it.each<{ desc: string; failFirstUpdate: boolean; expectedPodStatusUpdates: number }>([
    {
      desc: 'successful pod status update, no retry required',
      failFirstUpdate: false,
      expectedPodStatusUpdates: 1,
    },
    {
      desc: 'unsuccessful pod status update, retry required',
      failFirstUpdate: true,
      expectedPodStatusUpdates: 2,
    },
  ])('$desc', ({ failFirstUpdate, expectedPodStatusUpdates }) => {
    let pod0 = newPod('pod0', 'node0');
    let needsRetry = false;
    let updates = 0;
    for (const { observed, current } of iterations) {
      const trigger = markPodsNotReadyTrigger(ready(observed), ready(current), needsRetry);
      if (trigger.markPodsNotReady) {
        const writes = markPodsNotReady([pod0], 'node0');
        const results = writes.map((): WriteResult => {
          updates += 1;
          return failFirstUpdate && updates === 1
            ? { ok: false, reason: 'Failed', message: 'fake error' }
            : ok;
        });
        const outcome = markPodsNotReadyOutcome(writes, results);
        if (outcome.error !== undefined) {
          needsRetry = true; // nodesToRetry.add
          continue;
        }
        // A successful write makes the stored pod NotReady.
        pod0 = writes[0] ?? pod0;
      }
      needsRetry = false; // nodesToRetry.delete
    }
    expect(updates).toBe(expectedPodStatusUpdates);
  });
});

describe('podUpdated', () => {
  const bound = (nodeName: string) => ({ nodeName });
  it.each<{
    name: string;
    old: { nodeName: string } | undefined;
    new: { nodeName: string } | undefined;
    want: boolean;
  }>([
    { name: 'deleted pod (no new object)', old: bound('node0'), new: undefined, want: false },
    { name: 'no objects at all', old: undefined, new: undefined, want: false },
    { name: 'new bound pod', old: undefined, new: bound('node0'), want: true },
    { name: 'new unbound pod', old: undefined, new: bound(''), want: false },
    { name: 'pod gets bound', old: bound(''), new: bound('node0'), want: true },
    { name: 'bound pod updated on the same node', old: bound('node0'), new: bound('node0'), want: false },
    { name: 'pod moved to another node', old: bound('node0'), new: bound('node1'), want: true },
    { name: 'still unbound', old: bound(''), new: bound(''), want: false },
  ])('$name', ({ old, new: next, want }) => {
    expect(podUpdated(old, next)).toBe(want);
  });
});

describe('processPod', () => {
  const pod0 = newPod('pod0', 'node0');
  const notReadyPod0 = { ...pod0, ready: 'False' as const };

  it.each<{
    name: string;
    pod: Pod | undefined;
    savedReady: ConditionStatus | undefined | 'noHealth';
    nodeFound: boolean;
    mode: 'taint' | 'legacy';
    want: ReturnType<typeof processPod>;
  }>([
    {
      name: 'pod deleted meanwhile: drop',
      pod: undefined,
      savedReady: 'Unknown',
      nodeFound: true,
      mode: 'taint',
      want: { kind: 'drop', reason: 'podNotFound' },
    },
    {
      name: 'no health data for the node: drop (before the node lookup)',
      pod: pod0,
      savedReady: 'noHealth',
      nodeFound: false,
      mode: 'taint',
      want: { kind: 'drop', reason: 'noNodeHealth' },
    },
    {
      name: 'health data but node not in the lister: requeue',
      pod: pod0,
      savedReady: 'Unknown',
      nodeFound: false,
      mode: 'taint',
      want: { kind: 'requeue', reason: 'nodeNotFound' },
    },
    {
      name: 'node not in the lister is checked before the saved Ready condition: requeue',
      pod: pod0,
      savedReady: undefined,
      nodeFound: false,
      mode: 'taint',
      want: { kind: 'requeue', reason: 'nodeNotFound' },
    },
    {
      name: 'no saved Ready condition: drop',
      pod: pod0,
      savedReady: undefined,
      nodeFound: true,
      mode: 'taint',
      want: { kind: 'drop', reason: 'noReadyCondition' },
    },
    {
      name: 'node Ready: nothing to write',
      pod: pod0,
      savedReady: 'True',
      nodeFound: true,
      mode: 'taint',
      want: {
        kind: 'process',
        savedReady: ready('True'),
        processNoTaintBaseEviction: false,
        markPodsNotReady: [],
      },
    },
    {
      name: 'node Unknown: mark the pod NotReady',
      pod: pod0,
      savedReady: 'Unknown',
      nodeFound: true,
      mode: 'taint',
      want: {
        kind: 'process',
        savedReady: ready('Unknown'),
        processNoTaintBaseEviction: false,
        markPodsNotReady: [notReadyPod0],
      },
    },
    {
      // #125618's counterpart: a pod bound to a kubelet-reported False node is marked here.
      name: 'node False: mark the pod NotReady',
      pod: pod0,
      savedReady: 'False',
      nodeFound: true,
      mode: 'taint',
      want: {
        kind: 'process',
        savedReady: ready('False'),
        processNoTaintBaseEviction: false,
        markPodsNotReady: [notReadyPod0],
      },
    },
    {
      name: 'node Unknown, pod already NotReady: nothing to write',
      pod: notReadyPod0,
      savedReady: 'Unknown',
      nodeFound: true,
      mode: 'taint',
      want: {
        kind: 'process',
        savedReady: ready('Unknown'),
        processNoTaintBaseEviction: false,
        markPodsNotReady: [],
      },
    },
    {
      name: 'legacy, node False: processNoTaintBaseEviction first, then mark',
      pod: pod0,
      savedReady: 'False',
      nodeFound: true,
      mode: 'legacy',
      want: {
        kind: 'process',
        savedReady: ready('False'),
        processNoTaintBaseEviction: true,
        markPodsNotReady: [notReadyPod0],
      },
    },
    {
      // processNoTaintBaseEviction's True branch cancels the node's pending eviction.
      name: 'legacy, node Ready: processNoTaintBaseEviction (cancel), no mark',
      pod: pod0,
      savedReady: 'True',
      nodeFound: true,
      mode: 'legacy',
      want: {
        kind: 'process',
        savedReady: ready('True'),
        processNoTaintBaseEviction: true,
        markPodsNotReady: [],
      },
    },
  ])('$name', ({ pod, savedReady, nodeFound, mode, want }) => {
    // The saved status also carries other conditions; only Ready matters.
    const pressure: NodeCondition = { type: 'MemoryPressure', status: 'False' };
    const health =
      savedReady === 'noHealth'
        ? undefined
        : { status: savedReady === undefined ? [pressure] : [pressure, ready(savedReady)] };
    expect(processPod(pod, health, nodeFound, mode)).toEqual(want);
  });
});
