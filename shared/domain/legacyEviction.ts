// The legacy (pre-taint) eviction path of the NodeLifecycleController, upstream <= v1.26 with
// --enable-taint-manager=false (removed in v1.27 by PR #115840):
// - processNoTaintBaseEviction, evictPods, cancelPodEviction and the nodeEvictionMap values
//   (pkg/controller/nodelifecycle/node_lifecycle_controller.go, v1.24–1.26);
// - DeletePods and SetPodTerminationReason (pkg/controller/util/node/controller_utils.go);
// - the result of one doEvictionPass queue item.
// What differs: upstream mutates nodeEvictionMap and the zone's RateLimitedTimedQueue under
// evictorLock and calls the API inline. Here each function returns the decision; the caller applies
// the status change, performs the queue operation on the zone's RateLimitedTimedQueue
// (zonePodEvictor[zone]) and runs the writes, then hands the write results back to
// `deletePodsOutcome`.
import type { ControllerConfig } from '../ports/config.js';
import type { WriteResult } from './effects.js';
import { deletingAllPodsEvent, nodeControllerEvictionEvent, type KubeEvent } from './kubeEvents.js';
import { aggregateErrorMessage } from './podStatus.js';
import type { EpochMillis, NodeCondition, Pod } from './types.js';

/**
 * Upstream nodeEvictionMap values (unmarked = 0, toBeEvicted = 1, evicted = 2). An entry exists
 * only for registered nodes: registerNode (node informer Add) sets `unmarked`, unregisterNode (Delete)
 * removes it, and setting the status of an unregistered node does nothing. Reading an unknown node
 * yields `unmarked`.
 */
export type NodeEvictionStatus = 'unmarked' | 'toBeEvicted' | 'evicted';

/** pkg/util/node NodeUnreachablePodReason. */
export const NodeUnreachablePodReason = 'NodeLost';

/** The timestamps of the node's nodeHealthMap entry that the legacy path compares with `now`. */
export interface LegacyNodeHealth {
  readonly probeTimestamp: EpochMillis;
  readonly readyTransitionTimestamp: EpochMillis;
}

export type NoTaintBaseEvictionDecision =
  /** Call {@link evictPods} with the node's eviction status (and the pods at hand). */
  | { readonly kind: 'evictPods' }
  /** Call {@link cancelPodEviction}. */
  | { readonly kind: 'cancelPodEviction' }
  /** Not unhealthy for long enough yet. */
  | { readonly kind: 'none' }
  /** No nodeHealthMap entry: upstream returns this error (the monitor pass logs it, processPod requeues). */
  | { readonly kind: 'error'; readonly message: string };

/**
 * Port of processNoTaintBaseEviction: pods of a node whose Ready condition has been False for longer
 * than podEvictionTimeout since the controller saw it transition, or Unknown for longer than
 * podEvictionTimeout since the controller's last probe, are to be evicted; a Ready node cancels any
 * pending eviction. Comparisons are strict ("after"), as upstream's time.After.
 *
 * `observedReady` is the Ready condition the caller decides on: the monitor pass passes the observed
 * (pre-update) condition, processPod the one saved in nodeHealthMap. `health` is the node's
 * nodeHealthMap entry, read afresh by upstream at decision time.
 */
export function processNoTaintBaseEviction(
  nodeName: string,
  observedReady: Pick<NodeCondition, 'status'>,
  health: LegacyNodeHealth | undefined,
  now: EpochMillis,
  config: Pick<ControllerConfig, 'podEvictionTimeout'>,
): NoTaintBaseEvictionDecision {
  if (health === undefined) {
    return { kind: 'error', message: `health data doesn't exist for node ${goQuote(nodeName)}` };
  }
  switch (observedReady.status) {
    case 'False':
      return now > health.readyTransitionTimestamp + config.podEvictionTimeout
        ? { kind: 'evictPods' }
        : { kind: 'none' };
    case 'Unknown':
      return now > health.probeTimestamp + config.podEvictionTimeout
        ? { kind: 'evictPods' }
        : { kind: 'none' };
    case 'True':
      return { kind: 'cancelPodEviction' };
  }
}

export type EvictPodsDecision =
  /**
   * The node was already evicted (its queue item ran): delete the given pods at once, bypassing
   * the rate limiter (docs/upstream.md#quirk-28: pods arriving on an evicted node). Run
   * {@link deletePodsPlan} on them; a DeletePods error becomes {@link evictPodsError}. Nothing is
   * enqueued (upstream returns false).
   */
  | { readonly kind: 'deletePodsNow' }
  /**
   * Set the node's status to `toBeEvicted` (only if registered) and Add(node.name, node.uid) to the
   * zone's RateLimitedTimedQueue; Add returns false when the name is already in the queue's set.
   */
  | { readonly kind: 'enqueue'; readonly newStatus: 'toBeEvicted' };

