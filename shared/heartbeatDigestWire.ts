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
import { z } from 'zod';
import type { EpochMillis } from './domain/types.js';
import {
  ClusterName,
  EpochMillisSchema,
  NodeName,
  NonNegativeInt,
  schemaVersionError,
  Time,
} from './eventPrimitives.js';
import { describeInput, isDNS1123Subdomain, MinEpochMillis } from './wireFormat.js';

const NodeDomain = z.string().refine((s) => s === '' || isDNS1123Subdomain(s), {
  error: (iss) => `expected the domain of a node name (or ""), got ${describeInput(iss.input)}`,
});
// Lengths: a subdomain's labels are not limited to 63 characters by the API server, only the whole
// name to 253 (checked below on the joined name).
const NodePrefix = z.string().refine((s) => s === '' || (s.length <= 251 && /^[a-z0-9][-a-z0-9]*$/.test(s)), {
  error: (iss) => `expected a node name prefix (or ""), got ${describeInput(iss.input)}`,
});
const NodeSuffix = z.string().refine((s) => s.length <= 253 && /^[a-z0-9]+$/.test(s), {
  error: (iss) => `expected the end of a node name's first label, got ${describeInput(iss.input)}`,
});

/** A node name as the digest's (domain, prefix, suffix) levels. */
function splitNodeName(name: string): { domain: string; prefix: string; suffix: string } {
  const dot = name.indexOf('.');
  const host = dot < 0 ? name : name.slice(0, dot);
  const dash = host.lastIndexOf('-');
  return {
    domain: dot < 0 ? '' : name.slice(dot + 1),
    prefix: dash < 0 ? '' : host.slice(0, dash),
    suffix: host.slice(dash + 1),
  };
}

function joinNodeName(domain: string, prefix: string, suffix: string): string {
  const host = prefix === '' ? suffix : `${prefix}-${suffix}`;
  return domain === '' ? host : `${host}.${domain}`;
}

/**
 * A JSON key `__proto__` is an own property of what JSON.parse returns, but a record parser assigns it
 * to a fresh object, where it sets the prototype instead: the entry would vanish instead of failing as
 * the invalid name it is. Names it, at any level of probeAges.
 */
function rejectProtoKeys(value: unknown, ctx: z.RefinementCtx): void {
  const visit = (node: unknown, path: string[], depth: number): void => {
    if (depth > 2 || typeof node !== 'object' || node === null) return;
    if (Object.hasOwn(node, '__proto__')) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: 'expected a node name level, got "__proto__"',
        input: node,
      });
    }
    for (const [key, child] of Object.entries(node)) visit(child, [...path, key], depth + 1);
  };
  visit(value, [], 0);
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
    probeAges: z
      .unknown()
      .superRefine(rejectProtoKeys)
      .pipe(z.record(NodeDomain, z.record(NodePrefix, z.record(NodeSuffix, NonNegativeInt)))),
  })
  .superRefine(({ observedAt, probeAges }, ctx) => {
    // What the levels cannot check on their own: the whole name, and the instant the age points to.
    for (const [domain, prefixes] of Object.entries(probeAges)) {
      for (const [prefix, suffixes] of Object.entries(prefixes)) {
        for (const [suffix, age] of Object.entries(suffixes)) {
          const path = ['probeAges', domain, prefix, suffix];
          if (joinNodeName(domain, prefix, suffix).length > 253) {
            ctx.addIssue({ code: 'custom', path, message: 'expected a node name of at most 253 characters' });
          }
          if (observedAt - age < MinEpochMillis) {
            ctx.addIssue({ code: 'custom', path, message: 'expected an age within years 0000-9999' });
          }
        }
      }
    }
  });

const HeartbeatDigestDomain = z.object({
  schemaVersion: z.literal(1),
  cluster: ClusterName,
  relayId: z.string().min(1).max(253),
  leaderSince: EpochMillisSchema,
  sequence: NonNegativeInt,
  observedAt: EpochMillisSchema,
  observingSince: EpochMillisSchema,
  part: PartSchema,
  probes: z.map(NodeName, EpochMillisSchema),
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
    decode: ({ probeAges, observingSince, ...rest }) => {
      const probes = new Map<string, EpochMillis>();
      for (const [domain, prefixes] of Object.entries(probeAges)) {
        for (const [prefix, suffixes] of Object.entries(prefixes)) {
          for (const [suffix, age] of Object.entries(suffixes)) {
            probes.set(joinNodeName(domain, prefix, suffix), rest.observedAt - age);
          }
        }
      }
      return { ...rest, observingSince: observingSince ?? rest.leaderSince, probes };
    },
    encode: ({ probes, ...rest }) => {
      // Sorted, so equal digests encode to equal bytes.
      const names = [...probes.keys()].sort(compareStrings);
      const probeAges: Record<string, Record<string, Record<string, number>>> = {};
      for (const name of names) {
        const { domain, prefix, suffix } = splitNodeName(name);
        ((probeAges[domain] ??= {})[prefix] ??= {})[suffix] = rest.observedAt - (probes.get(name) ?? 0);
      }
      return { ...rest, probeAges };
    },
  },
);
export type HeartbeatDigest = z.output<typeof HeartbeatDigestDetail>;
export type HeartbeatDigestWire = z.input<typeof HeartbeatDigestDetail>;
