// Port of the taint helpers the NodeLifecycleController and the taint eviction controller use:
// - constants, templates and condition maps of pkg/controller/nodelifecycle/node_lifecycle_controller.go
//   (and the v1 taint key names of k8s.io/api/core/v1 well_known_taints.go);
// - TaintExists, TaintSetDiff, AddOrUpdateTaint, DeleteTaint/RemoveTaint of pkg/util/taints/taints.go;
// - SwapNodeControllerTaint of pkg/controller/util/node/controller_utils.go, together with
//   AddOrUpdateTaintOnNode / RemoveTaintOffNode of pkg/controller/controller_utils.go;
// - doNoScheduleTaintingPass of the NLC;
// - getNoExecuteTaints of pkg/controller/tainteviction/taint_eviction.go.
// What differs: everything here is pure. taintsAfterSwap returns the node's resulting taint
// list; the adapter writes it with a resourceVersion precondition and re-runs on conflict, which
// stands in for upstream's RetryOnConflict GET + strategic-merge patch. TimeAdded comes from the
// `now` argument instead of upstream's real clock (metav1.Now()), see docs/upstream.md#quirk-27.
import type { ConditionStatus, EpochMillis, Node, Taint } from './types.js';
import {
  NodeDiskPressure,
  NodeMemoryPressure,
  NodeNetworkUnavailable,
  NodePIDPressure,
  NodeReady,
} from './types.js';

// Upstream v1 taint keys (k8s.io/api/core/v1), verbatim.
export const TaintNodeNotReady = 'node.kubernetes.io/not-ready';
export const TaintNodeUnreachable = 'node.kubernetes.io/unreachable';
export const TaintNodeUnschedulable = 'node.kubernetes.io/unschedulable';
export const TaintNodeMemoryPressure = 'node.kubernetes.io/memory-pressure';
export const TaintNodeDiskPressure = 'node.kubernetes.io/disk-pressure';
export const TaintNodeNetworkUnavailable = 'node.kubernetes.io/network-unavailable';
export const TaintNodePIDPressure = 'node.kubernetes.io/pid-pressure';

/** The NoExecute taint for a node whose Ready condition is Unknown (upstream UnreachableTaintTemplate). */
export const UnreachableTaintTemplate: Taint = Object.freeze({
  key: TaintNodeUnreachable,
  effect: 'NoExecute',
});
/** The NoExecute taint for a node whose Ready condition is False (upstream NotReadyTaintTemplate). */
export const NotReadyTaintTemplate: Taint = Object.freeze({ key: TaintNodeNotReady, effect: 'NoExecute' });
/** The NoSchedule taint doNoScheduleTaintingPass keeps in step with spec.unschedulable. */
export const UnschedulableTaint: Taint = Object.freeze({ key: TaintNodeUnschedulable, effect: 'NoSchedule' });

/**
 * Upstream nodeConditionToTaintKeyStatusMap: which NoSchedule taint a condition in a given status
 * asks for. Only the statuses listed map to a taint: Ready=True, a missing Ready, or an Unknown
 * pressure condition give none. A Map, so that a condition type such as "constructor" can never hit
 * an Object prototype property.
 */
export const nodeConditionToTaintKeyStatusMap: ReadonlyMap<
  string,
  ReadonlyMap<ConditionStatus, string>
> = new Map<string, ReadonlyMap<ConditionStatus, string>>([
  [
    NodeReady,
    new Map<ConditionStatus, string>([
      ['False', TaintNodeNotReady],
      ['Unknown', TaintNodeUnreachable],
    ]),
  ],
  [NodeMemoryPressure, new Map<ConditionStatus, string>([['True', TaintNodeMemoryPressure]])],
  [NodeDiskPressure, new Map<ConditionStatus, string>([['True', TaintNodeDiskPressure]])],
  [NodeNetworkUnavailable, new Map<ConditionStatus, string>([['True', TaintNodeNetworkUnavailable]])],
  [NodePIDPressure, new Map<ConditionStatus, string>([['True', TaintNodePIDPressure]])],
]);

