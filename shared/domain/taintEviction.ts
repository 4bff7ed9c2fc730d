// The taint eviction controller's decisions. Port of pkg/controller/tainteviction/taint_eviction.go
// (`Controller`: PodUpdated, NodeUpdated, handlePodUpdate, handleNodeUpdate, processPodOnNode,
// deletePodHandler's constants). Its Events are in kubeEvents.ts (taintManagerEvictionEvent,
// cancelPodDeletionEvent), getNoExecuteTaints in taints.ts.
//
// What differs:
// - Upstream mutates `taintedNodes` and the TimedWorkerQueue in place and reads `time.Now()`. Here the
//   handlers take the node's taintedNodes entry, a lookup of the scheduled eviction
//   (`getWorkerUnsafe`) and `now`, and return the new taintedNodes entry plus a list of
//   {@link PodEvictionAction}s that the caller applies IN ORDER to the timedWorkerQueue.
// - The eight sharded workers (fnv32a(nodeName) % 8, node updates drained before pod updates) are not
//   ported: the caller serializes the updates of one node and its pods, which is what the sharding is for.
// - Informer, lister and client errors other than NotFound are the caller's (upstream logs them and
//   does nothing: if listing the node's pods fails, store `noExecuteTaints` and apply no actions).
import { getNoExecuteTaints, taintSemanticallyEqual } from './taints.js';
import {
  getMatchingTolerations,
  getMinTolerationTime,
  NewestTolerationRules,
  type TolerationRules,
} from './tolerations.js';
import type { EpochMillis, Millis, Node, Pod, PodKey, Taint, Toleration } from './types.js';
import { podKey } from './types.js';

/** Upstream `retries`: attempts of addConditionAndDeletePod per firing; then give up (no requeue). */
export const deletePodRetries = 5;
/** Upstream sleeps 10ms after each failed attempt. */
export const deletePodRetryInterval: Millis = 10;

/**
 * The pod condition upstream patches into pods/status before the delete (addConditionAndDeletePod,
 * PodDisruptionConditions GA). Patched only when UpdatePodCondition reports a change; the delete follows
 * without a UID precondition and with default grace (docs/upstream.md#quirk-19).
 */
export const disruptionTargetCondition = {
  type: 'DisruptionTarget',
  status: 'True',
  reason: 'DeletionByTaintManager',
  message: 'Taint manager: deleting due to NoExecute taint',
} as const;

// helper.Semantic.DeepEqual over []Toleration / []Taint: nil and empty slices are equal, "" is an
// absent string, pointers compare by value, metav1.Time by instant.
function tolerationsEqual(a: readonly Toleration[], b: readonly Toleration[]): boolean {
  return (
    a.length === b.length &&
    a.every((x, i) => {
      const y = b[i];
      return (
        y !== undefined &&
        (x.key ?? '') === (y.key ?? '') &&
        (x.operator ?? '') === (y.operator ?? '') &&
        (x.value ?? '') === (y.value ?? '') &&
        (x.effect ?? '') === (y.effect ?? '') &&
        x.tolerationSeconds === y.tolerationSeconds
      );
    })
  );
}

function taintsEqual(a: readonly Taint[], b: readonly Taint[]): boolean {
  return a.length === b.length && a.every((x, i) => b[i] !== undefined && taintSemanticallyEqual(x, b[i]));
}

/** Upstream podUpdateItem: the pod to look up, and the node it was bound to when the event came. */
export interface PodUpdateItem {
  readonly key: PodKey;
  readonly nodeName: string;
}

/**
 * The filter of upstream PodUpdated: an update (both versions present) that changes neither the
 * tolerations (semantic deep-equal) nor the node is ignored. Adds and deletes always count.
 */
export function podUpdatedNeedsProcessing(oldPod: Pod | undefined, newPod: Pod | undefined): boolean {
  return !(
    oldPod !== undefined &&
    newPod !== undefined &&
    tolerationsEqual(oldPod.tolerations, newPod.tolerations) &&
    oldPod.nodeName === newPod.nodeName
  );
}

/**
 * Upstream PodUpdated: the item to queue for handlePodUpdate, or undefined when the filter drops the
 * event. Name and node come from the new pod when present, else from the old one.
 */
export function podUpdated(oldPod: Pod | undefined, newPod: Pod | undefined): PodUpdateItem | undefined {
  const pod = newPod ?? oldPod;
  if (pod === undefined || !podUpdatedNeedsProcessing(oldPod, newPod)) return undefined;
  return { key: podKey(pod), nodeName: pod.nodeName };
}

