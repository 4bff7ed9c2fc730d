// The Kubernetes cluster adapter against the API simulator (local/apiserver) over real HTTP: every
// effect kind and port operation, the conflict handling of taint and status writes, HTTP retries, and
// what a client reading the API afterwards sees. Request counts come from the simulator's request log
// (docs/contributing.md#tests: integration tests assert request counts; they are the cost budget). Backoff
// sleeps are recorded, not slept.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServerHandle, type RequestRecord } from '../../../local/apiserver/index.js';
import { loadKubeConfig } from '../../../shared/adapters/kubernetes/auth.js';
import { createKubernetesCluster } from '../../../shared/adapters/kubernetes/cluster.js';
import { emptyControllerState } from '../../../shared/domain/controllerState.js';
import { driveAsync, type UpdateNodeStatus } from '../../../shared/domain/effects.js';
import { monitorNodeHealth } from '../../../shared/domain/monitorNodeHealth.js';
import { doNoExecuteTaintingPass } from '../../../shared/domain/taintBasedEviction.js';
import {
  podNodeNotReadyEvent,
  registeredNodeEvent,
  taintManagerEvictionEvent,
} from '../../../shared/domain/kubeEvents.js';
import { reconcileNodeLabels } from '../../../shared/domain/nodeLabels.js';
import {
  NotReadyTaintTemplate,
  TaintNodeNotReady,
  TaintNodeUnreachable,
  UnreachableTaintTemplate,
} from '../../../shared/domain/taints.js';
import type { Node, Pod, Taint } from '../../../shared/domain/types.js';
import { TaintOwnershipError } from '../../../shared/errors.js';
import { testConfig } from '../../helpers/controllerHarness.js';
import type { ClusterPort } from '../../../shared/ports/cluster.js';

const NOW = Date.parse('2024-05-01T10:00:00.250Z');
const NOW_WIRE = '2024-05-01T10:00:00Z';
const foreignTaint = { key: 'example.com/gpu', value: 'a100', effect: 'NoSchedule' } as const;
const notReadyNoSchedule: Taint = { key: TaintNodeNotReady, effect: 'NoSchedule' };

let api: ApiServerHandle;
let core: CoreV1Api;
let dir: string;

beforeAll(async () => {
  api = await startApiServer({ port: 0 });
  core = api.kubeConfig().makeApiClient(CoreV1Api);
  dir = mkdtempSync(join(tmpdir(), 'nlc-cluster-'));
});

afterAll(async () => {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

let requestsBefore = 0;
beforeEach(() => {
  requestsBefore = api.requests.length;
});

afterEach(() => {
  api.faults.clear();
  for (const pod of api.store.pods.list().items) {
    api.store.pods.delete(pod.metadata?.name ?? '', {
      namespace: pod.metadata?.namespace ?? '',
      gracePeriodSeconds: 0,
    });
  }
  for (const node of api.store.nodes.list().items) api.store.nodes.delete(node.metadata?.name ?? '');
});

/** The HTTP requests made since the test began. */
function requests(): RequestRecord[] {
  return api.requests.slice(requestsBefore);
}
const calls = (verb: string, filter: Partial<RequestRecord> = {}) =>
  requests().filter(
    (r) => r.verb === verb && Object.entries(filter).every(([k, v]) => r[k as keyof RequestRecord] === v),
  ).length;

interface Harness {
  readonly cluster: ClusterPort;
  readonly waits: number[];
}

function harness(options: { maxAttempts?: number } = {}): Harness {
  const waits: number[] = [];
  const cluster = createKubernetesCluster(api.kubeConfig(), {
    requestTimeoutMs: 10_000,
    retry: {
      maxAttempts: options.maxAttempts ?? 3,
      baseDelayMs: 200,
      maxDelayMs: 2_000,
      maxRetryAfterMs: 5_000,
    },
    clock: { now: () => NOW },
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
  });
  return { cluster, waits };
}

interface WireTaint {
  readonly key: string;
  readonly value?: string;
  readonly effect: string;
}

function createNode(
  name: string,
  options: { taints?: WireTaint[]; labels?: Record<string, string> } = {},
): void {
  api.store.nodes.create({
    metadata: { name, labels: options.labels ?? { 'kubernetes.io/hostname': name } },
    spec: { taints: (options.taints ?? []).map((t) => ({ ...t })) },
  });
  api.store.nodes.patch(
    name,
    {
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            lastHeartbeatTime: '2024-05-01T09:59:50Z',
            lastTransitionTime: '2024-05-01T09:00:00Z',
          },
        ],
        addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
        capacity: { cpu: '4', pods: '110' },
      },
    },
    { type: 'merge', subresource: 'status' },
  );
}

