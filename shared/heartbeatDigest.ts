// The Heartbeat Digest as a stream: its position, fitting a large digest into an EventBridge entry
// (packed, fingerprints of a shard, or split into parts), and reassembling the parts. The contract itself (fields, wire
// encoding) is in events.ts; the reasoning and the measured sizes are in docs/events.md.
import type { EpochMillis } from './domain/types.js';
import { DigestPartsError } from './errors.js';
import {
  encodeDetail,
  HeartbeatDigestDetailType,
  RelaySource,
  utf8Bytes,
  type HeartbeatDigest,
  type HeartbeatDigestWire,
} from './events.js';
import { digestWireForms, type DigestWireForms } from './heartbeatDigestWire.js';

/**
 * The longest quiet digest period (docs/relay.md, "Quiet digests"): a third of the grace period. The
 * functions take a digest missing for longer than the grace period as an observation gap; at a third,
 * two quiet digests lost in a row still are not one. The relay's setting is bounded by it, and the
 * functions clamp what a digest says to it.
 *
 * @example maxQuietDigestPeriod({ nodeMonitorGracePeriod: 50_000 }); // 16666
 */
export function maxQuietDigestPeriod(config: { readonly nodeMonitorGracePeriod: number }): number {
  return Math.floor(config.nodeMonitorGracePeriod / 3);
}

/**
 * Where a digest stands in the relay's stream: its relay term (`relayId`, and `leaderSince`, the
 * relay-clock instant the relay became leader) and its `sequence` within the term. Only the sequence
 * orders digests, and only within a term; which term counts is the leader Lease's to say, and a relay's
 * clock orders nothing (shared/digestClock.ts).
 */
export type DigestPosition = Pick<HeartbeatDigest, 'leaderSince' | 'relayId' | 'sequence'>;

/** What a digest's entry counts besides its detail: its Source and DetailType (putEventsEntrySize). */
export const DigestEntryOverheadBytes = utf8Bytes(RelaySource) + utf8Bytes(HeartbeatDigestDetailType);

/**
 * The entry size the relay keeps a digest within unless told otherwise: the pre-2026 EventBridge entry
 * limit (256 KB) less a margin, so digests fit in every partition. Since 29 January 2026 an entry may
 * be up to 1 MB (PutEventsMaxBytes); the relay's setting says which (docs/relay.md).
 */
export const DefaultDigestEntryMaxBytes = 256 * 1024 - 1024;

/** The detail size that keeps a digest within DefaultDigestEntryMaxBytes. */
export const DefaultDigestPartMaxBytes = DefaultDigestEntryMaxBytes - DigestEntryOverheadBytes;

/**
 * The most shards the relay cuts the fingerprints into to keep a digest in one entry (fitDigest): each
 * node's copy is then checked at least every 4 digests (20 s) instead of every one.
 */
export const MaxFingerprintShards = 4;

function detailBytes(wire: HeartbeatDigestWire): number {
  return utf8Bytes(JSON.stringify(wire));
}

/** UTF-8 bytes of the digest's JSON detail as the relay sends it (packed if it says so). */
export function heartbeatDigestBytes(digest: HeartbeatDigest): number {
  return detailBytes(
    encodeDetail({ detailType: HeartbeatDigestDetailType, detail: digest }) as HeartbeatDigestWire,
  );
}

/** The forms of a digest, or the EventEncodeError naming what is wrong with it. */
function formsOf(digest: HeartbeatDigest): DigestWireForms {
  const forms = digestWireForms(digest);
  if (forms !== undefined) return forms;
  heartbeatDigestBytes(digest); // throws EventEncodeError, naming the field
  throw new RangeError('a digest the codec encodes but its fast path does not');
}

interface Sized {
  readonly digest: HeartbeatDigest;
  readonly bytes: number;
}

