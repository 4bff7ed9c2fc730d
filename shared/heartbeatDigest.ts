// The Heartbeat Digest as a stream: its position, splitting a large digest into
// parts that fit an EventBridge entry, and reassembling the parts. The contract itself (fields, wire
// encoding) is in events.ts; the reasoning and the measured sizes are in docs/events.md.
import type { EpochMillis } from './domain/types.js';
import { DigestPartsError } from './errors.js';
import { encodeDetail, HeartbeatDigestDetailType, utf8Bytes, type HeartbeatDigest } from './events.js';

/** Code-point order (the wire's name order), not the locale's. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Where a digest stands in the relay's stream: its relay term (`relayId`, and `leaderSince`, the
 * relay-clock instant the relay became leader) and its `sequence` within the term. Only the sequence
 * orders digests, and only within a term; which term counts is the leader Lease's to say, and a relay's
 * clock orders nothing (shared/digestClock.ts).
 */
export type DigestPosition = Pick<HeartbeatDigest, 'leaderSince' | 'relayId' | 'sequence'>;

/**
 * The part size the relay should split at: the pre-2026 EventBridge entry limit (256 KB) less room for
 * Source and DetailType, so digests fit in every partition. 5,000 nodes need one part (docs/events.md).
 */
export const DefaultDigestPartMaxBytes = 256 * 1024 - 1024;

/** UTF-8 bytes of the digest's JSON detail as the relay sends it. */
export function heartbeatDigestBytes(digest: HeartbeatDigest): number {
  return utf8Bytes(JSON.stringify(encodeDetail({ detailType: HeartbeatDigestDetailType, detail: digest })));
}

/**
 * Splits a whole digest (part 0 of 1) into parts whose JSON detail is at most `maxBytes` each. Each
 * part carries the same identity (cluster, relayId, leaderSince, sequence, observedAt) and
 * leaseResourceVersion, and a disjoint slice of the nodes, in name order (their probes, fingerprints and
 * lease versions; a part whose nodes have no lease version carries none). A digest that fits is
 * returned as is.
 * Throws a RangeError when even one probe per part does not fit.
 *
 * @example splitDigest(digest, DefaultDigestPartMaxBytes).length // 1 for 5,000 nodes (about 57 KB)
 */
export function splitDigest(digest: HeartbeatDigest, maxBytes: number): HeartbeatDigest[] {
  if (digest.part.count !== 1) throw new RangeError('splitDigest: expected a whole digest (part 0 of 1)');
  const total = heartbeatDigestBytes(digest);
  if (total <= maxBytes) return [digest];
  const { fingerprints, leaseVersions } = digest;
  // Every node named: probed, fingerprinted, or both.
  const names = [...new Set([...digest.probes.keys(), ...(fingerprints?.keys() ?? [])])].sort(compareStrings);
  // Contiguous, near-equal slices; one more part until every part fits (rarely more than one retry).
  for (let count = Math.max(2, Math.ceil(total / maxBytes)); count <= names.length; count++) {
    const parts = Array.from({ length: count }, (_, index): HeartbeatDigest => {
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
      return {
        ...identity,
        part: { index, count },
        probes,
        ...(fingerprints !== undefined && { fingerprints: sliced }),
        ...(versions.size > 0 && { leaseVersions: versions }),
      };
    });
    if (parts.every((part) => heartbeatDigestBytes(part) <= maxBytes)) return parts;
  }
  throw new RangeError(
    names.length === 0
      ? `splitDigest: a digest without probes is already over ${maxBytes} bytes`
      : `splitDigest: a single probe does not fit in ${maxBytes} bytes`,
  );
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
 * different digests, carry different counts, or two parts name the same node.
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
  const { leaseVersions: _first, leaseResourceVersion: _firstVersion, ...identity } = first;
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

function sameEntries<T>(
  a: ReadonlyMap<string, T> | undefined,
  b: ReadonlyMap<string, T> | undefined,
): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.size === b.size && [...a].every(([name, value]) => b.get(name) === value);
}
