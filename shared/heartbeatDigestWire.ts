// The Heartbeat Digest detail (events.ts has the other two events and the whole-event schemas): its v1
// wire form and the codec between it and the domain's HeartbeatDigest.
//
// On the wire, probes are ages: milliseconds before observedAt (small integers, exact, so observedAt -
// age gives back the same instant in every digest and a probe never seems to move). Node names are
// split into three levels, because cloud node names share long parts: the DNS domain (after the first
// dot, "" when none), the prefix of the first label up to its last dash ("" when none) and the rest:
//   ip-10-0-12-7.eu-west-1.compute.internal → probeAges["eu-west-1.compute.internal"]["ip-10-0-12"]["7"]
//   gke-prod-pool-1-4f3a2b1c-x7k2           → probeAges[""]["gke-prod-pool-1-4f3a2b1c"]["x7k2"]
// The split is a bijection on valid node names (the rest has no dash, the prefix no dot), and it halves
// the size of a 5,000-node digest compared with grouping by domain only (docs/events.md, "Size").
//
// For upstream's lease circuit breaker (KEP-5647, gate NodeControllerLeaseCircuitBreaker) the digest
// also carries the resourceVersion of the Lease the relay last saw for each node going silent
// (leaseVersions), and the resourceVersion its lease informer has synced up to (leaseResourceVersion):
// the functions compare them with a live read of the Lease before marking a node Unknown.
//
// A digest too large for its entry as plain JSON is sent packed (`packed`: base64 of the gzip of its
// probeAges, unprobedNodes and leaseVersions) and, larger still, with the fingerprints of one shard of
// its probed nodes only (`fingerprintShard`); docs/events.md, "Size". The relay encodes through
// encodeHeartbeatDigest and digestWireForms (one pass over the nodes, no second check of its own
// output); the codec's encode builds the same wire and checks it, for everyone else.
import { Buffer } from 'node:buffer';
import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import type { EpochMillis } from './domain/types.js';
import { FingerprintLength, FingerprintPattern } from './nodeFingerprint.js';
import {
  ClusterName,
  EpochMillisSchema,
  NodeName,
  NonNegativeInt,
  ResourceVersion,
  schemaVersionError,
  Time,
} from './eventPrimitives.js';
import { deepFreeze } from './deepFreeze.js';
import {
  describeInput,
  formatWireTime,
  isDNS1123Subdomain,
  MaxEpochMillis,
  MinEpochMillis,
} from './wireFormat.js';

const NodePrefixPattern = /^[a-z0-9][-a-z0-9]*$/;
const NodeSuffixPattern = /^[a-z0-9]+$/;
const isNodeDomain = (s: string): boolean => s === '' || isDNS1123Subdomain(s);
// Lengths: a subdomain's labels are not limited to 63 characters by the API server, only the whole
// name to 253 (checked below on the joined name).
const isNodePrefix = (s: string): boolean => s === '' || (s.length <= 251 && NodePrefixPattern.test(s));
const isNodeSuffix = (s: string): boolean => s.length <= 253 && NodeSuffixPattern.test(s);

const NodeDomain = z.string().refine(isNodeDomain, {
  error: (iss) => `expected the domain of a node name (or ""), got ${describeInput(iss.input)}`,
});
const NodePrefix = z.string().refine(isNodePrefix, {
  error: (iss) => `expected a node name prefix (or ""), got ${describeInput(iss.input)}`,
});
const NodeSuffix = z.string().refine(isNodeSuffix, {
  error: (iss) => `expected the end of a node name's first label, got ${describeInput(iss.input)}`,
});

/**
 * How long a node's probe must be older than observedAt before the digest carries its Lease's
 * resourceVersion (leaseVersions). The kubelet renews its Lease every 10 s, so a node without a renewal
 * for 1.5 intervals is going silent; below that no node is about to be marked, and sending every
 * node's version would add its name and version (about 55 bytes) per node to every digest. A grace
 * period under 15 s (the default is 50 s) gets no version for a node it marks sooner: the documented
 * fallback (docs/events.md, "Lease versions").
 */
export const LeaseVersionsAfterMs = 15_000;

/** A node name as the digest's (domain, prefix, suffix) levels. */
interface NodeNameLevels {
  readonly domain: string;
  readonly prefix: string;
  readonly suffix: string;
}

// Not memoized: a memo bounded below the cluster's size (it was 65,536 names) is emptied on every
// digest of a larger one, and the split is three slices.
function splitNodeName(name: string): NodeNameLevels {
  const dot = name.indexOf('.');
  const host = dot < 0 ? name : name.slice(0, dot);
  const dash = host.lastIndexOf('-');
  return {
    domain: dot < 0 ? '' : name.slice(dot + 1),
    prefix: dash < 0 ? '' : host.slice(0, dash),
    suffix: host.slice(dash + 1),
  };
}

