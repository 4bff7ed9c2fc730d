// Pass-level ports of upstream node_lifecycle_controller_test.go (commit f8bf6b97;
// docs/upstream.md#nlc-tests). Each test drives the pure passes with FakeCluster, the counterpart of
// upstream's FakeNodeHandler: `cluster.list()` is upstream's syncNodeStore (one List request), and every node
// Get, status update and taint patch the pass yields counts one request, so upstream's expectedRequestCount
// carries over.
import { describe, expect, it } from 'vitest';
import {
  NotReadyTaintTemplate,
  taintExists,
  UnreachableTaintTemplate,
} from '../../../shared/domain/taints.js';
import type { NodeCondition, ZoneState } from '../../../shared/domain/types.js';
import type { EmulationVersion } from '../../../shared/domain/upstreamVersion.js';
import { createZoneID } from '../../../shared/domain/zones.js';
import { drive } from '../../../shared/domain/effects.js';
import { monitorNodeHealth } from '../../../shared/domain/monitorNodeHealth.js';
import { Harness, testConfig } from '../../helpers/controllerHarness.js';
import { FakeCluster, newNode, newPod, ready, t, zoneLabels } from '../../helpers/fakeCluster.js';

const minute = 60_000;
const hour = 60 * minute;
const z1 = zoneLabels('region1', 'zone1');
const z1id = createZoneID('region1', 'zone1');