/** A pod bound to `nodeName` whose Ready condition is True. */
function createPod(name: string, nodeName: string): Pod {
  const created = api.store.pods.create(
    {
      metadata: { name, namespace: 'default' },
      spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] },
    },
    { namespace: 'default' },
  );
  api.store.pods.patch(
    name,
    {
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-05-01T09:00:00Z' }] },
    },
    { type: 'merge', subresource: 'status', namespace: 'default' },
  );
  return {
    namespace: 'default',
    name,
    uid: created.metadata?.uid ?? '',
    nodeName,
    tolerations: [],
    ready: 'True',
  };
}

const taintsOf = (name: string) =>
  (api.store.nodes.get(name).spec?.taints ?? []).map(({ key, value, effect, timeAdded }) => ({
    key,
    effect,
    ...(value === undefined ? {} : { value }),
    ...(timeAdded === undefined ? {} : { timeAdded }),
  }));
const podCondition = (name: string, type: string) =>
  api.store.pods.get(name, { namespace: 'default' }).status?.conditions?.find((c) => c.type === type);

describe('reads', () => {
  it('loads the simulator kubeconfig through loadKubeConfig, and reads nodes and pods into the domain shapes', async () => {
    writeFileSync(join(dir, 'kubeconfig'), api.kubeconfigYaml);
    const { kubeConfig } = await loadKubeConfig({ kind: 'kubeconfigFile', path: join(dir, 'kubeconfig') });
    const cluster = createKubernetesCluster(kubeConfig, {
      requestTimeoutMs: 10_000,
      clock: { now: () => NOW },
    });
    createNode('node-a', {
      taints: [{ ...foreignTaint }],
      labels: { 'kubernetes.io/hostname': 'node-a', 'topology.kubernetes.io/zone': 'z1' },
    });
    const pod = createPod('p1', 'node-a');
    createPod('elsewhere', 'node-b');

    const got = await cluster.getNode('node-a');
    expect(got.ok && got.value).toMatchObject({
      name: 'node-a',
      uid: api.store.nodes.get('node-a').metadata?.uid,
      // Only the labels the controller reads (shared/events.ts ControllerLabelKeys).
      labels: { 'topology.kubernetes.io/zone': 'z1' },
      taints: [foreignTaint, notReadyNoSchedule],
      unschedulable: false,
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: Date.parse('2024-05-01T09:00:00Z') }],
    } satisfies Partial<Node>);
    const pods = await cluster.listPodsOnNode('node-a');
    expect(pods.ok && pods.value.map((p) => [p.name, p.uid, p.ready])).toEqual([['p1', pod.uid, 'True']]);
    const nodes = await cluster.listNodes();
    expect(nodes.ok && nodes.value.map((n) => n.name)).toEqual(['node-a']);
    expect(await cluster.execute({ kind: 'getNode', node: 'gone' })).toEqual({
      ok: false,
      reason: 'NotFound',
      message: 'get node "gone": HTTP 404 NotFound: nodes "gone" not found',
    });
  });
});

