// The relay's event shaping, pure: Kubernetes objects in, events out. No I/O, no clock (`now` is an
// argument), no SDK at runtime (client-node and EventBridge types only; zod to read objects). The
// relay's informers call these functions and send what they return (docs/architecture.md#relay,
// docs/events.md).
//
// - nodeFromV1 / podFromV1 (shared/adapters/kubernetes/mapping.ts, re-exported) and trimLease: the
//   fields the controller reads, times as EpochMillis;
// - nodeChangeIsRelevant / podChangeIsRelevant: the watch filters (docs/contributing.md#table-tests), and
//   nodeChanged / podChanged, which build the event for a relevant change;
// - the ProbeTracker (probeTracker.ts), which turns lease renewals and Ready heartbeats into Heartbeat
//   Digests, and toPutEventsEntries / batchEntries (shared/adapters/eventbridge/putEvents.ts, where
//   the EventBridge sink uses them), PutEvents requests within AWS's limits; all re-exported here, so
//   the relay imports its shaping from one module.
import { getNoExecuteTaints } from '../shared/domain/taints.js';
import type { V1Lease } from '@kubernetes/client-node';
import { kubeTimeToMillis } from '../shared/adapters/kubernetes/mapping.js';
import { podUpdated } from '../shared/domain/podStatus.js';
import { podUpdatedNeedsProcessing } from '../shared/domain/taintEviction.js';
import type {
  ConditionStatus,
  EpochMillis,
  Node,
  NodeCondition,
  Pod,
  Taint,
} from '../shared/domain/types.js';
import { MalformedObjectError } from '../shared/errors.js';
import type { NodeChanged, PodChanged } from '../shared/events.js';

export {
  kubeTimeToMillis,
  nodeFromV1,
  podFromV1,
  type Mapped,
} from '../shared/adapters/kubernetes/mapping.js';
export {
  buildDigest,
  digestUrgency,
  forgetNode,
  newProbeTracker,
  observeLease,
  observeNodeStatus,
  type DigestIdentity,
  type DigestUrgency,
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
} from '../shared/adapters/eventbridge/putEvents.js';

// ---------------------------------------------------------------------------------------------------
// Trimming: nodes and pods are read by the conversion the cluster adapter uses too
// (shared/adapters/kubernetes/mapping.ts nodeFromV1 / podFromV1); leases only the relay reads.

function required<T>(value: T | null | undefined, kind: string, field: string): T {
  if (value === undefined || value === null) throw new MalformedObjectError(`${kind} has no ${field}`);
  return value;
}

/**
 * A node Lease in kube-node-lease: the node it belongs to (same name), its renewTime, and its
 * resourceVersion (the digest's leaseVersions, for the functions' lease circuit breaker).
 */
export function trimLease(v1: V1Lease): {
  readonly nodeName: string;
  readonly renewTime?: EpochMillis;
  readonly resourceVersion?: string;
} {
  const nodeName = required(v1.metadata?.name, 'Lease', 'metadata.name');
  const renewTime = kubeTimeToMillis(v1.spec?.renewTime);
  const resourceVersion = v1.metadata?.resourceVersion;
  return {
    nodeName,
    ...(renewTime !== undefined && { renewTime }),
    ...(resourceVersion !== undefined && resourceVersion !== '' && { resourceVersion }),
  };
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

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

// Every field but lastHeartbeatTime: a new heartbeat is a probe, which the digest carries. A message or
// reason cut to its bound (mapping.ts) compares as cut: a change past the cut shows only when it changes
// the length the marker states. Nothing is lost by that: no decision reads a message, the copy the
// event would carry is the same, and no write sends a cut text back.
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
 * field the controller reads (the trimmed node, see nodeFromV1) or of what its bounds cut. Not
 * relevant: a change of any condition's lastHeartbeatTime alone (the kubelet's status heartbeat is a
 * probe, carried by the next Heartbeat Digest), of resourceVersion alone, or of anything trimming drops.
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
    sameConditionsIgnoringHeartbeats(old.conditions, next.conditions) &&
    // What was cut changes the trail: a node newly over a bound is a change, even when what is kept is not.
    sameStrings(old.truncated ?? [], next.truncated ?? [])
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
 * - Ready newly False on a node known not to be Ready (`nodeReady`, the relay's copy of the node's Ready
 *   status; none known by default): what upstream's MarkPodsNotReady does, so a shadow can record the cluster's own controller
 *   doing it (`nlc agreement`). A healthy node's pods flapping readiness are not sent.
 * Pods bound to no node, before and after, are dropped: both upstream handlers return early for them.
 * Any other change of `ready` or `statusReason` alone is not sent: the passes that act on them list the
 * node's pods from the API server.
 */
export function podChangeIsRelevant(
  old: Pod | undefined,
  next: Pod | undefined,
  nodeReady: (node: string) => ConditionStatus | undefined = () => undefined,
): boolean {
  if (!isBound(old) && !isBound(next)) return false;
  const deletionNewlySet = old?.deletionTimestamp === undefined && next?.deletionTimestamp !== undefined;
  const nodeIs = next === undefined ? undefined : nodeReady(next.nodeName);
  const markedNotReady =
    old?.ready === 'True' && next?.ready === 'False' && nodeIs !== undefined && nodeIs !== 'True';
  return podUpdated(old, next) || podUpdatedNeedsProcessing(old, next) || deletionNewlySet || markedNotReady;
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
  const type = changeType(old, next);
  return {
    schemaVersion: 1,
    cluster,
    type,
    node,
    ...(type === 'MODIFIED' && old !== undefined && { oldNoExecuteTaints: getNoExecuteTaints(old.taints) }),
  };
}

/**
 * The Pod Changed detail for a watch event, or undefined when not relevant; `oldNodeName` on a rebind;
 * on an update, the old tolerations, Ready status and deletionTimestamp.
 */
export function podChanged(
  cluster: string,
  old: Pod | undefined,
  next: Pod | undefined,
  nodeReady?: (node: string) => ConditionStatus | undefined,
): PodChanged | undefined {
  const pod = next ?? old;
  if (pod === undefined || !podChangeIsRelevant(old, next, nodeReady)) return undefined;
  const readyLost = old?.ready === 'True' && next?.ready === 'False';
  const nodeIs = readyLost && nodeReady !== undefined ? nodeReady(pod.nodeName) : undefined;
  const rebound =
    old !== undefined && next !== undefined && old.nodeName !== '' && old.nodeName !== next.nodeName;
  const type = changeType(old, next);
  return {
    schemaVersion: 1,
    cluster,
    type,
    pod,
    ...(rebound && { oldNodeName: old.nodeName }),
    ...(type === 'MODIFIED' &&
      old !== undefined && {
        oldTolerations: old.tolerations,
        ...(old.ready !== undefined && { oldReady: old.ready }),
        ...(old.deletionTimestamp !== undefined && { oldDeletionTimestamp: old.deletionTimestamp }),
        ...(nodeIs !== undefined && { nodeReady: nodeIs }),
      }),
  };
}
