// Between the wire and storage: decoding a request body as the server does (kind and apiVersion
// checks, field types, canonical timestamps, conversion to the storage version, defaults; the body's
// name and namespace against the URL's), and presenting a stored object as a client reads it
// (converted back, with or without its type).
import { memoized } from '../../shared/memo.js';
import { type Json, type JsonObject, clone, deleteKey, getString, isObject, setKey } from './json.js';
import { type ResourceDef, apiVersionOf } from './resources.js';
import { decodeStructure } from './schemas.js';
import { ApiStatusError, badRequest, invalid } from './status.js';
import { normalizeTimestamps } from './timestamps.js';

// Once per resource definition (a fixed set): every decode names its context.
const decodeContext = memoized(
  (def: ResourceDef): string =>
    `${def.kind} in version ${JSON.stringify(def.version)} cannot be handled as a ${def.kind}`,
  Number.POSITIVE_INFINITY,
);

/**
 * The object as a client reads it, converted to the resource's version. Its top level is the reader's
 * own; below it, the stored values may be shared, and those are deep-frozen (store.ts): a reader
 * changes a field by building a new value, never in place (assigning to a frozen one throws).
 */
export function presentObject(def: ResourceDef, stored: Readonly<JsonObject>, withType = true): JsonObject {
  if (def.fromStorage === undefined) {
    // The common case (every read, watch event and answer goes through here): the type first, then the
    // stored fields, shared, in their stored order, as the general path below gives them. Copying them
    // was a third of the simulator's deep copies, for readers that only read.
    const out: JsonObject = withType ? { apiVersion: apiVersionOf(def), kind: def.kind } : {};
    for (const key of Object.keys(stored)) {
      if (key !== 'apiVersion' && key !== 'kind') setKey(out, key, stored[key] as Json);
    }
    return out;
  }
  let obj = clone(stored as JsonObject);
  obj = def.fromStorage(obj);
  if (!withType) {
    delete obj.apiVersion;
    delete obj.kind;
    return obj;
  }
  return { apiVersion: apiVersionOf(def), kind: def.kind, ...withoutType(obj) };
}

/**
 * The body's top-level fields that are the stored object's own values: what an in-process client sends
 * back when it changes one field of what it read (a kubelet renewing its Lease changes spec and keeps
 * the rest, metadata included). The stored object was decoded for this resource and is deep-frozen
 * (store.ts), so decoding one of its values again gives the same value: it is kept, not checked, copied
 * and walked again. Only for resources whose decoding is a check and a copy (no storage version, no
 * defaults), where the value decoded is the value given.
 */
function storedFields(
  def: ResourceDef,
  body: JsonObject,
  stored: Readonly<JsonObject>,
): Set<string> | undefined {
  if (def.toStorage !== undefined || def.fromStorage !== undefined || def.defaults !== undefined)
    return undefined;
  let same: Set<string> | undefined;
  for (const key in body) {
    const value = body[key];
    if (typeof value === 'object' && value !== null && value === stored[key] && Object.isFrozen(value)) {
      (same ??= new Set()).add(key);
    }
  }
  return same;
}

/** `body` without `keys` (its own copy of the top level). */
function without(body: JsonObject, keys: ReadonlySet<string>): JsonObject {
  const rest: JsonObject = {};
  for (const key in body) if (!keys.has(key)) setKey(rest, key, body[key] as Json);
  return rest;
}

/**
 * Decoding as the server does it: the body must be an object of this kind; field types are checked,
 * timestamps canonicalised, defaults applied, and the object converted to its storage version.
 * `failureCode` 422 is for patch results (upstream reports those against the field "patch").
 * `stored`, for an update, is the object the update replaces: body fields that are its own values are
 * taken as they are stored (storedFields); metadata as a copy of its top level, which the update sets.
 */
