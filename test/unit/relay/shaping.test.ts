// relay/shaping.ts (with probeTracker.ts and putEvents.ts): trimming Kubernetes objects, the watch
// filters (table tests that also check properties, STYLE 3.2/3.3), the probe tracker, and PutEvents
// batching under EventBridge's entry-size rule.
import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { V1Lease, V1Node, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../../shared/domain/types.js';
import { EventEncodeError, MalformedObjectError } from '../../../shared/errors.js';
import {
  HeartbeatDigestDetailType,
  NodeChangedDetailType,
  parseHeartbeatDigest,
  parseNodeChanged,
  parsePodChanged,
  PodChangedDetailType,
  type OutgoingEvent,
} from '../../../shared/events.js';
import {
  batchEntries,
  buildDigest,
  forgetNode,
  kubeTimeToMillis,
  newProbeTracker,
  nodeChanged,
  nodeChangeIsRelevant,
  observeLease,
  observeNodeStatus,
  podChanged,
  podChangeIsRelevant,
  PutEventsMaxBytes,
  PutEventsMaxEntries,
  putEventsEntrySize,
  toPutEventsEntries,
  trimLease,
  trimNode,
  trimPod,
} from '../../../relay/shaping.js';
import * as arb from '../../helpers/eventArbitraries.js';

const at = (iso: string): number => Date.parse(iso);

/**
 * Informers hand out parsed JSON (or, for listed objects, deserialized models), never objects built
 * with the model classes' constructors; fixtures are plain objects typed as the client's models.
 */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- a typed view of plain JSON is the point
function fromJson<T>(json: object): T {
  return json as T;
}

interface NodeExtras {
  readonly resourceVersion?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly images?: string[];
  readonly cpu?: string;
}

// A node as the API server returns it, with everything the controller does not read.
function v1Node(times: (iso: string) => Date | string, extras: NodeExtras = {}): V1Node {
  return fromJson<V1Node>({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: 'ip-10-0-12-7.eu-west-1.compute.internal',
      uid: '5f0c2a0e-8d4b-4f5e-9a51-2d7c9c1e6b3a',
      resourceVersion: extras.resourceVersion ?? '81237645',
      creationTimestamp: times('2026-11-02T08:15:04Z'),
      labels: {
        'topology.kubernetes.io/zone': 'eu-west-1a',
        'topology.kubernetes.io/region': 'eu-west-1',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/hostname': 'ip-10-0-12-7',
        'node.kubernetes.io/instance-type': 'm7g.large',
        'eks.amazonaws.com/nodegroup': 'general',
        ...extras.labels,
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', ...extras.annotations },
      managedFields: [{ manager: 'kubelet', operation: 'Update' }],
    },
    spec: {
      providerID: 'aws:///eu-west-1a/i-0abc',
      podCIDR: '10.1.0.0/24',
      taints: [
        { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
        {
          key: 'node.kubernetes.io/unreachable',
          effect: 'NoExecute',
          timeAdded: times('2026-11-21T09:58:13Z'),
        },
      ],
    },
    status: {
      capacity: { cpu: extras.cpu ?? '2', memory: '8Gi', pods: '110' },
      allocatable: { cpu: '1930m', memory: '7Gi', pods: '110' },
      addresses: [{ type: 'InternalIP', address: '10.0.12.7' }],
      images: [
        { names: extras.images ?? ['public.ecr.aws/eks-distro/kubernetes/pause:3.9'], sizeBytes: 300_000 },
      ],
      nodeInfo: { kubeletVersion: 'v1.34.1' },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
          lastHeartbeatTime: times('2026-11-21T09:58:12Z'),
          lastTransitionTime: times('2026-11-02T08:16:00Z'),
        },
      ],
    },
  });
}

const trimmedNode: Node = {
  name: 'ip-10-0-12-7.eu-west-1.compute.internal',
  uid: '5f0c2a0e-8d4b-4f5e-9a51-2d7c9c1e6b3a',
  resourceVersion: '81237645',
  creationTimestamp: at('2026-11-02T08:15:04Z'),
  labels: {
    'topology.kubernetes.io/zone': 'eu-west-1a',
    'topology.kubernetes.io/region': 'eu-west-1',
    'kubernetes.io/os': 'linux',
  },
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason: 'KubeletReady',
      message: 'kubelet is posting ready status',
      lastHeartbeatTime: at('2026-11-21T09:58:12Z'),
      lastTransitionTime: at('2026-11-02T08:16:00Z'),
    },
  ],
  taints: [
    { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: at('2026-11-21T09:58:13Z') },
  ],
  unschedulable: false,
};

