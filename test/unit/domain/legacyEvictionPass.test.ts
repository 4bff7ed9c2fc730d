// Pass-level ports of the legacy (pre-taint) upstream tests (docs/upstream.md#legacy-tests, ~v1.18 test file)
// and of T2 TestPodStatusChange. Upstream's tests call zonePodEvictor[zone].Try with a DeletePods function
// after the monitor passes; that is exactly doEvictionPass here.
import { describe, expect, it } from 'vitest';
import type { ControllerConfig } from '../../../shared/config.js';
import type { NodeCondition, Pod } from '../../../shared/domain/types.js';
import { createZoneID } from '../../../shared/domain/zones.js';
import { Harness, testConfig } from '../../helpers/controllerHarness.js';
import { FakeCluster, newNode, newPod, ready, t, zoneLabels } from '../../helpers/fakeCluster.js';

// Legacy test constants: grace 40s, startup 60s, QPS 10000, threshold 20, unhealthy 0.55,
// pod eviction timeout 10m.
const legacyConfig: ControllerConfig = {
  ...testConfig,
  evictionMode: 'legacy',
  nodeMonitorGracePeriod: 40_000,
  nodeEvictionRate: 10_000,
  secondaryNodeEvictionRate: 10_000,
  podEvictionTimeout: 10 * 60_000,
};
const fakeNow = t('2015-01-01T12:00:00Z');
const created2012 = t('2012-01-01T00:00:00Z');
const minute = 60_000;
const z1 = zoneLabels('region1', 'zone1');

