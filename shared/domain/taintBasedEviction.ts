// Taint-based eviction in the NodeLifecycleController: upstream processTaintBaseEviction,
// markNodeForTainting, markNodeAsReachable and doNoExecuteTaintingPass
// (pkg/controller/nodelifecycle/node_lifecycle_controller.go). The controller never deletes pods in
// this mode: it taints unhealthy nodes NoExecute, rate-limited per zone, and the taint eviction
// controller (taintEviction.ts) deletes the pods that do not tolerate the taint.
import { type WorkingState, workingZoneQueue } from './controllerState.js';
import { perform, type Pass, type WriteResult } from './effects.js';
import {
  completeTry,
  type RateLimitedTimedQueue,
  type TimedValue,
  type TryResult,
  tryNext,
} from './rateLimitedTimedQueue.js';
import { NotReadyTaintTemplate, taintExists, UnreachableTaintTemplate } from './taints.js';
import {
  type EpochMillis,
  getNodeCondition,
  type Millis,
  type Node,
  type NodeCondition,
  NodeReady,
  type Taint,
} from './types.js';
import { getZoneKey } from './zones.js';

/**
 * upstream SwapNodeControllerTaint: add `toAdd` (timeAdded = now) and remove `toRemove` in one
 * read-modify-write. Upstream stamps TimeAdded with the real clock; we use the pass's `now`.
 */
export function* swapNodeControllerTaint(
  node: Pick<Node, 'name'>,
  toAdd: readonly Taint[],
  toRemove: readonly Taint[],
  now: EpochMillis,
  why: string,
): Pass<WriteResult> {
  return yield* perform({
    kind: 'swapNodeTaints',
    node: node.name,
    toAdd: toAdd.map((t) => ({ ...t, timeAdded: now })),
    toRemove,
    why,
  });
}

/**
 * upstream markNodeAsReachable: removes both NoExecute taints this controller owns, then forgets the
 * node in its zone's queue (also from the processed-once set, so it can be queued again).
 * Like upstream RemoveTaintOffNode, no API call is made when the node we were given lacks the taints.
 * Returns false (and keeps the queue entry) when the taint write fails; the next pass retries.
 */
export function* markNodeAsReachable(state: WorkingState, node: Node, why: string): Pass<boolean> {
  const present = ControllerNoExecuteTaints.filter((t) => taintExists(node.taints, t));
  if (present.length > 0) {
    const result = yield* perform({
      kind: 'swapNodeTaints',
      node: node.name,
      toAdd: [],
      toRemove: present,
      why,
    });
    if (!result.ok) return false;
  }
  return forgetInZoneQueue(state, node);
}

/** The NoExecute taints this controller adds and removes. */
const ControllerNoExecuteTaints = [UnreachableTaintTemplate, NotReadyTaintTemplate] as const;

/** markNodeAsReachable's last step: the node leaves its zone's queue (and its processed-once set). */
function forgetInZoneQueue(state: WorkingState, node: Node): boolean {
  return workingZoneQueue(state, getZoneKey(node.labels)).remove(node.name);
}

/**
 * upstream markNodeForTainting: queue the node for the NoExecute taint matching its Ready status.
 * The Remove first is upstream's fix for a NoExecute taint removed by hand (#89012, PR #89059):
 * without it the processed-once set would refuse the node forever.
 *
 * Deviation (docs/upstream-deviations.md#the-zone-queues): a node still waiting in the queue under
 * the same UID keeps its place and its times. Upstream removes and re-adds it on every pass, which
 * re-stamps every waiting node with the pass's `now` and orders them by the lister's (random)
 * iteration; stored, that is one queue-row write per waiting node per pass.
 * A waiting node whose token a drainer has spent (a claimed entry, rateLimitedTimedQueue.ts TokenClaim)
 * keeps its entry whatever its UID: re-queued as a new, unclaimed entry, it would get a second token.
 * Upstream's evictorLock orders this pass after that Try iteration, which ends with the node tainted or
 * retried under its old entry; the pass after it re-queues the node if it still needs to be.
 */
export function markNodeForTainting(
  state: WorkingState,
  node: Node,
  status: 'False' | 'Unknown',
  now: EpochMillis,
): boolean {
  const queue = workingZoneQueue(state, getZoneKey(node.labels));
  const waiting = queue.waitingEntry(node.name);
  if (waiting !== undefined && (waiting.uid === node.uid || waiting.claim !== undefined)) return false;
  const taint = status === 'False' ? NotReadyTaintTemplate : UnreachableTaintTemplate;
  if (!taintExists(node.taints, taint)) queue.remove(node.name);
  return queue.add(node.name, node.uid, now);
}

