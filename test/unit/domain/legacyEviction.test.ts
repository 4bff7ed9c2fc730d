// The legacy (pre-taint, upstream <= 1.26) eviction path at decision level: processNoTaintBaseEviction,
// evictPods/cancelPodEviction, DeletePods (plan + outcome), SetPodTerminationReason, and the result of
// a doEvictionPass queue item.
//
// Covered at pass level elsewhere (monitorNodeHealth / doEvictionPass tests, written by the lead), not here:
// - TestMonitorNodeHealthEvictPods (L1), all 7 cases: the two monitor passes, node1 as the healthy helper
//   keeping the zone Normal, the zonePodEvictor Try and the count of pod `delete` actions;
// - TestPodStatusChange (L2, and T2 in the current file through zoneNoExecuteTainter): the two passes,
//   the queue Try and the pod `update` action;
// - TestMonitorNodeHealthEvictPodsWithDisruption (L3), all 6 cases: zone states, limiter swaps and
//   master disruption decide whether the queued node is ever processed;
// - nodeEvictionMap registration (registerNode/unregisterNode on node Add/Delete) and the queue's
//   Add/Remove/processed-once semantics.
// Here the node-level decision of each case is derived in comments from tryUpdateNodeHealth's rules
// (docs/upstream.md#node-health) with the legacy tests' settings: evictionTimeout = 10m, grace 40s.
import { describe, expect, it } from 'vitest';
import type { WriteResult } from '../../../shared/domain/effects.js';
import {
  cancelPodEviction,
  deletePodsOutcome,
  deletePodsPlan,
  doEvictionPassResult,
  evictPods,
  evictPodsError,
  isDaemonSetPodByOwner,
  processNoTaintBaseEviction,
  setPodTerminationReason,
  type DeletePodsPodResult,
  type NodeEvictionStatus,
} from '../../../shared/domain/legacyEviction.js';
import type { ConditionStatus, Pod } from '../../../shared/domain/types.js';

const minute = 60_000;
const fakeNow = Date.parse('2015-01-01T12:00:00Z');
const evictionTimeout = 10 * minute;
const testNodeMonitorGracePeriod = 40_000; // legacy file
const config = { podEvictionTimeout: evictionTimeout };

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

const ok: WriteResult = { ok: true };
const notFound: WriteResult = { ok: false, reason: 'NotFound', message: 'not found' };

/** Whether evicting node0 deletes any pod, as L1 checks: evictPods on a fresh node, then the queue item's DeletePods. */
function podsDeletedByEviction(
  status: ConditionStatus,
  health: { probe: number; transition: number },
  now: number,
  pod: Pod,
) {
  const decision = processNoTaintBaseEviction(
    'node0',
    { status },
    { probeTimestamp: health.probe, readyTransitionTimestamp: health.transition },
    now,
    config,
  );
  if (decision.kind !== 'evictPods') return { decision: decision.kind, deleted: false };
  // A registered node starts `unmarked`, so the node is enqueued and the queue item runs DeletePods.
  expect(evictPods('unmarked')).toEqual({ kind: 'enqueue', newStatus: 'toBeEvicted' });
  const plan = deletePodsPlan([pod], 'node0');
  return { decision: decision.kind, deleted: plan.pods.some((p) => p.delete) };
}