describe('TestMonitorNodeHealthEvictPods', () => {
  // Because all-NotReady clusters evict nothing, upstream keeps a healthy node1 in every case.
  const node1 = () =>
    newNode('node1', { created: created2012, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] });
  const healthyNodeNewStatus = [ready('True', t('2015-01-01T12:09:00Z'), fakeNow)];
  const stillNotReady = [ready('False', t('2015-01-01T12:59:00Z'), fakeNow)];

  it.each([
    {
      description: 'Node created recently, with no status.',
      node0: newNode('node0', { created: fakeNow, labels: z1 }),
      node1: node1(),
      pod: newPod('pod0', 'node0'),
      timeToPass: 0,
      newNodeStatus: [] as NodeCondition[],
      expectedEvictPods: false,
    },
    {
      description:
        'Node created recently without FailureDomain labels which is added back later, with no status (happens only at cluster startup).',
      node0: newNode('node0', { created: fakeNow }),
      node1: newNode('node1', { created: created2012, conditions: [ready('True', fakeNow, fakeNow)] }),
      pod: newPod('pod0', 'node0'),
      timeToPass: 0,
      newNodeStatus: [],
      expectedEvictPods: false,
    },
    {
      // 12:10 is not after 12:00 + 10m: the NotReady transition is exactly podEvictionTimeout old.
      description: 'Node created long time ago, and kubelet posted NotReady for a short period of time.',
      node0: newNode('node0', {
        created: created2012,
        labels: z1,
        conditions: [ready('False', fakeNow, fakeNow)],
      }),
      node1: node1(),
      pod: newPod('pod0', 'node0'),
      timeToPass: 10 * minute,
      newNodeStatus: [ready('False', t('2015-01-01T12:09:00Z'), fakeNow)],
      expectedEvictPods: false,
    },
    {
      description: 'Pod is ds-managed, and kubelet posted NotReady for a long period of time.',
      node0: newNode('node0', {
        created: created2012,
        labels: z1,
        conditions: [ready('False', fakeNow, fakeNow)],
      }),
      node1: node1(),
      pod: newPod('pod0', 'node0', { ownerKind: 'DaemonSet' }),
      timeToPass: 60 * minute,
      newNodeStatus: [ready('False', t('2015-01-01T12:59:00Z'), fakeNow)],
      expectedEvictPods: false,
    },
    {
      description: 'Node created long time ago, and kubelet posted NotReady for a long period of time.',
      node0: newNode('node0', {
        created: created2012,
        labels: z1,
        conditions: [ready('False', fakeNow, fakeNow)],
      }),
      node1: node1(),
      pod: newPod('pod0', 'node0'),
      timeToPass: 60 * minute,
      newNodeStatus: [ready('False', t('2015-01-01T12:59:00Z'), fakeNow)],
      expectedEvictPods: true,
    },
    {
      // The probe is 12:00 (first pass); 12:09:20 is not after 12:00 + 10m.
      description: 'Node created long time ago, node controller posted Unknown for a short period of time.',
      node0: newNode('node0', {
        created: created2012,
        labels: z1,
        conditions: [ready('Unknown', fakeNow, fakeNow)],
      }),
      node1: node1(),
      pod: newPod('pod0', 'node0'),
      timeToPass: 10 * minute - 40_000,
      newNodeStatus: [ready('Unknown', fakeNow, fakeNow)],
      expectedEvictPods: false,
    },
    {
      description: 'Node created long time ago, node controller posted Unknown for a long period of time.',
      node0: newNode('node0', {
        created: created2012,
        labels: z1,
        conditions: [ready('Unknown', fakeNow, fakeNow)],
      }),
      node1: node1(),
      pod: newPod('pod0', 'node0'),
      timeToPass: 60 * minute,
      newNodeStatus: [ready('Unknown', fakeNow, fakeNow)],
      expectedEvictPods: true,
    },
  ])('$description', ({ node0, node1: helper, pod, timeToPass, newNodeStatus, expectedEvictPods }) => {
    const cluster = new FakeCluster([node0, helper], [pod]);
    const h = new Harness(cluster, legacyConfig);
    h.monitor(fakeNow);
    let now = fakeNow;
    if (timeToPass > 0) {
      now = fakeNow + timeToPass;
      cluster.setConditions('node0', newNodeStatus);
      cluster.setConditions('node1', healthyNodeNewStatus);
    }
    if (Object.keys(node0.labels).length === 0 && Object.keys(helper.labels).length === 0) {
      cluster.put({ ...cluster.node('node0'), labels: z1 });
      cluster.put({ ...cluster.node('node1'), labels: z1 });
    }
    h.monitor(now);
    h.evictionPass(now);
    expect(cluster.deletedPods.length > 0).toBe(expectedEvictPods);
  });

  it('a DaemonSet pod still gets reason NodeLost although it is not deleted', () => {
    const cluster = new FakeCluster(
      [
        newNode('node0', {
          created: created2012,
          labels: z1,
          conditions: [ready('False', fakeNow, fakeNow)],
        }),
        node1(),
      ],
      [newPod('pod0', 'node0', { ownerKind: 'DaemonSet' })],
    );
    const h = new Harness(cluster, legacyConfig);
    h.monitor(fakeNow);
    // The kubelet keeps posting NotReady (a silent node would first be marked Unknown, which resets
    // readyTransitionTimestamp, and be evicted one pass later on the Unknown branch).
    cluster.setConditions('node0', stillNotReady);
    cluster.setConditions('node1', healthyNodeNewStatus);
    h.monitor(fakeNow + 60 * minute);
    h.evictionPass(fakeNow + 60 * minute);
    expect(cluster.pods[0]?.statusReason).toBe('NodeLost');
    expect(cluster.deletedPods).toEqual([]);
    expect(h.state.nodeEvictionStatus.get('node0')).toBe('evicted');
  });

  it('pods bound later to an evicted node are deleted at once, bypassing the queue', () => {
    const cluster = new FakeCluster(
      [
        newNode('node0', {
          created: created2012,
          labels: z1,
          conditions: [ready('False', fakeNow, fakeNow)],
        }),
        node1(),
      ],
      [newPod('pod0', 'node0')],
    );
    const h = new Harness(cluster, legacyConfig);
    h.monitor(fakeNow);
    // The kubelet keeps posting NotReady (a silent node would first be marked Unknown, which resets
    // readyTransitionTimestamp, and be evicted one pass later on the Unknown branch).
    cluster.setConditions('node0', stillNotReady);
    cluster.setConditions('node1', healthyNodeNewStatus);
    const later = fakeNow + 60 * minute;
    h.monitor(later);
    h.evictionPass(later);
    expect(cluster.deletedPods).toEqual(['default/pod0']);
    cluster.pods = [...cluster.pods, newPod('late', 'node0')];
    h.monitor(later + 5_000);
    expect(cluster.deletedPods).toEqual(['default/pod0', 'default/late']);
    expect(cluster.events.filter((e) => e.reason === 'DeletingAllPods')).toHaveLength(2);
  });

  it('a node that is Ready again cancels its queued eviction', () => {
    const cluster = new FakeCluster(
      [
        newNode('node0', {
          created: created2012,
          labels: z1,
          conditions: [ready('False', fakeNow, fakeNow)],
        }),
        node1(),
      ],
      [newPod('pod0', 'node0')],
    );
    const h = new Harness(cluster, legacyConfig);
    h.monitor(fakeNow);
    // The kubelet keeps posting NotReady (a silent node would first be marked Unknown, which resets
    // readyTransitionTimestamp, and be evicted one pass later on the Unknown branch).
    cluster.setConditions('node0', stillNotReady);
    cluster.setConditions('node1', healthyNodeNewStatus);
    h.monitor(fakeNow + 60 * minute);
    expect(h.queued(createZoneID('region1', 'zone1'))).toEqual(['node0']);
    expect(h.state.nodeEvictionStatus.get('node0')).toBe('toBeEvicted');
    cluster.setConditions('node0', [ready('True', fakeNow + 61 * minute, fakeNow + 61 * minute)]);
    h.monitor(fakeNow + 61 * minute);
    expect(h.queued(createZoneID('region1', 'zone1'))).toEqual([]);
    expect(h.state.nodeEvictionStatus.get('node0')).toBe('unmarked');
    h.evictionPass(fakeNow + 61 * minute);
    expect(cluster.deletedPods).toEqual([]);
  });
});

