// The Heartbeat Digest's lease fields for upstream's lease circuit breaker (KEP-5647): `leaseVersions`
// (node → resourceVersion of its Lease as the relay last saw it, for nodes going silent) and
// `leaseResourceVersion` (how far the relay's lease informer has synced). Their wire form, what is
// rejected and how it is named, and how splitDigest and mergeDigestParts carry them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DigestPartsError, EventEncodeError, EventParseError } from '../../shared/errors.js';
import {
  encodeDetail,
  HeartbeatDigestDetailType,
  parseHeartbeatDigest,
  type HeartbeatDigest,
  type HeartbeatDigestWire,
} from '../../shared/events.js';
import { heartbeatDigestBytes, mergeDigestParts, splitDigest } from '../../shared/heartbeatDigest.js';
import * as arb from '../helpers/eventArbitraries.js';

const observedAt = Date.parse('2026-11-21T10:00:00.412Z');
const silent = 'ip-10-0-12-7.eu-west-1.compute.internal';
const silentToo = 'gke-prod-pool-1-4f3a2b1c-x7k2';
const healthy = 'ip-10-0-13-101.eu-west-1.compute.internal';

function digest(overrides: Partial<HeartbeatDigest> = {}): HeartbeatDigest {
  return {
    schemaVersion: 1,
    cluster: 'prod',
    relayId: 'nlc-relay-a',
    leaderSince: Date.parse('2026-11-20T10:00:03.114Z'),
    sequence: 7,
    observedAt,
    observingSince: Date.parse('2026-11-20T10:00:01.500Z'),
    part: { index: 0, count: 1 },
    probes: new Map([
      [silent, observedAt - 31_000],
      [silentToo, observedAt - 18_250],
      [healthy, observedAt - 1_830],
    ]),
    ...overrides,
  };
}

const withLeases = digest({
  leaseVersions: new Map([
    [silent, '81237645'],
    [silentToo, '81237001'],
  ]),
  leaseResourceVersion: '81240012',
});

/** The wire detail as it crosses the bus: encoded, then through JSON. */
function wireOf(d: HeartbeatDigest): HeartbeatDigestWire {
  return JSON.parse(
    JSON.stringify(encodeDetail({ detailType: HeartbeatDigestDetailType, detail: d })),
  ) as HeartbeatDigestWire;
}

/** The lines of the EventParseError `fn` throws (fails the test if it throws anything else or nothing). */
function parseIssues(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(EventParseError);
    return (error as EventParseError).issues;
  }
  throw new Error('expected an EventParseError, nothing was thrown');
}

/** A digest from the arbitraries, with lease versions for some of its probed nodes and maybe a lease RV. */
const digestWithLeases = (maxNodes: number): fc.Arbitrary<HeartbeatDigest> =>
  fc
    .tuple(
      arb.heartbeatDigest(maxNodes),
      fc.array(fc.option(fc.stringMatching(/^[1-9][0-9]{0,19}$/), { nil: undefined }), {
        minLength: maxNodes,
        maxLength: maxNodes,
      }),
      fc.option(fc.stringMatching(/^[1-9][0-9]{0,19}$/), { nil: undefined }),
    )
    .map(([d, versions, leaseResourceVersion]) => {
      const leaseVersions = new Map<string, string>();
      [...d.probes.keys()].forEach((name, i) => {
        const version = versions[i];
        if (version !== undefined) leaseVersions.set(name, version);
      });
      return {
        ...d,
        ...(leaseVersions.size > 0 && { leaseVersions }),
        ...(leaseResourceVersion !== undefined && { leaseResourceVersion }),
      };
    });

