// Server behaviour a real kube-apiserver shows and the project relies on: admission defaults,
// graceful pod deletion, validation errors with field paths, namespaces, events in both APIs,
// leases, daemonsets, timestamps and generation. Through @kubernetes/client-node.
import {
  type CoreV1Event,
  type EventsV1Event,
  PatchStrategy,
  type V1DaemonSet,
  type V1DeleteOptions,
  type V1Lease,
  V1MicroTime,
  type V1Namespace,
  type V1Node,
  type V1ObjectReference,
  type V1Pod,
  type V1PodSpec,
  type V1Toleration,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../../local/apiserver/index.js';
import { type Plain, type Sim, model, startSim, statusOf } from './helpers.js';

let sim: Sim;

beforeEach(async () => {
  sim = await startSim();
});

afterEach(async () => {
  await sim.api.close();
});

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

function createPod(name: string, spec: Plain<Partial<V1PodSpec>> = {}, namespace = 'default') {
  return sim.core.createNamespacedPod({
    namespace,
    body: model<V1Pod>({
      metadata: { name },
      spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'nginx:1.27' }], ...spec },
    }),
  });
}

const defaultNotReady = {
  key: 'node.kubernetes.io/not-ready',
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: 300,
};
const defaultUnreachable = { ...defaultNotReady, key: 'node.kubernetes.io/unreachable' };

describe('the API server at start', () => {
  it('has the namespaces a real one creates', async () => {
    const list = await sim.core.listNamespace();
    expect(list.items.map((ns) => ns.metadata?.name)).toEqual([
      'default',
      'kube-node-lease',
      'kube-public',
      'kube-system',
    ]);
    expect(list.items.every((ns) => ns.status?.phase === 'Active')).toBe(true);
  });

  it('serves /version', async () => {
    const version = await sim.api
      .kubeConfig()
      .makeApiClient((await import('@kubernetes/client-node')).VersionApi)
      .getCode();
    expect(version).toMatchObject({ major: '1', minor: '33', gitVersion: 'v1.33.0' });
  });
});