/**
 * Upstream taintKeyToNodeConditionMap: the inverse of nodeConditionToTaintKeyStatusMap (upstream
 * builds it in init()). Only used as a filter: the condition taints this controller owns.
 */
export const taintKeyToNodeConditionMap: ReadonlyMap<string, string> = new Map<string, string>(
  [...nodeConditionToTaintKeyStatusMap].flatMap(([conditionType, byStatus]) =>
    [...byStatus.values()].map((taintKey): [string, string] => [taintKey, conditionType]),
  ),
);

/** Upstream Taint.MatchTaint: same key and same effect. Value and timeAdded are ignored. */
export function matchTaint(a: Taint, b: Taint): boolean {
  return a.key === b.key && a.effect === b.effect;
}

/**
 * helper.Semantic.DeepEqual on two taints. Go's Value is a plain string, so an absent value equals
 * "". TimeAdded is a pointer upstream: absent differs from any time, and two times must be equal.
 */
export function taintSemanticallyEqual(a: Taint, b: Taint): boolean {
  return matchTaint(a, b) && (a.value ?? '') === (b.value ?? '') && a.timeAdded === b.timeAdded;
}

/** Upstream TaintExists: whether a taint with the same key and effect is in the list. */
export function taintExists(taints: readonly Taint[], taint: Taint): boolean {
  return taints.some((t) => matchTaint(t, taint));
}

/**
 * Upstream TaintSetDiff(t1, t2): `toAdd` are the taints of taintsNew missing (by key+effect) from
 * taintsOld, `toRemove` the taints of taintsOld missing from taintsNew. Duplicates are kept, as upstream.
 */
export function taintSetDiff(
  taintsNew: readonly Taint[],
  taintsOld: readonly Taint[],
): { toAdd: Taint[]; toRemove: Taint[] } {
  return {
    toAdd: taintsNew.filter((t) => !taintExists(taintsOld, t)),
    toRemove: taintsOld.filter((t) => !taintExists(taintsNew, t)),
  };
}

/**
 * Upstream AddOrUpdateTaint: a taint with the same key+effect is replaced unless it is semantically
 * equal (a different timeAdded or value counts as different); otherwise the taint is appended.
 * `updated` is false when the list is unchanged.
 */
export function addOrUpdateTaint(
  taints: readonly Taint[],
  taint: Taint,
): { taints: Taint[]; updated: boolean } {
  const newTaints: Taint[] = [];
  let updated = false;
  for (const existing of taints) {
    if (matchTaint(taint, existing)) {
      // Upstream returns the node unchanged as soon as it meets an equal taint, even after having
      // replaced an earlier duplicate; the API server rejects duplicate key+effect pairs anyway.
      if (taintSemanticallyEqual(taint, existing)) return { taints: [...taints], updated: false };
      newTaints.push(taint);
      updated = true;
      continue;
    }
    newTaints.push(existing);
  }
  if (!updated) newTaints.push(taint);
  return { taints: newTaints, updated: true };
}

/**
 * Upstream RemoveTaint (through DeleteTaint): removes every taint with the same key+effect.
 * `updated` is false when none was there.
 */
export function removeTaint(taints: readonly Taint[], taint: Taint): { taints: Taint[]; updated: boolean } {
  if (!taintExists(taints, taint)) return { taints: [...taints], updated: false };
  return { taints: taints.filter((t) => !matchTaint(taint, t)), updated: true };
}

/** Upstream getNoExecuteTaints (taint eviction controller): the NoExecute taints, in order. */
export function getNoExecuteTaints(taints: readonly Taint[]): Taint[] {
  return taints.filter((t) => t.effect === 'NoExecute');
}

/** The arguments of one upstream SwapNodeControllerTaint call. */
export interface TaintSwap {
  readonly toAdd: readonly Taint[];
  readonly toRemove: readonly Taint[];
}

