// The NodeLifecycleController's pod-level decisions:
// - MarkPodsNotReady (pkg/controller/util/node/controller_utils.go), split into a plan
//   (`markPodsNotReady`: which pods get Ready=False) and an outcome (`markPodsNotReadyOutcome`:
//   events and the aggregate error, given the executor's write results);
// - the monitor pass's rule for when to call it (`markPodsNotReadyTrigger`, from monitorNodeHealth);
// - the pod informer filter `podUpdated` and the pod worker `processPod`
//   (pkg/controller/nodelifecycle/node_lifecycle_controller.go).
// What differs: upstream calls the API and the event recorder inline; here every function returns
// what to write, and the caller's executor performs it and reports per-write results back.
import type { EvictionMode } from '../ports/config.js';
import type { WriteResult } from './effects.js';
import { podNodeNotReadyEvent, type KubeEvent } from './kubeEvents.js';
import type { NodeHealthData } from './nodeHealth.js';
import { getNodeCondition, NodeReady, type ConditionStatus, type NodeCondition, type Pod } from './types.js';

/**
 * The message of upstream's utilerrors.NewAggregate(errs): undefined for no errors, the single
 * message for one, otherwise the distinct messages in order, joined by ", " inside brackets.
 */
export function aggregateErrorMessage(messages: readonly string[]): string | undefined {
  if (messages.length === 0) return undefined;
  if (messages.length === 1) return messages[0];
  const distinct = [...new Set(messages)];
  return distinct.length === 1 ? distinct[0] : `[${distinct.join(', ')}]`;
}

/**
 * Port of MarkPodsNotReady's decision: the pods whose Ready condition must be set to False, as the
 * new values to write (copies with `ready: 'False'`, input order kept).
 *
 * A pod is written when it is bound to `nodeName` (upstream's "defensive check"), has a Ready
 * condition, and that condition is not already False (upstream's UpdatePodCondition reports no
 * change then, so there is neither a write nor an event). Pods without a Ready condition are untouched.
 *
 * The executor writes each pod's status subresource (`update pods/status`) and reports one
 * WriteResult per pod to {@link markPodsNotReadyOutcome}: NotFound is skipped, other
 * errors are aggregated, and the caller then retries (monitor pass: nodesToRetry; processPod:
 * AddRateLimited). A Warning `NodeNotReady` event ("Node is not ready") follows every attempted
 * write except a NotFound one, including failed ones (upstream records it after the write, whatever
 * its error). `includeNotReady` (shadow mode, not upstream): pods already Ready=False count too — on a
 * node another controller marked, it may have marked them first.
 */
export function markPodsNotReady(pods: readonly Pod[], nodeName: string, includeNotReady = false): Pod[] {
  return pods
    .filter(
      (p) => p.nodeName === nodeName && p.ready !== undefined && (includeNotReady || p.ready !== 'False'),
    )
    .map((p) => ({ ...p, ready: 'False' }));
}

export interface MarkPodsNotReadyOutcome {
  /** Warning `NodeNotReady` events, one per write that did not return NotFound. */
  readonly events: readonly KubeEvent[];
  /** Aggregate of the non-NotFound errors; when set, the caller must retry. */
  readonly error: string | undefined;
}

/**
 * What MarkPodsNotReady returns and records, given the executor's results for the pods
 * {@link markPodsNotReady} chose (`results[i]` belongs to `written[i]`).
 */
export function markPodsNotReadyOutcome(
  written: readonly Pod[],
  results: readonly WriteResult[],
): MarkPodsNotReadyOutcome {
  if (results.length !== written.length) {
    throw new Error(`markPodsNotReadyOutcome: ${results.length} results for ${written.length} writes`);
  }
  const events: KubeEvent[] = [];
  const errors: string[] = [];
  written.forEach((pod, i) => {
    const result = results[i];
    // NotFound: the pod was deleted meanwhile; nothing left to do, and no event.
    if (result === undefined || (!result.ok && result.reason === 'NotFound')) return;
    if (!result.ok) errors.push(result.message);
    events.push(podNodeNotReadyEvent(pod));
  });
  return { events, error: aggregateErrorMessage(errors) };
}

export interface MarkPodsNotReadyTrigger {
  /** Record the Node event Normal `NodeNotReady` ("Node <n> status is now: NodeNotReady"). */
  readonly recordNodeNotReady: boolean;
  /** Run MarkPodsNotReady on the node's pods. */
  readonly markPodsNotReady: boolean;
}

/**
 * When monitorNodeHealth marks a node's pods NotReady: only when this pass saw the transition
 * (observed Ready True, current Ready not True, i.e. the controller itself just marked the node
 * Unknown), which also records the node's `NodeNotReady` event; or, without the event, when an
 * earlier attempt failed (`needsRetry`: the node is in nodesToRetry) and the observed Ready is not True.
 * A node without a current Ready condition is skipped altogether.
 *
 * Upstream quirk (#125618): a kubelet that posts Ready=False itself while its lease stays fresh never
 * shows the controller a True→non-True transition, so its pods are not marked NotReady here (only
 * processPod marks pods bound to it later).
 *
 * The caller owns nodesToRetry: add the node when MarkPodsNotReady (or listing the pods during such a
 * transition) fails, and remove it after the node's pass otherwise ends.
 */