describe('TestMonitorNodeHealth', () => {
  const fakeNow = t('2015-01-01T12:00:00Z');
  const timeToPass = 60 * minute;
  const healthy = [ready('True', fakeNow + timeToPass, fakeNow)];
  const unhealthy = [ready('Unknown', fakeNow, fakeNow)];
  const initialUnknown = [ready('Unknown', fakeNow, fakeNow)];
  const initialTrue = [ready('True', fakeNow, fakeNow)];
  const zone2 = zoneLabels('region1', 'zone2');
  const zone2id = createZoneID('region1', 'zone2');
  const region2 = zoneLabels('region2', 'zone2');
  const region2id = createZoneID('region2', 'zone2');
  const node = (name: string, labels: Record<string, string>, conditions?: readonly NodeCondition[]) =>
    newNode(name, { created: fakeNow, labels, ...(conditions ? { conditions } : {}) });

  const cases: {
    name: string;
    nodes: ReturnType<typeof node>[];
    updated: (readonly NodeCondition[])[];
    initial: Record<string, ZoneState>;
    following: Record<string, ZoneState>;
  }[] = [
    {
      name: 'No Disruption: Node created recently without failure domain labels (happens only at cluster startup)',
      nodes: [node('node0', {}, initialTrue)],
      updated: [healthy],
      initial: { '': 'Normal' },
      following: { '': 'Normal' },
    },
    {
      name: 'No Disruption: Initially both zones down, one comes back',
      nodes: [node('node0', z1, initialUnknown), node('node1', zone2, initialUnknown)],
      updated: [unhealthy, healthy],
      initial: { [z1id]: 'FullDisruption', [zone2id]: 'FullDisruption' },
      following: { [z1id]: 'FullDisruption', [zone2id]: 'Normal' },
    },
    {
      // No conditions at all: within the startup grace nothing is written, and a nil Ready counts
      // as not ready in ComputeZoneState.
      name: 'Partial Disruption: Nodes created recently without status conditions (happens only at cluster startup)',
      nodes: [node('node0', z1), node('node1', z1), node('node2', z1), node('node3', z1)],
      updated: [unhealthy, unhealthy, unhealthy, healthy],
      initial: { [z1id]: 'FullDisruption' },
      following: { [z1id]: 'PartialDisruption' },
    },
    {
      name: 'Partial Disruption: one Node failed leading to the number of healthy Nodes to exceed the configured threshold',
      nodes: [
        node('node0', z1, initialUnknown),
        node('node1', z1, initialUnknown),
        node('node2', z1, initialTrue),
        node('node3', z1, initialTrue),
        node('node4', z1, initialTrue),
      ],
      updated: [unhealthy, unhealthy, unhealthy, healthy, healthy],
      initial: { [z1id]: 'Normal' },
      following: { [z1id]: 'PartialDisruption' },
    },
    {
      name: 'Full Disruption: the zone has less than 2 Nodes down, the last healthy Node has failed',
      nodes: [
        node('node0', z1, initialUnknown),
        node('node1', z1, initialUnknown),
        node('node2', z1, initialTrue),
      ],
      updated: [unhealthy, unhealthy, unhealthy],
      initial: { [z1id]: 'Normal' },
      following: { [z1id]: 'FullDisruption' },
    },
    {
      name: 'Full Disruption: all the Nodes in one zone are down',
      nodes: [node('node0', z1, initialUnknown), node('node1', zone2, initialTrue)],
      updated: [unhealthy, healthy],
      initial: { [z1id]: 'FullDisruption', [zone2id]: 'Normal' },
      following: { [z1id]: 'FullDisruption', [zone2id]: 'Normal' },
    },
    {
      name: 'Full Disruption: all the Nodes in both the zones are down',
      nodes: [node('node0', z1, initialUnknown), node('node1', region2, initialUnknown)],
      updated: [unhealthy, unhealthy],
      initial: { [z1id]: 'FullDisruption', [region2id]: 'FullDisruption' },
      following: { [z1id]: 'FullDisruption', [region2id]: 'FullDisruption' },
    },
    {
      // The Ready condition disappears: the startup grace (60s) applies to the old probe (fakeNow),
      // so at +60m the controller appends the four NeverUpdated Unknown conditions.
      name: 'Full Disruption: Ready condition removed from the Node',
      nodes: [node('node0', z1, initialTrue)],
      updated: [[]],
      initial: { [z1id]: 'Normal' },
      following: { [z1id]: 'FullDisruption' },
    },
    {
      name: 'Full Disruption: the only available Node has the node.kubernetes.io/exclude-disruption label',
      nodes: [
        node('node0', z1, initialUnknown),
        node('node-master', { ...z1, 'node.kubernetes.io/exclude-disruption': '' }, initialTrue),
      ],
      updated: [unhealthy, healthy],
      initial: { [z1id]: 'FullDisruption' },
      following: { [z1id]: 'FullDisruption' },
    },
  ];

  it.each(cases)('$name', ({ nodes, updated, initial, following }) => {
    const cluster = new FakeCluster(nodes);
    const h = new Harness(cluster, testConfig, {
      disruptionQPSFuncs: {
        enterPartialDisruptionFunc: () => 100_000,
        enterFullDisruptionFunc: () => 100_000,
      },
    });
    h.monitor(fakeNow);
    expect(Object.fromEntries(h.state.zoneStates)).toEqual(initial);

    nodes.forEach((n, i) => {
      cluster.setConditions(n.name, updated[i]!);
    });
    h.monitor(fakeNow + timeToPass);
    expect(Object.fromEntries(h.state.zoneStates)).toEqual(following);
  });

  it('Full Disruption: Ready condition removed from the Node — writes the four NeverUpdated conditions', () => {
    const cluster = new FakeCluster([node('node0', z1, initialTrue)]);
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    cluster.setConditions('node0', []);
    h.monitor(fakeNow + timeToPass);
    expect(cluster.node('node0').conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Ready', 'Unknown', 'NodeStatusNeverUpdated'],
      ['MemoryPressure', 'Unknown', 'NodeStatusNeverUpdated'],
      ['DiskPressure', 'Unknown', 'NodeStatusNeverUpdated'],
      ['PIDPressure', 'Unknown', 'NodeStatusNeverUpdated'],
    ]);
  });
});