/** joinNodeName(...).length, without building the name (checked for every node of every digest). */
function joinedLength(domain: string, prefix: string, suffix: string): number {
  return (prefix === '' ? 0 : prefix.length + 1) + suffix.length + (domain === '' ? 0 : domain.length + 1);
}

function joinNodeName(domain: string, prefix: string, suffix: string): string {
  const host = prefix === '' ? suffix : `${prefix}-${suffix}`;
  return domain === '' ? host : `${host}.${domain}`;
}

/**
 * A JSON key `__proto__` is an own property of what JSON.parse returns, but a record parser assigns it
 * to a fresh object, where it sets the prototype instead: the entry would vanish instead of failing as
 * the invalid name it is. Names it, at any of the `levels` nested levels of keys (3 for probeAges).
 */
function rejectProtoKeys(levels: number, message: string): (value: unknown, ctx: z.RefinementCtx) => void {
  return (value, ctx) => {
    const visit = (node: unknown, path: string[], depth: number): void => {
      if (depth >= levels || typeof node !== 'object' || node === null) return;
      if (Object.hasOwn(node, '__proto__')) ctx.addIssue({ code: 'custom', path, message, input: node });
      for (const [key, child] of Object.entries(node)) visit(child, [...path, key], depth + 1);
    };
    visit(value, [], 0);
  };
}

/** What the levels of probeAges are, checked one by one with zod (names every problem; slow). */
export const ProbeAgesSchema = z
  .unknown()
  .superRefine(rejectProtoKeys(3, 'expected a node name level, got "__proto__"'))
  .pipe(z.record(NodeDomain, z.record(NodePrefix, z.record(NodeSuffix, NonNegativeInt))));
type ProbeAges = z.output<typeof ProbeAgesSchema>;

/** What zod's records accept: an object whose prototype is Object's or none (JSON.parse's objects). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * ProbeAgesSchema's checks as plain loops, for the common case: true only when every level is valid. A
 * digest of 5,000 nodes is checked on both sides of the bus; through zod's records that was about 3 µs
 * per node, most of a large `nlc simulate`'s schema time. Anything unusual (an own `__proto__` key fails
 * the key checks too) is left to the schema, which names the problem.
 */
export function probeAgesAreValid(value: unknown): value is ProbeAges {
  if (!isPlainObject(value)) return false;
  for (const domain of Object.keys(value)) {
    const prefixes = value[domain];
    if (!isNodeDomain(domain) || !isPlainObject(prefixes)) return false;
    for (const prefix of Object.keys(prefixes)) {
      const suffixes = prefixes[prefix];
      if (!isNodePrefix(prefix) || !isPlainObject(suffixes)) return false;
      for (const suffix of Object.keys(suffixes)) {
        const age = suffixes[suffix];
        if (!isNodeSuffix(suffix) || !Number.isSafeInteger(age) || (age as number) < 0) return false;
      }
    }
  }
  return true;
}

/** The probes map's checks (NodeName keys, EpochMillis values) as one loop; true only when all hold. */
export function probesAreValid(value: unknown): value is Map<string, EpochMillis> {
  if (!(value instanceof Map)) return false;
  for (const [name, at] of value as Map<unknown, unknown>) {
    if (typeof name !== 'string' || !isDNS1123Subdomain(name)) return false;
    if (!Number.isSafeInteger(at) || (at as number) < MinEpochMillis || (at as number) > MaxEpochMillis)
      return false;
  }
  return true;
}

/**
 * A schema that accepts what `slow` accepts, checked by `fast` first: when `fast` holds the value is
 * taken as it is; otherwise `slow` runs and its issues (paths, messages, nested reasons) are reported
 * as its own would be. `fast` must never hold for a value `slow` rejects (events.test.ts holds the two
 * to each other). A refinement, not a transform, so it works in both directions of a codec.
 */
function checkedFast<T>(slow: z.ZodType<T>, fast: (value: unknown) => value is T): z.ZodType<T, T> {
  return z.custom<T>().superRefine((value, ctx) => {
    if (fast(value)) return;
    const result = slow.safeParse(value);
    if (!result.success) for (const issue of result.error.issues) ctx.addIssue(issue as z.core.$ZodRawIssue);
  });
}

/** Fingerprints one after another, as the wire's `fingerprints` string holds them. */
const FingerprintRun = new RegExp(`^(?:[A-Za-z0-9_-]{${FingerprintLength}})*$`);
const Fingerprint = z.string().regex(FingerprintPattern, {
  error: (iss) => `expected a node fingerprint (6 base64url characters), got ${describeInput(iss.input)}`,
});

/** The fingerprints map's checks (NodeName keys, fingerprint values) as one loop; true only when all hold. */
export function fingerprintMapIsValid(value: unknown): value is Map<string, string> {
  if (!(value instanceof Map)) return false;
  for (const [name, fingerprint] of value as Map<unknown, unknown>) {
    if (typeof name !== 'string' || !isDNS1123Subdomain(name)) return false;
    if (typeof fingerprint !== 'string' || !FingerprintPattern.test(fingerprint)) return false;
  }
  return true;
}