describe('Heartbeat Digest lease fields on the wire', () => {
  it('writes leaseVersions as a flat object by node name, and leaseResourceVersion as a string', () => {
    const wire = wireOf(withLeases);
    expect(wire.leaseVersions).toEqual({ [silentToo]: '81237001', [silent]: '81237645' });
    expect(Object.keys(wire.leaseVersions ?? {})).toEqual([silentToo, silent]); // code-point order
    expect(wire.leaseResourceVersion).toBe('81240012');
  });

  it('round-trips leaseVersions and leaseResourceVersion (encode, JSON, decode)', () => {
    expect(parseHeartbeatDigest(wireOf(withLeases))).toEqual(withLeases);
  });

  it('round-trips any digest with lease versions on some of its nodes', () => {
    fc.assert(
      fc.property(digestWithLeases(30), (d) => {
        expect(parseHeartbeatDigest(wireOf(d))).toEqual(d);
      }),
      { numRuns: 100 },
    );
  });

  it('encodes equal digests to equal bytes, whatever the order the versions were added in', () => {
    const reversed = {
      ...withLeases,
      leaseVersions: new Map([...(withLeases.leaseVersions ?? [])].reverse()),
    };
    expect(heartbeatDigestBytes(reversed)).toBe(heartbeatDigestBytes(withLeases));
    expect(JSON.stringify(wireOf(reversed))).toBe(JSON.stringify(wireOf(withLeases)));
  });

  it('omits both fields when there is nothing to say (steady state)', () => {
    const wire = wireOf(digest({ leaseVersions: new Map() }));
    expect(wire).not.toHaveProperty('leaseVersions');
    expect(wire).not.toHaveProperty('leaseResourceVersion');
    expect(heartbeatDigestBytes(digest({ leaseVersions: new Map() }))).toBe(heartbeatDigestBytes(digest()));
  });

  it('still decodes a digest without them (relays before them), and an empty leaseVersions as none', () => {
    const old = wireOf(digest());
    const decoded = parseHeartbeatDigest(old);
    expect(decoded).toEqual(digest());
    expect(decoded.leaseVersions).toBeUndefined();
    expect(decoded.leaseResourceVersion).toBeUndefined();
    expect(parseHeartbeatDigest({ ...old, leaseVersions: {} }).leaseVersions).toBeUndefined();
  });

  it('costs the name, the version and 6 bytes per node going silent, nothing for healthy nodes', () => {
    const base = heartbeatDigestBytes(digest());
    const one = heartbeatDigestBytes(digest({ leaseVersions: new Map([[silent, '81237645']]) }));
    const two = heartbeatDigestBytes(
      digest({
        leaseVersions: new Map([
          [silent, '81237645'],
          [silentToo, '81237001'],
        ]),
      }),
    );
    // `,"leaseVersions":{}` (19 bytes) once, then `"<name>":"<rv>"` and a comma per node.
    expect(one - base).toBe(19 + silent.length + '81237645'.length + 5);
    expect(two - one).toBe(silentToo.length + '81237001'.length + 6);
  });

  it.each([
    {
      name: 'an empty resourceVersion',
      patch: { leaseVersions: { [silent]: '' } },
      want: [`detail.leaseVersions["${silent}"]: expected a resourceVersion (1 to 64 characters), got ""`],
    },
    {
      name: 'a resourceVersion over 64 characters',
      patch: { leaseVersions: { [silent]: '9'.repeat(65) } },
      want: [
        expect.stringMatching(
          /^detail\.leaseVersions\["ip-10-0-12-7\.eu-west-1\.compute\.internal"\]: expected a resourceVersion \(1 to 64 characters\), got "9+/,
        ),
      ],
    },
    {
      name: 'a resourceVersion that is not a string',
      patch: { leaseVersions: { [silent]: 81237645 } },
      want: [
        `detail.leaseVersions["${silent}"]: expected a resourceVersion (1 to 64 characters), got 81237645`,
      ],
    },
    {
      name: 'a node with a lease version but no probe',
      patch: { leaseVersions: { 'ip-10-0-99-1.eu-west-1.compute.internal': '5' } },
      want: [
        'detail.leaseVersions["ip-10-0-99-1.eu-west-1.compute.internal"]: expected a probe for every node with a lease version',
      ],
    },
    {
      name: 'a "__proto__" node name (JSON.parse keeps it; a record would drop it silently)',
      patch: { leaseVersions: JSON.parse('{"__proto__": "5"}') as unknown },
      want: ['detail.leaseVersions: expected a node name, got "__proto__"'],
    },
    {
      name: 'a key that is not a node name',
      patch: { leaseVersions: { 'Node 1': '5' } },
      want: [
        'detail.leaseVersions["Node 1"]: invalid key: expected a node name (a DNS-1123 subdomain), got "Node 1"',
      ],
    },
    {
      name: 'leaseVersions that are not an object',
      patch: { leaseVersions: [[silent, '5']] },
      want: ['detail.leaseVersions: expected record, received array'],
    },
    {
      name: 'an empty leaseResourceVersion',
      patch: { leaseResourceVersion: '' },
      want: ['detail.leaseResourceVersion: expected a resourceVersion (1 to 64 characters), got ""'],
    },
    {
      name: 'a leaseResourceVersion that is a number',
      patch: { leaseResourceVersion: 81240012 },
      want: ['detail.leaseResourceVersion: expected a resourceVersion (1 to 64 characters), got 81240012'],
    },
  ])('rejects $name, naming the field', ({ patch, want }) => {
    const wire = { ...wireOf(digest()), ...patch };
    expect(parseIssues(() => parseHeartbeatDigest(wire))).toEqual(want);
  });

  it('refuses to encode what it would reject: a lease version for a node without a probe', () => {
    const orphan = digest({ leaseVersions: new Map([['ip-10-0-99-1.eu-west-1.compute.internal', '5']]) });
    expect(() => encodeDetail({ detailType: HeartbeatDigestDetailType, detail: orphan })).toThrow(
      EventEncodeError,
    );
    expect(() => encodeDetail({ detailType: HeartbeatDigestDetailType, detail: orphan })).toThrow(
      /leaseVersions.*expected a probe for every node with a lease version/,
    );
    const tooLong = digest({ leaseResourceVersion: '1'.repeat(65) });
    expect(() => encodeDetail({ detailType: HeartbeatDigestDetailType, detail: tooLong })).toThrow(
      /leaseResourceVersion.*expected a resourceVersion \(1 to 64 characters\)/,
    );
  });
});