describe('TestPodStatusChange', () => {
  const description =
    'Node created long time ago, node controller posted Unknown for a long period of time, the pod status must include reason for termination.';
  const node0 = () =>
    newNode('node0', { created: created2012, labels: z1, conditions: [ready('Unknown', fakeNow, fakeNow)] });
  // node1 carries only the beta labels: the same zone key.
  const node1 = () =>
    newNode('node1', {
      created: created2012,
      labels: {
        'failure-domain.beta.kubernetes.io/region': 'region1',
        'failure-domain.beta.kubernetes.io/zone': 'zone1',
      },
      conditions: [ready('True', fakeNow, fakeNow)],
    });

  it.each([
    { mode: 'taint (current file: node0 sits in the zone tainter queue)', config: testConfig },
    { mode: 'legacy', config: legacyConfig },
  ])(`${description} [$mode]`, ({ config }) => {
    const cluster = new FakeCluster([node0(), node1()], [newPod('pod0', 'node0')]);
    const h = new Harness(cluster, config);
    h.monitor(fakeNow);
    cluster.setConditions('node0', [ready('Unknown', fakeNow, fakeNow)]);
    cluster.setConditions('node1', [ready('True', t('2015-01-01T12:09:00Z'), fakeNow)]);
    h.monitor(fakeNow + 60 * minute);
    h.evictionPass(fakeNow + 60 * minute);
    const reasons = cluster.podStatusUpdates.filter((u) => u.reason !== undefined);
    expect(reasons).toEqual([{ pod: 'default/pod0', reason: 'NodeLost', ok: true }]);
  });
});

