// List and watch through @kubernetes/client-node: resourceVersions, selectors, Watch events, bookmarks,
// 410 for a too-old resourceVersion, watch timeouts, and informers recovering from a forced 410 and
// from dropped connections.
import { type KubernetesObject, type V1Node, Watch, makeInformer } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Sim, startSim, waitFor } from './helpers.js';

let sim: Sim;

beforeEach(async () => {
  sim = await startSim();
});

afterEach(async () => {
  await sim.api.close();
});

const node = (name: string, labels: Record<string, string> = {}) => ({ metadata: { name, labels } });
const pod = (name: string, nodeName?: string, labels: Record<string, string> = {}) => ({
  metadata: { name, namespace: 'default', labels },
  spec: {
    ...(nodeName !== undefined && { nodeName }),
    containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
  },
});

interface Seen {
  readonly type: string;
  readonly name: string;
  readonly resourceVersion: string;
}

async function watchNodes(params: Record<string, string | number | boolean | undefined>) {
  const seen: Seen[] = [];
  const done: (Error | null)[] = [];
  const controller = await new Watch(sim.api.kubeConfig()).watch(
    '/api/v1/nodes',
    params,
    (type, obj: KubernetesObject) => {
      seen.push({
        type,
        name: obj.metadata?.name ?? '',
        resourceVersion: obj.metadata?.resourceVersion ?? '',
      });
    },
    (err: unknown) => {
      done.push(err instanceof Error ? err : null);
    },
  );
  return { seen, done, controller };
}

describe('list', () => {
  it('returns the items and the list resourceVersion, items without kind', async () => {
    sim.api.store.nodes.create(node('node-a'));
    sim.api.store.nodes.create(node('node-b'));
    const list = await sim.core.listNode();
    expect(list.items.map((n) => n.metadata?.name)).toEqual(['node-a', 'node-b']);
    expect(list.metadata?.resourceVersion).toBe(sim.api.store.resourceVersion);
    expect(list.items[0]?.kind).toBeUndefined();
  });

  it('filters pods by the spec.nodeName, metadata.name and metadata.namespace field selectors', async () => {
    sim.api.store.nodes.create(node('node-a'));
    sim.api.store.pods.create(pod('on-a', 'node-a'));
    sim.api.store.pods.create(pod('on-b', 'node-b'));
    sim.api.store.pods.create(pod('unbound'));
    const names = async (fieldSelector: string) =>
      (await sim.core.listPodForAllNamespaces({ fieldSelector })).items.map((p) => p.metadata?.name);
    expect(await names('spec.nodeName=node-a')).toEqual(['on-a']);
    expect(await names('spec.nodeName!=node-a,spec.nodeName!=')).toEqual(['on-b']);
    expect(await names('spec.nodeName=')).toEqual(['unbound']);
    expect(await names('metadata.name=on-b,metadata.namespace=default')).toEqual(['on-b']);
    expect((await sim.core.listNamespacedPod({ namespace: 'kube-system' })).items).toEqual([]);
  });

  it('rejects a field selector the kind does not index with 400', async () => {
    const error = await sim.core.listNode({ fieldSelector: 'spec.nodeName=x' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 400 });
  });

  it.each([
    { selector: 'zone=a', want: ['n1', 'n3'] },
    { selector: 'zone!=a', want: ['n2', 'n4'] },
    { selector: 'zone in (a,b)', want: ['n1', 'n2', 'n3'] },
    { selector: 'zone notin (a)', want: ['n2', 'n4'] },
    { selector: 'gpu', want: ['n3'] },
    { selector: '!gpu', want: ['n1', 'n2', 'n4'] },
    { selector: 'zone=a,gpu', want: ['n3'] },
  ])('filters by the label selector "$selector"', async ({ selector, want }) => {
    sim.api.store.nodes.create(node('n1', { zone: 'a' }));
    sim.api.store.nodes.create(node('n2', { zone: 'b' }));
    sim.api.store.nodes.create(node('n3', { zone: 'a', gpu: 'true' }));
    sim.api.store.nodes.create(node('n4'));
    const list = await sim.core.listNode({ labelSelector: selector });
    expect(list.items.map((n) => n.metadata?.name)).toEqual(want);
  });

  it('pages with limit and continue', async () => {
    for (const name of ['n1', 'n2', 'n3']) sim.api.store.nodes.create(node(name));
    const first = await sim.core.listNode({ limit: 2 });
    expect(first.items.map((n) => n.metadata?.name)).toEqual(['n1', 'n2']);
    expect(first.metadata?.remainingItemCount).toBe(1);
    const next = await sim.core.listNode({ limit: 2, _continue: first.metadata?._continue ?? '' });
    expect(next.items.map((n) => n.metadata?.name)).toEqual(['n3']);
    expect(next.metadata?._continue).toBeUndefined();
  });

  it('pages a selected list within its namespace, without a remaining count (as kube-apiserver)', async () => {
    sim.api.store.namespaces.create({ metadata: { name: 'other' } });
    for (const name of ['p1', 'p2', 'p3', 'p4', 'p5'])
      sim.api.store.pods.create(pod(name, name === 'p3' ? undefined : 'n1'));
    sim.api.store.pods.create({ ...pod('p0', 'n1'), metadata: { name: 'p0', namespace: 'other' } });
    const names: string[] = [];
    let cont: string | undefined;
    do {
      const page = await sim.core.listNamespacedPod({
        namespace: 'default',
        fieldSelector: 'spec.nodeName!=',
        limit: 2,
        ...(cont !== undefined && { _continue: cont }),
      });
      expect(page.metadata?.remainingItemCount).toBeUndefined();
      names.push(...page.items.map((p) => p.metadata?.name ?? ''));
      cont = page.metadata?._continue;
    } while (cont !== undefined);
    expect(names).toEqual(['p1', 'p2', 'p4', 'p5']);
  });
});