describe('TestMonitorNodeHealthEvictPods', () => {
  it.each<{
    description: string;
    observed: ConditionStatus;
    health: { probe: number; transition: number };
    now: number;
    pod: Pod;
    decision: 'evictPods' | 'none';
    expectedEvictPods: boolean;
  }>([
    {
      // node0 created at fakeNow without status; timeToPass 0. Its current Ready stays absent (within the
      // 60s startup grace), so the pass never reaches processNoTaintBaseEviction. Its fake observed
      // condition is Unknown with probe = creation = fakeNow: not 10m past it either.
      description: 'Node created recently, with no status.',
      observed: 'Unknown',
      health: { probe: fakeNow, transition: fakeNow },
      now: fakeNow,
      pod: newPod('pod0', 'node0'),
      decision: 'none',
      expectedEvictPods: false,
    },
    {
      // Same as above; the labels only change the zone key (pass level).
      description:
        'Node created recently without FailureDomain labels which is added back later, with no status (happens only at cluster startup).',
      observed: 'Unknown',
      health: { probe: fakeNow, transition: fakeNow },
      now: fakeNow,
      pod: newPod('pod0', 'node0'),
      decision: 'none',
      expectedEvictPods: false,
    },
    {
      // First sight at fakeNow: readyTransition = fakeNow. At +10m the heartbeat moved but not the
      // transition time, so readyTransition stays fakeNow: 12:10 is not after 12:00 + 10m.
      description: 'Node created long time ago, and kubelet posted NotReady for a short period of time.',
      observed: 'False',
      health: { probe: fakeNow + evictionTimeout, transition: fakeNow },
      now: fakeNow + evictionTimeout,
      pod: newPod('pod0', 'node0'),
      decision: 'none',
      expectedEvictPods: false,
    },
    {
      // 13:00 is after 12:00 + 10m: evict. pod0 belongs to DaemonSet ds0 (upstream: its selector
      // matches the pod's labels; here: its controlling owner is a DaemonSet), so it is not deleted.
      description: 'Pod is ds-managed, and kubelet posted NotReady for a long period of time.',
      observed: 'False',
      health: { probe: fakeNow + 60 * minute, transition: fakeNow },
      now: fakeNow + 60 * minute,
      pod: newPod('pod0', 'node0', { ownerKind: 'DaemonSet', ready: undefined }),
      decision: 'evictPods',
      expectedEvictPods: false,
    },
    {
      description: 'Node created long time ago, and kubelet posted NotReady for a long period of time.',
      observed: 'False',
      health: { probe: fakeNow + 60 * minute, transition: fakeNow },
      now: fakeNow + 60 * minute,
      pod: newPod('pod0', 'node0'),
      decision: 'evictPods',
      expectedEvictPods: true,
    },
    {
      // Unknown since fakeNow and the status never changes, so the probe stays fakeNow (Ready is
      // already Unknown: no status update either). At 12:09:20: not after 12:00 + 10m.
      description: 'Node created long time ago, node controller posted Unknown for a short period of time.',
      observed: 'Unknown',
      health: { probe: fakeNow, transition: fakeNow },
      now: fakeNow + evictionTimeout - testNodeMonitorGracePeriod,
      pod: newPod('pod0', 'node0'),
      decision: 'none',
      expectedEvictPods: false,
    },
    {
      // Same, at 13:00: after 12:00 + 10m.
      description: 'Node created long time ago, node controller posted Unknown for a long period of time.',
      observed: 'Unknown',
      health: { probe: fakeNow, transition: fakeNow },
      now: fakeNow + 60 * minute,
      pod: newPod('pod0', 'node0'),
      decision: 'evictPods',
      expectedEvictPods: true,
    },
  ])('$description', ({ observed, health, now, pod, decision, expectedEvictPods }) => {
    expect(podsDeletedByEviction(observed, health, now, pod)).toEqual({
      decision,
      deleted: expectedEvictPods,
    });
  });

  it('the healthy helper node1 cancels any pending eviction of its own', () => {
    // node1: Ready True, heartbeat at 12:09 → probe = now; the True branch cancels.
    const decision = processNoTaintBaseEviction(
      'node1',
      { status: 'True' },
      { probeTimestamp: fakeNow + 60 * minute, readyTransitionTimestamp: fakeNow },
      fakeNow + 60 * minute,
      config,
    );
    expect(decision).toEqual({ kind: 'cancelPodEviction' });
  });
});

describe('TestPodStatusChange', () => {
  it('Node created long time ago, node controller posted Unknown for a long period of time, the pod status must include reason for termination.', () => {
    // node0 Unknown since 12:00, unchanged at 13:00: probe stays fakeNow; 13:00 is after 12:10, so node0 is
    // queued (legacy: zonePodEvictor; T2: zoneNoExecuteTainter, whose Try the test runs with DeletePods).
    const decision = processNoTaintBaseEviction(
      'node0',
      { status: 'Unknown' },
      { probeTimestamp: fakeNow, readyTransitionTimestamp: fakeNow },
      fakeNow + 60 * minute,
      config,
    );
    expect(decision).toEqual({ kind: 'evictPods' });
    const plan = deletePodsPlan([newPod('pod0', 'node0')], 'node0');
    // The pod `update` action carries Status.Reason == NodeLost.
    expect(plan.pods[0]?.setTerminationReason).toEqual({
      reason: 'NodeLost',
      message: 'Node node0 which was running pod pod0 is unresponsive',
    });
  });
});

