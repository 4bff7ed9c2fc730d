import { describe, expect, it } from 'vitest';
import {
  defaultTolerationSeconds,
  getMatchingTolerations,
  getMinTolerationTime,
  toleratesTaint,
} from '../../../shared/domain/tolerations.js';
import type { Taint, Toleration } from '../../../shared/domain/types.js';
import { upstreamBehaviour } from '../../../shared/domain/upstreamVersion.js';

const notReady = 'node.kubernetes.io/not-ready';
const unreachable = 'node.kubernetes.io/unreachable';

describe('toleratesTaint', () => {
  const taint: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoExecute' };
  it.each<{ name: string; toleration: Toleration; taint?: Taint; want: boolean }>([
    {
      name: 'Equal with the same key, value and effect',
      toleration: { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoExecute' },
      want: true,
    },
    {
      name: 'empty operator means Equal',
      toleration: { key: 'dedicated', value: 'gpu', effect: 'NoExecute' },
      want: true,
    },
    {
      name: 'explicit empty operator means Equal',
      toleration: { key: 'dedicated', operator: '', value: 'gpu', effect: 'NoExecute' },
      want: true,
    },
    {
      name: 'Equal with a different value',
      toleration: { key: 'dedicated', operator: 'Equal', value: 'cpu', effect: 'NoExecute' },
      want: false,
    },
    {
      name: 'Equal with no value against a valued taint',
      toleration: { key: 'dedicated', operator: 'Equal', effect: 'NoExecute' },
      want: false,
    },
    {
      name: 'Equal with no value against an unvalued taint',
      toleration: { key: 'k', effect: 'NoExecute' },
      taint: { key: 'k', effect: 'NoExecute' },
      want: true,
    },
    {
      name: 'Equal with "" value against an absent taint value',
      toleration: { key: 'k', value: '', effect: 'NoExecute' },
      taint: { key: 'k', effect: 'NoExecute' },
      want: true,
    },
    {
      name: 'Exists matches any value',
      toleration: { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' },
      want: true,
    },
    {
      name: 'Exists ignores its own value',
      toleration: { key: 'dedicated', operator: 'Exists', value: 'other', effect: 'NoExecute' },
      want: true,
    },
    {
      name: 'different key',
      toleration: { key: 'other', operator: 'Exists', effect: 'NoExecute' },
      want: false,
    },
    { name: 'empty key with Exists matches every key', toleration: { operator: 'Exists' }, want: true },
    {
      name: 'empty key with Equal matches any key with that value (validation would reject it)',
      toleration: { value: 'gpu' },
      want: true,
    },
    { name: 'empty key with Equal and another value', toleration: { value: 'cpu' }, want: false },
    {
      name: 'empty effect matches every effect',
      toleration: { key: 'dedicated', operator: 'Exists' },
      want: true,
    },
    {
      name: 'explicit empty effect matches every effect',
      toleration: { key: 'dedicated', operator: 'Exists', effect: '' },
      want: true,
    },
    {
      name: 'NoSchedule toleration vs NoExecute taint',
      toleration: { key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' },
      want: false,
    },
    {
      name: 'PreferNoSchedule toleration vs NoExecute taint',
      toleration: { operator: 'Exists', effect: 'PreferNoSchedule' },
      want: false,
    },
    {
      name: 'unknown operator matches nothing',
      toleration: { key: 'dedicated', operator: 'In' as Toleration['operator'], value: 'gpu' },
      want: false,
    },
  ])('$name', ({ toleration, taint: t, want }) => {
    expect(toleratesTaint(toleration, t ?? taint)).toBe(want);
  });

  describe('Lt / Gt (numeric comparison of taint value against toleration value)', () => {
    const numeric = (value: string): Taint => ({ key: 'level', value, effect: 'NoExecute' });
    it.each<{
      name: string;
      operator: 'Lt' | 'Gt';
      tolerationValue?: string;
      taintValue: string;
      want: boolean;
    }>([
      {
        name: 'Lt: taint below toleration',
        operator: 'Lt',
        tolerationValue: '10',
        taintValue: '5',
        want: true,
      },
      { name: 'Lt: equal values', operator: 'Lt', tolerationValue: '10', taintValue: '10', want: false },
      {
        name: 'Lt: taint above toleration',
        operator: 'Lt',
        tolerationValue: '10',
        taintValue: '11',
        want: false,
      },
      {
        name: 'Gt: taint above toleration',
        operator: 'Gt',
        tolerationValue: '10',
        taintValue: '11',
        want: true,
      },
      { name: 'Gt: equal values', operator: 'Gt', tolerationValue: '10', taintValue: '10', want: false },
      {
        name: 'Gt: taint below toleration',
        operator: 'Gt',
        tolerationValue: '10',
        taintValue: '9',
        want: false,
      },
      { name: 'Gt: negative numbers', operator: 'Gt', tolerationValue: '-5', taintValue: '-4', want: true },
      {
        name: 'Lt: leading plus sign and zeros parse',
        operator: 'Lt',
        tolerationValue: '+010',
        taintValue: '009',
        want: true,
      },
      {
        name: 'Gt: int64 max is in range',
        operator: 'Gt',
        tolerationValue: '9223372036854775806',
        taintValue: '9223372036854775807',
        want: true,
      },
      {
        name: 'Lt: int64 min is in range',
        operator: 'Lt',
        tolerationValue: '-9223372036854775807',
        taintValue: '-9223372036854775808',
        want: true,
      },
      {
        name: 'Gt: beyond int64 does not parse',
        operator: 'Gt',
        tolerationValue: '1',
        taintValue: '9223372036854775808',
        want: false,
      },
      {
        name: 'Lt: beyond int64 min does not parse',
        operator: 'Lt',
        tolerationValue: '-9223372036854775809',
        taintValue: '-9223372036854775810',
        want: false,
      },
      {
        name: 'Lt: non-numeric taint value',
        operator: 'Lt',
        tolerationValue: '10',
        taintValue: 'abc',
        want: false,
      },
      {
        name: 'Gt: non-numeric toleration value',
        operator: 'Gt',
        tolerationValue: 'x',
        taintValue: '5',
        want: false,
      },
      { name: 'Gt: empty toleration value', operator: 'Gt', taintValue: '5', want: false },
      {
        name: 'Lt: decimal does not parse',
        operator: 'Lt',
        tolerationValue: '10',
        taintValue: '1.5',
        want: false,
      },
      {
        name: 'Lt: surrounding space does not parse',
        operator: 'Lt',
        tolerationValue: '10',
        taintValue: ' 5',
        want: false,
      },
      {
        name: 'Lt: underscores do not parse in base 10',
        operator: 'Lt',
        tolerationValue: '1_000',
        taintValue: '5',
        want: false,
      },
      {
        name: 'Gt: hex prefix does not parse in base 10',
        operator: 'Gt',
        tolerationValue: '0x1',
        taintValue: '5',
        want: false,
      },
    ])('$name', ({ operator, tolerationValue, taintValue, want }) => {
      const toleration: Toleration = { key: 'level', operator, effect: 'NoExecute', value: tolerationValue };
      expect(toleratesTaint(toleration, numeric(taintValue))).toBe(want);
    });

    // KEP-5471 came in v1.35; before, the matcher's switch had no such case: unknown operators
    // tolerate nothing, whatever the values.
    it.each([
      { version: '1.34', want: false },
      { version: '1.35', want: true },
      { version: '1.37', want: true },
    ] as const)('at emulationVersion $version, Lt tolerating 5 < 10: $want', ({ version, want }) => {
      const toleration: Toleration = { key: 'level', operator: 'Lt', effect: 'NoExecute', value: '10' };
      const rules = upstreamBehaviour(version);
      expect(toleratesTaint(toleration, numeric('5'), rules)).toBe(want);
      expect(getMatchingTolerations([numeric('5')], [toleration], rules).allTolerated).toBe(want);
    });

    it('Lt/Gt still require the key and effect to match', () => {
      expect(toleratesTaint({ key: 'other', operator: 'Lt', value: '10' }, numeric('5'))).toBe(false);
      expect(
        toleratesTaint({ key: 'level', operator: 'Lt', value: '10', effect: 'NoSchedule' }, numeric('5')),
      ).toBe(false);
      expect(toleratesTaint({ operator: 'Lt', value: '10' }, numeric('5'))).toBe(true);
    });
  });
});

describe('getMatchingTolerations', () => {
  const t1: Taint = { key: 'testTaint1', value: 'test1', effect: 'NoExecute' };
  const t2: Taint = { key: 'testTaint2', value: 'test2', effect: 'NoExecute' };
  const tol1Finite: Toleration = {
    key: 'testTaint1',
    operator: 'Exists',
    effect: 'NoExecute',
    tolerationSeconds: 10,
  };
  const tol1Forever: Toleration = { key: 'testTaint1', operator: 'Exists', effect: 'NoExecute' };
  const tol2: Toleration = { key: 'testTaint2', value: 'test2', effect: 'NoExecute', tolerationSeconds: 60 };
  const wildcard: Toleration = { operator: 'Exists' };

  it.each<{
    name: string;
    taints: Taint[];
    tolerations: Toleration[];
    want: { allTolerated: boolean; used: Toleration[] };
  }>([
    {
      name: 'no taints: all tolerated, none used',
      taints: [],
      tolerations: [tol1Finite],
      want: { allTolerated: true, used: [] },
    },
    {
      name: 'no taints and no tolerations',
      taints: [],
      tolerations: [],
      want: { allTolerated: true, used: [] },
    },
    {
      name: 'taints but no tolerations',
      taints: [t1],
      tolerations: [],
      want: { allTolerated: false, used: [] },
    },
    {
      name: 'one taint, one matching toleration',
      taints: [t1],
      tolerations: [tol1Finite],
      want: { allTolerated: true, used: [tol1Finite] },
    },
    {
      name: 'one used toleration per taint, in taint order',
      taints: [t2, t1],
      tolerations: [tol1Finite, tol2],
      want: { allTolerated: true, used: [tol2, tol1Finite] },
    },
    {
      name: 'one taint not tolerated: nothing used',
      taints: [t1, t2],
      tolerations: [tol1Finite],
      want: { allTolerated: false, used: [] },
    },
    {
      name: 'first match wins: finite before forever',
      taints: [t1],
      tolerations: [tol1Finite, tol1Forever],
      want: { allTolerated: true, used: [tol1Finite] },
    },
    {
      name: 'first match wins: forever before finite',
      taints: [t1],
      tolerations: [tol1Forever, tol1Finite],
      want: { allTolerated: true, used: [tol1Forever] },
    },
    {
      name: 'one toleration may serve several taints',
      taints: [t1, t2],
      tolerations: [wildcard],
      want: { allTolerated: true, used: [wildcard, wildcard] },
    },
  ])('$name', ({ taints, tolerations, want }) => {
    expect(getMatchingTolerations(taints, tolerations)).toEqual(want);
  });

  it('first-match order decides the eviction time: finite before forever is evicted after the finite time, reversed never', () => {
    const finiteFirst = getMatchingTolerations([t1], [tol1Finite, tol1Forever]);
    const foreverFirst = getMatchingTolerations([t1], [tol1Forever, tol1Finite]);
    expect(getMinTolerationTime(finiteFirst.used)).toBe(10_000);
    expect(getMinTolerationTime(foreverFirst.used)).toBe(-1);
  });
});

describe('TestGetMinTolerationTime', () => {
  // Upstream's cases have no names; these describe them.
  it.each<{ name: string; tolerations: Toleration[]; expected: number }>([
    { name: 'no tolerations: 0', tolerations: [], expected: 0 },
    { name: '[nil]: -1 (forever)', tolerations: [{}], expected: -1 },
    {
      name: '[1s, 2s]: 1s',
      tolerations: [{ tolerationSeconds: 1 }, { tolerationSeconds: 2 }],
      expected: 1000,
    },
    { name: '[1s, nil]: 1s', tolerations: [{ tolerationSeconds: 1 }, {}], expected: 1000 },
    { name: '[nil, 1s]: 1s', tolerations: [{}, { tolerationSeconds: 1 }], expected: 1000 },
  ])('$name', ({ tolerations, expected }) => {
    expect(getMinTolerationTime(tolerations)).toBe(expected);
  });
});

describe('getMinTolerationTime (own cases)', () => {
  it.each<{ name: string; tolerations: Toleration[]; expected: number }>([
    { name: 'zero seconds: evict now', tolerations: [{ tolerationSeconds: 0 }], expected: 0 },
    { name: 'negative seconds: evict now', tolerations: [{ tolerationSeconds: -5 }], expected: 0 },
    {
      name: 'a negative anywhere wins over positives',
      tolerations: [{ tolerationSeconds: 300 }, { tolerationSeconds: -1 }],
      expected: 0,
    },
    { name: 'a zero wins over forever', tolerations: [{}, { tolerationSeconds: 0 }], expected: 0 },
    {
      name: 'the minimum, in any order',
      tolerations: [{ tolerationSeconds: 300 }, { tolerationSeconds: 60 }, {}],
      expected: 60_000,
    },
    { name: 'all forever', tolerations: [{}, {}], expected: -1 },
  ])('$name', ({ tolerations, expected }) => {
    expect(getMinTolerationTime(tolerations)).toBe(expected);
  });
});

describe('TestForgivenessAdmission', () => {
  const defaultNotReady: Toleration = {
    key: notReady,
    operator: 'Exists',
    effect: 'NoExecute',
    tolerationSeconds: 300,
  };
  const defaultUnreachable: Toleration = {
    key: unreachable,
    operator: 'Exists',
    effect: 'NoExecute',
    tolerationSeconds: 300,
  };
  it.each<{ description: string; requested: Toleration[]; expected: Toleration[] }>([
    {
      description:
        'pod has no tolerations, expect add tolerations for `notread:NoExecute` and `unreachable:NoExecute`',
      requested: [],
      expected: [defaultNotReady, defaultUnreachable],
    },
    {
      description:
        'pod has tolerations, but none is for taint `notread:NoExecute` or `unreachable:NoExecute`, expect add tolerations for `notread:NoExecute` and `unreachable:NoExecute`',
      requested: [
        { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule', tolerationSeconds: 700 },
      ],
      expected: [
        { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule', tolerationSeconds: 700 },
        defaultNotReady,
        defaultUnreachable,
      ],
    },
    {
      description:
        'pod specified a toleration for taint `notReady:NoExecute`, expect add toleration for `unreachable:NoExecute`',
      requested: [{ key: notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 700 }],
      expected: [
        { key: notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 700 },
        defaultUnreachable,
      ],
    },
    {
      description:
        'pod specified a toleration for taint `unreachable:NoExecute`, expect add toleration for `notReady:NoExecute`',
      requested: [{ key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 700 }],
      expected: [
        { key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 700 },
        defaultNotReady,
      ],
    },
    {
      description:
        'pod specified tolerations for both `notread:NoExecute` and `unreachable:NoExecute`, expect no change',
      requested: [
        { key: notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 700 },
        { key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 700 },
      ],
      expected: [
        { key: notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 700 },
        { key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 700 },
      ],
    },
    {
      description:
        'pod specified toleration for taint `unreachable`, expect add toleration for `notReady:NoExecute`',
      requested: [{ key: unreachable, operator: 'Exists', tolerationSeconds: 700 }],
      expected: [{ key: unreachable, operator: 'Exists', tolerationSeconds: 700 }, defaultNotReady],
    },
    {
      description: 'pod has wildcard toleration for all kind of taints, expect no change',
      requested: [{ operator: 'Exists', tolerationSeconds: 700 }],
      expected: [{ operator: 'Exists', tolerationSeconds: 700 }],
    },
  ])('$description', ({ requested, expected }) => {
    expect(defaultTolerationSeconds(requested)).toEqual(expected);
  });
});

describe('defaultTolerationSeconds (own cases)', () => {
  it('docs/upstream.md#quirk-23: an Equal toleration with a value that matches no real unreachable taint still blocks the default', () => {
    const requested: Toleration[] = [
      { key: unreachable, operator: 'Equal', value: 'x', effect: 'NoExecute' },
    ];
    const admitted = defaultTolerationSeconds(requested);
    expect(admitted).toEqual([
      ...requested,
      { key: notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
    // ...so the pod has no toleration for the NLC's unreachable taint and is evicted at once.
    const taint: Taint = { key: unreachable, effect: 'NoExecute', timeAdded: 0 };
    expect(getMatchingTolerations([taint], admitted).allTolerated).toBe(false);
  });

  it('a zero-seconds toleration blocks the default too (seconds are not checked)', () => {
    const requested: Toleration[] = [
      { key: notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 },
    ];
    expect(defaultTolerationSeconds(requested)).toEqual([
      ...requested,
      { key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
  });

  it('a NoSchedule toleration for the same key does not block the default', () => {
    const requested: Toleration[] = [{ key: notReady, operator: 'Exists', effect: 'NoSchedule' }];
    expect(defaultTolerationSeconds(requested)).toHaveLength(3);
  });

  it('an empty-key toleration with an effect other than NoExecute blocks nothing', () => {
    expect(defaultTolerationSeconds([{ operator: 'Exists', effect: 'NoSchedule' }])).toHaveLength(3);
  });

  it('DaemonSet-style forever tolerations listed first: nothing added', () => {
    const requested: Toleration[] = [
      { key: notReady, operator: 'Exists', effect: 'NoExecute' },
      { key: unreachable, operator: 'Exists', effect: 'NoExecute' },
    ];
    expect(defaultTolerationSeconds(requested)).toEqual(requested);
  });

  it('uses the configured seconds (kube-apiserver flags)', () => {
    expect(defaultTolerationSeconds([], { notReadySeconds: 30, unreachableSeconds: 60 })).toEqual([
      { key: notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
      { key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
    ]);
  });

  it('returns a new array and leaves its input alone; running it twice adds nothing more', () => {
    const requested: Toleration[] = [];
    const once = defaultTolerationSeconds(requested);
    expect(requested).toEqual([]);
    expect(defaultTolerationSeconds(once)).toEqual(once);
  });
});