/** A quiet period: a whole number of milliseconds, at most an hour (a relay clamps it far lower). */
const QuietPeriodMs = z.int().min(1).max(3_600_000);

const PartSchema = z
  .object({ index: NonNegativeInt, count: z.int().min(1) })
  .refine((part) => part.index < part.count, { path: ['index'], error: 'expected an index below count' });

const FingerprintShardSchema = z
  .object({ index: NonNegativeInt, count: z.int().min(1).max(64) })
  .refine((shard) => shard.index < shard.count, { path: ['index'], error: 'expected an index below count' });
/** Which of `count` shards of the probed nodes a digest's fingerprints cover (fingerprintShardOf). */
export type FingerprintShard = z.output<typeof FingerprintShardSchema>;

/**
 * The shard (of `count`) a node is in: FNV-1a (32-bit) of its name's characters (a node name is ASCII:
 * its bytes), modulo count. A hash of the name rather than a position in the digest, so a node added
 * or removed moves no other node to another shard, and every node is covered once per `count` shards.
 *
 * @example fingerprintShardOf('ip-10-0-12-7.eu-west-1.compute.internal', 2) // 0 or 1, always the same
 */
export function fingerprintShardOf(name: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % count;
}

function inShard(name: string, shard: FingerprintShard | undefined): boolean {
  return shard === undefined || fingerprintShardOf(name, shard.count) === shard.index;
}

/**
 * Whether the digest says anything about the fingerprint of `name`: it carries fingerprints, and the
 * node is not a probed one outside its fingerprintShard. A node it does not name at all counts: the
 * relay does not know it (every unprobed node it knows is fingerprinted, whatever the shard).
 */
export function digestChecksFingerprintOf(
  digest: Pick<HeartbeatDigest, 'fingerprints' | 'fingerprintShard' | 'probes'>,
  name: string,
): boolean {
  if (digest.fingerprints === undefined) return false;
  return !digest.probes.has(name) || inShard(name, digest.fingerprintShard);
}

/**
 * The most a `packed` field may inflate to. The relay never packs more (heartbeatDigest.ts); the bound
 * keeps a forged or corrupt entry of 1 MB (gzip inflates up to about 1,000 times) from costing a
 * function gigabytes. 16 MiB holds 100,000 nodes' ages (1.1 MB) with a lease version for every one.
 */
export const MaxPackedBytes = 16 * 1024 * 1024;
const Base64Text = /^[A-Za-z0-9+/]*={0,2}$/;

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `packed` as the object it holds, or an issue naming what is wrong with it (no partial result). */
function inflatePacked(text: string, payload: z.core.ParsePayload<string>): PackedFieldsWire {
  const fail = (message: string): PackedFieldsWire => {
    payload.issues.push({ code: 'custom', message, input: text });
    return { probeAges: {} };
  };
  if (text.length % 4 !== 0 || !Base64Text.test(text)) {
    return fail('expected base64 (A-Z, a-z, 0-9, + and /, padded with =)');
  }
  let json: string;
  try {
    json = gunzipSync(Buffer.from(text, 'base64'), { maxOutputLength: MaxPackedBytes }).toString('utf8');
  } catch (error) {
    return fail(
      error instanceof RangeError
        ? `expected gzip data inflating to at most ${MaxPackedBytes} bytes`
        : `expected gzip data: ${errorText(error)}`,
    );
  }
  try {
    // What it holds is checked next, by PackedFields.
    return JSON.parse(json) as PackedFieldsWire;
  } catch (error) {
    return fail(`expected gzip of JSON: ${errorText(error)}`);
  }
}

/**
 * gzip's level for `packed`. Measured on 100,000 EC2-named nodes' ages (1.06 MB of JSON): level 3
 * gives 541 KB of base64 in about 20 ms, level 6 (zlib's default) 521 KB in about 60 ms.
 */
const PackedGzipLevel = 3;

/** The per-node fields packed: base64 of the gzip of their JSON. */
function packJson(json: string): string {
  return gzipSync(json, { level: PackedGzipLevel }).toString('base64');
}

function deflatePacked(fields: PackedFieldsWire): string {
  return packJson(JSON.stringify(fields));
}

const UnprobedNodes = z.array(NodeName).readonly();
const LeaseVersionsWire = z
  .unknown()
  .superRefine(rejectProtoKeys(1, 'expected a node name, got "__proto__"'))
  .pipe(z.record(NodeName, ResourceVersion));

/** The per-node fields, as they are beside the others or inside `packed`. */
const PackedFields = z.object({
  probeAges: checkedFast(ProbeAgesSchema, probeAgesAreValid),
  unprobedNodes: UnprobedNodes.optional(),
  leaseVersions: LeaseVersionsWire.optional(),
});
type PackedFieldsWire = z.input<typeof PackedFields>;
const perNodeFields = ['probeAges', 'unprobedNodes', 'leaseVersions'] as const;

