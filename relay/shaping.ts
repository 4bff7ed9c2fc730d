// The relay's event shaping, pure: Kubernetes objects in, events out. No I/O, no clock (`now` is an
// argument), no SDK at runtime (client-node and EventBridge types only). The relay's informers call
// these functions and send what they return (DESIGN §1, §3; docs/events.md).
//
// - trimNode / trimPod / trimLease: the fields the controller reads, times as EpochMillis;
// - nodeChangeIsRelevant / podChangeIsRelevant: the watch filters (STYLE 3.3), and nodeChanged /
//   podChanged, which build the event for a relevant change;
// - the ProbeTracker (probeTracker.ts), which turns lease renewals and Ready heartbeats into Heartbeat
//   Digests, and toPutEventsEntries / batchEntries (putEvents.ts), PutEvents requests within AWS's
//   limits; both re-exported here, so the relay imports its shaping from one module.
import type { V1Lease, V1Node, V1NodeCondition, V1Pod, V1Taint, V1Toleration } from '@kubernetes/client-node';
import { podUpdated } from '../shared/domain/podStatus.js';
import { podUpdatedNeedsProcessing } from '../shared/domain/taintEviction.js';
import type {
  ConditionStatus,
  EpochMillis,
  Node,
  NodeCondition,
  Pod,
  Taint,
  TaintEffect,
  Toleration,
  TolerationOperator,
} from '../shared/domain/types.js';
import { MalformedObjectError } from '../shared/errors.js';
import { ControllerLabelKeys, type NodeChanged, type PodChanged } from '../shared/events.js';
import { parseWireTime } from '../shared/wireFormat.js';

export {
  buildDigest,
  forgetNode,
  newProbeTracker,
  observeLease,
  observeNodeStatus,
  type DigestIdentity,
  type ProbeObservation,
  type ProbeTracker,
  type TrackedNode,
} from './probeTracker.js';
export {
  batchEntries,
  PutEventsMaxBytes,
  PutEventsMaxEntries,
  putEventsEntrySize,
  toPutEventsEntries,
  type EntryBatches,
  type OversizedEntry,
} from './putEvents.js';

// ---------------------------------------------------------------------------------------------------
// Trimming

/**
 * A Kubernetes time as EpochMillis. client-node hands out `Date`s for objects it lists but the raw
 * JSON strings for objects from a watch (kubernetes-client/javascript#487), so both are accepted;
 * MicroTime's extra digits (lease renewTime) are truncated to the millisecond.
 */
export function kubeTimeToMillis(value: Date | string | null | undefined): EpochMillis | undefined {
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isFinite(ms) ? ms : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const m = /^([^.]*?)(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(value);
  if (m === null) return undefined;
  const fraction = (m[2] ?? '').slice(0, 3);
  return parseWireTime(`${m[1] ?? ''}${fraction === '' ? '' : `.${fraction}`}${m[3] ?? ''}`);
}

function required<T>(value: T | null | undefined, kind: string, field: string, name?: string): T {
  if (value === undefined || value === null) {
    throw new MalformedObjectError(`${kind}${name === undefined ? '' : ` ${name}`} has no ${field}`);
  }
  return value;
}

const conditionStatuses: readonly string[] = ['True', 'False', 'Unknown'];
const taintEffects: readonly string[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const tolerationOperators: readonly string[] = ['Exists', 'Equal', 'Lt', 'Gt', ''];

// Kubelets only post True/False/Unknown; anything else reads as Unknown, as a condition the controller
// cannot interpret.
function conditionStatus(status: string): ConditionStatus {
  return conditionStatuses.includes(status) ? (status as ConditionStatus) : 'Unknown';
}

function trimCondition(c: V1NodeCondition): NodeCondition {
  const lastHeartbeatTime = kubeTimeToMillis(c.lastHeartbeatTime);
  const lastTransitionTime = kubeTimeToMillis(c.lastTransitionTime);
  return {
    type: c.type,
    status: conditionStatus(c.status),
    ...(c.reason !== undefined && { reason: c.reason }),
    ...(c.message !== undefined && { message: c.message }),
    ...(lastHeartbeatTime !== undefined && { lastHeartbeatTime }),
    ...(lastTransitionTime !== undefined && { lastTransitionTime }),
  };
}

// The API server admits only the three effects; anything else could not match a toleration anyway.
function trimTaint(t: V1Taint): Taint[] {
  if (!taintEffects.includes(t.effect)) return [];
  const timeAdded = kubeTimeToMillis(t.timeAdded);
  return [
    {
      key: t.key,
      ...(t.value !== undefined && { value: t.value }),
      effect: t.effect as TaintEffect,
      ...(timeAdded !== undefined && { timeAdded }),
    },
  ];
}

/**
 * The node as the controller reads it: identity, the labels in ControllerLabelKeys, every condition
 * (all of them, since a status write sends the whole list back), taints and unschedulable. Images,
 * capacity, addresses and the rest are dropped, so their changes can never produce an event.
 * Throws MalformedObjectError when a field the API server always sets is missing.
 */
export function trimNode(v1: V1Node): Node {
  const meta = v1.metadata;
  const name = required(meta?.name, 'Node', 'metadata.name');
  const labels: Record<string, string> = {};
  for (const key of ControllerLabelKeys) {
    const value =
      meta?.labels !== undefined && Object.hasOwn(meta.labels, key) ? meta.labels[key] : undefined;
    if (value !== undefined) labels[key] = value;
  }
  return {
    name,
    uid: required(meta?.uid, 'Node', 'metadata.uid', name),
    ...(meta?.resourceVersion !== undefined && { resourceVersion: meta.resourceVersion }),
    creationTimestamp: required(
      kubeTimeToMillis(meta?.creationTimestamp),
      'Node',
      'metadata.creationTimestamp',
      name,
    ),
    labels,
    conditions: (v1.status?.conditions ?? []).map(trimCondition),
    taints: (v1.spec?.taints ?? []).flatMap(trimTaint),
    unschedulable: v1.spec?.unschedulable === true,
  };
}

// JSON numbers above 2^53 (tolerationSeconds is an int64) are clamped: 285 million years still means
// "tolerated for practically ever", and the wire carries only safe integers.
function safeInteger(n: number): number {
  return Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Math.trunc(n)));
}