function v1Pod(overrides: object = {}): V1Pod {
  return fromJson<V1Pod>({
    metadata: {
      namespace: 'shop',
      name: 'checkout-7c9d8f6b4-2xq9z',
      uid: '0b6e3c1a-3f2d-4c8e-9b7a-6d5e4f3a2b1c',
      labels: { app: 'checkout' },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'not-the-controller', uid: 'u0' },
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'checkout-7c9d8f6b4',
          uid: 'u1',
          controller: true,
        },
      ],
    },
    spec: {
      nodeName: 'ip-10-0-12-7.eu-west-1.compute.internal',
      containers: [{ name: 'app', image: 'checkout:1.2.3' }],
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True' },
        { type: 'Ready', status: 'True' },
      ],
    },
    ...overrides,
  });
}

const pod0: Pod = {
  namespace: 'shop',
  name: 'checkout-0',
  uid: 'uid-0',
  nodeName: 'node-a',
  tolerations: [],
  ready: 'True',
};

describe('kubeTimeToMillis', () => {
  it.each([
    {
      name: 'a Date (listed objects)',
      value: new Date('2026-11-21T10:00:00.123Z'),
      want: at('2026-11-21T10:00:00.123Z'),
    },
    {
      name: 'an RFC 3339 string (watched objects)',
      value: '2026-11-21T10:00:00Z',
      want: at('2026-11-21T10:00:00Z'),
    },
    {
      name: 'a MicroTime, truncated to the ms',
      value: '2026-11-21T10:00:00.123456Z',
      want: at('2026-11-21T10:00:00.123Z'),
    },
    { name: 'nanoseconds', value: '2026-11-21T10:00:00.999999999Z', want: at('2026-11-21T10:00:00.999Z') },
    { name: 'an offset', value: '2026-11-21T11:00:00.5+01:00', want: at('2026-11-21T10:00:00.500Z') },
    { name: 'null (JSON)', value: null, want: undefined },
    { name: 'undefined', value: undefined, want: undefined },
    { name: 'garbage', value: 'soon', want: undefined },
    { name: 'an invalid Date', value: new Date('nope'), want: undefined },
  ])('reads $name', ({ value, want }) => {
    expect(kubeTimeToMillis(value)).toBe(want);
  });
});

describe('trimNode', () => {
  it('keeps what the controller reads and drops the rest (labels, images, capacity, ...)', () => {
    expect(trimNode(v1Node((iso) => new Date(iso)))).toEqual(trimmedNode);
  });

  it('gives the same node for a listed object (Dates) and a watched one (raw JSON strings)', () => {
    expect(trimNode(v1Node((iso) => iso))).toEqual(trimNode(v1Node((iso) => new Date(iso))));
  });

  it('reads an absent spec, status and labels as an empty, schedulable node', () => {
    const node = trimNode(fromJson({ metadata: { name: 'n1', uid: 'u1', creationTimestamp: new Date(0) } }));
    expect(node).toEqual({
      name: 'n1',
      uid: 'u1',
      creationTimestamp: 0,
      labels: {},
      conditions: [],
      taints: [],
      unschedulable: false,
    });
  });

  it('reads odd values the way the controller would', () => {
    const node = trimNode(
      fromJson({
        metadata: { name: 'n1', uid: 'u1', creationTimestamp: new Date(0), labels: { constructor: 'x' } },
        spec: { unschedulable: true, taints: [{ key: 'k', effect: 'Evict' }] },
        status: { conditions: [{ type: 'Custom', status: 'Maybe' }] },
      }),
    );
    expect(node.labels).toEqual({});
    expect(node.taints).toEqual([]); // an effect the API server would not admit
    expect(node.conditions).toEqual([{ type: 'Custom', status: 'Unknown' }]);
    expect(node.unschedulable).toBe(true);
  });

  it.each([
    {
      name: 'metadata.name',
      v1: { metadata: { uid: 'u', creationTimestamp: new Date(0) } },
      want: 'Node has no metadata.name',
    },
    {
      name: 'metadata.uid',
      v1: { metadata: { name: 'n', creationTimestamp: new Date(0) } },
      want: 'Node n has no metadata.uid',
    },
    {
      name: 'metadata.creationTimestamp',
      v1: { metadata: { name: 'n', uid: 'u' } },
      want: 'Node n has no metadata.creationTimestamp',
    },
  ])('throws MalformedObjectError without $name', ({ v1, want }) => {
    expect(() => trimNode(fromJson(v1))).toThrow(MalformedObjectError);
    expect(() => trimNode(fromJson(v1))).toThrow(want);
  });
});

