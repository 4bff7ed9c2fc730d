// The wire's primitive forms, shared by the event contracts (events.ts) and the relay's shaping:
// RFC 3339 times <-> EpochMillis, and the Kubernetes name rules the API server enforces.
import type { EpochMillis } from './domain/types.js';
import { memoized } from './memo.js';

// ---------------------------------------------------------------------------------------------------
// Times: RFC 3339 on the wire (second or millisecond precision, `Z` or a numeric offset), EpochMillis
// in the domain. Years 0000-9999 only, the range both forms share.

/** The earliest instant a wire time can express (0000-01-01T00:00:00Z). */
export const MinEpochMillis: EpochMillis = -62_167_219_200_000;
/** The latest instant a wire time can express (9999-12-31T23:59:59.999Z). */
export const MaxEpochMillis: EpochMillis = 253_402_300_799_999;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,3})?(?:Z|[+-](\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

// Every event and digest carries the same few instants again and again (a tick's renewals share one).
// The longest valid text ("0000-01-01T00:00:00.000+00:00") has 29 characters.
const parseWireTimeMemo = memoized(parseWireTimeText, 4096, (text) => text.length <= 29);

/**
 * An RFC 3339 time with at most millisecond precision, as EpochMillis; undefined for anything else
 * (Date.parse alone would take "2023-02-30" as March 2nd and "24:00" as the next day).
 *
 * @example parseWireTime('2026-01-29T10:00:00.250+01:00') // 1769677200250
 */
export function parseWireTime(text: string): EpochMillis | undefined {
  return parseWireTimeMemo(text);
}

function parseWireTimeText(text: string): EpochMillis | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second, offsetHour, offsetMinute] = m.slice(1).map(Number);
  if (year === undefined || month === undefined || day === undefined) return undefined;
  const valid =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    (hour ?? 0) <= 23 &&
    (minute ?? 0) <= 59 &&
    (second ?? 0) <= 59 &&
    (Number.isNaN(offsetHour) || (offsetHour ?? 0) <= 23) &&
    (Number.isNaN(offsetMinute) || (offsetMinute ?? 0) <= 59);
  if (!valid) return undefined;
  const ms = Date.parse(text);
  return Number.isInteger(ms) && ms >= MinEpochMillis && ms <= MaxEpochMillis ? ms : undefined;
}

/**
 * The wire form of an instant: UTC, seconds precision when that is exact (like Kubernetes'
 * metav1.Time), milliseconds otherwise. parseWireTime(formatWireTime(t)) === t.
 *
 * @example formatWireTime(1769677200000) // '2026-01-29T09:00:00Z'
 */
export function formatWireTime(ms: EpochMillis): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

/** A short rendering of a rejected value for an error line (never the whole input). */
export function describeInput(input: unknown): string {
  if (input === undefined) return 'nothing';
  let text: string = typeof input;
  try {
    // Undefined for functions and symbols, whatever its declared type says; throws for a BigInt.
    const json: unknown = JSON.stringify(input);
    if (typeof json === 'string') text = json;
  } catch {
    // keep the type name
  }
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

// ---------------------------------------------------------------------------------------------------
// Names, as the API server validates them (so a reader never has to cope with anything else). Lengths
// are checked before the pattern, so a huge input costs one comparison.

const DNS1123Label = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;
const DNS1123Subdomain = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;
const QualifiedNamePart = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

export function isDNS1123Label(s: string): boolean {
  return s.length <= 63 && DNS1123Label.test(s);
}
export function isDNS1123Subdomain(s: string): boolean {
  return s.length <= 253 && DNS1123Subdomain.test(s);
}
export function isLabelKey(s: string): boolean {
  if (s.length > 317) return false;
  const slash = s.indexOf('/');
  const name = slash < 0 ? s : s.slice(slash + 1);
  return (
    (slash < 0 || isDNS1123Subdomain(s.slice(0, slash))) && name.length <= 63 && QualifiedNamePart.test(name)
  );
}
export function isLabelValue(s: string): boolean {
  return s === '' || (s.length <= 63 && QualifiedNamePart.test(s));
}
