// The three patch types a real server applies to built-in kinds:
// - JSON Patch (RFC 6902, application/json-patch+json) with the error texts of evanphx/json-patch v4,
//   the library kube-apiserver uses; a failed operation (a `test` that does not hold, a missing path)
//   is a 422 "the server rejected our request due to an error in our request";
// - JSON Merge Patch (RFC 7386, application/merge-patch+json): lists are replaced whole;
// - Strategic Merge Patch (application/strategic-merge-patch+json) with the patch strategies of the
//   Go types (patchStrategy/patchMergeKey tags): lists without a tag (spec.taints, spec.tolerations,
//   status.containerStatuses) are replaced whole, tagged ones merge by their key (status.conditions by
//   `type`, spec.containers by `name`, metadata.ownerReferences by `uid`), metadata.finalizers merges as
//   a set; maps merge; `null` deletes; the directives `$patch` (replace/delete/merge),
//   `$retainKeys`, `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` are honoured.
// No JSON Patch library is installed, so RFC 6902 is implemented here (no package was added).
import { type Json, type JsonObject, clone, deepEqual, deleteKey, isObject } from './json.js';
import { ApiStatusError, badRequest, internalError, unprocessable } from './status.js';

export type PatchType = 'json' | 'merge' | 'strategic';

export const patchContentTypes: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
};

// --- RFC 6902 ------------------------------------------------------------------------------------

class PatchOperationError extends Error {}

function decodePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/'))
    throw new PatchOperationError(`JSON pointer must be empty or start with a "/": ${pointer}`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Array index per RFC 6901: digits without leading zeros (`-` handled by the caller). */
function arrayIndex(token: string, length: number, allowEnd: boolean): number {
  if (!/^(0|[1-9][0-9]*)$/.test(token))
    throw new PatchOperationError(`Unable to access invalid index: ${token}: invalid index referenced`);
  const index = Number(token);
  if (index > length || (!allowEnd && index === length)) {
    throw new PatchOperationError(`Unable to access invalid index: ${index}: invalid index referenced`);
  }
  return index;
}

interface Location {
  readonly parent: JsonObject | Json[];
  readonly key: string;
}

/** The container holding the last token of `path`, or undefined when an intermediate step is missing. */
function locate(doc: Json, tokens: readonly string[]): Location | undefined {
  let current: Json = doc;
  for (let i = 0; i < tokens.length - 1; i++) {
    const token = tokens[i] ?? '';
    let next: Json | undefined;
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      next = current[Number(token)];
    } else if (isObject(current)) {
      next = Object.hasOwn(current, token) ? current[token] : undefined;
    }
    if (next === undefined || next === null || typeof next !== 'object') return undefined;
    current = next;
  }
  if (!Array.isArray(current) && !isObject(current)) return undefined;
  return { parent: current, key: tokens[tokens.length - 1] ?? '' };
}

function readAt(doc: Json, tokens: readonly string[]): Json | undefined {
  if (tokens.length === 0) return doc;
  const loc = locate(doc, tokens);
  if (loc === undefined) return undefined;
  if (Array.isArray(loc.parent)) {
    if (!/^(0|[1-9][0-9]*)$/.test(loc.key)) return undefined;
    return loc.parent[Number(loc.key)];
  }
  return Object.hasOwn(loc.parent, loc.key) ? loc.parent[loc.key] : undefined;
}

interface Operation {
  readonly op: string;
  readonly path: string;
  readonly from?: string;
  readonly value?: Json;
  readonly hasValue: boolean;
}

function decodeOperations(patch: Json): Operation[] {
  if (!Array.isArray(patch)) {
    throw badRequest(
      `json: cannot unmarshal ${isObject(patch) ? 'object' : typeof patch} into Go value of type jsonpatch.Patch`,
    );
  }
  return patch.map((raw) => {
    if (!isObject(raw)) throw badRequest('json: cannot unmarshal into Go value of type jsonpatch.Operation');
    const op = typeof raw.op === 'string' ? raw.op : '';
    const path = typeof raw.path === 'string' ? raw.path : undefined;
    const from = typeof raw.from === 'string' ? raw.from : undefined;
    const hasValue = Object.hasOwn(raw, 'value');
    if (path === undefined) throw unprocessable(`operation missing path field: missing value`);
    const operation: { op: string; path: string; from?: string; value?: Json; hasValue: boolean } = {
      op,
      path,
      hasValue,
    };
    if (from !== undefined) operation.from = from;
    if (hasValue) operation.value = raw.value ?? null;
    return operation;
  });
}