describe('trimPod and trimLease', () => {
  it('keeps identity, node, tolerations, the controller owner kind and the Ready status', () => {
    expect(trimPod(v1Pod())).toEqual({
      namespace: 'shop',
      name: 'checkout-7c9d8f6b4-2xq9z',
      uid: '0b6e3c1a-3f2d-4c8e-9b7a-6d5e4f3a2b1c',
      nodeName: 'ip-10-0-12-7.eu-west-1.compute.internal',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      ownerKind: 'ReplicaSet',
      ready: 'True',
    });
  });

  it('reads deletion, status.reason, an unbound pod and a pod without Ready', () => {
    const pod = trimPod(
      v1Pod({
        metadata: {
          namespace: 'shop',
          name: 'p',
          uid: 'u',
          deletionTimestamp: '2026-11-21T10:05:13Z', // raw JSON from a watch
          deletionGracePeriodSeconds: 30,
        },
        spec: { containers: [] },
        status: { reason: 'NodeLost' },
      }),
    );
    expect(pod).toEqual({
      namespace: 'shop',
      name: 'p',
      uid: 'u',
      nodeName: '',
      tolerations: [],
      deletionTimestamp: at('2026-11-21T10:05:13Z'),
      deletionGracePeriodSeconds: 30,
      statusReason: 'NodeLost',
    });
  });

  it('clamps int64 tolerationSeconds and drops tolerations that can never tolerate', () => {
    const pod = trimPod(
      v1Pod({
        spec: {
          containers: [],
          tolerations: [
            { operator: 'Exists', tolerationSeconds: JSON.parse('9223372036854775807') as number },
            { key: 'k', operator: 'Matches' },
            { key: 'k', operator: 'Exists', effect: 'Evict' },
            { key: 'k', effect: '' },
          ],
        },
      }),
    );
    expect(pod.tolerations).toEqual([
      { operator: 'Exists', tolerationSeconds: Number.MAX_SAFE_INTEGER },
      { key: 'k', effect: '' },
    ]);
  });

  it('throws MalformedObjectError for a pod without a namespace', () => {
    expect(() => trimPod(fromJson({ metadata: { name: 'p', uid: 'u' } }))).toThrow(
      'Pod p has no metadata.namespace',
    );
  });

  it('reads a node Lease as its node name and renewTime', () => {
    const lease = fromJson<V1Lease>({
      metadata: { name: 'node-a', namespace: 'kube-node-lease' },
      spec: { holderIdentity: 'node-a', renewTime: '2026-11-21T10:00:00.123456Z' }, // MicroTime, raw JSON
    });
    expect(trimLease(lease)).toEqual({ nodeName: 'node-a', renewTime: at('2026-11-21T10:00:00.123Z') });
    expect(trimLease(fromJson({ metadata: { name: 'node-b' } }))).toEqual({ nodeName: 'node-b' });
  });
});