/**
 * Port of evictPods. `status` is the node's nodeEvictionMap value (`unmarked` for an unregistered
 * node, as upstream's getStatus reports it).
 */
export function evictPods(status: NodeEvictionStatus): EvictPodsDecision {
  if (status === 'evicted') return { kind: 'deletePodsNow' };
  return { kind: 'enqueue', newStatus: 'toBeEvicted' };
}

/** The error evictPods returns when its immediate DeletePods fails. */
export function evictPodsError(nodeName: string, deletePodsError: string): string {
  return `unable to delete pods from node ${goQuote(nodeName)}: ${deletePodsError}`;
}

export interface CancelPodEvictionDecision {
  /** Written only if the node is registered. */
  readonly newStatus: 'unmarked';
}

/**
 * Port of cancelPodEviction (node Ready again, newly added, or the cluster entering master
 * disruption): the node's status becomes `unmarked`, and the caller removes the node from its zone's
 * RateLimitedTimedQueue with Remove(node.name) — which also forgets that the item was processed, so
 * a later evictPods can enqueue it again. Upstream returns Remove's result ("was an eviction queued").
 */
export function cancelPodEviction(): CancelPodEvictionDecision {
  return { newStatus: 'unmarked' };
}

/** The status reason and message DeletePods writes before deleting a pod. */
export interface PodTerminationReason {
  readonly reason: typeof NodeUnreachablePodReason;
  readonly message: string;
}

/**
 * Port of SetPodTerminationReason: the status reason/message to write (an update of the pod's status
 * subresource), or undefined when the pod already carries reason NodeLost (no write).
 */
export function setPodTerminationReason(pod: Pod, nodeName: string): PodTerminationReason | undefined {
  if (pod.statusReason === NodeUnreachablePodReason) return undefined;
  return {
    reason: NodeUnreachablePodReason,
    message: `Node ${nodeName} which was running pod ${pod.name} is unresponsive`,
  };
}

/**
 * DaemonSet pods are never deleted by DeletePods.
 * Deviation: upstream asks the DaemonSet lister whether any DaemonSet's selector matches the pod
 * (GetPodDaemonSets); our pods carry the kind of their controlling owner instead, so a pod counts as
 * a DaemonSet pod when that owner is a DaemonSet (see docs/upstream-deviations.md).
 */
export function isDaemonSetPodByOwner(pod: Pod): boolean {
  return pod.ownerKind === 'DaemonSet';
}

interface DeletePodsPodPlanBase {
  readonly pod: Pod;
  /** Update the pod's status with this reason first; absent for other-node pods and pods already NodeLost. */
  readonly setTerminationReason?: PodTerminationReason;
}

export type DeletePodsPodPlan =
  | (DeletePodsPodPlanBase & {
      readonly skip?: undefined;
      /** Delete the pod (no preconditions, default options), unless its reason update conflicts. */
      readonly delete: true;
      /** Normal `NodeControllerEviction`, recorded just before the delete call, whatever its result. */
      readonly evictionEvent: KubeEvent;
    })
  | (DeletePodsPodPlanBase & {
      /** Why the pod is not deleted: bound elsewhere, already terminating, or a DaemonSet pod. */
      readonly skip: 'otherNode' | 'terminating' | 'daemonSet';
      readonly delete: false;
    });

export interface DeletePodsPlan {
  readonly nodeName: string;
  /** Normal `DeletingAllPods` on the node, recorded first, whenever the pod list is non-empty. */
  readonly nodeEvent?: KubeEvent;
  readonly pods: readonly DeletePodsPodPlan[];
}

/**
 * Port of DeletePods as a plan. The executor walks `pods` in order and, for each pod:
 * 1. `skip === 'otherNode'`: nothing;
 * 2. `setTerminationReason`: update the pod's status (reason/message); on a Conflict, go to the next pod;
 * 3. `delete`: record `evictionEvent`, then delete the pod; any result other than ok or NotFound stops
 *    the whole run (later pods are not touched).
 * It then passes the results to {@link deletePodsOutcome}, which also lists the events upstream
 * records for exactly those attempts.
 *
 * `nodeUID` only goes into the `DeletingAllPods` event reference (upstream passes the queue entry's UID
 * from doEvictionPass, or node.UID from evictPods).
 */
