// What a list or watch selects (namespace, label and field selectors) and how a list pages
// (limit/continue): continue tokens carry the list's resourceVersion and the last key served.
import { type JsonObject, getString, getStringMap, isObject } from './json.js';
import type { ResourceDef } from './resources.js';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from './selectors.js';
import { badRequest } from './status.js';
import { storageKey } from './store.js';

export type ObjectMatcher = (obj: Readonly<JsonObject>) => boolean;

const NamespacePath = ['metadata', 'namespace'] as const;

/** Parses the selectors once (bad ones throw 400) and answers whether an object matches them all. */
export function objectMatcher(
  def: ResourceDef,
  namespace: string,
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
): ObjectMatcher {
  const labels = parseLabelSelector(labelSelector ?? '');
  const fields = parseFieldSelector(fieldSelector ?? '', new Set(Object.keys(def.fieldSelectors)));
  return (obj) => {
    if (def.namespaced && namespace !== '' && getString(obj, NamespacePath) !== namespace) return false;
    // Most selections have no label or field requirement: no need to read the labels, nor to make
    // the field reader, then (every watch event of every watch is matched).
    if (labels.length > 0 && !matchesLabels(labels, getStringMap(obj, ['metadata', 'labels']))) return false;
    return fields.length === 0 || matchesFields(fields, (field) => def.fieldSelectors[field]?.(obj) ?? '');
  };
}

/**
 * The value a field selector requires `field` to equal, if it does (`spec.nodeName=a-1` → `a-1`).
 * The selector was checked by objectMatcher already.
 */
export function requiredFieldValue(
  def: ResourceDef,
  fieldSelector: string | undefined,
  field: string,
): string | undefined {
  const fields = parseFieldSelector(fieldSelector ?? '', new Set(Object.keys(def.fieldSelectors)));
  return fields.find((r) => r.field === field && r.operator === 'Equals')?.value;
}

export interface PageRequest {
  readonly limit?: number;
  readonly continue?: string;
}

export interface Page {
  readonly items: readonly Readonly<JsonObject>[];
  /** The list's metadata: resourceVersion, and continue and remainingItemCount when cut short. */
  readonly metadata: JsonObject;
}

/**
 * One page of what `from(afterKey)` yields (objects in key order after the continue token's key, from
 * the first without one) that `matches`, at store revision `revision`. It reads only up to the page's
 * end and the next match, so a page of a large list costs its own size, not the list's. As
 * kube-apiserver does, `remainingItemCount` is stated only for a list without label or field selectors
 * (`countRemaining`), which then reads on to count them.
 */
export function paginate(
  from: (afterKey: string | undefined) => Iterable<Readonly<JsonObject>>,
  matches: ObjectMatcher,
  request: PageRequest,
  revision: number,
  countRemaining: boolean,
): Page {
  const metadata: JsonObject = { resourceVersion: String(revision) };
  let afterKey: string | undefined;
  if (request.continue !== undefined && request.continue !== '') {
    const start = decodeContinue(request.continue);
    metadata.resourceVersion = String(start.rv);
    afterKey = start.key;
  }
  const limit = request.limit !== undefined && request.limit > 0 ? request.limit : Number.POSITIVE_INFINITY;
  const items: Readonly<JsonObject>[] = [];
  let remaining = 0;
  for (const obj of from(afterKey)) {
    if (!matches(obj)) continue;
    if (items.length < limit) {
      items.push(obj);
      continue;
    }
    remaining++;
    if (!countRemaining) break;
  }
  const last = items[items.length - 1];
  if (remaining > 0 && last !== undefined) {
    metadata.continue = encodeContinue(Number(metadata.resourceVersion), objectKey(last));
    if (countRemaining) metadata.remainingItemCount = remaining;
  }
  return { items, metadata };
}

/** The objects of `sorted` (in key order) after `afterKey`. */
export function after(
  sorted: readonly Readonly<JsonObject>[],
  afterKey: string | undefined,
): readonly Readonly<JsonObject>[] {
  return afterKey === undefined ? sorted : sorted.filter((item) => objectKey(item) > afterKey);
}

function objectKey(obj: Readonly<JsonObject>): string {
  return storageKey(
    getString(obj, ['metadata', 'namespace']) ?? '',
    getString(obj, ['metadata', 'name']) ?? '',
  );
}

interface ContinueToken {
  readonly rv: number;
  readonly key: string;
}

function encodeContinue(rv: number, key: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${key}\u0000` })).toString(
    'base64url',
  );
}

function decodeContinue(token: string): ContinueToken {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (isObject(parsed) && typeof parsed.rv === 'number' && typeof parsed.start === 'string') {
      return {
        rv: parsed.rv,
        key: parsed.start.endsWith('\u0000') ? parsed.start.slice(0, -1) : parsed.start,
      };
    }
  } catch {
    // fall through
  }
  throw badRequest(`continue key is not valid: ${token}`);
}
