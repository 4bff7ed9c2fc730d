// Strategic Merge Patch (application/strategic-merge-patch+json) with the patch strategies of the Go
// types (patchStrategy/patchMergeKey tags): lists without a tag (spec.taints, spec.tolerations,
// status.containerStatuses) are replaced whole, tagged ones merge by their key (status.conditions by
// `type`, spec.containers by `name`, metadata.ownerReferences by `uid`), metadata.finalizers merges as
// a set; maps merge; `null` deletes; the directives `$patch` (replace/delete/merge), `$retainKeys`,
// `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` are honoured.
import { type Json, type JsonObject, clone, deepEqual, deleteKey, isObject } from './json.js';
import { ApiStatusError, badRequest, internalError, unprocessable } from './status.js';

/**
 * How a list field merges under a strategic merge patch, keyed by its dotted path (`[]` steps into
 * list elements): `{ mergeKey }` for lists of objects, `'set'` for primitive lists with
 * patchStrategy merge. Lists not named here are atomic: the patch replaces them whole.
 */
export type ListStrategy = { readonly mergeKey: string } | 'set';
export type StrategicSchema = Readonly<Record<string, ListStrategy>>;

const setElementOrderPrefix = '$setElementOrder/';
const deleteFromPrimitiveListPrefix = '$deleteFromPrimitiveList/';
const retainKeysDirective = '$retainKeys';
const patchDirective = '$patch';

function isDirectiveKey(key: string): boolean {
  return (
    key === patchDirective ||
    key === retainKeysDirective ||
    key.startsWith(setElementOrderPrefix) ||
    key.startsWith(deleteFromPrimitiveListPrefix)
  );
}

function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** Thrown for a patch the Go implementation rejects; mapped to the status upstream answers. */
function smpBadRequest(message: string): ApiStatusError {
  return badRequest(message);
}

/** A patch map merged onto nothing: its directives dropped, nested maps handled the same way. */
function fresh(patch: JsonObject, schema: StrategicSchema, path: string): JsonObject | undefined {
  return mergeMap({}, patch, schema, path);
}

function mergeMap(
  original: JsonObject,
  patch: JsonObject,
  schema: StrategicSchema,
  path: string,
): JsonObject | undefined {
  const directive = patch[patchDirective];
  if (directive !== undefined) {
    if (directive === 'delete') return undefined;
    if (directive === 'replace') {
      const rest: JsonObject = {};
      for (const [key, value] of Object.entries(patch)) if (!isDirectiveKey(key)) rest[key] = value;
      return fresh(rest, schema, path) ?? {};
    }
    if (directive !== 'merge')
      throw smpBadRequest(
        `Unknown patch type: ${JSON.stringify(directive)} in map: ${JSON.stringify(patch)}`,
      );
  }
  const result = clone(original);

  const retainKeys = patch[retainKeysDirective];
  if (retainKeys !== undefined) {
    if (!Array.isArray(retainKeys)) throw smpBadRequest('invalid patch: $retainKeys must be a list');
    const keep = new Set(retainKeys.filter((k): k is string => typeof k === 'string'));
    for (const key of Object.keys(patch)) {
      if (!isDirectiveKey(key) && !keep.has(key)) {
        throw new ApiStatusError(unprocessable("The patch content doesn't match retainKeys list").status);
      }
    }
    for (const key of Object.keys(result)) if (!keep.has(key)) deleteKey(result, key);
  }

  for (const [key, value] of Object.entries(patch)) {
    if (isDirectiveKey(key)) continue;
    const fieldPath = childPath(path, key);
    if (value === null) {
      deleteKey(result, key);
      continue;
    }
    const strategy = schema[fieldPath];
    if (isObject(value)) {
      const current = result[key];
      const merged = isObject(current)
        ? mergeMap(current, value, schema, fieldPath)
        : fresh(value, schema, fieldPath);
      if (merged === undefined) deleteKey(result, key);
      else result[key] = merged;
    } else if (Array.isArray(value) && strategy !== undefined) {
      const current = result[key];
      result[key] = mergeList(Array.isArray(current) ? current : [], value, strategy, schema, fieldPath);
    } else if (Array.isArray(value)) {
      // Atomic list: replaced whole (element maps lose any directive, as decoding drops them).
      result[key] = value.map((item) =>
        isObject(item) ? (fresh(item, schema, `${fieldPath}[]`) ?? {}) : clone(item),
      );
    } else {
      result[key] = value;
    }
  }

  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(deleteFromPrimitiveListPrefix)) {
      const field = key.slice(deleteFromPrimitiveListPrefix.length);
      if (!Array.isArray(value))
        throw smpBadRequest('invalid patch: $deleteFromPrimitiveList must be a list');
      const current = result[field];
      if (Array.isArray(current))
        result[field] = current.filter((item) => !value.some((v) => deepEqual(v, item)));
    }
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(setElementOrderPrefix)) {
      const field = key.slice(setElementOrderPrefix.length);
      if (!Array.isArray(value)) throw smpBadRequest('invalid patch: $setElementOrder must be a list');
      const current = result[field];
      const strategy = schema[childPath(path, field)];
      if (Array.isArray(current) && strategy !== undefined) result[field] = reorder(current, value, strategy);
    }
  }
  return result;
}

