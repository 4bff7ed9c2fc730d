// The stalled-watch fault (faults.ts stallWatches): a matching watch stream stays open and delivers
// nothing, not even bookmarks; what happened during the stall is never delivered on it; lists, and
// watches opened after the stall, are served normally. Over HTTP through client-node's Watch, and in
// process through `nlc simulate`'s inProcessWatch.
import { type KubernetesObject, Watch } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Faults } from '../../../local/apiserver/faults.js';
import { createApiStore } from '../../../local/apiserver/index.js';
import { inProcessWatch } from '../../../local/simulate/transport.js';
import { type Sim, startSim, waitFor } from './helpers.js';

let sim: Sim;

beforeEach(async () => {
  sim = await startSim({ identities: [{ name: 'relay', token: 'relay-token' }] });
});

afterEach(async () => {
  await sim.api.close();
});

const node = (name: string) => ({ metadata: { name } });

interface Seen {
  readonly type: string;
  readonly name: string;
}

async function watchNodes(params: Record<string, string | number | boolean | undefined>, token?: string) {
  const seen: Seen[] = [];
  const done: unknown[] = [];
  const controller = await new Watch(sim.api.kubeConfig(token)).watch(
    '/api/v1/nodes',
    params,
    (type, obj: KubernetesObject) => {
      seen.push({ type, name: obj.metadata?.name ?? '' });
    },
    (err: unknown) => {
      done.push(err);
    },
  );
  return { seen, done, controller };
}

const names = (seen: readonly Seen[]) => seen.map((e) => `${e.type} ${e.name}`);

describe('a stalled watch over HTTP', () => {
  it('stays open and delivers nothing, not even bookmarks, and never what happened meanwhile', async () => {
    const w = await watchNodes({ resourceVersion: sim.api.store.resourceVersion, allowWatchBookmarks: true });
    sim.api.store.nodes.create(node('node-a'));
    await waitFor(() => w.seen.length === 1, 'node-a');

    const end = sim.api.faults.stallWatches({ resource: 'nodes' });
    sim.api.store.nodes.create(node('node-b'));
    sim.api.store.sendBookmarks();
    // A list during the stall is served normally.
    expect((await sim.core.listNode()).items.map((n) => n.metadata?.name)).toEqual(['node-a', 'node-b']);
    end();

    sim.api.store.nodes.create(node('node-c'));
    await waitFor(() => w.seen.length >= 2, 'an event after the stall');
    // The stream is ordered: had node-b or the bookmark been sent, they would have come before node-c.
    expect(names(w.seen)).toEqual(['ADDED node-a', 'ADDED node-c']);
    expect(w.done).toEqual([]);
    w.controller.abort();
  });

  it('stalls watches opened during the stall too; a watch opened after it replays history normally', async () => {
    const from = sim.api.store.resourceVersion;
    const end = sim.api.faults.stallWatches({ resource: 'nodes' });
    const during = await watchNodes({ resourceVersion: from });
    sim.api.store.nodes.create(node('node-a'));
    end();
    sim.api.store.nodes.create(node('node-b'));
    await waitFor(() => during.seen.length >= 1, 'an event after the stall');
    expect(names(during.seen)).toEqual(['ADDED node-b']);

    const after = await watchNodes({ resourceVersion: from });
    await waitFor(() => after.seen.length === 2, 'the replay');
    expect(names(after.seen)).toEqual(['ADDED node-a', 'ADDED node-b']);
    during.controller.abort();
    after.controller.abort();
  });

  it('matches like the other faults: watches of other resources or users are not stalled', async () => {
    const end = sim.api.faults.stallWatches({ resource: 'nodes', user: 'relay' });
    const relays = await watchNodes({ resourceVersion: sim.api.store.resourceVersion }, 'relay-token');
    const admins = await watchNodes({ resourceVersion: sim.api.store.resourceVersion });
    sim.api.store.nodes.create(node('node-a'));
    await waitFor(() => admins.seen.length === 1, "the admin's event");
    sim.api.faults.clear(); // ends every stall too
    sim.api.store.nodes.create(node('node-b'));
    await waitFor(() => relays.seen.length >= 1, "the relay's event after the stall");
    expect(names(relays.seen)).toEqual(['ADDED node-b']);
    end(); // ending a stall already cleared is harmless
    relays.controller.abort();
    admins.controller.abort();
  });
});

describe('a stalled watch in process (inProcessWatch)', () => {
  it("applies the Faults' stalls it is given, to its user's watches", async () => {
    const store = createApiStore({ seed: 1 });
    const faults = new Faults();
    const seen: string[] = [];
    const watch = inProcessWatch(store.registry, { faults, user: 'relay' });
    const controller = await watch.watch(
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
      { resourceVersion: store.resourceVersion, allowWatchBookmarks: true },
      (type, obj) => seen.push(`${type} ${(obj as KubernetesObject).metadata?.name ?? ''}`),
      () => undefined,
    );
    const lease = (name: string) => ({ metadata: { name, namespace: 'kube-node-lease' }, spec: {} });

    const end = faults.stallWatches({ resource: 'leases', user: 'relay' });
    store.leases.create(lease('node-a'));
    store.sendBookmarks();
    expect(seen).toEqual([]);
    end();
    store.leases.create(lease('node-b'));
    expect(seen).toEqual(['ADDED node-b']);
    controller.abort();

    // Without Faults (or for another user) nothing stalls.
    const unfaulty: string[] = [];
    for (const options of [{}, { faults, user: 'someone-else' }]) {
      await inProcessWatch(store.registry, options).watch(
        '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
        { resourceVersion: store.resourceVersion },
        (type) => unfaulty.push(type),
        () => undefined,
      );
    }
    const endAgain = faults.stallWatches({ resource: 'leases', user: 'relay' });
    store.leases.create(lease('node-c'));
    expect(unfaulty).toEqual(['ADDED', 'ADDED']);
    endAgain();
  });
});
