// Large digests in one entry (docs/events.md, "Size"): the packed form and the fingerprint shards,
// through the real codec; what the relay chooses (fitDigest); malformed packed payloads; and the
// relay's fast encoder held equal to the codec's.
import { Buffer } from 'node:buffer';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batchEntries, toPutEventsEntries } from '../../shared/adapters/eventbridge/putEvents.js';
import { EventParseError } from '../../shared/errors.js';
import {
  encodeDetail,
  fingerprintShardOf,
  HeartbeatDigestDetail,
  HeartbeatDigestDetailType,
  MaxPackedBytes,
  parseHeartbeatDigest,
  type HeartbeatDigest,
} from '../../shared/events.js';
import {
  DefaultDigestPartMaxBytes,
  DigestEntryOverheadBytes,
  fitDigest,
  heartbeatDigestBytes,
  MaxFingerprintShards,
  mergeDigestParts,
  splitDigest,
} from '../../shared/heartbeatDigest.js';
import { digestWireForms, encodeHeartbeatDigest } from '../../shared/heartbeatDigestWire.js';
import { clusterDigest, clusterProbes, fingerprintsOf } from '../../bench/digestFixtures.js';
import * as arb from '../helpers/eventArbitraries.js';

/** What the bus delivers for a digest: its JSON detail, parsed. */
function overTheWire(digest: HeartbeatDigest): unknown {
  return JSON.parse(JSON.stringify(encodeDetail({ detailType: HeartbeatDigestDetailType, detail: digest })));
}

function parseIssues(detail: unknown): readonly string[] {
  try {
    parseHeartbeatDigest(detail);
  } catch (error) {
    expect(error).toBeInstanceOf(EventParseError);
    return (error as EventParseError).issues;
  }
  throw new Error('expected an EventParseError, nothing was thrown');
}

const small = clusterDigest(clusterProbes(300), fingerprintsOf(clusterProbes(300).keys()));

/** A packed detail of `small`, with `packed` replaced. */
function withPacked(packed: string): Record<string, unknown> {
  const wire = overTheWire({ ...small, packed: true }) as Record<string, unknown>;
  return { ...wire, packed };
}

describe('the packed form', () => {
  it('round-trips through the codec, and holds probeAges, unprobedNodes and leaseVersions', () => {
    const unprobed = new Map(small.fingerprints).set('never-came-up.eu-west-1.compute.internal', 'AAAAAA');
    const [silent] = small.probes.keys();
    const digest: HeartbeatDigest = {
      ...small,
      packed: true,
      fingerprints: unprobed,
      leaseVersions: new Map([[silent ?? '', '81237645']]),
    };
    const wire = overTheWire(digest) as Record<string, unknown>;
    expect(Object.keys(wire)).toEqual(expect.arrayContaining(['packed', 'fingerprints']));
    expect(wire).not.toHaveProperty('probeAges');
    expect(wire).not.toHaveProperty('unprobedNodes');
    expect(wire).not.toHaveProperty('leaseVersions');
    expect(parseHeartbeatDigest(wire)).toEqual(digest);
    // Readable with nothing but base64 and gunzip, as an operator would.
    const inner = JSON.parse(
      gunzipSync(Buffer.from(String(wire.packed), 'base64')).toString('utf8'),
    ) as Record<string, unknown>;
    expect(Object.keys(inner).sort()).toEqual(['leaseVersions', 'probeAges', 'unprobedNodes']);
  });

  it('is decoded to the same digest as the plain form (but for saying it travelled packed)', () => {
    const { packed: _packed, ...fromPacked } = parseHeartbeatDigest(overTheWire({ ...small, packed: true }));
    expect(fromPacked).toEqual(parseHeartbeatDigest(overTheWire(small)));
  });

  it.each([
    { name: 'not base64', packed: 'not base64!', want: 'detail.packed: expected base64' },
    {
      name: 'base64 of something else',
      packed: Buffer.from('hello').toString('base64'),
      want: 'detail.packed: expected gzip data: ',
    },
    { name: 'unpadded base64', packed: 'H4sI', want: 'detail.packed: expected gzip data: ' },
    {
      name: 'gzip of something not JSON',
      packed: gzipSync('{probeAges').toString('base64'),
      want: 'detail.packed: expected gzip of JSON: ',
    },
    {
      name: 'gzip of JSON that is not an object',
      packed: gzipSync('[1]').toString('base64'),
      want: 'detail.packed: expected object, received array',
    },
    {
      name: 'gzip of an object without probeAges',
      packed: gzipSync('{}').toString('base64'),
      want: 'detail.packed.probeAges: ',
    },
    {
      name: 'a bad age inside',
      packed: gzipSync(JSON.stringify({ probeAges: { '': { '': { n1: -5 } } } })).toString('base64'),
      want: 'detail.packed.probeAges[""][""].n1: expected an integer >= 0, got -5',
    },
  ])('rejects $name, naming packed', ({ packed, want }) => {
    const issues = parseIssues(withPacked(packed));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toContain(want);
  });

  it(`rejects a gzip bomb: inflating to over ${MaxPackedBytes} bytes, without inflating it all`, () => {
    // 32 MiB of spaces (valid JSON whitespace) before an object: 32 KB of gzip.
    const bomb = gzipSync(Buffer.concat([Buffer.alloc(2 * MaxPackedBytes, ' '), Buffer.from('{}')]));
    expect(bomb.length).toBeLessThan(100_000);
    expect(parseIssues(withPacked(bomb.toString('base64')))).toEqual([
      `detail.packed: expected gzip data inflating to at most ${MaxPackedBytes} bytes`,
    ]);
  });

  it('rejects per-node fields both inside packed and beside it', () => {
    const wire = overTheWire({ ...small, packed: true }) as Record<string, unknown>;
    const plain = overTheWire(small) as Record<string, unknown>;
    expect(parseIssues({ ...wire, probeAges: plain.probeAges })).toEqual([
      'detail.probeAges: expected inside packed only, not beside it',
    ]);
  });

  it('rejects a digest with neither probeAges nor packed', () => {
    const { probeAges: _none, ...wire } = overTheWire(small) as Record<string, unknown>;
    expect(parseIssues(wire)).toEqual(['detail.probeAges: expected node name levels (or packed)']);
  });
});

