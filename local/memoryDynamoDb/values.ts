// DynamoDB attribute values as the wire holds them ({S}, {N}, {M}, …): DynamoDB's ordering and equality,
// exact decimal numbers (38 digits, as DynamoDB stores them, so a resourceVersion beyond 2^53 still
// compares right) and item sizes for consumed capacity.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

export type Value = AttributeValue;
export type Item = Record<string, Value>;

export type ValueType = 'S' | 'N' | 'B' | 'BOOL' | 'NULL' | 'M' | 'L' | 'SS' | 'NS' | 'BS';

export function typeOf(value: Value): ValueType {
  if (value.S !== undefined) return 'S';
  if (value.N !== undefined) return 'N';
  if (value.BOOL !== undefined) return 'BOOL';
  if (value.M !== undefined) return 'M';
  if (value.L !== undefined) return 'L';
  if (value.NULL !== undefined) return 'NULL';
  if (value.B !== undefined) return 'B';
  if (value.SS !== undefined) return 'SS';
  if (value.NS !== undefined) return 'NS';
  if (value.BS !== undefined) return 'BS';
  throw new ValueError(
    'an attribute value has no type (expected one of S, N, B, BOOL, NULL, M, L, SS, NS, BS)',
  );
}

/** A value DynamoDB refuses (ValidationException). */
export class ValueError extends Error {
  override readonly name = 'ValueError';
}

// ---------------------------------------------------------------------------------------------------
// Numbers: m × 10^e with a BigInt mantissa, exact like DynamoDB's decimals.

interface Decimal {
  readonly m: bigint;
  readonly e: number;
}

const NUMBER = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/;

export function parseDecimal(text: string): Decimal {
  const match = NUMBER.exec(text);
  const whole = match?.[2] ?? '';
  const fraction = match?.[3] ?? '';
  if (match === null || whole + fraction === '') throw new ValueError(`'${text}' is not a number`);
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  let m = BigInt(digits === '' ? '0' : digits);
  let e = Number(match[4] ?? '0') - fraction.length;
  if (m === 0n) return { m: 0n, e: 0 };
  while (m % 10n === 0n) {
    m /= 10n;
    e++;
  }
  if (digits.replace(/0+$/, '').length > 38)
    throw new ValueError(`'${text}' has more than 38 significant digits`);
  return { m: match[1] === '-' ? -m : m, e };
}

function aligned(a: Decimal, b: Decimal): [bigint, bigint] {
  if (a.e === b.e) return [a.m, b.m];
  return a.e > b.e ? [a.m * 10n ** BigInt(a.e - b.e), b.m] : [a.m, b.m * 10n ** BigInt(b.e - a.e)];
}

// Most numbers stored here are integers that fit a double exactly: those skip the BigInt path.
const SMALL_INTEGER = /^(?:0|-?[1-9]\d{0,14})$/;

/** A number's canonical text (DynamoDB stores 1.50 as 1.5): the key of a number in a Map. */
export function canonicalNumber(text: string): string {
  return SMALL_INTEGER.test(text) ? text : formatDecimal(parseDecimal(text));
}

/** The number a small integer's text stands for (exact as a double), else undefined. */
export function smallIntegerValue(text: string): number | undefined {
  return SMALL_INTEGER.test(text) ? Number(text) : undefined;
}

export function compareNumbers(a: string, b: string): number {
  if (a === b) return 0;
  if (SMALL_INTEGER.test(a) && SMALL_INTEGER.test(b)) return Math.sign(Number(a) - Number(b));
  const [x, y] = aligned(parseDecimal(a), parseDecimal(b));
  return x < y ? -1 : x > y ? 1 : 0;
}

export function formatDecimal({ m, e }: Decimal): string {
  if (m === 0n) return '0';
  const sign = m < 0n ? '-' : '';
  const digits = (m < 0n ? -m : m).toString();
  if (e >= 0) return `${sign}${digits}${'0'.repeat(e)}`;
  const point = digits.length + e;
  return point > 0
    ? `${sign}${digits.slice(0, point)}.${digits.slice(point)}`
    : `${sign}0.${'0'.repeat(-point)}${digits}`;
}

