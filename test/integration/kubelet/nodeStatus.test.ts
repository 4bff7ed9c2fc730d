// Simulated kubelets against the API simulator's in-process store, in virtual time: registration,
// lease cadence, status reporting, conditions, stop/start, unregistered nodes, cordon, node deletion.
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { Wire } from '../../../local/apiserver/index.js';
import { KubeletFleet } from '../../../local/kubelet/index.js';
import { KubeletNotFoundError } from '../../../shared/errors.js';
import { type Simulation, condition, seconds, simulation, sinceT0, withoutHeartbeats } from './helpers.js';

let sim: Simulation;
afterEach(() => {
  sim.close();
});

const nodeEvents = (name: string) => sim.recorder.of('Node', name);
const leaseEvents = (name: string) => sim.recorder.of('Lease', name);
const renewTimes = (name: string) =>
  leaseEvents(name).map((e) => sinceT0((e.object as Wire<V1Lease>).spec?.renewTime));

describe('registration', () => {
  it('creates the Node without conditions, then posts its first status and creates its Lease at once', async () => {
    sim = simulation();
    sim.at(5, () => {
      sim.fleet.addNode({ name: 'a-1', zone: 'zone-a', region: 'region-1', labels: { team: 'x' } });
    });
    await sim.runUntil(5);

    const [created, firstStatus, ...rest] = nodeEvents('a-1');
    expect(rest).toEqual([]);
    expect(created?.type).toBe('ADDED');
    const registered = created?.object as Wire<V1Node>;
    expect(registered.status?.conditions).toBeUndefined();
    expect(registered.metadata?.labels).toEqual({
      'kubernetes.io/hostname': 'a-1',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'amd64',
      'topology.kubernetes.io/zone': 'zone-a',
      'topology.kubernetes.io/region': 'region-1',
      team: 'x',
    });
    // Created through the API: TaintNodesByCondition admission applies.
    expect(registered.spec?.taints).toEqual([{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);

    expect(firstStatus?.t).toBe(5);
    const posted = firstStatus?.object as Wire<V1Node>;
    const time = new Date(seconds(5)).toISOString().replace('.000', '');
    expect(posted.status?.conditions).toEqual([
      {
        type: 'MemoryPressure',
        status: 'False',
        reason: 'KubeletHasSufficientMemory',
        message: 'kubelet has sufficient memory available',
        lastHeartbeatTime: time,
        lastTransitionTime: time,
      },
      {
        type: 'DiskPressure',
        status: 'False',
        reason: 'KubeletHasNoDiskPressure',
        message: 'kubelet has no disk pressure',
        lastHeartbeatTime: time,
        lastTransitionTime: time,
      },
      {
        type: 'PIDPressure',
        status: 'False',
        reason: 'KubeletHasSufficientPID',
        message: 'kubelet has sufficient PID available',
        lastHeartbeatTime: time,
        lastTransitionTime: time,
      },
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'kubelet is posting ready status',
        lastHeartbeatTime: time,
        lastTransitionTime: time,
      },
    ]);
    expect(posted.spec?.taints).toEqual(registered.spec?.taints); // the kubelet does not touch taints

    const [lease] = leaseEvents('a-1');
    expect(lease?.type).toBe('ADDED');
    expect(lease?.t).toBe(5);
    const written = lease?.object as Wire<V1Lease>;
    expect(written.metadata?.namespace).toBe('kube-node-lease');
    expect(written.metadata?.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Node', name: 'a-1', uid: registered.metadata?.uid },
    ]);
    expect(written.spec).toEqual({
      holderIdentity: 'a-1',
      leaseDurationSeconds: 40,
      renewTime: '2026-01-01T00:00:05.000000Z',
    });
    // Registration, status, lease: in that order.
    expect(sim.recorder.events.map((e) => `${e.kind} ${e.type}`)).toEqual([
      'Node ADDED',
      'Node MODIFIED',
      'Lease ADDED',
    ]);
  });

  it('adopts an existing unregistered Node when its kubelet finally starts', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'u-1', kubelet: 'unregistered' }] });
    sim.at(30, () => {
      sim.fleet.startKubelet('u-1');
    });
    await sim.runUntil(50);
    expect(nodeEvents('u-1').map((e) => `${e.t} ${e.type}`)).toEqual(['0 ADDED', '30 MODIFIED']);
    expect(renewTimes('u-1')).toEqual([30, 40, 50]);
  });

  it('addNode with a stopped kubelet comes up once and stops; an unregistered one only creates the Node', async () => {
    sim = simulation();
    sim.at(10, () => {
      sim.fleet.addNode({ name: 's-1', kubelet: 'stopped' });
      sim.fleet.addNode({
        name: 'u-1',
        kubelet: 'unregistered',
        taints: [{ key: 'k', effect: 'NoSchedule' }],
      });
    });
    await sim.runUntil(120);
    expect(renewTimes('s-1')).toEqual([10]);
    expect(nodeEvents('s-1').map((e) => `${e.t} ${e.type}`)).toEqual(['10 ADDED', '10 MODIFIED']);
    expect(sim.fleet.kubelet('s-1')?.state).toBe('stopped');
    expect(leaseEvents('u-1')).toEqual([]);
    const [unregistered, ...more] = nodeEvents('u-1');
    expect(more).toEqual([]);
    const node = unregistered?.object as Wire<V1Node>;
    expect(node.status?.conditions).toBeUndefined();
    expect(node.spec?.taints?.map((t) => t.key)).toEqual(['k', 'node.kubernetes.io/not-ready']);
  });
});