// A toleration with an operator or effect the domain does not know never tolerates anything upstream
// (ToleratesTaint's default branch; taints only carry the three effects), so dropping it is the same.
function trimToleration(t: V1Toleration): Toleration[] {
  const operator = t.operator ?? undefined;
  const effect = t.effect ?? undefined;
  if (operator !== undefined && !tolerationOperators.includes(operator)) return [];
  if (effect !== undefined && effect !== '' && !taintEffects.includes(effect)) return [];
  return [
    {
      ...(t.key !== undefined && { key: t.key }),
      ...(operator !== undefined && { operator: operator as TolerationOperator | '' }),
      ...(t.value !== undefined && { value: t.value }),
      ...(effect !== undefined && { effect: effect as TaintEffect | '' }),
      ...(typeof t.tolerationSeconds === 'number' && { tolerationSeconds: safeInteger(t.tolerationSeconds) }),
    },
  ];
}

/**
 * The pod as the controllers read it. `ownerKind` is the kind of the controller owner reference
 * (`controller: true`, upstream metav1.GetControllerOf), `ready` the status of the Ready condition.
 */
export function trimPod(v1: V1Pod): Pod {
  const meta = v1.metadata;
  const name = required(meta?.name, 'Pod', 'metadata.name');
  const namespace = required(meta?.namespace, 'Pod', 'metadata.namespace', name);
  const ownerKind = meta?.ownerReferences?.find((ref) => ref.controller === true)?.kind;
  const deletionTimestamp = kubeTimeToMillis(meta?.deletionTimestamp);
  const grace = meta?.deletionGracePeriodSeconds;
  const ready = v1.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const statusReason = v1.status?.reason;
  return {
    namespace,
    name,
    uid: required(meta?.uid, 'Pod', 'metadata.uid', `${namespace}/${name}`),
    nodeName: v1.spec?.nodeName ?? '',
    tolerations: (v1.spec?.tolerations ?? []).flatMap(trimToleration),
    ...(ownerKind !== undefined && { ownerKind }),
    ...(deletionTimestamp !== undefined && { deletionTimestamp }),
    ...(typeof grace === 'number' && { deletionGracePeriodSeconds: Math.max(0, safeInteger(grace)) }),
    ...(ready !== undefined && { ready: conditionStatus(ready) }),
    ...(statusReason !== undefined && { statusReason }),
  };
}

/** A node Lease in kube-node-lease: the node it belongs to (same name) and its renewTime. */
export function trimLease(v1: V1Lease): { readonly nodeName: string; readonly renewTime?: EpochMillis } {
  const nodeName = required(v1.metadata?.name, 'Lease', 'metadata.name');
  const renewTime = kubeTimeToMillis(v1.spec?.renewTime);
  return renewTime === undefined ? { nodeName } : { nodeName, renewTime };
}

// ---------------------------------------------------------------------------------------------------
// Watch filters

