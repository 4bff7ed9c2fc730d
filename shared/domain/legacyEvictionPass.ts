// The legacy (pre-taint, upstream <= v1.26) eviction path as passes: the monitorNodeHealth branch
// that calls processNoTaintBaseEviction, and doEvictionPass, which drains the per-zone queues with
// DeletePods. The decisions live in legacyEviction.ts; this module applies them to the controller
// state and yields the API calls (effects.ts).
//
// nodeEvictionMap entries exist only for registered nodes (upstream registerNode on informer Add);
// here a node is registered while it is in the node cache, which is what the informer reflects.
import type { ControllerConfig } from '../ports/config.js';
import { type WorkingState, workingZoneQueue } from './controllerState.js';
import { perform, type Pass } from './effects.js';
import {
  cancelPodEviction,
  type DeletePodsOutcome,
  deletePodsOutcome,
  deletePodsPlan,
  type DeletePodsPodResult,
  doEvictionPassResult,
  evictPods,
  type NodeEvictionStatus,
  processNoTaintBaseEviction,
} from './legacyEviction.js';
import {
  completeTry,
  type RateLimitedTimedQueue,
  type TimedValue,
  type TryResult,
  tryNext,
} from './rateLimitedTimedQueue.js';
import type { EpochMillis, Node, NodeCondition, Pod } from './types.js';
import { getZoneKey } from './zones.js';

/** upstream cancelPodEviction: unmarked, and out of the zone queue (and its processed-once set). */
function applyCancelPodEviction(s: WorkingState, node: Node): boolean {
  const decision = cancelPodEviction();
  s.nodeEvictionStatus.set(node.name, decision.newStatus);
  const zone = getZoneKey(node.labels);
  // In place within the pass (WorkingQueue): a pass cancels for every healthy node.
  return workingZoneQueue(s, zone).remove(node.name);
}

/** monitorNodeHealth, legacy mode, newly added node: registerNode + cancelPodEviction. */
export function legacyRegisterNode(s: WorkingState, node: Node): void {
  applyCancelPodEviction(s, node);
}

/** handleDisruption entering master disruption, legacy mode: cancelPodEviction on every node. */
export function legacyMarkAllNodesReachable(s: WorkingState, node: Node): void {
  applyCancelPodEviction(s, node);
}

/**
 * upstream DeletePods, executed: walks the plan, yielding each status update, event and delete in
 * upstream's order, and stops at the first delete that fails with anything but NotFound.
 */
export function* runDeletePods(
  pods: readonly Pod[],
  nodeName: string,
  nodeUID: string,
): Pass<DeletePodsOutcome> {
  const plan = deletePodsPlan(pods, nodeName, undefined, nodeUID);
  if (plan.nodeEvent !== undefined) yield* perform({ kind: 'recordEvent', event: plan.nodeEvent });
  const results: (DeletePodsPodResult | undefined)[] = [];
  for (const step of plan.pods) {
    if (step.skip === 'otherNode') {
      results.push(undefined);
      continue;
    }
    let reasonUpdate: DeletePodsPodResult['reasonUpdate'];
    if (step.setTerminationReason !== undefined) {
      reasonUpdate = yield* perform({
        kind: 'setPodTerminationReason',
        pod: step.pod,
        reason: step.setTerminationReason.reason,
        message: step.setTerminationReason.message,
        why: `DeletePods: node ${nodeName} is unresponsive`,
      });
      if (!reasonUpdate.ok && reasonUpdate.reason === 'Conflict') {
        results.push({ reasonUpdate });
        continue;
      }
    }
    if (!step.delete) {
      results.push(reasonUpdate === undefined ? {} : { reasonUpdate });
      continue;
    }
    yield* perform({ kind: 'recordEvent', event: step.evictionEvent });
    const deletion = yield* perform({
      kind: 'deletePod',
      pod: step.pod,
      why: `DeletePods: evicting pods of unresponsive node ${nodeName}`,
    });
    results.push(reasonUpdate === undefined ? { delete: deletion } : { reasonUpdate, delete: deletion });
    if (!deletion.ok && deletion.reason !== 'NotFound') break;
  }
  return deletePodsOutcome(plan, results);
}

/**
 * The legacy branch of monitorNodeHealth's per-node step: processNoTaintBaseEviction on the observed
 * Ready condition, then evictPods (enqueue, or delete at once on an already evicted node) or
 * cancelPodEviction. Errors are logged upstream and not retried until the next pass (a failed pod
 * list included).
 */