const HeartbeatDigestV1 = z
  .object({
    schemaVersion: z.literal(1),
    cluster: ClusterName,
    relayId: z.string().min(1).max(253),
    leaderSince: Time,
    sequence: NonNegativeInt,
    observedAt: Time,
    /**
     * Relay-clock instant since which this relay has observed the node Leases without interruption (its
     * lease informer's first list). Optional on the wire (relays before it): leaderSince stands in.
     */
    observingSince: Time.optional(),
    part: PartSchema,
    /** Per node, its probe's age. Required unless `packed` holds it. */
    probeAges: checkedFast(ProbeAgesSchema, probeAgesAreValid).optional(),
    /**
     * probeAges, unprobedNodes and leaseVersions as base64 of the gzip of their JSON object, instead of
     * beside the other fields: what a relay sends when the plain digest is over its entry limit.
     * Optional (relays before it, and every digest that fits as it is).
     */
    packed: z.codec(z.string(), PackedFields, { decode: inflatePacked, encode: deflatePacked }).optional(),
    /**
     * Per node the part names (probeAges' nodes and unprobedNodes), the fingerprint of the relay's copy
     * (shared/nodeFingerprint.ts), one after another in the code-point order of the node names: six
     * characters a node, no separator. Optional (relays before it): without it the functions cannot
     * tell a stale node copy, and do not try. With fingerprintShard, only the probed nodes of that shard.
     */
    fingerprints: z
      .string()
      .regex(FingerprintRun, { error: 'expected fingerprints of 6 base64url characters each, back to back' })
      .optional(),
    /**
     * Which shard of the probed nodes `fingerprints` covers (fingerprintShardOf): a relay whose digest
     * would not fit in one entry otherwise sends each node's fingerprint every `count` digests.
     * Optional (absent: every node's).
     */
    fingerprintShard: FingerprintShardSchema.optional(),
    /** Nodes the relay knows but has no probe for (a kubelet that never came up): only with fingerprints. */
    unprobedNodes: UnprobedNodes.optional(),
    /**
     * Node name → resourceVersion of its Lease as the relay last saw it, flat, in name order: only for
     * nodes of probeAges silent for LeaseVersionsAfterMs or more and not seen Ready=Unknown. Optional
     * (relays before it; omitted when empty, as it is in steady state).
     */
    leaseVersions: LeaseVersionsWire.optional(),
    /** The resourceVersion the relay's lease informer has synced up to. Optional (relays before it). */
    leaseResourceVersion: ResourceVersion.optional(),
    /**
     * The relay's quiet period: while every node is Ready and renewing and nothing changed, it sends a
     * digest this often instead of every nodeMonitorPeriod (relay.md, "Quiet digests"); the functions
     * expect the next digest within it (nextDigestWithin). Optional (absent: every nodeMonitorPeriod).
     */
    quietPeriodMs: QuietPeriodMs.optional(),
  })
  .superRefine((wire, ctx) => {
    const { observedAt, fingerprints, fingerprintShard, packed } = wire;
    if (packed !== undefined) {
      for (const field of perNodeFields) {
        if (wire[field] !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: [field],
            message: 'expected inside packed only, not beside it',
          });
        }
      }
    }
    const probeAges = packed?.probeAges ?? wire.probeAges;
    if (probeAges === undefined) {
      // A packed that holds none is reported as such.
      if (packed === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['probeAges'],
          message: 'expected node name levels (or packed)',
        });
      }
      return;
    }
    if (fingerprintShard !== undefined && fingerprints === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['fingerprintShard'],
        message: 'expected only with fingerprints',
      });
    }
    // Paths inside packed name it: detail.packed.probeAges…
    const at = packed === undefined ? [] : ['packed'];
    const unprobedNodes = packed === undefined ? wire.unprobedNodes : packed.unprobedNodes;
    if (unprobedNodes !== undefined || fingerprints !== undefined) {
      checkFingerprintCount(probeAges, fingerprints, fingerprintShard, unprobedNodes ?? [], at, ctx);
    }
    // What the levels cannot check on their own: the whole name, and the instant the age points to.
    // Keys rather than entries, here and in decode: a pair per node per digest is garbage to collect.
    for (const domain of Object.keys(probeAges)) {
      const prefixes = probeAges[domain] ?? {};
      for (const prefix of Object.keys(prefixes)) {
        const suffixes = prefixes[prefix] ?? {};
        for (const suffix of Object.keys(suffixes)) {
          const age = suffixes[suffix] ?? 0;
          if (joinedLength(domain, prefix, suffix) > 253) {
            ctx.addIssue({
              code: 'custom',
              path: [...at, 'probeAges', domain, prefix, suffix],
              message: 'expected a node name of at most 253 characters',
            });
          }
          if (observedAt - age < MinEpochMillis) {
            ctx.addIssue({
              code: 'custom',
              path: [...at, 'probeAges', domain, prefix, suffix],
              message: 'expected an age within years 0000-9999',
            });
          }
        }
      }
    }
  });

