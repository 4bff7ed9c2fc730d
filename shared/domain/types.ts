// The Kubernetes objects as the controller reads them: trimmed to the fields upstream's
// NodeLifecycleController and taint eviction controller look at. Times are epoch milliseconds:
// the domain never reads a clock, every `now` is an argument (docs/architecture.md#layout,
// docs/contributing.md#layout).

/** Milliseconds since the Unix epoch. */
export type EpochMillis = number;
/** A duration in milliseconds. */
export type Millis = number;

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

/** core/v1 Taint. `timeAdded` is only set for NoExecute taints, as upstream does. */
export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: TaintEffect;
  readonly timeAdded?: EpochMillis;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** core/v1 NodeCondition. */
export interface NodeCondition {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason?: string;
  readonly message?: string;
  readonly lastHeartbeatTime?: EpochMillis;
  readonly lastTransitionTime?: EpochMillis;
}

/**
 * The node as the controller reads it (upstream reads the informer's copy of the whole object;
 * these are the fields any of its passes look at).
 */
export interface Node {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion?: string;
  readonly creationTimestamp: EpochMillis;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly unschedulable: boolean;
  readonly conditions: readonly NodeCondition[];
  /**
   * What the trimming cut or dropped to keep the copy within its bounds (shared/eventBounds.ts),
   * one note per field; absent when nothing was. No decision reads it: it is said in the Decisions trail.
   */
  readonly truncated?: readonly string[];
}

/** upstream v1.NamespaceNodeLease: where each kubelet renews its node's Lease. */
export const NamespaceNodeLease = 'kube-node-lease';

/**
 * The node Lease in `kube-node-lease`, reduced to what tryUpdateNodeHealth compares.
 * In this project the relay's Heartbeat Digest provides it: `renewTime` is the relay-clock
 * time it last observed the kubelet's probe (docs/events.md#heartbeat-digest), which only ever moves forward.
 */
export interface Lease {
  readonly renewTime: EpochMillis;
}

export type TolerationOperator = 'Exists' | 'Equal' | 'Lt' | 'Gt';

/** core/v1 Toleration. An empty/absent operator means Equal, an empty key or effect matches all. */
export interface Toleration {
  readonly key?: string;
  readonly operator?: TolerationOperator | '';
  readonly value?: string;
  readonly effect?: TaintEffect | '';
  /** Seconds; absent = tolerated forever; zero or negative = evict at once. */
  readonly tolerationSeconds?: number;
}

/** The pod as the controllers read it. */
export interface Pod {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** spec.nodeName; "" when not bound. */
  readonly nodeName: string;
  readonly tolerations: readonly Toleration[];
  /** Kind of the controlling owner reference (e.g. "DaemonSet"), if any. */
  readonly ownerKind?: string;
  /**
   * metadata.creationTimestamp (the API server's clock): the pod sweep tells by it which pods were bound
   * after their node stopped being Ready (shared/app/reconcilePods.ts). Absent from older events.
   */
  readonly creationTimestamp?: EpochMillis;
  readonly deletionTimestamp?: EpochMillis;
  readonly deletionGracePeriodSeconds?: number;
  /** Status of the pod's Ready condition; absent when the pod has no Ready condition. */
  readonly ready?: ConditionStatus;
  /** status.reason (legacy eviction sets "NodeLost"). */
  readonly statusReason?: string;
  /**
   * The reason of a True DisruptionTarget condition (taint eviction writes "DeletionByTaintManager"
   * before it deletes): in shadow mode it tells the cluster's own taint evictions from other deletions.
   */
  readonly disruptionTarget?: string;
}

/** Upstream ZoneState strings, verbatim. */
export type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

/** "namespace/name", the key upstream's taint eviction queue uses. */
export type PodKey = string;

export function podKey(pod: { readonly namespace: string; readonly name: string }): PodKey {
  return `${pod.namespace}/${pod.name}`;
}

/** Splits a PodKey at its first slash (namespaces cannot contain one). */
export function parsePodKey(key: PodKey): { readonly namespace: string; readonly name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** Finds a condition by type, as upstream's GetNodeCondition does. */
export function getNodeCondition(
  conditions: readonly NodeCondition[],
  type: string,
): NodeCondition | undefined {
  // A loop, not find(): every monitor pass asks this several times per node, and find() takes a new
  // closure each time.
  for (let i = 0; i < conditions.length; i++) {
    const condition = conditions[i];
    if (condition !== undefined && condition.type === type) return condition;
  }
  return undefined;
}

export const NodeReady = 'Ready';
export const NodeMemoryPressure = 'MemoryPressure';
export const NodeDiskPressure = 'DiskPressure';
export const NodePIDPressure = 'PIDPressure';
export const NodeNetworkUnavailable = 'NetworkUnavailable';
