// How domain values are stored: instants, zone keys, nodes, conditions, limiters. Readable in the
// console first (ISO 8601 times, readable zone keys), exact second: an instant that is not a whole
// millisecond (a queue retry is due 1 ns after `now + wait`, rateLimitedTimedQueue.ts) is stored as
// its epoch-millisecond number, so reading back gives the same double. What is read back is checked
// with zod here, at the edge (docs/contributing.md#validation).
import { z } from 'zod';
import { memoized } from '../../memo.js';
import type { NodeCondition, Node, Taint, EpochMillis } from '../../domain/types.js';
import type { RateLimiter } from '../../domain/tokenBucket.js';

// ---------------------------------------------------------------------------------------------------
// Instants

const ISO_INSTANT = /^[+-]?\d{4,6}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/;

/**
 * An instant as stored: an ISO 8601 string when it is a whole millisecond (every Kubernetes time and
 * every `now`), else the exact epoch-millisecond number.
 *
 * @example encodeInstant(1769677200000) // '2026-01-29T09:00:00.000Z'
 */
export function encodeInstant(ms: EpochMillis): string | number {
  if (!Number.isFinite(ms)) throw new Error(`invariant: cannot store the instant ${ms}`);
  return Number.isInteger(ms) ? isoOfMillis(ms) : ms;
}

/** An ISO 8601 UTC string of the instant, for display-only attributes (updatedAt) and sort keys. */
export function isoString(ms: EpochMillis): string {
  return isoOfMillis(Math.floor(ms));
}

// A commit stamps every row it writes with the same few instants (a pass's now, a queue's processAt).
const isoOfMillis = memoized((ms: number): string => new Date(ms).toISOString(), 1024);

/** Reads what encodeInstant wrote. */
export const InstantSchema = z.union([
  z.string().transform((text, ctx): EpochMillis => {
    const ms = ISO_INSTANT.test(text) ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(ms)) {
      ctx.addIssue({
        code: 'custom',
        message: `expected an ISO 8601 UTC instant, got ${JSON.stringify(text)}`,
      });
      return z.NEVER;
    }
    return ms;
  }),
  z.number().refine(Number.isFinite, { message: 'expected a finite epoch-millisecond number' }),
]);

// ---------------------------------------------------------------------------------------------------
// Keys

/** The Zones sort key of the cluster-wide row (encoded zone keys never start with '#'). */
export const ClusterRowKey = '#cluster';
/** How the empty zone key (a node without zone labels, upstream "") is stored: keys cannot be empty. */
export const NoZoneKey = '-';
// Zone keys are region + ':\x00:' + zone (zones.ts). Stored as `region:zone`, with '%', ':' and '#'
// percent-escaped inside each part and the NUL dropped: readable, reversible, and never ambiguous.
const ZONE_SEPARATOR = ':\x00:';

const ESCAPES: readonly (readonly [string, string])[] = [
  ['%', '%25'], // first, so the escapes below are not escaped again
  [':', '%3A'],
  ['#', '%23'],
  ['\u0000', '%00'],
];

function escapePart(part: string): string {
  return ESCAPES.reduce((text, [c, escaped]) => text.replaceAll(c, escaped), part);
}

/**
 * The stored form of a zone key.
 *
 * @example encodeZone('us-east-1:\x00:us-east-1a') // 'us-east-1:us-east-1a'
 */
export function encodeZone(zoneKey: string): string {
  if (zoneKey === '') return NoZoneKey;
  const at = zoneKey.indexOf(ZONE_SEPARATOR);
  // Every non-empty key getZoneKey makes has the separator; anything else is kept whole, escaped.
  if (at < 0) return `%${escapePart(zoneKey)}`;
  return `${escapePart(zoneKey.slice(0, at))}:${escapePart(zoneKey.slice(at + ZONE_SEPARATOR.length))}`;
}

/** The zone key of a stored zone (inverse of encodeZone). */
export function decodeZone(stored: string): string {
  if (stored === NoZoneKey) return '';
  if (stored.startsWith('%') && !stored.includes(':')) return decodeURIComponent(stored.slice(1));
  const colon = stored.indexOf(':');
  if (colon < 0) throw new Error(`invariant: malformed stored zone ${JSON.stringify(stored)}`);
  return (
    decodeURIComponent(stored.slice(0, colon)) + ZONE_SEPARATOR + decodeURIComponent(stored.slice(colon + 1))
  );
}

/**
 * Checks a cluster name before it goes into a key: composite keys are `cluster#…`, so it must be
 * non-empty and contain no '#'. Cluster names are DNS-1123 labels (shared/events.ts), which pass.
 */
export function checkClusterName(cluster: string): string {
  if (cluster === '' || cluster.includes('#')) {
    throw new Error(
      `invariant: cluster name ${JSON.stringify(cluster)} must be non-empty and contain no '#'`,
    );
  }
  return cluster;
}

// ---------------------------------------------------------------------------------------------------
// resourceVersion ordering

