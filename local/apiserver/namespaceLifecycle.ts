// Namespaces as kube-apiserver keeps them: the ones it creates at start, the ones that may never be
// deleted, and the NamespaceLifecycle admission plugin (no new objects in a missing or terminating
// namespace). Deleting a namespace (the namespace controller's cleanup) is the registry's, which owns
// the store.
import { type JsonObject, getString } from './json.js';
import { type ResourceDef, allResources } from './resources.js';
import { type GroupResource, forbidden, notFound } from './status.js';

/** The namespaces a real kube-apiserver creates at start (kube-node-lease by the lease controller). */
export const systemNamespaces = ['default', 'kube-node-lease', 'kube-public', 'kube-system'] as const;

const protectedNamespaces = new Set(['default', 'kube-system', 'kube-public']);

/** The namespaces the namespace lifecycle controller refuses to delete. */
export function isProtectedNamespace(name: string): boolean {
  return protectedNamespaces.has(name);
}

/** NamespaceLifecycle admission; `lookup` reads a namespace object from storage. */
export function admitNamespaceLifecycle(
  def: ResourceDef,
  obj: JsonObject,
  lookup: (namespace: string) => Readonly<JsonObject> | undefined,
): void {
  if (!def.namespaced) return;
  const namespace = getString(obj, ['metadata', 'namespace']) ?? '';
  if (namespace === '') return; // validation reports the missing namespace
  const ns = lookup(namespace);
  if (ns === undefined) throw notFound({ group: '', resource: 'namespaces' }, namespace);
  if (getString(ns, ['status', 'phase']) === 'Terminating' && def.storage !== 'events') {
    const resource: GroupResource = { group: def.group, resource: def.resource };
    throw forbidden(
      resource,
      getString(obj, ['metadata', 'name']) ?? '',
      `unable to create new content in namespace ${namespace} because it is being terminated`,
    );
  }
}

/** One definition per storage of the namespaced kinds (events once, not per API group). */
export function namespacedStorages(): readonly ResourceDef[] {
  const seen = new Set<string>();
  return allResources.filter((def) => {
    if (!def.namespaced || seen.has(def.storage)) return false;
    seen.add(def.storage);
    return true;
  });
}
