// Tests for shared/domain/nodeHealth.ts (upstream tryUpdateNodeHealth).
//
// Upstream's monitorNodeHealth tests (T3, T4, T5 in docs/upstream.md#nlc-tests) drive a fake API server and
// count requests. Here each upstream monitor pass is one tryUpdateNodeHealth call: pass 1 at fakeNow
// with no saved health, pass 2 at fakeNow + timeToPass with the `nodeHealth` that pass 1 returned and
// the new status/lease. Upstream's expectations translate as follows:
// - expectedRequestCount: every pass costs one List (`syncNodeStore` before each monitorNodeHealth),
//   and every UpdateStatus costs one more, i.e. each pass whose result has `statusUpdate`. So
//   RequestCount = number of passes + number of passes with `statusUpdate` present.
// - expectedNodes (the UpdatedNodeStatuses): the exact `statusUpdate` conditions of the pass that
//   writes (capacity is not part of our trimmed Node, so "capacity preserved" has no counterpart).
// - expectedPodStatusUpdate: monitorNodeHealth calls MarkPodsNotReady when it sees the observed Ready
//   condition True and the current one not True; we assert that transition.
import { describe, expect, it } from 'vitest';
import {
  tryUpdateNodeHealth,
  type NodeHealthData,
  type NodeHealthUpdate,
} from '../../../shared/domain/nodeHealth.js';
import type {
  ConditionStatus,
  EpochMillis,
  Lease,
  Millis,
  Node,
  NodeCondition,
} from '../../../shared/domain/types.js';

// Upstream test constants: testNodeMonitorGracePeriod = 50s, testNodeStartupGracePeriod = 60s.
const config = { nodeMonitorGracePeriod: 50_000, nodeStartupGracePeriod: 60_000 };
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

function node0(creationTimestamp: EpochMillis, conditions: readonly NodeCondition[] = []): Node {
  return {
    name: 'node0',
    uid: 'node0-uid',
    creationTimestamp,
    labels: {},
    taints: [],
    unschedulable: false,
    conditions,
  };
}

function cond(
  type: string,
  status: ConditionStatus,
  lastHeartbeatTime: EpochMillis,
  lastTransitionTime: EpochMillis,
): NodeCondition {
  return { type, status, lastHeartbeatTime, lastTransitionTime };
}

const ready = (status: ConditionStatus, lht: EpochMillis, ltt: EpochMillis): NodeCondition =>
  cond('Ready', status, lht, ltt);

/** A condition the kubelet never posted, as upstream appends it. */
function neverUpdated(type: string, created: EpochMillis, transition: EpochMillis): NodeCondition {
  return {
    type,
    status: 'Unknown',
    reason: 'NodeStatusNeverUpdated',
    message: 'Kubelet never posted node status.',
    lastHeartbeatTime: created,
    lastTransitionTime: transition,
  };
}

/** A condition the kubelet stopped refreshing, as upstream rewrites it (heartbeat kept). */
function stoppedPosting(type: string, heartbeat: EpochMillis, transition: EpochMillis): NodeCondition {
  return {
    type,
    status: 'Unknown',
    reason: 'NodeStatusUnknown',
    message: 'Kubelet stopped posting node status.',
    lastHeartbeatTime: heartbeat,
    lastTransitionTime: transition,
  };
}

