// The rules of a delete, apart from the store: preconditions (rest.BeforeDelete), the pod strategy's
// graceful deletion (CheckGracefulDelete), marking an object with finalizers as deleting, and the
// answer a delete returns. Each works on the caller's copy; the registry decides what to write.
import { presentObject } from './codec.js';
import { type JsonObject, child, getNumber, getString } from './json.js';
import type { ResourceDef } from './resources.js';
import { conflict } from './status.js';
import { formatTime, parseTime } from './timestamps.js';

export interface DeletePreconditions {
  readonly uid?: string;
  readonly resourceVersion?: string;
}

/** rest.BeforeDelete's precondition check: 409 when the object is not the one the caller meant. */
export function checkDeletePreconditions(
  def: ResourceDef,
  name: string,
  meta: JsonObject,
  preconditions: DeletePreconditions | undefined,
): void {
  const uid = getString(meta, ['uid']) ?? '';
  const rv = getString(meta, ['resourceVersion']) ?? '';
  // rest.BeforeDelete reports precondition failures with the Kind where the resource belongs.
  const preconditionResource = { group: def.group, resource: def.kind };
  if (preconditions?.uid !== undefined && preconditions.uid !== uid) {
    throw conflict(
      preconditionResource,
      name,
      `the UID in the precondition (${preconditions.uid}) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
    );
  }
  if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== rv) {
    throw conflict(
      preconditionResource,
      name,
      `the ResourceVersion in the precondition (${preconditions.resourceVersion}) does not match the ResourceVersion in record (${rv}). The object might have been modified`,
    );
  }
}

/**
 * rest.BeforeDelete with the pod strategy's CheckGracefulDelete: sets deletionTimestamp and
 * deletionGracePeriodSeconds on `pod` (in place) or says the deletion is already pending.
 */
export function beforePodDelete(
  pod: JsonObject,
  requestedGrace: number | undefined,
  now: number,
): 'pending' | { graceful: boolean; gracePeriodSeconds: number } {
  const meta = child(pod, 'metadata');
  let grace = requestedGrace !== undefined && requestedGrace < 0 ? 1 : requestedGrace;
  const deletionTimestamp = getString(meta, ['deletionTimestamp']);
  if (deletionTimestamp !== undefined) {
    const current = getNumber(meta, ['deletionGracePeriodSeconds']);
    if (current === undefined || current === 0) return { graceful: false, gracePeriodSeconds: 0 };
    // Only a shorter grace period may be asked for once deletion has started.
    if (grace === undefined || grace >= current) return 'pending';
    const at = (parseTime(deletionTimestamp) ?? now) - current * 1000 + grace * 1000;
    meta.deletionTimestamp = formatTime(at);
    meta.deletionGracePeriodSeconds = grace;
    return { graceful: true, gracePeriodSeconds: grace };
  }
  grace ??= getNumber(pod, ['spec', 'terminationGracePeriodSeconds']) ?? 0;
  if ((getString(pod, ['spec', 'nodeName']) ?? '') === '') grace = 0; // never scheduled: nothing to stop
  const phase = getString(pod, ['status', 'phase']);
  if (phase === 'Failed' || phase === 'Succeeded') grace = 0;
  if (grace < 0) grace = 1;
  meta.deletionTimestamp = formatTime(now + grace * 1000);
  meta.deletionGracePeriodSeconds = grace;
  const generation = getNumber(meta, ['generation']) ?? 0;
  if (generation > 0) meta.generation = generation + 1;
  return { graceful: true, gracePeriodSeconds: grace };
}

/** markAsDeleting: deletionTimestamp now (unless already earlier), grace 0, generation bumped once. */
export function markAsDeleting(meta: JsonObject, now: number): void {
  const existing = getString(meta, ['deletionTimestamp']);
  const generation = getNumber(meta, ['generation']) ?? 0;
  if (existing === undefined && generation > 0) meta.generation = generation + 1;
  if (existing === undefined || (parseTime(existing) ?? 0) > now) meta.deletionTimestamp = formatTime(now);
  meta.deletionGracePeriodSeconds = 0;
}

/** What a completed delete answers: the object for kinds that return it, else a Success Status. */
export function deletedAnswer(def: ResourceDef, last: Readonly<JsonObject>): JsonObject {
  if (def.returnDeletedObject) return presentObject(def, last);
  const details: JsonObject = { name: getString(last, ['metadata', 'name']) ?? '' };
  if (def.group !== '') details.group = def.group;
  details.kind = def.resource;
  details.uid = getString(last, ['metadata', 'uid']) ?? '';
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}
