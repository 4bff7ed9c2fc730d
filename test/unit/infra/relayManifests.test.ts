// infra/relay and infra/cluster-access: schema-valid (scripts/validate-manifests.ts) and what issue #3
// asks of the relay's deployment.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  kustomizationResources,
  loadManifests,
  validateManifests,
  type LoadedManifest,
} from '../../../scripts/validate-manifests.js';
import { NodeLeaseNamespace } from '../../../relay/informers.js';
import { RelayLeaseName } from '../../../relay/main.js';
import { loadRelaySettings } from '../../../relay/settings.js';
import { PutEventsMaxBytes } from '../../../shared/adapters/eventbridge/putEvents.js';
import { DefaultDigestEntryMaxBytes } from '../../../shared/heartbeatDigest.js';

const infra = (path: string): string => fileURLToPath(new URL(`../../../infra/${path}`, import.meta.url));

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

let relay: LoadedManifest[];
const find = (kind: string, name: string): Record<string, unknown> => {
  const found = relay.find(
    (m) => m.object.kind === kind && (m.object.metadata as { name: string }).name === name,
  );
  if (found === undefined) throw new Error(`no ${kind}/${name}`);
  return found.object;
};

beforeAll(async () => {
  relay = await loadManifests([infra('relay')]);
});

describe('infra manifests', () => {
  it('pass the schema check', async () => {
    const all = await loadManifests([
      infra('relay'),
      infra('cluster-access'),
      infra('cluster-access/kubeconfig-identity.yaml'),
    ]);
    expect(validateManifests(all)).toEqual([]);
    expect(all.length).toBeGreaterThanOrEqual(12);
  });

  it.each(['relay', 'cluster-access'])(
    'infra/%s/kustomization.yaml lists every manifest of its directory',
    async (dir) => {
      const listed = (await kustomizationResources(infra(dir))).map((p) => p.split('/').at(-1));
      const files = (await readdir(infra(dir))).filter(
        (f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml' && f !== 'kubeconfig-identity.yaml',
      );
      expect(listed.sort()).toEqual(files.sort());
    },
  );
});

describe('the relay Deployment', () => {
  it('runs 2 replicas as its service account, non-root with a read-only root filesystem, with probes and requests', () => {
    const deployment = find('Deployment', 'nlc-relay') as {
      metadata: { namespace: string };
      spec: {
        replicas: number;
        selector: { matchLabels: Record<string, string> };
        template: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
      };
    };
    const { spec } = deployment;
    expect(spec.replicas).toBe(2);
    expect(spec.template.metadata.labels).toMatchObject(spec.selector.matchLabels);
    const pod = spec.template.spec as {
      serviceAccountName: string;
      securityContext: Record<string, unknown>;
      containers: Record<string, unknown>[];
    };
    expect(pod.serviceAccountName).toBe('nlc-relay');
    expect(find('ServiceAccount', 'nlc-relay')).toMatchObject({
      metadata: { namespace: deployment.metadata.namespace },
    });
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.containers).toHaveLength(1);
    const container = pod.containers[0] as Record<string, unknown>;
    expect(container).toMatchObject({
      securityContext: {
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      },
      // relay/http.ts: /readyz once the informers synced, /healthz while the process is alive.
      startupProbe: { httpGet: { path: '/readyz' } },
      readinessProbe: { httpGet: { path: '/readyz' } },
      livenessProbe: { httpGet: { path: '/healthz' } },
      resources: { requests: { cpu: expect.any(String) as string, memory: expect.any(String) as string } },
    });
  });

  it("sets the HTTP endpoints' address explicitly, so probes and scraping reach the port they name", () => {
    const deployment = find('Deployment', 'nlc-relay') as {
      spec: { template: { spec: { containers: Record<string, unknown>[] } } };
    };
    const container = deployment.spec.template.spec.containers[0] as {
      env: { name: string; value?: string }[];
      ports: { name: string; containerPort: number }[];
    };
    // relay/settings.ts binds 127.0.0.1 unless NLC_RELAY_HOST says otherwise: unreachable from the kubelet.
    expect(container.env.find((e) => e.name === 'NLC_RELAY_HOST')?.value).toBe('0.0.0.0');
    const port = container.env.find((e) => e.name === 'NLC_RELAY_PORT')?.value ?? '8080';
    expect(container.ports).toEqual([expect.objectContaining({ name: 'http', containerPort: Number(port) })]);
    const service = find('Service', 'nlc-relay') as { spec: { ports: { targetPort: unknown }[] } };
    expect(service.spec.ports.map((p) => p.targetPort)).toEqual(['http']);
  });

  it('is covered by a PodDisruptionBudget that keeps one replica', () => {
    const pdb = find('PodDisruptionBudget', 'nlc-relay') as {
      spec: { minAvailable: number; selector: unknown };
    };
    const deployment = find('Deployment', 'nlc-relay') as { spec: { selector: unknown } };
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.selector).toEqual(deployment.spec.selector);
  });
});