describe('TestMonitorNodeHealthEvictPodsWithDisruption (node-level part)', () => {
  it('node0 (Unknown for 60m) is always due for eviction; whether it happens is the zone limiter’s call', () => {
    // In every L3 case node0 is Unknown with an unchanged heartbeat from 12:00 to 13:00.
    const decision = processNoTaintBaseEviction(
      'node0',
      { status: 'Unknown' },
      { probeTimestamp: fakeNow, readyTransitionTimestamp: fakeNow },
      fakeNow + 60 * minute,
      config,
    );
    expect(decision).toEqual({ kind: 'evictPods' });
  });
});

describe('processNoTaintBaseEviction', () => {
  const health = { probeTimestamp: fakeNow, readyTransitionTimestamp: fakeNow + minute };
  it.each<{ name: string; status: ConditionStatus; now: number; want: string }>([
    {
      name: 'False, exactly at transition + timeout: not yet',
      status: 'False',
      now: fakeNow + 11 * minute,
      want: 'none',
    },
    {
      name: 'False, 1ms after transition + timeout: evict',
      status: 'False',
      now: fakeNow + 11 * minute + 1,
      want: 'evictPods',
    },
    {
      name: 'False counts from the transition, not the probe',
      status: 'False',
      now: fakeNow + 10 * minute + 1,
      want: 'none',
    },
    {
      name: 'Unknown, exactly at probe + timeout: not yet',
      status: 'Unknown',
      now: fakeNow + 10 * minute,
      want: 'none',
    },
    {
      name: 'Unknown counts from the probe, not the transition',
      status: 'Unknown',
      now: fakeNow + 10 * minute + 1,
      want: 'evictPods',
    },
    { name: 'True: cancel', status: 'True', now: fakeNow, want: 'cancelPodEviction' },
  ])('$name', ({ status, now, want }) => {
    expect(processNoTaintBaseEviction('node0', { status }, health, now, config)).toEqual({ kind: want });
  });

  it.each<ConditionStatus>(['True', 'False', 'Unknown'])('no health data (%s): error', (status) => {
    expect(processNoTaintBaseEviction('node0', { status }, undefined, fakeNow, config)).toEqual({
      kind: 'error',
      message: 'health data doesn\'t exist for node "node0"',
    });
  });
});

describe('evictPods / cancelPodEviction', () => {
  it.each<{ status: NodeEvictionStatus; want: ReturnType<typeof evictPods> }>([
    { status: 'unmarked', want: { kind: 'enqueue', newStatus: 'toBeEvicted' } },
    { status: 'toBeEvicted', want: { kind: 'enqueue', newStatus: 'toBeEvicted' } },
    { status: 'evicted', want: { kind: 'deletePodsNow' } },
  ])('evictPods($status)', ({ status, want }) => {
    expect(evictPods(status)).toEqual(want);
  });

  it('pods arriving on an evicted node are deleted at once', () => {
    expect(evictPods('evicted')).toEqual({ kind: 'deletePodsNow' });
    const plan = deletePodsPlan([newPod('late', 'node0')], 'node0', isDaemonSetPodByOwner, 'uid-0');
    expect(plan.pods.map((p) => p.delete)).toEqual([true]);
    expect(evictPodsError('node0', 'boom')).toBe('unable to delete pods from node "node0": boom');
  });

  it('cancelPodEviction resets the status to unmarked', () => {
    expect(cancelPodEviction()).toEqual({ newStatus: 'unmarked' });
  });
});

describe('setPodTerminationReason', () => {
  it('sets NodeLost with upstream’s message', () => {
    expect(setPodTerminationReason(newPod('pod0', 'node0'), 'node0')).toEqual({
      reason: 'NodeLost',
      message: 'Node node0 which was running pod pod0 is unresponsive',
    });
  });
  it('does nothing when the pod already carries NodeLost', () => {
    expect(
      setPodTerminationReason(newPod('pod0', 'node0', { statusReason: 'NodeLost' }), 'node0'),
    ).toBeUndefined();
  });
  it('overwrites another reason', () => {
    expect(
      setPodTerminationReason(newPod('pod0', 'node0', { statusReason: 'Evicted' }), 'node0')?.reason,
    ).toBe('NodeLost');
  });
});