describe('TestMonitorNodeHealthUpdateStatus', () => {
  const fakeNow = t('2015-01-01T12:00:00Z');
  const created2012 = t('2012-01-01T00:00:00Z');
  const neverUpdated = (type: string, transition: number): NodeCondition => ({
    type,
    status: 'Unknown',
    reason: 'NodeStatusNeverUpdated',
    message: 'Kubelet never posted node status.',
    lastHeartbeatTime: created2012,
    lastTransitionTime: transition,
  });

  it.each([
    {
      name: 'node created long ago without status: Unknown conditions posted (List+UpdateStatus)',
      node: newNode('node0', { created: created2012 }),
      timeToPass: 0,
      requestCount: 2,
      conditions: ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((c) =>
        neverUpdated(c, fakeNow),
      ),
      podStatusUpdate: false,
    },
    {
      name: 'node created recently without status: nothing within the startup grace (List)',
      node: newNode('node0', { created: fakeNow }),
      timeToPass: 0,
      requestCount: 1,
      conditions: [],
      podStatusUpdate: false,
    },
    {
      name: 'node stops posting status for an hour: Ready Unknown posted, pods marked not ready (List+List+UpdateStatus)',
      node: newNode('node0', { created: created2012, conditions: [ready('True', fakeNow, fakeNow)] }),
      timeToPass: hour,
      requestCount: 3,
      conditions: [
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
          lastHeartbeatTime: fakeNow,
          lastTransitionTime: fakeNow + hour,
        },
        ...['MemoryPressure', 'DiskPressure', 'PIDPressure'].map((c) => neverUpdated(c, fakeNow + hour)),
      ],
      podStatusUpdate: true,
    },
    {
      name: 'node posting status recently: nothing to do (List)',
      node: newNode('node0', { created: created2012, conditions: [ready('True', fakeNow, fakeNow)] }),
      timeToPass: 0,
      requestCount: 1,
      conditions: [ready('True', fakeNow, fakeNow)],
      podStatusUpdate: false,
    },
  ])('$name', ({ node, timeToPass, requestCount, conditions, podStatusUpdate }) => {
    const cluster = new FakeCluster([node], [newPod('pod0', 'node0')]);
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    if (timeToPass > 0) h.monitor(fakeNow + timeToPass);
    expect(cluster.requestCount).toBe(requestCount);
    expect(cluster.node('node0').conditions).toEqual(conditions);
    expect(cluster.podStatusUpdates.length > 0).toBe(podStatusUpdate);
  });
});

describe('TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease', () => {
  const nodeCreationTime = t('2012-01-01T00:00:00Z');
  const fakeNow = t('2015-01-01T12:00:00Z');
  const neverUpdated = (type: string, transition: number): NodeCondition => ({
    type,
    status: 'Unknown',
    reason: 'NodeStatusNeverUpdated',
    message: 'Kubelet never posted node status.',
    lastHeartbeatTime: nodeCreationTime,
    lastTransitionTime: transition,
  });
  const allNeverUpdated = (transition: number) =>
    ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((c) => neverUpdated(c, transition));
  const readyAndDisk = (heartbeat: number): NodeCondition[] => [
    ready('True', heartbeat, fakeNow),
    { type: 'DiskPressure', status: 'False', lastHeartbeatTime: heartbeat, lastTransitionTime: fakeNow },
  ];

  it.each([
    {
      description: 'Node created recently, without status. Node lease is missing.',
      node: newNode('node0', { created: fakeNow }),
      lease: undefined,
      timeToPass: 0,
      newConditions: undefined,
      newLease: undefined,
      requestCount: 1,
      conditions: [],
      podStatusUpdate: false,
    },
    {
      description: 'Node created recently, without status. Node lease is renewed recently.',
      node: newNode('node0', { created: fakeNow }),
      lease: fakeNow,
      timeToPass: 0,
      newConditions: undefined,
      newLease: undefined,
      requestCount: 1,
      conditions: [],
      podStatusUpdate: false,
    },
    {
      description: 'Node created long time ago, without status. Node lease is missing.',
      node: newNode('node0', { created: nodeCreationTime }),
      lease: undefined,
      timeToPass: 0,
      newConditions: undefined,
      newLease: undefined,
      requestCount: 2,
      conditions: allNeverUpdated(fakeNow),
      podStatusUpdate: false,
    },
    {
      description: 'Node created long time ago, without status. Node lease is renewed recently.',
      node: newNode('node0', { created: nodeCreationTime }),
      lease: fakeNow,
      timeToPass: hour,
      newConditions: undefined,
      newLease: fakeNow + hour,
      requestCount: 2,
      conditions: [],
      podStatusUpdate: false,
    },
    {
      description: 'Node created long time ago, without status. Node lease is expired.',
      node: newNode('node0', { created: nodeCreationTime }),
      lease: fakeNow,
      timeToPass: hour,
      newConditions: undefined,
      newLease: fakeNow,
      requestCount: 3,
      conditions: allNeverUpdated(fakeNow + hour),
      podStatusUpdate: false,
    },
    {
      description:
        'Node created long time ago, with status updated by kubelet exceeds grace period. Node lease is renewed.',
      node: newNode('node0', { created: nodeCreationTime, conditions: readyAndDisk(fakeNow) }),
      lease: fakeNow,
      timeToPass: hour,
      newConditions: readyAndDisk(fakeNow),
      newLease: fakeNow + hour,
      requestCount: 2,
      conditions: readyAndDisk(fakeNow),
      podStatusUpdate: false,
    },
    {
      description:
        'Node created long time ago, with status updated by kubelet recently. Node lease is expired.',
      node: newNode('node0', { created: nodeCreationTime, conditions: readyAndDisk(fakeNow) }),
      lease: fakeNow,
      timeToPass: hour,
      newConditions: readyAndDisk(fakeNow + hour),
      newLease: fakeNow,
      requestCount: 2,
      conditions: readyAndDisk(fakeNow + hour),
      podStatusUpdate: false,
    },
    {
      description:
        'Node created long time ago, with status updated by kubelet exceeds grace period. Node lease is also expired.',
      node: newNode('node0', { created: nodeCreationTime, conditions: [ready('True', fakeNow, fakeNow)] }),
      lease: fakeNow,
      timeToPass: hour,
      newConditions: [ready('True', fakeNow, fakeNow)],
      newLease: fakeNow,
      requestCount: 3,
      conditions: [
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
          lastHeartbeatTime: fakeNow,
          lastTransitionTime: fakeNow + hour,
        } satisfies NodeCondition,
        ...['MemoryPressure', 'DiskPressure', 'PIDPressure'].map((c) => neverUpdated(c, fakeNow + hour)),
      ],
      podStatusUpdate: true,
    },
  ])(
    '$description',
    ({ node, lease, timeToPass, newConditions, newLease, requestCount, conditions, podStatusUpdate }) => {
      const cluster = new FakeCluster([node], [newPod('pod0', 'node0')]);
      const h = new Harness(cluster);
      if (lease !== undefined) h.leases.set('node0', { renewTime: lease });
      h.monitor(fakeNow);
      if (timeToPass > 0) {
        if (newConditions !== undefined) cluster.setConditions('node0', newConditions);
        if (newLease !== undefined) h.leases.set('node0', { renewTime: newLease });
        h.monitor(fakeNow + timeToPass);
      }
      expect(cluster.requestCount).toBe(requestCount);
      expect(cluster.node('node0').conditions).toEqual(conditions);
      expect(cluster.podStatusUpdates.length > 0).toBe(podStatusUpdate);
    },
  );
});