describe('watch', () => {
  it('resumes after a resourceVersion and streams ADDED, MODIFIED and DELETED in order', async () => {
    const start = sim.api.store.resourceVersion;
    sim.api.store.nodes.create(node('node-a'));
    const w = await watchNodes({ resourceVersion: start });
    await waitFor(() => w.seen.length === 1, 'the replayed ADDED');
    sim.api.store.nodes.patch('node-a', { metadata: { labels: { x: 'y' } } }, { type: 'merge' });
    sim.api.store.nodes.delete('node-a');
    await waitFor(() => w.seen.length === 3, 'three events');
    expect(w.seen.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    const versions = w.seen.map((e) => Number(e.resourceVersion));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    w.controller.abort();
  });

  it('without a resourceVersion, starts with the current objects as ADDED', async () => {
    sim.api.store.nodes.create(node('node-a'));
    const w = await watchNodes({});
    await waitFor(() => w.seen.length === 1, 'the synthetic ADDED');
    expect(w.seen[0]).toMatchObject({ type: 'ADDED', name: 'node-a' });
    w.controller.abort();
  });

  it('sends a label-filtered watcher DELETED when an object stops matching and ADDED when it starts', async () => {
    const start = sim.api.store.resourceVersion;
    sim.api.store.nodes.create(node('node-a', { pool: 'x' }));
    const w = await watchNodes({ resourceVersion: start, labelSelector: 'pool=x' });
    sim.api.store.nodes.patch('node-a', { metadata: { labels: { pool: 'y' } } }, { type: 'merge' });
    sim.api.store.nodes.patch('node-a', { metadata: { labels: { pool: 'x' } } }, { type: 'merge' });
    await waitFor(() => w.seen.length === 3, 'three events');
    expect(w.seen.map((e) => e.type)).toEqual(['ADDED', 'DELETED', 'ADDED']);
    w.controller.abort();
  });

  it('sends bookmarks only to watches that allow them', async () => {
    const withBookmarks = await watchNodes({
      resourceVersion: sim.api.store.resourceVersion,
      allowWatchBookmarks: true,
    });
    const without = await watchNodes({ resourceVersion: sim.api.store.resourceVersion });
    await waitFor(() => sim.api.requests.filter((r) => r.verb === 'watch').length === 2, 'both watches open');
    sim.api.store.nodes.create(node('node-a'));
    sim.api.store.sendBookmarks();
    await waitFor(() => withBookmarks.seen.length === 2, 'the ADDED and the BOOKMARK');
    expect(withBookmarks.seen[1]).toEqual({
      type: 'BOOKMARK',
      name: '',
      resourceVersion: sim.api.store.resourceVersion,
    });
    sim.api.store.nodes.create(node('node-b'));
    await waitFor(() => without.seen.length === 2, 'two ADDED');
    expect(without.seen.map((e) => e.type)).toEqual(['ADDED', 'ADDED']);
    withBookmarks.controller.abort();
    without.controller.abort();
  });

  it('answers a too-old resourceVersion with HTTP 200 and an ERROR event carrying 410 Expired', async () => {
    const old = sim.api.store.resourceVersion;
    sim.api.store.nodes.create(node('node-a'));
    sim.api.store.compact();
    const events: { type: string; obj: unknown }[] = [];
    const done: unknown[] = [];
    await new Watch(sim.api.kubeConfig()).watch(
      '/api/v1/nodes',
      { resourceVersion: old },
      (type, obj) => events.push({ type, obj }),
      (err) => done.push(err),
    );
    await waitFor(() => done.length === 1, 'the stream to end');
    expect(done[0]).toBeNull();
    expect(events).toEqual([
      {
        type: 'ERROR',
        obj: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `too old resource version: ${old} (${sim.api.store.resourceVersion})`,
          reason: 'Expired',
          code: 410,
        },
      },
    ]);
  });

  it('keeps history for resuming: an event younger than the window is still there after many writes', async () => {
    const start = sim.api.store.resourceVersion;
    for (let i = 0; i < 150; i++) sim.api.store.nodes.create(node(`n${i}`));
    const w = await watchNodes({ resourceVersion: start });
    await waitFor(() => w.seen.length === 150, 'all 150 replayed');
    w.controller.abort();
  });

  it('expires history older than the window once more than the minimum is kept', async () => {
    const start = sim.api.store.resourceVersion;
    for (let i = 0; i < 150; i++) sim.api.store.nodes.create(node(`n${i}`));
    sim.clock.advance(120_000);
    sim.api.store.nodes.create(node('late'));
    const w = await watchNodes({ resourceVersion: start });
    await waitFor(() => w.done.length === 1, 'the stream to end');
    expect(w.seen).toEqual([{ type: 'ERROR', name: '', resourceVersion: '' }]);
  });

  it('ends the stream after timeoutSeconds', async () => {
    const w = await watchNodes({ resourceVersion: sim.api.store.resourceVersion, timeoutSeconds: 1 });
    await waitFor(() => w.done.length === 1, 'the watch to time out');
    expect(w.done).toEqual([null]);
  });
});