/**
 * upstream processTaintBaseEviction. It acts on the OBSERVED Ready condition (before this pass marked
 * it Unknown), so a node the pass itself just marked Unknown is queued one monitor period later.
 * Upstream quirk (#120815): reproduced on purpose; PR #120816 would use the current condition.
 */
export function* processTaintBaseEviction(
  state: WorkingState,
  node: Node,
  observedReadyCondition: NodeCondition,
  now: EpochMillis,
): Pass<void> {
  if (processTaintBaseEvictionWithoutWrites(state, node, observedReadyCondition, now)) return;
  switch (observedReadyCondition.status) {
    case 'False':
      // A NotReady node tainted unreachable gets the not-ready taint at once: not rate limited.
      yield* swapNodeControllerTaint(
        node,
        [NotReadyTaintTemplate],
        [UnreachableTaintTemplate],
        now,
        'processTaintBaseEviction: Ready=False on a node tainted unreachable',
      );
      return;
    case 'Unknown':
      yield* swapNodeControllerTaint(
        node,
        [UnreachableTaintTemplate],
        [NotReadyTaintTemplate],
        now,
        'processTaintBaseEviction: Ready=Unknown on a node tainted not-ready',
      );
      return;
    case 'True':
      yield* markNodeAsReachable(state, node, 'processTaintBaseEviction: Ready=True');
      return;
  }
}

/**
 * processTaintBaseEviction's cases that write nothing to the cluster, done in place: queue a node for
 * tainting, or forget a Ready one without taints of ours in its zone's queue. True when done; false,
 * with nothing changed, when the node needs a taint write (processTaintBaseEviction does it). Most nodes
 * on most passes are done here, without a generator each: those were a sixth of what a large
 * simulation allocated.
 */
export function processTaintBaseEvictionWithoutWrites(
  state: WorkingState,
  node: Node,
  observedReadyCondition: NodeCondition,
  now: EpochMillis,
): boolean {
  switch (observedReadyCondition.status) {
    case 'False':
      if (taintExists(node.taints, UnreachableTaintTemplate)) return false;
      markNodeForTainting(state, node, 'False', now);
      return true;
    case 'Unknown':
      if (taintExists(node.taints, NotReadyTaintTemplate)) return false;
      markNodeForTainting(state, node, 'Unknown', now);
      return true;
    case 'True':
      // markNodeAsReachable without a taint to remove: no API call, the queue entry goes.
      if (ControllerNoExecuteTaints.some((t) => taintExists(node.taints, t))) return false;
      forgetInZoneQueue(state, node);
      return true;
    default:
      return true;
  }
}

/** What doNoExecuteTaintingPass does with one due queue item. */
export type NoExecuteTaintDecision =
  | { readonly kind: 'done'; readonly why: string }
  | { readonly kind: 'retry'; readonly wait: Millis; readonly why: string }
  | { readonly kind: 'taint'; readonly add: Taint; readonly opposite: Taint; readonly why: string };

/** Retry delay upstream uses when a queued node has no Ready condition. */
export const NoReadyConditionRetryDelay: Millis = 50;

/**
 * The per-item decision of upstream doNoExecuteTaintingPass. The taint follows the node's Ready status
 * at tainting time (from the node cache), not at the time it was queued.
 */
export function decideNoExecuteTaint(node: Node | undefined): NoExecuteTaintDecision {
  if (node === undefined) return { kind: 'done', why: 'node no longer exists' };
  const ready = getNodeCondition(node.conditions, NodeReady);
  if (ready === undefined) {
    return { kind: 'retry', wait: NoReadyConditionRetryDelay, why: 'node has no Ready condition' };
  }
  switch (ready.status) {
    case 'False':
      return {
        kind: 'taint',
        add: NotReadyTaintTemplate,
        opposite: UnreachableTaintTemplate,
        why: 'doNoExecuteTaintingPass: Ready=False',
      };
    case 'Unknown':
      return {
        kind: 'taint',
        add: UnreachableTaintTemplate,
        opposite: NotReadyTaintTemplate,
        why: 'doNoExecuteTaintingPass: Ready=Unknown',
      };
    case 'True':
      return { kind: 'done', why: 'node is ready now, ignoring taint request' };
  }
}