describe('settings', () => {
  it('rejects periods that are not positive', () => {
    sim = simulation();
    expect(
      () => new KubeletFleet({ store: sim.store, scheduler: sim.scheduler, nodeStatusUpdateFrequency: 0 }),
    ).toThrow(/nodeStatusUpdateFrequency must be a positive number/);
    expect(
      () => new KubeletFleet({ store: sim.store, scheduler: sim.scheduler, nodeLeaseDurationSeconds: -1 }),
    ).toThrow(RangeError);
  });
});

describe('lease cadence', () => {
  it('renews exactly at 0, 10, 20, … s in virtual time (the renewal at t = 0 is the seeded one)', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }, { name: 'a-2' }] });
    await sim.runUntil(60);
    expect(renewTimes('a-1')).toEqual([0, 10, 20, 30, 40, 50, 60]);
    expect(renewTimes('a-2')).toEqual([0, 10, 20, 30, 40, 50, 60]);
    // Ties at one instant: kubelets in the order their nodes were added.
    expect(sim.recorder.events.filter((e) => e.t === 10).map((e) => e.name)).toEqual(['a-1', 'a-2']);
    // A renewal only moves renewTime.
    const [, second] = leaseEvents('a-1');
    const [first] = leaseEvents('a-1');
    expect({ ...(second?.object as Wire<V1Lease>).spec, renewTime: '' }).toEqual({
      ...(first?.object as Wire<V1Lease>).spec,
      renewTime: '',
    });
  });

  it('a node added at 5 s renews at 5, 15, 25, … s', async () => {
    sim = simulation();
    sim.at(5, () => sim.fleet.addNode({ name: 'late' }));
    await sim.runUntil(45);
    expect(renewTimes('late')).toEqual([5, 15, 25, 35, 45]);
  });

  it('follows nodeLeaseDurationSeconds: renewals every quarter of it', async () => {
    sim = simulation({ nodeLeaseDurationSeconds: 80 });
    sim.fleet.seed({ nodes: [{ name: 'a-1' }] });
    await sim.runUntil(60);
    expect(renewTimes('a-1')).toEqual([0, 20, 40, 60]);
    expect((leaseEvents('a-1')[0]?.object as Wire<V1Lease>).spec?.leaseDurationSeconds).toBe(80);
  });
});

