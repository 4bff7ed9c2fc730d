// Memo tables for pure functions of one key that run over and over on few distinct keys: the time
// texts of a cluster (every kubelet of a tick writes the same "now"; every digest and change event
// carries the same instants again).

/**
 * `fn` with a memo table. Bounded: emptied when it reaches `maxEntries`; keys `cacheable` rejects (say,
 * a text too long to be a timestamp) are computed every time and never kept.
 *
 * @example
 * const parse = memoized((text: string) => Date.parse(text), 4096, (text) => text.length <= 40);
 */
export function memoized<K, V>(
  fn: (key: K) => V,
  maxEntries = 4096,
  cacheable: (key: K) => boolean = () => true,
): (key: K) => V {
  const cache = new Map<K, V>();
  return (key) => {
    if (!cacheable(key)) return fn(key);
    const hit = cache.get(key);
    if (hit !== undefined || cache.has(key)) return hit as V;
    const value = fn(key);
    if (cache.size >= maxEntries) cache.clear();
    cache.set(key, value);
    return value;
  };
}
