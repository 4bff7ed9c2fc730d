// metav1.Time and metav1.MicroTime as a real server round-trips them. The server decodes every
// timestamp into a Go time and encodes it again, so what a client reads back is canonical:
// - Time (creationTimestamp, taint timeAdded, condition times): RFC 3339 in UTC, whole seconds; any
//   fraction a client sent is dropped ("2025-01-01T10:00:00.750+02:00" reads back "2025-01-01T08:00:00Z").
// - MicroTime (Lease renewTime/acquireTime, Event eventTime): parsed with the layout
//   "2006-01-02T15:04:05.000000Z07:00", which demands exactly six fraction digits, so a JavaScript
//   `Date.toISOString()` (three digits) is a 400 on a real server. client-node's V1MicroTime sends six.
import type { EpochMillis } from '../../shared/domain/types.js';
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

function isoSeconds(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().slice(0, 19);
}

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

function canonicalTime(text: string): string | undefined {
  const parsed = parseRfc3339(text);
  return parsed === undefined ? undefined : `${isoSeconds(parsed.epochSeconds)}Z`;
}

function canonicalMicroTime(text: string): string | undefined {
  const parsed = parseRfc3339(text);
  if (parsed === undefined || parsed.fraction.length !== 6) return undefined;
  return `${isoSeconds(parsed.epochSeconds)}.${parsed.fraction}Z`;
}

/**
 * Where a kind keeps its timestamps: dotted paths, `[]` marking "every element of this list",
 * e.g. `status.conditions[].lastHeartbeatTime`.
 */
export interface TimeFields {
  readonly time: readonly string[];
  readonly micro: readonly string[];
}

function visit(
  obj: Json | undefined,
  steps: readonly string[],
  fn: (parent: JsonObject, key: string) => void,
): void {
  const [step, ...rest] = steps;
  if (step === undefined || !isObject(obj)) return;
  const isList = step.endsWith('[]');
  const key = isList ? step.slice(0, -2) : step;
  if (rest.length === 0) {
    if (!isList) fn(obj, key);
    return;
  }
  const next = obj[key];
  if (isList) {
    if (Array.isArray(next)) for (const item of next) visit(item, rest, fn);
  } else {
    visit(next, rest, fn);
  }
}

/**
 * Rewrites every timestamp of `obj` in its canonical form, in place, as decoding and re-encoding on a
 * real server does. A malformed one is the 400 the server's decoder answers, worded like Go's
 * time.Parse error.
 */
export function normalizeTimestamps(obj: JsonObject, fields: TimeFields, decodeContext: string): void {
  const apply = (paths: readonly string[], micro: boolean) => {
    for (const path of paths) {
      visit(obj, path.split('.'), (parent, key) => {
        const value = parent[key];
        if (value === undefined || value === null) return;
        const layout = micro ? microLayout : timeLayout;
        if (typeof value !== 'string') {
          throw badRequest(
            `${decodeContext}: json: cannot unmarshal ${typeof value} into Go value of type string`,
          );
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
      });
    }
  };
  apply(fields.time, false);
  apply(fields.micro, true);
}
