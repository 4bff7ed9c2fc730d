// An etcd restore (Registry.restore, `nlc simulate`'s restoreApiServer): the store goes back to a
// snapshot — objects created since vanish, deleted ones reappear, changed ones revert, the resourceVersion
// counter goes back — and every open watch ends with an ERROR event carrying 410 Expired, in process and
// over HTTP through client-node, so clients relist.
import { type KubernetesObject, Watch } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiStore, type ApiStore, ApiStatusError } from '../../../local/apiserver/index.js';
import { type Sim, startSim, VirtualClock } from './helpers.js';

const node = (name: string) => ({ metadata: { name } });
const pod = (name: string, nodeName: string) => ({
  metadata: { name, namespace: 'default' },
  spec: { nodeName, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
});

describe('Registry.restore, in process', () => {
  let clock: VirtualClock;
  let store: ApiStore;

  beforeEach(() => {
    clock = new VirtualClock();
    store = createApiStore({ clock });
  });

  it('reverts every object and the resourceVersion counter', () => {
    store.nodes.create(node('a-1'));
    const kept = store.nodes.create(node('a-2'));
    const deletedLater = store.pods.create(pod('web-1', 'a-1'));
    const before = store.resourceVersion;
    const backup = store.snapshot();

    store.nodes.create(node('b-1'));
    store.nodes.patch('a-2', { spec: { unschedulable: true } }, { type: 'strategic' });
    store.pods.delete('web-1', { namespace: 'default', gracePeriodSeconds: 0 });
    expect(Number(store.resourceVersion)).toBeGreaterThan(Number(before));

    store.restore(backup);
    expect(store.resourceVersion).toBe(before);
    expect(store.nodes.list().items.map((n) => n.metadata?.name)).toEqual(['a-1', 'a-2']);
    expect(store.nodes.list().metadata.resourceVersion).toBe(before);
    // Reverted, whole: the same resourceVersion and content as in the backup.
    expect(store.nodes.get('a-2')).toEqual(kept);
    expect(store.pods.get('web-1', { namespace: 'default' })).toEqual(deletedLater);
    expect(() => store.nodes.get('b-1')).toThrow(/not found/);
    // Field-selector indexes follow: the pods of a-1 are found again.
    expect(
      store.pods.list({ fieldSelector: 'spec.nodeName=a-1' }).items.map((p) => p.metadata?.name),
    ).toEqual(['web-1']);
    // Writes go on from the restored counter: resourceVersions are reused, as after a real restore.
    const next = store.nodes.create(node('c-1'));
    expect(next.metadata?.resourceVersion).toBe(String(Number(before) + 1));
  });

  it('ends every open watch with an ERROR event (410 Expired), then calls its end', () => {
    store.nodes.create(node('a-1'));
    const backup = store.snapshot();
    const seen: string[] = [];
    let ended = 0;
    store.nodes.watch(
      { resourceVersion: store.resourceVersion },
      (event) => {
        const status = event.object as { code?: number; reason?: string; status?: string };
        seen.push(
          event.type === 'ERROR' ? `ERROR ${status.status} ${status.code} ${status.reason}` : event.type,
        );
      },
      () => {
        ended++;
      },
    );
    store.nodes.create(node('b-1'));
    store.restore(backup);
    store.nodes.create(node('c-1')); // the ended watch sees no more
    expect(seen).toEqual(['ADDED', 'ERROR Failure 410 Expired']);
    expect(ended).toBe(1);
  });

  it('answers 410 to a watch resumed from before the restore, or from the history it undid', () => {
    store.nodes.create(node('a-1'));
    const early = store.resourceVersion;
    store.nodes.create(node('a-2'));
    const backup = store.snapshot();
    store.nodes.create(node('b-1'));
    const undone = store.resourceVersion;
    store.restore(backup);
    const expired = (resourceVersion: string) => {
      try {
        store.nodes.watch({ resourceVersion }, () => undefined).stop();
      } catch (error) {
        return error instanceof ApiStatusError ? error.code : error;
      }
      return 'watching';
    };
    expect(expired(early)).toBe(410);
    expect(expired(undone)).toBe(410);
    expect(expired(store.resourceVersion)).toBe('watching');
    expect(expired('0')).toBe('watching');
  });

  it('brings back the events with their expiry, and drops the ones written since', () => {
    const event = (name: string) => ({
      metadata: { name, namespace: 'default' },
      involvedObject: { kind: 'Node', name: 'a-1' },
      reason: 'Test',
      message: name,
    });
    store.events.create(event('old'));
    const backup = store.snapshot();
    clock.advance(30 * 60_000);
    store.events.delete('old', { namespace: 'default' });
    store.events.create(event('new'));
    store.restore(backup);
    expect(store.events.list({ namespace: 'default' }).items.map((e) => e.metadata.name)).toEqual(['old']);
    // Written at 0 with a 1 h TTL: gone after 1 h, as if never deleted.
    clock.advance(30 * 60_000 + 1);
    expect(store.events.list({ namespace: 'default' }).items).toEqual([]);
  });
});

describe('Registry.restore, over HTTP', () => {
  let sim: Sim;

  beforeEach(async () => {
    sim = await startSim();
  });

  afterEach(async () => {
    await sim.api.close();
  });

  it('sends an open watch stream an ERROR event with 410, then ends it cleanly', async () => {
    sim.api.store.nodes.create(node('a-1'));
    const backup = sim.api.store.snapshot();
    const seen: string[] = [];
    const done: unknown[] = [];
    await new Watch(sim.api.kubeConfig()).watch(
      '/api/v1/nodes',
      { resourceVersion: sim.api.store.resourceVersion },
      (type, obj: KubernetesObject & { code?: number }) => {
        seen.push(type === 'ERROR' ? `ERROR ${obj.code}` : `${type} ${obj.metadata?.name ?? ''}`);
      },
      (error: unknown) => {
        done.push(error ?? null);
      },
    );
    sim.api.store.nodes.create(node('b-1'));
    await waitUntil(() => seen.length === 1);
    sim.api.store.restore(backup);
    await waitUntil(() => done.length === 1);
    expect(seen).toEqual(['ADDED b-1', 'ERROR 410']);
    expect(done).toEqual([null]);
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}