describe('node status reporting', () => {
  it('posts unchanged status every 5 minutes, moving only lastHeartbeatTime', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }] });
    await sim.runUntil(11 * 60);
    const posts = nodeEvents('a-1');
    expect(posts.map((e) => `${e.t} ${e.type}`)).toEqual(['0 ADDED', '300 MODIFIED', '600 MODIFIED']);
    const objects = posts.map((e) => e.object as Wire<V1Node>);
    for (const node of objects.slice(1)) {
      expect(withoutHeartbeats(node)).toEqual(withoutHeartbeats(objects[0] as Wire<V1Node>));
    }
    expect(objects.map((n) => sinceT0(condition(n, 'Ready')?.lastHeartbeatTime))).toEqual([0, 300, 600]);
    expect(
      objects.every((n) =>
        (n.status?.conditions ?? []).every(
          (c) => c.lastHeartbeatTime === condition(n, 'Ready')?.lastHeartbeatTime,
        ),
      ),
    ).toBe(true);
  });

  it('posts a condition change at once; lastTransitionTime moves only when the status does', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1', createdAgo: 600_000 }] });
    sim.at(30, () => {
      sim.fleet.setCondition('a-1', 'Ready', 'False', 'KubeletNotReady');
    });
    sim.at(45, () => {
      sim.fleet.setCondition('a-1', 'Ready', 'False', 'KubeletNotReady', 'PLEG is not healthy');
    });
    sim.at(50, () => {
      sim.fleet.setCondition('a-1', 'DiskPressure', 'True');
    });
    await sim.runUntil(6 * 60);
    const posts = nodeEvents('a-1').slice(1);
    expect(posts.map((e) => e.t)).toEqual([30, 45, 50, 350]);
    const [at30, at45, at50, at350] = posts.map((e) => e.object as Wire<V1Node>);
    expect(condition(at30 as Wire<V1Node>, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'container runtime is down',
      lastTransitionTime: '2026-01-01T00:00:30Z',
      lastHeartbeatTime: '2026-01-01T00:00:30Z',
    });
    // Other conditions: heartbeat moves, transition stays at the seeded one (creation, 10 min ago).
    expect(condition(at30 as Wire<V1Node>, 'MemoryPressure')).toMatchObject({
      status: 'False',
      lastTransitionTime: '2025-12-31T23:50:00Z',
      lastHeartbeatTime: '2026-01-01T00:00:30Z',
    });
    // A new message is a change (posted) but not a transition.
    expect(condition(at45 as Wire<V1Node>, 'Ready')).toMatchObject({
      message: 'PLEG is not healthy',
      lastTransitionTime: '2026-01-01T00:00:30Z',
    });
    expect(condition(at50 as Wire<V1Node>, 'DiskPressure')).toMatchObject({
      status: 'True',
      reason: 'KubeletHasDiskPressure',
      message: 'kubelet has disk pressure',
      lastTransitionTime: '2026-01-01T00:00:50Z',
    });
    // The periodic report is 5 minutes after the last post, on the 10 s grid.
    expect(withoutHeartbeats(at350 as Wire<V1Node>)).toEqual(withoutHeartbeats(at50 as Wire<V1Node>));
  });

  it('posts again when someone else changed one of its conditions (the kubelet compares with the Node)', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }] });
    sim.at(12, () => {
      // The controller marks the node Unknown, as if it had missed heartbeats.
      const node = sim.store.nodes.get('a-1');
      const conditions = (node.status?.conditions ?? []).map((c) =>
        c.type === 'Ready'
          ? {
              ...c,
              status: 'Unknown',
              reason: 'NodeStatusUnknown',
              lastTransitionTime: '2026-01-01T00:00:12Z',
            }
          : c,
      );
      sim.store.nodes.updateStatus({ ...node, status: { ...node.status, conditions } });
    });
    await sim.runUntil(30);
    const posts = nodeEvents('a-1').map((e) => e.t);
    expect(posts).toEqual([0, 12, 20]);
    const fixed = nodeEvents('a-1')[2]?.object as Wire<V1Node>;
    expect(condition(fixed, 'Ready')).toMatchObject({
      status: 'True',
      lastTransitionTime: '2026-01-01T00:00:20Z',
    });
  });

  it('writes a condition it does not own (NetworkUnavailable) at once, whatever the kubelet state, and keeps it', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }, { name: 's-1', kubelet: 'stopped' }] });
    sim.at(20, () => {
      sim.fleet.setCondition('s-1', 'NetworkUnavailable', 'True', 'NoRouteCreated');
      sim.fleet.setCondition('a-1', 'NetworkUnavailable', 'True', 'NoRouteCreated');
    });
    await sim.runUntil(310);
    expect(nodeEvents('s-1').map((e) => e.t)).toEqual([0, 20]);
    const stopped = nodeEvents('s-1')[1]?.object as Wire<V1Node>;
    expect(condition(stopped, 'NetworkUnavailable')).toEqual({
      type: 'NetworkUnavailable',
      status: 'True',
      reason: 'NoRouteCreated',
      lastHeartbeatTime: '2026-01-01T00:00:20Z',
      lastTransitionTime: '2026-01-01T00:00:20Z',
    });
    expect(condition(stopped, 'Ready')?.lastHeartbeatTime).toBe('2026-01-01T00:00:00Z');
    // The running kubelet's later posts keep it.
    const last = nodeEvents('a-1').at(-1);
    expect(last?.t).toBe(300);
    expect(condition(last?.object as Wire<V1Node>, 'NetworkUnavailable')?.status).toBe('True');
  });
});

