// The simulator without HTTP, on a virtual clock, as `nlc simulate` and the kubelet fleet use it:
// synchronous, ordered watch delivery; timestamps from the injected clock; deterministic ids.
import { describe, expect, it } from 'vitest';
import { ApiStatusError, createApiStore } from '../../../local/apiserver/index.js';
import { VirtualClock } from './helpers.js';

const node = (name: string) => ({ metadata: { name } });

describe('in-process store', () => {
  it('delivers watch events synchronously, before the write returns', () => {
    const store = createApiStore({ clock: new VirtualClock() });
    const seen: string[] = [];
    const watch = store.nodes.watch({ resourceVersion: store.resourceVersion }, (e) =>
      seen.push(`${e.type} ${e.object.metadata?.name ?? ''}`),
    );
    store.nodes.create(node('node-a'));
    expect(seen).toEqual(['ADDED node-a']);
    watch.stop();
    store.nodes.create(node('node-b'));
    expect(seen).toEqual(['ADDED node-a']);
  });

  it('keeps every watcher in resourceVersion order when a watcher writes from its callback', () => {
    const store = createApiStore({ clock: new VirtualClock() });
    const first: string[] = [];
    const second: string[] = [];
    // A kubelet-like reactor: when a node appears, it creates its lease.
    store.nodes.watch({ resourceVersion: store.resourceVersion }, (e) => {
      first.push(e.object.metadata?.resourceVersion ?? '');
      if (e.type === 'ADDED' && e.object.metadata?.name === 'node-a') store.nodes.create(node('node-a-twin'));
    });
    store.nodes.watch({ resourceVersion: store.resourceVersion }, (e) =>
      second.push(e.object.metadata?.resourceVersion ?? ''),
    );
    store.nodes.create(node('node-a'));
    expect(first).toHaveLength(2);
    expect(second).toEqual(first);
    expect(Number(first[0])).toBeLessThan(Number(first[1]));
  });

  it('stamps times from the injected clock', () => {
    const clock = new VirtualClock(Date.parse('2015-01-01T12:00:00Z'));
    const store = createApiStore({ clock });
    store.pods.create({
      metadata: { name: 'p', namespace: 'default' },
      spec: { nodeName: 'n', containers: [{ name: 'c', image: 'i' }] },
    });
    clock.advance(5_000);
    const deleted = store.pods.delete('p', { namespace: 'default', gracePeriodSeconds: 30 });
    expect(deleted).toMatchObject({
      metadata: {
        creationTimestamp: '2015-01-01T12:00:00Z',
        deletionTimestamp: '2015-01-01T12:00:35Z',
        deletionGracePeriodSeconds: 30,
      },
    });
  });

  it('produces the same uids and generated names for the same seed', () => {
    const make = () => {
      const store = createApiStore({ clock: new VirtualClock(), seed: 42 });
      const created = store.events.create({
        metadata: { generateName: 'node-a.', namespace: 'default' },
        involvedObject: { kind: 'Node', name: 'node-a' },
        reason: 'R',
      });
      return [created.metadata.name, created.metadata.uid];
    };
    const [name, uid] = make();
    expect(make()).toEqual([name, uid]);
    expect(name).toMatch(/^node-a\.[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('throws ApiStatusError with the Status a client would get', () => {
    const store = createApiStore({ clock: new VirtualClock() });
    try {
      store.nodes.get('missing');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiStatusError);
      expect((error as ApiStatusError).status).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'nodes "missing" not found',
        reason: 'NotFound',
        details: { name: 'missing', kind: 'nodes' },
        code: 404,
      });
    }
  });

  it('throws 410 Expired when resuming from before a compaction', () => {
    const store = createApiStore({ clock: new VirtualClock() });
    const old = store.resourceVersion;
    store.nodes.create(node('node-a'));
    store.compact();
    expect(() => store.nodes.watch({ resourceVersion: old }, () => undefined)).toThrow(
      /too old resource version/,
    );
  });

  it('binds a pod through pods/binding once', () => {
    const store = createApiStore({ clock: new VirtualClock() });
    store.pods.create({
      metadata: { name: 'p', namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    });
    store.bindPod('default', 'p', 'node-a');
    expect(store.pods.get('p', { namespace: 'default' }).spec?.nodeName).toBe('node-a');
    expect(() => {
      store.bindPod('default', 'p', 'node-b');
    }).toThrow('pod p is already assigned to node "node-a"');
  });

  it('supports server-side dry run: validated, not written', () => {
    const store = createApiStore({ clock: new VirtualClock() });
    const rv = store.resourceVersion;
    expect(store.nodes.create(node('node-a'), { dryRun: true }).metadata?.name).toBe('node-a');
    expect(store.resourceVersion).toBe(rv);
    expect(store.nodes.list().items).toEqual([]);
  });
});