const pressures = ['MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;

/** Ready, MemoryPressure, DiskPressure, PIDPressure, all NodeStatusNeverUpdated. */
function allNeverUpdated(created: EpochMillis, transition: EpochMillis): NodeCondition[] {
  return ['Ready', ...pressures].map((type) => neverUpdated(type, created, transition));
}

const lease = (renewTime: EpochMillis): Lease => ({ renewTime });

interface Pass {
  readonly node: Node;
  readonly lease?: Lease;
  readonly now: EpochMillis;
}

/** Runs passes in sequence, each storing the `nodeHealth` of the previous one (the success path). */
function runPasses(passes: readonly Pass[], saved?: NodeHealthData): NodeHealthUpdate[] {
  const results: NodeHealthUpdate[] = [];
  let health = saved;
  for (const pass of passes) {
    const result = tryUpdateNodeHealth(pass.node, pass.lease, health, pass.now, config);
    results.push(result);
    health = result.nodeHealth;
  }
  return results;
}

/** One List per pass, one more request per UpdateStatus. */
function requestCount(results: readonly NodeHealthUpdate[]): number {
  return results.reduce((n, r) => n + 1 + (r.statusUpdate === undefined ? 0 : 1), 0);
}

/** monitorNodeHealth's MarkPodsNotReady trigger: observed True, current present and not True. */
function marksPodsNotReady(r: NodeHealthUpdate): boolean {
  return (
    r.observedReadyCondition.status === 'True' &&
    r.currentReadyCondition !== undefined &&
    r.currentReadyCondition.status !== 'True'
  );
}

/** The fields of an upstream monitorNodeHealth table case that concern node0. */
interface MonitorCase {
  readonly name: string;
  readonly node: Node;
  readonly lease?: Lease;
  /** Absent: upstream runs only the first pass. */
  readonly timeToPass?: Millis;
  /** Upstream replaces Existing[0].Status; an absent newNodeStatus is an empty status. */
  readonly newNodeStatus?: readonly NodeCondition[];
  /** Upstream's syncLeaseStore(nil) is a no-op, so an absent newLease leaves the first lease in place. */
  readonly newLease?: Lease;
  readonly expectedRequestCount: number;
  /** Per pass: the conditions UpdateStatus writes, or undefined when that pass makes no UpdateStatus. */
  readonly expectedStatusUpdates: readonly (readonly NodeCondition[] | undefined)[];
  readonly expectedPodStatusUpdate: boolean;
}

type MonitorInput = Pick<MonitorCase, 'node' | 'lease' | 'timeToPass' | 'newNodeStatus' | 'newLease'>;

function runMonitorCase(c: MonitorInput, fakeNow: EpochMillis): NodeHealthUpdate[] {
  const passes: Pass[] = [{ node: c.node, lease: c.lease, now: fakeNow }];
  if (c.timeToPass !== undefined) {
    passes.push({
      node: { ...c.node, conditions: c.newNodeStatus ?? [] },
      lease: c.newLease ?? c.lease,
      now: fakeNow + c.timeToPass,
    });
  }
  return runPasses(passes);
}

function checkMonitorCase(c: MonitorCase, fakeNow: EpochMillis): void {
  const results = runMonitorCase(c, fakeNow);
  expect(results.map((r) => r.statusUpdate)).toEqual(c.expectedStatusUpdates);
  expect(results.map((r) => 'statusUpdate' in r)).toEqual(
    c.expectedStatusUpdates.map((u) => u !== undefined),
  );
  expect(requestCount(results)).toBe(c.expectedRequestCount);
  expect(results.some(marksPodsNotReady)).toBe(c.expectedPodStatusUpdate);
}

describe('TestTryUpdateNodeHealth', () => {
  const fakeNow = Date.parse('2017-01-01T12:00:00Z');
  const fakeOld = Date.parse('2016-01-01T12:00:00Z');

  it.each([
    {
      name: 'Status true',
      node: node0(fakeNow, [ready('True', fakeNow, fakeNow)]),
      want: 'True',
      write: false,
    },
    {
      name: 'Status false',
      node: node0(fakeNow, [ready('False', fakeNow, fakeNow)]),
      want: 'False',
      write: false,
    },
    {
      name: 'Status unknown',
      node: node0(fakeNow, [ready('Unknown', fakeNow, fakeNow)]),
      want: 'Unknown',
      write: false,
    },
    { name: 'Status nil', node: node0(fakeNow, []), want: undefined, write: false },
    {
      name: 'Status true - after grace period',
      node: node0(fakeOld, [ready('True', fakeOld, fakeOld)]),
      want: 'Unknown',
      write: true,
    },
    {
      name: 'Status false - after grace period',
      node: node0(fakeOld, [ready('False', fakeOld, fakeOld)]),
      want: 'Unknown',
      write: true,
    },
    {
      // Already Unknown: the Ready condition does not change, so nothing is written.
      name: 'Status unknown - after grace period',
      node: node0(fakeOld, [ready('Unknown', fakeOld, fakeOld)]),
      want: 'Unknown',
      write: false,
    },
    { name: 'Status nil - after grace period', node: node0(fakeOld, []), want: 'Unknown', write: true },
  ] as const)('$name', ({ node, want, write }) => {
    // Upstream seeds the map with the node's own status, probe = readyTransition = creation.
    const saved: NodeHealthData = {
      status: node.conditions,
      probeTimestamp: node.creationTimestamp,
      readyTransitionTimestamp: node.creationTimestamp,
    };
    const result = tryUpdateNodeHealth(node, undefined, saved, fakeNow, config);
    const savedReady = result.nodeHealth.status.find((c) => c.type === 'Ready');
    // Upstream's assertion: the returned current Ready status equals the saved one (both nil is fine).
    expect(result.currentReadyCondition?.status).toBe(savedReady?.status);
    expect(result.currentReadyCondition?.status).toBe(want);
    expect('statusUpdate' in result).toBe(write);
  });
});

describe('TestMonitorNodeHealthUpdateStatus', () => {
  const fakeNow = Date.parse('2015-01-01T12:00:00Z');
  const created2012 = Date.parse('2012-01-01T00:00:00Z');

  it.each<MonitorCase>([
    {
      name: 'Node created long time ago, without status: Expect Unknown status posted from node controller.',
      node: node0(created2012),
      expectedRequestCount: 2, // List+Update
      expectedStatusUpdates: [allNeverUpdated(created2012, fakeNow)],
      expectedPodStatusUpdate: false, // Pod was never scheduled
    },
    {
      name: 'Node created recently, without status. Expect no action from node controller (within startup grace period).',
      node: node0(fakeNow),
      expectedRequestCount: 1, // List
      expectedStatusUpdates: [undefined],
      expectedPodStatusUpdate: false,
    },
    {
      name: 'Node created long time ago, with status updated by kubelet exceeds grace period. Expect Unknown status posted from node controller.',
      node: node0(created2012, [ready('True', fakeNow, fakeNow)]),
      timeToPass: HOUR,
      newNodeStatus: [ready('True', fakeNow, fakeNow)],
      expectedRequestCount: 3, // (List+)List+Update
      expectedStatusUpdates: [
        undefined,
        [
          stoppedPosting('Ready', fakeNow, fakeNow + HOUR),
          ...pressures.map((t) => neverUpdated(t, created2012, fakeNow + HOUR)),
        ],
      ],
      expectedPodStatusUpdate: true,
    },
    {
      name: 'Node created long time ago, with status updated recently. Expect no action from node controller (within monitor grace period).',
      node: node0(created2012, [ready('True', fakeNow, fakeNow)]),
      expectedRequestCount: 1, // List
      expectedStatusUpdates: [undefined],
      expectedPodStatusUpdate: false,
    },
  ])('$name', (c) => {
    checkMonitorCase(c, fakeNow);
  });
});

describe('TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease', () => {
  const nodeCreationTime = Date.parse('2012-01-01T00:00:00Z');
  const fakeNow = Date.parse('2015-01-01T12:00:00Z');
  const readyAndDiskPressure = (heartbeat: EpochMillis): NodeCondition[] => [
    ready('True', heartbeat, fakeNow),
    cond('DiskPressure', 'False', heartbeat, fakeNow),
  ];

  it.each<MonitorCase>([
    {
      name: 'Node created recently, without status. Node lease is missing.',
      node: node0(fakeNow),
      expectedRequestCount: 1, // List
      expectedStatusUpdates: [undefined],
      expectedPodStatusUpdate: false,
    },
    {
      name: 'Node created recently, without status. Node lease is renewed recently.',
      node: node0(fakeNow),
      lease: lease(fakeNow),
      expectedRequestCount: 1, // List
      expectedStatusUpdates: [undefined],
      expectedPodStatusUpdate: false,
    },
    {
      name: 'Node created long time ago, without status. Node lease is missing.',
      node: node0(nodeCreationTime),
      expectedRequestCount: 2, // List+Update
      expectedStatusUpdates: [allNeverUpdated(nodeCreationTime, fakeNow)],
      expectedPodStatusUpdate: false, // Pod was never scheduled because the node was never ready.
    },
    {
      name: 'Node created long time ago, without status. Node lease is renewed recently.',
      node: node0(nodeCreationTime),
      lease: lease(fakeNow),
      timeToPass: HOUR,
      newLease: lease(fakeNow + HOUR), // Lease is renewed after 1 hour.
      expectedRequestCount: 2, // List+List
      expectedStatusUpdates: [undefined, undefined],
      expectedPodStatusUpdate: false,
    },
    {
      name: 'Node created long time ago, without status. Node lease is expired.',
      node: node0(nodeCreationTime),
      lease: lease(fakeNow),
      timeToPass: HOUR,
      newLease: lease(fakeNow), // Lease is not renewed after 1 hour.
      expectedRequestCount: 3, // List+List+Update
      expectedStatusUpdates: [undefined, allNeverUpdated(nodeCreationTime, fakeNow + HOUR)],
      expectedPodStatusUpdate: false,
    },
    {
      name: 'Node created long time ago, with status updated by kubelet exceeds grace period. Node lease is renewed.',
      node: node0(nodeCreationTime, readyAndDiskPressure(fakeNow)),
      lease: lease(fakeNow),
      timeToPass: HOUR,
      newNodeStatus: readyAndDiskPressure(fakeNow), // Node status hasn't been updated for 1 hour.
      newLease: lease(fakeNow + HOUR), // Lease is renewed after 1 hour.
      expectedRequestCount: 2, // List+List
      expectedStatusUpdates: [undefined, undefined],
      expectedPodStatusUpdate: false,
    },
    {
      name: 'Node created long time ago, with status updated by kubelet recently. Node lease is expired.',
      node: node0(nodeCreationTime, readyAndDiskPressure(fakeNow)),
      lease: lease(fakeNow),
      timeToPass: HOUR,
      newNodeStatus: readyAndDiskPressure(fakeNow + HOUR), // Node status is updated after 1 hour.
      newLease: lease(fakeNow), // Lease is not renewed after 1 hour.
      expectedRequestCount: 2, // List+List
      expectedStatusUpdates: [undefined, undefined],
      expectedPodStatusUpdate: false,
    },
    {
      name: 'Node created long time ago, with status updated by kubelet exceeds grace period. Node lease is also expired.',
      node: node0(nodeCreationTime, [ready('True', fakeNow, fakeNow)]),
      lease: lease(fakeNow),
      timeToPass: HOUR,
      newNodeStatus: [ready('True', fakeNow, fakeNow)], // Node status hasn't been updated for 1 hour.
      newLease: lease(fakeNow), // Lease is not renewed after 1 hour.
      expectedRequestCount: 3, // List+List+Update
      expectedStatusUpdates: [
        undefined,
        [
          stoppedPosting('Ready', fakeNow, fakeNow + HOUR),
          ...pressures.map((t) => neverUpdated(t, nodeCreationTime, fakeNow + HOUR)),
        ],
      ],
      expectedPodStatusUpdate: true,
    },
  ])('$name', (c) => {
    checkMonitorCase(c, fakeNow);
  });

  it('stores the marked status both on success and for the failure path (Node lease is expired)', () => {
    // Case 5, pass 2: no Ready condition, so the entry's status is the node's status, which upstream
    // mutates afterwards; both stored outcomes see the four NeverUpdated conditions.
    const [, pass2] = runMonitorCase(
      { node: node0(nodeCreationTime), lease: lease(fakeNow), timeToPass: HOUR, newLease: lease(fakeNow) },
      fakeNow,
    );
    const marked = allNeverUpdated(nodeCreationTime, fakeNow + HOUR);
    expect(pass2?.nodeHealth).toStrictEqual({
      status: marked,
      probeTimestamp: fakeNow,
      readyTransitionTimestamp: fakeNow + HOUR,
      lease: lease(fakeNow),
    });
    expect(pass2?.nodeHealthIfUpdateFails).toStrictEqual({
      status: marked,
      probeTimestamp: fakeNow, // set by the lease in pass 1
      readyTransitionTimestamp: nodeCreationTime, // first seen without Ready: creation time
      lease: lease(fakeNow),
    });
  });
});

describe('TestMonitorNodeHealthMarkPodsNotReady', () => {
  const fakeNow = Date.parse('2015-01-01T12:00:00Z');
  const created2012 = Date.parse('2012-01-01T00:00:00Z');

  it.each([
    {
      name: 'Node created recently, without status. Expect no action from node controller (within startup grace period).',
      node: node0(fakeNow),
      timeToPass: undefined,
      newNodeStatus: undefined,
      expectedPodStatusUpdate: false,
    },
    {
      name: 'Node created long time ago, with status updated recently. Expect no action from node controller (within monitor grace period).',
      node: node0(created2012, [ready('True', fakeNow, fakeNow)]),
      timeToPass: undefined,
      newNodeStatus: undefined,
      expectedPodStatusUpdate: false,
    },
    {
      name: 'Node created long time ago, with status updated by kubelet exceeds grace period. Expect pods status updated and Unknown node status posted from node controller',
      node: node0(created2012, [ready('True', fakeNow, fakeNow)]),
      timeToPass: MINUTE,
      newNodeStatus: [ready('True', fakeNow, fakeNow)],
      expectedPodStatusUpdate: true,
    },
  ])('$name', ({ node, timeToPass, newNodeStatus, expectedPodStatusUpdate }) => {
    const results = runMonitorCase({ node, timeToPass, newNodeStatus }, fakeNow);
    expect(results.some(marksPodsNotReady)).toBe(expectedPodStatusUpdate);
    // The transition happens in the pass that writes Unknown, and only then.
    expect(results.map(marksPodsNotReady)).toEqual(results.map((r) => r.statusUpdate !== undefined));
  });
});

// Branches no upstream test covers, with expectations derived from the upstream code
// (docs/upstream.md#node-health).
describe('tryUpdateNodeHealth branches', () => {
  const t0 = Date.parse('2015-01-01T12:00:00Z');
  const created = Date.parse('2012-01-01T00:00:00Z');

  describe('first sight and the nodeHealth branches', () => {
    it('first sight with a Ready condition: probe and ready transition are now, monitor grace applies', () => {
      const node = node0(created, [ready('False', t0 - HOUR, t0 - HOUR)]);
      const r = tryUpdateNodeHealth(node, undefined, undefined, t0, config);
      expect(r.gracePeriod).toBe(50_000);
      expect(r.observedReadyCondition).toStrictEqual(ready('False', t0 - HOUR, t0 - HOUR));
      expect(r.currentReadyCondition).toStrictEqual(ready('False', t0 - HOUR, t0 - HOUR));
      expect(r.conditions).toStrictEqual(node.conditions);
      expect(r).not.toHaveProperty('statusUpdate');
      expect(r.nodeHealth).toStrictEqual({
        status: node.conditions,
        probeTimestamp: t0,
        readyTransitionTimestamp: t0,
      });
      expect(r.nodeHealthIfUpdateFails).toStrictEqual(r.nodeHealth);
    });

    it('first sight without a Ready condition: probe and ready transition are the creation time, startup grace applies', () => {
      const node = node0(t0 - 30 * SECOND);
      const r = tryUpdateNodeHealth(node, undefined, undefined, t0, config);
      expect(r.gracePeriod).toBe(60_000);
      // The fake condition has no reason or message.
      expect(r.observedReadyCondition).toStrictEqual({
        type: 'Ready',
        status: 'Unknown',
        lastHeartbeatTime: t0 - 30 * SECOND,
        lastTransitionTime: t0 - 30 * SECOND,
      });
      expect(r.currentReadyCondition).toBeUndefined();
      expect(r.nodeHealth).toStrictEqual({
        status: [],
        probeTimestamp: t0 - 30 * SECOND,
        readyTransitionTimestamp: t0 - 30 * SECOND,
      });
    });

    it('saved entry without a Ready condition, node now has one: controller-restart branch, probe and transition are now', () => {
      const saved: NodeHealthData = {
        status: [],
        probeTimestamp: created,
        readyTransitionTimestamp: created,
        lease: lease(t0 - MINUTE),
      };
      const node = node0(created, [ready('True', t0 - HOUR, t0 - HOUR)]);
      const r = tryUpdateNodeHealth(node, lease(t0 - MINUTE), saved, t0, config);
      // The saved lease is dropped by the replacement, and the unchanged lease does not restore it.
      expect(r.nodeHealth).toStrictEqual({
        status: node.conditions,
        probeTimestamp: t0,
        readyTransitionTimestamp: t0,
      });
    });

    it('heartbeat changed, transition time unchanged: probe is now, ready transition kept', () => {
      const saved: NodeHealthData = {
        status: [ready('True', t0 - MINUTE, t0 - HOUR)],
        probeTimestamp: t0 - MINUTE,
        readyTransitionTimestamp: t0 - 2 * HOUR,
      };
      const node = node0(created, [ready('True', t0 - 10 * SECOND, t0 - HOUR)]);
      const r = tryUpdateNodeHealth(node, undefined, saved, t0, config);
      expect(r.nodeHealth).toStrictEqual({
        status: node.conditions,
        probeTimestamp: t0,
        readyTransitionTimestamp: t0 - 2 * HOUR,
      });
    });

    it('heartbeat and transition time changed: probe and ready transition are now', () => {
      const saved: NodeHealthData = {
        status: [ready('True', t0 - MINUTE, t0 - HOUR)],
        probeTimestamp: t0 - MINUTE,
        readyTransitionTimestamp: t0 - 2 * HOUR,
      };
      const node = node0(created, [ready('False', t0 - 10 * SECOND, t0 - 10 * SECOND)]);
      const r = tryUpdateNodeHealth(node, undefined, saved, t0, config);
      expect(r.nodeHealth).toStrictEqual({
        status: node.conditions,
        probeTimestamp: t0,
        readyTransitionTimestamp: t0,
      });
    });

    it('a heartbeat appearing where there was none counts as a change', () => {
      const saved: NodeHealthData = {
        status: [{ type: 'Ready', status: 'True' }],
        probeTimestamp: t0 - MINUTE,
        readyTransitionTimestamp: t0 - HOUR,
      };
      const node = node0(created, [{ type: 'Ready', status: 'True', lastHeartbeatTime: t0 - SECOND }]);
      const r = tryUpdateNodeHealth(node, undefined, saved, t0, config);
      // Transition times are both absent (Go zero time): equal, so the ready transition is kept.
      expect(r.nodeHealth).toStrictEqual({
        status: node.conditions,
        probeTimestamp: t0,
        readyTransitionTimestamp: t0 - HOUR,
      });
    });

    describe('heartbeatIsProbe: false (the functions: the digest is the only probe source)', () => {
      const saved: NodeHealthData = {
        status: [ready('True', t0 - 5 * MINUTE, t0 - HOUR)],
        probeTimestamp: t0 - 55 * SECOND,
        readyTransitionTimestamp: t0 - 2 * HOUR,
      };

      it('a heartbeat the copy had not seen (a 5-minute status post) is not a probe: marked Unknown', () => {
        // The kubelet posted status 4 minutes ago (heartbeat only), renewed its lease until 55 s ago
        // (the digest's probe), then died. A re-read shows the newer heartbeat.
        const node = node0(created, [ready('True', t0 - MINUTE, t0 - HOUR)]);
        const r = tryUpdateNodeHealth(node, lease(t0 - 55 * SECOND), saved, t0, config, {
          heartbeatIsProbe: false,
        });
        expect(r.nodeHealthIfUpdateFails.probeTimestamp).toBe(t0 - 55 * SECOND);
        expect(r.statusUpdate?.find((c) => c.type === 'Ready')).toMatchObject({
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          lastHeartbeatTime: t0 - MINUTE,
        });
        // The saved status follows the node, so the same heartbeat is not "new" on the next pass.
        expect(r.nodeHealth.status.find((c) => c.type === 'Ready')?.lastHeartbeatTime).toBe(t0 - MINUTE);
        // Upstream (heartbeatIsProbe true) takes the same re-read as a probe at now: no Unknown.
        const upstream = tryUpdateNodeHealth(node, lease(t0 - 55 * SECOND), saved, t0, config);
        expect(upstream.statusUpdate).toBeUndefined();
        expect(upstream.nodeHealth.probeTimestamp).toBe(t0);
      });

      it('a Ready transition still moves the ready transition time; the probe stays', () => {
        const node = node0(created, [ready('False', t0 - 10 * SECOND, t0 - 10 * SECOND)]);
        const r = tryUpdateNodeHealth(node, lease(t0 - 20 * SECOND), saved, t0, config, {
          heartbeatIsProbe: false,
        });
        expect(r.nodeHealth).toStrictEqual({
          status: node.conditions,
          probeTimestamp: t0 - 20 * SECOND,
          readyTransitionTimestamp: t0,
          lease: lease(t0 - 20 * SECOND),
        });
      });

      it('a Ready condition changed under the same heartbeat (an earlier attempt wrote it): the saved status follows', () => {
        // The status write landed, its commit did not: the retry reads the node already Unknown.
        const unknown = {
          ...ready('Unknown', t0 - 5 * MINUTE, t0 - 2 * SECOND),
          reason: 'NodeStatusUnknown',
        };
        const node = node0(created, [unknown]);
        const r = tryUpdateNodeHealth(node, lease(t0 - 55 * SECOND), saved, t0, config, {
          heartbeatIsProbe: false,
        });
        expect(r.statusUpdate).toBeUndefined(); // Ready is Unknown already: nothing to write
        expect(r.nodeHealth.status.find((c) => c.type === 'Ready')).toStrictEqual(unknown);
        expect(r.nodeHealth.probeTimestamp).toBe(t0 - 55 * SECOND);
        expect(r.nodeHealth.readyTransitionTimestamp).toBe(t0);
        // Upstream keeps its saved status here (its informer's copy is the node's).
        const upstream = tryUpdateNodeHealth(node, lease(t0 - 55 * SECOND), saved, t0, config);
        expect(upstream.nodeHealth.status).toStrictEqual(saved.status);
      });

      it('first sight is still a fresh probe (upstream: a controller that starts gives a full grace period)', () => {
        const node = node0(created, [ready('True', t0 - HOUR, t0 - HOUR)]);
        const r = tryUpdateNodeHealth(node, undefined, undefined, t0, config, { heartbeatIsProbe: false });
        expect(r.nodeHealth.probeTimestamp).toBe(t0);
      });
    });

    it('heartbeat unchanged: the saved entry is kept as it was, probe not advanced', () => {
      const saved: NodeHealthData = {
        status: [ready('True', t0 - 20 * SECOND, t0 - HOUR)],
        probeTimestamp: t0 - 20 * SECOND,
        readyTransitionTimestamp: t0 - HOUR,
        lease: lease(t0 - 30 * SECOND),
      };
      // The node reports something else for a pressure condition, but Ready's heartbeat is the same.
      const node = node0(created, [
        ready('True', t0 - 20 * SECOND, t0 - HOUR),
        cond('MemoryPressure', 'True', t0, t0),
      ]);
      const r = tryUpdateNodeHealth(node, undefined, saved, t0, config);
      expect(r.nodeHealth).toStrictEqual(saved);
      expect(r.nodeHealthIfUpdateFails).toStrictEqual(saved);
    });
  });

  describe('lease', () => {
    const saved: NodeHealthData = {
      status: [ready('True', t0 - 30 * SECOND, t0 - HOUR)],
      probeTimestamp: t0 - 30 * SECOND,
      readyTransitionTimestamp: t0 - HOUR,
      lease: lease(t0 - 20 * SECOND),
    };
    const node = node0(created, [ready('True', t0 - 30 * SECOND, t0 - HOUR)]);

    it.each([
      {
        // Deviation: the probe is the instant the relay observed the renewal, not the pass time.
        name: 'renewed (later renewTime): stored, probe = the observed renewal instant',
        observed: lease(t0 - SECOND),
        probe: t0 - SECOND,
        stored: lease(t0 - SECOND),
      },
      {
        name: 'same renewTime: probe kept',
        observed: lease(t0 - 20 * SECOND),
        probe: t0 - 30 * SECOND,
        stored: lease(t0 - 20 * SECOND),
      },
      {
        name: 'earlier renewTime: probe kept, saved lease kept',
        observed: lease(t0 - MINUTE),
        probe: t0 - 30 * SECOND,
        stored: lease(t0 - 20 * SECOND),
      },
      {
        name: 'missing: probe kept, saved lease kept',
        observed: undefined,
        probe: t0 - 30 * SECOND,
        stored: lease(t0 - 20 * SECOND),
      },
    ])('$name', ({ observed, probe, stored }) => {
      const r = tryUpdateNodeHealth(node, observed, saved, t0, config);
      expect(r.nodeHealth.probeTimestamp).toBe(probe);
      expect(r.nodeHealth.lease).toStrictEqual(stored);
    });

    it('no saved lease: any observed lease counts as renewed, but never moves the probe back', () => {
      const r = tryUpdateNodeHealth(node, lease(created), { ...saved, lease: undefined }, t0, config);
      expect(r.nodeHealth).toStrictEqual({ ...saved, lease: lease(created) });
      const newer = tryUpdateNodeHealth(node, lease(t0 - SECOND), { ...saved, lease: undefined }, t0, config);
      expect(newer.nodeHealth).toStrictEqual({
        ...saved,
        lease: lease(t0 - SECOND),
        probeTimestamp: t0 - SECOND,
      });
    });

    it('after a cold start the probe is rebuilt from the digest: a node silent for 40s is not given a fresh grace', () => {
      // The store kept an old probe (health is not written on every renewal); the digest says the relay
      // last saw this node 40s ago. Upstream (probe = now) would restart its grace period here.
      const stale: NodeHealthData = { ...saved, probeTimestamp: t0 - HOUR, lease: lease(t0 - HOUR) };
      const r = tryUpdateNodeHealth(node, lease(t0 - 40 * SECOND), stale, t0, config);
      expect(r.nodeHealth.probeTimestamp).toBe(t0 - 40 * SECOND);
      const tenSecondsLater = tryUpdateNodeHealth(
        node,
        lease(t0 - 40 * SECOND),
        r.nodeHealth,
        t0 + 11 * SECOND,
        config,
      );
      expect(tenSecondsLater.currentReadyCondition?.status).toBe('Unknown');
    });

    it('a heartbeat replacement drops the saved lease (docs/upstream.md#quirk-7), which no longer bumps the probe', () => {
      // Upstream: the same lease then looks renewed on the next pass and sets the probe to now, delaying
      // the Unknown marking by one period. With the probe at the observed renewal instant, re-storing an
      // old lease cannot move the probe, so the marking comes grace after the last heartbeat.
      const L = lease(t0);
      const [p1, p2, p3, p4] = runPasses([
        { node: node0(created, [ready('True', t0, t0)]), lease: L, now: t0 },
        { node: node0(created, [ready('True', t0 + 10 * SECOND, t0)]), lease: L, now: t0 + 10 * SECOND },
        { node: node0(created, [ready('True', t0 + 10 * SECOND, t0)]), lease: L, now: t0 + 40 * SECOND },
        { node: node0(created, [ready('True', t0 + 10 * SECOND, t0)]), lease: L, now: t0 + 65 * SECOND },
      ]);
      expect(p1?.nodeHealth).toMatchObject({ probeTimestamp: t0, lease: L });
      expect(p2?.nodeHealth.probeTimestamp).toBe(t0 + 10 * SECOND);
      expect(p2?.nodeHealth).not.toHaveProperty('lease');
      expect(p3?.nodeHealth).toMatchObject({ probeTimestamp: t0 + 10 * SECOND, lease: L });
      expect(p4?.statusUpdate).toStrictEqual([
        stoppedPosting('Ready', t0 + 10 * SECOND, t0 + 65 * SECOND),
        ...pressures.map((t) => neverUpdated(t, created, t0 + 65 * SECOND)),
      ]);
    });
  });

  describe('staleness and marking', () => {
    const saved: NodeHealthData = {
      status: [ready('True', t0, t0)],
      probeTimestamp: t0,
      readyTransitionTimestamp: t0,
    };
    const node = node0(created, [ready('True', t0, t0)]);

    it('exactly at probe + grace: not stale', () => {
      const r = tryUpdateNodeHealth(node, undefined, saved, t0 + 50_000, config);
      expect(r).not.toHaveProperty('statusUpdate');
      expect(r.conditions).toBe(node.conditions);
      expect(r.currentReadyCondition).toStrictEqual(ready('True', t0, t0));
    });

    it('one millisecond past probe + grace: stale', () => {
      const r = tryUpdateNodeHealth(node, undefined, saved, t0 + 50_001, config);
      expect(r.statusUpdate?.[0]).toStrictEqual(stoppedPosting('Ready', t0, t0 + 50_001));
    });

    it('keeps positions, leaves NetworkUnavailable and already-Unknown conditions alone, appends the missing ones in order', () => {
      const pidUnknown: NodeCondition = {
        type: 'PIDPressure',
        status: 'Unknown',
        reason: 'KubeletSaysSo',
        message: 'kept',
        lastHeartbeatTime: t0,
        lastTransitionTime: t0 - HOUR,
      };
      const n = node0(created, [
        cond('NetworkUnavailable', 'False', t0, t0 - HOUR),
        pidUnknown,
        cond('MemoryPressure', 'True', t0, t0 - HOUR),
        ready('False', t0, t0 - HOUR),
      ]);
      const now = t0 + HOUR;
      const r = tryUpdateNodeHealth(n, undefined, { ...saved, status: n.conditions }, now, config);
      expect(r.statusUpdate).toStrictEqual([
        cond('NetworkUnavailable', 'False', t0, t0 - HOUR),
        pidUnknown,
        stoppedPosting('MemoryPressure', t0, now),
        stoppedPosting('Ready', t0, now),
        neverUpdated('DiskPressure', created, now),
      ]);
      expect(r.conditions).toStrictEqual(r.statusUpdate);
      expect(r.observedReadyCondition).toStrictEqual(ready('False', t0, t0 - HOUR));
      expect(r.currentReadyCondition).toStrictEqual(stoppedPosting('Ready', t0, now));
      // Ready False -> Unknown: written, but no MarkPodsNotReady (observed was not True).
      expect(marksPodsNotReady(r)).toBe(false);
    });

    it('only the first condition of a type is marked, like GetNodeCondition', () => {
      const n = node0(created, [ready('True', t0, t0), ready('True', t0, t0)]);
      const r = tryUpdateNodeHealth(n, undefined, { ...saved, status: n.conditions }, t0 + HOUR, config);
      expect(r.conditions.slice(0, 2)).toStrictEqual([
        stoppedPosting('Ready', t0, t0 + HOUR),
        ready('True', t0, t0),
      ]);
    });

    it('Ready already Unknown: no write even though pressure conditions change; the kept entry does not see the marking', () => {
      const readyUnknown = stoppedPosting('Ready', t0, t0);
      const n = node0(created, [readyUnknown, cond('MemoryPressure', 'False', t0, t0 - HOUR)]);
      const keptSaved: NodeHealthData = {
        status: n.conditions,
        probeTimestamp: t0,
        readyTransitionTimestamp: t0,
      };
      const now = t0 + HOUR;
      const r = tryUpdateNodeHealth(n, undefined, keptSaved, now, config);
      expect(r).not.toHaveProperty('statusUpdate');
      expect(r.conditions).toStrictEqual([
        readyUnknown,
        stoppedPosting('MemoryPressure', t0, now),
        neverUpdated('DiskPressure', created, now),
        neverUpdated('PIDPressure', created, now),
      ]);
      expect(r.currentReadyCondition).toStrictEqual(readyUnknown);
      expect(r.observedReadyCondition).toStrictEqual(readyUnknown);
      expect(r.nodeHealth).toStrictEqual(keptSaved);
      expect(r.nodeHealth.status).toHaveLength(2);
    });
  });

  describe('Upstream quirk: the removed-Ready-condition branch is unreachable (T1 case 8)', () => {
    // Pass 1 sees Ready True; then the kubelet's status loses every condition.
    const first = runPasses([{ node: node0(t0, [ready('True', t0, t0)]), now: t0 }])[0]!;

    it('within the startup grace from the old probe: nothing written, old timestamps kept', () => {
      // 55s: stale under the 50s monitor grace, but the startup grace (60s) applies without Ready.
      const r = tryUpdateNodeHealth(node0(t0, []), undefined, first.nodeHealth, t0 + 55 * SECOND, config);
      expect(r.gracePeriod).toBe(60_000);
      expect(r).not.toHaveProperty('statusUpdate');
      expect(r.currentReadyCondition).toBeUndefined();
      // The status is replaced by the node's, the probe and ready transition are not advanced.
      expect(r.nodeHealth).toStrictEqual({ status: [], probeTimestamp: t0, readyTransitionTimestamp: t0 });
    });

    it('past the startup grace from the old probe: four NeverUpdated conditions written, no MarkPodsNotReady', () => {
      const now = t0 + 60 * MINUTE;
      const r = tryUpdateNodeHealth(node0(t0, []), undefined, first.nodeHealth, now, config);
      expect(r.statusUpdate).toStrictEqual(allNeverUpdated(t0, now));
      expect(r.observedReadyCondition.status).toBe('Unknown');
      expect(marksPodsNotReady(r)).toBe(false);
      expect(r.nodeHealth).toStrictEqual({
        status: allNeverUpdated(t0, now),
        probeTimestamp: t0,
        readyTransitionTimestamp: now,
      });
    });
  });

  describe('UpdateStatus outcome', () => {
    const saved: NodeHealthData = {
      status: [ready('True', t0, t0)],
      probeTimestamp: t0,
      readyTransitionTimestamp: t0 - HOUR,
      lease: lease(t0),
    };
    const node = node0(created, [ready('True', t0, t0)]);
    const now = t0 + MINUTE;
    const marked = [stoppedPosting('Ready', t0, now), ...pressures.map((t) => neverUpdated(t, created, now))];

    it('on success: the written status, probe unchanged, ready transition = now, the observed lease', () => {
      const r = tryUpdateNodeHealth(node, lease(t0), saved, now, config);
      expect(r.statusUpdate).toStrictEqual(marked);
      expect(r.nodeHealth).toStrictEqual({
        status: marked,
        probeTimestamp: t0,
        readyTransitionTimestamp: now,
        lease: lease(t0),
      });
    });

    it('on failure: the entry as it was before the update, with the pre-update ready transition', () => {
      const r = tryUpdateNodeHealth(node, lease(t0), saved, now, config);
      // Heartbeat unchanged: the kept entry is the saved one, which does not see the marking.
      expect(r.nodeHealthIfUpdateFails).toStrictEqual(saved);
    });

    it('on success with no observed lease: the saved lease is dropped (upstream stores lease: observedLease = nil)', () => {
      const r = tryUpdateNodeHealth(node, undefined, saved, now, config);
      expect(r.nodeHealth).toStrictEqual({
        status: marked,
        probeTimestamp: t0,
        readyTransitionTimestamp: now,
      });
      expect(r.nodeHealthIfUpdateFails).toStrictEqual(saved);
    });

    it('a retry after a failure, from the failure entry, writes the same status again', () => {
      const failed = tryUpdateNodeHealth(node, lease(t0), saved, now, config);
      const retry = tryUpdateNodeHealth(node, lease(t0), failed.nodeHealthIfUpdateFails, now, config);
      expect(retry.statusUpdate).toStrictEqual(marked);
      expect(marksPodsNotReady(retry)).toBe(true);
    });

    it('on failure without any Ready condition: the failure entry holds the marked status (shared &node.Status)', () => {
      const r = tryUpdateNodeHealth(node0(created), undefined, undefined, t0, config);
      expect(r.statusUpdate).toStrictEqual(allNeverUpdated(created, t0));
      expect(r.nodeHealthIfUpdateFails).toStrictEqual({
        status: allNeverUpdated(created, t0),
        probeTimestamp: created,
        readyTransitionTimestamp: created,
      });
      expect(r.nodeHealth).toStrictEqual({
        status: allNeverUpdated(created, t0),
        probeTimestamp: created,
        readyTransitionTimestamp: t0,
      });
    });
  });

  it('does not mutate its inputs', () => {
    const deepFreeze = <T>(o: T): T => {
      if (typeof o === 'object' && o !== null) {
        Object.values(o).forEach(deepFreeze);
        Object.freeze(o);
      }
      return o;
    };
    const node = deepFreeze(node0(created, [ready('True', t0, t0), cond('DiskPressure', 'False', t0, t0)]));
    const saved = deepFreeze<NodeHealthData>({
      status: [ready('True', t0, t0)],
      probeTimestamp: t0,
      readyTransitionTimestamp: t0,
      lease: lease(t0),
    });
    const before = JSON.stringify([node, saved]);
    const r = tryUpdateNodeHealth(node, deepFreeze(lease(t0)), saved, t0 + HOUR, config);
    expect(r.statusUpdate).toBeDefined();
    expect(JSON.stringify([node, saved])).toBe(before);
  });
});
