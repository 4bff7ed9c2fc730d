// Writes through @kubernetes/client-node: optimistic concurrency (stale PUT and stale merge patch get
// 409), the list semantics of each patch type on spec.taints and status.conditions as a real server
// applies them, and JSON patch `test`.
import {
  PatchStrategy,
  type V1Node,
  type V1NodeCondition,
  type V1Pod,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Sim, model, startSim, statusOf } from './helpers.js';

let sim: Sim;

beforeEach(async () => {
  sim = await startSim();
});

afterEach(async () => {
  await sim.api.close();
});

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const at = new Date('2025-01-01T00:00:00Z');
const condition = (type: string, status: string, reason = 'Test'): V1NodeCondition =>
  model<V1NodeCondition>({ type, status, reason, lastHeartbeatTime: at, lastTransitionTime: at });

async function nodeWithTaints(taints: { key: string; effect: string; value?: string }[]): Promise<V1Node> {
  // A node created with its own not-ready:NoSchedule taint keeps only what we give it.
  return sim.core.createNode({
    body: model<V1Node>({
      metadata: { name: 'node-a' },
      spec: { taints: [...taints, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] },
      status: { conditions: [condition('Ready', 'True'), condition('MemoryPressure', 'False')] },
    }),
  });
}

const taintKeys = (node: V1Node) => (node.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`);
const conditionTypes = (node: V1Node) => (node.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`);

describe('optimistic concurrency', () => {
  it('rejects a PUT carrying a stale resourceVersion with 409 Conflict', async () => {
    const node = await nodeWithTaints([]);
    await sim.core.patchNode({ name: 'node-a', body: { metadata: { labels: { a: 'b' } } } }, merge);
    const status = await statusOf(sim.core.replaceNode({ name: 'node-a', body: node }));
    expect(status).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      message:
        'Operation cannot be fulfilled on nodes "node-a": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'node-a', kind: 'nodes' },
    });
  });

  it('accepts a PUT with the current resourceVersion and bumps it', async () => {
    const node = await nodeWithTaints([]);
    if (node.metadata !== undefined) node.metadata.labels = { a: 'b' };
    const updated = await sim.core.replaceNode({ name: 'node-a', body: node });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(node.metadata?.resourceVersion));
  });

  it('rejects a merge patch carrying a stale metadata.resourceVersion with 409', async () => {
    const node = await nodeWithTaints([]);
    await sim.core.patchNode({ name: 'node-a', body: { metadata: { labels: { a: 'b' } } } }, merge);
    const stale = {
      metadata: { resourceVersion: node.metadata?.resourceVersion },
      spec: { unschedulable: true },
    };
    const status = await statusOf(sim.core.patchNode({ name: 'node-a', body: stale }, merge));
    expect(status).toMatchObject({ reason: 'Conflict', code: 409 });
    expect((await sim.core.readNode({ name: 'node-a' })).spec?.unschedulable).toBeUndefined();
  });

  it('applies a merge patch carrying the current resourceVersion', async () => {
    const node = await nodeWithTaints([]);
    const current = {
      metadata: { resourceVersion: node.metadata?.resourceVersion },
      spec: { unschedulable: true },
    };
    expect((await sim.core.patchNode({ name: 'node-a', body: current }, merge)).spec?.unschedulable).toBe(
      true,
    );
  });

  it('does not write a no-op update: the resourceVersion stays', async () => {
    const node = await nodeWithTaints([]);
    const again = await sim.core.replaceNode({ name: 'node-a', body: node });
    expect(again.metadata?.resourceVersion).toBe(node.metadata?.resourceVersion);
  });
});