describe('DefaultTolerationSeconds admission', () => {
  it.each<{ name: string; tolerations: Plain<V1Toleration>[]; want: Plain<V1Toleration>[] }>([
    {
      name: 'a pod without tolerations gets both defaults',
      tolerations: [],
      want: [defaultNotReady, defaultUnreachable],
    },
    {
      name: 'a pod that tolerates not-ready (any operator, value or seconds) gets only unreachable',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 30,
        },
      ],
      want: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 30,
        },
        defaultUnreachable,
      ],
    },
    {
      name: 'a DaemonSet-style pod tolerating both forever keeps exactly its tolerations',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
      ],
      want: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
      ],
    },
    {
      name: 'a pod tolerating everything gets nothing',
      tolerations: [{ operator: 'Exists' }],
      want: [{ operator: 'Exists' }],
    },
  ])('$name', async ({ tolerations, want }) => {
    const pod = await createPod('p', { tolerations });
    expect(pod.spec?.tolerations).toEqual(want);
  });

  it('also runs on update: a toleration added by patch keeps the defaults', async () => {
    await createPod('p');
    const patched = await sim.core.patchNamespacedPod({
      namespace: 'default',
      name: 'p',
      body: [
        {
          op: 'add',
          path: '/spec/tolerations/-',
          value: { key: 'x', operator: 'Exists', effect: 'NoSchedule' },
        },
      ],
    });
    expect(patched.spec?.tolerations).toEqual([
      defaultNotReady,
      defaultUnreachable,
      { key: 'x', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    expect(patched.metadata?.generation).toBe(2);
  });
});

describe('TaintNodesByCondition admission', () => {
  it('adds node.kubernetes.io/not-ready:NoSchedule to a new node', async () => {
    const node = await sim.core.createNode({
      body: model<V1Node>({
        metadata: { name: 'node-a' },
        spec: { taints: [{ key: 'a', effect: 'NoSchedule' }] },
      }),
    });
    expect(node.spec?.taints).toEqual([
      { key: 'a', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
    ]);
  });

  it('does not add it twice, and not on update', async () => {
    await sim.core.createNode({
      body: model<V1Node>({
        metadata: { name: 'node-a' },
        spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule', value: 'x' }] },
      }),
    });
    const cleared = await sim.core.patchNode({ name: 'node-a', body: { spec: { taints: null } } }, merge);
    expect(cleared.spec?.taints).toBeUndefined();
  });
});

describe('pod deletion', () => {
  it('keeps a scheduled pod Terminating with deletionTimestamp until a grace-0 delete confirms it', async () => {
    const pod = await createPod('p');
    const deleted = await sim.core.deleteNamespacedPod({ namespace: 'default', name: 'p' });
    expect(deleted.metadata?.deletionGracePeriodSeconds).toBe(30);
    expect(deleted.metadata?.deletionTimestamp).toEqual(new Date(sim.clock.now() + 30_000));
    sim.clock.advance(3_600_000); // no kubelet: time alone removes nothing
    const still = await sim.core.readNamespacedPod({ namespace: 'default', name: 'p' });
    expect(still.metadata?.deletionTimestamp).toBeDefined();

    // The kubelet's confirmation: grace 0 with a UID precondition.
    await sim.core.deleteNamespacedPod({
      namespace: 'default',
      name: 'p',
      body: model<V1DeleteOptions>({
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata?.uid ?? '' },
      }),
    });
    expect(await statusOf(sim.core.readNamespacedPod({ namespace: 'default', name: 'p' }))).toMatchObject({
      reason: 'NotFound',
      code: 404,
      message: 'pods "p" not found',
    });
  });

  it('removes a pod at once with grace 0 (kubectl delete --force)', async () => {
    await createPod('p');
    await sim.core.deleteNamespacedPod({ namespace: 'default', name: 'p', gracePeriodSeconds: 0 });
    expect((await sim.core.listNamespacedPod({ namespace: 'default' })).items).toEqual([]);
  });

  it('removes an unscheduled pod at once', async () => {
    await sim.core.createNamespacedPod({
      namespace: 'default',
      body: model<V1Pod>({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }),
    });
    await sim.core.deleteNamespacedPod({ namespace: 'default', name: 'p' });
    expect((await sim.core.listNamespacedPod({ namespace: 'default' })).items).toEqual([]);
  });

  it('only shortens a pending grace period', async () => {
    await createPod('p');
    await sim.core.deleteNamespacedPod({ namespace: 'default', name: 'p', gracePeriodSeconds: 60 });
    const longer = await sim.core.deleteNamespacedPod({
      namespace: 'default',
      name: 'p',
      gracePeriodSeconds: 90,
    });
    expect(longer.metadata?.deletionGracePeriodSeconds).toBe(60);
    const shorter = await sim.core.deleteNamespacedPod({
      namespace: 'default',
      name: 'p',
      gracePeriodSeconds: 10,
    });
    expect(shorter.metadata?.deletionGracePeriodSeconds).toBe(10);
    expect(shorter.metadata?.deletionTimestamp).toEqual(new Date(sim.clock.now() + 10_000));
  });

  it('rejects a delete whose UID precondition does not match', async () => {
    await createPod('p');
    const status = await statusOf(
      sim.core.deleteNamespacedPod({
        namespace: 'default',
        name: 'p',
        body: model<V1DeleteOptions>({ preconditions: { uid: 'other' } }),
      }),
    );
    expect(status).toMatchObject({ reason: 'Conflict', code: 409 });
  });

  it('leaves the pods of a deleted node in place', async () => {
    await sim.core.createNode({ body: model<V1Node>({ metadata: { name: 'node-a' } }) });
    await createPod('p');
    const answer = await sim.core.deleteNode({ name: 'node-a' });
    expect(answer).toMatchObject({ status: 'Success', details: { name: 'node-a', kind: 'nodes' } });
    const pods = await sim.core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=node-a' });
    expect(pods.items.map((p) => p.metadata?.name)).toEqual(['p']);
  });

  it('holds an object with finalizers until the last one is removed', async () => {
    await sim.core.createNode({
      body: model<V1Node>({ metadata: { name: 'node-a', finalizers: ['example.com/hold'] } }),
    });
    await sim.core.deleteNode({ name: 'node-a' });
    const pending = sim.api.store.nodes.get('node-a');
    expect(pending.metadata?.deletionTimestamp).toBe('2025-01-01T00:00:00Z');
    await sim.core.patchNode({ name: 'node-a', body: { metadata: { finalizers: null } } }, merge);
    expect((await sim.core.listNode()).items).toEqual([]);
  });
});

describe('validation', () => {
  it.each([
    {
      name: 'an Exists toleration with a value',
      tolerations: [{ key: 'k', operator: 'Exists', value: 'v', effect: 'NoExecute' }],
      field: 'spec.tolerations[0].operator',
      reason: 'FieldValueInvalid',
      message:
        'Invalid value: core.Toleration{Key:"k", Operator:"Exists", Value:"v", Effect:"NoExecute", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is \'Exists\'',
    },
    {
      name: 'an unknown toleration effect',
      tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoRun' }],
      field: 'spec.tolerations[0].effect',
      reason: 'FieldValueNotSupported',
      message: 'Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    },
    {
      name: 'tolerationSeconds without NoExecute',
      tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 }],
      field: 'spec.tolerations[0].effect',
      reason: 'FieldValueInvalid',
      message: 'Invalid value: "NoSchedule": effect must be \'NoExecute\' when `tolerationSeconds` is set',
    },
  ])('rejects $name with 422 at $field', async ({ tolerations, field, reason, message }) => {
    const status = await statusOf(createPod('p', { tolerations }));
    expect(status).toMatchObject({ reason: 'Invalid', code: 422, details: { name: 'p', kind: 'Pod' } });
    expect(status.details?.causes).toEqual([{ reason, field, message }]);
  });

  it('rejects a node name that is not a DNS-1123 subdomain', async () => {
    const status = await statusOf(
      sim.core.createNode({ body: model<V1Node>({ metadata: { name: 'Node_A' } }) }),
    );
    expect(status.message).toBe(
      "Node \"Node_A\" is invalid: metadata.name: Invalid value: \"Node_A\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  });

  it('rejects a node condition status outside True, False and Unknown', async () => {
    await sim.core.createNode({ body: model<V1Node>({ metadata: { name: 'node-a' } }) });
    const status = await statusOf(
      sim.core.patchNodeStatus(
        { name: 'node-a', body: { status: { conditions: [{ type: 'Ready', status: 'Yes' }] } } },
        merge,
      ),
    );
    expect(status.details?.causes).toEqual([
      {
        reason: 'FieldValueNotSupported',
        field: 'status.conditions[0].status',
        message: 'Unsupported value: "Yes": supported values: "True", "False", "Unknown"',
      },
    ]);
  });

  it('rejects a pod without containers, reporting every problem at once', async () => {
    const status = await statusOf(
      sim.core.createNamespacedPod({
        namespace: 'default',
        body: model<V1Pod>({ metadata: { name: 'p' }, spec: { containers: [] } }),
      }),
    );
    expect(status.message).toBe('Pod "p" is invalid: spec.containers: Required value');
  });

  it('rejects a pod spec change other than images and added tolerations', async () => {
    await createPod('p');
    const status = await statusOf(
      sim.core.patchNamespacedPod(
        { namespace: 'default', name: 'p', body: { spec: { nodeName: 'node-b' } } },
        merge,
      ),
    );
    expect(status.details?.causes?.[0]).toMatchObject({ reason: 'FieldValueForbidden', field: 'spec' });
  });

  it('rejects a field of the wrong JSON type with 400, as the decoder does', () => {
    // In process: client-node's serializer would mangle the bad value before it left the client.
    const create = () =>
      sim.api.store.nodes.create({ metadata: { name: 'node-a' }, spec: { taints: 'none' as unknown as [] } });
    expect(create).toThrow(ApiStatusError);
    expect(create).toThrow(
      'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal string into Go struct field spec.taints of type array',
    );
  });

  it('refuses a create that carries a resourceVersion, as etcd3 storage does', async () => {
    const node = await sim.core.createNode({ body: model<V1Node>({ metadata: { name: 'node-a' } }) });
    await sim.core.deleteNode({ name: 'node-a' });
    const status = await statusOf(sim.core.createNode({ body: node }));
    expect(status).toMatchObject({
      code: 500,
      message: 'Internal error occurred: resourceVersion should not be set on objects to be created',
    });
  });

  it('answers AlreadyExists for a second create', async () => {
    await sim.core.createNode({ body: model<V1Node>({ metadata: { name: 'node-a' } }) });
    expect(
      await statusOf(sim.core.createNode({ body: model<V1Node>({ metadata: { name: 'node-a' } }) })),
    ).toMatchObject({
      reason: 'AlreadyExists',
      code: 409,
      message: 'nodes "node-a" already exists',
    });
  });
});

describe('namespaces', () => {
  it('refuses objects in a namespace that does not exist', async () => {
    const status = await statusOf(createPod('p', {}, 'nope'));
    expect(status).toMatchObject({ reason: 'NotFound', code: 404, message: 'namespaces "nope" not found' });
  });

  it('refuses to delete the system namespaces', async () => {
    expect(await statusOf(sim.core.deleteNamespace({ name: 'kube-system' }))).toMatchObject({
      reason: 'Forbidden',
      code: 403,
    });
  });

  it('keeps a deleted namespace Terminating while a pod in it waits for its kubelet', async () => {
    await sim.core.createNamespace({ body: model<V1Namespace>({ metadata: { name: 'team' } }) });
    await createPod('p', {}, 'team');
    const terminating = await sim.core.deleteNamespace({ name: 'team' });
    expect(terminating).toMatchObject({ status: { phase: 'Terminating' } });
    expect(await statusOf(createPod('q', {}, 'team'))).toMatchObject({ reason: 'Forbidden', code: 403 });
    await sim.core.deleteNamespacedPod({ namespace: 'team', name: 'p', gracePeriodSeconds: 0 });
    expect((await sim.core.listNamespace()).items.map((ns) => ns.metadata?.name)).not.toContain('team');
  });
});

describe('events', () => {
  const involved: Plain<V1ObjectReference> = { kind: 'Node', name: 'node-a', uid: 'u-1', apiVersion: 'v1' };

  it('serves core/v1 events through events.k8s.io/v1 as the same objects', async () => {
    await sim.core.createNamespacedEvent({
      namespace: 'default',
      body: model<CoreV1Event>({
        metadata: { name: 'node-a.1' },
        involvedObject: { ...involved, namespace: '' },
        reason: 'NodeNotReady',
        message: 'Node node-a status is now: NodeNotReady',
        type: 'Normal',
        source: { component: 'node-controller' },
        count: 1,
        firstTimestamp: new Date(sim.clock.now()),
        lastTimestamp: new Date(sim.clock.now()),
      }),
    });
    const event = await sim.events.readNamespacedEvent({ namespace: 'default', name: 'node-a.1' });
    expect(event).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      regarding: { kind: 'Node', name: 'node-a' },
      note: 'Node node-a status is now: NodeNotReady',
      reason: 'NodeNotReady',
      deprecatedSource: { component: 'node-controller' },
      deprecatedCount: 1,
    });
  });

  it('requires events.k8s.io/v1 events to say who reported them and when', async () => {
    const status = await statusOf(
      sim.events.createNamespacedEvent({
        namespace: 'default',
        body: model<EventsV1Event>({
          metadata: { name: 'e' },
          regarding: involved,
          reason: 'RegisteredNode',
          type: 'Normal',
          action: 'Registered',
          eventTime: new V1MicroTime(sim.clock.now()),
        }),
      }),
    );
    expect(status.details?.causes?.map((c) => [c.field, c.reason])).toEqual([
      ['reportingController', 'FieldValueRequired'],
      ['reportingController', 'FieldValueInvalid'], // and not a qualified name either, as upstream also reports
      ['reportingController', 'FieldValueInvalid'],
      ['reportingInstance', 'FieldValueRequired'],
    ]);
  });

  it('accepts a complete events.k8s.io/v1 event and lists it through core/v1', async () => {
    await sim.events.createNamespacedEvent({
      namespace: 'default',
      body: model<EventsV1Event>({
        metadata: { name: 'e' },
        regarding: involved,
        reason: 'RegisteredNode',
        note: 'Node node-a event: Registered Node node-a in Controller',
        type: 'Normal',
        action: 'Registered',
        eventTime: new V1MicroTime(sim.clock.now()),
        reportingController: 'node-controller',
        reportingInstance: 'nlc',
      }),
    });
    const list = await sim.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'reason=RegisteredNode',
    });
    expect(list.items.map((e) => [e.involvedObject.name, e.message, e.reportingComponent])).toEqual([
      ['node-a', 'Node node-a event: Registered Node node-a in Controller', 'node-controller'],
    ]);
  });

  it('expires events after the event TTL', async () => {
    sim.api.store.events.create({
      metadata: { name: 'e', namespace: 'default' },
      involvedObject: { ...involved, namespace: 'default' },
      reason: 'R',
      message: 'm',
    });
    sim.clock.advance(3_600_000);
    expect((await sim.core.listNamespacedEvent({ namespace: 'default' })).items).toEqual([]);
  });
});