describe('stop and start', () => {
  it('a stopped kubelet neither renews nor posts; started, it posts Ready=True and renews at once', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }] });
    sim.at(30, () => {
      sim.fleet.stopKubelet('a-1'); // before the kubelet's own tick at 30 s
    });
    sim.at(120, () => {
      const node = sim.store.nodes.get('a-1');
      const conditions = (node.status?.conditions ?? []).map((c) =>
        c.type === 'Ready'
          ? {
              ...c,
              status: 'Unknown',
              reason: 'NodeStatusUnknown',
              lastTransitionTime: '2026-01-01T00:02:00Z',
            }
          : c,
      );
      sim.store.nodes.updateStatus({ ...node, status: { ...node.status, conditions } });
    });
    sim.at(600, () => {
      sim.fleet.startKubelet('a-1');
    });
    await sim.runUntil(630);
    expect(renewTimes('a-1')).toEqual([0, 10, 20, 600, 610, 620, 630]);
    expect(nodeEvents('a-1').map((e) => e.t)).toEqual([0, 120, 600]);
    const started = nodeEvents('a-1')[2]?.object as Wire<V1Node>;
    expect(condition(started, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'KubeletReady',
      lastHeartbeatTime: '2026-01-01T00:10:00Z',
      lastTransitionTime: '2026-01-01T00:10:00Z',
    });
    // At the instant it starts: status first, then the lease.
    expect(sim.recorder.events.filter((e) => e.t === 600).map((e) => e.kind)).toEqual(['Node', 'Lease']);
  });

  it('a restarted kubelet always posts, even when nothing changed (it has no last report time)', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }] });
    sim.at(30, () => {
      sim.fleet.stopKubelet('a-1');
    });
    sim.at(45, () => {
      sim.fleet.startKubelet('a-1');
    });
    await sim.runUntil(100);
    expect(nodeEvents('a-1').map((e) => e.t)).toEqual([0, 45]);
    expect(renewTimes('a-1')).toEqual([0, 10, 20, 45, 55, 65, 75, 85, 95]);
  });

  it('keeps conditions set while stopped and reports them when started', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }] });
    sim.at(10, () => {
      sim.fleet.stopKubelet('a-1');
    });
    sim.at(20, () => {
      sim.fleet.setCondition('a-1', 'MemoryPressure', 'True');
    });
    sim.at(40, () => {
      sim.fleet.startKubelet('a-1');
    });
    await sim.runUntil(40);
    expect(nodeEvents('a-1').map((e) => e.t)).toEqual([0, 40]);
    expect(condition(nodeEvents('a-1')[1]?.object as Wire<V1Node>, 'MemoryPressure')?.reason).toBe(
      'KubeletHasInsufficientMemory',
    );
  });
});