describe('patching spec.taints', () => {
  it('strategic merge patch replaces the whole list (taints have no merge strategy)', async () => {
    await nodeWithTaints([{ key: 'a', effect: 'NoSchedule' }]);
    const patched = await sim.core.patchNode(
      { name: 'node-a', body: { spec: { taints: [{ key: 'b', effect: 'NoExecute' }] } } },
      strategic,
    );
    expect(taintKeys(patched)).toEqual(['b:NoExecute']);
  });

  it('JSON merge patch replaces the whole list', async () => {
    await nodeWithTaints([{ key: 'a', effect: 'NoSchedule' }]);
    const patched = await sim.core.patchNode(
      { name: 'node-a', body: { spec: { taints: [{ key: 'b', effect: 'NoExecute' }] } } },
      merge,
    );
    expect(taintKeys(patched)).toEqual(['b:NoExecute']);
  });

  it('JSON patch add /spec/taints/- appends', async () => {
    await nodeWithTaints([{ key: 'a', effect: 'NoSchedule' }]);
    const patched = await sim.core.patchNode({
      name: 'node-a',
      body: [{ op: 'add', path: '/spec/taints/-', value: { key: 'b', effect: 'NoExecute' } }],
    });
    expect(taintKeys(patched)).toEqual([
      'a:NoSchedule',
      'node.kubernetes.io/not-ready:NoSchedule',
      'b:NoExecute',
    ]);
  });

  it('JSON patch with a failing test operation is a 422 and changes nothing', async () => {
    const node = await nodeWithTaints([{ key: 'a', effect: 'NoSchedule' }]);
    const status = await statusOf(
      sim.core.patchNode({
        name: 'node-a',
        body: [
          { op: 'test', path: '/spec/taints/0/key', value: 'not-a' },
          { op: 'remove', path: '/spec/taints/0' },
        ],
      }),
    );
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server rejected our request due to an error in our request',
      reason: 'Invalid',
      details: {
        causes: [
          {
            reason: 'UnexpectedServerResponse',
            message: 'testing value /spec/taints/0/key failed: test operation failed',
          },
        ],
      },
      code: 422,
      headers: expect.anything() as unknown,
    });
    expect((await sim.core.readNode({ name: 'node-a' })).metadata?.resourceVersion).toBe(
      node.metadata?.resourceVersion,
    );
  });

  it('JSON patch test on resourceVersion works as an optimistic lock', async () => {
    const node = await nodeWithTaints([{ key: 'a', effect: 'NoSchedule' }]);
    const patched = await sim.core.patchNode({
      name: 'node-a',
      body: [
        { op: 'test', path: '/metadata/resourceVersion', value: node.metadata?.resourceVersion },
        { op: 'remove', path: '/spec/taints/0' },
      ],
    });
    expect(taintKeys(patched)).toEqual(['node.kubernetes.io/not-ready:NoSchedule']);
  });

  it('rejects an invalid taint effect with 422 reported at metadata.taints[i].effect, as upstream does', async () => {
    await nodeWithTaints([]);
    const status = await statusOf(
      sim.core.patchNode(
        { name: 'node-a', body: { spec: { taints: [{ key: 'a', effect: 'NoScheduled' }] } } },
        merge,
      ),
    );
    expect(status).toMatchObject({
      reason: 'Invalid',
      code: 422,
      message:
        'Node "node-a" is invalid: metadata.taints[0].effect: Unsupported value: "NoScheduled": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      details: {
        name: 'node-a',
        kind: 'Node',
        causes: [
          {
            reason: 'FieldValueNotSupported',
            message:
              'Unsupported value: "NoScheduled": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
            field: 'metadata.taints[0].effect',
          },
        ],
      },
    });
  });

  it('rejects two taints with the same key and effect', async () => {
    await nodeWithTaints([]);
    const taints = [
      { key: 'a', value: '1', effect: 'NoSchedule' },
      { key: 'a', value: '2', effect: 'NoSchedule' },
    ];
    const status = await statusOf(sim.core.patchNode({ name: 'node-a', body: { spec: { taints } } }, merge));
    expect(status.details?.causes).toEqual([
      {
        reason: 'FieldValueDuplicate',
        field: 'metadata.taints[1]',
        message:
          'Duplicate value: core.Taint{Key:"a", Value:"2", Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair',
      },
    ]);
  });

  it('rejects a taint without a key, and one whose key is not a qualified name', async () => {
    await nodeWithTaints([]);
    const taints = [
      { key: '', effect: 'NoSchedule' },
      { key: 'a/b/c', effect: 'NoExecute' },
    ];
    const status = await statusOf(sim.core.patchNode({ name: 'node-a', body: { spec: { taints } } }, merge));
    expect(status.details?.causes?.map((c) => [c.field, c.reason])).toEqual([
      ['metadata.taints[0].key', 'FieldValueInvalid'],
      ['metadata.taints[0].key', 'FieldValueInvalid'],
      ['metadata.taints[1].key', 'FieldValueInvalid'],
    ]);
    expect(status.details?.causes?.[0]?.message).toBe('Invalid value: "": name part must be non-empty');
  });
});