describe('TestMonitorNodeHealthMarkPodsNotReady', () => {
  const fakeNow = t('2015-01-01T12:00:00Z');
  const created2012 = t('2012-01-01T00:00:00Z');

  it.each([
    {
      name: 'node created recently without status: no pod marked',
      node: newNode('node0', { created: fakeNow }),
      timeToPass: 0,
      podStatusUpdate: false,
    },
    {
      name: 'node posting Ready recently: no pod marked',
      node: newNode('node0', { created: created2012, conditions: [ready('True', fakeNow, fakeNow)] }),
      timeToPass: 0,
      podStatusUpdate: false,
    },
    {
      // 60s without a heartbeat exceeds the 50s grace: the controller flips Ready to Unknown.
      name: 'node silent for one minute: its pod is marked not ready',
      node: newNode('node0', { created: created2012, conditions: [ready('True', fakeNow, fakeNow)] }),
      timeToPass: minute,
      podStatusUpdate: true,
    },
  ])('$name', ({ node, timeToPass, podStatusUpdate }) => {
    const cluster = new FakeCluster([node], [newPod('pod0', 'node0')]);
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    if (timeToPass > 0) h.monitor(fakeNow + timeToPass);
    expect(cluster.podStatusUpdates.length > 0).toBe(podStatusUpdate);
    if (podStatusUpdate) expect(cluster.pods[0]?.ready).toBe('False');
  });
});