describe('nodeChangeIsRelevant', () => {
  const cond = trimmedNode.conditions[0];
  if (cond === undefined) throw new Error('fixture');
  const later = at('2026-11-21T10:03:12Z');
  it.each<{ name: string; old: Node | undefined; next: Node | undefined; want: boolean }>([
    { name: 'node added', old: undefined, next: trimmedNode, want: true },
    { name: 'node deleted', old: trimmedNode, next: undefined, want: true },
    { name: 'no node at all', old: undefined, next: undefined, want: false },
    { name: 'same node', old: trimmedNode, next: trimmedNode, want: false },
    {
      name: 'only resourceVersion changed',
      old: trimmedNode,
      next: { ...trimmedNode, resourceVersion: '81237999' },
      want: false,
    },
    {
      name: 'only the Ready heartbeat changed (a probe)',
      old: trimmedNode,
      next: { ...trimmedNode, conditions: [{ ...cond, lastHeartbeatTime: later }] },
      want: false,
    },
    {
      name: 'only another condition heartbeat changed',
      old: {
        ...trimmedNode,
        conditions: [cond, { type: 'DiskPressure', status: 'False', lastHeartbeatTime: 1 }],
      },
      next: {
        ...trimmedNode,
        conditions: [cond, { type: 'DiskPressure', status: 'False', lastHeartbeatTime: 2 }],
      },
      want: false,
    },
    {
      name: 'heartbeat and status changed (kubelet reports NotReady)',
      old: trimmedNode,
      next: {
        ...trimmedNode,
        conditions: [{ ...cond, status: 'False', lastHeartbeatTime: later, lastTransitionTime: later }],
      },
      want: true,
    },
    {
      name: 'controller marked Ready Unknown (heartbeat kept)',
      old: trimmedNode,
      next: {
        ...trimmedNode,
        conditions: [{ ...cond, status: 'Unknown', reason: 'NodeStatusUnknown', lastTransitionTime: later }],
      },
      want: true,
    },
    {
      name: 'condition message changed',
      old: trimmedNode,
      next: { ...trimmedNode, conditions: [{ ...cond, message: 'x' }] },
      want: true,
    },
    {
      name: 'condition added',
      old: trimmedNode,
      next: { ...trimmedNode, conditions: [cond, { type: 'PIDPressure', status: 'False' }] },
      want: true,
    },
    {
      name: 'absent reason and empty reason are the same',
      old: { ...trimmedNode, conditions: [{ type: 'Ready', status: 'True' }] },
      next: { ...trimmedNode, conditions: [{ type: 'Ready', status: 'True', reason: '' }] },
      want: false,
    },
    {
      name: 'taint added',
      old: trimmedNode,
      next: { ...trimmedNode, taints: [...trimmedNode.taints, { key: 'x', effect: 'NoSchedule' as const }] },
      want: true,
    },
    {
      name: 'taint timeAdded changed (re-added taint)',
      old: trimmedNode,
      next: { ...trimmedNode, taints: trimmedNode.taints.map((t) => ({ ...t, timeAdded: later })) },
      want: true,
    },
    {
      name: 'taints reordered',
      old: trimmedNode,
      next: { ...trimmedNode, taints: [...trimmedNode.taints].reverse() },
      want: true,
    },
    { name: 'cordoned', old: trimmedNode, next: { ...trimmedNode, unschedulable: true }, want: true },
    {
      name: 'zone label changed',
      old: trimmedNode,
      next: {
        ...trimmedNode,
        labels: { ...trimmedNode.labels, 'topology.kubernetes.io/zone': 'eu-west-1b' },
      },
      want: true,
    },
    {
      name: 'exclusion label added with empty value',
      old: trimmedNode,
      next: {
        ...trimmedNode,
        labels: { ...trimmedNode.labels, 'node.kubernetes.io/exclude-disruption': '' },
      },
      want: true,
    },
    {
      name: 'labels reordered',
      old: trimmedNode,
      next: { ...trimmedNode, labels: Object.fromEntries(Object.entries(trimmedNode.labels).reverse()) },
      want: false,
    },
    {
      name: 're-created with the same name',
      old: trimmedNode,
      next: { ...trimmedNode, uid: 'new-uid' },
      want: true,
    },
  ])('$name', ({ old, next, want }) => {
    expect(nodeChangeIsRelevant(old, next)).toBe(want);
    // The filter is symmetric: it asks whether the two differ in what the controller reads.
    expect(nodeChangeIsRelevant(next, old)).toBe(want);
  });

  it('is false for a node compared with itself, and symmetric', () => {
    fc.assert(
      fc.property(arb.node, arb.node, (a, b) => {
        expect(nodeChangeIsRelevant(a, a)).toBe(false);
        expect(nodeChangeIsRelevant(a, { ...a })).toBe(false);
        expect(nodeChangeIsRelevant(a, b)).toBe(nodeChangeIsRelevant(b, a));
      }),
    );
  });

  it('ignores heartbeats and resourceVersion, and nothing else', () => {
    fc.assert(
      fc.property(arb.node, fc.array(arb.epochMillis, { minLength: 6, maxLength: 6 }), (node, beats) => {
        const probed = {
          ...node,
          resourceVersion: 'other',
          conditions: node.conditions.map((c, i) => ({ ...c, lastHeartbeatTime: beats[i] })),
        };
        expect(nodeChangeIsRelevant(node, probed)).toBe(false);
        expect(nodeChangeIsRelevant(node, { ...node, unschedulable: !node.unschedulable })).toBe(true);
      }),
    );
  });

  it('never sees changes trimming drops (images, capacity, other labels, annotations)', () => {
    const base = trimNode(v1Node((iso) => iso));
    fc.assert(
      fc.property(
        fc.array(fc.string(), { maxLength: 3 }),
        fc.string(),
        fc.dictionary(fc.stringMatching(/^example\.com\/[a-z]{1,8}$/), fc.string()),
        (images, cpu, labels) => {
          const changed = v1Node((iso) => iso, {
            resourceVersion: '99',
            labels,
            annotations: { a: cpu },
            images,
            cpu,
          });
          expect(nodeChangeIsRelevant(base, trimNode(changed))).toBe(false);
        },
      ),
    );
  });
});