describe('patching status.conditions', () => {
  it('strategic merge patch through /status merges conditions by type', async () => {
    await nodeWithTaints([]);
    const patched = await sim.core.patchNodeStatus(
      {
        name: 'node-a',
        body: {
          status: {
            conditions: [condition('Ready', 'False', 'KubeletNotReady'), condition('DiskPressure', 'False')],
          },
        },
      },
      strategic,
    );
    expect(conditionTypes(patched)).toEqual(['Ready=False', 'MemoryPressure=False', 'DiskPressure=False']);
    expect(patched.status?.conditions?.[0]?.reason).toBe('KubeletNotReady');
  });

  it('JSON merge patch through /status replaces the whole list', async () => {
    await nodeWithTaints([]);
    const patched = await sim.core.patchNodeStatus(
      { name: 'node-a', body: { status: { conditions: [condition('Ready', 'Unknown')] } } },
      merge,
    );
    expect(conditionTypes(patched)).toEqual(['Ready=Unknown']);
  });

  it('strategic merge patch deletes one condition with $patch: delete', async () => {
    await nodeWithTaints([]);
    const patched = await sim.core.patchNodeStatus(
      { name: 'node-a', body: { status: { conditions: [{ type: 'MemoryPressure', $patch: 'delete' }] } } },
      strategic,
    );
    expect(conditionTypes(patched)).toEqual(['Ready=True']);
  });

  it('strategic merge patch honours $setElementOrder as kubectl sends it', async () => {
    await nodeWithTaints([]);
    const body = {
      status: {
        '$setElementOrder/conditions': [{ type: 'MemoryPressure' }, { type: 'Ready' }],
        conditions: [{ type: 'Ready', status: 'Unknown' }],
      },
    };
    const patched = await sim.core.patchNodeStatus({ name: 'node-a', body }, strategic);
    expect(conditionTypes(patched)).toEqual(['MemoryPressure=False', 'Ready=Unknown']);
  });
});

describe('status subresource rules', () => {
  it('ignores status changes written through the main resource', async () => {
    const node = await nodeWithTaints([]);
    const changed = await sim.core.patchNode(
      {
        name: 'node-a',
        body: { spec: { unschedulable: true }, status: { conditions: [condition('Ready', 'False')] } },
      },
      merge,
    );
    expect(changed.spec?.unschedulable).toBe(true);
    expect(conditionTypes(changed)).toEqual(conditionTypes(node));
  });

  it('ignores spec changes written through /status', async () => {
    const node = await nodeWithTaints([{ key: 'a', effect: 'NoSchedule' }]);
    const body = model<V1Node>({
      metadata: node.metadata,
      spec: { taints: [] },
      status: { conditions: [condition('Ready', 'False')] },
    });
    const changed = await sim.core.replaceNodeStatus({ name: 'node-a', body });
    expect(taintKeys(changed)).toEqual(taintKeys(node));
    expect(conditionTypes(changed)).toEqual(['Ready=False']);
  });

  it('applies the same rules to pods', async () => {
    const pod = await sim.core.createNamespacedPod({
      namespace: 'default',
      body: model<V1Pod>({
        metadata: { name: 'p' },
        spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'nginx' }] },
      }),
    });
    const viaMain = await sim.core.patchNamespacedPod(
      { namespace: 'default', name: 'p', body: { status: { phase: 'Running' } } },
      merge,
    );
    expect(viaMain.status?.phase).toBe('Pending');
    expect(viaMain.metadata?.resourceVersion).toBe(pod.metadata?.resourceVersion);
    const viaStatus = await sim.core.patchNamespacedPodStatus(
      {
        namespace: 'default',
        name: 'p',
        body: {
          spec: { activeDeadlineSeconds: 5 },
          status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
        },
      },
      strategic,
    );
    expect(viaStatus.status?.phase).toBe('Running');
    expect(viaStatus.spec?.activeDeadlineSeconds).toBeUndefined();
    expect(viaStatus.metadata?.generation).toBe(1);
  });
});
