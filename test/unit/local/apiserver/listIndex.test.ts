// Pods listed by spec.nodeName go through the store's index: the answer must be the one a scan of every
// pod gives, in the same order, whatever happened to the pods (created, bound, moved by a recreate,
// deleted) and whatever else the selector asks.
import { describe, expect, it } from 'vitest';
import { createApiStore, type ApiStore } from '../../../../local/apiserver/index.js';
import { VirtualClock } from '../../../integration/apiserver/helpers.js';

function pod(namespace: string, name: string, nodeName?: string) {
  return {
    metadata: { name, namespace, labels: { app: name.split('-')[0] ?? '' } },
    spec: { ...(nodeName !== undefined && { nodeName }), containers: [{ name: 'c', image: 'i' }] },
  };
}

/** The pods a full scan selects: every pod, then the selector's conditions applied by hand. */
function scanned(store: ApiStore, node: string, namespace?: string): string[] {
  return store.pods
    .list()
    .items.filter((p) => p.spec?.nodeName === node)
    .filter((p) => namespace === undefined || p.metadata?.namespace === namespace)
    .map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`);
}

function listed(
  store: ApiStore,
  fieldSelector: string,
  namespace?: string,
  labelSelector?: string,
): string[] {
  return store.pods
    .list({
      fieldSelector,
      ...(namespace !== undefined && { namespace }),
      ...(labelSelector !== undefined && { labelSelector }),
    })
    .items.map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`);
}

describe('listing pods by spec.nodeName', () => {
  it('answers what a scan of every pod answers, in key order, as pods come, move and go', () => {
    const store = createApiStore({ clock: new VirtualClock() });
    store.namespaces.create({ metadata: { name: 'shop' } });
    store.pods.create(pod('shop', 'web-2', 'node-a'));
    store.pods.create(pod('default', 'web-1', 'node-a'));
    store.pods.create(pod('default', 'db-1', 'node-b'));
    store.pods.create(pod('default', 'web-0'));
    expect(listed(store, 'spec.nodeName=node-a')).toEqual(['default/web-1', 'shop/web-2']);
    expect(listed(store, 'spec.nodeName=node-a')).toEqual(scanned(store, 'node-a'));

    // Bound by the scheduler: it joins node-b's list.
    store.bindPod('default', 'web-0', 'node-b');
    expect(listed(store, 'spec.nodeName=node-b')).toEqual(['default/db-1', 'default/web-0']);

    // Deleted (grace 0): gone from its node's list.
    store.pods.delete('db-1', { namespace: 'default', gracePeriodSeconds: 0 });
    expect(listed(store, 'spec.nodeName=node-b')).toEqual(['default/web-0']);
    expect(listed(store, 'spec.nodeName=node-b')).toEqual(scanned(store, 'node-b'));

    // Recreated under the same name on another node.
    store.pods.delete('web-1', { namespace: 'default', gracePeriodSeconds: 0 });
    store.pods.create(pod('default', 'web-1', 'node-b'));
    expect(listed(store, 'spec.nodeName=node-a')).toEqual(['shop/web-2']);
    expect(listed(store, 'spec.nodeName=node-b')).toEqual(['default/web-0', 'default/web-1']);
    expect(listed(store, 'spec.nodeName=node-c')).toEqual([]);
  });

  it('applies the namespace and the rest of the selectors as well', () => {
    const store = createApiStore({ clock: new VirtualClock() });
    store.namespaces.create({ metadata: { name: 'shop' } });
    store.pods.create(pod('shop', 'web-2', 'node-a'));
    store.pods.create(pod('default', 'web-1', 'node-a'));
    store.pods.create(pod('default', 'db-1', 'node-a'));
    expect(listed(store, 'spec.nodeName=node-a', 'shop')).toEqual(scanned(store, 'node-a', 'shop'));
    expect(listed(store, 'spec.nodeName=node-a', undefined, 'app=web')).toEqual([
      'default/web-1',
      'shop/web-2',
    ]);
    expect(listed(store, 'spec.nodeName=node-a,metadata.name!=web-1')).toEqual([
      'default/db-1',
      'shop/web-2',
    ]);
    // Not an equality on the indexed field: every pod is scanned, as before.
    expect(listed(store, 'spec.nodeName!=node-b')).toEqual(['default/db-1', 'default/web-1', 'shop/web-2']);
  });
});