describe('seeded cluster', () => {
  it('exists at t = 0 exactly as described', async () => {
    sim = simulation();
    sim.fleet.seed({
      nodes: [
        {
          name: 'a-1',
          zone: 'zone-a',
          taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }],
          unschedulable: true,
        },
        {
          name: 'a-2',
          zone: 'zone-a',
          ready: 'False',
          conditions: { DiskPressure: 'True', NetworkUnavailable: 'False' },
        },
        { name: 's-1', kubelet: 'stopped', createdAgo: 120_000 },
        { name: 'u-1', kubelet: 'unregistered' },
      ],
    });
    const a1 = sim.store.nodes.get('a-1');
    expect(a1.metadata?.creationTimestamp).toBe('2025-12-31T23:00:00Z');
    expect(a1.spec).toEqual({
      taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }],
      unschedulable: true,
    });
    expect(condition(a1, 'Ready')).toMatchObject({
      status: 'True',
      lastHeartbeatTime: '2026-01-01T00:00:00Z',
      lastTransitionTime: '2025-12-31T23:00:00Z',
    });

    const a2 = sim.store.nodes.get('a-2');
    expect(a2.spec?.taints).toBeUndefined(); // no admission for initial nodes
    expect(a2.status?.conditions?.map((c) => `${c.type}=${c.status}:${c.reason ?? ''}`)).toEqual([
      'MemoryPressure=False:KubeletHasSufficientMemory',
      'DiskPressure=True:KubeletHasDiskPressure',
      'PIDPressure=False:KubeletHasSufficientPID',
      'Ready=False:KubeletNotReady',
      'NetworkUnavailable=False:',
    ]);

    const s1 = sim.store.nodes.get('s-1');
    expect(s1.metadata?.creationTimestamp).toBe('2025-12-31T23:58:00Z');
    expect(condition(s1, 'Ready')?.lastHeartbeatTime).toBe('2026-01-01T00:00:00Z');
    const s1Lease = sim.store.leases.get('s-1', { namespace: 'kube-node-lease' });
    expect(s1Lease.spec?.renewTime).toBe('2026-01-01T00:00:00.000000Z');
    expect(s1Lease.metadata?.ownerReferences?.[0]?.uid).toBe(s1.metadata?.uid);

    const u1 = sim.store.nodes.get('u-1');
    expect(u1.status?.conditions).toBeUndefined();
    expect(u1.spec?.taints).toBeUndefined();
    expect(() => sim.store.leases.get('u-1', { namespace: 'kube-node-lease' })).toThrow(/not found/);

    await sim.runUntil(10 * 60);
    // The unregistered node never gets a lease or status; the stopped one never renews again.
    expect(leaseEvents('u-1')).toEqual([]);
    expect(nodeEvents('u-1').map((e) => e.type)).toEqual(['ADDED']);
    expect(renewTimes('s-1')).toEqual([0]);
    // a-2 keeps reporting what it was seeded with: only heartbeat posts.
    expect(nodeEvents('a-2').map((e) => e.t)).toEqual([0, 300, 600]);
    expect(sim.apiErrors).toEqual([]);
  });
});

describe('cordon, deletion', () => {
  it('cordon and uncordon write spec.unschedulable through the API, once', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }] });
    sim.at(10, () => {
      sim.fleet.cordon('a-1');
      sim.fleet.cordon('a-1');
    });
    sim.at(20, () => {
      sim.fleet.uncordon('a-1');
    });
    await sim.runUntil(25);
    const changes = nodeEvents('a-1').slice(1);
    expect(changes.map((e) => [e.t, (e.object as Wire<V1Node>).spec?.unschedulable])).toEqual([
      [10, true],
      [20, undefined],
    ]);
  });

  it('deleting the Node ends its kubelet, and its Lease goes as the garbage collector would remove it', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }, { name: 'a-2' }] });
    sim.at(15, () => {
      sim.fleet.deleteNode('a-1');
    });
    await sim.runUntil(60);
    expect(nodeEvents('a-1').map((e) => `${e.t} ${e.type}`)).toEqual(['0 ADDED', '15 DELETED']);
    expect(leaseEvents('a-1').map((e) => `${e.t} ${e.type}`)).toEqual([
      '0 ADDED',
      '10 MODIFIED',
      '15 DELETED',
    ]);
    expect(sim.fleet.kubelet('a-1')).toBeUndefined();
    expect(() => {
      sim.fleet.startKubelet('a-1');
    }).toThrow(KubeletNotFoundError);
    expect(renewTimes('a-2')).toEqual([0, 10, 20, 30, 40, 50, 60]);
    // A new node of the same name gets a new kubelet.
    sim.fleet.addNode({ name: 'a-1' });
    expect(sim.fleet.kubelet('a-1')?.state).toBe('running');
  });

  it("a Node deleted and re-added at the same instant keeps the new Node's Lease", async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }] });
    sim.at(15, () => {
      sim.fleet.deleteNode('a-1');
      sim.fleet.addNode({ name: 'a-1' });
    });
    await sim.runUntil(30);
    const lease = sim.store.leases.get('a-1', { namespace: 'kube-node-lease' });
    expect(lease.metadata?.ownerReferences?.[0]?.uid).toBe(sim.store.nodes.get('a-1').metadata?.uid);
    // As upstream: the new kubelet renews the Lease it finds (still owned by the old Node), the
    // garbage collector then deletes it with its owner, and the next renewal creates a new one.
    expect(leaseEvents('a-1').map((e) => `${e.t} ${e.type}`)).toEqual([
      '0 ADDED',
      '10 MODIFIED',
      '15 MODIFIED',
      '15 DELETED',
      '25 ADDED',
    ]);
  });
});
