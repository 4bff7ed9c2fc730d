// The digest's fast checks (plain loops) against the zod schemas they stand in for: a fast check may
// hold only for what the schema accepts, or a bad digest would get through unchecked; and it must hold
// for what relays send, or every digest would take the slow path.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  fingerprintMapIsValid,
  HeartbeatDigestDetail,
  ProbeAgesSchema,
  probeAgesAreValid,
  probesAreValid,
} from '../../shared/heartbeatDigestWire.js';
import { EpochMillisSchema, NodeName } from '../../shared/eventPrimitives.js';
import { MaxEpochMillis, MinEpochMillis } from '../../shared/wireFormat.js';

/** Mostly what relays send, sometimes anything a level may not hold. */
const mostly = <T>(valid: fc.Arbitrary<T>, odd: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: odd });
const oddKeys = fc.constantFrom(
  'A',
  'a_b',
  '-a',
  '.a',
  'a..b',
  'a.',
  '__proto__',
  'ü',
  'x'.repeat(254),
  'a-b',
  'a.b',
  '',
);
const domains = mostly(
  fc.constantFrom('', 'eu-west-1.compute.internal', 'c', 'constructor', 'x'.repeat(253)),
  oddKeys,
);
const prefixes = mostly(
  fc.constantFrom('', 'ip-10-0-12', 'gke-pool-1-4f3a', 'a-', 'toString', 'y'.repeat(251)),
  oddKeys,
);
const suffixes = mostly(fc.constantFrom('7', 'x7k2', 'constructor', '0', 'z'.repeat(253)), oddKeys);
const ages = mostly(
  fc.nat(),
  fc.constantFrom(-1, 1.5, Number.NaN, Infinity, 2 ** 53, '5', null, true, MaxEpochMillis),
);
const notAnObject = fc.constantFrom(null, [], 'x', 3, new Date(0), new Map(), [['a', 1]]);

/** Objects as JSON.parse makes them (an own `__proto__` key included), or something else. */
function level(keys: fc.Arbitrary<unknown>, inner: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return mostly(
    fc.array(fc.tuple(keys, inner), { maxLength: 3 }).map((entries) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of entries) {
        Object.defineProperty(out, String(k), {
          value: v,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }),
    notAnObject,
  );
}

const probeAges = level(domains, level(prefixes, level(suffixes, ages)));

describe('probeAgesAreValid', () => {
  it('holds only for what ProbeAgesSchema accepts, and for everything it accepts', () => {
    fc.assert(
      fc.property(probeAges, (value) => {
        expect(probeAgesAreValid(value)).toBe(ProbeAgesSchema.safeParse(value).success);
      }),
      { numRuns: 3000, seed: 42 },
    );
  });

  it('takes an own __proto__ key (JSON.parse makes one) as invalid', () => {
    const value: unknown = JSON.parse('{"": {"__proto__": {"1": 0}}}');
    expect(probeAgesAreValid(value)).toBe(false);
    expect(ProbeAgesSchema.safeParse(value).success).toBe(false);
  });
});

describe('fingerprintMapIsValid', () => {
  it('holds for valid names and fingerprints only', () => {
    expect(fingerprintMapIsValid(new Map([['n1', 'AbC-_9']]))).toBe(true);
    expect(fingerprintMapIsValid(new Map([['n1', 'AbC-_']]))).toBe(false);
    expect(fingerprintMapIsValid(new Map([['N1', 'AbC-_9']]))).toBe(false);
    expect(fingerprintMapIsValid(new Map([['n1', 3]]))).toBe(false);
    expect(fingerprintMapIsValid({})).toBe(false);
  });
});

describe('probesAreValid', () => {
  const Slow = z.map(NodeName, EpochMillisSchema);
  const names = mostly(
    fc.constantFrom('a-1.b', 'ip-10-0-12-7.eu-west-1.compute.internal', 'n1'),
    fc.oneof(oddKeys, fc.constantFrom(3, undefined)),
  );
  const instants = fc.oneof(
    fc.constantFrom(MinEpochMillis, MaxEpochMillis, MinEpochMillis - 1, MaxEpochMillis + 1, 0.5, '1', null),
    fc.integer({ min: MinEpochMillis, max: MaxEpochMillis }),
  );
  it('holds only for what z.map(NodeName, EpochMillis) accepts, and for everything it accepts', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          {
            weight: 9,
            arbitrary: fc.array(fc.tuple(names, instants), { maxLength: 5 }).map((e) => new Map(e)),
          },
          { weight: 1, arbitrary: fc.constantFrom({}, [], null, new Set()) },
        ),
        (value) => {
          expect(probesAreValid(value)).toBe(Slow.safeParse(value).success);
        },
      ),
      { numRuns: 3000, seed: 42 },
    );
  });
});