describe('the relay sizes (docs/relay.md#sizing)', () => {
  interface Container {
    name: string;
    env?: { name: string; value?: string }[];
    resources?: { limits?: { memory?: string } };
  }
  const mebibytes = (quantity: string): number => {
    const m = /^(\d+)(Mi|Gi)$/.exec(quantity);
    if (m === null) throw new Error(`not a Mi or Gi quantity: ${quantity}`);
    return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
  };
  const containerOf = (deployment: Record<string, unknown>): Container => {
    const { spec } = deployment as { spec: { template: { spec: { containers: Container[] } } } };
    const container = spec.template.spec.containers[0];
    if (container === undefined) throw new Error('no container');
    return container;
  };
  const largePatch = async (): Promise<Record<string, unknown>> => {
    const [patch] = await loadManifests([infra('relay-large/deployment-patch.yaml')]);
    if (patch === undefined) throw new Error('no patch');
    return patch.object;
  };

  it('patches the base Deployment and its container (infra/relay-large)', async () => {
    const patch = await largePatch();
    const { name, namespace } = find('Deployment', 'nlc-relay').metadata as Record<string, string>;
    expect(patch).toMatchObject({ kind: 'Deployment', metadata: { name, namespace } });
    expect(containerOf(patch).name).toBe(containerOf(find('Deployment', 'nlc-relay')).name);
    const kustomization = await readFile(infra('relay-large/kustomization.yaml'), 'utf8');
    expect(kustomization).toMatch(/resources:\s*\n\s*- \.\.\/relay\n/);
  });

  it('sends 1 MB digest entries in the large size, the 256 KB-safe default in the base', async () => {
    const entryMax = (container: Container) =>
      loadRelaySettings(Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value])))
        .digestEntryMaxBytes;
    expect(entryMax(containerOf(await largePatch()))).toBe(PutEventsMaxBytes);
    expect(entryMax(containerOf(find('Deployment', 'nlc-relay')))).toBe(DefaultDigestEntryMaxBytes);
  });

  // Resident memory runs about 100 MiB above the old space (semi-spaces, code, buffers: bench/relay.ts
  // at every size measured), so the heap cap must leave that much within the limit, or the container is
  // OOM-killed before V8 collects.
  it.each(['relay', 'relay-large'])(
    '%s caps the heap with room for the rest within the limit',
    async (size) => {
      const container = containerOf(size === 'relay' ? find('Deployment', 'nlc-relay') : await largePatch());
      const options = container.env?.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
      const heap = Number(/--max-old-space-size=(\d+)/.exec(options)?.[1]);
      const limit = mebibytes(container.resources?.limits?.memory ?? '');
      expect(heap).toBeGreaterThan(0);
      expect(heap + 96).toBeLessThanOrEqual(limit);
      expect(limit).toBeLessThanOrEqual(1024);
    },
  );
});

describe('the relay RBAC', () => {
  /** The Lease verbs a relay source file calls on its API client (read → get, replace → update, …). */
  async function leaseVerbsOf(file: string): Promise<string[]> {
    const source = await readFile(fileURLToPath(new URL(`../../../relay/${file}`, import.meta.url)), 'utf8');
    const verbOf: Record<string, string> = { read: 'get', create: 'create', replace: 'update', list: 'list' };
    const verbs = [...source.matchAll(/\.(\w+)NamespacedLease\(/g)].map((m) => verbOf[m[1] ?? ''] ?? m[1]);
    if (
      /watchPath: `\/apis\/coordination\.k8s\.io\/v1\/namespaces\/\$\{NodeLeaseNamespace\}\/leases`/.test(
        source,
      )
    )
      verbs.push('watch');
    return [...new Set(verbs)].sort() as string[];
  }

  it('reads nodes and pods cluster-wide, and no Lease and nothing else there', () => {
    const role = find('ClusterRole', 'nlc-relay') as { rules: Rule[] };
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['nodes', 'pods'], verbs: ['get', 'list', 'watch'] },
    ]);
  });

  it('lists and watches Leases only in kube-node-lease, with the verbs the lease informer uses', async () => {
    const role = find('Role', 'nlc-relay-node-leases') as { metadata: { namespace: string }; rules: Rule[] };
    expect(role.metadata.namespace).toBe(NodeLeaseNamespace);
    expect(role.rules).toEqual([
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: await leaseVerbsOf('informers.ts'),
      },
    ]);
    expect(role.rules[0]?.verbs).toEqual(['list', 'watch']);
  });

  it('reads and renews only its own Lease, in its own namespace, and may create Leases there', async () => {
    const role = find('Role', 'nlc-relay-leader-election') as {
      metadata: { namespace: string };
      rules: (Rule & { resourceNames?: string[] })[];
    };
    expect(role.metadata.namespace).toBe('nlc-system');
    // create names no object, so it cannot be limited to one name (scripts/validate-manifests.ts).
    expect(role.rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: [RelayLeaseName],
        verbs: ['get', 'update'],
      },
    ]);
    const granted = role.rules.flatMap((r) => r.verbs).sort();
    expect(granted).toEqual(await leaseVerbsOf('leaderElection.ts'));
  });

  it.each([
    ['ClusterRoleBinding', 'nlc-relay', 'ClusterRole', 'nlc-system'],
    ['RoleBinding', 'nlc-relay-node-leases', 'Role', NodeLeaseNamespace],
    ['RoleBinding', 'nlc-relay-leader-election', 'Role', 'nlc-system'],
  ])('%s %s binds the %s to the relay service account', (kind, name, roleKind, namespace) => {
    const binding = find(kind, name);
    expect(binding).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name },
      subjects: [{ kind: 'ServiceAccount', name: 'nlc-relay', namespace: 'nlc-system' }],
    });
    if (kind === 'RoleBinding') expect(binding).toMatchObject({ metadata: { namespace } });
  });
});

describe('infra/relay/iam-policy.json', () => {
  it('allows events:PutEvents on one event bus and nothing else', async () => {
    const policy = JSON.parse(await readFile(infra('relay/iam-policy.json'), 'utf8')) as {
      Statement: { Effect: string; Action: string; Resource: string }[];
    };
    expect(policy.Statement).toEqual([
      expect.objectContaining({ Effect: 'Allow', Action: 'events:PutEvents' }),
    ]);
    expect(policy.Statement[0]?.Resource).toMatch(/^arn:aws:events:[A-Z_]+:[A-Z_]+:event-bus\/nlc-[A-Z]+$/);
  });
});
