// Names as people read them, for every table of `nlc` and the live view: one natural order (a-1, a-2,
// a-10, as kubectl users and node pools number them) and the close names to suggest for a typo. Its
// only import is the dependency-free edit distance the settings' suggestions use too, so the CLI's
// start-up and the live view load it for free.
import { editDistance } from '../suggest.js';

// Intl.Collator with numeric collation is the well-kept implementation of natural order (ICU); one
// instance, because building a collator per comparison costs more than the comparison.
const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'variant' });

/**
 * Natural order: runs of digits compare as numbers, the rest as text. Names the collator finds equal
 * (it may ignore some differences) fall back to code-unit order, so the order is total and the same
 * on every run.
 *
 * @example ['a-10', 'a-2', 'a-1'].sort(naturalCompare) // ['a-1', 'a-2', 'a-10']
 */
export function naturalCompare(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * The known names closest to `name`, for "did you mean": within a third of its length in edits (at
 * least 1, at most 3; commander suggests unknown options the same way), closest first, then natural
 * order; at most `max`.
 *
 * @example closeNames('zone-a-11', ['zone-a-1', 'zone-a-10', 'zone-b-1']) // ['zone-a-1', 'zone-a-10']
 */
export function closeNames(name: string, known: Iterable<string>, max = 3): string[] {
  const limit = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
  return [...new Set(known)]
    .map((candidate) => ({ candidate, distance: editDistance(name, candidate) }))
    .filter(({ candidate, distance }) => candidate !== name && distance <= limit)
    .sort((x, y) => x.distance - y.distance || naturalCompare(x.candidate, y.candidate))
    .slice(0, max)
    .map(({ candidate }) => candidate);
}
