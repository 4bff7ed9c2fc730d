// The cluster adapter's node writes (cluster.ts says how each stays safe against concurrent writers):
// the status patch of tryUpdateNodeHealth, the taint swap (AddOrUpdateTaintOnNode / RemoveTaintOffNode /
// PatchNodeTaints) and AddOrUpdateLabelsOnNode.
import { PatchStrategy } from '@kubernetes/client-node';
import type { UpdateNodeStatus, UpdateNodeStatusResult, WriteResult } from '../../domain/effects.js';
import {
  ownedByNodeController,
  taintsAfterSwap,
  taintSemanticallyEqual,
  type TaintSwap,
} from '../../domain/taints.js';
import type { Taint } from '../../domain/types.js';
import { TaintOwnershipError } from '../../errors.js';
import { fail, OK, quote, toFailure, type ApiContext } from './apiCalls.js';
import { allTaintsFromV1, isTaintEffect, nodeConditionToPatch, nodeFromV1, taintToJson } from './mapping.js';
import { retryOnConflict } from './retryOnConflict.js';

function sameTaints(a: readonly Taint[], b: readonly Taint[]): boolean {
  return a.length === b.length && a.every((t, i) => b[i] !== undefined && taintSemanticallyEqual(t, b[i]));
}

/** GET of a node, whole (the writes need its resourceVersion and every taint). */
export function readNode(api: ApiContext, name: string, signal?: AbortSignal) {
  return api.call(`get node ${quote(name)}`, signal, (o) => api.core.readNode({ name }, o));
}

export async function updateNodeStatus(
  api: ApiContext,
  effect: UpdateNodeStatus,
  signal?: AbortSignal,
): Promise<UpdateNodeStatusResult> {
  const name = effect.node;
  let resourceVersion = effect.resourceVersion;
  if (resourceVersion === undefined) {
    // No decision-time version given: take the current one, so the write is still conditional.
    const got = await readNode(api, name, signal);
    if (!got.ok) return got;
    resourceVersion = got.value.metadata?.resourceVersion;
  }
  const body = {
    ...(resourceVersion === undefined ? {} : { metadata: { resourceVersion } }),
    status: { conditions: effect.conditions.map(nodeConditionToPatch) },
  };
  const patched = await api.call(
    `update status of node ${quote(name)}`,
    signal,
    (o) => api.core.patchNodeStatus({ name, body }, o),
    PatchStrategy.StrategicMergePatch,
  );
  if (!patched.ok) return patched;
  // The written node, so the monitor keeps an up-to-date copy; one it cannot read is simply not kept.
  const written = nodeFromV1(patched.value);
  return written.ok ? { ok: true, node: written.value } : OK;
}

export async function swapNodeTaints(
  api: ApiContext,
  name: string,
  swap: TaintSwap,
  signal?: AbortSignal,
): Promise<WriteResult> {
  const { clock, sleep, random, taintBackoff } = api;
  // The invariant, checked before any request: only the controller's own taints are added or removed.
  for (const taint of [...swap.toAdd, ...swap.toRemove]) {
    if (!ownedByNodeController(taint)) throw new TaintOwnershipError(name, taint);
  }
  // upstream AddOrUpdateTaintOnNode / RemoveTaintOffNode: nothing to do, no API call.
  if (swap.toAdd.length === 0 && swap.toRemove.length === 0) return OK;
  // The domain stamps every taint of one swap with its pass's `now`; keep it rather than our clock.
  const now = swap.toAdd.find((t) => t.timeAdded !== undefined)?.timeAdded ?? clock.now();
  const action = `update taints of node ${quote(name)}`;

  const attempt = async (): Promise<WriteResult> => {
    const got = await readNode(api, name, signal);
    if (!got.ok) return got;
    const node = nodeFromV1(got.value);
    if (!node.ok) return fail('Failed', `${action}: ${node.message}`);
    // The whole list, not the node's bounded copy of it: every taint goes back.
    const raw = got.value.spec?.taints ?? [];
    const current = allTaintsFromV1(raw);
    const next = taintsAfterSwap(current, swap.toAdd, swap.toRemove, now);
    // Like upstream, no write when the list would not change.
    if (sameTaints(next, current)) return { ok: true, unchanged: true };
    // Taints we leave alone go back exactly as the server sent them. A taint whose effect the domain
    // does not know (it is not the controller's either) goes back untouched too.
    const read = raw.filter((t) => isTaintEffect(t.effect));
    const original = new Map(current.map((t, i) => [t, read[i]]));
    const taints = [
      ...next.map((t) => original.get(t) ?? taintToJson(t)),
      ...raw.filter((t) => !isTaintEffect(t.effect)),
    ];
    const body = { metadata: { resourceVersion: got.value.metadata?.resourceVersion }, spec: { taints } };
    const patched = await api.call(
      action,
      signal,
      (o) => api.core.patchNode({ name, body }, o),
      PatchStrategy.MergePatch,
    );
    return patched.ok ? OK : patched;
  };

  try {
    return await retryOnConflict(taintBackoff, attempt, (r) => !r.ok && r.reason === 'Conflict', {
      sleep,
      random,
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (error) {
    // Only the backoff sleep throws here (aborted by the caller's signal).
    return toFailure(action, error);
  }
}

export async function addNodeLabels(
  api: ApiContext,
  name: string,
  labels: Readonly<Record<string, string>>,
  signal?: AbortSignal,
): Promise<WriteResult> {
  if (Object.keys(labels).length === 0) return OK;
  // A merge patch of metadata.labels adds or overwrites exactly these keys. Upstream's
  // AddOrUpdateLabelsOnNode sends the same two-way patch without a resourceVersion, so no precondition.
  const patched = await api.call(
    `add labels to node ${quote(name)}`,
    signal,
    (o) => api.core.patchNode({ name, body: { metadata: { labels } } }, o),
    PatchStrategy.MergePatch,
  );
  return patched.ok ? OK : patched;
}