describe('podChangeIsRelevant', () => {
  const later = at('2026-11-21T10:05:13Z');
  it.each<{ name: string; old: Pod | undefined; next: Pod | undefined; want: boolean }>([
    { name: 'bound pod added', old: undefined, next: pod0, want: true },
    { name: 'unbound pod added', old: undefined, next: { ...pod0, nodeName: '' }, want: false },
    { name: 'pod bound (scheduled)', old: { ...pod0, nodeName: '' }, next: pod0, want: true },
    { name: 'pod rebound to another node', old: pod0, next: { ...pod0, nodeName: 'node-b' }, want: true },
    { name: 'bound pod deleted', old: pod0, next: undefined, want: true },
    { name: 'unbound pod deleted', old: { ...pod0, nodeName: '' }, next: undefined, want: false },
    { name: 'no pod at all', old: undefined, next: undefined, want: false },
    {
      name: 'tolerations changed',
      old: pod0,
      next: { ...pod0, tolerations: [{ operator: 'Exists' as const }] },
      want: true,
    },
    {
      name: 'tolerationSeconds changed',
      old: { ...pod0, tolerations: [{ operator: 'Exists' as const, tolerationSeconds: 1 }] },
      next: { ...pod0, tolerations: [{ operator: 'Exists' as const, tolerationSeconds: 2 }] },
      want: true,
    },
    {
      name: 'empty and absent toleration fields are the same',
      old: { ...pod0, tolerations: [{ key: '' }] },
      next: { ...pod0, tolerations: [{}] },
      want: false,
    },
    {
      name: 'deletionTimestamp newly set',
      old: pod0,
      next: { ...pod0, deletionTimestamp: later, deletionGracePeriodSeconds: 30 },
      want: true,
    },
    {
      name: 'already terminating, grace shortened',
      old: { ...pod0, deletionTimestamp: later },
      next: { ...pod0, deletionTimestamp: later, deletionGracePeriodSeconds: 0 },
      want: false,
    },
    { name: 'Ready changed only', old: pod0, next: { ...pod0, ready: 'False' as const }, want: false },
    {
      name: 'status.reason changed only',
      old: pod0,
      next: { ...pod0, statusReason: 'NodeLost' },
      want: false,
    },
    { name: 'same pod', old: pod0, next: pod0, want: false },
  ])('$name', ({ old, next, want }) => {
    expect(podChangeIsRelevant(old, next)).toBe(want);
  });

  it('is false for a pod compared with itself; adds and deletes of bound pods always count', () => {
    fc.assert(
      fc.property(arb.pod, (pod) => {
        expect(podChangeIsRelevant(pod, pod)).toBe(false);
        expect(podChangeIsRelevant(undefined, pod)).toBe(pod.nodeName !== '');
        expect(podChangeIsRelevant(pod, undefined)).toBe(pod.nodeName !== '');
      }),
    );
  });
});

