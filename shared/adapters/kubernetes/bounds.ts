// Bounding what one node or pod can make the controller carry (the bounds and their sources:
// shared/eventBounds.ts), for the mapping (mapping.ts), the one place both the relay and the
// functions read objects. A text over its bound is cut and ends in a marker saying how many bytes went
// ("… [truncated 202,752 bytes]"); a list over its bound keeps what the controller reads first and drops
// the rest; a node says what was cut in `truncated` (TruncationNotes).
import { Buffer } from 'node:buffer';
import { ownedByNodeController } from '../../domain/taints.js';
import {
  NodeDiskPressure,
  NodeMemoryPressure,
  NodeNetworkUnavailable,
  NodePIDPressure,
  NodeReady,
  type NodeCondition,
  type Taint,
  type Toleration,
} from '../../domain/types.js';
import {
  MaxConditionMessageBytes,
  MaxConditionReasonBytes,
  MaxConditionTypeBytes,
  MaxNodeConditions,
  MaxNodeTaints,
  MaxPodTolerations,
  MaxTaintKeyBytes,
  MaxTaintValueBytes,
  MaxTruncationNotes,
  wireBytes,
} from '../../eventBounds.js';

const count = (n: number): string => n.toLocaleString('en-US');
const truncationMarker = (droppedBytes: number): string => `… [truncated ${count(droppedBytes)} bytes]`;
const TruncationMarker = /… \[truncated [\d,]+ bytes\]$/u;

/**
 * Whether a text ends in the marker the mapping appends to what it cut: such a text is a prefix of the
 * real one, which must never be written back.
 */
export function isTruncatedText(text: string): boolean {
  return TruncationMarker.test(text);
}

// The bytes one code point takes in JSON (see wireBytes): escapes for quote, backslash and control
// characters, `\udXXX` for a lone surrogate, else its UTF-8 length.
function codePointWireBytes(cp: number): number {
  if (cp === 0x22 || cp === 0x5c) return 2;
  if (cp < 0x20) return [0x08, 0x09, 0x0a, 0x0c, 0x0d].includes(cp) ? 2 : 6;
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp >= 0xd800 && cp <= 0xdfff) return 6;
  return cp < 0x10000 ? 3 : 4;
}

/**
 * `text` within `max` wire bytes: unchanged when it fits, else its longest prefix (whole code points)
 * that fits with the marker after it, and how many UTF-8 bytes of the text were dropped.
 *
 * @example truncateText('x'.repeat(5000), 100)?.text // 73 × 'x', then '… [truncated 4,927 bytes]'
 */
export function truncateText(
  text: string,
  max: number,
): { readonly text: string; readonly droppedBytes: number } | undefined {
  if (text.length * 6 <= max || wireBytes(text) <= max) return undefined;
  const totalBytes = Buffer.byteLength(text, 'utf8');
  // The marker's room is taken for the largest count it could show, so the real one always fits.
  const budget = max - wireBytes(truncationMarker(totalBytes));
  let used = 0;
  let end = 0;
  for (const ch of text) {
    const cost = codePointWireBytes(ch.codePointAt(0) ?? 0);
    if (used + cost > budget) break;
    used += cost;
    end += ch.length;
  }
  const kept = text.slice(0, end);
  const droppedBytes = totalBytes - Buffer.byteLength(kept, 'utf8');
  return { text: kept + truncationMarker(droppedBytes), droppedBytes };
}

/** The notes of one node, at most MaxTruncationNotes: the last one counts those left out. */
export class TruncationNotes {
  private readonly notes: string[] = [];

  add(note: string): void {
    this.notes.push(note);
  }

  /** A text field: cut when over `max`, with a note naming `field`. */
  text(field: string, text: string, max: number): string {
    const cut = truncateText(text, max);
    if (cut === undefined) return text;
    this.add(`${field}: ${count(Buffer.byteLength(text, 'utf8'))} bytes, truncated to ${count(max)}`);
    return cut.text;
  }

  list(): readonly string[] | undefined {
    if (this.notes.length === 0) return undefined;
    if (this.notes.length <= MaxTruncationNotes) return this.notes;
    const shown = this.notes.slice(0, MaxTruncationNotes - 1);
    return [...shown, `and ${count(this.notes.length - shown.length)} more`];
  }
}