/** The nodes of probeAges (those of `shard` only, when given). */
function countLeaves(probeAges: ProbeAges, shard: FingerprintShard | undefined): number {
  let count = 0;
  for (const domain of Object.keys(probeAges)) {
    const prefixes = probeAges[domain] ?? {};
    for (const prefix of Object.keys(prefixes)) {
      const suffixes = Object.keys(prefixes[prefix] ?? {});
      if (shard === undefined) count += suffixes.length;
      else for (const suffix of suffixes) if (inShard(joinNodeName(domain, prefix, suffix), shard)) count++;
    }
  }
  return count;
}

/** One fingerprint per node named (probed or not), and the unprobed ones really without a probe. */
function checkFingerprintCount(
  probeAges: ProbeAges,
  fingerprints: string | undefined,
  shard: FingerprintShard | undefined,
  unprobedNodes: readonly string[],
  at: readonly string[],
  ctx: z.RefinementCtx,
): void {
  if (fingerprints === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: [...at, 'unprobedNodes'],
      message: 'expected only with fingerprints',
    });
    return;
  }
  const unprobed = new Set(unprobedNodes);
  if (unprobed.size !== unprobedNodes.length) {
    ctx.addIssue({ code: 'custom', path: [...at, 'unprobedNodes'], message: 'expected each node once' });
  }
  for (const name of unprobed) {
    const { domain, prefix, suffix } = splitNodeName(name);
    if (probeAges[domain]?.[prefix]?.[suffix] !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [...at, 'unprobedNodes'],
        message: `expected no probe for ${name}, got one in probeAges`,
      });
    }
  }
  // A string that is not whole fingerprints, names or a shard that are not valid, are reported by
  // their own checks.
  if (shard !== undefined && !(shard.index < shard.count)) return;
  if (!FingerprintRun.test(fingerprints) || !probeAgesAreValid(probeAges)) return;
  const nodes = countLeaves(probeAges, shard) + unprobed.size;
  if (fingerprints.length !== nodes * FingerprintLength) {
    ctx.addIssue({
      code: 'custom',
      path: ['fingerprints'],
      message: `expected ${nodes} fingerprints (one per node named${shard === undefined ? '' : ' of fingerprintShard or unprobed'}), got ${fingerprints.length / FingerprintLength}`,
    });
  }
}

const HeartbeatDigestDomain = z
  .object({
    schemaVersion: z.literal(1),
    cluster: ClusterName,
    relayId: z.string().min(1).max(253),
    leaderSince: EpochMillisSchema,
    sequence: NonNegativeInt,
    observedAt: EpochMillisSchema,
    observingSince: EpochMillisSchema,
    part: PartSchema,
    probes: checkedFast(z.map(NodeName, EpochMillisSchema), probesAreValid),
    /**
     * Per node the relay knows (probed or not), the fingerprint of its copy; absent from a relay that does
     * not send them. When present, every probed node has one (of fingerprintShard, when given).
     */
    fingerprints: checkedFast(z.map(NodeName, Fingerprint), fingerprintMapIsValid).optional(),
    /**
     * The fingerprints are those of this shard of the probed nodes only, and of every unprobed node
     * (fingerprintShardOf, digestChecksFingerprintOf). Absent: of every node.
     */
    fingerprintShard: FingerprintShardSchema.optional(),
    /**
     * Per node whose probe is LeaseVersionsAfterMs or more before observedAt and whose Ready the relay
     * has not seen Unknown, the metadata.resourceVersion of its Lease as the relay last saw it. Absent
     * when there is none (steady state) and from relays before it. Every node named has a probe.
     */
    leaseVersions: z.map(NodeName, ResourceVersion).readonly().optional(),
    /**
     * The resourceVersion the relay's lease informer has synced up to (its list's, or the last watch
     * event's or bookmark's); absent before its first list and from relays before it.
     */
    leaseResourceVersion: ResourceVersion.optional(),
    /**
     * The relay's quiet period: while every node is Ready and renewing and nothing changed, it sends a
     * digest this often instead of every nodeMonitorPeriod (relay.md, "Quiet digests"); the functions
     * expect the next digest within it (nextDigestWithin). Optional (absent: every nodeMonitorPeriod).
     */
    quietPeriodMs: QuietPeriodMs.optional(),
    /** How it travels: its per-node fields packed (the wire's `packed`). Nothing else changes. */
    packed: z.literal(true).optional(),
  })
  .superRefine(({ probes, fingerprints, fingerprintShard, leaseVersions }, ctx) => {
    for (const name of leaseVersions?.keys() ?? []) {
      if (!probes.has(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['leaseVersions', name],
          message: 'expected a probe for every node with a lease version',
        });
      }
    }
    if (fingerprints === undefined) {
      if (fingerprintShard !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['fingerprintShard'],
          message: 'expected only with fingerprints',
        });
      }
      return;
    }
    for (const name of probes.keys()) {
      const covered = inShard(name, fingerprintShard);
      if (covered === fingerprints.has(name)) continue;
      ctx.addIssue({
        code: 'custom',
        path: ['fingerprints', name],
        message: covered
          ? `expected a fingerprint for every probed node${fingerprintShard === undefined ? '' : ' of fingerprintShard'}`
          : 'expected no fingerprint for a probed node outside fingerprintShard',
      });
    }
  });