function add(doc: Json, path: string, value: Json): Json {
  const tokens = decodePointer(path);
  if (tokens.length === 0) return clone(value);
  const loc = locate(doc, tokens);
  if (loc === undefined)
    throw new PatchOperationError(
      `add operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`,
    );
  if (Array.isArray(loc.parent)) {
    const index = loc.key === '-' ? loc.parent.length : arrayIndex(loc.key, loc.parent.length, true);
    loc.parent.splice(index, 0, clone(value));
  } else {
    loc.parent[loc.key] = clone(value);
  }
  return doc;
}

function remove(doc: Json, path: string, verb = 'remove'): { doc: Json; removed: Json } {
  const tokens = decodePointer(path);
  const loc = tokens.length === 0 ? undefined : locate(doc, tokens);
  if (loc === undefined)
    throw new PatchOperationError(
      `${verb} operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`,
    );
  if (Array.isArray(loc.parent)) {
    const index = arrayIndex(loc.key, loc.parent.length, false);
    const [removed] = loc.parent.splice(index, 1);
    return { doc, removed: removed ?? null };
  }
  if (!Object.hasOwn(loc.parent, loc.key)) {
    throw new PatchOperationError(`Unable to remove nonexistent key: ${loc.key}: missing value`);
  }
  const removed = loc.parent[loc.key] ?? null;
  deleteKey(loc.parent, loc.key);
  return { doc, removed };
}

function replace(doc: Json, path: string, value: Json): Json {
  const tokens = decodePointer(path);
  if (tokens.length === 0) return clone(value);
  const loc = locate(doc, tokens);
  if (loc === undefined)
    throw new PatchOperationError(
      `replace operation does not apply: doc is missing path: ${path}: missing value`,
    );
  if (Array.isArray(loc.parent)) {
    const index = arrayIndex(loc.key, loc.parent.length, false);
    loc.parent[index] = clone(value);
  } else {
    if (!Object.hasOwn(loc.parent, loc.key)) {
      throw new PatchOperationError(
        `replace operation does not apply: doc is missing key: ${path}: missing value`,
      );
    }
    loc.parent[loc.key] = clone(value);
  }
  return doc;
}

/** RFC 6902 over a copy of `doc`. Throws the ApiStatusError a real server answers. */
export function applyJsonPatch(doc: JsonObject, patch: Json): Json {
  const operations = decodeOperations(patch);
  let result: Json = clone(doc);
  for (const operation of operations) {
    try {
      const value = operation.value ?? null;
      switch (operation.op) {
        case 'add':
          if (!operation.hasValue) throw new PatchOperationError('add operation has no value: missing value');
          result = add(result, operation.path, value);
          break;
        case 'remove':
          result = remove(result, operation.path).doc;
          break;
        case 'replace':
          if (!operation.hasValue)
            throw new PatchOperationError('replace operation has no value: missing value');
          result = replace(result, operation.path, value);
          break;
        case 'move': {
          const from = operation.from ?? '';
          const moved = remove(result, from, 'move');
          result = add(moved.doc, operation.path, moved.removed);
          break;
        }
        case 'copy': {
          const from = operation.from ?? '';
          const source = readAt(result, decodePointer(from));
          if (source === undefined) {
            throw new PatchOperationError(
              `copy operation does not apply: doc is missing from path: ${from}: missing value`,
            );
          }
          result = add(result, operation.path, source);
          break;
        }
        case 'test': {
          const actual = readAt(result, decodePointer(operation.path));
          // evanphx/json-patch: a missing path passes a test for null.
          const holds = actual === undefined ? value === null : deepEqual(actual, value);
          if (!holds)
            throw new PatchOperationError(`testing value ${operation.path} failed: test operation failed`);
          break;
        }
        default:
          throw new PatchOperationError(`Unexpected kind: ${operation.op}`);
      }
    } catch (error) {
      if (error instanceof PatchOperationError) throw unprocessable(error.message);
      throw error;
    }
  }
  return result;
}

// --- RFC 7386 ------------------------------------------------------------------------------------

export function applyMergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const result: JsonObject = isObject(target) ? clone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) deleteKey(result, key);
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

// --- Strategic merge patch -----------------------------------------------------------------------

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

/** Applies any of the three patch types; the result must still be an object. */
export function applyPatch(doc: JsonObject, type: PatchType, patch: Json, schema: StrategicSchema): Json {
  switch (type) {
    case 'json':
      return applyJsonPatch(doc, patch);
    case 'merge':
      if (!isObject(patch)) {
        throw badRequest(
          `json: cannot unmarshal ${Array.isArray(patch) ? 'array' : typeof patch} into Go value of type map[string]interface {}`,
        );
      }
      return applyMergePatch(doc, patch);
    case 'strategic':
      return applyStrategicMergePatch(doc, patch, schema);
  }
}
