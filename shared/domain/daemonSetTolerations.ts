// The tolerations the DaemonSet controller gives every pod it creates. Ports:
// - `AddOrUpdateDaemonPodTolerations` (pkg/controller/daemon/util/daemonset_util.go), applied by
//   CreatePodTemplate to the template before the pod is created, so these come before anything the
//   DefaultTolerationSeconds admission plugin appends (which then appends nothing: the pod already
//   tolerates not-ready and unreachable NoExecute, forever);
// - `AddOrUpdateTolerationInPodSpec` (pkg/apis/core/v1/helper/helpers.go);
// - `Toleration.MatchToleration` (staging/src/k8s.io/api/core/v1/toleration.go).
// Differences: pure; returns a new list instead of mutating the PodSpec. Absent strings stand for "".
import {
  TaintNodeDiskPressure,
  TaintNodeMemoryPressure,
  TaintNodeNetworkUnavailable,
  TaintNodeNotReady,
  TaintNodePIDPressure,
  TaintNodeUnreachable,
  TaintNodeUnschedulable,
} from './taints.js';
import type { Toleration } from './types.js';

/**
 * Upstream MatchToleration: tolerations are unique by <key, effect, operator, value>; two with the same
 * combination match (tolerationSeconds is not compared).
 */
export function matchToleration(a: Toleration, b: Toleration): boolean {
  return (
    (a.key ?? '') === (b.key ?? '') &&
    (a.effect ?? '') === (b.effect ?? '') &&
    (a.operator ?? '') === (b.operator ?? '') &&
    (a.value ?? '') === (b.value ?? '')
  );
}

/** Semantic.DeepEqual of two tolerations: every field, tolerationSeconds' presence included. */
function tolerationsEqual(a: Toleration, b: Toleration): boolean {
  return matchToleration(a, b) && a.tolerationSeconds === b.tolerationSeconds;
}

/**
 * Upstream AddOrUpdateTolerationInPodSpec: replaces, in place, every toleration that matches
 * `toleration` (MatchToleration), or appends it when none does. Nothing changes when a matching one
 * is already equal to it (upstream returns false at the first such one, even if an earlier matching
 * entry was different).
 */
export function addOrUpdateTolerationInPodSpec(
  tolerations: readonly Toleration[],
  toleration: Toleration,
): { readonly tolerations: Toleration[]; readonly updated: boolean } {
  const next: Toleration[] = [];
  let updated = false;
  for (const existing of tolerations) {
    if (matchToleration(toleration, existing)) {
      if (tolerationsEqual(toleration, existing)) return { tolerations: [...tolerations], updated: false };
      next.push({ ...toleration });
      updated = true;
      continue;
    }
    next.push(existing);
  }
  if (!updated) next.push({ ...toleration });
  return { tolerations: next, updated: true };
}

/**
 * The tolerations AddOrUpdateDaemonPodTolerations applies, in its order: not-ready and unreachable
 * NoExecute forever ("DaemonSet pods shouldn't be deleted by NodeController in case of node
 * problems"), then the TaintNodesByCondition NoSchedule ones (disk, memory, PID pressure,
 * unschedulable), and network-unavailable only for host-network pods.
 */
export function daemonPodTolerations(hostNetwork: boolean): readonly Toleration[] {
  const exists = (key: string, effect: 'NoExecute' | 'NoSchedule'): Toleration => ({
    key,
    operator: 'Exists',
    effect,
  });
  return [
    exists(TaintNodeNotReady, 'NoExecute'),
    exists(TaintNodeUnreachable, 'NoExecute'),
    exists(TaintNodeDiskPressure, 'NoSchedule'),
    exists(TaintNodeMemoryPressure, 'NoSchedule'),
    exists(TaintNodePIDPressure, 'NoSchedule'),
    exists(TaintNodeUnschedulable, 'NoSchedule'),
    ...(hostNetwork ? [exists(TaintNodeNetworkUnavailable, 'NoSchedule')] : []),
  ];
}

/**
 * Upstream AddOrUpdateDaemonPodTolerations: the pod template's tolerations with the DaemonSet ones
 * added or updated.
 *
 * @example
 * addOrUpdateDaemonPodTolerations([], { hostNetwork: false }).map((t) => `${t.key}:${t.effect}`);
 * // ['node.kubernetes.io/not-ready:NoExecute', 'node.kubernetes.io/unreachable:NoExecute',
 * //  'node.kubernetes.io/disk-pressure:NoSchedule', 'node.kubernetes.io/memory-pressure:NoSchedule',
 * //  'node.kubernetes.io/pid-pressure:NoSchedule', 'node.kubernetes.io/unschedulable:NoSchedule']
 */
export function addOrUpdateDaemonPodTolerations(
  tolerations: readonly Toleration[],
  { hostNetwork = false }: { readonly hostNetwork?: boolean } = {},
): Toleration[] {
  let result: Toleration[] = [...tolerations];
  for (const toleration of daemonPodTolerations(hostNetwork)) {
    result = addOrUpdateTolerationInPodSpec(result, toleration).tolerations;
  }
  return result;
}