describe('swapNodeTaints (SwapNodeControllerTaint)', () => {
  it('adds and removes only the given taints in one conditional write, keeping foreign taints as they were', async () => {
    createNode('node-a', {
      taints: [{ ...foreignTaint }, { key: TaintNodeNotReady, effect: 'NoExecute' }],
    });
    const { cluster } = harness();
    const result = await cluster.execute({
      kind: 'swapNodeTaints',
      node: 'node-a',
      toAdd: [{ ...UnreachableTaintTemplate, timeAdded: NOW }],
      toRemove: [NotReadyTaintTemplate],
      why: 'test',
    });
    expect(result).toEqual({ ok: true });
    expect(taintsOf('node-a')).toEqual([
      foreignTaint,
      notReadyNoSchedule,
      { key: TaintNodeUnreachable, effect: 'NoExecute', timeAdded: NOW_WIRE },
    ]);
    expect([calls('get', { resource: 'nodes' }), calls('patch', { resource: 'nodes' })]).toEqual([1, 1]);
  });

  it('makes no write when nothing would change, and no call at all for an empty swap', async () => {
    createNode('node-a');
    const { cluster } = harness();
    // Read, found as asked: nothing written, and the answer says so (no eviction is counted for it).
    expect(
      await cluster.swapNodeTaints('node-a', { toAdd: [], toRemove: [UnreachableTaintTemplate] }),
    ).toEqual({ ok: true, unchanged: true });
    expect([calls('get'), calls('patch')]).toEqual([1, 0]);
    expect(await cluster.swapNodeTaints('node-a', { toAdd: [], toRemove: [] })).toEqual({ ok: true });
    expect(requests()).toHaveLength(1);
  });

  it('refuses to touch a taint the node controller does not own, before any request', async () => {
    createNode('node-a');
    const { cluster } = harness();
    await expect(
      cluster.swapNodeTaints('node-a', {
        toAdd: [],
        toRemove: [{ key: 'example.com/gpu', effect: 'NoSchedule' }],
      }),
    ).rejects.toThrow(TaintOwnershipError);
    expect(requests()).toHaveLength(0);
  });

  it('converges under two concurrent writers and interleaved 409s, never losing a foreign taint', async () => {
    createNode('node-a', { taints: [{ ...foreignTaint }] });
    const a = harness();
    const b = harness();
    // Hold the first taint patch so a foreign writer can commit between its GET and its PATCH: a real
    // stale-resourceVersion conflict, not an injected one.
    api.faults.inject({ kind: 'delay', ms: 1_500, match: { verb: 'patch', resource: 'nodes' }, times: 1 });
    const writes = Promise.all([
      a.cluster.swapNodeTaints('node-a', {
        toAdd: [{ ...UnreachableTaintTemplate, timeAdded: NOW }],
        toRemove: [NotReadyTaintTemplate],
      }),
      b.cluster.swapNodeTaints('node-a', {
        toAdd: [{ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }],
        toRemove: [notReadyNoSchedule],
      }),
    ]);
    await expect
      .poll(() => calls('get', { resource: 'nodes' }), { timeout: 10_000 })
      .toBeGreaterThanOrEqual(2);
    // The foreign writer: another controller appending its own taint, conditional on the version it read.
    const current = api.store.nodes.get('node-a');
    api.store.nodes.patch(
      'node-a',
      [
        { op: 'test', path: '/metadata/resourceVersion', value: current.metadata?.resourceVersion ?? '' },
        { op: 'add', path: '/spec/taints/-', value: { key: 'example.com/maintenance', effect: 'NoExecute' } },
      ],
      { type: 'json' },
    );
    // And one injected conflict on top, interleaved with the real ones.
    api.faults.inject({ kind: 'conflict', match: { verb: 'patch', resource: 'nodes' }, times: 1 });

    expect(await writes).toEqual([{ ok: true }, { ok: true }]);
    expect(taintsOf('node-a')).toEqual(
      expect.arrayContaining([
        foreignTaint,
        { key: 'example.com/maintenance', effect: 'NoExecute' },
        { key: TaintNodeUnreachable, effect: 'NoExecute', timeAdded: NOW_WIRE },
        { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule', timeAdded: NOW_WIRE },
      ]),
    );
    expect(taintsOf('node-a')).toHaveLength(4);
    const conflicts = requests().filter((r) => r.verb === 'patch' && r.code === 409).length;
    expect(conflicts).toBeGreaterThanOrEqual(2);
    // Each conflict was followed by a fresh GET (RetryOnConflict), waiting UpdateTaintBackoff (100-200 ms).
    for (const wait of [...a.waits, ...b.waits]) expect(wait).toBe(150);
    expect(a.waits.length + b.waits.length).toBe(conflicts);
  });

  it('gives up with Conflict after UpdateTaintBackoff.steps attempts', async () => {
    createNode('node-a');
    const { cluster, waits } = harness();
    api.faults.inject({ kind: 'conflict', match: { verb: 'patch', resource: 'nodes' } });
    const result = await cluster.swapNodeTaints('node-a', {
      toAdd: [{ ...UnreachableTaintTemplate, timeAdded: NOW }],
      toRemove: [],
    });
    expect(result).toMatchObject({ ok: false, reason: 'Conflict' });
    expect(!result.ok && result.message).toMatch(/^update taints of node "node-a": HTTP 409 Conflict: /);
    expect([calls('get'), calls('patch')]).toEqual([5, 5]);
    expect(waits).toEqual([150, 150, 150, 150]);
  });
});

describe('updateNodeStatus', () => {
  const unknown = (resourceVersion?: string): UpdateNodeStatus => ({
    kind: 'updateNodeStatus',
    node: 'node-a',
    why: 'test',
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
    conditions: [
      {
        type: 'Ready',
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastHeartbeatTime: Date.parse('2024-05-01T09:59:50Z'),
        lastTransitionTime: NOW,
      },
    ],
  });

  it('replaces the conditions through /status, keeping every other status field', async () => {
    createNode('node-a');
    const { cluster } = harness();
    const rv = api.store.nodes.get('node-a').metadata?.resourceVersion;
    const result = await cluster.execute(unknown(rv));
    // The written node comes back with the new resourceVersion: the monitor keeps that copy.
    const stored = api.store.nodes.get('node-a');
    expect(result).toMatchObject({
      ok: true,
      node: { name: 'node-a', resourceVersion: stored.metadata?.resourceVersion },
    });
    expect(stored.metadata?.resourceVersion).not.toBe(rv);
    expect(result.ok && result.node?.conditions.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Ready=Unknown',
    ]);
    const status = stored.status;
    expect(status?.conditions).toEqual([
      {
        type: 'Ready',
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastHeartbeatTime: '2024-05-01T09:59:50Z',
        lastTransitionTime: NOW_WIRE,
      },
    ]);
    expect(status?.addresses).toEqual([{ type: 'InternalIP', address: '10.0.0.1' }]);
    expect(status?.capacity).toEqual({ cpu: '4', pods: '110' });
    expect(requests().map((r) => [r.verb, r.subresource])).toEqual([['patch', 'status']]);
  });

  it('answers Conflict, naming the node, when the decision was made on a stale resourceVersion', async () => {
    createNode('node-a');
    const stale = api.store.nodes.get('node-a').metadata?.resourceVersion;
    api.store.nodes.patch('node-a', { metadata: { labels: { touched: 'yes' } } }, { type: 'merge' });
    const { cluster } = harness();
    const result = await cluster.execute(unknown(stale));
    expect(result).toMatchObject({ ok: false, reason: 'Conflict' });
    expect(!result.ok && result.message).toMatch(/^update status of node "node-a": HTTP 409 Conflict: /);
    expect(api.store.nodes.get('node-a').status?.conditions?.[0]?.status).toBe('True');
  });

  it('without a resourceVersion, conditions the write on the one it reads', async () => {
    createNode('node-a');
    const { cluster } = harness();
    expect(await cluster.execute(unknown())).toMatchObject({ ok: true, node: { name: 'node-a' } });
    expect(requests().map((r) => [r.verb, r.subresource])).toEqual([
      ['get', ''],
      ['patch', 'status'],
    ]);
  });
});