describe('TestMonitorNodeHealthEvictPodsWithDisruption', () => {
  const timeToPass = 60 * minute;
  const healthy = [ready('True', t('2015-01-01T13:00:00Z'), fakeNow)];
  const unhealthy = [ready('Unknown', fakeNow, fakeNow)];
  const zone = (region: string, name: string) => zoneLabels(region, name);
  const node = (name: string, labels: Record<string, string>, status: 'True' | 'Unknown') =>
    newNode(name, { created: created2012, labels, conditions: [ready(status, fakeNow, fakeNow)] });
  const z1id = createZoneID('region1', 'zone1');

  it.each([
    {
      description: "Network Disruption: Only zone is down - eviction shouldn't take place.",
      nodes: [
        node('node0', zone('region1', 'zone1'), 'Unknown'),
        node('node1', zone('region1', 'zone1'), 'Unknown'),
      ],
      updated: [unhealthy, unhealthy],
      initial: { [z1id]: 'FullDisruption' },
      following: { [z1id]: 'FullDisruption' },
      expectedEvictPods: false,
    },
    {
      description: "Network Disruption: Both zones down - eviction shouldn't take place.",
      nodes: [
        node('node0', zone('region1', 'zone1'), 'Unknown'),
        node('node1', zone('region2', 'zone2'), 'Unknown'),
      ],
      updated: [unhealthy, unhealthy],
      initial: { [z1id]: 'FullDisruption', [createZoneID('region2', 'zone2')]: 'FullDisruption' },
      following: { [z1id]: 'FullDisruption', [createZoneID('region2', 'zone2')]: 'FullDisruption' },
      expectedEvictPods: false,
    },
    {
      description: 'Network Disruption: One zone is down - eviction should take place.',
      nodes: [
        node('node0', zone('region1', 'zone1'), 'Unknown'),
        node('node1', zone('region1', 'zone2'), 'True'),
      ],
      updated: [unhealthy, healthy],
      initial: { [z1id]: 'FullDisruption', [createZoneID('region1', 'zone2')]: 'Normal' },
      following: { [z1id]: 'FullDisruption', [createZoneID('region1', 'zone2')]: 'Normal' },
      expectedEvictPods: true,
    },
    {
      // Upstream's old name-based "-master" exclusion is gone (T15); the label says the same today.
      description: 'NetworkDisruption: eviction should stop, only -master Node is healthy',
      nodes: [
        node('node0', zone('region1', 'zone1'), 'Unknown'),
        node(
          'node-master',
          { ...zone('region1', 'zone1'), 'node.kubernetes.io/exclude-disruption': '' },
          'True',
        ),
      ],
      updated: [unhealthy, healthy],
      initial: { [z1id]: 'FullDisruption' },
      following: { [z1id]: 'FullDisruption' },
      expectedEvictPods: false,
    },
    {
      description: 'Initially both zones down, one comes back - eviction should take place',
      nodes: [
        node('node0', zone('region1', 'zone1'), 'Unknown'),
        node('node1', zone('region1', 'zone2'), 'Unknown'),
      ],
      updated: [unhealthy, healthy],
      initial: { [z1id]: 'FullDisruption', [createZoneID('region1', 'zone2')]: 'FullDisruption' },
      following: { [z1id]: 'FullDisruption', [createZoneID('region1', 'zone2')]: 'Normal' },
      expectedEvictPods: true,
    },
    {
      description: 'Zone is partially disrupted - eviction should take place.',
      nodes: [
        node('node0', zone('region1', 'zone1'), 'Unknown'),
        node('node1', zone('region1', 'zone1'), 'Unknown'),
        node('node2', zone('region1', 'zone1'), 'Unknown'),
        node('node3', zone('region1', 'zone1'), 'True'),
        node('node4', zone('region1', 'zone1'), 'True'),
      ],
      updated: [unhealthy, unhealthy, unhealthy, healthy, healthy],
      initial: { [z1id]: 'PartialDisruption' },
      following: { [z1id]: 'PartialDisruption' },
      expectedEvictPods: true,
    },
  ])('$description', ({ nodes, updated, initial, following, expectedEvictPods }) => {
    const pods: Pod[] = [newPod('pod0', 'node0')];
    const cluster = new FakeCluster(nodes, pods);
    const h = new Harness(cluster, legacyConfig, {
      disruptionQPSFuncs: { enterPartialDisruptionFunc: () => 10_000, enterFullDisruptionFunc: () => 10_000 },
    });
    h.monitor(fakeNow);
    expect(Object.fromEntries(h.state.zoneStates)).toEqual(initial);
    nodes.forEach((n, i) => {
      cluster.setConditions(n.name, updated[i]!);
    });
    const later = fakeNow + timeToPass;
    h.monitor(later);
    expect(Object.fromEntries(h.state.zoneStates)).toEqual(following);
    // Upstream polls doEviction for up to a minute.
    for (let s = 0; s <= 60 && cluster.deletedPods.length === 0; s++) h.evictionPass(later + s * 1000);
    expect(cluster.deletedPods.length > 0).toBe(expectedEvictPods);
  });
});