type DigestDomain = z.output<typeof HeartbeatDigestDomain>;

/** The per-node fields of a digest's wire form, and the fingerprinted names in wire order. */
interface NodeFields {
  readonly probeAges: Record<string, Record<string, Record<string, number>>>;
  readonly unprobedNodes?: string[];
  readonly leaseVersions?: Record<string, string>;
  readonly fingerprints?: string;
  /** The names `fingerprints` is in the order of (code-point order; names are ASCII). */
  readonly fingerprinted?: SortedNames;
}

/** Names in code-point order, with their levels: what encoding and decoding a digest iterate over. */
interface SortedNames {
  readonly names: readonly string[];
  readonly set: ReadonlySet<string>;
  readonly levels: readonly NodeNameLevels[];
  /** FNV-1a of each name (fingerprintShardOf before the modulo), computed when first asked for. */
  hashes?: Uint32Array;
}

function shardHashes(sorted: SortedNames): Uint32Array {
  if (sorted.hashes !== undefined) return sorted.hashes;
  const hashes = new Uint32Array(sorted.names.length);
  sorted.names.forEach((name, i) => {
    hashes[i] = fingerprintShardOf(name, 2 ** 32);
  });
  return (sorted.hashes = hashes);
}

/**
 * The name lists sorted lately (a few: the digests of a sharded relay alternate between as many). A
 * relay encodes, and a monitor decodes, the same names every 5 s: sorting 100,000 of them takes about
 * 50 ms, and finding them the same a few. Only large lists are kept (a small one sorts in no time).
 */
const recentlySorted: SortedNames[] = [];
const SortedNamesKept = 4;
const SortedNamesWorthKeeping = 5_000;

type Names = ReadonlyMap<string, unknown> | readonly string[];

function namesOf(source: Names): Iterable<string> {
  return Array.isArray(source)
    ? (source as readonly string[])
    : (source as ReadonlyMap<string, unknown>).keys();
}

function sizeOf(source: Names): number {
  return Array.isArray(source) ? source.length : (source as ReadonlyMap<string, unknown>).size;
}

function sameNames(sorted: SortedNames, source: Names): boolean {
  if (sorted.set.size !== sizeOf(source)) return false;
  for (const name of namesOf(source)) if (!sorted.set.has(name)) return false;
  return true;
}

// Node names are ASCII (DNS-1123), so the default sort (by UTF-16 code unit) is code-point order,
// without calling a comparator 1.7 million times for 100,000 names.
function sortNames(source: Names): SortedNames {
  const known = recentlySorted.find((sorted) => sameNames(sorted, source));
  if (known !== undefined) return known;
  const names = [...namesOf(source)].sort();
  const result = { names, set: new Set(names), levels: names.map(splitNodeName) };
  if (names.length >= SortedNamesWorthKeeping) {
    recentlySorted.unshift(result);
    recentlySorted.length = Math.min(recentlySorted.length, SortedNamesKept);
  }
  return result;
}

/** Whether every name of `inner` is one of `outer`. */
function within(inner: ReadonlyMap<string, unknown>, outer: ReadonlyMap<string, unknown>): boolean {
  if (inner.size > outer.size) return false;
  for (const name of inner.keys()) if (!outer.has(name)) return false;
  return true;
}

