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
import { z } from 'zod';
import type { EpochMillis } from './domain/types.js';
import { memoized } from './memo.js';
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
import { describeInput, isDNS1123Subdomain, MaxEpochMillis, MinEpochMillis } from './wireFormat.js';

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

/**
 * A relay encodes every node's name in every digest (every 5 s): the same names, split once each (a
 * bounded memo, emptied past 65,536 names).
 */
const splitNodeName = memoized(splitNodeNameOnce, 65_536);

function splitNodeNameOnce(name: string): NodeNameLevels {
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

const PartSchema = z
  .object({ index: NonNegativeInt, count: z.int().min(1) })
  .refine((part) => part.index < part.count, { path: ['index'], error: 'expected an index below count' });

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
    probeAges: checkedFast(ProbeAgesSchema, probeAgesAreValid),
    /**
     * Per node the part names (probeAges' nodes and unprobedNodes), the fingerprint of the relay's copy
     * (shared/nodeFingerprint.ts), one after another in the code-point order of the node names: six
     * characters a node, no separator. Optional (relays before it): without it the functions cannot
     * tell a stale node copy, and do not try.
     */
    fingerprints: z
      .string()
      .regex(FingerprintRun, { error: 'expected fingerprints of 6 base64url characters each, back to back' })
      .optional(),
    /** Nodes the relay knows but has no probe for (a kubelet that never came up): only with fingerprints. */
    unprobedNodes: z.array(NodeName).readonly().optional(),
    /**
     * Node name → resourceVersion of its Lease as the relay last saw it, flat, in name order: only for
     * nodes of probeAges silent for LeaseVersionsAfterMs or more and not seen Ready=Unknown. Optional
     * (relays before it; omitted when empty, as it is in steady state).
     */
    leaseVersions: z
      .unknown()
      .superRefine(rejectProtoKeys(1, 'expected a node name, got "__proto__"'))
      .pipe(z.record(NodeName, ResourceVersion))
      .optional(),
    /** The resourceVersion the relay's lease informer has synced up to. Optional (relays before it). */
    leaseResourceVersion: ResourceVersion.optional(),
  })
  .superRefine(({ observedAt, probeAges, fingerprints, unprobedNodes }, ctx) => {
    if (unprobedNodes !== undefined || fingerprints !== undefined) {
      checkFingerprintCount(probeAges, fingerprints, unprobedNodes ?? [], ctx);
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
              path: ['probeAges', domain, prefix, suffix],
              message: 'expected a node name of at most 253 characters',
            });
          }
          if (observedAt - age < MinEpochMillis) {
            ctx.addIssue({
              code: 'custom',
              path: ['probeAges', domain, prefix, suffix],
              message: 'expected an age within years 0000-9999',
            });
          }
        }
      }
    }
  });

function countLeaves(levels: Readonly<Record<string, Readonly<Record<string, Readonly<object>>>>>): number {
  let count = 0;
  for (const domain of Object.keys(levels)) {
    const prefixes = levels[domain] ?? {};
    for (const prefix of Object.keys(prefixes)) count += Object.keys(prefixes[prefix] ?? {}).length;
  }
  return count;
}

/** One fingerprint per node named (probed or not), and the unprobed ones really without a probe. */
function checkFingerprintCount(
  probeAges: ProbeAges,
  fingerprints: string | undefined,
  unprobedNodes: readonly string[],
  ctx: z.RefinementCtx,
): void {
  if (fingerprints === undefined) {
    ctx.addIssue({ code: 'custom', path: ['unprobedNodes'], message: 'expected only with fingerprints' });
    return;
  }
  const unprobed = new Set(unprobedNodes);
  if (unprobed.size !== unprobedNodes.length) {
    ctx.addIssue({ code: 'custom', path: ['unprobedNodes'], message: 'expected each node once' });
  }
  for (const name of unprobed) {
    const { domain, prefix, suffix } = splitNodeNameOnce(name);
    if (probeAges[domain]?.[prefix]?.[suffix] !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['unprobedNodes'],
        message: `expected no probe for ${name}, got one in probeAges`,
      });
    }
  }
  const nodes = countLeaves(probeAges) + unprobed.size;
  // A string that is not whole fingerprints, or names that are not valid, are reported by their own checks.
  if (
    fingerprints.length !== nodes * FingerprintLength &&
    FingerprintRun.test(fingerprints) &&
    probeAgesAreValid(probeAges)
  ) {
    ctx.addIssue({
      code: 'custom',
      path: ['fingerprints'],
      message: `expected ${nodes} fingerprints (one per node named), got ${fingerprints.length / FingerprintLength}`,
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
     * not send them. When present, every probed node has one.
     */
    fingerprints: checkedFast(z.map(NodeName, Fingerprint), fingerprintMapIsValid).optional(),
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
  })
  .superRefine(({ probes, fingerprints, leaseVersions }, ctx) => {
    for (const name of leaseVersions?.keys() ?? []) {
      if (!probes.has(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['leaseVersions', name],
          message: 'expected a probe for every node with a lease version',
        });
      }
    }
    if (fingerprints === undefined) return;
    for (const name of probes.keys()) {
      if (!fingerprints.has(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['fingerprints', name],
          message: 'expected a fingerprint for every probed node',
        });
      }
    }
  });

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The detail of a `Heartbeat Digest` event. Parsing yields a {@link HeartbeatDigest} whose `probes`
 * maps node names to the relay-clock instant of their last observed probe.
 */
export const HeartbeatDigestDetail = z.codec(
  z.discriminatedUnion('schemaVersion', [HeartbeatDigestV1], { error: schemaVersionError }),
  HeartbeatDigestDomain,
  {
    decode: ({ probeAges, fingerprints, unprobedNodes, observingSince, leaseVersions, ...rest }) => {
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
      };
      if (fingerprints === undefined) return decoded;
      const names = [...probes.keys(), ...(unprobedNodes ?? [])].sort(compareStrings);
      const byName = new Map<string, string>();
      names.forEach((name, i) => {
        byName.set(name, fingerprints.slice(i * FingerprintLength, (i + 1) * FingerprintLength));
      });
      return { ...decoded, fingerprints: byName };
    },
    encode: ({ probes, fingerprints, leaseVersions: versions, ...rest }) => {
      // Sorted, so equal digests encode to equal bytes.
      const names = [...probes.keys()].sort(compareStrings);
      const probeAges: Record<string, Record<string, Record<string, number>>> = {};
      for (const name of names) {
        const { domain, prefix, suffix } = splitNodeName(name);
        ((probeAges[domain] ??= {})[prefix] ??= {})[suffix] = rest.observedAt - (probes.get(name) ?? 0);
      }
      const leaseVersions: Record<string, string> = {};
      for (const name of [...(versions?.keys() ?? [])].sort(compareStrings)) {
        leaseVersions[name] = versions?.get(name) ?? '';
      }
      const encoded = {
        ...rest,
        probeAges,
        ...(versions !== undefined && versions.size > 0 && { leaseVersions }),
      };
      if (fingerprints === undefined) return encoded;
      const all = [...fingerprints.keys()].sort(compareStrings);
      const unprobedNodes = all.filter((name) => !probes.has(name));
      return {
        ...encoded,
        fingerprints: all.map((name) => fingerprints.get(name) ?? '').join(''),
        ...(unprobedNodes.length > 0 && { unprobedNodes }),
      };
    },
  },
);
export type HeartbeatDigest = z.output<typeof HeartbeatDigestDetail>;
export type HeartbeatDigestWire = z.input<typeof HeartbeatDigestDetail>;