// Go semantics: an absent string is "".
const str = (s: string | undefined): string => s ?? '';

function sameLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

function sameTaints(a: readonly Taint[], b: readonly Taint[]): boolean {
  return (
    a.length === b.length &&
    a.every((x, i) => {
      const y = b[i];
      return (
        y !== undefined &&
        x.key === y.key &&
        str(x.value) === str(y.value) &&
        x.effect === y.effect &&
        x.timeAdded === y.timeAdded
      );
    })
  );
}

// Every field but lastHeartbeatTime: a new heartbeat is a probe, which the digest carries.
function sameConditionsIgnoringHeartbeats(a: readonly NodeCondition[], b: readonly NodeCondition[]): boolean {
  return (
    a.length === b.length &&
    a.every((x, i) => {
      const y = b[i];
      return (
        y !== undefined &&
        x.type === y.type &&
        x.status === y.status &&
        str(x.reason) === str(y.reason) &&
        str(x.message) === str(y.message) &&
        x.lastTransitionTime === y.lastTransitionTime
      );
    })
  );
}

/**
 * Whether a node watch event must become a Node Changed event: an add, a delete, or a change of a
 * field the controller reads (the trimmed node, see trimNode). Not relevant: a change of any
 * condition's lastHeartbeatTime alone (the kubelet's status heartbeat is a probe, carried by the next
 * Heartbeat Digest), of resourceVersion alone, or of anything trimming drops.
 */
export function nodeChangeIsRelevant(old: Node | undefined, next: Node | undefined): boolean {
  if (old === undefined || next === undefined) return old !== next;
  return !(
    old.name === next.name &&
    old.uid === next.uid &&
    old.creationTimestamp === next.creationTimestamp &&
    old.unschedulable === next.unschedulable &&
    sameLabels(old.labels, next.labels) &&
    sameTaints(old.taints, next.taints) &&
    sameConditionsIgnoringHeartbeats(old.conditions, next.conditions)
  );
}

const isBound = (pod: Pod | undefined): boolean => pod !== undefined && pod.nodeName !== '';

/**
 * Whether a pod watch event must become a Pod Changed event: the union of what the consumers react to.
 * - the NodeLifecycleController's pod filter (podUpdated): a bound pod that is new or moved node;
 * - the taint eviction controller's PodUpdated filter: any add or delete, or an update that changes
 *   the tolerations or the node (this already contains the first rule; both are kept so each consumer's
 *   upstream rule stays visible);
 * - deletionTimestamp newly set: the pod store must know a pod is terminating, because both eviction
 *   paths skip terminating pods (legacy DeletePods) and a Ready=False write to them is wasted.
 * Pods bound to no node, before and after, are dropped: both upstream handlers return early for them.
 * A change of `ready` or `statusReason` alone is not sent: the passes that act on them list the node's
 * pods from the API server.
 */
export function podChangeIsRelevant(old: Pod | undefined, next: Pod | undefined): boolean {
  if (!isBound(old) && !isBound(next)) return false;
  const deletionNewlySet = old?.deletionTimestamp === undefined && next?.deletionTimestamp !== undefined;
  return podUpdated(old, next) || podUpdatedNeedsProcessing(old, next) || deletionNewlySet;
}

function changeType(old: unknown, next: unknown): 'ADDED' | 'MODIFIED' | 'DELETED' {
  return old === undefined ? 'ADDED' : next === undefined ? 'DELETED' : 'MODIFIED';
}

/**
 * The Node Changed detail for a watch event (`old` undefined: added; `next` undefined: deleted, and
 * the event carries the last state), or undefined when the change is not relevant.
 */
export function nodeChanged(
  cluster: string,
  old: Node | undefined,
  next: Node | undefined,
): NodeChanged | undefined {
  const node = next ?? old;
  if (node === undefined || !nodeChangeIsRelevant(old, next)) return undefined;
  return { schemaVersion: 1, cluster, type: changeType(old, next), node };
}

/** The Pod Changed detail for a watch event, or undefined when not relevant; `oldNodeName` on a rebind. */
export function podChanged(
  cluster: string,
  old: Pod | undefined,
  next: Pod | undefined,
): PodChanged | undefined {
  const pod = next ?? old;
  if (pod === undefined || !podChangeIsRelevant(old, next)) return undefined;
  const rebound =
    old !== undefined && next !== undefined && old.nodeName !== '' && old.nodeName !== next.nodeName;
  return {
    schemaVersion: 1,
    cluster,
    type: changeType(old, next),
    pod,
    ...(rebound && { oldNodeName: old.nodeName }),
  };
}
