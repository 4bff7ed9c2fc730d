// JSON Patch (RFC 6902, application/json-patch+json) with the error texts of evanphx/json-patch v4,
// the library kube-apiserver uses; a failed operation (a `test` that does not hold, a missing path) is
// a 422 "the server rejected our request due to an error in our request". No JSON Patch library is
// installed, so RFC 6902 is implemented here (no package was added).
import { type Json, type JsonObject, clone, deepEqual, deleteKey, isObject } from './json.js';
import { badRequest, unprocessable } from './status.js';

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