function mergeKeyOf(item: Json, strategy: ListStrategy): Json | undefined {
  if (strategy === 'set') return item;
  return isObject(item) ? item[strategy.mergeKey] : undefined;
}

/**
 * `$setElementOrder`: the listed elements come in the listed order; elements the patch did not list
 * (server-only ones) keep their place relative to each other after them. Upstream interleaves
 * server-only elements by their original index; the elements this project writes are always listed.
 */
function reorder(list: Json[], order: Json[], strategy: ListStrategy): Json[] {
  const keys = order.map((entry) =>
    strategy === 'set' ? entry : isObject(entry) ? entry[strategy.mergeKey] : entry,
  );
  const listed: Json[] = [];
  for (const key of keys) {
    const found = list.find((item) => deepEqual(mergeKeyOf(item, strategy), key));
    if (found !== undefined) listed.push(found);
  }
  const rest = list.filter((item) => !keys.some((key) => deepEqual(mergeKeyOf(item, strategy), key)));
  return [...listed, ...rest];
}

function mergeList(
  original: Json[],
  patch: Json[],
  strategy: ListStrategy,
  schema: StrategicSchema,
  path: string,
): Json[] {
  if (strategy === 'set') {
    const result = clone(original);
    for (const item of patch) {
      if (isObject(item)) throw smpBadRequest('invalid patch: a primitive list cannot hold maps');
      if (!result.some((existing) => deepEqual(existing, item))) result.push(item);
    }
    return result;
  }
  const { mergeKey } = strategy;
  const replaceDirective = patch.find((item) => isObject(item) && item[patchDirective] === 'replace');
  if (replaceDirective !== undefined) {
    return patch
      .filter((item) => item !== replaceDirective)
      .map((item) => (isObject(item) ? (fresh(item, schema, `${path}[]`) ?? {}) : item));
  }
  let result = clone(original);
  for (const item of patch) {
    if (!isObject(item)) {
      throw internalError(
        `unable to find api field in struct for the given list element: ${JSON.stringify(item)}`,
      );
    }
    const key = item[mergeKey];
    if (item[patchDirective] === 'delete') {
      if (key === undefined)
        throw internalError(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
      result = result.filter((existing) => !(isObject(existing) && deepEqual(existing[mergeKey], key)));
      continue;
    }
    if (key === undefined) {
      throw internalError(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
    }
    const index = result.findIndex((existing) => isObject(existing) && deepEqual(existing[mergeKey], key));
    const existing = index >= 0 ? result[index] : undefined;
    if (isObject(existing)) {
      const merged = mergeMap(existing, item, schema, `${path}[]`);
      if (merged === undefined) result.splice(index, 1);
      else result[index] = merged;
    } else {
      const created = fresh(item, schema, `${path}[]`);
      if (created !== undefined) result.push(created);
    }
  }
  return result;
}

/** Applies a strategic merge patch to a copy of `doc`. */
export function applyStrategicMergePatch(doc: JsonObject, patch: Json, schema: StrategicSchema): JsonObject {
  if (!isObject(patch)) {
    throw badRequest(
      `json: cannot unmarshal ${Array.isArray(patch) ? 'array' : typeof patch} into Go value of type map[string]interface {}`,
    );
  }
  return mergeMap(doc, patch, schema, '') ?? {};
}