describe('splitDigest and mergeDigestParts with lease versions', () => {
  // 300 nodes, one in three silent with a lease version.
  const names = Array.from(
    { length: 300 },
    (_, i) => `ip-10-0-${i >> 4}-${i & 15}.eu-west-1.compute.internal`,
  );
  const big = digest({
    probes: new Map(names.map((name, i) => [name, observedAt - (i % 3 === 0 ? 20_000 + i : i)])),
    leaseVersions: new Map(
      names.filter((_, i) => i % 3 === 0).map((name, i) => [name, String(9_000_000 + i)]),
    ),
    leaseResourceVersion: '9001234',
  });

  it('gives each part the lease versions of its nodes, and leaseResourceVersion on every part', () => {
    const parts = splitDigest(big, 2000);
    expect(parts.length).toBeGreaterThan(1);
    let versions = 0;
    for (const part of parts) {
      expect(heartbeatDigestBytes(part)).toBeLessThanOrEqual(2000); // and so it encodes: it is valid
      expect(part.leaseResourceVersion).toBe('9001234');
      for (const [name, version] of part.leaseVersions ?? []) {
        expect(part.probes.has(name)).toBe(true);
        expect(big.leaseVersions?.get(name)).toBe(version);
        versions++;
      }
      for (const name of part.probes.keys()) {
        expect(part.leaseVersions?.get(name)).toBe(big.leaseVersions?.get(name));
      }
    }
    expect(versions).toBe(100);
  });

  it('merges the parts back into the digest, in any order, with duplicate deliveries', () => {
    const parts = splitDigest(big, 2000);
    const shuffled = [...parts.slice(1), parts[0], parts[1]].filter((p) => p !== undefined);
    expect(mergeDigestParts(shuffled)).toEqual({ kind: 'complete', digest: big });
  });

  it('merges any split digest with lease versions back into it', () => {
    fc.assert(
      fc.property(digestWithLeases(60), fc.integer({ min: 500, max: 3000 }), (d, maxBytes) => {
        fc.pre(d.probes.size > 0);
        const parts = splitDigest(d, maxBytes);
        expect(mergeDigestParts([...parts].reverse())).toEqual({ kind: 'complete', digest: d });
      }),
      { numRuns: 50 },
    );
  });

  it('keeps the lowest-indexed part’s leaseResourceVersion should the parts differ', () => {
    const parts = splitDigest(big, 2000).map((part) => ({
      ...part,
      leaseResourceVersion: String(9_001_234 + part.part.index),
    }));
    const merged = mergeDigestParts([...parts].reverse());
    expect(merged.kind === 'complete' && merged.digest.leaseResourceVersion).toBe('9001234');
    // A part without one (it cannot come from one relay, but the first that has one counts).
    const { leaseResourceVersion: _, ...first } = parts[0] ?? big;
    const again = mergeDigestParts([first, ...parts.slice(1)]);
    expect(again.kind === 'complete' && again.digest.leaseResourceVersion).toBe('9001235');
  });

  it('throws DigestPartsError for two deliveries of one part with different lease versions', () => {
    const parts = splitDigest(big, 2000);
    const first = parts[0];
    if (first === undefined) throw new Error('no parts');
    const changed = { ...first, leaseVersions: new Map([[[...first.probes.keys()][0] ?? '', '1']]) };
    expect(() => mergeDigestParts([...parts, changed])).toThrow(DigestPartsError);
    expect(() => mergeDigestParts([...parts, changed])).toThrow(/two different parts with index 0/);
  });
});