/**
 * The filter of upstream NodeUpdated: an update whose NoExecute taints are semantically deep-equal
 * (timeAdded included, so a re-added taint counts as a change) is ignored. Adds and deletes always count.
 */
export function nodeUpdatedNeedsProcessing(oldNode: Node | undefined, newNode: Node | undefined): boolean {
  return !(
    oldNode !== undefined &&
    newNode !== undefined &&
    taintsEqual(getNoExecuteTaints(oldNode.taints), getNoExecuteTaints(newNode.taints))
  );
}

/** Upstream NodeUpdated: the node name to queue for handleNodeUpdate, or undefined when filtered out. */
export function nodeUpdated(oldNode: Node | undefined, newNode: Node | undefined): string | undefined {
  const node = newNode ?? oldNode;
  if (node === undefined || !nodeUpdatedNeedsProcessing(oldNode, newNode)) return undefined;
  return node.name;
}

/**
 * What to do to the timedWorkerQueue, in order:
 * - `cancel`: upstream cancelWorkWithEvent. The executor calls `cancelWork(queue, key)` and records
 *   {@link cancelPodDeletionEvent} only when it returns `cancelled: true` (a timer-backed entry, even
 *   one already firing). Cancelling nothing, or running immediate work, records nothing.
 * - `schedule`: upstream AddWork (skipped by the queue when the key is still present). Pass the same
 *   `now` the decision was made with to `addWork`. `fireAt === createdAt` means delete now.
 */
export type PodEvictionAction =
  | { readonly kind: 'cancel'; readonly key: PodKey }
  | {
      readonly kind: 'schedule';
      readonly key: PodKey;
      /** The pod the eviction is decided for (not upstream: keys outlive pods, see PodOnNode.uid). */
      readonly uid?: string;
      readonly nodeName: string;
      readonly createdAt: EpochMillis;
      readonly fireAt: EpochMillis;
    };

/** The pod's scheduled eviction as upstream GetWorkerUnsafe sees it (timer-backed entries only). */
export interface ScheduledEviction {
  readonly createdAt: EpochMillis;
  readonly fireAt: EpochMillis;
}

/** Lookup of the scheduled eviction by pod key: wrap `getWorkerUnsafe` of the current queue. */
export type ScheduledEvictionLookup = (key: PodKey) => ScheduledEviction | undefined;

/** The pod as processPodOnNode reads it. */
export interface PodOnNode {
  readonly key: PodKey;
  /**
   * The pod's UID. Not upstream, whose in-process queue is ordered with its informer: here an event may
   * arrive after the pod was deleted and re-created under the same name, so every scheduled deletion is
   * bound to the pod it was decided for (a delete precondition), never to the name alone.
   */
  readonly uid?: string;
  readonly nodeName: string;
  readonly tolerations: readonly Toleration[];
}

/**
 * Upstream processPodOnNode, exactly:
 * - not every taint tolerated: cancel, then schedule deletion now;
 * - tolerated forever (no used toleration has seconds): cancel;
 * - otherwise the deletion is due `min` after now, where `min` is the shortest used tolerationSeconds
 *   (first matching toleration per taint). An existing scheduled eviction is kept when it would fire
 *   earlier (`existing.createdAt + min < now + min`), which is always the case once time has moved on:
 *   changing tolerationSeconds later neither lengthens nor shortens it (upstream quirk #108982).
 *   Otherwise (existing.createdAt >= now: a second event at the same instant, or a clock stepped
 *   back; derived) it is cancelled, with a "Cancelling deletion" Event, and re-added with the OLD
 *   createdAt and fireAt = now + min. Its timer runs `fireAt - createdAt = min - (createdAt - now)`
 *   from the call (docs/upstream.md#quirk-22): exactly `min` at the same instant, sooner than fireAt after a
 *   backwards step.
 * Countdowns start at `now`, the moment the controller sees the taint or pod, never taint.timeAdded
 * (docs/upstream.md#quirk-15, #108268).
 *
 * `existing` is the lookup before any of the returned actions; after a `cancel` the pod is treated as
 * having no scheduled eviction, as upstream's GetWorkerUnsafe would.
 */