describe('nodeChanged and podChanged', () => {
  it('builds Node Changed details with the change type, or nothing for an irrelevant change', () => {
    expect(nodeChanged('prod', undefined, trimmedNode)).toEqual({
      schemaVersion: 1,
      cluster: 'prod',
      type: 'ADDED',
      node: trimmedNode,
    });
    expect(nodeChanged('prod', trimmedNode, { ...trimmedNode, unschedulable: true })?.type).toBe('MODIFIED');
    expect(nodeChanged('prod', trimmedNode, undefined)).toEqual({
      schemaVersion: 1,
      cluster: 'prod',
      type: 'DELETED',
      node: trimmedNode,
    });
    expect(nodeChanged('prod', trimmedNode, { ...trimmedNode, resourceVersion: '1' })).toBeUndefined();
  });

  it('builds Pod Changed details, with oldNodeName on a rebind only', () => {
    expect(podChanged('prod', pod0, { ...pod0, nodeName: 'node-b' })).toEqual({
      schemaVersion: 1,
      cluster: 'prod',
      type: 'MODIFIED',
      pod: { ...pod0, nodeName: 'node-b' },
      oldNodeName: 'node-a',
    });
    expect(podChanged('prod', { ...pod0, nodeName: '' }, pod0)).not.toHaveProperty('oldNodeName');
    expect(podChanged('prod', pod0, undefined)).toMatchObject({ type: 'DELETED', pod: pod0 });
    expect(podChanged('prod', pod0, { ...pod0, ready: 'False' })).toBeUndefined();
  });

  it('builds details that encode and parse back to themselves', () => {
    const node = trimNode(v1Node((iso) => iso));
    const pod = trimPod(v1Pod());
    const events: OutgoingEvent[] = [
      { detailType: NodeChangedDetailType, detail: nodeChanged('prod', undefined, node)! },
      { detailType: PodChangedDetailType, detail: podChanged('prod', undefined, pod)! },
    ];
    const [nodeEntry, podEntry] = toPutEventsEntries(events, { busName: 'nlc' });
    expect(parseNodeChanged(JSON.parse(nodeEntry!.Detail!))).toEqual(events[0]!.detail);
    expect(parsePodChanged(JSON.parse(podEntry!.Detail!))).toEqual(events[1]!.detail);
  });
});

describe('ProbeTracker', () => {
  const t0 = at('2026-11-21T10:00:00Z');
  const node = (name: string, heartbeat?: number): Node => ({
    name,
    uid: `${name}-uid`,
    creationTimestamp: 0,
    labels: {},
    taints: [],
    unschedulable: false,
    conditions:
      heartbeat === undefined ? [] : [{ type: 'Ready', status: 'True', lastHeartbeatTime: heartbeat }],
  });
  const identity = { cluster: 'prod', relayId: 'relay-a', leaderSince: t0 - 60_000, sequence: 3 };

  it('takes the first sighting of a node and of its lease as a baseline, not a probe', () => {
    const tracker = newProbeTracker();
    expect(observeLease(tracker, 'n1', 1000, t0)).toBe('unknownNode'); // lease before node: ignored
    expect(observeNodeStatus(tracker, node('n1', 500), t0)).toBe('baseline');
    expect(observeLease(tracker, 'n1', 1000, t0 + 1)).toBe('baseline');
    expect(buildDigest(tracker, { ...identity, observedAt: t0 + 5000 }).probes.size).toBe(0);
  });

  it('records a probe at the relay time when the lease renewTime advances', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('n1'), t0);
    observeLease(tracker, 'n1', 1000, t0);
    expect(observeLease(tracker, 'n1', 11_000, t0 + 10_003)).toBe('probe');
    expect(observeLease(tracker, 'n1', 11_000, t0 + 12_000)).toBe('unchanged'); // resync, same lease
    expect(observeLease(tracker, 'n1', 9_000, t0 + 13_000)).toBe('unchanged'); // kubelet clock stepped back
    expect(observeLease(tracker, 'n1', 10_000, t0 + 14_000)).toBe('unchanged'); // still before the newest seen
    expect(observeLease(tracker, 'n1', undefined, t0 + 14_000)).toBe('unchanged');
    expect(buildDigest(tracker, { ...identity, observedAt: t0 + 15_000 }).probes).toEqual(
      new Map([['n1', t0 + 10_003]]),
    );
  });

  it('records a probe when the Ready heartbeat changes, and not when the controller marks it Unknown', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('n1', 1000), t0);
    expect(observeNodeStatus(tracker, node('n1', 1000), t0 + 1000)).toBe('unchanged');
    const markedUnknown: Node = {
      ...node('n1'),
      conditions: [{ type: 'Ready', status: 'Unknown', lastHeartbeatTime: 1000 }],
    };
    expect(observeNodeStatus(tracker, markedUnknown, t0 + 2000)).toBe('unchanged');
    expect(observeNodeStatus(tracker, node('n1', 301_000), t0 + 3000)).toBe('probe');
    expect(observeNodeStatus(tracker, node('n1'), t0 + 4000)).toBe('unchanged'); // Ready removed: no sign of life
    expect(buildDigest(tracker, { ...identity, observedAt: t0 + 5000 }).probes.get('n1')).toBe(t0 + 3000);
  });

  it('never moves a probe back, and never reports one after observedAt', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('n1'), t0);
    observeLease(tracker, 'n1', 1, t0);
    observeLease(tracker, 'n1', 2, t0 + 10_000);
    observeLease(tracker, 'n1', 3, t0 + 5_000); // relay clock stepped back
    expect(buildDigest(tracker, { ...identity, observedAt: t0 + 20_000 }).probes.get('n1')).toBe(t0 + 10_000);
    expect(buildDigest(tracker, { ...identity, observedAt: t0 + 6_000 }).probes.get('n1')).toBe(t0 + 6_000);
  });

  it('forgets deleted nodes, so a re-created node starts from a baseline', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('n1'), t0);
    observeLease(tracker, 'n1', 1, t0);
    observeLease(tracker, 'n1', 2, t0 + 1);
    expect(forgetNode(tracker, 'n1')).toBe(true);
    expect(forgetNode(tracker, 'n1')).toBe(false);
    expect(observeLease(tracker, 'n1', 3, t0 + 2)).toBe('unknownNode');
    expect(observeNodeStatus(tracker, node('n1'), t0 + 3)).toBe('baseline');
    expect(buildDigest(tracker, { ...identity, observedAt: t0 + 4 }).probes.size).toBe(0);
  });

  it('builds a whole digest that encodes and parses back', () => {
    const tracker = newProbeTracker();
    for (const name of ['ip-10-0-1-2.eu-west-1.compute.internal', 'worker1']) {
      observeNodeStatus(tracker, node(name), t0);
      observeLease(tracker, name, 1, t0);
      observeLease(tracker, name, 2, t0 + 1234);
    }
    const digest = buildDigest(tracker, { ...identity, observedAt: t0 + 5000 });
    expect(digest).toMatchObject({
      schemaVersion: 1,
      cluster: 'prod',
      sequence: 3,
      part: { index: 0, count: 1 },
    });
    const [entry] = toPutEventsEntries([{ detailType: HeartbeatDigestDetailType, detail: digest }], {
      busName: 'nlc',
    });
    expect(parseHeartbeatDigest(JSON.parse(entry!.Detail!))).toEqual(digest);
  });

  it('holds only nodes currently known, whatever the order of events', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('node' as const),
        name: fc.constantFrom('a', 'b', 'c'),
        beat: fc.nat(5),
      }),
      fc.record({
        kind: fc.constant('lease' as const),
        name: fc.constantFrom('a', 'b', 'c', 'd'),
        renew: fc.nat(5),
      }),
      fc.record({ kind: fc.constant('delete' as const), name: fc.constantFrom('a', 'b', 'c') }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const tracker = newProbeTracker();
        const known = new Set<string>();
        ops.forEach((o, now) => {
          if (o.kind === 'node') {
            observeNodeStatus(tracker, node(o.name, o.beat), now);
            known.add(o.name);
          } else if (o.kind === 'lease') {
            observeLease(tracker, o.name, o.renew, now);
          } else {
            forgetNode(tracker, o.name);
            known.delete(o.name);
          }
        });
        expect(new Set(tracker.nodes.keys())).toEqual(known);
        const digest = buildDigest(tracker, { ...identity, observedAt: ops.length });
        for (const [name, probedAt] of digest.probes) {
          expect(known.has(name)).toBe(true);
          expect(probedAt).toBeLessThanOrEqual(ops.length);
        }
      }),
    );
  });
});