describe('HTTP retries', () => {
  it('retries a 429, waiting what Retry-After says', async () => {
    createNode('node-a');
    const { cluster, waits } = harness();
    api.faults.inject({
      kind: 'tooManyRequests',
      retryAfterSeconds: 2,
      match: { resource: 'nodes' },
      times: 1,
    });
    expect((await cluster.getNode('node-a')).ok).toBe(true);
    expect(waits).toEqual([2000]);
    expect(requests().map((r) => r.code)).toEqual([429, 200]);
  });

  it('retries a 500 with backoff, then fails after the budget, naming the node', async () => {
    createNode('node-a');
    const { cluster, waits } = harness({ maxAttempts: 3 });
    api.faults.inject({
      kind: 'internalError',
      message: 'etcd is sad',
      match: { resource: 'nodes', subresource: 'status' },
    });
    const result = await cluster.execute(unknown500());
    expect(result).toEqual({
      ok: false,
      reason: 'Failed',
      message: 'update status of node "node-a": HTTP 500 InternalError: Internal error occurred: etcd is sad',
    });
    expect(requests().map((r) => r.code)).toEqual([500, 500, 500]);
    // Capped exponential backoff with jitter (random = 0.5): 150, 300.
    expect(waits).toEqual([150, 300]);
  });

  function unknown500(): UpdateNodeStatus {
    return {
      kind: 'updateNodeStatus',
      node: 'node-a',
      why: 'test',
      resourceVersion: api.store.nodes.get('node-a').metadata?.resourceVersion ?? '',
      conditions: [{ type: 'Ready', status: 'Unknown' }],
    };
  }
});

