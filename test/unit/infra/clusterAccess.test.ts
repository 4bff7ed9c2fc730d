// The functions' ClusterRole grants exactly what the Kubernetes adapter calls, and never more than
// upstream's system:controller:node-controller (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/
// controller_policy.go), whose job the functions take over.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadManifests } from '../../../scripts/validate-manifests.js';

const repo = (path: string): string => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

/** client-node CoreV1Api method → the resource and verb the API server authorizes. */
const METHOD_PERMISSIONS: Readonly<Record<string, string>> = {
  readNode: 'nodes:get',
  listNode: 'nodes:list',
  patchNode: 'nodes:patch',
  replaceNode: 'nodes:update',
  patchNodeStatus: 'nodes/status:patch',
  replaceNodeStatus: 'nodes/status:update',
  readNamespacedPod: 'pods:get',
  listNamespacedPod: 'pods:list',
  listPodForAllNamespaces: 'pods:list',
  deleteNamespacedPod: 'pods:delete',
  patchNamespacedPodStatus: 'pods/status:patch',
  replaceNamespacedPodStatus: 'pods/status:update',
  createNamespacedEvent: 'events:create',
  patchNamespacedEvent: 'events:patch',
};

/** system:controller:node-controller, core group (plus eventsRule's create/update/patch). */
const UPSTREAM_NODE_CONTROLLER = new Set([
  ...['get', 'list', 'update', 'delete', 'patch'].map((v) => `nodes:${v}`),
  ...['patch', 'update'].map((v) => `nodes/status:${v}`),
  ...['patch', 'update'].map((v) => `pods/status:${v}`),
  ...['list', 'get', 'delete'].map((v) => `pods:${v}`),
  ...['create', 'update', 'patch'].map((v) => `events:${v}`),
]);

async function granted(): Promise<Set<string>> {
  const [role] = await loadManifests([repo('infra/cluster-access/clusterrole.yaml')]);
  const rules = (role?.object as { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] })
    .rules;
  expect(rules.every((rule) => rule.apiGroups.length === 1 && rule.apiGroups[0] === '')).toBe(true);
  return new Set(rules.flatMap((rule) => rule.resources.flatMap((r) => rule.verbs.map((v) => `${r}:${v}`))));
}

async function used(): Promise<Set<string>> {
  // Every module of the adapter: cluster.ts assembles the port from several (node writes, pod writes…).
  const dir = repo('shared/adapters/kubernetes');
  const files = (await readdir(dir)).filter((file) => file.endsWith('.ts'));
  const sources = await Promise.all(files.map((file) => readFile(join(dir, file), 'utf8')));
  const methods = sources.flatMap((source) =>
    [...source.matchAll(/\bcore\.(\w+)\(/g)].map((m) => m[1] ?? ''),
  );
  expect(methods.length).toBeGreaterThan(0);
  return new Set(
    methods.map((method) => {
      const permission = METHOD_PERMISSIONS[method];
      if (permission === undefined)
        throw new Error(`add ${method} to METHOD_PERMISSIONS and to the ClusterRole`);
      return permission;
    }),
  );
}

describe('infra/cluster-access/clusterrole.yaml', () => {
  it('grants exactly what the Kubernetes adapter (shared/adapters/kubernetes) calls', async () => {
    expect([...(await granted())].sort()).toEqual([...(await used())].sort());
  });

  it("is no wider than upstream's system:controller:node-controller", async () => {
    for (const permission of await granted())
      expect(UPSTREAM_NODE_CONTROLLER, permission).toContain(permission);
  });

  it('node-leases.yaml: get on Leases in kube-node-lease only, bound to the same subjects (lease confirmation)', async () => {
    const [role, binding] = await loadManifests([repo('infra/cluster-access/node-leases.yaml')]);
    expect(role?.object).toMatchObject({
      kind: 'Role',
      metadata: { namespace: 'kube-node-lease' },
      rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] }],
    });
    expect(binding?.object).toMatchObject({
      kind: 'RoleBinding',
      metadata: { namespace: 'kube-node-lease' },
      subjects: [
        { kind: 'Group', name: 'nlc-node-lifecycle-controller' },
        { kind: 'ServiceAccount', name: 'nlc-controller', namespace: 'nlc-system' },
      ],
    });
    const kustomization = await readFile(repo('infra/cluster-access/kustomization.yaml'), 'utf8');
    expect(kustomization).toMatch(/^ {2}- node-leases\.yaml$/m);
  });

  it('is bound to the EKS access-entry group and the kubeconfig service account', async () => {
    const [binding] = await loadManifests([repo('infra/cluster-access/clusterrolebinding.yaml')]);
    expect(binding?.object).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'nlc-node-lifecycle-controller' },
      subjects: [
        { kind: 'Group', name: 'nlc-node-lifecycle-controller' },
        { kind: 'ServiceAccount', name: 'nlc-controller', namespace: 'nlc-system' },
      ],
    });
  });
});