export function markPodsNotReadyTrigger(
  observedReady: { readonly status: ConditionStatus },
  currentReady: { readonly status: ConditionStatus } | undefined,
  needsRetry: boolean,
): MarkPodsNotReadyTrigger {
  if (currentReady === undefined) return NoTrigger;
  if (currentReady.status !== 'True' && observedReady.status === 'True') return TransitionTrigger;
  return needsRetry && observedReady.status !== 'True' ? RetryTrigger : NoTrigger;
}

// The three answers, shared: the monitor asks for every node on every pass.
const NoTrigger: MarkPodsNotReadyTrigger = Object.freeze({
  recordNodeNotReady: false,
  markPodsNotReady: false,
});
const TransitionTrigger: MarkPodsNotReadyTrigger = Object.freeze({
  recordNodeNotReady: true,
  markPodsNotReady: true,
});
const RetryTrigger: MarkPodsNotReadyTrigger = Object.freeze({
  recordNodeNotReady: false,
  markPodsNotReady: true,
});

/**
 * Port of the NLC pod informer's filter (podUpdated): enqueue the pod for {@link processPod} when
 * it is bound and is new to the controller or was bound to a different node before. Deletions
 * (`newPod` undefined) are ignored.
 */
export function podUpdated(
  oldPod: Pick<Pod, 'nodeName'> | undefined,
  newPod: Pick<Pod, 'nodeName'> | undefined,
): boolean {
  if (newPod === undefined) return false;
  return newPod.nodeName !== '' && (oldPod === undefined || oldPod.nodeName !== newPod.nodeName);
}

export type ProcessPodDecision =
  /** Nothing to do: the pod is gone, the node has no health data yet, or no saved Ready condition. */
  | {
      readonly kind: 'drop';
      readonly reason: 'podNotFound' | 'noNodeHealth' | 'noReadyCondition';
    }
  /** Upstream podUpdateQueue.AddRateLimited: the node is not in the lister although it has health data. */
  | { readonly kind: 'requeue'; readonly reason: 'nodeNotFound' }
  | {
      readonly kind: 'process';
      /** The saved Ready condition the decision used. */
      readonly savedReady: NodeCondition;
      /**
       * Legacy mode only: first evaluate processNoTaintBaseEviction(node, savedReady, [pod])
       * (legacyEviction.ts) and apply it (evictPods with pods = [pod], or cancelPodEviction). If that
       * fails, requeue the pod and skip `markPodsNotReady`.
       */
      readonly processNoTaintBaseEviction: boolean;
      /**
       * Then MarkPodsNotReady([pod]): the pod to write when savedReady is not True (empty when it is
       * True, or when the pod's Ready is already False or absent). A failed write requeues the pod.
       */
      readonly markPodsNotReady: readonly Pod[];
    };

/**
 * Port of processPod (NLC pod worker): a pod newly bound to a node is marked NotReady at once when
 * the node's saved Ready condition is not True, without waiting for a monitor pass to see a transition.
 *
 * Arguments, in upstream's order of lookups:
 * - `pod`: the pod lister's current copy, undefined when NotFound;
 * - `nodeHealth`: nodeHealthMap[pod.nodeName], undefined when the controller has no health data for
 *   that node (not seen yet, or never); note that upstream never deletes these entries. Its saved
 *   status's Ready condition (upstream `nodeHealth.status`) is what the decision uses: it may lag the
 *   lister's node by up to one monitor period;
 * - `nodeFound`: whether the node lister has the node (checked after the health entry, so a deleted
 *   node that still has health data requeues instead of dropping);
 * - `evictionMode`: legacy mode runs processNoTaintBaseEviction before MarkPodsNotReady.
 *
 * Upstream also requeues on pod-lister errors other than NotFound; a store read error in our callers
 * is thrown before this decision is taken.
 */
export function processPod(
  pod: Pod | undefined,
  nodeHealth: Pick<NodeHealthData, 'status'> | undefined,
  nodeFound: boolean,
  evictionMode: EvictionMode,
): ProcessPodDecision {
  if (pod === undefined) return { kind: 'drop', reason: 'podNotFound' };
  // No data gathered for the node yet: the monitor pass handles the pod later.
  if (nodeHealth === undefined) return { kind: 'drop', reason: 'noNodeHealth' };
  if (!nodeFound) return { kind: 'requeue', reason: 'nodeNotFound' };
  const savedReady = getNodeCondition(nodeHealth.status, NodeReady);
  // No Ready condition only happens right after the node was added: the next node update handles the pod.
  if (savedReady === undefined) return { kind: 'drop', reason: 'noReadyCondition' };
  return {
    kind: 'process',
    savedReady,
    processNoTaintBaseEviction: evictionMode === 'legacy',
    markPodsNotReady: savedReady.status === 'True' ? [] : markPodsNotReady([pod], pod.nodeName),
  };
}
