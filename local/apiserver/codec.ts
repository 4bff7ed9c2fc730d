// Between the wire and storage: decoding a request body as the server does (kind and apiVersion
// checks, field types, canonical timestamps, conversion to the storage version, defaults; the body's
// name and namespace against the URL's), and presenting a stored object as a client reads it
// (converted back, with or without its type).
import { type Json, type JsonObject, clone, deleteKey, getString, isObject, setKey } from './json.js';
import { type ResourceDef, apiVersionOf } from './resources.js';
import { decodeStructure } from './schemas.js';
import { ApiStatusError, badRequest, invalid } from './status.js';
import { normalizeTimestamps } from './timestamps.js';

function decodeContext(def: ResourceDef): string {
  return `${def.kind} in version ${JSON.stringify(def.version)} cannot be handled as a ${def.kind}`;
}

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
 * Decoding as the server does it: the body must be an object of this kind; field types are checked,
 * timestamps canonicalised, defaults applied, and the object converted to its storage version.
 * `failureCode` 422 is for patch results (upstream reports those against the field "patch").
 */
export function decodeObject(def: ResourceDef, body: Json, failureCode: 400 | 422): JsonObject {
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
    decodeStructure(def.schema, body, context);
    let obj = clone(body);
    normalizeTimestamps(obj, def.timeFields, context);
    if (def.toStorage !== undefined) obj = def.toStorage(obj);
    dropNulls(obj);
    def.defaults?.(obj);
    const storageVersion = def.toStorage === undefined ? apiVersionOf(def) : 'v1';
    // The type first, then the fields in their order; metadata (an object) where it was, or last.
    const stored: JsonObject = { apiVersion: storageVersion, kind: def.kind };
    for (const key in obj) {
      if (key !== 'apiVersion' && key !== 'kind') setKey(stored, key, obj[key] as Json);
    }
    stored.metadata = isObject(obj.metadata) ? obj.metadata : {};
    return stored;
  } catch (error) {
    if (failureCode === 422 && error instanceof ApiStatusError && error.code === 400) {
      throw invalid({ group: '', kind: '' }, '', [
        { type: 'FieldValueInvalid', field: 'patch', message: `Invalid value: "...": ${error.message}` },
      ]);
    }
    throw error;
  }
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