export function processPodOnNode(
  pod: PodOnNode,
  taints: readonly Taint[],
  existing: ScheduledEviction | undefined,
  now: EpochMillis,
  rules: TolerationRules = NewestTolerationRules,
): PodEvictionAction[] {
  const actions: PodEvictionAction[] = [];
  let scheduled = existing;
  const cancel = () => {
    actions.push({ kind: 'cancel', key: pod.key });
    scheduled = undefined;
  };
  const schedule = (createdAt: EpochMillis, fireAt: EpochMillis) => {
    actions.push({
      kind: 'schedule',
      key: pod.key,
      ...(pod.uid !== undefined && { uid: pod.uid }),
      nodeName: pod.nodeName,
      createdAt,
      fireAt,
    });
  };

  // Upstream quirk (docs/upstream.md#quirk-21): no return here, so empty taints go on to "tolerated with min
  // 0" and schedule an immediate deletion. handleNodeUpdate and handlePodUpdate never call this with no
  // taints.
  if (taints.length === 0) cancel();
  const { allTolerated, used } = getMatchingTolerations(taints, pod.tolerations, rules);
  if (!allTolerated) {
    // Not all taints are tolerated: drop any scheduled work, the pod goes right away.
    cancel();
    schedule(now, now);
    return actions;
  }
  const minTolerationTime = getMinTolerationTime(used);
  if (minTolerationTime < 0) {
    // Tolerated forever: cancel any scheduled deletion.
    cancel();
    return actions;
  }
  let startTime = now;
  const triggerTime = now + minTolerationTime;
  if (scheduled !== undefined) {
    startTime = scheduled.createdAt;
    if (startTime + minTolerationTime < triggerTime) return actions;
    cancel();
  }
  schedule(startTime, triggerTime);
  return actions;
}

/** Outcome of {@link handleNodeUpdate}. */
export interface NodeUpdateOutcome {
  /** The node's new taintedNodes entry (its NoExecute taints); undefined = delete the entry. */
  readonly noExecuteTaints: Taint[] | undefined;
  readonly actions: PodEvictionAction[];
}

/**
 * Upstream handleNodeUpdate. `node` is the lister's node (undefined = NotFound); `podsOnNode` are
 * the pods assigned to it (upstream lists them AFTER updating taintedNodes, so that a pod bound
 * meanwhile is caught by its own update, see TestEventualConsistency: store `noExecuteTaints` first).
 * - node gone: delete its taintedNodes entry; scheduled evictions are NOT cancelled
 *   (docs/upstream.md#quirk-20);
 * - no NoExecute taints: cancel every pod's scheduled eviction;
 * - else processPodOnNode for every pod, all with the same `now`.
 */
export function handleNodeUpdate(
  nodeName: string,
  node: Node | undefined,
  podsOnNode: readonly Pod[],
  existing: ScheduledEvictionLookup,
  now: EpochMillis,
  rules: TolerationRules = NewestTolerationRules,
): NodeUpdateOutcome {
  if (node === undefined) return { noExecuteTaints: undefined, actions: [] };
  const taints = getNoExecuteTaints(node.taints);
  const noExecuteTaints = taints.length === 0 ? undefined : taints;
  if (taints.length === 0) {
    // All taints were removed from the node: cancel all evictions.
    return {
      noExecuteTaints,
      actions: podsOnNode.map((pod): PodEvictionAction => ({ kind: 'cancel', key: podKey(pod) })),
    };
  }
  const actions = podsOnNode.flatMap((pod) => {
    const key = podKey(pod);
    return processPodOnNode(
      { key, uid: pod.uid, nodeName, tolerations: pod.tolerations },
      taints,
      existing(key),
      now,
      rules,
    );
  });
  return { noExecuteTaints, actions };
}

/**
 * Upstream handlePodUpdate. `pod` is the lister's pod for `item.key` (undefined = NotFound);
 * `nodeTaints` is the taintedNodes entry of the pod's node (undefined = no entry).
 * - pod gone: cancel;
 * - pod now bound elsewhere than the item says: ignore (another item carries the current node);
 * - not bound, or the node has no NoExecute taints: nothing;
 * - else processPodOnNode.
 * An empty `nodeTaints` array counts as "no entry": upstream never stores one, and it would reach the
 * docs/upstream.md#quirk-21 path.
 */
