// Pods under simulated kubelets: Running and Ready when they appear, deletions confirmed only while the
// kubelet runs, the status manager undoing a foreign Ready=False, DaemonSet pods and default tolerations.
import type { V1Pod, V1Toleration } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { Wire } from '../../../local/apiserver/index.js';
import { type Simulation, simulation } from './helpers.js';

let sim: Simulation;
afterEach(() => {
  sim.close();
});

const podEvents = (key: string) => sim.recorder.of('Pod', key);
const ready = (pod: Wire<V1Pod> | undefined) =>
  pod?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
const getPod = (name: string, namespace = 'default') => sim.store.pods.get(name, { namespace });
const exists = (name: string) =>
  sim.store.pods.list({ namespace: 'default' }).items.some((p) => p.metadata?.name === name);

const notReady300: Wire<V1Toleration> = {
  key: 'node.kubernetes.io/not-ready',
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: 300,
};
const unreachable300: Wire<V1Toleration> = { ...notReady300, key: 'node.kubernetes.io/unreachable' };

describe('pod startup', () => {
  it('seeded pods exist Running and Ready; a pod added later is reported so at the same instant', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }], pods: [{ name: 'web-1', node: 'a-1' }] });
    const seeded = getPod('web-1');
    expect(seeded.status).toMatchObject({
      phase: 'Running',
      hostIP: sim.fleet.kubelet('a-1')?.internalIP,
      startTime: '2026-01-01T00:00:00Z',
    });
    expect(seeded.status?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'PodReadyToStartContainers=True',
      'Initialized=True',
      'Ready=True',
      'ContainersReady=True',
      'PodScheduled=True',
    ]);
    expect(seeded.status?.containerStatuses?.[0]).toMatchObject({ name: 'app', ready: true, started: true });

    sim.at(10, () => sim.fleet.addPod({ name: 'late-1', node: 'a-1' }));
    await sim.runUntil(30);
    const late = podEvents('default/late-1');
    expect(late.map((e) => `${e.t} ${e.type} ${(e.object as Wire<V1Pod>).status?.phase ?? ''}`)).toEqual([
      '10 ADDED Pending',
      '10 MODIFIED Running',
    ]);
    expect(ready(late[1]?.object as Wire<V1Pod>)).toBe('True');
    expect(getPod('late-1').status?.podIP).not.toBe(seeded.status?.podIP);
    // Nothing else happens to running pods.
    expect(podEvents('default/web-1').map((e) => e.type)).toEqual(['ADDED']);
  });

  it('a pod bound to a stopped or unregistered node stays Pending until its kubelet starts', async () => {
    sim = simulation();
    sim.fleet.seed({
      nodes: [
        { name: 's-1', kubelet: 'stopped' },
        { name: 'u-1', kubelet: 'unregistered' },
      ],
      pods: [{ name: 'on-unregistered', node: 'u-1' }],
    });
    expect(getPod('on-unregistered').status?.phase).toBe('Pending');
    sim.at(5, () => sim.fleet.addPod({ name: 'p', node: 's-1' }));
    sim.at(60, () => {
      sim.fleet.startKubelet('s-1');
    });
    await sim.runUntil(59);
    expect(getPod('p').status?.phase).toBe('Pending');
    await sim.runUntil(60);
    expect(getPod('p').status?.phase).toBe('Running');
    expect(podEvents('default/p').map((e) => e.t)).toEqual([5, 60]);
  });

  it('a running kubelet reports Ready=True again on its next sync when the controller marked the pod not ready', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }], pods: [{ name: 'web-1', node: 'a-1' }] });
    sim.at(12, () => {
      const pod = getPod('web-1');
      const conditions = (pod.status?.conditions ?? []).map((c) =>
        c.type === 'Ready' ? { ...c, status: 'False', lastTransitionTime: '2026-01-01T00:00:12Z' } : c,
      );
      sim.store.pods.updateStatus({ ...pod, status: { ...pod.status, conditions } });
    });
    await sim.runUntil(19);
    expect(ready(getPod('web-1'))).toBe('False');
    await sim.runUntil(20);
    const pod = getPod('web-1');
    expect(ready(pod)).toBe('True');
    expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe(
      '2026-01-01T00:00:20Z',
    );
    // Unchanged conditions keep their transition times; the pod keeps its IP.
    expect(pod.status?.conditions?.find((c) => c.type === 'Initialized')?.lastTransitionTime).toBe(
      '2026-01-01T00:00:00Z',
    );
    expect(pod.status?.podIP).toBe((podEvents('default/web-1')[0]?.object as Wire<V1Pod>).status?.podIP);
  });
});