export function addNumbers(a: string, b: string, subtract = false): string {
  if (SMALL_INTEGER.test(a) && SMALL_INTEGER.test(b))
    return String(subtract ? Number(a) - Number(b) : Number(a) + Number(b));
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  const [p, q] = aligned(x, y);
  const m = subtract ? p - q : p + q;
  return formatDecimal(parseDecimal(formatDecimal({ m, e: Math.min(x.e, y.e) })));
}

// ---------------------------------------------------------------------------------------------------
// Ordering and equality

/** UTF-8 byte order (DynamoDB's order for strings) without encoding: code point order. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 puts surrogates (code points ≥ U+10000) below U+E000–U+FFFF; code point order does not.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

function compareBinary(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(
    Buffer.from(a.buffer, a.byteOffset, a.byteLength),
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

/**
 * The order of two scalar values of the same type (S, N, B), else undefined: DynamoDB's `<`, `<=`,
 * `>`, `>=` and BETWEEN are false across types.
 */
export function compareValues(a: Value, b: Value): number | undefined {
  if (a.S !== undefined) return b.S === undefined ? undefined : compareStrings(a.S, b.S);
  if (a.N !== undefined) return b.N === undefined ? undefined : compareNumbers(a.N, b.N);
  if (a.B !== undefined) return b.B === undefined ? undefined : compareBinary(a.B, b.B);
  return undefined;
}

export function valuesEqual(a: Value, b: Value): boolean {
  const type = typeOf(a);
  if (type !== typeOf(b)) return false;
  switch (type) {
    case 'S':
    case 'N':
    case 'B':
      return compareValues(a, b) === 0;
    case 'BOOL':
      return a.BOOL === b.BOOL;
    case 'NULL':
      return true;
    case 'L': {
      const x = a.L ?? [];
      const y = b.L ?? [];
      return x.length === y.length && x.every((v, i) => valuesEqual(v, y[i] as Value));
    }
    case 'M': {
      const x = a.M ?? {};
      const y = b.M ?? {};
      const keys = Object.keys(x);
      return (
        keys.length === Object.keys(y).length &&
        keys.every((k) => y[k] !== undefined && valuesEqual(x[k] as Value, y[k]))
      );
    }
    case 'SS':
      return sameSet(a.SS ?? [], b.SS ?? [], (v, w) => v === w);
    case 'NS':
      return sameSet(a.NS ?? [], b.NS ?? [], (v, w) => compareNumbers(v, w) === 0);
    case 'BS':
      return sameSet(a.BS ?? [], b.BS ?? [], (v, w) => compareBinary(v, w) === 0);
  }
}

function sameSet<T>(a: readonly T[], b: readonly T[], eq: (x: T, y: T) => boolean): boolean {
  return a.length === b.length && a.every((x) => b.some((y) => eq(x, y)));
}

// ---------------------------------------------------------------------------------------------------
// Checks and sizes

/**
 * Checks a value DynamoDB would store (and copies it, so the caller's objects are never shared with
 * the table): one type, numbers that parse, sets non-empty without duplicates.
 */
export function checkedCopy(input: unknown, where: string): Value {
  if (typeof input !== 'object' || input === null) throw new ValueError(`${where}: not an attribute value`);
  const value = input as Value;
  // Counted with a loop: every attribute of every item written comes through here.
  let types = 0;
  for (const key of Object.keys(input)) if ((input as Record<string, unknown>)[key] !== undefined) types++;
  if (types !== 1)
    throw new ValueError(`${where}: an attribute value must have exactly one type, found ${types}`);
  switch (typeOf(value)) {
    case 'S':
      return { S: String(value.S) };
    case 'N': {
      const n = String(value.N);
      return { N: SMALL_INTEGER.test(n) ? n : formatDecimal(parseDecimal(n)) };
    }
    case 'BOOL':
      return { BOOL: value.BOOL === true };
    case 'NULL':
      if (value.NULL !== true) throw new ValueError(`${where}: NULL must be true`);
      return { NULL: true };
    case 'B':
      return { B: Uint8Array.from(value.B ?? []) };
    case 'L':
      return { L: (value.L ?? []).map((v, i) => checkedCopy(v, `${where}[${i}]`)) };
    case 'M': {
      const out: Item = {};
      const map = value.M ?? {};
      for (const k of Object.keys(map)) out[k] = checkedCopy(map[k], `${where}.${k}`);
      return { M: out };
    }
    case 'SS':
      return { SS: checkedSet(value.SS ?? [], where, (s) => s) };
    case 'NS':
      return { NS: checkedSet(value.NS ?? [], where, (s) => formatDecimal(parseDecimal(s))) };
    case 'BS':
      return { BS: checkedSet(value.BS ?? [], where, (b) => Uint8Array.from(b)) };
  }
}