describe('leases', () => {
  it('round-trips MicroTime with six fraction digits and renews with optimistic locking', async () => {
    const created = await sim.coordination.createNamespacedLease({
      namespace: 'kube-node-lease',
      body: model<V1Lease>({
        metadata: { name: 'node-a' },
        spec: {
          holderIdentity: 'node-a',
          leaseDurationSeconds: 40,
          renewTime: new V1MicroTime(Date.parse('2025-01-01T00:00:00.123Z')),
        },
      }),
    });
    // client-node 1.4 does not revive V1MicroTime fields: they come back as the wire string.
    expect(String(created.spec?.renewTime)).toBe('2025-01-01T00:00:00.123000Z');

    if (created.spec !== undefined)
      created.spec.renewTime = new V1MicroTime(Date.parse('2025-01-01T00:00:10Z'));
    const renewed = await sim.coordination.replaceNamespacedLease({
      namespace: 'kube-node-lease',
      name: 'node-a',
      body: created,
    });
    expect(Number(renewed.metadata?.resourceVersion)).toBeGreaterThan(
      Number(created.metadata?.resourceVersion),
    );
    expect(
      await statusOf(
        sim.coordination.replaceNamespacedLease({
          namespace: 'kube-node-lease',
          name: 'node-a',
          body: created,
        }),
      ),
    ).toMatchObject({
      code: 409,
      details: { group: 'coordination.k8s.io', kind: 'leases' },
    });
  });

  it('rejects a renewTime with millisecond precision, as the Go MicroTime decoder does', () => {
    expect(() =>
      sim.api.store.leases.create({
        metadata: { name: 'node-a', namespace: 'kube-node-lease' },
        spec: { holderIdentity: 'node-a', renewTime: '2025-01-01T00:00:00.123Z' },
      }),
    ).toThrow(
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2025-01-01T00:00:00.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"',
    );
  });

  it('rejects a non-positive leaseDurationSeconds', async () => {
    const status = await statusOf(
      sim.coordination.createNamespacedLease({
        namespace: 'kube-node-lease',
        body: model<V1Lease>({ metadata: { name: 'x' }, spec: { leaseDurationSeconds: 0 } }),
      }),
    );
    expect(status.message).toBe(
      'Lease.coordination.k8s.io "x" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
    );
  });
});