describe('informer', () => {
  /** An informer; with `restartOnError`, restarted 10 ms after an error, as the relay does. */
  function startInformer(restartOnError = false) {
    const informer = makeInformer<V1Node>(sim.api.kubeConfig(), '/api/v1/nodes', () => sim.core.listNode());
    const errors: unknown[] = [];
    let running = true;
    informer.on('error', (err) => {
      if (!running) return; // client-node 1.4 reports an AbortError on stop()
      errors.push(err);
      if (restartOnError) setTimeout(() => void informer.start(), 10);
    });
    const stop = async () => {
      running = false;
      await informer.stop();
    };
    return { informer, errors, stop };
  }
  const names = (informer: { list(): readonly V1Node[] }) =>
    informer
      .list()
      .map((n) => n.metadata?.name)
      .sort();
  const lists = () => sim.api.requests.filter((r) => r.verb === 'list' && r.resource === 'nodes').length;
  const watches = () => sim.api.requests.filter((r) => r.verb === 'watch' && r.resource === 'nodes').length;

  it('relists after a forced 410 and catches up with what it missed', async () => {
    sim.api.store.nodes.create(node('node-a'));
    const { informer, stop } = startInformer();
    await informer.start();
    await waitFor(() => watches() === 1, 'the first watch');
    expect(names(informer)).toEqual(['node-a']);

    // The stream ends cleanly (as a watch timeout does); before the informer re-watches from its
    // resourceVersion, a node is added and history compacted: the resume gets 410, then a relist.
    sim.api.faults.dropWatches({ resource: 'nodes' }, 'end');
    sim.api.store.nodes.create(node('node-b'));
    sim.api.store.compact();
    await waitFor(() => names(informer).length === 2, 'node-b in the informer cache');
    expect(names(informer)).toEqual(['node-a', 'node-b']);
    expect(lists()).toBe(2);
    await stop();
  });

  it('resumes without relisting when a stream closes cleanly', async () => {
    const { informer, stop } = startInformer();
    await informer.start();
    await waitFor(() => watches() === 1, 'the first watch');
    sim.api.faults.dropWatches({ resource: 'nodes' }, 'end');
    sim.api.store.nodes.create(node('node-b'));
    await waitFor(() => names(informer).length === 1, 'node-b in the informer cache');
    expect(lists()).toBe(1);
    expect(watches()).toBe(2);
    await stop();
  });

  it('recovers from a dropped connection when restarted on error, as the relay does', async () => {
    const { informer, errors, stop } = startInformer(true);
    await informer.start();
    await waitFor(() => watches() === 1, 'the first watch');
    expect(sim.api.faults.dropWatches({ resource: 'nodes' }, 'reset')).toBe(1);
    await waitFor(() => errors.length === 1, 'the informer to report the broken stream');
    sim.api.store.nodes.create(node('node-c'));
    await waitFor(() => names(informer).includes('node-c'), 'node-c in the informer cache');
    await stop();
  });

  it('recovers when the server cuts a watch after its first event', async () => {
    const { informer, errors, stop } = startInformer(true);
    await informer.start();
    await waitFor(() => watches() === 1, 'the first watch');
    sim.api.faults.inject({
      kind: 'dropWatch',
      afterEvents: 1,
      mode: 'reset',
      match: { resource: 'nodes' },
      times: 1,
    });
    sim.api.faults.dropWatches({ resource: 'nodes' }, 'end');
    await waitFor(() => watches() === 2, 'the re-watch');
    sim.api.store.nodes.create(node('node-d'));
    await waitFor(() => errors.length === 1, 'the cut after one event');
    sim.api.store.nodes.create(node('node-e'));
    await waitFor(() => names(informer).length === 2, 'both nodes in the informer cache');
    expect(names(informer)).toEqual(['node-d', 'node-e']);
    await stop();
  });
});
