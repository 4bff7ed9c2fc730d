// Pods as the simulated cluster makes them: the manifest a user or the DaemonSet controller submits,
// and the status the kubelet reports once the pod runs (pkg/kubelet/kubelet_pods.go
// generateAPIPodStatus: phase Running, PodReadyToStartContainers, Initialized, Ready, ContainersReady
// and PodScheduled True, one running container status per container).
import type {
  V1DaemonSet,
  V1OwnerReference,
  V1Pod,
  V1PodCondition,
  V1PodStatus,
  V1Toleration,
} from '@kubernetes/client-node';
import { addOrUpdateDaemonPodTolerations } from '../../shared/domain/daemonSetTolerations.js';
import type { EpochMillis, Toleration } from '../../shared/domain/types.js';
import type { Wire } from '../apiserver/index.js';
import { formatTime } from '../apiserver/timestamps.js';

/** The image every simulated container runs. */
export const simulatedImage = 'registry.k8s.io/pause:3.10';
/** The DaemonSet pods belong to when `daemonSet: true` names none. */
export const defaultDaemonSetName = 'simulated-daemonset';
/** The label a simulated DaemonSet selects its pods by. */
export const LabelAppName = 'app.kubernetes.io/name';

/** A pod of the simulated cluster (docs/simulate.md `pods[]`). */
export interface SimulatedPod {
  readonly name: string;
  /** "default" when absent. */
  readonly namespace?: string;
  /** The node it is bound to. */
  readonly node: string;
  /** In the order given; matched in that order. */
  readonly tolerations?: readonly Toleration[];
  /**
   * Whether DefaultTolerationSeconds admission applies (true by default, as on a real API server).
   * False writes the pod as given, bypassing admission.
   */
  readonly defaultTolerations?: boolean;
  /** Owned by a DaemonSet (true: the default one; a string: that DaemonSet's name). */
  readonly daemonSet?: boolean | string;
  readonly hostNetwork?: boolean;
  readonly labels?: Readonly<Record<string, string>>;
}

export function podNamespace(pod: Pick<SimulatedPod, 'namespace'>): string {
  return pod.namespace ?? 'default';
}

/** The DaemonSet's name for a DaemonSet pod, undefined for others. */
export function daemonSetNameOf(pod: Pick<SimulatedPod, 'daemonSet'>): string | undefined {
  if (pod.daemonSet === undefined || pod.daemonSet === false) return undefined;
  return pod.daemonSet === true ? defaultDaemonSetName : pod.daemonSet;
}

function tolerationJson(toleration: Toleration): Wire<V1Toleration> {
  return {
    ...(toleration.key !== undefined && { key: toleration.key }),
    ...(toleration.operator !== undefined && { operator: toleration.operator }),
    ...(toleration.value !== undefined && { value: toleration.value }),
    ...(toleration.effect !== undefined && { effect: toleration.effect }),
    ...(toleration.tolerationSeconds !== undefined && { tolerationSeconds: toleration.tolerationSeconds }),
  };
}

/** A minimal DaemonSet whose selector matches the pods `podManifest` gives it. */
export function daemonSetManifest(name: string, namespace: string, hostNetwork: boolean): Wire<V1DaemonSet> {
  const labels = { [LabelAppName]: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: 'agent', image: simulatedImage }],
          ...(hostNetwork && { hostNetwork: true }),
        },
      },
    },
  };
}

/**
 * The pod as submitted: bound to its node (spec.nodeName set, as the scheduler's binding would), with
 * its tolerations; a DaemonSet pod is owned by `owner` and carries the DaemonSet controller's
 * tolerations after its own (AddOrUpdateDaemonPodTolerations on the template).
 */