describe('fingerprint shards', () => {
  const shard = { index: 1, count: 3 };
  const inShard = (name: string) => fingerprintShardOf(name, shard.count) === shard.index;

  it('a node is always in the same shard, and the shards share the nodes out', () => {
    const names = [...small.probes.keys()];
    const counts = [0, 1, 2].map((index) => names.filter((n) => fingerprintShardOf(n, 3) === index).length);
    expect(counts.reduce((a, b) => a + b)).toBe(names.length);
    for (const count of counts) expect(count).toBeGreaterThan(names.length / 5);
    // FNV-1a 32 of "a" is 0xe40c292c.
    expect(fingerprintShardOf('a', 2 ** 32)).toBe(0xe40c292c);
  });

  it('round-trips a digest with the fingerprints of one shard, plain or packed', () => {
    const fingerprints = new Map([...(small.fingerprints ?? [])].filter(([name]) => inShard(name)));
    fingerprints.set('never-came-up', 'BBBBBB'); // unprobed: fingerprinted whatever the shard
    const digest: HeartbeatDigest = { ...small, fingerprintShard: shard, fingerprints };
    expect(parseHeartbeatDigest(overTheWire(digest))).toEqual(digest);
    expect(parseHeartbeatDigest(overTheWire({ ...digest, packed: true }))).toEqual({
      ...digest,
      packed: true,
    });
  });

  it('refuses to encode fingerprints of probed nodes outside the shard, or missing inside it', () => {
    const outside = z.safeEncode(HeartbeatDigestDetail, { ...small, fingerprintShard: shard });
    expect(outside.error?.issues[0]?.message).toBe(
      'expected no fingerprint for a probed node outside fingerprintShard',
    );
    const none = z.safeEncode(HeartbeatDigestDetail, {
      ...small,
      fingerprintShard: shard,
      fingerprints: new Map(),
    });
    expect(none.error?.issues[0]?.message).toBe(
      'expected a fingerprint for every probed node of fingerprintShard',
    );
  });

  it('rejects a wire whose fingerprints do not match the shard it names', () => {
    const wire = overTheWire(small) as Record<string, unknown>;
    const issues = parseIssues({ ...wire, fingerprintShard: shard });
    expect(issues).toEqual([
      expect.stringMatching(
        /^detail\.fingerprints: expected \d+ fingerprints \(one per node named of fingerprintShard or unprobed\), got 300$/,
      ),
    ]);
    expect(parseIssues({ ...wire, fingerprintShard: { index: 3, count: 3 } })).toEqual([
      'detail.fingerprintShard.index: expected an index below count',
    ]);
  });
});

describe('the relay encoder', () => {
  it('builds what the codec builds, plain, packed and sharded', () => {
    fc.assert(
      fc.property(arb.heartbeatDigest(30), fc.integer({ min: 1, max: 4 }), (d, count) => {
        const forms = digestWireForms(d);
        if (forms === undefined) throw new Error('a valid digest the fast path refuses');
        const sharded = forms.sharded({ index: d.sequence % count, count });
        for (const form of [forms.plain(), forms.packed(), sharded]) {
          if (form === undefined) throw new Error('no form');
          expect(form.wire).toEqual(z.encode(HeartbeatDigestDetail, form.digest));
          expect(parseHeartbeatDigest(JSON.parse(JSON.stringify(form.wire)))).toEqual(form.digest);
        }
        expect(encodeHeartbeatDigest(d)).toEqual(z.encode(HeartbeatDigestDetail, d));
      }),
      { numRuns: 60 },
    );
  });

  it('refuses what the codec refuses (encodeDetail then names it)', () => {
    const [first] = small.probes.keys();
    const later = { ...small, probes: new Map(small.probes).set(first ?? '', small.observedAt + 1) };
    expect(encodeHeartbeatDigest(later)).toBeUndefined();
    expect(digestWireForms(later)).toBeUndefined();
    expect(() => fitDigest(later, DefaultDigestPartMaxBytes)).toThrow(/detail\.probeAges/);
  });
});