/**
 * The NoExecute taint decideNoExecuteTaint would write is on the node already, and the opposite one is
 * not: swapping would change nothing. Not upstream: the drainer then completes the item without taking
 * a token. Upstream re-queues a tainted node only when its taint was removed by hand (#89012); here a
 * monitor pass that still has the node's copy from before the taint re-queues it too, and a token spent
 * on it would delay the zone's next real taint by a whole token period (docs/upstream-deviations.md).
 */
export function noExecuteTaintInPlace(node: Node | undefined): boolean {
  const decision = decideNoExecuteTaint(node);
  return (
    node !== undefined &&
    decision.kind === 'taint' &&
    taintExists(node.taints, decision.add) &&
    !taintExists(node.taints, decision.opposite)
  );
}

/** What happened to one due queue item of doNoExecuteTaintingPass. */
export interface NoExecuteTaintItemResult {
  readonly decision: NoExecuteTaintDecision;
  /** How the queue records it (completeTry). */
  readonly result: TryResult;
  /** The NoExecute taint was written: one more node_collector_evictions_total in the item's zone. */
  readonly tainted: boolean;
}

/**
 * The body of upstream doNoExecuteTaintingPass's Try callback for one item whose token was already
 * taken: decide on the node as the cache has it now, swap the taint, and say how the queue records the
 * outcome. doNoExecuteTaintingPass and the drainer (which takes the token with a conditional write
 * first, shared/app/drainer.ts) both run it.
 */
export function* processNoExecuteTaintItem(
  item: TimedValue,
  node: Node | undefined,
  now: EpochMillis,
): Pass<NoExecuteTaintItemResult> {
  const decision = decideNoExecuteTaint(node);
  if (decision.kind === 'done') return { decision, result: { done: true }, tainted: false };
  if (decision.kind === 'retry') {
    return { decision, result: { done: false, wait: decision.wait }, tainted: false };
  }
  const written = yield* swapNodeControllerTaint(
    { name: item.value },
    [decision.add],
    [decision.opposite],
    now,
    decision.why,
  );
  // A failed write is retried on the next pass (upstream: ProcessAt = now + 1ns).
  // Counted only when the taint was written: a node another drainer tainted meanwhile is done, uncounted.
  const tainted = written.ok && written.unchanged !== true;
  return { decision, result: written.ok ? { done: true } : { done: false, wait: 0 }, tainted };
}

export interface NoExecuteTaintingResult {
  readonly zoneQueues: ReadonlyMap<string, RateLimitedTimedQueue>;
  /** node_collector_evictions_total increments: successful NoExecute taints per zone. */
  readonly evictions: ReadonlyMap<string, number>;
}

/**
 * upstream doNoExecuteTaintingPass (every NodeEvictionPeriod upstream; the drainer here): drain each
 * zone's queue under its token bucket. `nodes` is the node cache (upstream's nodeLister).
 *
 * `clock` is read once per queue item, as upstream reads time.Now() in each Try iteration: the bucket
 * refills while the loop runs, which matters for high rates (upstream tests use 100000 qps). A
 * driver in virtual time passes a constant clock; the drainer passes its real clock.
 *
 * Test harness: the drainer (shared/app/drainer.ts) drains one zone at a time with its own claims and
 * conditional writes, item by item through the helpers this pass is built from; this whole pass over
 * every zone is what upstream's table tests drive (test/helpers/controllerHarness.ts), so it stays
 * whole and exported for them.
 */
export function* doNoExecuteTaintingPass(
  zoneQueues: ReadonlyMap<string, RateLimitedTimedQueue>,
  nodes: ReadonlyMap<string, Node>,
  clock: () => EpochMillis,
): Pass<NoExecuteTaintingResult> {
  const queues = new Map(zoneQueues);
  const evictions = new Map<string, number>();
  for (const zone of [...queues.keys()].sort()) {
    let queue = queues.get(zone);
    for (;;) {
      if (queue === undefined) break;
      const now = clock();
      const step = tryNext(queue, now);
      queue = step.queue;
      if (step.item === undefined) break;
      const processed = yield* processNoExecuteTaintItem(step.item, nodes.get(step.item.value), now);
      if (processed.tainted) evictions.set(zone, (evictions.get(zone) ?? 0) + 1);
      queue = completeTry(queue, step.item, processed.result, now);
    }
    if (queue !== undefined) queues.set(zone, queue);
  }
  return { zoneQueues: queues, evictions };
}
