// The kubelets across an etcd restore (the API simulator's store back to an earlier snapshot, every
// watch ended with 410 Gone): the fleet relists and watches again, and the kubelets keep running on the
// restored objects, recovering from their now stale copies as upstream's do.
import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { RegistrySnapshot, Wire } from '../../../local/apiserver/index.js';
import { condition, sinceT0, type Simulation, simulation } from './helpers.js';

let sim: Simulation;
afterEach(() => {
  sim.close();
});

/** A backup at `backupAt` seconds, restored at `restoreAt`. */
function restoreAt(backupAt: number, at: number): void {
  let backup: RegistrySnapshot | undefined;
  sim.at(backupAt, () => {
    backup = sim.store.snapshot();
  });
  sim.at(at, () => {
    if (backup === undefined) throw new Error('no backup');
    sim.store.restore(backup);
  });
}

const renewedAt = (node: string) =>
  sinceT0(sim.store.leases.get(node, { namespace: 'kube-node-lease' }).spec?.renewTime);
const nodeNames = () => sim.store.nodes.list().items.map((n) => n.metadata?.name);
const podNames = () => sim.store.pods.list({ namespace: 'default' }).items.map((p) => p.metadata?.name);

describe('kubelets across a restore', () => {
  it('keep renewing and posting status: their stale copies conflict and are read again', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }, { name: 'a-2' }] });
    sim.at(40, () => {
      sim.fleet.setCondition('a-1', 'MemoryPressure', 'True');
    });
    restoreAt(25, 60);
    const restored: unknown[] = [];
    // Right after the restore, before the kubelets' ticks of that instant.
    sim.at(60, () => {
      restored.push(condition(sim.store.nodes.get('a-1'), 'MemoryPressure')?.status, renewedAt('a-1'));
    });
    await sim.runUntil(59);
    expect(condition(sim.store.nodes.get('a-1'), 'MemoryPressure')?.status).toBe('True');
    await sim.runUntil(95);
    // Restored: the condition as before 40 s, the lease as renewed at 20 s.
    expect(restored).toEqual(['False', 20]);
    // The kubelets' ticks at 60 s come after the restore: the renewals go on (the update from the copy
    // written at 50 s conflicts; the kubelet reads the Lease and renews that), and a-1 posts again what
    // it reports.
    expect(renewedAt('a-1')).toBe(90);
    expect(renewedAt('a-2')).toBe(90);
    expect(condition(sim.store.nodes.get('a-1'), 'MemoryPressure')?.status).toBe('True');
    expect(sim.apiErrors).toEqual([]);
  });

  it('lose a node created since the backup (its kubelet goes with it); get back one deleted since, stopped', async () => {
    sim = simulation();
    sim.fleet.seed({ nodes: [{ name: 'a-1' }, { name: 'a-2' }] });
    sim.at(30, () => sim.fleet.addNode({ name: 'b-1' }));
    sim.at(35, () => {
      sim.fleet.deleteNode('a-2');
    });
    restoreAt(25, 60);
    await sim.runUntil(59);
    expect(nodeNames()).toEqual(['a-1', 'b-1']);
    await sim.runUntil(69);
    expect(nodeNames()).toEqual(['a-1', 'a-2']);
    expect(sim.fleet.kubelet('b-1')).toBeUndefined();
    expect(() => sim.store.leases.get('b-1', { namespace: 'kube-node-lease' })).toThrow(/not found/);
    // a-2's machine went with its Node: it is back with a kubelet that does nothing until started.
    expect(sim.fleet.kubelet('a-2')?.state).toBe('stopped');
    expect(renewedAt('a-2')).toBe(20);
    sim.at(70, () => {
      sim.fleet.startKubelet('a-2');
    });
    await sim.runUntil(95);
    expect(renewedAt('a-2')).toBe(90);
    expect(condition(sim.store.nodes.get('a-2'), 'Ready')?.status).toBe('True');
    expect(nodeNames()).toEqual(['a-1', 'a-2']);
  });

  it('get back a pod deleted since the backup, never confirm a deletion the restore undid, drop new pods', async () => {
    // Deletions confirmed 30 s after the kubelet sees them (a pod's default grace period).
    sim = simulation({ podTerminationDelay: 30_000 });
    sim.fleet.seed({
      nodes: [{ name: 'a-1' }],
      pods: [
        { name: 'gone-1', node: 'a-1' },
        { name: 'terminating-1', node: 'a-1' },
      ],
    });
    sim.at(10, () => sim.fleet.deletePod('default', 'gone-1', { gracePeriodSeconds: 0 }));
    sim.at(30, () => sim.fleet.addPod({ name: 'new-1', node: 'a-1' }));
    sim.at(40, () => sim.fleet.deletePod('default', 'terminating-1'));
    restoreAt(5, 60);
    await sim.runUntil(59);
    expect(podNames()).toEqual(['new-1', 'terminating-1']);
    expect(
      sim.store.pods.get('terminating-1', { namespace: 'default' }).metadata?.deletionTimestamp,
    ).toBeDefined();
    await sim.runUntil(120);
    // terminating-1's confirmation was due at 70 s: the restored pod is not being deleted, and stays.
    expect(podNames()).toEqual(['gone-1', 'terminating-1']);
    const pods: Wire<V1Pod>[] = sim.store.pods.list({ namespace: 'default' }).items;
    for (const pod of pods) {
      expect(pod.metadata?.deletionTimestamp).toBeUndefined();
      expect(pod.status?.phase).toBe('Running');
    }
    expect(sim.apiErrors).toEqual([]);
  });
});