describe('TestMonitorNodeHealthMarkPodsNotReadyWithWorkerSize', () => {
  // Upstream runs this with 8 workers and with 1; our pass is sequential, so one run covers both.
  it('marks all 5000 pods of 50 silent nodes not ready, although the only zone is fully disrupted', () => {
    const fakeNow = t('2015-01-01T12:00:00Z');
    const nodes = Array.from({ length: 50 }, (_, i) =>
      newNode(`node${i}`, {
        created: t('2012-01-01T00:00:00Z'),
        conditions: [ready('True', fakeNow, fakeNow)],
      }),
    );
    const pods = Array.from({ length: 5000 }, (_, i) => newPod(`pod${i}`, `node${i % 50}`));
    const cluster = new FakeCluster(nodes, pods);
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    h.monitor(fakeNow + minute);
    expect(cluster.podStatusUpdates.filter((u) => u.ready === 'False')).toHaveLength(5000);
    expect(h.state.zoneStates.get('')).toBe('FullDisruption');
  });
});

describe('TestMonitorNodeHealthMarkPodsNotReadyRetry', () => {
  const timeNow = t('2015-01-01T12:00:00Z');
  // Upstream names it timePlusTwoMinutes, but it is two seconds.
  const timePlusTwoSeconds = timeNow + 2_000;
  const iterations = [
    { now: timeNow, conditions: [ready('True', timeNow, timeNow)] },
    { now: timeNow + minute, conditions: [ready('True', timeNow, timeNow)] },
    { now: timeNow + minute, conditions: [ready('False', timePlusTwoSeconds, timePlusTwoSeconds)] },
  ];

  it.each([
    { desc: 'successful pod status update, no retry required', fail: undefined, expected: 1 },
    {
      desc: 'unsuccessful pod status update, retry required',
      fail: 'markPodsNotReady' as const,
      expected: 2,
    },
    { desc: 'unsuccessful pod list, retry required', fail: 'listPodsOnNode' as const, expected: 1 },
  ])('$desc', ({ fail, expected }) => {
    const cluster = new FakeCluster([newNode('node0', { created: timeNow })], [newPod('pod0', 'node0')]);
    if (fail !== undefined) cluster.fail(fail, 1);
    const h = new Harness(cluster);
    for (const iteration of iterations) {
      cluster.setConditions('node0', iteration.conditions);
      h.monitor(iteration.now);
    }
    expect(cluster.podStatusUpdates).toHaveLength(expected);
  });
});