export function* processNoTaintBaseEvictionPass(
  s: WorkingState,
  node: Node,
  observed: NodeCondition,
  now: EpochMillis,
  config: Pick<ControllerConfig, 'podEvictionTimeout'>,
): Pass<void> {
  const decision = processNoTaintBaseEviction(node.name, observed, s.nodeHealth.get(node.name), now, config);
  switch (decision.kind) {
    case 'none':
    case 'error':
      return;
    case 'cancelPodEviction':
      applyCancelPodEviction(s, node);
      return;
    case 'evictPods': {
      const evict = evictPods(s.nodeEvictionStatus.get(node.name) ?? 'unmarked');
      if (evict.kind === 'deletePodsNow') {
        // Pods that arrived on a node already evicted go at once, bypassing the rate limiter. Listed
        // only here, where they are needed (the functions have no pod cache; upstream lists from one).
        const pods = yield* perform({ kind: 'listPodsOnNode', node: node.name });
        if (pods.ok) yield* runDeletePods(pods.value, node.name, node.uid);
        return;
      }
      s.nodeEvictionStatus.set(node.name, evict.newStatus);
      const zone = getZoneKey(node.labels);
      workingZoneQueue(s, zone).add(node.name, node.uid, now);
      return;
    }
  }
}

/** What happened to one due queue item of doEvictionPass. */
export interface EvictionItemResult {
  /** How the queue records it (completeTry). */
  readonly result: TryResult;
  /** The node's new nodeEvictionMap value (only when done and the node is in the cache). */
  readonly newStatus?: 'evicted';
  /** One more node_collector_evictions_total in the item's zone. */
  readonly countEviction: boolean;
  /** DeletePods' outcome; absent when the pod list failed. */
  readonly outcome?: DeletePodsOutcome;
}

/**
 * The body of upstream doEvictionPass's Try callback for one item whose token was already taken: list
 * the node's pods, DeletePods, and say how the queue and nodeEvictionMap record the outcome.
 * `nodeFound`: the node is in the node cache (upstream's nodeLister.Get). doEvictionPass and the
 * drainer (shared/app/drainer.ts) both run it.
 */
export function* processEvictionItem(item: TimedValue, nodeFound: boolean): Pass<EvictionItemResult> {
  const pods = yield* perform({ kind: 'listPodsOnNode', node: item.value });
  if (!pods.ok) return { result: { done: false, wait: 0 }, countEviction: false };
  const outcome = yield* runDeletePods(pods.value, item.value, item.uid);
  const result = doEvictionPassResult(outcome, nodeFound);
  if (!result.done) return { result, countEviction: false, outcome };
  return {
    result: { done: true },
    ...(nodeFound && { newStatus: result.newStatus }),
    countEviction: result.countEviction,
    outcome,
  };
}

export interface EvictionPassResult {
  readonly zoneQueues: ReadonlyMap<string, RateLimitedTimedQueue>;
  readonly nodeEvictionStatus: ReadonlyMap<string, NodeEvictionStatus>;
  /** node_collector_evictions_total increments per zone. */
  readonly evictions: ReadonlyMap<string, number>;
}

/**
 * upstream doEvictionPass (legacy mode, every NodeEvictionPeriod): drain each zone's queue under its
 * token bucket, deleting the pods of each due node. `nodes` is the node cache. `clock` is read once per
 * item, as in doNoExecuteTaintingPass.
 *
 * Test harness, as doNoExecuteTaintingPass: the drainer drains zone by zone through the same helpers;
 * this whole pass is what upstream's legacy table tests drive.
 */
export function* doEvictionPass(
  zoneQueues: ReadonlyMap<string, RateLimitedTimedQueue>,
  nodeEvictionStatus: ReadonlyMap<string, NodeEvictionStatus>,
  nodes: ReadonlyMap<string, Node>,
  clock: () => EpochMillis,
): Pass<EvictionPassResult> {
  const queues = new Map(zoneQueues);
  const statuses = new Map(nodeEvictionStatus);
  const evictions = new Map<string, number>();
  for (const zone of [...queues.keys()].sort()) {
    let queue = queues.get(zone);
    for (;;) {
      if (queue === undefined) break;
      const now = clock();
      const step = tryNext(queue, now);
      queue = step.queue;
      if (step.item === undefined) break;
      const name = step.item.value;
      const found = nodes.has(name);
      const processed = yield* processEvictionItem(step.item, found);
      if (processed.newStatus !== undefined) statuses.set(name, processed.newStatus);
      if (processed.countEviction) evictions.set(zone, (evictions.get(zone) ?? 0) + 1);
      queue = completeTry(queue, step.item, processed.result, now);
    }
    if (queue !== undefined) queues.set(zone, queue);
  }
  return { zoneQueues: queues, nodeEvictionStatus: statuses, evictions };
}