function nodeFields({ observedAt, probes, fingerprints, leaseVersions: versions }: DigestDomain): NodeFields {
  // Sorted, so equal digests encode to equal bytes. One sort: the relay fingerprints every probed node.
  const allFingerprinted = fingerprints !== undefined && within(probes, fingerprints);
  const all = sortNames(allFingerprinted ? fingerprints : probes);
  const probeAges: Record<string, Record<string, Record<string, number>>> = {};
  // Names in order mostly share their domain and prefix with the one before: its level object serves.
  let lastDomain: string | undefined;
  let lastPrefix: string | undefined;
  let suffixes: Record<string, number> = {};
  all.names.forEach((name, i) => {
    const at = probes.get(name);
    const levels = all.levels[i];
    if (at === undefined || levels === undefined) return;
    const { domain, prefix, suffix } = levels;
    if (domain !== lastDomain || prefix !== lastPrefix) {
      suffixes = (probeAges[domain] ??= {})[prefix] ??= {};
      lastDomain = domain;
      lastPrefix = prefix;
    }
    suffixes[suffix] = observedAt - at;
  });
  const fields: NodeFields = { probeAges };
  if (versions !== undefined && versions.size > 0) {
    const leaseVersions: Record<string, string> = {};
    for (const name of [...versions.keys()].sort()) leaseVersions[name] = versions.get(name) ?? '';
    Object.assign(fields, { leaseVersions });
  }
  if (fingerprints === undefined) return fields;
  const fingerprinted = allFingerprinted ? all : sortNames(fingerprints);
  const unprobedNodes = fingerprinted.names.filter((name) => !probes.has(name));
  let run = '';
  for (const name of fingerprinted.names) run += fingerprints.get(name) ?? '';
  return {
    ...fields,
    fingerprints: run,
    fingerprinted,
    ...(unprobedNodes.length > 0 && { unprobedNodes }),
  };
}

function perNode({ probeAges, unprobedNodes, leaseVersions }: NodeFields): z.output<typeof PackedFields> {
  return {
    probeAges,
    ...(unprobedNodes !== undefined && { unprobedNodes }),
    ...(leaseVersions !== undefined && { leaseVersions }),
  };
}

/**
 * The detail of a `Heartbeat Digest` event. Parsing yields a {@link HeartbeatDigest} whose `probes`
 * maps node names to the relay-clock instant of their last observed probe.
 */
export const HeartbeatDigestDetail = z.codec(
  z.discriminatedUnion('schemaVersion', [HeartbeatDigestV1], { error: schemaVersionError }),
  HeartbeatDigestDomain,
  {
    decode: (wire) => {
      const {
        probeAges: _plainAges,
        unprobedNodes: _plainUnprobed,
        leaseVersions: _plainVersions,
        packed,
        fingerprints,
        fingerprintShard,
        observingSince,
        ...rest
      } = wire;
      const { probeAges = {}, unprobedNodes, leaseVersions } = packed ?? wire;
      const probes = new Map<string, EpochMillis>();
      for (const domain of Object.keys(probeAges)) {
        const prefixes = probeAges[domain] ?? {};
        for (const prefix of Object.keys(prefixes)) {
          const suffixes = prefixes[prefix] ?? {};
          for (const suffix of Object.keys(suffixes)) {
            probes.set(joinNodeName(domain, prefix, suffix), rest.observedAt - (suffixes[suffix] ?? 0));
          }
        }
      }
      const leased = Object.keys(leaseVersions ?? {});
      const decoded = {
        ...rest,
        observingSince: observingSince ?? rest.leaderSince,
        probes,
        // An empty object is no versions, as the encoder writes it.
        ...(leased.length > 0 && {
          leaseVersions: new Map(leased.map((name) => [name, leaseVersions?.[name] ?? ''])),
        }),
        ...(packed !== undefined && { packed: true as const }),
      };
      if (fingerprints === undefined) return decoded;
      const names: string[] = [];
      for (const name of probes.keys()) if (inShard(name, fingerprintShard)) names.push(name);
      names.push(...(unprobedNodes ?? []));
      const byName = new Map<string, string>();
      sortNames(names).names.forEach((name, i) => {
        byName.set(name, fingerprints.slice(i * FingerprintLength, (i + 1) * FingerprintLength));
      });
      return {
        ...decoded,
        fingerprints: byName,
        ...(fingerprintShard !== undefined && { fingerprintShard }),
      };
    },
    encode: (digest) => {
      const {
        probes: _probes,
        fingerprints: _fingerprints,
        leaseVersions: _versions,
        packed,
        ...rest
      } = digest;
      const fields = nodeFields(digest);
      return {
        ...rest,
        ...(packed === true ? { packed: perNode(fields) } : perNode(fields)),
        ...(fields.fingerprints !== undefined && { fingerprints: fields.fingerprints }),
      };
    },
  },
);
export type HeartbeatDigest = z.output<typeof HeartbeatDigestDetail>;
export type HeartbeatDigestWire = z.input<typeof HeartbeatDigestDetail>;

// ---------------------------------------------------------------------------------------------------
// The relay's encoder: the codec's wire, built once, without checking its own output again.

/**
 * Wire forms already built, by digest. A digest is never changed once built (buildDigest, splitDigest,
 * mergeDigestParts and the codec each make a new one), so neither is its wire; it is frozen, as every
 * caller gets the same object. The relay measures a digest and then sends it: one encoding.
 */
const encodedDigests = new WeakMap<HeartbeatDigest, HeartbeatDigestWire>();

/** Whether the codec would encode it: the domain checks (with their fast paths), and no negative age. */
function isEncodable(digest: HeartbeatDigest): boolean {
  if (!HeartbeatDigestDomain.safeParse(digest).success) return false;
  for (const at of digest.probes.values()) if (at > digest.observedAt) return false;
  return true;
}