describe('HeartbeatDigestDetail with the fast checks', () => {
  const wire = {
    schemaVersion: 1,
    cluster: 'prod',
    relayId: 'relay-0',
    leaderSince: '2026-01-01T00:00:00Z',
    sequence: 3,
    observedAt: '2026-01-01T00:05:00Z',
    part: { index: 0, count: 1 },
    probeAges: {
      'eu-west-1.compute.internal': { 'ip-10-0-12': { '7': 1500, '8': 0 } },
      '': { '': { n1: 2 } },
    },
  };

  it('decodes and encodes a valid digest back to the same wire form', () => {
    const digest = HeartbeatDigestDetail.parse(wire);
    expect([...digest.probes]).toEqual([
      ['ip-10-0-12-7.eu-west-1.compute.internal', Date.parse('2026-01-01T00:05:00Z') - 1500],
      ['ip-10-0-12-8.eu-west-1.compute.internal', Date.parse('2026-01-01T00:05:00Z')],
      ['n1', Date.parse('2026-01-01T00:05:00Z') - 2],
    ]);
    expect(z.encode(HeartbeatDigestDetail, digest)).toEqual({ ...wire, observingSince: wire.leaderSince });
  });

  it('names each bad level as the schema does (the slow path reports)', () => {
    const probeAges = { 'EU.x': { 'ip-1': { '7': 1 } }, 'eu.x': { 'ip-1': { '7': -3, B: 1 } } };
    const result = HeartbeatDigestDetail.safeParse({ ...wire, probeAges });
    const reference = ProbeAgesSchema.safeParse(probeAges);
    expect(result.error?.issues.map((i) => [i.code, i.path.join('/')])).toEqual([
      ['invalid_key', 'probeAges/EU.x'],
      ['too_small', 'probeAges/eu.x/ip-1/7'],
      ['invalid_key', 'probeAges/eu.x/ip-1/B'],
    ]);
    expect(result.error?.issues).toEqual(
      reference.error?.issues.map((i) => ({ ...i, path: ['probeAges', ...i.path] })),
    );
  });

  it('carries one fingerprint per node, in name order, for probed and unprobed nodes, and back', () => {
    // Names in code-point order: ip-10-0-12-7…, ip-10-0-12-8…, ip-10-0-12-9… (unprobed), n1.
    const fingerprints = 'AAAAAABBBBBBCCCCCCx_y-z0';
    const unprobedNodes = ['ip-10-0-12-9.eu-west-1.compute.internal'];
    const digest = HeartbeatDigestDetail.parse({ ...wire, fingerprints, unprobedNodes });
    expect([...(digest.fingerprints ?? [])]).toEqual([
      ['ip-10-0-12-7.eu-west-1.compute.internal', 'AAAAAA'],
      ['ip-10-0-12-8.eu-west-1.compute.internal', 'BBBBBB'],
      ['ip-10-0-12-9.eu-west-1.compute.internal', 'CCCCCC'], // a kubelet that never came up: no probe
      ['n1', 'x_y-z0'],
    ]);
    expect(digest.probes.has('ip-10-0-12-9.eu-west-1.compute.internal')).toBe(false);
    expect(z.encode(HeartbeatDigestDetail, digest)).toEqual({
      ...wire,
      observingSince: wire.leaderSince,
      fingerprints,
      unprobedNodes,
    });
    // A relay that sends none: the functions get none.
    expect(HeartbeatDigestDetail.parse(wire).fingerprints).toBeUndefined();
  });

  it.each([
    {
      name: 'one fingerprint too few',
      extra: { fingerprints: 'AAAAAABBBBBB' },
      want: [['fingerprints', 'expected 3 fingerprints (one per node named), got 2']],
    },
    {
      name: 'a fingerprint cut short',
      extra: { fingerprints: 'AAAAAABBBBBBCCCCC' },
      want: [['fingerprints', 'expected fingerprints of 6 base64url characters each, back to back']],
    },
    {
      name: 'unprobed nodes without fingerprints',
      extra: { unprobedNodes: ['n2'] },
      want: [['unprobedNodes', 'expected only with fingerprints']],
    },
    {
      name: 'an unprobed node that has a probe',
      extra: { fingerprints: 'AAAAAABBBBBBCCCCCCDDDDDD', unprobedNodes: ['n1'] },
      want: [['unprobedNodes', 'expected no probe for n1, got one in probeAges']],
    },
  ])('names what is wrong: $name', ({ extra, want }) => {
    const result = HeartbeatDigestDetail.safeParse({ ...wire, ...extra });
    expect(result.error?.issues.map((i) => [i.path.join('/'), i.message])).toEqual(want);
  });

  it('refuses to encode fingerprints that leave out a probed node', () => {
    const digest = HeartbeatDigestDetail.parse(wire);
    const result = z.safeEncode(HeartbeatDigestDetail, {
      ...digest,
      fingerprints: new Map([['n1', 'AAAAAA']]),
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.message)).toContain(
      'expected a fingerprint for every probed node',
    );
  });

  it('refuses to encode a digest whose probes name an invalid node', () => {
    const digest = HeartbeatDigestDetail.parse(wire);
    const probes = new Map(digest.probes).set('Not_A_Node', digest.observedAt);
    const result = z.safeEncode(HeartbeatDigestDetail, { ...digest, probes });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('/'))).toEqual(['probes/Not_A_Node']);
  });
});