/**
 * The node's taint list after upstream SwapNodeControllerTaint(toAdd, toRemove): every taint of
 * toAdd gets timeAdded = now (upstream stamps all of them, NoSchedule ones included) and is
 * added-or-updated in order (AddOrUpdateTaintOnNode), then every taint matching one of toRemove by
 * key+effect is removed (RemoveTaintOffNode).
 * The result is what the adapter writes, with a resourceVersion precondition; when it is
 * element-wise semantically equal to `taints`, upstream would have made no API call. (The write itself,
 * as the passes decide it, is taintBasedEviction.ts swapNodeControllerTaint: one upstream name, one
 * function.)
 */
export function taintsAfterSwap(
  taints: readonly Taint[],
  toAdd: readonly Taint[],
  toRemove: readonly Taint[],
  now: EpochMillis,
): Taint[] {
  let result: Taint[] = [...taints];
  for (const taint of toAdd) result = addOrUpdateTaint(result, { ...taint, timeAdded: now }).taints;
  for (const taint of toRemove) result = removeTaint(result, taint).taints;
  return result;
}

/**
 * Whether this controller may add or remove the taint: the NoSchedule condition taints and
 * unschedulable (doNoScheduleTaintingPass) and the not-ready/unreachable NoExecute taints
 * (doNoExecuteTaintingPass, processTaintBaseEviction, markNodeAsReachable). Adapters assert it so
 * that a write never clobbers a taint someone else owns.
 */
export function ownedByNodeController(taint: Taint): boolean {
  switch (taint.effect) {
    case 'NoSchedule':
      return taint.key === TaintNodeUnschedulable || taintKeyToNodeConditionMap.has(taint.key);
    case 'NoExecute':
      return taint.key === TaintNodeNotReady || taint.key === TaintNodeUnreachable;
    case 'PreferNoSchedule':
      return false;
  }
}

/**
 * Upstream doNoScheduleTaintingPass: the NoSchedule taints the node's conditions and
 * spec.unschedulable ask for, diffed (by key+effect) against the node's condition/unschedulable
 * NoSchedule taints. Undefined when there is nothing to change (upstream returns early and makes
 * no call). Taints with other keys or other effects are never compared, so never touched.
 * Not rate limited: upstream runs it on every node Add/Update event.
 */
export function doNoScheduleTaintingPass(node: Node): TaintSwap | undefined {
  const taints = noScheduleTaintsFor(node);
  const { toAdd, toRemove } = taintSetDiff(taints, node.taints.filter(isNoScheduleConditionTaint));
  if (toAdd.length === 0 && toRemove.length === 0) return undefined;
  return { toAdd, toRemove };
}

/** The NoSchedule taints the node's conditions and spec.unschedulable ask for, in condition order. */
function noScheduleTaintsFor(node: Pick<Node, 'conditions' | 'unschedulable'>): Taint[] {
  const taints: Taint[] = [];
  for (const condition of node.conditions) {
    const taintKey = nodeConditionToTaintKeyStatusMap.get(condition.type)?.get(condition.status);
    if (taintKey !== undefined) taints.push({ key: taintKey, effect: 'NoSchedule' });
  }
  if (node.unschedulable) taints.push({ key: TaintNodeUnschedulable, effect: 'NoSchedule' });
  return taints;
}

/** Only NoSchedule taints with a condition key or the unschedulable key are doNoScheduleTaintingPass's. */
const isNoScheduleConditionTaint = (t: Taint): boolean =>
  t.effect === 'NoSchedule' && (t.key === TaintNodeUnschedulable || taintKeyToNodeConditionMap.has(t.key));

/**
 * Shadow mode (not upstream): the node with the NoSchedule condition taints this controller would have
 * given it by `previous` (the copy before this change) in place of the ones it has, which another
 * controller wrote (this one never writes). doNoScheduleTaintingPass on it decides what this controller
 * would write for this change, whether or not the other controller was first.
 *
 * @example
 * doNoScheduleTaintingPass(withOwnNoScheduleTaints(nodeNowReady, copyWhenUnknown)); // remove unreachable:NoSchedule
 */
export function withOwnNoScheduleTaints(node: Node, previous: Node): Node {
  return {
    ...node,
    taints: [...node.taints.filter((t) => !isNoScheduleConditionTaint(t)), ...noScheduleTaintsFor(previous)],
  };
}
