// Near names, for "did you mean …?": names compared without case or punctuation, and the Levenshtein
// distance between them.

/** The name without case, dashes, underscores or dots: `--node-eviction-rate` ≈ `NODE_EVICTION_RATE`. */
export const normalizeName = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');

export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