/**
 * Fewer bytes than a digest's plain detail can take: 6 a probe (`"7":0,`) and 6 a fingerprint. Above
 * maxBytes, the plain form is not built: at 100,000 nodes that spares 1.6 MB of JSON a digest.
 */
function plainBytesAtLeast({ probes, fingerprints }: HeartbeatDigest): number {
  return 6 * probes.size + 6 * (fingerprints?.size ?? 0);
}

/** Plain when that fits in maxBytes, else packed (fitting or not): the smaller form that is readable. */
function smallestForm(digest: HeartbeatDigest, forms: DigestWireForms, maxBytes: number): Sized {
  if (plainBytesAtLeast(digest) > maxBytes) {
    const packed = forms.packed();
    if (packed !== undefined) return { digest: packed.digest, bytes: detailBytes(packed.wire) };
  }
  const plain = forms.plain();
  const plainBytes = detailBytes(plain.wire);
  if (plainBytes <= maxBytes) return { digest: plain.digest, bytes: plainBytes };
  const packed = forms.packed();
  if (packed === undefined) return { digest: plain.digest, bytes: plainBytes };
  return { digest: packed.digest, bytes: detailBytes(packed.wire) };
}

/** A digest as the relay sends it: its parts (one, but for a digest that fits in no single entry) and their bytes. */
export interface FittedDigest {
  readonly parts: readonly HeartbeatDigest[];
  /** The parts' detail bytes, in all. */
  readonly bytes: number;
}

/**
 * The whole digest (part 0 of 1) as the relay sends it, each part's detail at most `maxBytes`: as it is
 * (plain JSON) when that fits; else packed; else packed with the fingerprints of one shard of the probed
 * nodes (2 to MaxFingerprintShards shards, the fewest that fit, the shard turning with the sequence, so
 * every node's comes every so many digests); else split into parts (splitDigest), each plain or packed.
 * One entry, whenever it can be, spares the functions the reassembly of parts (a DynamoDB write per
 * part). Throws EventEncodeError for a digest that cannot be encoded, RangeError as splitDigest.
 *
 * @example fitDigest(digest, 1_000_000 - DigestEntryOverheadBytes).parts.length // 1 for 100,000 nodes
 */
export function fitDigest(digest: HeartbeatDigest, maxBytes: number): FittedDigest {
  if (digest.part.count !== 1) throw new RangeError('fitDigest: expected a whole digest (part 0 of 1)');
  const forms = formsOf(digest);
  const smallest = smallestForm(digest, forms, maxBytes);
  if (smallest.bytes <= maxBytes) return { parts: [smallest.digest], bytes: smallest.bytes };
  const { fingerprints } = digest;
  if (fingerprints !== undefined && smallest.digest.packed === true) {
    for (let count = 2; count <= MaxFingerprintShards; count++) {
      // Not built when it cannot fit: a shard's fingerprints are about 1/count of them (5 % of slack
      // for the shards' uneven sizes), and the rest of the packed digest stays as it is.
      const estimate = smallest.bytes - 6 * fingerprints.size * (1 - 1 / count);
      if (estimate > maxBytes * 1.05) continue;
      const form = forms.sharded({ index: digest.sequence % count, count });
      const bytes = form === undefined ? Number.POSITIVE_INFINITY : detailBytes(form.wire);
      if (bytes <= maxBytes) return { parts: [form?.digest ?? digest], bytes };
    }
  }
  const parts = splitSized(digest, maxBytes, smallest.bytes);
  return { parts: parts.map((part) => part.digest), bytes: parts.reduce((sum, part) => sum + part.bytes, 0) };
}

/**
 * Splits a whole digest (part 0 of 1) into parts whose JSON detail is at most `maxBytes` each, each
 * plain or, when that is over, packed. Each part carries the same identity (cluster, relayId,
 * leaderSince, sequence, observedAt) and leaseResourceVersion, and a disjoint slice of the nodes, in
 * name order (their probes, fingerprints and lease versions; a part whose nodes have no lease version
 * carries none). A digest that fits is returned as is (packed if that is what fits).
 * Throws a RangeError when even one probe per part does not fit.
 *
 * @example splitDigest(digest, DefaultDigestPartMaxBytes).length // 1 for 5,000 nodes (about 87 KB)
 */