export function handlePodUpdate(
  item: PodUpdateItem,
  pod: Pod | undefined,
  nodeTaints: readonly Taint[] | undefined,
  existing: ScheduledEvictionLookup,
  now: EpochMillis,
  rules: TolerationRules = NewestTolerationRules,
): PodEvictionAction[] {
  if (pod === undefined) return [{ kind: 'cancel', key: item.key }];
  if (pod.nodeName !== item.nodeName) return [];
  if (pod.nodeName === '') return [];
  if (nodeTaints === undefined || nodeTaints.length === 0) return [];
  const key = podKey(pod);
  return processPodOnNode(
    { key, uid: pod.uid, nodeName: pod.nodeName, tolerations: pod.tolerations },
    nodeTaints,
    existing(key),
    now,
    rules,
  );
}

/** A PodEvictions timer as it fires: the instants it was scheduled with. */
export interface FiredEviction {
  readonly key: PodKey;
  /** The pod the eviction was decided for; undefined on entries written before UIDs were kept. */
  readonly uid?: string;
  readonly nodeName: string;
  readonly createdAt: EpochMillis;
  readonly fireAt: EpochMillis;
}

/**
 * What to do with a timer that fired, decided on the node and pod as the API has them now:
 * - `delete`: the node still carries a NoExecute taint the pod does not tolerate for longer;
 * - `cancel`: the taints are gone, or now tolerated forever: upstream's handleNodeUpdate or
 *   handlePodUpdate would have cancelled it (with the "Cancelling deletion" Event) when it saw the change;
 * - `drop`: nothing to cancel or delete: the pod is gone, another pod holds the name, it is terminating
 *   already (deleted once: no second "Marking for deletion"), it moved to another node, or the node was
 *   deleted (PodGC removes the pods of a deleted node);
 * - `reschedule`: processPodOnNode moves the timer later (only when the clock stepped back).
 */
export type FiredEvictionDecision =
  | { readonly kind: 'delete'; readonly why: string }
  | { readonly kind: 'cancel'; readonly why: string }
  | { readonly kind: 'drop'; readonly why: string }
  | { readonly kind: 'reschedule'; readonly createdAt: EpochMillis; readonly fireAt: EpochMillis };

/**
 * Deviation (docs/upstream-deviations.md, "A fired eviction is decided against the API"): upstream's
 * deletePodHandler deletes whatever its queue names, because its informers keep the queue current: the
 * taint's removal cancels the timer before it fires. Here the event that would have cancelled it may be
 * lost, late or forged, so the timer is a hint: processPodOnNode runs again on the API's node and pod,
 * with the timer as the scheduled eviction, and only a deletion it still calls for is made.
 * `pod` is the API's pod under the timer's name on the timer's node (undefined: not there); `node` the
 * API's node (undefined: deleted).
 */
export function decideFiredEviction(
  eviction: FiredEviction,
  pod: Pod | undefined,
  node: Node | undefined,
  now: EpochMillis,
  rules: TolerationRules = NewestTolerationRules,
): FiredEvictionDecision {
  if (pod === undefined) return { kind: 'drop', why: 'the pod is no longer on the node' };
  if (eviction.uid !== undefined && pod.uid !== eviction.uid) {
    return {
      kind: 'drop',
      why: `another pod holds the name (uid ${pod.uid}, the eviction was for ${eviction.uid})`,
    };
  }
  if (pod.deletionTimestamp !== undefined) return { kind: 'drop', why: 'the pod is terminating already' };
  if (pod.nodeName !== eviction.nodeName) {
    return { kind: 'drop', why: `the pod is bound to ${JSON.stringify(pod.nodeName)} now` };
  }
  if (node === undefined) return { kind: 'drop', why: 'the node was deleted (PodGC removes its pods)' };
  const taints = getNoExecuteTaints(node.taints);
  if (taints.length === 0) return { kind: 'cancel', why: 'the node has no NoExecute taint any more' };
  const actions = processPodOnNode(
    { key: eviction.key, uid: pod.uid, nodeName: pod.nodeName, tolerations: pod.tolerations },
    taints,
    { createdAt: eviction.createdAt, fireAt: eviction.fireAt },
    now,
    rules,
  );
  const schedule = actions.find((a) => a.kind === 'schedule');
  if (actions.length === 0 || (schedule !== undefined && schedule.fireAt <= now)) {
    return { kind: 'delete', why: "the pod does not tolerate the node's NoExecute taint for longer" };
  }
  if (schedule === undefined)
    return { kind: 'cancel', why: "the node's NoExecute taints are tolerated forever" };
  return { kind: 'reschedule', createdAt: schedule.createdAt, fireAt: schedule.fireAt };
}
