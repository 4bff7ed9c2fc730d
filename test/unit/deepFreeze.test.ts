// shared/deepFreeze.ts: what the API simulator, the in-memory DynamoDB and the digest encoder share.
import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../shared/deepFreeze.js';

describe('deepFreeze', () => {
  it('freezes objects and arrays all the way down and returns the value itself', () => {
    const value = { a: { b: [1, { c: 'x' }] }, d: null };
    expect(deepFreeze(value)).toBe(value);
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.a)).toBe(true);
    expect(Object.isFrozen(value.a.b)).toBe(true);
    expect(Object.isFrozen(value.a.b[1])).toBe(true);
    expect(() => {
      (value.a.b as unknown[]).push(2);
    }).toThrow(TypeError);
  });

  it('leaves bytes as they are (a typed array cannot be frozen)', () => {
    const bytes = new Uint8Array([1, 2]);
    const value = deepFreeze({ bytes });
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(bytes)).toBe(false);
  });

  it('passes scalars through', () => {
    expect(deepFreeze('s')).toBe('s');
    expect(deepFreeze(null)).toBe(null);
    expect(deepFreeze(3)).toBe(3);
  });
});