describe('daemonsets', () => {
  it('tracks generation on spec changes only', async () => {
    const body = model<V1DaemonSet>({
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: { containers: [{ name: 'a', image: 'agent:1' }] },
        },
      },
    });
    const created = await sim.apps.createNamespacedDaemonSet({ namespace: 'kube-system', body });
    expect(created.metadata?.generation).toBe(1);
    const relabeled = await sim.apps.patchNamespacedDaemonSet(
      { namespace: 'kube-system', name: 'agent', body: { metadata: { labels: { x: 'y' } } } },
      merge,
    );
    expect(relabeled.metadata?.generation).toBe(1);
    const rolled = await sim.apps.patchNamespacedDaemonSet(
      {
        namespace: 'kube-system',
        name: 'agent',
        body: { spec: { template: { spec: { containers: [{ name: 'a', image: 'agent:2' }] } } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(rolled.metadata?.generation).toBe(2);
    expect(rolled.spec?.template.spec?.containers.map((c) => c.image)).toEqual(['agent:2']);
  });

  it('rejects a selector that does not match the template labels', async () => {
    const status = await statusOf(
      sim.apps.createNamespacedDaemonSet({
        namespace: 'kube-system',
        body: model<V1DaemonSet>({
          metadata: { name: 'agent' },
          spec: {
            selector: { matchLabels: { app: 'agent' } },
            template: {
              metadata: { labels: { app: 'other' } },
              spec: { containers: [{ name: 'a', image: 'agent:1' }] },
            },
          },
        }),
      }),
    );
    expect(status.details?.causes?.map((c) => c.field)).toEqual(['spec.template.metadata.labels']);
  });
});

describe('server-set metadata', () => {
  it('stamps uid, creationTimestamp (whole seconds, from the injected clock) and resourceVersion', async () => {
    sim.clock.advance(1_500);
    const node = await sim.core.createNode({
      body: model<V1Node>({ metadata: { name: 'node-a', uid: 'mine', creationTimestamp: new Date(0) } }),
    });
    expect(node.metadata?.uid).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(node.metadata?.creationTimestamp).toEqual(new Date(Math.floor(sim.clock.now() / 1000) * 1000));
    expect(node.metadata?.resourceVersion).toBe(sim.api.store.resourceVersion);
  });

  it('canonicalises condition times to whole seconds in UTC', async () => {
    await sim.core.createNode({ body: model<V1Node>({ metadata: { name: 'node-a' } }) });
    sim.api.store.nodes.patch(
      'node-a',
      {
        status: {
          conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2025-01-01T02:00:00.750+02:00' }],
        },
      },
      { type: 'strategic', subresource: 'status' },
    );
    expect(sim.api.store.nodes.get('node-a').status?.conditions?.[0]?.lastHeartbeatTime).toBe(
      '2025-01-01T00:00:00Z',
    );
  });
});
