// The cluster adapter's pod writes (cluster.ts says how each stays safe against concurrent writers):
// MarkPodsNotReady and SetPodTerminationReason (pkg/controller/util/node/controller_utils.go), the
// DeletePods delete, and addConditionAndDeletePod (pkg/controller/tainteviction/taint_eviction.go).
import { PatchStrategy, V1DeleteOptions, V1Preconditions } from '@kubernetes/client-node';
import type { WriteResult } from '../../domain/effects.js';
import type { KubeEvent } from '../../domain/kubeEvents.js';
import { aggregateErrorMessage, markPodsNotReadyOutcome } from '../../domain/podStatus.js';
import { disruptionTargetCondition } from '../../domain/taintEviction.js';
import { podKey, type Pod } from '../../domain/types.js';
import type { DisruptionTargetWrite, TaintEvictionDeleteResult } from '../../ports/cluster.js';
import { fail, OK, quote, type ApiContext } from './apiCalls.js';
import { updatePodCondition } from './podConditions.js';

/** GET of a pod, whole (the writes need its resourceVersion, UID and conditions). */
export function readPod(api: ApiContext, namespace: string, name: string, signal?: AbortSignal) {
  return api.call(`get pod ${quote(`${namespace}/${name}`)}`, signal, (o) =>
    api.core.readNamespacedPod({ namespace, name }, o),
  );
}

function mergePatchPodStatus(
  api: ApiContext,
  action: string,
  namespace: string,
  name: string,
  body: object,
  signal?: AbortSignal,
) {
  return api.call(
    action,
    signal,
    (o) => api.core.patchNamespacedPodStatus({ namespace, name, body }, o),
    PatchStrategy.MergePatch,
  );
}

/** upstream MarkPodsNotReady's per-pod step; 'unchanged' means no write and no event. */
async function markPodNotReady(
  api: ApiContext,
  pod: Pod,
  nodeName: string,
  signal?: AbortSignal,
): Promise<WriteResult | 'unchanged'> {
  const action = `set Ready=False on pod ${quote(podKey(pod))}`;
  const got = await readPod(api, pod.namespace, pod.name, signal);
  if (!got.ok) return got.reason === 'NotFound' ? fail('NotFound', `${action}: ${got.message}`) : got;
  // upstream's defensive check: only pods bound to this node.
  if (got.value.spec?.nodeName !== nodeName) return 'unchanged';
  const conditions = got.value.status?.conditions ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');
  if (ready === undefined) return 'unchanged';
  const { lastTransitionTime: _, ...update } = ready;
  const result = updatePodCondition(conditions, { ...update, status: 'False' }, api.clock.now());
  if (!result.changed) return 'unchanged';
  const body = {
    metadata: { resourceVersion: got.value.metadata?.resourceVersion },
    status: { conditions: result.conditions },
  };
  const patched = await mergePatchPodStatus(api, action, pod.namespace, pod.name, body, signal);
  return patched.ok ? OK : patched;
}

export async function markPodsNotReady(
  api: ApiContext,
  recordEvent: (event: KubeEvent, signal?: AbortSignal) => Promise<WriteResult>,
  nodeName: string,
  pods: readonly Pod[],
  signal?: AbortSignal,
): Promise<WriteResult> {
  const errors: string[] = [];
  for (const pod of pods) {
    const result = await markPodNotReady(api, pod, nodeName, signal);
    if (result === 'unchanged') continue;
    // Upstream order: the pod's write, then its Warning event (also after a failed write, not after NotFound).
    const outcome = markPodsNotReadyOutcome([pod], [result]);
    if (outcome.error !== undefined) errors.push(outcome.error);
    for (const event of outcome.events) await recordEvent(event, signal);
  }
  const error = aggregateErrorMessage(errors);
  return error === undefined ? OK : fail('Failed', error);
}

export async function setPodTerminationReason(
  api: ApiContext,
  pod: Pod,
  reason: string,
  message: string,
  signal?: AbortSignal,
): Promise<WriteResult> {
  const patched = await mergePatchPodStatus(
    api,
    `set status reason ${reason} on pod ${quote(podKey(pod))}`,
    pod.namespace,
    pod.name,
    { status: { reason, message } },
    signal,
  );
  return patched.ok ? OK : patched;
}

export async function deletePod(
  api: ApiContext,
  namespace: string,
  name: string,
  uid: string | undefined,
  signal?: AbortSignal,
): Promise<WriteResult> {
  // Default grace period (upstream DeletePods and addConditionAndDeletePod). Deviation: a UID
  // precondition, so a decision about one pod never deletes another re-created under its name (events
  // arrive late and out of order here); the API answers 409 Conflict when the UID differs.
  const deleted = await api.call(`delete pod ${quote(`${namespace}/${name}`)}`, signal, (o) =>
    api.core.deleteNamespacedPod(
      {
        namespace,
        name,
        // The models are classes whose serializer reads plain fields (as for the Event in cluster.ts).
        ...(uid !== undefined && {
          body: Object.assign(new V1DeleteOptions(), {
            preconditions: Object.assign(new V1Preconditions(), { uid }),
          }),
        }),
      },
      o,
    ),
  );
  return deleted.ok ? OK : deleted;
}

export async function deletePodForTaintEviction(
  api: ApiContext,
  namespace: string,
  name: string,
  uid: string | undefined,
  signal?: AbortSignal,
  disruptionTarget: DisruptionTargetWrite = 'withObservedGeneration',
): Promise<TaintEvictionDeleteResult> {
  const gone = { ok: true, podWasGone: true } as const;
  const got = await readPod(api, namespace, name, signal);
  if (!got.ok) return got.reason === 'NotFound' ? gone : got;
  // Another pod of the same name (the one decided about was deleted and re-created): not ours to touch.
  if (uid !== undefined && got.value.metadata?.uid !== uid) return gone;
  // Already terminating (an earlier attempt, or someone else, deleted it): a second DELETE changes
  // nothing but another deletion counted; done.
  if (got.value.metadata?.deletionTimestamp !== undefined) return gone;
  const conditions = got.value.status?.conditions ?? [];
  // PodDisruptionConditions off (v1.25): straight to the delete.
  const generation = got.value.metadata?.generation;
  const condition = {
    ...disruptionTargetCondition,
    ...(disruptionTarget === 'withObservedGeneration' &&
      generation !== undefined && { observedGeneration: generation }),
  };
  const result =
    disruptionTarget === 'none'
      ? { changed: false, conditions }
      : updatePodCondition(conditions, condition, api.clock.now());
  if (result.changed) {
    // The UID pins the pod we read (upstream PatchPodStatus); the resourceVersion keeps a concurrent
    // condition change from being overwritten by our whole-list merge patch.
    const body = {
      metadata: { uid: got.value.metadata?.uid, resourceVersion: got.value.metadata?.resourceVersion },
      status: { conditions: result.conditions },
    };
    const patched = await mergePatchPodStatus(
      api,
      `add condition ${disruptionTargetCondition.type} to pod ${quote(`${namespace}/${name}`)}`,
      namespace,
      name,
      body,
      signal,
    );
    if (!patched.ok) return patched.reason === 'NotFound' ? gone : patched;
  }
  const deleted = await deletePod(api, namespace, name, uid ?? got.value.metadata?.uid, signal);
  if (deleted.ok) return { ok: true, podWasGone: false };
  // NotFound: gone meanwhile; Conflict: the UID precondition failed, re-created meanwhile.
  return deleted.reason === 'NotFound' || deleted.reason === 'Conflict' ? gone : deleted;
}
