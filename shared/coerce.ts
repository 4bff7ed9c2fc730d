// Coercion of one raw setting value: a string from an environment variable or a CLI flag, or a plain
// value from a scenario, to its type, or a message saying what was expected and what came (strings
// quoted and cut at 60 characters, so one bad value cannot flood the error).
export type Coerced<T> = { ok: true; value: T } | { ok: false; message: string };

export function describeInput(input: unknown): string {
  if (typeof input === 'string')
    return JSON.stringify(input.length > 60 ? `${input.slice(0, 57)}...` : input);
  if (typeof input === 'number' || typeof input === 'boolean' || typeof input === 'bigint')
    return String(input);
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  return typeof input === 'object' ? 'an object' : `a ${typeof input}`;
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

export function coerceNumber(expected: string, valid: (n: number) => boolean, integer = false) {
  return (input: unknown): Coerced<number> => {
    const n =
      typeof input === 'number'
        ? input
        : typeof input === 'string' && NUMBER.test(input.trim())
          ? Number(input)
          : NaN;
    return Number.isFinite(n) && (!integer || Number.isInteger(n)) && valid(n)
      ? { ok: true, value: n }
      : { ok: false, message: `expected ${expected}, got ${describeInput(input)}` };
  };
}

export function coerceBoolean(input: unknown): Coerced<boolean> {
  if (typeof input === 'boolean') return { ok: true, value: input };
  const text = typeof input === 'string' ? input.trim().toLowerCase() : undefined;
  if (text === 'true' || text === '1') return { ok: true, value: true };
  if (text === 'false' || text === '0') return { ok: true, value: false };
  return { ok: false, message: `expected true or false (or 1 / 0), got ${describeInput(input)}` };
}
