// The Kubernetes Events upstream records, with their reasons and messages verbatim (docs/upstream.md#events):
// - RecordNodeEvent / RecordNodeStatusChange / MarkPodsNotReady / DeletePods
//   (pkg/controller/util/node/controller_utils.go), recorded by the NLC as `node-controller`;
// - emitPodDeletionEvent / emitCancelPodDeletionEvent (pkg/controller/tainteviction/taint_eviction.go),
//   recorded as `taint-eviction-controller`.
// What differs: these build values instead of calling an EventRecorder. Every involved object is a
// core/v1 object, so the adapter sets apiVersion "v1"; it records an Event only after the write it
// reports succeeded. Event aggregation/counting (the recorder's Count) is the adapter's business.
import type { Node, Pod } from './types.js';

/** Upstream Event reasons, verbatim. */
export const EventReason = {
  RegisteredNode: 'RegisteredNode',
  RemovingNode: 'RemovingNode',
  NodeNotReady: 'NodeNotReady',
  DeletingAllPods: 'DeletingAllPods',
  NodeControllerEviction: 'NodeControllerEviction',
  TaintManagerEviction: 'TaintManagerEviction',
} as const;
export type EventReason = (typeof EventReason)[keyof typeof EventReason];

/** v1.EventTypeNormal / v1.EventTypeWarning. */
export type KubeEventType = 'Normal' | 'Warning';

/** EventSource.Component of the NLC's recorder. */
export const NodeControllerSource = 'node-controller';
/** EventSource.Component of the taint eviction controller's recorder (pre-1.29: `taint-controller`). */
export const TaintEvictionControllerSource = 'taint-eviction-controller';
/** The component by minor: upstreamBehaviour(version).taintEvictionEventSource. */
export type TaintEvictionSource = typeof TaintEvictionControllerSource | 'taint-controller';

export interface KubeEvent {
  readonly involvedObject: {
    readonly kind: 'Node' | 'Pod';
    readonly name: string;
    /** Absent for Nodes (cluster-scoped). */
    readonly namespace?: string;
    /** Absent where upstream's ObjectReference has no UID (the taint eviction controller's pod refs). */
    readonly uid?: string;
  };
  readonly type: KubeEventType;
  readonly reason: EventReason;
  readonly message: string;
  readonly source: string;
}

type NodeRef = Pick<Node, 'name' | 'uid'>;
type PodObject = Pick<Pod, 'namespace' | 'name' | 'uid'>;
type PodRef = Pick<Pod, 'namespace' | 'name'>;

// Upstream RecordNodeEvent: the ref carries the node UID (TestNodeEventGeneration asserts it) and
// the message is always "Node <name> event: <event>".
function nodeEvent(node: NodeRef, reason: EventReason, event: string): KubeEvent {
  return {
    involvedObject: { kind: 'Node', name: node.name, uid: node.uid },
    type: 'Normal',
    reason,
    message: `Node ${node.name} event: ${event}`,
    source: NodeControllerSource,
  };
}

/** monitorNodeHealth, a node seen for the first time. */
export function registeredNodeEvent(node: NodeRef): KubeEvent {
  return nodeEvent(node, EventReason.RegisteredNode, `Registered Node ${node.name} in Controller`);
}

/** monitorNodeHealth, a known node gone from the lister. */
export function removingNodeEvent(node: NodeRef): KubeEvent {
  return nodeEvent(node, EventReason.RemovingNode, `Removing Node ${node.name} from Controller`);
}

/** Legacy (≤ v1.26) DeletePods, once per node eviction. */
export function deletingAllPodsEvent(node: NodeRef): KubeEvent {
  return nodeEvent(node, EventReason.DeletingAllPods, `Deleting all Pods from Node ${node.name}.`);
}

/** Upstream RecordNodeStatusChange(node, "NodeNotReady"): the Ready True → non-True transition. */
export function nodeNotReadyEvent(node: NodeRef): KubeEvent {
  return {
    involvedObject: { kind: 'Node', name: node.name, uid: node.uid },
    type: 'Normal',
    reason: EventReason.NodeNotReady,
    message: `Node ${node.name} status is now: ${EventReason.NodeNotReady}`,
    source: NodeControllerSource,
  };
}

/** MarkPodsNotReady, on each pod whose Ready condition it flips. A Warning, unlike the others. */
export function podNodeNotReadyEvent(pod: PodObject): KubeEvent {
  return {
    involvedObject: { kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid },
    type: 'Warning',
    reason: EventReason.NodeNotReady,
    message: 'Node is not ready',
    source: NodeControllerSource,
  };
}

/** Legacy (≤ v1.26) DeletePods, on each pod it deletes. */
export function nodeControllerEvictionEvent(pod: PodObject, nodeName: string): KubeEvent {
  return {
    involvedObject: { kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid },
    type: 'Normal',
    reason: EventReason.NodeControllerEviction,
    message: `Marking for deletion Pod ${pod.name} from Node ${nodeName}`,
    source: NodeControllerSource,
  };
}

// The taint eviction controller refers to a pod by namespace/name only (no UID in its ref).
function taintManagerEvent(podRef: PodRef, message: string, source: TaintEvictionSource): KubeEvent {
  return {
    involvedObject: { kind: 'Pod', name: podRef.name, namespace: podRef.namespace },
    type: 'Normal',
    reason: EventReason.TaintManagerEviction,
    message,
    source,
  };
}

/** Upstream emitPodDeletionEvent: the eviction timer fired. */
export function taintManagerEvictionEvent(
  podRef: PodRef,
  source: TaintEvictionSource = TaintEvictionControllerSource,
): KubeEvent {
  return taintManagerEvent(podRef, `Marking for deletion Pod ${podRef.namespace}/${podRef.name}`, source);
}

/** Upstream emitCancelPodDeletionEvent: a pending eviction timer was cancelled. */
export function cancelPodDeletionEvent(
  podRef: PodRef,
  source: TaintEvictionSource = TaintEvictionControllerSource,
): KubeEvent {
  return taintManagerEvent(podRef, `Cancelling deletion of Pod ${podRef.namespace}/${podRef.name}`, source);
}