describe('markPodsNotReady (MarkPodsNotReady)', () => {
  it('sets Ready=False via pods/status, skips NotFound, aggregates other errors, and records a Warning per written pod', async () => {
    createNode('node-a');
    const p1 = createPod('p1', 'node-a');
    const gone = createPod('gone', 'node-a');
    const broken = createPod('broken', 'node-a');
    const broken2 = createPod('broken2', 'node-a');
    const already = createPod('already', 'node-a');
    api.store.pods.patch(
      'already',
      { status: { conditions: [{ type: 'Ready', status: 'False' }] } },
      { type: 'strategic', subresource: 'status', namespace: 'default' },
    );
    api.store.pods.delete('gone', { namespace: 'default', gracePeriodSeconds: 0 });
    api.faults.inject({
      kind: 'internalError',
      message: 'boom',
      match: { verb: 'patch', resource: 'pods', subresource: 'status', name: 'broken' },
    });
    api.faults.inject({
      kind: 'conflict',
      match: { verb: 'patch', resource: 'pods', subresource: 'status', name: 'broken2' },
    });
    const { cluster } = harness({ maxAttempts: 1 });

    const result = await cluster.execute({
      kind: 'markPodsNotReady',
      node: 'node-a',
      pods: [p1, gone, broken, already, broken2],
      why: 'node became not ready',
    });

    // utilerrors.NewAggregate's message for two errors.
    expect(result).toMatchObject({ ok: false, reason: 'Failed' });
    expect(!result.ok && result.message).toMatch(
      /^\[set Ready=False on pod "default\/broken": HTTP 500 InternalError: Internal error occurred: boom, set Ready=False on pod "default\/broken2": HTTP 409 Conflict: .*\]$/,
    );
    expect(podCondition('p1', 'Ready')).toMatchObject({ status: 'False', lastTransitionTime: NOW_WIRE });
    expect(podCondition('broken', 'Ready')?.status).toBe('True');
    // Events: the written pod and the failed one (upstream records after the write whatever its error).
    const events = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'reason=NodeNotReady',
    });
    expect(
      events.items
        .map((e) => [e.involvedObject.name, e.involvedObject.uid, e.type, e.message, e.source?.component])
        .sort(),
    ).toEqual([
      ['broken', broken.uid, 'Warning', 'Node is not ready', 'node-controller'],
      ['broken2', broken2.uid, 'Warning', 'Node is not ready', 'node-controller'],
      ['p1', p1.uid, 'Warning', 'Node is not ready', 'node-controller'],
    ]);
    expect(gone.uid).not.toBe('');
  });
});

