// The cluster adapter's writes from a bounded node copy (shared/eventBounds.ts) against the API
// simulator: a status write sends only the conditions it lists, merged by type, and never a text the
// mapping cut; a taint write sends back every taint of the node, not the copy's 64.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServerHandle } from '../../../local/apiserver/index.js';
import { createKubernetesCluster } from '../../../shared/adapters/kubernetes/cluster.js';
import type { UpdateNodeStatus } from '../../../shared/domain/effects.js';
import type { ClusterPort } from '../../../shared/ports/cluster.js';
import { noisyText } from '../../helpers/oversized.js';

const NOW = Date.parse('2024-05-01T10:00:00Z');
const HEARTBEAT = '2024-05-01T09:59:50Z';

let api: ApiServerHandle;
let cluster: ClusterPort;

beforeAll(async () => {
  api = await startApiServer({ port: 0 });
  cluster = createKubernetesCluster(api.kubeConfig(), {
    requestTimeoutMs: 10_000,
    retry: { maxAttempts: 1 },
    clock: { now: () => NOW },
    sleep: () => Promise.resolve(),
  });
});
afterAll(async () => {
  await api.close();
});

const deadlockMessage = noisyText(200 * 1_024, 3);
const kubeletConditions = [
  { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
  { type: 'KernelDeadlock', status: 'False', reason: 'KernelHasNoDeadlock', message: deadlockMessage },
  { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'routes created' },
].map((c) => ({ ...c, lastHeartbeatTime: HEARTBEAT, lastTransitionTime: '2024-05-01T09:00:00Z' }));

function createNode(name: string): void {
  api.store.nodes.create({ metadata: { name } });
  api.store.nodes.patch(
    name,
    { status: { conditions: kubeletConditions } },
    { type: 'merge', subresource: 'status' },
  );
}

describe('updateNodeStatus from a bounded copy', () => {
  it('writes the listed conditions by type, never a cut message, and leaves the node’s others as they are', async () => {
    createNode('node-a');
    const got = await cluster.getNode('node-a');
    if (!got.ok) throw new Error(got.message);
    const copy = got.value;
    // The copy's KernelDeadlock message is cut; the decision marks Ready Unknown, as markUnknown does,
    // and lists the copy's other conditions as they are (NetworkUnavailable left out, as a copy over
    // its condition bound would).
    expect(copy.truncated).toEqual([
      'status.conditions[KernelDeadlock].message: 204,800 bytes, truncated to 2,048',
    ]);
    const [readyCopy, deadlockCopy] = copy.conditions;
    if (readyCopy === undefined || deadlockCopy === undefined) throw new Error('conditions missing');
    const effect: UpdateNodeStatus = {
      kind: 'updateNodeStatus',
      node: 'node-a',
      why: 'test',
      ...(copy.resourceVersion !== undefined && { resourceVersion: copy.resourceVersion }),
      conditions: [
        {
          ...readyCopy,
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
          lastTransitionTime: NOW,
        },
        deadlockCopy,
      ],
    };
    const mark = api.requests.length;
    const result = await cluster.execute(effect);
    expect(result.ok).toBe(true);
    expect(api.requests.slice(mark).map((r) => [r.verb, r.subresource])).toEqual([['patch', 'status']]);
    expect(api.store.nodes.get('node-a').status?.conditions).toEqual([
      {
        type: 'Ready',
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastHeartbeatTime: HEARTBEAT,
        lastTransitionTime: '2024-05-01T10:00:00Z',
      },
      kubeletConditions[1],
      kubeletConditions[2],
    ]);
    // The written node comes back bounded too.
    expect(result.ok && result.node?.truncated).toEqual(got.value.truncated);
  });

  it('still answers Conflict when the copy is older than the node', async () => {
    createNode('node-b');
    const got = await cluster.getNode('node-b');
    if (!got.ok) throw new Error(got.message);
    api.store.nodes.patch('node-b', { metadata: { labels: { touched: 'yes' } } }, { type: 'merge' });
    const result = await cluster.execute({
      kind: 'updateNodeStatus',
      node: 'node-b',
      why: 'test',
      ...(got.value.resourceVersion !== undefined && { resourceVersion: got.value.resourceVersion }),
      conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }],
    });
    expect(result).toMatchObject({ ok: false, reason: 'Conflict' });
    expect(api.store.nodes.get('node-b').status?.conditions).toEqual(kubeletConditions);
  });
});

describe('swapNodeTaints on a node with more taints than its copy keeps', () => {
  it('sends back every taint of the node with the controller’s change', async () => {
    const foreign = Array.from({ length: 300 }, (_, i) => ({
      key: `example.com/t${i}`,
      effect: 'NoSchedule',
    }));
    api.store.nodes.create({ metadata: { name: 'node-c' }, spec: { taints: foreign } });
    // Admission adds node.kubernetes.io/not-ready:NoSchedule to a new node.
    const before = (api.store.nodes.get('node-c').spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`);
    expect(before).toHaveLength(301);
    const got = await cluster.getNode('node-c');
    expect(got.ok && got.value.taints).toHaveLength(64);
    const result = await cluster.execute({
      kind: 'swapNodeTaints',
      node: 'node-c',
      why: 'test',
      toAdd: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: NOW }],
      toRemove: [],
    });
    expect(result.ok).toBe(true);
    const taints = api.store.nodes.get('node-c').spec?.taints ?? [];
    expect(taints.map((t) => `${t.key}:${t.effect}`)).toEqual([
      ...before,
      'node.kubernetes.io/unreachable:NoExecute',
    ]);
  });
});
