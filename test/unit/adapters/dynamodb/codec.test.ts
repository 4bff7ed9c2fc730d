import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareResourceVersions,
  decodeZone,
  encodeInstant,
  encodeZone,
  InstantSchema,
} from '../../../../shared/adapters/dynamodb/codec.js';
import { createZoneID, getZoneKey } from '../../../../shared/domain/zones.js';

describe('zone keys', () => {
  it.each([
    { name: 'region and zone', key: createZoneID('us-east-1', 'us-east-1a'), stored: 'us-east-1:us-east-1a' },
    { name: 'no zone labels (upstream "")', key: '', stored: '-' },
    { name: 'zone only', key: getZoneKey({ 'topology.kubernetes.io/zone': 'z1' }), stored: ':z1' },
    { name: 'separators inside the parts', key: createZoneID('a:b', 'c#d%'), stored: 'a%3Ab:c%23d%25' },
    { name: 'a key without the separator', key: 'odd', stored: '%odd' },
  ])('$name', ({ key, stored }) => {
    expect(encodeZone(key)).toBe(stored);
    expect(decodeZone(stored)).toBe(key);
  });

  it('round-trips any region and zone, and never produces the cluster row key or "#"', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (region, zone) => {
        const key = createZoneID(region, zone);
        const stored = encodeZone(key);
        expect(decodeZone(stored)).toBe(key);
        expect(stored).not.toContain('#');
        expect(stored).not.toContain('\u0000');
      }),
    );
  });
});

describe('instants', () => {
  it('stores whole milliseconds as ISO 8601 and anything finer as the exact number', () => {
    expect(encodeInstant(Date.parse('2026-01-29T09:00:00.250Z'))).toBe('2026-01-29T09:00:00.250Z');
    const retry = 1769677200000 + 0.000244140625;
    expect(encodeInstant(retry)).toBe(retry);
    fc.assert(
      // -0 is the same instant as 0 (it reads back as 0).
      fc.property(
        fc.double({ min: -8.64e15, max: 8.64e15, noNaN: true }).filter((ms) => !Object.is(ms, -0)),
        (ms) => {
          expect(InstantSchema.parse(encodeInstant(ms))).toBe(ms);
        },
      ),
    );
  });

  it('refuses what cannot be stored or read', () => {
    expect(() => encodeInstant(Number.NaN)).toThrow(/invariant/);
    expect(InstantSchema.safeParse('2026-01-29 09:00').success).toBe(false);
    expect(InstantSchema.safeParse(Number.POSITIVE_INFINITY).success).toBe(false);
  });
});

describe('compareResourceVersions', () => {
  it.each([
    { a: '9', b: '10', want: -1 },
    { a: '10', b: '10', want: 0 },
    { a: '123456789012345678901234567890', b: '123456789012345678901234567889', want: 1 },
    { a: '10', b: '9a', want: -1 },
    { a: 'b', b: 'a', want: 1 },
  ])('$a vs $b', ({ a, b, want }) => {
    expect(compareResourceVersions(a, b)).toBe(want);
    expect(compareResourceVersions(b, a)).toBe(-want || 0); // antisymmetric
  });
});