export function splitDigest(digest: HeartbeatDigest, maxBytes: number): HeartbeatDigest[] {
  if (digest.part.count !== 1) throw new RangeError('splitDigest: expected a whole digest (part 0 of 1)');
  const whole = smallestForm(digest, formsOf(digest), maxBytes);
  if (whole.bytes <= maxBytes) return [whole.digest];
  return splitSized(digest, maxBytes, whole.bytes).map((part) => part.digest);
}

function splitSized(digest: HeartbeatDigest, maxBytes: number, total: number): Sized[] {
  const { fingerprints, leaseVersions } = digest;
  // Every node named: probed, fingerprinted, or both.
  // Default sort: node names are ASCII, so code-unit order is code-point order.
  const names = [...new Set([...digest.probes.keys(), ...(fingerprints?.keys() ?? [])])].sort();
  // Contiguous, near-equal slices; more parts until every part fits (rarely more than one retry): as
  // many more as the largest part is over, so a hopeless case ends in a few tries, not one per node.
  if (names.length === 0) {
    throw new RangeError(`splitDigest: a digest without probes is already over ${maxBytes} bytes`);
  }
  let count = Math.min(names.length, Math.max(2, Math.ceil(total / maxBytes)));
  for (;;) {
    const parts = Array.from({ length: count }, (_, index): Sized => {
      const slice = names.slice(
        Math.floor((index * names.length) / count),
        Math.floor(((index + 1) * names.length) / count),
      );
      const probes = new Map<string, EpochMillis>();
      const sliced = new Map<string, string>();
      const versions = new Map<string, string>();
      for (const name of slice) {
        const probe = digest.probes.get(name);
        if (probe !== undefined) probes.set(name, probe);
        const fingerprint = fingerprints?.get(name);
        if (fingerprint !== undefined) sliced.set(name, fingerprint);
        // Every node with a lease version has a probe, so it is one of the names sliced.
        const version = leaseVersions?.get(name);
        if (version !== undefined) versions.set(name, version);
      }
      const { leaseVersions: _whole, ...identity } = digest;
      const part: HeartbeatDigest = {
        ...identity,
        part: { index, count },
        probes,
        ...(fingerprints !== undefined && { fingerprints: sliced }),
        ...(versions.size > 0 && { leaseVersions: versions }),
      };
      return smallestForm(part, formsOf(part), maxBytes);
    });
    const largest = Math.max(...parts.map((part) => part.bytes));
    if (largest <= maxBytes) return parts;
    if (count >= names.length) break;
    count = Math.min(names.length, Math.max(count + 1, Math.ceil((count * largest) / maxBytes)));
  }
  throw new RangeError(`splitDigest: a single probe does not fit in ${maxBytes} bytes`);
}

export type MergeDigestResult =
  | { readonly kind: 'complete'; readonly digest: HeartbeatDigest }
  /** Some parts have not arrived yet (each part is its own event); `missing` lists their indexes. */
  | { readonly kind: 'incomplete'; readonly missing: readonly number[] };

const identityFields = [
  'schemaVersion',
  'cluster',
  'relayId',
  'leaderSince',
  'sequence',
  'observedAt',
  'observingSince',
] as const;

/**
 * Reassembles the parts of one digest. Duplicate deliveries of a part are ignored (EventBridge
 * delivers at least once). The lease versions of the parts are merged; leaseResourceVersion is the
 * same on every part of one digest, and should they differ, the lowest-indexed part's is kept (so the
 * result does not depend on the order of delivery). Throws DigestPartsError when the parts belong to
 * different digests, carry different counts or fingerprint shards, or two parts name the same node.
 */