describe('fitDigest', () => {
  it('sends a digest that fits as it is: plain, readable JSON', () => {
    const { parts, bytes } = fitDigest(small, DefaultDigestPartMaxBytes);
    expect(parts).toEqual([small]);
    expect(bytes).toBe(heartbeatDigestBytes(small));
  });

  it('packs a digest over the limit, then sends the fingerprints of a shard, then splits', () => {
    const probes = clusterProbes(20_000);
    const digest = clusterDigest(probes, fingerprintsOf(probes.keys()));
    const plain = heartbeatDigestBytes(digest);
    const packed = heartbeatDigestBytes({ ...digest, packed: true });
    expect(packed).toBeLessThan(plain * 0.75);

    const asPacked = fitDigest(digest, packed);
    expect(asPacked.parts).toEqual([{ ...digest, packed: true }]);

    // Fingerprints are 6 bytes a node, incompressible: half of them spare 60 KB.
    const sharded = fitDigest(digest, packed - 50_000);
    expect(sharded.parts).toHaveLength(1);
    const [one] = sharded.parts;
    expect(one?.fingerprintShard).toEqual({ index: digest.sequence % 2, count: 2 });
    expect(sharded.bytes).toBeLessThanOrEqual(packed - 50_000);
    expect(parseHeartbeatDigest(overTheWire(one as HeartbeatDigest))).toEqual(one);

    // Not even the ages fit: parts, each packed, reassembled as the monitor does.
    const split = fitDigest(digest, 100_000);
    expect(split.parts.length).toBeGreaterThan(1);
    for (const part of split.parts) expect(heartbeatDigestBytes(part)).toBeLessThanOrEqual(100_000);
    const received = split.parts.map((part) => parseHeartbeatDigest(overTheWire(part)));
    expect(mergeDigestParts(received)).toEqual({ kind: 'complete', digest });
  });

  it(`turns the shard with the sequence, and uses at most ${MaxFingerprintShards} shards`, () => {
    const probes = clusterProbes(20_000);
    const base = clusterDigest(probes, fingerprintsOf(probes.keys()));
    const limit = heartbeatDigestBytes({ ...base, packed: true }) - 50_000;
    const shards = [0, 1, 2, 3].map(
      (sequence) => fitDigest({ ...base, sequence }, limit).parts[0]?.fingerprintShard,
    );
    expect(shards).toEqual([0, 1, 0, 1].map((index) => ({ index, count: 2 })));
    // Every node's fingerprint comes within `count` digests.
    const seen = new Set<string>();
    for (const sequence of [0, 1]) {
      for (const name of fitDigest({ ...base, sequence }, limit).parts[0]?.fingerprints?.keys() ?? [])
        seen.add(name);
    }
    expect(seen.size).toBe(probes.size);
  });

  it('keeps splitting the old way for a digest of today: parts that merge back', () => {
    const parts = splitDigest(small, 2_000);
    expect(parts.length).toBeGreaterThan(1);
    const received = parts.map((part) => parseHeartbeatDigest(overTheWire(part)));
    expect(mergeDigestParts(received)).toEqual({ kind: 'complete', digest: small });
  });

  // The 100,000-node cluster of bench/digestSize.ts, as infra/relay-large's relay sends it.
  it('sends a 100,000-node digest with fingerprints as one PutEvents entry of at most 1,000,000 bytes', () => {
    const probes = clusterProbes(100_000);
    const digest = clusterDigest(probes, fingerprintsOf(probes.keys()));
    const { parts } = fitDigest(digest, 1_000_000 - DigestEntryOverheadBytes);
    expect(parts).toHaveLength(1);
    const events = parts.map((detail) => ({ detailType: HeartbeatDigestDetailType, detail }) as const);
    const { batches, oversized } = batchEntries(toPutEventsEntries(events, { busName: 'nlc' }));
    expect(oversized).toEqual([]);
    expect(batches).toHaveLength(1);
    const decoded = parseHeartbeatDigest(JSON.parse(batches[0]?.[0]?.Detail ?? 'null'));
    expect(decoded.probes).toEqual(digest.probes);
    expect(decoded.fingerprintShard?.count).toBe(2);
  }, 30_000);
});