export function deletePodsPlan(
  pods: readonly Pod[],
  nodeName: string,
  isDaemonSetPod: (pod: Pod) => boolean = isDaemonSetPodByOwner,
  nodeUID = '',
): DeletePodsPlan {
  const planned = pods.map((pod): DeletePodsPodPlan => {
    // Defensive check (upstream): only pods bound to this node.
    if (pod.nodeName !== nodeName) return { pod, skip: 'otherNode', delete: false };
    const reason = setPodTerminationReason(pod, nodeName);
    const withReason = reason === undefined ? {} : { setTerminationReason: reason };
    // Already marked for deletion: still counted as remaining by the outcome.
    if (pod.deletionGracePeriodSeconds !== undefined) {
      return { pod, ...withReason, skip: 'terminating', delete: false };
    }
    // DaemonSet pods keep running on the lost node (but do get the reason).
    if (isDaemonSetPod(pod)) return { pod, ...withReason, skip: 'daemonSet', delete: false };
    return { pod, ...withReason, delete: true, evictionEvent: nodeControllerEvictionEvent(pod, nodeName) };
  });
  if (pods.length === 0) return { nodeName, pods: planned };
  return { nodeName, nodeEvent: deletingAllPodsEvent({ name: nodeName, uid: nodeUID }), pods: planned };
}

/** The executor's results for one planned pod: present for the writes it attempted. */
export interface DeletePodsPodResult {
  readonly reasonUpdate?: WriteResult;
  readonly delete?: WriteResult;
}

export interface DeletePodsOutcome {
  /** Upstream's first return value: some pod was deleted now or is still terminating. */
  readonly remaining: boolean;
  /** Upstream's error, if any: a failed delete, or the aggregate of reason-update conflicts. */
  readonly error: string | undefined;
  /** The events upstream records for the attempts made, in order. */
  readonly events: readonly KubeEvent[];
}

/**
 * Port of DeletePods' result, given the executor's `results[i]` for `plan.pods[i]`:
 * - reason update Conflict → error list, next pod; any other reason-update error is ignored;
 * - terminating → remaining;
 * - delete NotFound → next pod (already gone); other delete error → abort with (false, err);
 * - delete ok → remaining;
 * - conflicts collected → (false, aggregate) at the end.
 * Throws if a result the walk needs is missing (an executor that broke the plan's contract).
 */
export function deletePodsOutcome(
  plan: DeletePodsPlan,
  results: readonly (DeletePodsPodResult | undefined)[],
): DeletePodsOutcome {
  const events: KubeEvent[] = plan.nodeEvent === undefined ? [] : [plan.nodeEvent];
  const conflicts: string[] = [];
  let remaining = false;
  for (const [i, step] of plan.pods.entries()) {
    if (step.skip === 'otherNode') continue;
    const result = results[i];
    if (step.setTerminationReason !== undefined) {
      const update = required(result?.reasonUpdate, step.pod, 'reasonUpdate');
      if (!update.ok && update.reason === 'Conflict') {
        conflicts.push(`update status failed for pod ${goQuote(formatPod(step.pod))}: ${update.message}`);
        continue;
      }
    }
    if (step.skip === 'terminating') {
      remaining = true;
      continue;
    }
    if (!step.delete) continue;
    events.push(step.evictionEvent);
    const deletion = required(result?.delete, step.pod, 'delete');
    if (!deletion.ok) {
      // NotFound: already deleted, nothing left to do for this pod.
      if (deletion.reason === 'NotFound') continue;
      return { remaining: false, error: deletion.message, events };
    }
    remaining = true;
  }
  const error = aggregateErrorMessage(conflicts);
  if (error !== undefined) return { remaining: false, error, events };
  return { remaining, error: undefined, events };
}

export type EvictionPassItemResult =
  /** Upstream returns (true, 0): the queue keeps the name in its set (processed once). */
  | {
      readonly done: true;
      readonly newStatus: 'evicted';
      /** Increment evictions_total{zone} (upstream counts only when the node lister had the node). */
      readonly countEviction: boolean;
    }
  /** Upstream returns (false, 0): retried at now + 1ns; the status is not set. */
  | { readonly done: false; readonly wait: 0 };

/**
 * The result of doEvictionPass's function for one queue item, after listing the node's pods and
 * running DeletePods on them (a pod-list error is `{ done: false, wait: 0 }` too). On success the
 * node becomes `evicted` (only if registered), so pods bound to it later are deleted at once by
 * {@link evictPods}. On failure the status is left alone: new pods wait for the queue's retry.
 */
export function doEvictionPassResult(
  outcome: Pick<DeletePodsOutcome, 'error'>,
  nodeFound: boolean,
): EvictionPassItemResult {
  if (outcome.error !== undefined) return { done: false, wait: 0 };
  return { done: true, newStatus: 'evicted', countEviction: nodeFound };
}

/** kubelet's format.Pod: "name_namespace(uid)". */
function formatPod(pod: Pod): string {
  return `${pod.name}_${pod.namespace}(${pod.uid})`;
}

/** Go's %q for the names we print (JSON string quoting is the same for printable text). */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

function required(result: WriteResult | undefined, pod: Pod, write: string): WriteResult {
  if (result === undefined) {
    throw new Error(`deletePodsOutcome: missing ${write} result for pod ${pod.namespace}/${pod.name}`);
  }
  return result;
}