describe('PutEvents entries and batches', () => {
  const entry = (detail: string, extra: Partial<PutEventsRequestEntry> = {}): PutEventsRequestEntry => ({
    EventBusName: 'nlc-bus',
    Source: 'nlc.relay',
    DetailType: 'Node Changed',
    Detail: detail,
    ...extra,
  });

  it('sizes an entry by AWS rule: Source + DetailType + Detail + Resources in UTF-8, Time 14 bytes', () => {
    expect(putEventsEntrySize(entry('{}'))).toBe(9 + 12 + 2);
    expect(putEventsEntrySize(entry('{"n":"é"}'))).toBe(9 + 12 + 10); // é is 2 bytes
    expect(putEventsEntrySize(entry('{}', { Time: new Date(), Resources: ['arn:a', 'arn:bb'] }))).toBe(
      9 + 12 + 2 + 14 + 5 + 6,
    );
    expect(putEventsEntrySize(entry('{}', { EventBusName: 'a-much-longer-bus-name' }))).toBe(23); // the bus does not count
  });

  it('makes one entry per event, in order, on the bus, from nlc.relay, without Time', () => {
    const entries = toPutEventsEntries(
      [
        { detailType: NodeChangedDetailType, detail: nodeChanged('prod', undefined, trimmedNode)! },
        { detailType: PodChangedDetailType, detail: podChanged('prod', undefined, pod0)! },
      ],
      { busName: 'nlc-bus' },
    );
    expect(entries.map((e) => [e.EventBusName, e.Source, e.DetailType, e.Time])).toEqual([
      ['nlc-bus', 'nlc.relay', 'Node Changed', undefined],
      ['nlc-bus', 'nlc.relay', 'Pod Changed', undefined],
    ]);
    expect(toPutEventsEntries([], { busName: 'b', source: 'nlc.test' })).toEqual([]);
  });

  it('refuses to send a detail that breaks the contract, naming the field', () => {
    const bad = { ...nodeChanged('prod', undefined, trimmedNode)!, cluster: 'Not A Label' };
    expect(() =>
      toPutEventsEntries([{ detailType: NodeChangedDetailType, detail: bad }], { busName: 'b' }),
    ).toThrow(EventEncodeError);
    expect(() =>
      toPutEventsEntries([{ detailType: NodeChangedDetailType, detail: bad }], { busName: 'b' }),
    ).toThrow(/detail\.cluster/);
  });

  it('batches at most 10 entries per request by default', () => {
    const entries = Array.from({ length: 23 }, (_, i) => entry(`{"i":${i}}`));
    const { batches, oversized } = batchEntries(entries);
    expect(PutEventsMaxEntries).toBe(10);
    expect(batches.map((b) => b.length)).toEqual([10, 10, 3]);
    expect(batches.flat()).toEqual(entries);
    expect(oversized).toEqual([]);
  });

  it('starts a new request before the total would pass maxBytes', () => {
    const entries = [entry('x'.repeat(40)), entry('x'.repeat(40)), entry('x'.repeat(40))]; // 61 bytes each
    expect(batchEntries(entries, { maxBytes: 122 }).batches.map((b) => b.length)).toEqual([2, 1]);
    expect(batchEntries(entries, { maxBytes: 121 }).batches.map((b) => b.length)).toEqual([1, 1, 1]);
  });

  it('never drops an entry too large to send: it comes back named', () => {
    const digest = JSON.stringify({
      cluster: 'prod',
      sequence: 7,
      part: { index: 1, count: 3 },
      probeAges: {},
    });
    const huge = entry(digest + ' '.repeat(2000), { DetailType: 'Heartbeat Digest' });
    const pod = entry(
      JSON.stringify({ cluster: 'prod', pod: { namespace: 'shop', name: 'web-0' } }) + ' '.repeat(2000),
      {
        DetailType: 'Pod Changed',
      },
    );
    const { batches, oversized } = batchEntries([entry('{}'), huge, entry('{}'), pod], { maxBytes: 1000 });
    expect(batches).toEqual([[entry('{}'), entry('{}')]]);
    expect(oversized.map((o) => [o.index, o.message])).toEqual([
      [
        1,
        `Heartbeat Digest sequence 7 part 2/3 (cluster prod) is ${putEventsEntrySize(huge)} bytes, over the 1000-byte PutEvents limit`,
      ],
      [
        3,
        `Pod Changed shop/web-0 (cluster prod) is ${putEventsEntrySize(pod)} bytes, over the 1000-byte PutEvents limit`,
      ],
    ]);
    expect(batchEntries([entry('not json'.repeat(200))], { maxBytes: 100 }).oversized[0]?.message).toMatch(
      /^Node Changed is \d+ bytes/,
    );
  });

  it('keeps every entry exactly once, in order, within both limits', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 300 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 50, max: 2000 }),
        (details, maxEntries, maxBytes) => {
          const entries = details.map((d) => entry(d));
          const { batches, oversized } = batchEntries(entries, { maxEntries, maxBytes });
          for (const batch of batches) {
            expect(batch.length).toBeGreaterThan(0);
            expect(batch.length).toBeLessThanOrEqual(maxEntries);
            expect(batch.reduce((n, e) => n + putEventsEntrySize(e), 0)).toBeLessThanOrEqual(maxBytes);
          }
          const sent = batches.flat();
          expect(sent.length + oversized.length).toBe(entries.length);
          expect(sent).toEqual(entries.filter((e) => putEventsEntrySize(e) <= maxBytes));
        },
      ),
    );
  });

  it('assumes 1,000,000 bytes per request, under the 1 MB limit whichever way it is read', () => {
    expect(PutEventsMaxBytes).toBe(1_000_000);
  });
});
