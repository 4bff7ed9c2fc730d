// Durations as settings are written: Go time.ParseDuration syntax ("1m30s", "1.5h") with units ms, s,
// m, h, or a bare number of seconds; parsed exactly (BigInt) to whole milliseconds, and formatted back
// in a form that parses again. Used by the controller's settings, scenarios, the relay and the CLI.
import { z } from 'zod';
import { type Coerced, describeInput } from './coerce.js';
import type { Millis } from './domain/types.js';
import { ConfigError } from './errors.js';

const UNIT_MS = { ms: 1n, s: 1000n, m: 60_000n, h: 3_600_000n } as const;
const DECIMAL = /^(\d+)(?:\.(\d*))?$|^\.(\d+)$/;
const COMPONENT = /(\d+(?:\.\d*)?|\.\d+)(ms|h|m|s)/y;
const DURATION_FORM = 'a duration like "40s", "5m" or a number of seconds';

type DurationResult = { ok: true; ms: Millis } | { ok: false; reason: 'syntax' | 'precision' | 'range' };

/** Exact decimal × unit in ms as a BigInt, or undefined when it is not a whole number of ms. */
function decimalTimes(decimal: string, unit: bigint): bigint | undefined {
  const m = DECIMAL.exec(decimal);
  if (m === null) return undefined;
  const whole = BigInt(m[1] ?? '0') * unit;
  const digits = (m[2] ?? m[3] ?? '').replace(/0+$/, '');
  if (digits === '') return whole;
  const scale = 10n ** BigInt(digits.length);
  const fraction = BigInt(digits) * unit;
  return fraction % scale === 0n ? whole + fraction / scale : undefined;
}

function parseDurationResult(input: string | number): DurationResult {
  if (typeof input === 'number') {
    // Seconds. Floating point: 1.005 s is 1004.9999999999999 ms, so compare with a tolerance.
    if (!Number.isFinite(input)) return { ok: false, reason: 'syntax' };
    const ms = input * 1000;
    const rounded = Math.round(ms);
    if (!Number.isSafeInteger(rounded)) return { ok: false, reason: 'range' };
    return Math.abs(ms - rounded) > 1e-6
      ? { ok: false, reason: 'precision' }
      : { ok: true, ms: rounded || 0 };
  }
  const text = input.trim();
  const sign = text.startsWith('-') ? -1n : 1n;
  const body = text.startsWith('-') || text.startsWith('+') ? text.slice(1) : text;
  if (body === '') return { ok: false, reason: 'syntax' };
  let total = 0n;
  if (DECIMAL.test(body)) {
    const ms = decimalTimes(body, UNIT_MS.s);
    if (ms === undefined) return { ok: false, reason: 'precision' };
    total = ms;
  } else {
    COMPONENT.lastIndex = 0;
    while (COMPONENT.lastIndex < body.length) {
      const m = COMPONENT.exec(body);
      if (m === null) return { ok: false, reason: 'syntax' };
      const unit = m[2] as keyof typeof UNIT_MS;
      const ms = decimalTimes(m[1] ?? '', UNIT_MS[unit]);
      if (ms === undefined) return { ok: false, reason: 'precision' };
      total += ms;
    }
  }
  const ms = Number(sign * total);
  return Number.isSafeInteger(ms) ? { ok: true, ms: ms || 0 } : { ok: false, reason: 'range' };
}

function durationProblem(reason: 'syntax' | 'precision' | 'range', input: unknown): string {
  if (reason === 'precision') return `expected a whole number of milliseconds, got ${describeInput(input)}`;
  if (reason === 'range')
    return `expected a duration shorter than 285,000 years, got ${describeInput(input)}`;
  return `expected ${DURATION_FORM}, got ${describeInput(input)}`;
}

/**
 * Parses a duration: Go `time.ParseDuration` syntax with units `ms`, `s`, `m`, `h` ("500ms", "40s",
 * "1m30s", "1.5h"), or a number of seconds (`40`, `"40"`, `"0.5"`). Signed: each setting decides whether
 * negatives are allowed. Throws a ConfigError for garbage, empty input or sub-millisecond precision.
 *
 * @example
 * parseDuration('1m30s'); // 90000
 * parseDuration(0.5); // 500
 */
export function parseDuration(input: string | number, path = 'duration'): Millis {
  const result = parseDurationResult(input);
  if (result.ok) return result.ms;
  throw new ConfigError([{ path, message: durationProblem(result.reason, input) }]);
}

/**
 * Formats milliseconds for display, in a form parseDuration reads back: "50s", "5m", "1m30s", "100ms",
 * "1h0m" is written "1h". Rounds to a whole millisecond.
 *
 * @example
 * formatDuration(90_000); // '1m30s'
 */
export function formatDuration(ms: Millis): string {
  const rounded = Math.round(Math.abs(ms));
  if (rounded === 0) return '0s';
  const parts: [number, string][] = [
    [Math.floor(rounded / 3_600_000), 'h'],
    [Math.floor(rounded / 60_000) % 60, 'm'],
    [Math.floor(rounded / 1000) % 60, 's'],
    [rounded % 1000, 'ms'],
  ];
  const text = parts
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${n}${unit}`)
    .join('');
  return ms < 0 ? `-${text}` : text;
}

/**
 * A zod schema for a duration field (string or number of seconds) with a lower bound, for the other
 * edges that read durations (scenario offsets, CLI options).
 *
 * @example
 * z.object({ at: durationSchema('nonNegative') }).parse({ at: '30s' }); // { at: 30000 }
 */
export function durationSchema(min: 'any' | 'nonNegative' | 'positive' = 'nonNegative') {
  return z.unknown().transform((input, ctx): Millis => {
    const result = coerceDuration(min)(input);
    if (result.ok) return result.value;
    ctx.addIssue({ code: 'custom', message: result.message });
    return z.NEVER;
  });
}

export function coerceDuration(min: 'any' | 'nonNegative' | 'positive') {
  return (input: unknown): Coerced<Millis> => {
    if (typeof input !== 'string' && typeof input !== 'number') {
      return { ok: false, message: durationProblem('syntax', input) };
    }
    const result = parseDurationResult(input);
    if (!result.ok) return { ok: false, message: durationProblem(result.reason, input) };
    if (min === 'positive' && result.ms <= 0) {
      return { ok: false, message: `expected a duration greater than 0, got ${describeInput(input)}` };
    }
    if (min === 'nonNegative' && result.ms < 0) {
      return { ok: false, message: `expected a duration of 0 or more, got ${describeInput(input)}` };
    }
    return { ok: true, value: result.ms };
  };
}
