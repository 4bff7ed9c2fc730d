// Label and field selector parsing and matching (k8s.io/apimachinery labels.Parse, fields.ParseSelector).
import { describe, expect, it } from 'vitest';
import {
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from '../../../../local/apiserver/selectors.js';

describe('parseLabelSelector', () => {
  it.each([
    { input: '', want: [] },
    { input: 'a', want: [{ key: 'a', operator: 'Exists', values: [] }] },
    { input: '!a', want: [{ key: 'a', operator: 'DoesNotExist', values: [] }] },
    { input: 'a=b', want: [{ key: 'a', operator: 'Equals', values: ['b'] }] },
    { input: 'a==b', want: [{ key: 'a', operator: 'Equals', values: ['b'] }] },
    { input: 'a!=b', want: [{ key: 'a', operator: 'NotEquals', values: ['b'] }] },
    { input: 'a=', want: [{ key: 'a', operator: 'Equals', values: [''] }] },
    { input: 'a in (b, c)', want: [{ key: 'a', operator: 'In', values: ['b', 'c'] }] },
    { input: 'a notin (b,)', want: [{ key: 'a', operator: 'NotIn', values: ['b', ''] }] },
    {
      input: 'x>5,y<3',
      want: [
        { key: 'x', operator: 'Gt', values: ['5'] },
        { key: 'y', operator: 'Lt', values: ['3'] },
      ],
    },
    {
      input: 'example.com/zone=a, !gpu',
      want: [
        { key: 'example.com/zone', operator: 'Equals', values: ['a'] },
        { key: 'gpu', operator: 'DoesNotExist', values: [] },
      ],
    },
  ])('parses "$input"', ({ input, want }) => {
    expect(parseLabelSelector(input)).toEqual(want);
  });

  it.each(['a in b', 'a in ()', '=b', 'a=b c', 'a b', 'a/b/c', 'x>y'])('rejects "%s" with 400', (input) => {
    expect(() => parseLabelSelector(input)).toThrow(/unable to parse requirement/);
  });
});

describe('matchesLabels', () => {
  const labels = { zone: 'a', size: '4' };
  it.each([
    ['zone', true],
    ['!zone', false],
    ['zone=a', true],
    ['zone!=a', false],
    ['missing!=a', true],
    ['zone in (a,b)', true],
    ['zone notin (a)', false],
    ['missing notin (a)', true],
    ['size>3', true],
    ['size<3', false],
    ['zone=a,size=4', true],
  ])('"%s" → %s', (selector, want) => {
    expect(matchesLabels(parseLabelSelector(selector), labels)).toBe(want);
  });
});

describe('parseFieldSelector', () => {
  const supported = new Set(['spec.nodeName', 'metadata.name']);
  it('parses =, == and != and an empty value', () => {
    expect(parseFieldSelector('spec.nodeName=a,metadata.name!=b,spec.nodeName==', supported)).toEqual([
      { field: 'spec.nodeName', operator: 'Equals', value: 'a' },
      { field: 'metadata.name', operator: 'NotEquals', value: 'b' },
      { field: 'spec.nodeName', operator: 'Equals', value: '' },
    ]);
  });

  it('rejects a field the kind does not index', () => {
    expect(() => parseFieldSelector('status.phase=Running', supported)).toThrow(
      'field label not supported: status.phase',
    );
  });

  it('matches against the indexed values', () => {
    const selector = parseFieldSelector('spec.nodeName=a,metadata.name!=b', supported);
    expect(matchesFields(selector, (f) => (f === 'spec.nodeName' ? 'a' : 'c'))).toBe(true);
    expect(matchesFields(selector, (f) => (f === 'spec.nodeName' ? 'a' : 'b'))).toBe(false);
  });
});
