// JSON values as the simulator stores them: objects are kept exactly as they go over the wire, so the
// HTTP answer, a watch event and an in-process read are the same bytes.

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A deep copy of a JSON value. Written out rather than structuredClone, which goes through V8's
 * serializer and was the API simulator's largest single cost in a large simulation.
 */
export function clone<T extends Json>(value: T): T {
  return copyJson(value) as T;
}

function copyJson(value: Json): Json {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    // A loop rather than map(): stored lists are frozen, where V8's map() is slower.
    const out: Json[] = new Array<Json>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyJson(value[i] as Json);
    return out;
  }
  // Anything but a plain object (a Date handed in by an in-process caller) is copied as before.
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: JsonObject = {};
  // for-in rather than Object.keys: no key array per object (a plain object inherits no enumerable key).
  for (const key in value) setKey(out, key, copyJson(value[key] as Json));
  return out;
}

/** Sets a key of a JSON object, as its own data property even when the key is "__proto__". */
export function setKey(obj: JsonObject, key: string, value: Json): void {
  // A "__proto__" key from parsed JSON is data: assigning it would set the prototype instead.
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** Structural equality of two JSON values (object key order ignored, as Go's Semantic.DeepEqual). */
export function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  // Plain loops: every write compares the whole object with the stored one (the no-op check).
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const aKeys = Object.keys(a);
    if (aKeys.length !== Object.keys(b).length) return false;
    for (const key of aKeys) if (!Object.hasOwn(b, key) || !deepEqual(a[key], b[key])) return false;
    return true;
  }
  return false;
}

/** Removes a key from a JSON object (keys come from data, hence no static `delete`). */
export function deleteKey(obj: JsonObject, key: string): void {
  Reflect.deleteProperty(obj, key);
}

/** The object at `key`, created empty when absent or not an object. */
export function child(obj: JsonObject, key: string): JsonObject {
  const value = obj[key];
  if (isObject(value)) return value;
  const created: JsonObject = {};
  obj[key] = created;
  return created;
}

/** Reads a nested value; undefined when any step is missing or of the wrong shape. */
export function getIn(obj: Json | undefined, path: readonly (string | number)[]): Json | undefined {
  let current: Json | undefined = obj;
  for (const step of path) {
    if (typeof step === 'number') {
      if (!Array.isArray(current)) return undefined;
      current = current[step];
    } else {
      if (!isObject(current)) return undefined;
      current = current[step];
    }
  }
  return current;
}

export function getString(obj: Json | undefined, path: readonly (string | number)[]): string | undefined {
  const value = getIn(obj, path);
  return typeof value === 'string' ? value : undefined;
}

export function getNumber(obj: Json | undefined, path: readonly (string | number)[]): number | undefined {
  const value = getIn(obj, path);
  return typeof value === 'number' ? value : undefined;
}

export function getArray(obj: Json | undefined, path: readonly (string | number)[]): Json[] {
  const value = getIn(obj, path);
  return Array.isArray(value) ? value : [];
}

export function getObject(obj: Json | undefined, path: readonly (string | number)[]): JsonObject | undefined {
  const value = getIn(obj, path);
  return isObject(value) ? value : undefined;
}

/** A map of strings (labels, annotations); non-string values are skipped. */
export function getStringMap(
  obj: Json | undefined,
  path: readonly (string | number)[],
): Record<string, string> {
  const value = getObject(obj, path);
  const out: Record<string, string> = {};
  if (value === undefined) return out;
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** Parses a request body; undefined when it is not JSON. */
export function parseJson(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}