describe('pod deletion', () => {
  it('a running kubelet confirms a graceful deletion after min(grace period, 1 s)', async () => {
    sim = simulation();
    sim.fleet.seed({
      nodes: [{ name: 'a-1' }],
      pods: [
        { name: 'web-1', node: 'a-1' },
        { name: 'web-2', node: 'a-1' },
      ],
    });
    sim.at(20, () => {
      sim.fleet.deletePod('default', 'web-1'); // terminationGracePeriodSeconds 30 by default
    });
    sim.at(30, () => {
      sim.fleet.deletePod('default', 'web-2', { gracePeriodSeconds: 0 });
    });
    await sim.runUntil(40);
    expect(podEvents('default/web-1').map((e) => `${e.t} ${e.type}`)).toEqual([
      '0 ADDED',
      '20 MODIFIED', // deletionTimestamp set: Terminating
      '21 MODIFIED', // the kubelet's delete with grace 0
      '21 DELETED',
    ]);
    // Grace 0 needs no kubelet: the API server marks and removes it at once (as upstream's store does).
    expect(podEvents('default/web-2').map((e) => `${e.t} ${e.type}`)).toEqual([
      '0 ADDED',
      '30 MODIFIED',
      '30 DELETED',
    ]);
    expect(sim.apiErrors).toEqual([]);
  });

  it('on a stopped kubelet a deleted pod stays Terminating; started, the kubelet confirms it', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }], pods: [{ name: 'web-1', node: 'a-1' }] });
    sim.at(30, () => {
      sim.fleet.stopKubelet('a-1');
    });
    sim.at(60, () => sim.fleet.deletePod('default', 'web-1'));
    sim.at(600, () => {
      sim.fleet.startKubelet('a-1');
    });
    await sim.runUntil(599);
    expect(getPod('web-1').metadata?.deletionTimestamp).toBe('2026-01-01T00:01:30Z');
    await sim.runUntil(600);
    expect(exists('web-1')).toBe(true);
    await sim.runUntil(601);
    expect(exists('web-1')).toBe(false);
    expect(podEvents('default/web-1').at(-1)?.t).toBe(601);
  });

  it('a kubelet stopped while a confirmation is pending does not confirm it', async () => {
    sim = simulation({ podTerminationDelay: 5_000 });
    sim.fleet.seed({ nodes: [{ name: 'a-1' }], pods: [{ name: 'web-1', node: 'a-1' }] });
    sim.at(10, () => sim.fleet.deletePod('default', 'web-1'));
    sim.at(12, () => {
      sim.fleet.stopKubelet('a-1');
    });
    await sim.runUntil(120);
    expect(getPod('web-1').metadata?.deletionTimestamp).toBeDefined();
  });
});

describe('tolerations', () => {
  it('admission gives pods the 300 s defaults unless the scenario says otherwise', async () => {
    sim = simulation();
    sim.fleet.seed({
      nodes: [{ name: 'a-1' }],
      pods: [
        { name: 'default-1', node: 'a-1' },
        { name: 'bare-1', node: 'a-1', defaultTolerations: false },
        {
          name: 'own-1',
          node: 'a-1',
          defaultTolerations: false,
          tolerations: [
            {
              key: 'node.kubernetes.io/unreachable',
              operator: 'Exists',
              effect: 'NoExecute',
              tolerationSeconds: 60,
            },
          ],
        },
      ],
    });
    sim.at(5, () => {
      sim.fleet.addPod({ name: 'bare-2', node: 'a-1', defaultTolerations: false });
      sim.fleet.addPod({ name: 'default-2', node: 'a-1' });
    });
    await sim.runUntil(5);
    expect(getPod('default-1').spec?.tolerations).toEqual([notReady300, unreachable300]);
    expect(getPod('default-2').spec?.tolerations).toEqual([notReady300, unreachable300]);
    expect(getPod('bare-1').spec?.tolerations).toBeUndefined();
    expect(getPod('bare-2').spec?.tolerations).toBeUndefined();
    expect(getPod('bare-2').status?.phase).toBe('Running');
    expect(getPod('own-1').spec?.tolerations).toEqual([
      {
        key: 'node.kubernetes.io/unreachable',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 60,
      },
    ]);
  });

  it('a DaemonSet pod is owned by its DaemonSet and tolerates not-ready and unreachable forever', async () => {
    sim = simulation();
    sim.fleet.seed({
      nodes: [{ name: 'a-1' }, { name: 'a-2' }],
      pods: [
        {
          name: 'agent-a-1',
          node: 'a-1',
          daemonSet: 'agent',
          namespace: 'kube-system',
          tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
        },
      ],
    });
    sim.at(5, () => sim.fleet.addPod({ name: 'net-a-2', node: 'a-2', daemonSet: true, hostNetwork: true }));
    await sim.runUntil(5);
    const ds = sim.store.daemonSets.get('agent', { namespace: 'kube-system' });
    const seeded = getPod('agent-a-1', 'kube-system');
    expect(seeded.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        name: 'agent',
        uid: ds.metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(seeded.metadata?.labels).toEqual({ 'app.kubernetes.io/name': 'agent' });
    expect(
      seeded.spec?.tolerations?.map((t) => `${t.key ?? ''}:${t.effect ?? ''}:${t.tolerationSeconds ?? '∞'}`),
    ).toEqual([
      'dedicated:NoSchedule:∞',
      'node.kubernetes.io/not-ready:NoExecute:∞',
      'node.kubernetes.io/unreachable:NoExecute:∞',
      'node.kubernetes.io/disk-pressure:NoSchedule:∞',
      'node.kubernetes.io/memory-pressure:NoSchedule:∞',
      'node.kubernetes.io/pid-pressure:NoSchedule:∞',
      'node.kubernetes.io/unschedulable:NoSchedule:∞',
    ]);
    // Added through the API: DefaultTolerationSeconds adds nothing after the forever ones.
    const added = getPod('net-a-2');
    expect(added.metadata?.ownerReferences?.[0]?.name).toBe('simulated-daemonset');
    expect(added.spec?.tolerations?.map((t) => t.key)).toContain('node.kubernetes.io/network-unavailable');
    expect(added.spec?.tolerations?.some((t) => t.tolerationSeconds !== undefined)).toBe(false);
    expect(added.status?.podIP).toBe(sim.fleet.kubelet('a-2')?.internalIP); // host network
  });
});