function checkedSet<T>(values: readonly T[], where: string, copy: (v: T) => T): T[] {
  if (values.length === 0) throw new ValueError(`${where}: an empty set is not allowed`);
  const out = values.map(copy);
  const keys = new Set(
    out.map((v) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : String(v))),
  );
  if (keys.size !== out.length) throw new ValueError(`${where}: a set holds duplicate values`);
  return out;
}

/** Bytes of a value, by DynamoDB's published rules (UTF-8 strings, ~1 byte per 2 digits, 3 + elements). */
export function valueSize(value: Value): number {
  switch (typeOf(value)) {
    case 'S':
      return Buffer.byteLength(value.S ?? '');
    case 'N': {
      // About one byte per two significant digits, plus one (DynamoDB's rule of thumb).
      const significant = (value.N ?? '0')
        .replace(/[eE].*$/, '')
        .replace(/[^0-9]/g, '')
        .replace(/^0+/, '')
        .replace(/0+$/, '');
      return 1 + Math.ceil(significant.length / 2);
    }
    case 'B':
      return value.B?.byteLength ?? 0;
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'L':
      return 3 + (value.L ?? []).reduce((sum, v) => sum + 1 + valueSize(v), 0);
    case 'M': {
      const map = value.M ?? {};
      let size = 3;
      for (const k of Object.keys(map)) {
        const v = map[k];
        if (v !== undefined) size += 1 + Buffer.byteLength(k) + valueSize(v);
      }
      return size;
    }
    case 'SS':
      return (value.SS ?? []).reduce((sum, s) => sum + Buffer.byteLength(s), 0);
    case 'NS':
      return (value.NS ?? []).reduce((sum, n) => sum + valueSize({ N: n }), 0);
    case 'BS':
      return (value.BS ?? []).reduce((sum, b) => sum + b.byteLength, 0);
  }
}

// Items are never changed in place (updates build new ones): an item's size is computed once.
const sizes = new WeakMap<Item, number>();

export function itemSize(item: Item): number {
  const known = sizes.get(item);
  if (known !== undefined) return known;
  let size = 0;
  for (const name of Object.keys(item)) {
    const value = item[name];
    if (value !== undefined) size += Buffer.byteLength(name) + valueSize(value);
  }
  sizes.set(item, size);
  return size;
}

export type SetType = 'SS' | 'NS' | 'BS';

/** The members of a set value as scalar values ({S}, {N} or {B}), or undefined for another type. */
export function setMembers(value: Value): { type: SetType; members: Value[] } | undefined {
  if (value.SS !== undefined) return { type: 'SS', members: value.SS.map((S) => ({ S })) };
  if (value.NS !== undefined) return { type: 'NS', members: value.NS.map((N) => ({ N })) };
  if (value.BS !== undefined) return { type: 'BS', members: value.BS.map((B) => ({ B })) };
  return undefined;
}

/** A set value of `type` from scalar members (undefined when empty: DynamoDB stores no empty set). */
export function setOf(type: SetType, members: readonly Value[]): Value | undefined {
  if (members.length === 0) return undefined;
  if (type === 'SS') return { SS: members.map((m) => m.S ?? '') };
  if (type === 'NS') return { NS: members.map((m) => m.N ?? '0') };
  return { BS: members.map((m) => m.B ?? new Uint8Array()) };
}