/** At most `max` of `items`: the lowest `rank` first, then the earliest; kept in their original order. */
function keepFirst<T>(items: readonly T[], max: number, rank: (item: T, index: number) => number): T[] {
  if (items.length <= max) return [...items];
  const chosen = items
    .map((item, index) => ({ index, rank: rank(item, index) }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .slice(0, max)
    .map((c) => c.index)
    .sort((a, b) => a - b);
  return chosen.map((index) => items[index] as T);
}

// The condition types the controller reads: tryUpdateNodeHealth marks the first four Unknown,
// doNoScheduleTaintingPass maps all five to taints. GetNodeCondition reads the first of a type.
const controllerConditionTypes: readonly string[] = [
  NodeReady,
  NodeMemoryPressure,
  NodeDiskPressure,
  NodePIDPressure,
  NodeNetworkUnavailable,
];

export function boundConditions(
  conditions: readonly NodeCondition[],
  notes: TruncationNotes,
): NodeCondition[] {
  // A type the events cannot carry (empty, or over metav1.Condition's 316 bytes) is not one the
  // controller reads: the condition is dropped, whole.
  const typed = conditions.filter(
    (c) =>
      c.type !== '' &&
      (c.type.length * 6 <= MaxConditionTypeBytes || wireBytes(c.type) <= MaxConditionTypeBytes),
  );
  if (typed.length < conditions.length) {
    notes.add(
      `status.conditions: dropped ${count(conditions.length - typed.length)} whose type is empty or over ${count(MaxConditionTypeBytes)} bytes`,
    );
  }
  const firstOfType = new Set(
    controllerConditionTypes.map((type) => typed.findIndex((c) => c.type === type)).filter((i) => i >= 0),
  );
  const kept = keepFirst(typed, MaxNodeConditions, (_c, index) => (firstOfType.has(index) ? 0 : 1));
  if (kept.length < typed.length) {
    notes.add(
      `status.conditions: dropped ${count(typed.length - kept.length)} of ${count(typed.length)} (at most ${MaxNodeConditions} are kept)`,
    );
  }
  return kept.map((c) => {
    const field = `status.conditions[${c.type}]`;
    const reason =
      c.reason === undefined ? undefined : notes.text(`${field}.reason`, c.reason, MaxConditionReasonBytes);
    const message =
      c.message === undefined
        ? undefined
        : notes.text(`${field}.message`, c.message, MaxConditionMessageBytes);
    return reason === c.reason && message === c.message
      ? c
      : {
          ...c,
          ...(reason !== undefined && { reason }),
          ...(message !== undefined && { message }),
        };
  });
}

const withinKeyBounds = (key: string | undefined, value: string | undefined): boolean =>
  wireBytes(key ?? '') <= MaxTaintKeyBytes && wireBytes(value ?? '') <= MaxTaintValueBytes;

export function boundTaints(taints: readonly Taint[], notes: TruncationNotes): Taint[] {
  // The API server validates keys and values (validateNodeTaints): one over them is not from a
  // conforming server. Dropping a taint only ever means fewer evictions.
  const valid = taints.filter((t) => t.key !== '' && withinKeyBounds(t.key, t.value));
  if (valid.length < taints.length) {
    notes.add(
      `spec.taints: dropped ${count(taints.length - valid.length)} whose key or value is over the API's bounds`,
    );
  }
  // The controller's own taints decide its writes; NoExecute ones decide evictions.
  const kept = keepFirst(valid, MaxNodeTaints, (t) =>
    ownedByNodeController(t) ? 0 : t.effect === 'NoExecute' ? 1 : 2,
  );
  if (kept.length < valid.length) {
    notes.add(
      `spec.taints: dropped ${count(valid.length - kept.length)} of ${count(valid.length)} (at most ${MaxNodeTaints} are kept)`,
    );
  }
  return kept;
}

// A toleration that tolerates every taint forever (upstream: an empty key with Exists matches all).
const toleratesEverything: Toleration = Object.freeze({ operator: 'Exists' });

function sameToleration(a: Toleration, b: Toleration): boolean {
  return (
    a.key === b.key &&
    a.operator === b.operator &&
    a.value === b.value &&
    a.effect === b.effect &&
    a.tolerationSeconds === b.tolerationSeconds
  );
}

/**
 * A pod's tolerations within MaxPodTolerations, never evicting a pod upstream would keep. Only
 * NoExecute taints are ever matched against tolerations (taint eviction), and the first toleration
 * that tolerates a taint decides (GetMatchingTolerations). So, when the list is over its bounds: those
 * that cannot tolerate a NoExecute taint go, then exact repeats (a later one never decides); if still
 * too many, or one is over the API's key and value bounds, the list is cut there and ends in a
 * toleration of everything, forever. A taint the kept ones decide is decided as upstream would; any
 * other is tolerated forever, where upstream would evict: such a pod is evicted later or never, never
 * sooner.
 */
export function boundTolerations(tolerations: readonly Toleration[]): readonly Toleration[] {
  const fits = (list: readonly Toleration[]) =>
    list.length <= MaxPodTolerations && list.every((t) => withinKeyBounds(t.key, t.value));
  if (fits(tolerations)) return tolerations;
  const matching = tolerations.filter(
    (t) => t.effect === undefined || t.effect === '' || t.effect === 'NoExecute',
  );
  const unique = matching.filter((t, i) => matching.findIndex((u) => sameToleration(t, u)) === i);
  if (fits(unique)) return unique;
  const out: Toleration[] = [];
  for (const t of unique) {
    if (out.length === MaxPodTolerations - 1 || !withinKeyBounds(t.key, t.value)) break;
    out.push(t);
  }
  return [...out, toleratesEverything];
}
