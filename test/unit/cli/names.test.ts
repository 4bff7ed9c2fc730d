// Natural order and "did you mean" for names: one helper for every table of `nlc` and the live view.
import { describe, expect, it } from 'vitest';
import { closeNames, naturalCompare } from '../../../shared/present/names.js';
import { editDistance } from '../../../shared/suggest.js';

describe('naturalCompare', () => {
  it.each([
    { name: 'numbered nodes', input: ['a-10', 'a-2', 'a-1'], want: ['a-1', 'a-2', 'a-10'] },
    {
      name: 'zones, then node numbers past 9',
      input: ['zone-b-1', 'zone-a-10', 'zone-a-9', 'zone-a-1'],
      want: ['zone-a-1', 'zone-a-9', 'zone-a-10', 'zone-b-1'],
    },
    {
      name: 'region:zone keys, and "" for nodes without zone labels first',
      input: ['region-10:zone-a', 'region-2:zone-a', ''],
      want: ['', 'region-2:zone-a', 'region-10:zone-a'],
    },
    {
      name: 'EC2 host names',
      input: ['ip-10-0-1-170', 'ip-10-0-1-17', 'ip-10-0-1-9'],
      want: ['ip-10-0-1-9', 'ip-10-0-1-17', 'ip-10-0-1-170'],
    },
  ])('$name', ({ input, want }) => {
    expect([...input].sort(naturalCompare)).toEqual(want);
  });

  it('is a total order: antisymmetric, 0 only for the same string, the same whatever the input order', () => {
    const names = ['a-1', 'A-1', 'a1', 'a-01', 'a-1 ', 'b', 'a-10', 'a-2'];
    for (const a of names) {
      for (const b of names) {
        expect(Math.sign(naturalCompare(a, b)) + Math.sign(naturalCompare(b, a))).toBe(0);
        expect(naturalCompare(a, b) === 0).toBe(a === b);
      }
    }
    expect([...names].reverse().sort(naturalCompare)).toEqual([...names].sort(naturalCompare));
  });
});

describe('editDistance', () => {
  it.each([
    { a: '', b: '', want: 0 },
    { a: 'a-1', b: 'a-1', want: 0 },
    { a: 'a-1', b: 'a-11', want: 1 },
    { a: 'kitten', b: 'sitting', want: 3 },
    { a: '', b: 'abc', want: 3 },
  ])('$a → $b: $want', ({ a, b, want }) => {
    expect(editDistance(a, b)).toBe(want);
    // Symmetric.
    expect(editDistance(b, a)).toBe(want);
  });
});

describe('closeNames', () => {
  const known = ['zone-a-1', 'zone-a-2', 'zone-a-10', 'zone-b-1', 'zone-c-1'];

  it('suggests the closest known names, closest first, then in natural order', () => {
    expect(closeNames('zone-a-11', known)).toEqual(['zone-a-1', 'zone-a-10', 'zone-a-2']);
    expect(closeNames('zone-a-11', known, 1)).toEqual(['zone-a-1']);
  });

  it('suggests nothing far away, nor the name itself', () => {
    expect(closeNames('web-server', known)).toEqual([]);
    expect(closeNames('zone-a-1', ['zone-a-1'])).toEqual([]);
  });
});
