// What a kubelet writes about its node, as upstream's kubelet writes it:
// - registration (pkg/kubelet/kubelet_node_status.go initialNode): name, the well-known labels, the
//   --register-with-taints taints, spec.unschedulable (--register-schedulable=false);
// - the condition setters (pkg/kubelet/nodestatus/setters.go MemoryPressureCondition,
//   DiskPressureCondition, PIDPressureCondition, ReadyCondition), in the order kubelet runs them;
// - nodeConditionsHaveChanged (kubelet_node_status.go): whether a status differs from the node's
//   ignoring heartbeats, which with the 5-minute report frequency decides whether to post;
// - the node Lease (staging/src/k8s.io/component-helpers/apimachinery/lease/controller.go newLease,
//   plus the kubelet's setNodeOwnerFunc owner reference).
// Deviation: initialNode already runs the status setters, so a real kubelet registers with conditions
// (typically Ready=False until its runtime is up); as issue #3 asks, the node is registered without
// conditions and the first status post, at the same instant, adds them.
import type {
  V1Lease,
  V1Node,
  V1NodeCondition,
  V1NodeStatus,
  V1OwnerReference,
  V1Taint,
} from '@kubernetes/client-node';
import { LabelArch, LabelArchStable, LabelOS, LabelOSStable } from '../../shared/domain/nodeLabels.js';
import {
  type ConditionStatus,
  type EpochMillis,
  type Millis,
  NodeDiskPressure,
  NodeMemoryPressure,
  NodePIDPressure,
  NodeReady,
  type Taint,
} from '../../shared/domain/types.js';
import { LabelTopologyRegion, LabelTopologyZone } from '../../shared/domain/zones.js';
import type { Wire } from '../apiserver/index.js';
import { defaultVersion } from '../apiserver/discovery.js';
import { formatMicroTime, formatTime } from '../apiserver/timestamps.js';

/** KubeletConfiguration nodeStatusUpdateFrequency: how often the kubelet computes node status. */
export const nodeStatusUpdateFrequency: Millis = 10_000;
/** KubeletConfiguration nodeStatusReportFrequency: post unchanged status at least this often. */
export const nodeStatusReportFrequency: Millis = 300_000;
/** KubeletConfiguration nodeLeaseDurationSeconds. */
export const nodeLeaseDurationSeconds = 40;
/** kubelet's nodeLeaseRenewIntervalFraction: renew every 0.25 × 40 s = 10 s. */
export const nodeLeaseRenewIntervalFraction = 0.25;
/** v1.NamespaceNodeLease. */
export const NamespaceNodeLease = 'kube-node-lease';
/** v1.LabelHostname. */
export const LabelHostname = 'kubernetes.io/hostname';

/** The conditions the kubelet's setters own, in the order it sets them (Ready last, upstream #16961). */
export const kubeletConditionTypes = [
  NodeMemoryPressure,
  NodeDiskPressure,
  NodePIDPressure,
  NodeReady,
] as const;
export type KubeletConditionType = (typeof kubeletConditionTypes)[number];

export function isKubeletCondition(type: string): type is KubeletConditionType {
  return (kubeletConditionTypes as readonly string[]).includes(type);
}

/** What the kubelet reports for one condition. */
export interface ReportedCondition {
  readonly status: ConditionStatus;
  readonly reason?: string;
  readonly message?: string;
}

type ReasonTable = Readonly<Partial<Record<ConditionStatus, { reason: string; message: string }>>>;