export function podManifest(
  pod: SimulatedPod,
  owner?: { readonly name: string; readonly uid: string },
): Wire<V1Pod> {
  const namespace = podNamespace(pod);
  const own = pod.tolerations ?? [];
  const tolerations =
    owner === undefined
      ? own
      : addOrUpdateDaemonPodTolerations(own, { hostNetwork: pod.hostNetwork === true });
  const ownerReferences: Wire<V1OwnerReference>[] =
    owner === undefined
      ? []
      : [
          {
            apiVersion: 'apps/v1',
            kind: 'DaemonSet',
            name: owner.name,
            uid: owner.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ];
  const labels = { ...(owner !== undefined && { [LabelAppName]: owner.name }), ...pod.labels };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: pod.name,
      namespace,
      ...(Object.keys(labels).length > 0 && { labels }),
      ...(ownerReferences.length > 0 && { ownerReferences }),
    },
    spec: {
      nodeName: pod.node,
      containers: [{ name: 'app', image: simulatedImage }],
      ...(pod.hostNetwork === true && { hostNetwork: true }),
      ...(tolerations.length > 0 && { tolerations: tolerations.map(tolerationJson) }),
    },
  };
}

/** The kubelet's pod conditions, in its order, and the scheduler's PodScheduled. */
const runningConditionTypes = [
  'PodReadyToStartContainers',
  'Initialized',
  'Ready',
  'ContainersReady',
  'PodScheduled',
] as const;

/**
 * Verdicts of isRunningAndReady on the API simulator's stored statuses, which never change (they are
 * frozen; a new status is a new object): every kubelet asks about each of its pods every 10 s, and V8
 * walks a frozen list several times slower than a plain one.
 */
const runningAndReady = new WeakMap<object, boolean>();

/** Whether the pod already reports what a running kubelet reports: phase Running and Ready=True. */
export function isRunningAndReady(pod: Wire<V1Pod>): boolean {
  const status = pod.status;
  if (status === undefined) return false;
  if (!Object.isFrozen(status)) return reportsRunningAndReady(status);
  let verdict = runningAndReady.get(status);
  if (verdict === undefined) {
    verdict = reportsRunningAndReady(status);
    runningAndReady.set(status, verdict);
  }
  return verdict;
}

function reportsRunningAndReady(status: Wire<V1PodStatus>): boolean {
  if (status.phase !== 'Running') return false;
  const conditions = status.conditions ?? [];
  for (let i = 0; i < conditions.length; i++) {
    const condition = conditions[i];
    if (condition?.type === 'Ready') return condition.status === 'True';
  }
  return false;
}

export interface PodAddresses {
  readonly hostIP: string;
  readonly podIP: string;
}

/**
 * The status a running kubelet reports for a pod whose containers all run and are ready. Conditions
 * keep their lastTransitionTime when already True; startTime and container start times are kept once set.
 */
export function runningPodStatus(
  pod: Wire<V1Pod>,
  addresses: PodAddresses,
  now: EpochMillis,
): Wire<V1PodStatus> {
  const time = formatTime(now);
  const current = pod.status ?? {};
  const previous = current.conditions ?? [];
  const conditions: Wire<V1PodCondition>[] = runningConditionTypes.map((type) => {
    const existing = previous.find((c) => c.type === type);
    return {
      type,
      status: 'True',
      lastTransitionTime: existing?.status === 'True' ? (existing.lastTransitionTime ?? time) : time,
    };
  });
  const startTime = current.startTime ?? time;
  const podIP = pod.spec?.hostNetwork === true ? addresses.hostIP : addresses.podIP;
  const uid = (pod.metadata?.uid ?? '').replaceAll('-', '');
  const containerStatuses = (pod.spec?.containers ?? []).map((container, i) => {
    const existing = current.containerStatuses?.find((s) => s.name === container.name);
    return {
      name: container.name,
      image: container.image ?? simulatedImage,
      imageID: '',
      containerID: `containerd://${uid}${String(i).padStart(2, '0')}`,
      ready: true,
      started: true,
      restartCount: existing?.restartCount ?? 0,
      state: { running: { startedAt: existing?.state?.running?.startedAt ?? startTime } },
    };
  });
  return {
    ...current,
    phase: 'Running',
    conditions: [
      ...conditions,
      ...previous.filter((c) => !(runningConditionTypes as readonly string[]).includes(c.type)),
    ],
    hostIP: addresses.hostIP,
    hostIPs: [{ ip: addresses.hostIP }],
    podIP,
    podIPs: [{ ip: podIP }],
    startTime,
    containerStatuses,
  };
}