// DynamoDB numbers hold 38 significant digits.
const INTEGER = /^\d{1,38}$/;

/** The resourceVersion as a canonical integer string when it parses as one, else undefined. */
export function integerResourceVersion(resourceVersion: string): string | undefined {
  return INTEGER.test(resourceVersion) ? BigInt(resourceVersion).toString() : undefined;
}

/**
 * Orders two resourceVersions: as integers when both parse as integers (etcd revisions), else as
 * strings. Kubernetes calls resourceVersions opaque; every real API server hands out integers.
 *
 * @example compareResourceVersions('9', '10') // -1
 */
export function compareResourceVersions(a: string, b: string): number {
  const ia = integerResourceVersion(a);
  const ib = integerResourceVersion(b);
  if (ia !== undefined && ib !== undefined) {
    const d = BigInt(ia) - BigInt(ib);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------------
// Nodes, conditions, taints

export function encodeCondition(c: NodeCondition): Record<string, unknown> {
  return {
    type: c.type,
    status: c.status,
    ...(c.reason !== undefined && { reason: c.reason }),
    ...(c.message !== undefined && { message: c.message }),
    ...(c.lastHeartbeatTime !== undefined && { lastHeartbeatTime: encodeInstant(c.lastHeartbeatTime) }),
    ...(c.lastTransitionTime !== undefined && { lastTransitionTime: encodeInstant(c.lastTransitionTime) }),
  };
}

export const ConditionSchema = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastHeartbeatTime: InstantSchema.optional(),
  lastTransitionTime: InstantSchema.optional(),
});

function encodeTaint(t: Taint): Record<string, unknown> {
  return {
    key: t.key,
    effect: t.effect,
    ...(t.value !== undefined && { value: t.value }),
    ...(t.timeAdded !== undefined && { timeAdded: encodeInstant(t.timeAdded) }),
  };
}

const TaintSchema = z.object({
  key: z.string(),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
  timeAdded: InstantSchema.optional(),
});

/**
 * The stored node object: the trimmed node without its name (the sort key) and resourceVersion (an
 * attribute). Its size is bounded by the mapping's bounds (shared/eventBounds.ts): at most about
 * 120 KB, and the monitor's saved conditions (healthRows.ts) about as much again, so a Nodes item stays
 * near half of DynamoDB's 400 KB whatever the node writes into its own status.
 */
export function encodeNodeObject(node: Node): Record<string, unknown> {
  return {
    uid: node.uid,
    creationTimestamp: encodeInstant(node.creationTimestamp),
    labels: { ...node.labels },
    taints: node.taints.map(encodeTaint),
    unschedulable: node.unschedulable,
    conditions: node.conditions.map(encodeCondition),
    ...(node.truncated !== undefined && { truncated: [...node.truncated] }),
  };
}

export const NodeObjectSchema = z.object({
  uid: z.string(),
  creationTimestamp: InstantSchema,
  labels: z.record(z.string(), z.string()),
  taints: z.array(TaintSchema),
  unschedulable: z.boolean(),
  conditions: z.array(ConditionSchema),
  truncated: z.array(z.string()).optional(),
});

export function decodeNode(
  name: string,
  object: z.output<typeof NodeObjectSchema>,
  resourceVersion: string | undefined,
): Node {
  return {
    name,
    uid: object.uid,
    ...(resourceVersion !== undefined && { resourceVersion }),
    creationTimestamp: object.creationTimestamp,
    labels: object.labels,
    taints: object.taints,
    unschedulable: object.unschedulable,
    conditions: object.conditions,
    ...(object.truncated !== undefined && { truncated: object.truncated }),
  };
}

// ---------------------------------------------------------------------------------------------------
// Rate limiters

export function encodeLimiter(limiter: RateLimiter): Record<string, unknown> {
  if (limiter.kind === 'never') return { kind: 'never' };
  return {
    kind: 'tokenBucket',
    qps: limiter.qps,
    burst: limiter.burst,
    tokens: limiter.tokens,
    last: encodeInstant(limiter.last),
  };
}

export const LimiterSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('never') }),
  z.object({
    kind: z.literal('tokenBucket'),
    qps: z.number(),
    burst: z.number(),
    tokens: z.number(),
    last: InstantSchema,
  }),
]);

export function limitersEqual(a: RateLimiter | undefined, b: RateLimiter | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.kind === 'never' || b.kind === 'never') return a.kind === b.kind;
  return a.qps === b.qps && a.burst === b.burst && a.tokens === b.tokens && a.last === b.last;
}

export function conditionsEqual(a: readonly NodeCondition[], b: readonly NodeCondition[]): boolean {
  return (
    a.length === b.length &&
    a.every((x, i) => {
      const y = b[i];
      return (
        y !== undefined &&
        x.type === y.type &&
        x.status === y.status &&
        x.reason === y.reason &&
        x.message === y.message &&
        x.lastHeartbeatTime === y.lastHeartbeatTime &&
        x.lastTransitionTime === y.lastTransitionTime
      );
    })
  );
}