/** The setters' reasons and messages, verbatim. */
const kubeletReasons: Readonly<Record<KubeletConditionType, ReasonTable>> = {
  MemoryPressure: {
    False: { reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
    True: { reason: 'KubeletHasInsufficientMemory', message: 'kubelet has insufficient memory available' },
  },
  DiskPressure: {
    False: { reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
    True: { reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure' },
  },
  PIDPressure: {
    False: { reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
    True: { reason: 'KubeletHasInsufficientPID', message: 'kubelet has insufficient PID available' },
  },
  Ready: {
    True: { reason: 'KubeletReady', message: 'kubelet is posting ready status' },
    // ReadyCondition joins the runtime's errors; this is kubelet's runtimeState error for a dead runtime.
    False: { reason: 'KubeletNotReady', message: 'container runtime is down' },
  },
};

/** A healthy kubelet's view: Ready=True and no pressure. */
export function healthyStatus(type: KubeletConditionType): ConditionStatus {
  return type === NodeReady ? 'True' : 'False';
}

/**
 * The condition as the kubelet would report it: the given reason and message, else the setter's own
 * for that status (none for Unknown, which a kubelet never reports by itself).
 */
export function reportedCondition(
  type: string,
  status: ConditionStatus,
  reason?: string,
  message?: string,
): ReportedCondition {
  const defaults = isKubeletCondition(type) ? kubeletReasons[type][status] : undefined;
  const finalReason = reason ?? defaults?.reason;
  // The setter's message goes with the setter's reason only.
  const finalMessage = message ?? (finalReason === defaults?.reason ? defaults?.message : undefined);
  return {
    status,
    ...(finalReason !== undefined && { reason: finalReason }),
    ...(finalMessage !== undefined && { message: finalMessage }),
  };
}

/** A node condition as JSON. */
export type WireCondition = Wire<V1NodeCondition>;

function conditionJson(
  type: string,
  reported: ReportedCondition,
  heartbeat: string,
  transition: string,
): WireCondition {
  return {
    type,
    status: reported.status,
    lastHeartbeatTime: heartbeat,
    lastTransitionTime: transition,
    ...(reported.reason !== undefined && { reason: reported.reason }),
    ...(reported.message !== undefined && { message: reported.message }),
  };
}

/**
 * One condition set as a setter does it: heartbeat now; transition time kept while the status stays,
 * now when it changes or the condition is new (appended). Other conditions are left as they are.
 */
export function setCondition(
  conditions: readonly WireCondition[],
  type: string,
  reported: ReportedCondition,
  now: EpochMillis,
): WireCondition[] {
  const next = [...conditions];
  setConditionIn(next, type, reported, formatTime(now));
  return next;
}

/** setCondition on a list of the caller's own, in place; `time` is now as metav1.Time text. */
function setConditionIn(
  conditions: WireCondition[],
  type: string,
  reported: ReportedCondition,
  time: string,
): void {
  const index = conditions.findIndex((c) => c.type === type);
  const existing = conditions[index];
  if (existing === undefined) {
    conditions.push(conditionJson(type, reported, time, time));
    return;
  }
  const transition = existing.status === reported.status ? (existing.lastTransitionTime ?? time) : time;
  conditions[index] = conditionJson(type, reported, time, transition);
}

/** The kubelet's setters over the node's current conditions, in upstream order. */
export function setNodeConditions(
  conditions: readonly WireCondition[],
  reported: (type: KubeletConditionType) => ReportedCondition,
  now: EpochMillis,
): WireCondition[] {
  // Every kubelet runs this every 10 s: one copy of the list and one time text for all four setters.
  const next = [...conditions];
  const time = formatTime(now);
  for (const type of kubeletConditionTypes) setConditionIn(next, type, reported(type), time);
  return next;
}

/**
 * Upstream nodeConditionsHaveChanged: a different number of conditions, or any condition (matched by
 * type) different in anything but lastHeartbeatTime.
 */
export function nodeConditionsHaveChanged(
  original: readonly WireCondition[],
  conditions: readonly WireCondition[],
): boolean {
  if (original.length !== conditions.length) return true;
  // Every kubelet compares every 10 s, the new list made from the old one (same types in the same
  // order): a stable sort then pairs the same positions, so compare them as they are, without sorting.
  const sameOrder = original.every((c, i) => c.type === conditions[i]?.type);
  const a = sameOrder ? original : sortedByType(original);
  const b = sameOrder ? conditions : sortedByType(conditions);
  return a.some((x, i) => {
    const y = b[i];
    return (
      y === undefined ||
      x.type !== y.type ||
      x.status !== y.status ||
      (x.reason ?? '') !== (y.reason ?? '') ||
      (x.message ?? '') !== (y.message ?? '') ||
      (x.lastTransitionTime ?? '') !== (y.lastTransitionTime ?? '')
    );
  });
}

function sortedByType(list: readonly WireCondition[]): WireCondition[] {
  return [...list].sort(compareType);
}

function compareType(a: WireCondition, b: WireCondition): number {
  return a.type < b.type ? -1 : a.type > b.type ? 1 : 0;
}

/** Where and what a node is: the fields registration writes. */
export interface NodeRegistration {
  readonly name: string;
  /** topology.kubernetes.io/zone (the cloud provider's label). */
  readonly zone?: string;
  /** topology.kubernetes.io/region. */
  readonly region?: string;
  /** Extra labels (--node-labels); they win over the well-known ones. */
  readonly labels?: Readonly<Record<string, string>>;
  /** --register-with-taints. */
  readonly taints?: readonly Taint[];
  /** --register-schedulable=false. */
  readonly unschedulable?: boolean;
  /** GOARCH of the node ("amd64" by default). */
  readonly arch?: string;
}

export function taintJson(taint: Taint): Wire<V1Taint> {
  return {
    key: taint.key,
    effect: taint.effect,
    ...(taint.value !== undefined && { value: taint.value }),
    ...(taint.timeAdded !== undefined && { timeAdded: formatTime(taint.timeAdded) }),
  };
}

/** The labels initialNode sets (hostname, os and arch, stable and beta) plus the zone labels. */
export function nodeLabels(registration: NodeRegistration): Record<string, string> {
  const arch = registration.arch ?? 'amd64';
  return {
    [LabelHostname]: registration.name,
    [LabelOSStable]: 'linux',
    [LabelArchStable]: arch,
    [LabelOS]: 'linux',
    [LabelArch]: arch,
    ...(registration.zone !== undefined && { [LabelTopologyZone]: registration.zone }),
    ...(registration.region !== undefined && { [LabelTopologyRegion]: registration.region }),
    ...registration.labels,
  };
}

/** The node's machine facts (what `kubectl get nodes -o wide` shows), without conditions. */
export function machineStatus(registration: NodeRegistration, internalIP: string): Wire<V1NodeStatus> {
  const resources = { cpu: '4', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' };
  return {
    addresses: [
      { type: 'InternalIP', address: internalIP },
      { type: 'Hostname', address: registration.name },
    ],
    capacity: resources,
    allocatable: resources,
    nodeInfo: {
      architecture: registration.arch ?? 'amd64',
      bootID: '',
      containerRuntimeVersion: 'containerd://2.0.0',
      kernelVersion: '6.1.0',
      kubeProxyVersion: '',
      kubeletVersion: defaultVersion.gitVersion,
      machineID: '',
      operatingSystem: 'linux',
      osImage: 'nlc simulated node',
      systemUUID: '',
    },
  };
}

/** The Node a kubelet registers: labels, taints, unschedulable, machine facts, no conditions. */
export function registrationNode(registration: NodeRegistration, internalIP: string): Wire<V1Node> {
  const taints = registration.taints ?? [];
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: registration.name, labels: nodeLabels(registration) },
    spec: {
      ...(taints.length > 0 && { taints: taints.map(taintJson) }),
      ...(registration.unschedulable === true && { unschedulable: true }),
    },
    status: machineStatus(registration, internalIP),
  };
}

/** The owner reference a node Lease carries (the kubelet's setNodeOwnerFunc). */
export function nodeOwner(nodeName: string, nodeUid: string): Wire<V1OwnerReference>[] {
  return [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid }];
}

/**
 * The node's Lease as the kubelet's lease controller creates it: holder and duration, renewTime now,
 * owned by the Node (so the garbage collector removes it with the node).
 */
export function newNodeLease(
  nodeName: string,
  nodeUid: string | undefined,
  leaseDurationSeconds: number,
  now: EpochMillis,
): Wire<V1Lease> {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: nodeName,
      namespace: NamespaceNodeLease,
      ...(nodeUid !== undefined && { ownerReferences: nodeOwner(nodeName, nodeUid) }),
    },
    spec: {
      holderIdentity: nodeName,
      leaseDurationSeconds,
      renewTime: formatMicroTime(now),
    },
  };
}
