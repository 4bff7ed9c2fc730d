// Kubernetes objects as the API server returns them (through client-node: Dates for listed objects,
// raw strings for watched ones), with everything the controller does not read, and the trimmed node
// the shared conversion (shared/adapters/kubernetes/mapping.ts) makes of them.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { nodeFromV1, podFromV1 } from '../../shared/adapters/kubernetes/mapping.js';
import type { Node, Pod } from '../../shared/domain/types.js';

export const at = (iso: string): number => Date.parse(iso);

/**
 * Informers hand out parsed JSON (or, for listed objects, deserialized models), never objects built
 * with the model classes' constructors; fixtures are plain objects typed as the client's models.
 */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- a typed view of plain JSON is the point
export function fromJson<T>(json: object): T {
  return json as T;
}

export interface NodeExtras {
  readonly resourceVersion?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly images?: string[];
  readonly cpu?: string;
}

// A node as the API server returns it, with everything the controller does not read.
export function v1Node(times: (iso: string) => Date | string, extras: NodeExtras = {}): V1Node {
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

export const trimmedNode: Node = {
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

export function v1Pod(overrides: object = {}): V1Pod {
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

/** nodeFromV1 for a fixture that must convert. */
export function mustNode(v1: unknown): Node {
  const mapped = nodeFromV1(v1);
  if (!mapped.ok) throw new Error(mapped.message);
  return mapped.value;
}

/** podFromV1 for a fixture that must convert. */
export function mustPod(v1: unknown): Pod {
  const mapped = podFromV1(v1);
  if (!mapped.ok) throw new Error(mapped.message);
  return mapped.value;
}