describe('DeletePods', () => {
  const node = 'node0';
  const plain = newPod('plain', node);
  const ds = newPod('ds', node, { ownerKind: 'DaemonSet' });
  const terminating = newPod('terminating', node, {
    deletionTimestamp: fakeNow,
    deletionGracePeriodSeconds: 30,
  });
  const lost = newPod('lost', node, { statusReason: 'NodeLost' });
  const elsewhere = newPod('elsewhere', 'node1');
  const nodeLost = (pod: Pod) => ({
    reason: 'NodeLost',
    message: `Node ${node} which was running pod ${pod.name} is unresponsive`,
  });
  const evictionEvent = (pod: Pod) => ({
    involvedObject: { kind: 'Pod', namespace: 'default', name: pod.name, uid: pod.uid },
    type: 'Normal',
    reason: 'NodeControllerEviction',
    message: `Marking for deletion Pod ${pod.name} from Node ${node}`,
    source: 'node-controller',
  });
  const deletingAllPods = {
    involvedObject: { kind: 'Node', name: node, uid: 'node0-uid' },
    type: 'Normal',
    reason: 'DeletingAllPods',
    message: 'Node node0 event: Deleting all Pods from Node node0.',
    source: 'node-controller',
  };

  describe('deletePodsPlan', () => {
    it('plans every rule in one pass', () => {
      const plan = deletePodsPlan(
        [plain, ds, terminating, lost, elsewhere],
        node,
        isDaemonSetPodByOwner,
        'node0-uid',
      );
      expect(plan).toEqual({
        nodeName: node,
        nodeEvent: deletingAllPods,
        pods: [
          {
            pod: plain,
            setTerminationReason: nodeLost(plain),
            delete: true,
            evictionEvent: evictionEvent(plain),
          },
          // DaemonSet pod: reason set, never deleted.
          { pod: ds, setTerminationReason: nodeLost(ds), skip: 'daemonSet', delete: false },
          // Already terminating: reason set, not deleted again.
          {
            pod: terminating,
            setTerminationReason: nodeLost(terminating),
            skip: 'terminating',
            delete: false,
          },
          // Already NodeLost: no status write, still deleted.
          { pod: lost, delete: true, evictionEvent: evictionEvent(lost) },
          // Bound elsewhere: untouched.
          { pod: elsewhere, skip: 'otherNode', delete: false },
        ],
      });
    });

    it('no pods: no DeletingAllPods event', () => {
      expect(deletePodsPlan([], node)).toEqual({ nodeName: node, pods: [] });
    });

    it('pods only on other nodes: the DeletingAllPods event is still recorded', () => {
      expect(deletePodsPlan([elsewhere], node).nodeEvent?.reason).toBe('DeletingAllPods');
    });

    it('default node UID is empty', () => {
      expect(deletePodsPlan([plain], node).nodeEvent?.involvedObject).toEqual({
        kind: 'Node',
        name: node,
        uid: '',
      });
    });

    it('the DaemonSet test can be replaced (upstream: DaemonSet selector match)', () => {
      const labelled = newPod('labelled', node);
      const plan = deletePodsPlan([labelled], node, (p) => p.name === 'labelled');
      expect(plan.pods[0]).toMatchObject({ skip: 'daemonSet', delete: false });
    });

    it('a terminating DaemonSet pod counts as terminating (checked first)', () => {
      const pod = newPod('dsterm', node, { ownerKind: 'DaemonSet', deletionGracePeriodSeconds: 0 });
      expect(deletePodsPlan([pod], node).pods[0]?.skip).toBe('terminating');
    });
  });

  describe('deletePodsOutcome', () => {
    const conflict = (message: string): WriteResult => ({ ok: false, reason: 'Conflict', message });
    const failure = (message: string): WriteResult => ({ ok: false, reason: 'Failed', message });

    it.each<{
      name: string;
      pods: Pod[];
      results: (DeletePodsPodResult | undefined)[];
      remaining: boolean;
      error: string | undefined;
      evictionEvents: Pod[];
    }>([
      {
        name: 'deleted pod: remaining',
        pods: [plain],
        results: [{ reasonUpdate: ok, delete: ok }],
        remaining: true,
        error: undefined,
        evictionEvents: [plain],
      },
      {
        name: 'DaemonSet pod: reason set but not deleted, nothing remaining',
        pods: [ds],
        results: [{ reasonUpdate: ok }],
        remaining: false,
        error: undefined,
        evictionEvents: [],
      },
      {
        name: 'terminating pod counted as remaining',
        pods: [terminating],
        results: [{ reasonUpdate: ok }],
        remaining: true,
        error: undefined,
        evictionEvents: [],
      },
      {
        name: 'delete NotFound continues with the next pod',
        pods: [plain, lost],
        results: [{ reasonUpdate: ok, delete: notFound }, { delete: ok }],
        remaining: true,
        error: undefined,
        evictionEvents: [plain, lost],
      },
      {
        name: 'delete NotFound only: nothing remaining',
        pods: [plain],
        results: [{ reasonUpdate: ok, delete: notFound }],
        remaining: false,
        error: undefined,
        evictionEvents: [plain],
      },
      {
        name: 'reason-update conflict is aggregated, the pod is skipped, later pods still processed',
        pods: [plain, lost],
        results: [{ reasonUpdate: conflict('the object has been modified') }, { delete: ok }],
        remaining: false,
        error: 'update status failed for pod "plain_default(plain-uid)": the object has been modified',
        evictionEvents: [lost],
      },
      {
        name: 'several conflicts aggregate',
        pods: [plain, ds],
        results: [{ reasonUpdate: conflict('c1') }, { reasonUpdate: conflict('c2') }],
        remaining: false,
        error:
          '[update status failed for pod "plain_default(plain-uid)": c1, update status failed for pod "ds_default(ds-uid)": c2]',
        evictionEvents: [],
      },
      {
        name: 'other reason-update errors are ignored: the pod is still deleted',
        pods: [plain],
        results: [{ reasonUpdate: failure('timeout'), delete: ok }],
        remaining: true,
        error: undefined,
        evictionEvents: [plain],
      },
      {
        name: 'a reason-update NotFound is ignored too',
        pods: [plain],
        results: [{ reasonUpdate: notFound, delete: notFound }],
        remaining: false,
        error: undefined,
        evictionEvents: [plain],
      },
      {
        name: 'other delete error aborts with (false, err); later pods untouched',
        pods: [lost, plain, ds],
        results: [{ delete: failure('forbidden') }, undefined, undefined],
        remaining: false,
        error: 'forbidden',
        evictionEvents: [lost],
      },
      {
        name: 'a delete conflict aborts as well',
        pods: [terminating, lost],
        results: [{ reasonUpdate: ok }, { delete: conflict('precondition failed') }],
        remaining: false,
        error: 'precondition failed',
        evictionEvents: [lost],
      },
      {
        name: 'abort wins over earlier conflicts',
        pods: [plain, lost],
        results: [{ reasonUpdate: conflict('c1') }, { delete: failure('boom') }],
        remaining: false,
        error: 'boom',
        evictionEvents: [lost],
      },
      {
        name: 'pods on other nodes need no results',
        pods: [elsewhere],
        results: [],
        remaining: false,
        error: undefined,
        evictionEvents: [],
      },
    ])('$name', ({ pods, results, remaining, error, evictionEvents }) => {
      const plan = deletePodsPlan(pods, node, isDaemonSetPodByOwner, 'node0-uid');
      expect(deletePodsOutcome(plan, results)).toEqual({
        remaining,
        error,
        events: [deletingAllPods, ...evictionEvents.map(evictionEvent)],
      });
    });

    it('no pods: no events, nothing remaining', () => {
      expect(deletePodsOutcome(deletePodsPlan([], node), [])).toEqual({
        remaining: false,
        error: undefined,
        events: [],
      });
    });

    it.each<{ name: string; results: (DeletePodsPodResult | undefined)[] }>([
      { name: 'missing reason-update result', results: [{ delete: ok }] },
      { name: 'missing delete result', results: [{ reasonUpdate: ok }] },
      { name: 'missing results for the pod', results: [] },
    ])('throws on a broken executor contract: $name', ({ results }) => {
      expect(() => deletePodsOutcome(deletePodsPlan([plain], node), results)).toThrow(/missing/);
    });
  });
});

describe('doEvictionPassResult', () => {
  it.each<{
    name: string;
    error: string | undefined;
    nodeFound: boolean;
    want: ReturnType<typeof doEvictionPassResult>;
  }>([
    {
      name: 'DeletePods succeeded: done, node evicted, eviction counted',
      error: undefined,
      nodeFound: true,
      want: { done: true, newStatus: 'evicted', countEviction: true },
    },
    {
      name: 'node gone from the lister: still done and evicted, not counted',
      error: undefined,
      nodeFound: false,
      want: { done: true, newStatus: 'evicted', countEviction: false },
    },
    {
      name: 'DeletePods failed: retried, status untouched',
      error: 'boom',
      nodeFound: true,
      want: { done: false, wait: 0 },
    },
  ])('$name', ({ error, nodeFound, want }) => {
    expect(doEvictionPassResult({ error }, nodeFound)).toEqual(want);
  });
});
