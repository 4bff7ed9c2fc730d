// A node's fingerprint: a short hash of the fields of the trimmed node that a Node Changed carries and
// the relay's watch filter compares (relay/shaping.ts nodeChangeIsRelevant): name, uid, creation time,
// labels, taints, conditions without their heartbeats, spec.unschedulable, and what the bounds cut. Two
// copies of a node have the same fingerprint exactly when the relay would send no Node Changed between
// them (up to a 1-in-2^36 collision).
//
// Why (docs/architecture.md#level-triggered): each Heartbeat Digest carries, per node, the fingerprint
// of the copy the relay holds; the monitor compares it with the fingerprint of the functions' own copy,
// and a difference (a Node Changed lost, dead-lettered, late, or forged; a resourceVersion that went back
// or jumped ahead) makes it read the node from the API. A resourceVersion cannot serve: the functions'
// copy lags the relay's by design (a heartbeat-only status post bumps it without a Node Changed).
//
// The hash is cyrb53 (a 53-bit mix of two 32-bit multiplicative hashes), cut to 36 bits and written as
// six base64url characters: small enough to carry one per node in every digest (docs/events.md "Size").
import type { Node } from './domain/types.js';

const Alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Characters of a fingerprint (6 × 6 = 36 bits). */
export const FingerprintLength = 6;

/** The pattern a fingerprint matches (what the digest's schema checks). */
export const FingerprintPattern = /^[A-Za-z0-9_-]{6}$/;

/** cyrb53 (public domain, bryc): two interleaved 32-bit multiplicative hashes of the UTF-16 units. */
function cyrb53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

// Go semantics, as the filter's: an absent string is "".
const str = (s: string | undefined): string => s ?? '';

/**
 * The canonical text the fingerprint hashes: an array, so no separator can be forged by a value.
 * Labels by key (the filter compares them as a set); taints and conditions in order (it compares
 * them in order).
 */
function canonical(node: Node): string {
  const labels = Object.keys(node.labels)
    .sort()
    .map((key) => [key, node.labels[key] ?? '']);
  return JSON.stringify([
    node.name,
    node.uid,
    node.creationTimestamp,
    node.unschedulable,
    labels,
    node.taints.map((t) => [t.key, str(t.value), t.effect, t.timeAdded ?? null]),
    node.conditions.map((c) => [
      c.type,
      c.status,
      str(c.reason),
      str(c.message),
      c.lastTransitionTime ?? null,
    ]),
    node.truncated ?? [],
  ]);
}

/** Fingerprints by node object: stored copies and relay copies are frozen and reused pass after pass. */
const known = new WeakMap<Node, string>();

/**
 * The node's fingerprint: six base64url characters.
 *
 * @example nodeFingerprint(node) // 'kq3Z_w'
 */
export function nodeFingerprint(node: Node): string {
  const cached = known.get(node);
  if (cached !== undefined) return cached;
  let hash = Math.floor(cyrb53(canonical(node)) / 2 ** 17); // the top 36 of 53 bits
  let text = '';
  for (let i = 0; i < FingerprintLength; i++) {
    text = Alphabet.charAt(hash % 64) + text;
    hash = Math.floor(hash / 64);
  }
  known.set(node, text);
  return text;
}