function assemble(digest: HeartbeatDigest, fields: NodeFields, packedText?: string): HeartbeatDigestWire {
  const {
    probes: _probes,
    fingerprints: _fingerprints,
    leaseVersions: _versions,
    packed,
    leaderSince,
    observedAt,
    observingSince,
    ...rest
  } = digest;
  const wire: HeartbeatDigestWire = {
    ...rest,
    leaderSince: formatWireTime(leaderSince),
    observedAt: formatWireTime(observedAt),
    observingSince: formatWireTime(observingSince),
    ...(packed === true ? { packed: packedText ?? deflatePacked(perNode(fields)) } : perNode(fields)),
    ...(fields.fingerprints !== undefined && { fingerprints: fields.fingerprints }),
  };
  encodedDigests.set(digest, deepFreeze(wire));
  return wire;
}

/**
 * The wire form of a digest, equal to what z.encode(HeartbeatDigestDetail, digest) gives, at a
 * fraction of its cost: the digest is checked (the domain schema, with its fast paths) and the wire
 * follows from it by construction, so it is not checked again on the way out (heartbeatDigestWire.test.ts
 * holds the two encoders equal). Undefined when the digest is invalid: the codec then names the problem.
 * Memoized per digest, and frozen.
 */
export function encodeHeartbeatDigest(digest: HeartbeatDigest): HeartbeatDigestWire | undefined {
  const known = encodedDigests.get(digest);
  if (known !== undefined) return known;
  if (!isEncodable(digest)) return undefined;
  return assemble(digest, nodeFields(digest));
}

/** A form a digest can be sent in: the digest as it is then (packed, sharded) and its wire. */
export interface DigestWireForm {
  readonly digest: HeartbeatDigest;
  readonly wire: HeartbeatDigestWire;
}

/** The forms the relay chooses among for one digest (digestWireForms). */
export interface DigestWireForms {
  /** As it is: plain JSON. */
  plain(): DigestWireForm;
  /** Its per-node fields packed; undefined when they would inflate to over MaxPackedBytes. */
  packed(): DigestWireForm | undefined;
  /**
   * Packed, with the fingerprints of the probed nodes of one shard only (and of every unprobed node);
   * undefined as packed().
   */
  sharded(shard: FingerprintShard): DigestWireForm | undefined;
}

/**
 * The forms of a digest neither packed nor sharded, sharing one pass over its nodes and one gzip; each
 * form's digest is remembered with its wire, so encodeDetail finds it. Undefined when the digest is
 * invalid (encodeDetail names the problem).
 */
export function digestWireForms(digest: HeartbeatDigest): DigestWireForms | undefined {
  if (digest.packed === true || digest.fingerprintShard !== undefined) {
    throw new RangeError('digestWireForms: expected a digest neither packed nor sharded');
  }
  if (!isEncodable(digest)) return undefined;
  let fields: NodeFields | undefined;
  let packedText: string | null | undefined;
  const fieldsOnce = (): NodeFields => (fields ??= nodeFields(digest));
  // null: over MaxPackedBytes, which no reader would inflate.
  const packedOnce = (): string | null => {
    if (packedText !== undefined) return packedText;
    const json = JSON.stringify(perNode(fieldsOnce()));
    return (packedText = json.length > MaxPackedBytes ? null : packJson(json));
  };
  const form = (of: HeartbeatDigest, build: () => HeartbeatDigestWire): DigestWireForm => ({
    digest: of,
    wire: encodedDigests.get(of) ?? build(),
  });
  let packed: HeartbeatDigest | undefined;
  const packedForm = (): DigestWireForm | undefined => {
    const text = packedOnce();
    if (text === null) return undefined;
    packed ??= { ...digest, packed: true };
    const of = packed;
    return form(of, () => assemble(of, fieldsOnce(), text));
  };
  return {
    plain: () => form(digest, () => assemble(digest, fieldsOnce())),
    packed: packedForm,
    sharded: (shard) => {
      const text = packedOnce();
      if (text === null) return undefined;
      const { fingerprints, probes } = digest;
      const all = fieldsOnce();
      if (fingerprints === undefined || all.fingerprinted === undefined) return packedForm();
      const { names } = all.fingerprinted;
      const hashes = shardHashes(all.fingerprinted);
      const kept = new Map<string, string>();
      let run = '';
      names.forEach((name, i) => {
        // Every unprobed node's goes along: the shard is of the probed ones.
        if ((hashes[i] ?? 0) % shard.count !== shard.index && probes.has(name)) return;
        const fingerprint = fingerprints.get(name) ?? '';
        kept.set(name, fingerprint);
        run += fingerprint;
      });
      const of: HeartbeatDigest = { ...digest, packed: true, fingerprintShard: shard, fingerprints: kept };
      return form(of, () => assemble(of, { ...all, fingerprints: run }, text));
    },
  };
}
