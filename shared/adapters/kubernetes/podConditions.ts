// Port of UpdatePodCondition (pkg/api/v1/pod/util.go), the helper behind MarkPodsNotReady and
// addConditionAndDeletePod: set a condition on a pod status, stamping lastTransitionTime with `now` only
// when the status changes, and report whether anything changed (no change: upstream writes nothing and
// records no event). Pure; it works on the API's condition objects because the adapter writes the whole
// condition list back.
import type { V1PodCondition } from '@kubernetes/client-node';
import type { EpochMillis } from '../../domain/types.js';
import { formatKubeTime } from './mapping.js';

/** A pod condition as JSON on the wire: times are RFC 3339 strings (or the client's Date objects). */
export type PodConditionJson = Omit<V1PodCondition, 'lastProbeTime' | 'lastTransitionTime'> & {
  lastProbeTime?: string | Date | null;
  lastTransitionTime?: string | Date | null;
};

/** The condition to set: everything but lastTransitionTime, which UpdatePodCondition decides. */
export type PodConditionUpdate = Omit<PodConditionJson, 'lastTransitionTime'>;

function instant(t: string | Date | null | undefined): number | undefined {
  if (t === null || t === undefined) return undefined;
  return new Date(t).getTime();
}

/**
 * upstream UpdatePodCondition: the condition list with `condition` set (appended when the type is new),
 * and whether it changed. lastTransitionTime is `now` when the status changes, else the old one kept.
 *
 * @example
 * updatePodCondition([{ type: 'Ready', status: 'True' }], { type: 'Ready', status: 'False' }, now).changed; // true
 */
export function updatePodCondition(
  conditions: readonly PodConditionJson[],
  condition: PodConditionUpdate,
  now: EpochMillis,
): { conditions: PodConditionJson[]; changed: boolean } {
  const index = conditions.findIndex((c) => c.type === condition.type);
  const old = conditions[index];
  if (old === undefined) {
    return {
      conditions: [...conditions, { ...condition, lastTransitionTime: formatKubeTime(now) }],
      changed: true,
    };
  }
  const lastTransitionTime =
    condition.status === old.status ? (old.lastTransitionTime ?? undefined) : formatKubeTime(now);
  const next: PodConditionJson = { ...condition };
  if (lastTransitionTime !== undefined) next.lastTransitionTime = lastTransitionTime;
  // Upstream compares status, reason, message and both times (metav1.Time by instant, a zero time
  // equals a missing one); observedGeneration is carried but not compared.
  const isEqual =
    condition.status === old.status &&
    (condition.reason ?? '') === (old.reason ?? '') &&
    (condition.message ?? '') === (old.message ?? '') &&
    instant(condition.lastProbeTime) === instant(old.lastProbeTime) &&
    instant(next.lastTransitionTime) === instant(old.lastTransitionTime);
  const updated = [...conditions];
  updated[index] = next;
  return { conditions: updated, changed: !isEqual };
}
