// injectEvent's merge (local/simulate/injectedEvents.ts): the scenario's fields over the detail the relay
// would send. Objects merge key by key, recursively; arrays and scalars (null included) replace. A table,
// each case also checked for the properties every merge keeps (docs/contributing.md#table-tests).
import { describe, expect, it } from 'vitest';
import { mergeDetail } from '../../../../local/simulate/injectedEvents.js';

const base = {
  schemaVersion: 1,
  type: 'MODIFIED',
  node: {
    name: 'a-1',
    labels: { zone: 'a', region: 'r' },
    taints: [{ key: 'k', effect: 'NoSchedule' }],
    conditions: [{ type: 'Ready', status: 'True' }],
  },
  probeAges: { '': { a: { '1': 5000, '2': 0 } } },
};

describe('mergeDetail', () => {
  it.each([
    { name: 'nothing to merge', override: {}, want: base },
    { name: 'a scalar replaces', override: { type: 'DELETED' }, want: { ...base, type: 'DELETED' } },
    {
      name: 'a nested scalar replaces, its siblings stay',
      override: { node: { name: 'a-2' } },
      want: { ...base, node: { ...base.node, name: 'a-2' } },
    },
    {
      name: 'objects merge at every depth',
      override: { node: { labels: { zone: 'b', extra: 'x' } }, probeAges: { '': { a: { '3': 7 } } } },
      want: {
        ...base,
        node: { ...base.node, labels: { zone: 'b', region: 'r', extra: 'x' } },
        probeAges: { '': { a: { '1': 5000, '2': 0, '3': 7 } } },
      },
    },
    {
      name: 'an array replaces the whole array',
      override: { node: { taints: [] } },
      want: { ...base, node: { ...base.node, taints: [] } },
    },
    {
      name: 'an array of objects is not merged item by item',
      override: { node: { conditions: [{ type: 'Ready' }] } },
      want: { ...base, node: { ...base.node, conditions: [{ type: 'Ready' }] } },
    },
    {
      name: 'null replaces (a field cannot be removed)',
      override: { node: { labels: null } },
      want: { ...base, node: { ...base.node, labels: null } },
    },
    {
      name: 'an object replaces a scalar, a scalar an object',
      override: { schemaVersion: { v: 2 }, node: 'a-1' },
      want: { ...base, schemaVersion: { v: 2 }, node: 'a-1' },
    },
    { name: 'a new key is added', override: { forged: true }, want: { ...base, forged: true } },
  ])('$name', ({ override, want }) => {
    const before = JSON.stringify(base);
    const overrideBefore = JSON.stringify(override);
    const merged = mergeDetail(base, override);
    expect(merged).toEqual(want);
    // Neither input changes.
    expect(JSON.stringify(base)).toBe(before);
    expect(JSON.stringify(override)).toBe(overrideBefore);
    // Idempotent: merging the same fields again changes nothing.
    expect(mergeDetail(merged, override)).toEqual(merged);
    // Every top-level key of either is in the result, and the override's scalars win.
    expect(new Set(Object.keys(merged as object))).toEqual(
      new Set([...Object.keys(base), ...Object.keys(override)]),
    );
  });

  it('takes a key named __proto__ as a field, not as the prototype', () => {
    const override = JSON.parse('{"node": {"__proto__": {"polluted": true}}}') as unknown;
    const merged = mergeDetail(base, override) as { node: Record<string, unknown> };
    expect(Object.hasOwn(merged.node, '__proto__')).toBe(true);
    expect(JSON.stringify(merged.node)).toContain('"__proto__":{"polluted":true}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(merged.node)).toBe(Object.prototype);
  });

  it('gives the override itself when either side is not an object', () => {
    expect(mergeDetail(undefined, { a: 1 })).toEqual({ a: 1 });
    expect(mergeDetail([1, 2], [3])).toEqual([3]);
    expect(mergeDetail({ a: 1 }, 'x')).toBe('x');
  });
});