export function decodeObject(
  def: ResourceDef,
  body: Json,
  failureCode: 400 | 422,
  stored?: Readonly<JsonObject>,
): JsonObject {
  const context = decodeContext(def);
  try {
    if (!isObject(body))
      throw badRequest(
        `${context}: json: cannot unmarshal ${Array.isArray(body) ? 'array' : typeof body} into Go value of type struct`,
      );
    const kind = getString(body, ['kind']);
    if (kind !== undefined && kind !== '' && kind !== def.kind) {
      throw badRequest(
        `${context}: the kind in the data (${kind}) does not match the expected kind (${def.kind})`,
      );
    }
    const apiVersion = getString(body, ['apiVersion']);
    if (apiVersion !== undefined && apiVersion !== '' && apiVersion !== apiVersionOf(def)) {
      throw badRequest(
        `the API version in the data (${apiVersion}) does not match the expected API version (${apiVersionOf(def)})`,
      );
    }
    const kept = stored === undefined ? undefined : storedFields(def, body, stored);
    const fresh = kept === undefined ? body : without(body, kept);
    decodeStructure(def.schema, fresh, context);
    let obj = clone(fresh);
    normalizeTimestamps(obj, def.timeFields, context);
    if (def.toStorage !== undefined) obj = def.toStorage(obj);
    dropNulls(obj);
    def.defaults?.(obj);
    if (kept !== undefined && stored !== undefined) obj = withKept(body, obj, kept, stored);
    const storageVersion = def.toStorage === undefined ? apiVersionOf(def) : 'v1';
    // The type first, then the fields in their order; metadata (an object) where it was, or last.
    const decoded: JsonObject = { apiVersion: storageVersion, kind: def.kind };
    for (const key in obj) {
      if (key !== 'apiVersion' && key !== 'kind') setKey(decoded, key, obj[key] as Json);
    }
    decoded.metadata = isObject(obj.metadata) ? obj.metadata : {};
    return decoded;
  } catch (error) {
    if (failureCode === 422 && error instanceof ApiStatusError && error.code === 400) {
      throw invalid({ group: '', kind: '' }, '', [
        { type: 'FieldValueInvalid', field: 'patch', message: `Invalid value: "...": ${error.message}` },
      ]);
    }
    throw error;
  }
}

/** The decoded fields and the kept ones, in the body's order; kept metadata as its own top level. */
function withKept(
  body: JsonObject,
  decoded: JsonObject,
  kept: ReadonlySet<string>,
  stored: Readonly<JsonObject>,
): JsonObject {
  const out: JsonObject = {};
  for (const key in body) {
    if (kept.has(key)) {
      const value = stored[key] as Json;
      setKey(out, key, key === 'metadata' && isObject(value) ? { ...value } : value);
    } else if (Object.hasOwn(decoded, key)) {
      setKey(out, key, decoded[key] as Json);
    }
  }
  return out;
}

function withoutType(obj: JsonObject): JsonObject {
  const rest: JsonObject = { ...obj };
  delete rest.apiVersion;
  delete rest.kind;
  return rest;
}

/**
 * Go decodes null into a zero value and omits empty optional fields when encoding, so a null in a
 * request never reads back. Timestamps stay (Go prints a zero metav1.Time as null).
 */
function dropNulls(obj: JsonObject): void {
  // for-in: no key array per object (every write's every object); deleting the key being visited is
  // allowed, and a plain object inherits no enumerable key.
  for (const key in obj) {
    const value = obj[key];
    if (value === null) {
      if (!/Time$|Timestamp$|^timeAdded$/.test(key)) deleteKey(obj, key);
    } else if (Array.isArray(value)) {
      for (const item of value) if (isObject(item)) dropNulls(item);
    } else if (isObject(value)) {
      dropNulls(value);
    }
  }
}

/** rest.EnsureObjectNamespaceMatchesRequestNamespace: a create's body and URL agree on the namespace. */
export function ensureObjectNamespace(def: ResourceDef, requestNamespace: string, meta: JsonObject): void {
  const objectNamespace = getString(meta, ['namespace']) ?? '';
  if (!def.namespaced) {
    delete meta.namespace;
    return;
  }
  if (objectNamespace === '') meta.namespace = requestNamespace;
  else if (objectNamespace !== requestNamespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
}

/** rest handlers' checkName: the body names the object the URL names. */
export function checkName(def: ResourceDef, namespace: string, name: string, meta: JsonObject): void {
  const objectName = getString(meta, ['name']) ?? '';
  if (objectName !== name) {
    throw badRequest(`the name of the object (${objectName}) does not match the name on the URL (${name})`);
  }
  const objectNamespace = getString(meta, ['namespace']) ?? '';
  if (def.namespaced) {
    if (objectNamespace !== '' && objectNamespace !== namespace) {
      throw badRequest(
        `the namespace of the object (${objectNamespace}) does not match the namespace on the request (${namespace})`,
      );
    }
    meta.namespace = namespace;
  } else {
    delete meta.namespace;
  }
}