describe('taint eviction: deletePodForTaintEviction (addConditionAndDeletePod)', () => {
  it('adds DisruptionTarget through pods/status, then deletes; without a kubelet the pod stays Terminating', async () => {
    createNode('node-a');
    createPod('victim', 'node-a');
    const { cluster } = harness();
    expect(await cluster.deletePodForTaintEviction('default', 'victim')).toEqual({
      ok: true,
      podWasGone: false,
    });
    const pod = api.store.pods.get('victim', { namespace: 'default' });
    expect(pod.metadata?.deletionTimestamp).toEqual(expect.any(String));
    expect(pod.metadata?.deletionGracePeriodSeconds).toBe(30);
    expect(podCondition('victim', 'DisruptionTarget')).toEqual({
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'DeletionByTaintManager',
      message: 'Taint manager: deleting due to NoExecute taint',
      lastTransitionTime: NOW_WIRE,
      // The newest minor's default (PodObservedGenerationTracking, v1.34): the pod's generation.
      observedGeneration: 1,
    });
    expect(podCondition('victim', 'Ready')?.status).toBe('True');
    expect(requests().map((r) => [r.verb, r.subresource])).toEqual([
      ['get', ''],
      ['patch', 'status'],
      ['delete', ''],
    ]);
  });

  it.each([
    { write: 'none', minor: '1.25: PodDisruptionConditions off', verbs: ['get', 'delete'] },
    { write: 'condition', minor: '1.26–1.33', verbs: ['get', 'patch', 'delete'] },
    { write: 'withObservedGeneration', minor: '1.34 on', verbs: ['get', 'patch', 'delete'] },
  ] as const)('disruptionTarget $write ($minor)', async ({ write, verbs }) => {
    createNode('node-a');
    createPod('victim', 'node-a');
    const { cluster } = harness();
    const result = await cluster.deletePodForTaintEviction('default', 'victim', { disruptionTarget: write });
    expect(result).toEqual({ ok: true, podWasGone: false });
    expect(requests().map((r) => r.verb)).toEqual(verbs);
    const condition = podCondition('victim', 'DisruptionTarget');
    if (write === 'none') expect(condition).toBeUndefined();
    else expect(condition?.observedGeneration).toBe(write === 'condition' ? undefined : 1);
  });

  it('does not delete again a pod already terminating; a pod already gone is done', async () => {
    createNode('node-a');
    createPod('victim', 'node-a');
    const { cluster } = harness();
    await cluster.deletePodForTaintEviction('default', 'victim');
    requestsBefore = api.requests.length;
    expect(await cluster.deletePodForTaintEviction('default', 'victim')).toEqual({
      ok: true,
      podWasGone: true,
    });
    expect(requests().map((r) => r.verb)).toEqual(['get']);
    expect(await cluster.deletePodForTaintEviction('default', 'never-was')).toEqual({
      ok: true,
      podWasGone: true,
    });
  });

  it('never deletes another pod re-created under the name: the UID decided about is a precondition', async () => {
    createNode('node-a');
    const old = createPod('db-0', 'node-a');
    api.store.pods.delete('db-0', { namespace: 'default', gracePeriodSeconds: 0 });
    const recreated = createPod('db-0', 'node-a');
    expect(recreated.uid).not.toBe(old.uid);
    const { cluster } = harness();
    expect(await cluster.deletePodForTaintEviction('default', 'db-0', { uid: old.uid })).toEqual({
      ok: true,
      podWasGone: true,
    });
    expect(requests().map((r) => r.verb)).toEqual(['get']);
    expect(api.store.pods.get('db-0', { namespace: 'default' }).metadata?.deletionTimestamp).toBeUndefined();
    // With its own UID it is deleted, and the DELETE carries the precondition.
    expect(await cluster.deletePodForTaintEviction('default', 'db-0', { uid: recreated.uid })).toEqual({
      ok: true,
      podWasGone: false,
    });
    expect(requests().at(-1)).toMatchObject({ verb: 'delete' });
  });

  it('a pod re-created between the read and the DELETE answers 409 on the UID precondition: left alone', async () => {
    createNode('node-a');
    const old = createPod('db-0', 'node-a');
    let release = (): void => undefined;
    api.faults.inject({
      kind: 'delay',
      until: new Promise<void>((resolve) => (release = resolve)),
      match: { verb: 'delete', resource: 'pods' },
      times: 1,
    });
    const { cluster } = harness();
    const deleting = cluster.deletePodForTaintEviction('default', 'db-0', { uid: old.uid });
    while (api.faults.pending() === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    // The DELETE is on its way: meanwhile the StatefulSet controller replaces the pod.
    api.store.pods.delete('db-0', { namespace: 'default', gracePeriodSeconds: 0 });
    createPod('db-0', 'node-a');
    release();
    expect(await deleting).toEqual({ ok: true, podWasGone: true });
    expect(api.store.pods.get('db-0', { namespace: 'default' }).metadata?.deletionTimestamp).toBeUndefined();
  });
});

describe('legacy eviction effects', () => {
  it('sets the NodeLost reason through pods/status, and deletes with the default grace period', async () => {
    createNode('node-a');
    const pod = createPod('old', 'node-a');
    const { cluster } = harness();
    expect(
      await cluster.execute({
        kind: 'setPodTerminationReason',
        pod,
        reason: 'NodeLost',
        message: 'Node node-a which was running pod old is unresponsive',
        why: 'test',
      }),
    ).toEqual({ ok: true });
    const status = api.store.pods.get('old', { namespace: 'default' }).status;
    expect([status?.reason, status?.message]).toEqual([
      'NodeLost',
      'Node node-a which was running pod old is unresponsive',
    ]);
    expect(podCondition('old', 'Ready')?.status).toBe('True');

    expect(await cluster.execute({ kind: 'deletePod', pod, why: 'test' })).toEqual({ ok: true });
    expect(api.store.pods.get('old', { namespace: 'default' }).metadata?.deletionTimestamp).toEqual(
      expect.any(String),
    );
    expect(
      await cluster.execute({ kind: 'deletePod', pod: { ...pod, name: 'missing' }, why: 'test' }),
    ).toEqual({
      ok: false,
      reason: 'NotFound',
      message: 'delete pod "default/missing": HTTP 404 NotFound: pods "missing" not found',
    });
  });
});

describe('addNodeLabels (reconcileNodeLabels)', () => {
  it('adds the beta OS/arch labels and leaves the others', async () => {
    createNode('node-a', {
      labels: {
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'arm64',
        'beta.kubernetes.io/arch': 'amd64',
        team: 'x',
      },
    });
    const got = await harness().cluster.getNode('node-a');
    const labels = got.ok ? reconcileNodeLabels(got.value) : undefined;
    expect(labels).toEqual({ 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'arm64' });
    expect(await harness().cluster.addNodeLabels('node-a', labels ?? {})).toEqual({ ok: true });
    expect(api.store.nodes.get('node-a').metadata?.labels).toEqual({
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'arm64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'arm64',
      team: 'x',
    });
  });
});

describe('recordEvent', () => {
  it('creates core/v1 Events readable through the API, with upstream reasons and sources', async () => {
    createNode('node-a');
    const uid = api.store.nodes.get('node-a').metadata?.uid ?? '';
    const { cluster } = harness();
    expect(
      await cluster.execute({ kind: 'recordEvent', event: registeredNodeEvent({ name: 'node-a', uid }) }),
    ).toEqual({
      ok: true,
    });
    expect(
      await cluster.recordEvent(taintManagerEvictionEvent({ namespace: 'default', name: 'p9' })),
    ).toEqual({ ok: true });
    expect(
      await cluster.recordEvent(podNodeNotReadyEvent({ namespace: 'default', name: 'p8', uid: 'u8' })),
    ).toEqual({ ok: true });

    const events = (await core.listNamespacedEvent({ namespace: 'default' })).items;
    const registered = events.find((e) => e.reason === 'RegisteredNode');
    expect(registered).toMatchObject({
      type: 'Normal',
      message: 'Node node-a event: Registered Node node-a in Controller',
      source: { component: 'node-controller' },
      count: 1,
      involvedObject: { apiVersion: 'v1', kind: 'Node', name: 'node-a', uid },
      firstTimestamp: new Date(NOW_WIRE),
      lastTimestamp: new Date(NOW_WIRE),
    });
    expect(registered?.metadata.name).toMatch(/^node-a\.[0-9a-f]+$/);
    const eviction = events.find((e) => e.reason === 'TaintManagerEviction');
    expect(eviction?.involvedObject).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      name: 'p9',
      namespace: 'default',
    });
    expect(eviction?.source?.component).toBe('taint-eviction-controller');
  });
});

