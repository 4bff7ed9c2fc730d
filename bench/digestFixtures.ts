// The clusters bench/digestSize.ts and bench/digestCpu.ts measure digests of: deterministic.
import type { HeartbeatDigest } from '../shared/events.js';

export const observedAt = Date.parse('2026-11-21T10:00:00.000Z');

/**
 * Distinct EC2-style names, ages uniform in [0, 10 s) (the lease renewal period). Addresses are random
 * in 10.0.0.0/16 up to 20,000 nodes, and in 10.0.0.0/14 above (a /16 holds 65,536 addresses: a cluster
 * of 100,000 nodes spans several, as its VPC's secondary CIDRs would).
 */
export function clusterProbes(nodes: number, seed = 42): Map<string, number> {
  const bits = nodes <= 20_000 ? 16 : 18;
  let x = seed;
  // xorshift32: deterministic, full period, no floating-point overflow.
  const next = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>>= 0);
  };
  const probes = new Map<string, number>();
  while (probes.size < nodes) {
    const ip = next() % 2 ** bits;
    probes.set(
      `ip-10-${ip >> 16}-${(ip >> 8) & 255}-${ip & 255}.eu-west-1.compute.internal`,
      observedAt - (next() % 10_000),
    );
  }
  return probes;
}

/**
 * A fingerprint per node: six base64url characters, 36 random bits as shared/nodeFingerprint.ts's hash
 * gives (the top bits of a linear congruential generator: its low bits repeat every 64 draws, which
 * gzip would find and real fingerprints do not have).
 */
export function fingerprintsOf(names: Iterable<string>): Map<string, string> {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let x = 7;
  const char = (): string => {
    x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0;
    return alphabet[x >>> 26] ?? 'A';
  };
  return new Map([...names].map((name) => [name, Array.from({ length: 6 }, char).join('')]));
}

/** A whole digest of those probes (and fingerprints), as the relay's buildDigest makes one. */
export function clusterDigest(
  probes: ReadonlyMap<string, number>,
  fingerprints?: ReadonlyMap<string, string>,
): HeartbeatDigest {
  return {
    schemaVersion: 1,
    cluster: 'prod-eu-west-1',
    relayId: 'nlc-relay-6f9c7d8b5-x2k4q',
    leaderSince: observedAt - 86_400_000,
    observingSince: observedAt - 86_400_000,
    sequence: 17_280,
    observedAt,
    part: { index: 0, count: 1 },
    // Copies: the relay builds new maps for every digest.
    probes: new Map(probes),
    ...(fingerprints !== undefined && { fingerprints: new Map(fingerprints) }),
  };
}
