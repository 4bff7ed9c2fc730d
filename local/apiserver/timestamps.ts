// metav1.Time and metav1.MicroTime as a real server round-trips them. The server decodes every
// timestamp into a Go time and encodes it again, so what a client reads back is canonical:
// - Time (creationTimestamp, taint timeAdded, condition times): RFC 3339 in UTC, whole seconds; any
//   fraction a client sent is dropped ("2025-01-01T10:00:00.750+02:00" reads back "2025-01-01T08:00:00Z").
// - MicroTime (Lease renewTime/acquireTime, Event eventTime): parsed with the layout
//   "2006-01-02T15:04:05.000000Z07:00", which demands exactly six fraction digits, so a JavaScript
//   `Date.toISOString()` (three digits) is a 400 on a real server. client-node's V1MicroTime sends six.
import type { EpochMillis } from '../../shared/domain/types.js';
import { memoized } from '../../shared/memo.js';
import { type Json, type JsonObject, isObject } from './json.js';
import { badRequest } from './status.js';

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const timeLayout = '2006-01-02T15:04:05Z07:00';
const microLayout = '2006-01-02T15:04:05.000000Z07:00';

interface ParsedTime {
  readonly epochSeconds: number;
  /** Fraction digits as sent, without the dot ("" when none). */
  readonly fraction: string;
}

function parseRfc3339(text: string): ParsedTime | undefined {
  const m = rfc3339.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const fields = [y, mo, d, h, mi, s].map(Number);
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = fields;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59)
    return undefined;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second);
  if (new Date(utc).getUTCDate() !== day) return undefined; // e.g. February 30
  let offsetSeconds = 0;
  if (zone !== undefined && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    offsetSeconds = sign * (Number(zone.slice(1, 3)) * 3600 + Number(zone.slice(4, 6)) * 60);
  }
  return { epochSeconds: utc / 1000 - offsetSeconds, fraction: frac === undefined ? '' : frac.slice(1) };
}

// Memoized (shared/memo.ts): a simulation formats and parses the same few instants over and over
// (every kubelet of a tick writes "now", every write carries the same creation times back), and Date's
// formatting and the RFC 3339 pattern were a large share of each write.
const isoSeconds = memoized((epochSeconds: number): string =>
  new Date(epochSeconds * 1000).toISOString().slice(0, 19),
);

/** metav1.Time text for an instant: whole seconds, UTC. */
export function formatTime(ms: EpochMillis): string {
  return `${isoSeconds(Math.floor(ms / 1000))}Z`;
}

/** metav1.MicroTime text for an instant: six fraction digits, UTC. */
export function formatMicroTime(ms: EpochMillis): string {
  const seconds = Math.floor(ms / 1000);
  const micros = Math.round((ms - seconds * 1000) * 1000);
  return `${isoSeconds(seconds)}.${String(micros).padStart(6, '0')}Z`;
}

/** Parses a metav1.Time / MicroTime text into epoch milliseconds (undefined when malformed). */
export function parseTime(text: string): EpochMillis | undefined {
  const parsed = parseRfc3339(text);
  if (parsed === undefined) return undefined;
  return parsed.epochSeconds * 1000 + Math.floor(Number(`0.${parsed.fraction || '0'}`) * 1000);
}

/** Texts a client sends can be long (any number of fraction digits); the cache keeps timestamp-sized ones. */
const timestampSized = (text: string): boolean => text.length <= 40;

const canonicalTime = memoized(
  (text: string): string | undefined => {
    const parsed = parseRfc3339(text);
    return parsed === undefined ? undefined : `${isoSeconds(parsed.epochSeconds)}Z`;
  },
  4096,
  timestampSized,
);

const canonicalMicroTime = memoized(
  (text: string): string | undefined => {
    const parsed = parseRfc3339(text);
    if (parsed === undefined || parsed.fraction.length !== 6) return undefined;
    return `${isoSeconds(parsed.epochSeconds)}.${parsed.fraction}Z`;
  },
  4096,
  timestampSized,
);

/**
 * Where a kind keeps its timestamps: dotted paths, `[]` marking "every element of this list",
 * e.g. `status.conditions[].lastHeartbeatTime`.
 */
export interface TimeFields {
  readonly time: readonly string[];
  readonly micro: readonly string[];
}

/** One step of a time field's path: the key, and whether it names a list whose elements go on. */
interface PathStep {
  readonly key: string;
  readonly isList: boolean;
}

/** The steps of each dotted path, split once (the paths are the resource definitions' constants). */
const pathSteps = memoized(
  (path: string): readonly PathStep[] =>
    path.split('.').map((step) => {
      const isList = step.endsWith('[]');
      return { key: isList ? step.slice(0, -2) : step, isList };
    }),
  Number.POSITIVE_INFINITY,
);

function visit(
  obj: Json | undefined,
  steps: readonly PathStep[],
  index: number,
  micro: boolean,
  decodeContext: string,
): void {
  const step = steps[index];
  if (step === undefined || !isObject(obj)) return;
  const { key, isList } = step;
  if (index === steps.length - 1) {
    if (!isList) canonicalize(obj, key, micro, decodeContext);
    return;
  }
  const next = obj[key];
  if (isList) {
    if (Array.isArray(next)) for (const item of next) visit(item, steps, index + 1, micro, decodeContext);
  } else {
    visit(next, steps, index + 1, micro, decodeContext);
  }
}

/** Rewrites `parent[key]`, if set, in its canonical form; throws the decoder's 400 when malformed. */
function canonicalize(parent: JsonObject, key: string, micro: boolean, decodeContext: string): void {
  const value = parent[key];
  if (value === undefined || value === null) return;
  const layout = micro ? microLayout : timeLayout;
  if (typeof value !== 'string') {
    throw badRequest(`${decodeContext}: json: cannot unmarshal ${typeof value} into Go value of type string`);
  }
  const canonical = micro ? canonicalMicroTime(value) : canonicalTime(value);
  if (canonical === undefined) {
    const parsed = parseRfc3339(value);
    const detail =
      micro && parsed !== undefined
        ? `cannot parse ${JSON.stringify(value.slice(19))} as ".000000"`
        : `cannot parse ${JSON.stringify(value)} as "2006"`;
    throw badRequest(
      `${decodeContext}: parsing time ${JSON.stringify(value)} as ${JSON.stringify(layout)}: ${detail}`,
    );
  }
  parent[key] = canonical;
}

/**
 * Rewrites every timestamp of `obj` in its canonical form, in place, as decoding and re-encoding on a
 * real server does. A malformed one is the 400 the server's decoder answers, worded like Go's
 * time.Parse error.
 */
export function normalizeTimestamps(obj: JsonObject, fields: TimeFields, decodeContext: string): void {
  for (const path of fields.time) visit(obj, pathSteps(path), 0, false, decodeContext);
  for (const path of fields.micro) visit(obj, pathSteps(path), 0, true, decodeContext);
}