describe('driving the domain passes through execute', () => {
  it('monitorNodeHealth then doNoExecuteTaintingPass: a silent node goes Unknown, its pods NotReady, then gets tainted', async () => {
    // Two nodes in one zone, so that one silent node leaves the zone Normal (a whole dead zone would be
    // FullDisruption, where upstream stops tainting).
    createNode('node-a', { labels: { 'topology.kubernetes.io/zone': 'z1' } });
    createNode('node-b', { labels: { 'topology.kubernetes.io/zone': 'z1' } });
    createPod('p1', 'node-a');
    let now = NOW;
    const cluster = createKubernetesCluster(api.kubeConfig(), {
      requestTimeoutMs: 10_000,
      clock: { now: () => now },
    });
    const execute = (effect: Parameters<ClusterPort['execute']>[0]) => cluster.execute(effect);
    const monitor = async (state: ReturnType<typeof emptyControllerState>) => {
      const nodes = await cluster.listNodes();
      if (!nodes.ok) throw new Error(nodes.message);
      return driveAsync(
        // node-b's kubelet keeps renewing its lease; node-a's has gone silent.
        monitorNodeHealth(
          state,
          { nodes: nodes.value, leases: new Map([['node-b', { renewTime: now }]]) },
          now,
          testConfig,
        ),
        execute,
      );
    };

    // First sight: registered, probe time = now.
    let pass = await monitor(emptyControllerState());
    expect(pass.registered).toEqual(['node-a', 'node-b']);
    // Silent for longer than the grace period: Ready=Unknown through /status, pods NotReady.
    now += testConfig.nodeMonitorGracePeriod + testConfig.nodeMonitorPeriod;
    pass = await monitor(pass.state);
    expect(pass.healthUpdateFailures).toEqual([]);
    const ready = api.store.nodes.get('node-a').status?.conditions?.find((c) => c.type === 'Ready');
    expect([ready?.status, ready?.reason]).toEqual(['Unknown', 'NodeStatusUnknown']);
    expect(podCondition('p1', 'Ready')?.status).toBe('False');
    // The next pass queues the NoExecute taint (upstream decides on the observed condition); the drainer writes it.
    now += testConfig.nodeMonitorPeriod;
    pass = await monitor(pass.state);
    const listed = await cluster.listNodes();
    const nodes = new Map(listed.ok ? listed.value.map((n): [string, Node] => [n.name, n]) : []);
    await driveAsync(
      doNoExecuteTaintingPass(pass.state.zoneQueues, nodes, () => now),
      execute,
    );
    expect(taintsOf('node-a')).toContainEqual({
      key: TaintNodeUnreachable,
      effect: 'NoExecute',
      timeAdded: formatWire(now),
    });

    // The Events about this test's objects (earlier tests reused the names, not the UIDs).
    const uids = new Set([
      api.store.nodes.get('node-a').metadata?.uid,
      api.store.nodes.get('node-b').metadata?.uid,
      api.store.pods.get('p1', { namespace: 'default' }).metadata?.uid,
    ]);
    const reasons = (await core.listNamespacedEvent({ namespace: 'default' })).items
      .filter((e) => uids.has(e.involvedObject.uid))
      .map((e) => `${e.involvedObject.kind}/${e.involvedObject.name}/${e.type ?? ''}/${e.reason ?? ''}`);
    expect(reasons.sort()).toEqual([
      'Node/node-a/Normal/NodeNotReady',
      'Node/node-a/Normal/RegisteredNode',
      'Node/node-b/Normal/RegisteredNode',
      'Pod/p1/Warning/NodeNotReady',
    ]);
  });
});

function formatWire(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