export function mergeDigestParts(parts: readonly HeartbeatDigest[]): MergeDigestResult {
  const first = parts[0];
  if (first === undefined) throw new DigestPartsError('mergeDigestParts: no parts');
  const byIndex = new Map<number, HeartbeatDigest>();
  for (const part of parts) {
    for (const field of identityFields) {
      if (part[field] !== first[field]) {
        throw new DigestPartsError(
          `part ${part.part.index} has ${field} ${String(part[field])}, part ${first.part.index} has ${String(first[field])}`,
        );
      }
    }
    if (part.part.count !== first.part.count) {
      throw new DigestPartsError(
        `part ${part.part.index} has count ${part.part.count}, expected ${first.part.count}`,
      );
    }
    if (shardText(part) !== shardText(first)) {
      throw new DigestPartsError(
        `part ${part.part.index} has fingerprintShard ${shardText(part)}, part ${first.part.index} has ${shardText(first)}`,
      );
    }
    const seen = byIndex.get(part.part.index);
    if (
      seen !== undefined &&
      !(
        sameEntries(seen.probes, part.probes) &&
        sameEntries(seen.fingerprints, part.fingerprints) &&
        sameEntries(seen.leaseVersions ?? emptyVersions, part.leaseVersions ?? emptyVersions) &&
        seen.leaseResourceVersion === part.leaseResourceVersion
      )
    ) {
      throw new DigestPartsError(`two different parts with index ${part.part.index}`);
    }
    byIndex.set(part.part.index, part);
  }
  const missing = Array.from({ length: first.part.count }, (_, i) => i).filter((i) => !byIndex.has(i));
  if (missing.length > 0) return { kind: 'incomplete', missing };
  const probes = new Map<string, EpochMillis>();
  const leaseVersions = new Map<string, string>();
  let leaseResourceVersion: string | undefined;
  // Parts of one digest all carry fingerprints, or none do (one relay built them).
  const fingerprints = first.fingerprints === undefined ? undefined : new Map<string, string>();
  for (let index = 0; index < first.part.count; index++) {
    const part = byIndex.get(index);
    for (const [name, at] of part?.probes ?? []) {
      if (probes.has(name)) throw new DigestPartsError(`node ${name} appears in two parts`);
      probes.set(name, at);
    }
    if ((part?.fingerprints === undefined) !== (fingerprints === undefined)) {
      throw new DigestPartsError(
        `part ${index} and part ${first.part.index} disagree on carrying fingerprints`,
      );
    }
    for (const [name, fingerprint] of part?.fingerprints ?? []) {
      if (fingerprints?.has(name) === true) throw new DigestPartsError(`node ${name} appears in two parts`);
      fingerprints?.set(name, fingerprint);
    }
    // Each node's version is in its probe's part, and no probe is in two parts (checked above).
    for (const [name, version] of part?.leaseVersions ?? []) leaseVersions.set(name, version);
    leaseResourceVersion ??= part?.leaseResourceVersion;
  }
  // `packed` is how a part travelled, not something the whole digest says.
  const { leaseVersions: _first, leaseResourceVersion: _firstVersion, packed: _packed, ...identity } = first;
  const merged = {
    ...identity,
    part: { index: 0, count: 1 },
    probes,
    ...(fingerprints !== undefined && { fingerprints }),
    ...(leaseVersions.size > 0 && { leaseVersions }),
    ...(leaseResourceVersion !== undefined && { leaseResourceVersion }),
  };
  return { kind: 'complete', digest: merged };
}

const emptyVersions: ReadonlyMap<string, string> = new Map();

function shardText({ fingerprintShard: shard }: HeartbeatDigest): string {
  return shard === undefined ? 'none' : `${shard.index}/${shard.count}`;
}

function sameEntries<T>(
  a: ReadonlyMap<string, T> | undefined,
  b: ReadonlyMap<string, T> | undefined,
): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.size === b.size && [...a].every(([name, value]) => b.get(name) === value);
}
