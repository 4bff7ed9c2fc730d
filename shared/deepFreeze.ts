// Values shared by reference instead of copied (the API simulator's stored objects, the in-memory
// DynamoDB's native items, an encoded Heartbeat Digest) are frozen all the way down, so a reader that
// changed one would fail loudly instead of changing everyone's copy.

/**
 * Freezes objects and arrays all the way down, stopping at what is already frozen (a subtree shared
 * with an earlier value); bytes (a typed array cannot be frozen) stay as they are. Loops rather than
 * Object.values: every stored object passes here, and a values array each is garbage.
 *
 * @example const stored = deepFreeze(JSON.parse(text)); // stored.a.b = 1 now throws
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value) || Object.isFrozen(value))
    return value;
  Object.freeze(value);
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  else for (const key in value) deepFreeze(value[key]);
  return value;
}