describe('TestApplyNoExecuteTaints', () => {
  it('taints unhealthy nodes NoExecute, lifts the taint when ready, and skips a node without Ready', () => {
    const fakeNow = t('2017-01-01T12:00:00Z');
    const created = t('2012-01-01T00:00:00Z');
    const y2015 = t('2015-01-01T12:00:00Z');
    const y2016 = t('2016-01-01T12:00:00Z');
    const cluster = new FakeCluster(
      [
        newNode('node0', { created, labels: z1, conditions: [ready('Unknown', y2015, y2015)] }),
        newNode('node1', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
        newNode('node2', { created, labels: z1, conditions: [ready('False', y2015, y2015)] }),
        newNode('node3', { created, labels: z1, conditions: [ready('True', y2016, y2016)] }),
      ],
      [newPod('pod0', 'node0')],
    );
    const h = new Harness(cluster);

    h.monitor(fakeNow);
    h.taintingPass(fakeNow);
    expect(taintExists(cluster.taints('node0'), UnreachableTaintTemplate)).toBe(true);
    expect(taintExists(cluster.taints('node2'), NotReadyTaintTemplate)).toBe(true);

    // node2 is ready again: both NoExecute taints go.
    cluster.setConditions('node2', [ready('True', t('2017-01-01T12:10:00Z'), fakeNow)]);
    h.monitor(fakeNow);
    h.taintingPass(fakeNow);
    expect(cluster.taints('node2')).toEqual([]);

    // node3 is queued as NotReady, then loses its Ready condition before the tainting pass.
    cluster.setConditions('node3', [ready('False', t('2017-01-01T12:10:00Z'), fakeNow)]);
    h.monitor(fakeNow);
    expect(h.queued(z1id)).toContain('node3');
    cluster.setConditions('node3', [{ type: 'MemoryPressure', status: 'Unknown' }]);
    h.taintingPass(fakeNow);
    expect(cluster.taints('node3')).toEqual([]);
  });
});

describe('TestApplyNoExecuteTaintsToNodesEnqueueTwice', () => {
  it('queues a node once across passes and taints the newly unhealthy nodes', () => {
    const fakeNow = t('2017-01-01T12:00:00Z');
    const created = t('2012-01-01T00:00:00Z');
    const y2015 = t('2015-01-01T12:00:00Z');
    const cluster = new FakeCluster(
      [
        newNode('node0', { created, labels: z1, conditions: [ready('Unknown', y2015, y2015)] }),
        newNode('node1', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
        newNode('node2', { created, labels: z1, conditions: [ready('False', y2015, y2015)] }),
      ],
      [newPod('pod0', 'node0')],
    );
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    h.monitor(fakeNow);
    expect(h.queued(z1id)).toEqual(['node0', 'node2']);

    cluster.setConditions('node0', [ready('True', t('2017-01-01T12:10:00Z'), fakeNow)]);
    cluster.put(newNode('node3', { created, labels: z1, conditions: [ready('Unknown', y2015, y2015)] }));
    cluster.put(newNode('node4', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }));
    cluster.put(newNode('node5', { created, labels: z1, conditions: [ready('False', y2015, y2015)] }));
    h.monitor(fakeNow);
    expect(h.queued(z1id)).toEqual(['node2', 'node3', 'node5']);
    // 3 of 6 not ready is below 0.55: the zone stays Normal and keeps the full rate.
    expect(h.state.zoneStates.get(z1id)).toBe('Normal');

    h.taintingPass(fakeNow);
    expect(taintExists(cluster.taints('node3'), UnreachableTaintTemplate)).toBe(true);
    expect(taintExists(cluster.taints('node5'), NotReadyTaintTemplate)).toBe(true);
  });
});

describe('TestSwapUnreachableNotReadyTaints', () => {
  it('swaps unreachable for not-ready at once when the node reports NotReady', () => {
    const fakeNow = t('2017-01-01T12:00:00Z');
    const created = t('2012-01-01T00:00:00Z');
    const y2015 = t('2015-01-01T12:00:00Z');
    const cluster = new FakeCluster(
      [
        newNode('node0', { created, labels: z1, conditions: [ready('Unknown', y2015, y2015)] }),
        newNode('node1', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
      ],
      [newPod('pod0', 'node0')],
    );
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    h.taintingPass(fakeNow);
    expect(taintExists(cluster.taints('node0'), UnreachableTaintTemplate)).toBe(true);

    cluster.setConditions('node0', [ready('False', t('2017-01-01T12:09:00Z'), fakeNow)]);
    cluster.setConditions('node1', [ready('True', t('2017-01-01T12:10:00Z'), fakeNow)]);
    h.monitor(fakeNow);
    // The swap happened in the monitor pass itself, not through the rate-limited queue.
    expect(taintExists(cluster.taints('node0'), NotReadyTaintTemplate)).toBe(true);
    expect(taintExists(cluster.taints('node0'), UnreachableTaintTemplate)).toBe(false);
    h.taintingPass(fakeNow);
    expect(cluster.taints('node0').map((x) => x.key)).toEqual(['node.kubernetes.io/not-ready']);
  });
});

describe('TestNodeEventGeneration', () => {
  it('records exactly one RegisteredNode event carrying the node UID', () => {
    const fakeNow = t('2016-09-10T12:00:00Z');
    const created = t('2015-08-10T00:00:00Z');
    const cluster = new FakeCluster([
      newNode('node0', { created, uid: '1234567890', conditions: [ready('Unknown', created, created)] }),
    ]);
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    expect(cluster.events).toHaveLength(1);
    expect(cluster.events[0]?.reason).toBe('RegisteredNode');
    expect(cluster.events[0]?.involvedObject.uid).toBe('1234567890');
  });
});

describe('monitorNodeHealth: timing of the NoExecute taint (upstream #120815, PR #120816 in v1.34)', () => {
  // One node goes silent while another keeps posting; the pass one minute later marks it Unknown.
  function silentNode(emulationVersion: EmulationVersion) {
    const fakeNow = t('2017-01-01T12:00:00Z');
    const created = t('2012-01-01T00:00:00Z');
    const cluster = new FakeCluster([
      newNode('node0', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
      newNode('node1', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
    ]);
    const h = new Harness(cluster, { ...testConfig, emulationVersion });
    h.monitor(fakeNow);
    cluster.setConditions('node1', [ready('True', fakeNow + minute, fakeNow)]);
    h.monitor(fakeNow + minute);
    expect(cluster.node('node0').conditions[0]?.status).toBe('Unknown');
    return { h, next: fakeNow + minute + 5_000 };
  }

  it.each(['1.25', '1.33'] as const)(
    '%s: queues a node the pass itself marked Unknown only on the next pass',
    (version) => {
      const { h, next } = silentNode(version);
      expect(h.queued(z1id)).toEqual([]);
      h.monitor(next);
      expect(h.queued(z1id)).toEqual(['node0']);
    },
  );

  it.each(['1.34', '1.37'] as const)('%s: queues it in the pass that marks it Unknown', (version) => {
    const { h, next } = silentNode(version);
    expect(h.queued(z1id)).toEqual(['node0']);
    h.monitor(next);
    expect(h.queued(z1id)).toEqual(['node0']);
  });
});

describe('monitorNodeHealth: node deletion', () => {
  it('records RemovingNode and forgets the node', () => {
    const fakeNow = t('2017-01-01T12:00:00Z');
    const created = t('2012-01-01T00:00:00Z');
    const cluster = new FakeCluster([
      newNode('node0', { created, labels: z1, conditions: [ready('Unknown', created, created)] }),
      newNode('node1', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
    ]);
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    expect(h.queued(z1id)).toEqual(['node0']);
    cluster.nodes.delete('node0');
    const result = h.monitor(fakeNow + 5_000);
    expect(result.removed).toEqual(['node0']);
    expect(cluster.events.map((e) => e.reason)).toEqual(['RegisteredNode', 'RegisteredNode', 'RemovingNode']);
    expect(h.state.knownNodes.has('node0')).toBe(false);
    expect(h.state.nodeHealth.has('node0')).toBe(false);
    expect(h.queued(z1id)).toEqual([]);
  });
});

// The node cache of the functions lags the cluster: a status post that changes only the heartbeat (the
// kubelet's 5-minute report) is not a Node Changed, so the copy keeps an older resourceVersion and
// heartbeat. The status write then conflicts, and upstream's retry re-reads the node.
describe('monitorNodeHealth: a node copy older than the cluster (a node that dies after its 5-minute status post)', () => {
  const t0 = t('2017-01-01T12:00:00Z');
  const created = t('2012-01-01T00:00:00Z');
  const lastRenewal = t0 + 6 * minute + 30_000;
  const now = lastRenewal + 55_000; // past the 50 s grace

  function setUp(heartbeatIsProbe: boolean) {
    const cluster = new FakeCluster([
      newNode('node0', { created, labels: z1, conditions: [ready('True', t0, t0)] }),
      newNode('node1', { created, labels: z1, conditions: [ready('True', t0, t0)] }),
    ]);
    const h = new Harness(cluster, testConfig, { heartbeatIsProbe });
    h.leases.set('node0', { renewTime: t0 });
    h.leases.set('node1', { renewTime: t0 });
    h.monitor(t0);
    const staleCopy = cluster.node('node0');
    // The kubelet's periodic status post at 5 m: only the heartbeat changes (no Node Changed).
    cluster.setConditions('node0', [ready('True', t0 + 5 * minute, t0)]);
    h.leases.set('node0', { renewTime: lastRenewal });
    h.leases.set('node1', { renewTime: now });
    cluster.fail('updateNodeStatus', 1, 'Conflict'); // the stale resourceVersion
    cluster.effects.length = 0;
    const result = drive(
      monitorNodeHealth(
        h.state,
        { nodes: [staleCopy, cluster.node('node1')], leases: h.leases },
        now,
        testConfig,
        { heartbeatIsProbe },
      ),
      cluster.execute,
    );
    return { cluster, result };
  }

  it('re-reads after the 409 and marks the node Unknown: the re-read heartbeat is not a probe', () => {
    const { cluster, result } = setUp(false);
    expect(cluster.effects.filter((e) => e.kind !== 'recordEvent').map((e) => e.kind)).toEqual([
      'updateNodeStatus',
      'getNode',
      'updateNodeStatus',
      'listPodsOnNode',
    ]);
    expect(cluster.node('node0').conditions[0]).toMatchObject({
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      lastHeartbeatTime: t0 + 5 * minute,
    });
    expect(result.readiness.get('node0')?.current?.status).toBe('Unknown');
    // The pass hands back the cluster's node, so the next write does not start from the stale copy.
    expect(result.nodeCopies.get('node0')?.resourceVersion).toBe(cluster.node('node0').resourceVersion);
    expect(result.state.nodeHealth.get('node0')?.probeTimestamp).toBe(lastRenewal);
  });

  it('upstream semantics on the same copy (heartbeatIsProbe: true) restart the grace period instead', () => {
    const { cluster, result } = setUp(true);
    expect(cluster.node('node0').conditions[0]?.status).toBe('True');
    expect(result.state.nodeHealth.get('node0')?.probeTimestamp).toBe(now);
  });
});

describe('monitorNodeHealth in shadow mode (dryRun beside another controller: shadowView)', () => {
  // The other controller (grace 40 s) marks node0 Unknown, taints it unreachable:NoExecute and marks its
  // pod NotReady before this one's 50 s grace runs out. This one never writes, so all of that is the
  // other's: it decides as if it were not there, and writes (records) what it would have done itself.
  const t0 = t('2017-01-01T12:00:00Z');
  const created = t('2012-01-01T00:00:00Z');
  const unreachable = {
    key: 'node.kubernetes.io/unreachable',
    effect: 'NoExecute' as const,
    timeAdded: t0 + 45_000,
  };

  function setUp(shadow: boolean) {
    // node1 stays healthy, so the zone is Normal (a zone entirely down stops NoExecute tainting).
    const cluster = new FakeCluster(
      [
        newNode('node0', { created, labels: z1, conditions: [ready('True', t0, t0)] }),
        newNode('node1', { created, labels: z1, conditions: [ready('True', t0, t0)] }),
      ],
      [newPod('pod0', 'node0', { ready: 'True' })],
    );
    const h = new Harness(cluster, testConfig, { heartbeatIsProbe: false, shadow });
    h.leases.set('node0', { renewTime: t0 });
    h.leases.set('node1', { renewTime: t0 + 60_000 });
    h.monitor(t0);
    // The other controller's pass at t0 + 45 s.
    cluster.setConditions('node0', [
      {
        type: 'Ready',
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        lastHeartbeatTime: t0,
        lastTransitionTime: t0 + 45_000,
      },
    ]);
    cluster.put({ ...cluster.node('node0'), taints: [unreachable] });
    cluster.pods = cluster.pods.map((p) => ({ ...p, ready: 'False' as const }));
    return { cluster, h };
  }

  it("before its own grace runs out it neither writes nor lifts the other controller's taint", () => {
    const { cluster, h } = setUp(true);
    cluster.effects.length = 0;
    h.monitor(t0 + 47_000);
    expect(cluster.effects.map((e) => e.kind)).toEqual([]);
    expect(h.state.nodeHealth.get('node0')?.status.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it('once it does, it marks the node, marks its pods NotReady (already so) and queues the taint', () => {
    const { cluster, h } = setUp(true);
    h.monitor(t0 + 47_000);
    cluster.effects.length = 0;
    const result = h.monitor(t0 + 52_000);
    const writes = cluster.effects.filter(
      (e) => e.kind === 'updateNodeStatus' || e.kind === 'markPodsNotReady',
    );
    expect(writes.map((e) => e.kind)).toEqual(['updateNodeStatus', 'markPodsNotReady']);
    expect(result.readiness.get('node0')).toMatchObject({
      observed: { status: 'True' },
      current: { status: 'Unknown' },
    });
    expect(h.queued(z1id)).toEqual(['node0']);
    // Its own marking is saved: the next pass decides nothing again.
    cluster.effects.length = 0;
    h.monitor(t0 + 57_000);
    expect(
      cluster.effects.filter((e) => e.kind === 'updateNodeStatus' || e.kind === 'markPodsNotReady'),
    ).toEqual([]);
  });

  it('upstream (active) sees the marking as its own state: no write, no pods, nothing queued', () => {
    const { cluster, h } = setUp(false);
    h.monitor(t0 + 47_000);
    cluster.effects.length = 0;
    h.monitor(t0 + 52_000);
    expect(
      cluster.effects.filter((e) => e.kind === 'updateNodeStatus' || e.kind === 'markPodsNotReady'),
    ).toEqual([]);
  });
});
