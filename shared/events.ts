// The event contracts between the relay and the functions (docs/events.md is the reference).
//
// Three EventBridge events, source `nlc.relay`, each detail versioned (`schemaVersion: 1`) and carrying
// the `cluster`. The schemas here are zod codecs: parsing a detail *decodes* the wire form (times as
// ISO 8601 strings, probes as small ages) into the domain types of shared/domain/types.ts (times as
// EpochMillis), and `z.encode` (or the `…ToWire` helpers) goes back. So a handler that uses
// Powertools' parser gets domain values directly:
//
//   middy().use(parser({ schema: HeartbeatDigestEvent }))                       // the whole event, or
//   middy().use(parser({ schema: HeartbeatDigestDetail, envelope: EventBridgeEnvelope })) // the detail
//
// Readers are tolerant (unknown fields are ignored, so additive changes keep v1) and strict about what
// they use: a bad value or an unknown schemaVersion is rejected with one line per problem naming the
// field, before any I/O (docs/contributing.md#validation).
import { Buffer } from 'node:buffer';
import { EventBridgeSchema } from '@aws-lambda-powertools/parser/schemas/eventbridge';
import { z } from 'zod';
import { LabelArch, LabelArchStable, LabelOS, LabelOSStable } from './domain/nodeLabels.js';
import type { EpochMillis, Node, Pod } from './domain/types.js';
import {
  LabelNodeExcludeDisruption,
  LabelTopologyRegion,
  LabelTopologyZone,
  LabelZoneFailureDomain,
  LabelZoneRegion,
} from './domain/zones.js';
import { EventEncodeError, EventParseError } from './errors.js';
import {
  describeInput,
  formatWireTime,
  isDNS1123Label,
  isDNS1123Subdomain,
  isLabelKey,
  isLabelValue,
  MaxEpochMillis,
  MinEpochMillis,
  parseWireTime,
} from './wireFormat.js';

export { formatWireTime, MaxEpochMillis, MinEpochMillis, parseWireTime } from './wireFormat.js';

/** The `source` of every event the relay sends. */
export const RelaySource = 'nlc.relay';
export const NodeChangedDetailType = 'Node Changed';
export const HeartbeatDigestDetailType = 'Heartbeat Digest';
export const PodChangedDetailType = 'Pod Changed';
/** The schemaVersion this build writes and reads (see docs/events.md, "Versioning"). */
export const EventSchemaVersion = 1;

/**
 * The node labels the controller reads, and so the only ones a Node Changed event carries: zone and
 * region (GetZoneKey reads the beta labels first), the disruption exclusion, and the OS/arch pairs
 * reconcileNodeLabels keeps in step.
 */
export const ControllerLabelKeys: readonly string[] = Object.freeze([
  LabelZoneFailureDomain,
  LabelZoneRegion,
  LabelTopologyZone,
  LabelTopologyRegion,
  LabelNodeExcludeDisruption,
  LabelOSStable,
  LabelArchStable,
  LabelOS,
  LabelArch,
]);

// ---------------------------------------------------------------------------------------------------
// Primitives: times (RFC 3339 on the wire, EpochMillis in the domain; see wireFormat.ts) and names as
// the API server validates them, so a reader never has to cope with anything else.

const notADate = (iss: { readonly input?: unknown }): string =>
  `expected an ISO 8601 date, got ${describeInput(iss.input)}`;

const EpochMillisSchema = z.int().min(MinEpochMillis).max(MaxEpochMillis);
const WireTimeString = z
  .string({ error: notADate })
  .refine((text) => parseWireTime(text) !== undefined, { error: notADate });
/** A time: ISO string on the wire, EpochMillis in the domain. */
const Time = z.codec(WireTimeString, EpochMillisSchema, {
  decode: (text) => parseWireTime(text) ?? Number.NaN, // always defined: the string was validated
  encode: formatWireTime,
});

const ClusterName = z.string().refine(isDNS1123Label, {
  error: (iss) => `expected a cluster name (a DNS-1123 label), got ${describeInput(iss.input)}`,
});
const NodeName = z.string().refine(isDNS1123Subdomain, {
  error: (iss) => `expected a node name (a DNS-1123 subdomain), got ${describeInput(iss.input)}`,
});
const PodName = z.string().refine(isDNS1123Subdomain, {
  error: (iss) => `expected a pod name (a DNS-1123 subdomain), got ${describeInput(iss.input)}`,
});
const NamespaceName = z.string().refine(isDNS1123Label, {
  error: (iss) => `expected a namespace (a DNS-1123 label), got ${describeInput(iss.input)}`,
});
const LabelKey = z.string().refine(isLabelKey, {
  error: (iss) => `expected a label key, got ${describeInput(iss.input)}`,
});
const LabelValue = z.string().refine(isLabelValue, {
  error: (iss) => `expected a label value, got ${describeInput(iss.input)}`,
});
const NonEmpty = z.string().min(1);
const NonNegativeInt = z
  .int()
  .min(0, { error: (iss) => `expected an integer >= 0, got ${describeInput(iss.input)}` });

// ---------------------------------------------------------------------------------------------------
// Bounds: what one node or pod can put into an event (and, through node-taints, into its Nodes item).
//
// A node writes its own status, so anything the API server does not validate is bounded here, and the
// shared mapping (shared/adapters/kubernetes/mapping.ts nodeFromV1 / podFromV1) cuts or drops what
// exceeds them, saying so. Where a bound comes from:
// - API-validated, relied on: names (253), label keys (317: a 253-byte prefix, '/', a 63-byte name) and
//   values (63), taint keys and values (the same, validateNodeTaints), toleration keys and values (the
//   same, ValidateTolerations). The mapping drops a taint or a controller label over them (a conforming
//   server never has one), and a pod's tolerations over them end the list (see podFromV1).
// - metav1.Condition's own limits, the API's standard condition type: condition type 316 bytes. A node
//   condition with a longer type is dropped (the controller reads five short ones).
// - Ours: a condition reason 256 bytes (metav1.Condition allows 1,024 for "a single CamelCase word"),
//   a message 2,048 bytes (metav1.Condition allows 32,768), 32 conditions, 64 taints, 32 labels, 128
//   tolerations, a pod's status.reason and controller kind 256 bytes each. Nothing in the API bounds
//   them but the 1.5 MB object limit of etcd.
// Text is measured as what EventBridge counts: the UTF-8 bytes of its JSON encoding (an escaped control
// character is 6 bytes); DynamoDB stores the raw UTF-8, never more.
//
// Worst cases, every field at its bound at once (test/unit/adapters/kubernetes/bounds.test.ts measures
// them, test/faults/hugeNodeConditionMessage.test.ts stores the worst node in dynalite):
// - Node Changed: 32 conditions × (316 + 256 + 2,048 + ~150 of names and times) ≈ 89 KB, 64 taints ×
//   (317 + 63 + ~80) ≈ 29 KB, as many old NoExecute taints ≈ 29 KB, labels and notes ≈ 8 KB: ≈ 155 KB
//   (measured 153,742 bytes), under the 256 KB entry limit EventBridge has in every partition.
// - Pod Changed: 2 × 128 tolerations × (317 + 63 + ~100) ≈ 123 KB plus names (measured 123,699 bytes).
// - A Nodes item: the conditions twice (the node copy, and the monitor's saved status with up to four
//   it adds) ≈ 2 × 88 KB, taints ≈ 29 KB: ≈ 210 KB (measured 211,586 bytes), about half DynamoDB's
//   400 KB item limit.

/** Bytes of a condition's type (metav1.Condition's limit); a condition with a longer type is dropped. */
export const MaxConditionTypeBytes = 316;
/** Bytes of a condition's reason; a longer one is cut, ending in the truncation marker. */
export const MaxConditionReasonBytes = 256;
/** Bytes of a condition's message; a longer one is cut, ending in the truncation marker. */
export const MaxConditionMessageBytes = 2_048;
/** Conditions of a node; the controller's own types are kept first. */
export const MaxNodeConditions = 32;
/** Taints of a node; the node controller's own, then NoExecute ones, are kept first. */
export const MaxNodeTaints = 64;
/** Labels of a node (the relay sends only the nine the controller reads). */
export const MaxNodeLabels = 32;
/** Bytes of a taint or toleration key: a qualified name, as the API server validates it. */
export const MaxTaintKeyBytes = 317;
/** Bytes of a taint or toleration value: a label value, as the API server validates it. */
export const MaxTaintValueBytes = 63;
/** Tolerations of a pod; past it, the pod is never evicted for a taint the dropped ones decide. */
export const MaxPodTolerations = 128;
/** Bytes of a pod's status.reason and of its controller's kind; longer ones are cut. */
export const MaxPodTextBytes = 256;
/** Notes on what the mapping cut or dropped from one node, and the bytes of each. */
export const MaxTruncationNotes = 16;
export const MaxTruncationNoteBytes = 512;

/**
 * The bytes `text` takes in a JSON document, without its quotes: UTF-8, with JSON.stringify's
 * escapes (`\"`, `\n`, `\u0001`, a lone surrogate as `\udXXX`). The unit of every text bound.
 *
 * @example wireBytes('a"b') // 4
 */
export function wireBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text), 'utf8') - 2;
}

const boundedText = (what: string, max: number) =>
  z.string().refine((text) => text.length * 6 <= max || wireBytes(text) <= max, {
    error: (iss) =>
      `expected ${what} of at most ${max} bytes, got ${typeof iss.input === 'string' ? wireBytes(iss.input) : describeInput(iss.input)}`,
  });
const boundedList = <T extends z.ZodType>(item: T, what: string, max: number) =>
  z
    .array(item)
    .max(max, { error: (iss) => `expected at most ${max} ${what}, got ${describeLength(iss.input)}` })
    .readonly();
const describeLength = (input: unknown): string =>
  Array.isArray(input) ? String(input.length) : describeInput(input);

/**
 * The message for a discriminated union whose key matched no option. Typed loosely on purpose: zod's
 * type says only union issues reach it, but a non-object input raises invalid_type through it too.
 */
function discriminatorError(
  key: string,
  message: (value: unknown) => string,
): (iss: { readonly code?: string; readonly input?: unknown }) => string | undefined {
  return (iss) => {
    if (iss.code !== 'invalid_union') return undefined;
    const input = iss.input;
    return message(typeof input === 'object' && input !== null ? Reflect.get(input, key) : undefined);
  };
}

const schemaVersionError = discriminatorError('schemaVersion', (version) =>
  version === undefined
    ? `missing: this consumer reads schemaVersion ${EventSchemaVersion}`
    : `unsupported schemaVersion ${describeInput(version)}: this consumer reads schemaVersion ${EventSchemaVersion}`,
);

// ---------------------------------------------------------------------------------------------------
// Node Changed

const ConditionStatusSchema = z.enum(['True', 'False', 'Unknown']);
const TaintEffectSchema = z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
const ChangeType = z.enum(['ADDED', 'MODIFIED', 'DELETED']);

const NodeConditionSchema = z.object({
  type: boundedText('a condition type', MaxConditionTypeBytes).pipe(NonEmpty),
  status: ConditionStatusSchema,
  reason: boundedText('a condition reason', MaxConditionReasonBytes).optional(),
  message: boundedText('a condition message', MaxConditionMessageBytes).optional(),
  lastHeartbeatTime: Time.optional(),
  lastTransitionTime: Time.optional(),
});

const TaintSchema = z.object({
  key: boundedText('a taint key', MaxTaintKeyBytes).pipe(NonEmpty),
  value: boundedText('a taint value', MaxTaintValueBytes).optional(),
  effect: TaintEffectSchema,
  timeAdded: Time.optional(),
});

/** The trimmed node (domain `Node`): only the fields the controller reads. */
export const NodeSchema = z.object({
  name: NodeName,
  uid: NonEmpty,
  resourceVersion: z.string().optional(),
  creationTimestamp: Time,
  labels: z.record(LabelKey, LabelValue).refine((labels) => Object.keys(labels).length <= MaxNodeLabels, {
    error: (iss) =>
      `expected at most ${MaxNodeLabels} labels, got ${typeof iss.input === 'object' && iss.input !== null ? Object.keys(iss.input).length : describeInput(iss.input)}`,
  }),
  conditions: boundedList(NodeConditionSchema, 'conditions', MaxNodeConditions),
  taints: boundedList(TaintSchema, 'taints', MaxNodeTaints),
  unschedulable: z.boolean(),
  /**
   * What the mapping cut or dropped from the node to keep it within the bounds above, one note per
   * field (`status.conditions[KernelDeadlock].message: 204,800 bytes, truncated to 2,048`). Absent
   * when nothing was. Additive in v1: the controller never decides on it; node-taints records it in
   * the Decisions trail.
   */
  truncated: boundedList(
    boundedText('a truncation note', MaxTruncationNoteBytes),
    'truncation notes',
    MaxTruncationNotes,
  ).optional(),
});
/** A trimmed node as it travels (times as ISO strings). */
export type WireNode = z.input<typeof NodeSchema>;

const NodeChangedV1 = z.object({
  schemaVersion: z.literal(1),
  cluster: ClusterName,
  type: ChangeType,
  node: NodeSchema,
  /**
   * On MODIFIED: the node's NoExecute taints before the change, so the taint eviction controller can
   * apply upstream NodeUpdated's filter (act only when the NoExecute taints changed). Additive in v1:
   * when absent, every update is processed.
   */
  oldNoExecuteTaints: boundedList(TaintSchema, 'taints', MaxNodeTaints).optional(),
});

/**
 * The detail of a `Node Changed` event. Parsing yields a {@link NodeChanged} with a domain `Node`.
 *
 * @example
 * NodeChangedDetail.parse({ schemaVersion: 1, cluster: 'prod', type: 'ADDED', node: { name: 'n1', uid: 'u1',
 *   creationTimestamp: '2026-01-29T09:00:00Z', labels: {}, conditions: [], taints: [], unschedulable: false } })
 *   .node.creationTimestamp // 1769677200000
 */
export const NodeChangedDetail = z.discriminatedUnion('schemaVersion', [NodeChangedV1], {
  error: schemaVersionError,
});
export type NodeChanged = z.output<typeof NodeChangedDetail>;
export type NodeChangedWire = z.input<typeof NodeChangedDetail>;

// ---------------------------------------------------------------------------------------------------
// Pod Changed

const TolerationSchema = z.object({
  key: boundedText('a toleration key', MaxTaintKeyBytes).optional(),
  operator: z.enum(['Exists', 'Equal', 'Lt', 'Gt', '']).optional(),
  value: boundedText('a toleration value', MaxTaintValueBytes).optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute', '']).optional(),
  tolerationSeconds: z.int().optional(),
});

/** The trimmed pod (domain `Pod`). */
export const PodSchema = z.object({
  namespace: NamespaceName,
  name: PodName,
  uid: NonEmpty,
  nodeName: z.string().refine((s) => s === '' || isDNS1123Subdomain(s), {
    error: (iss) => `expected a node name or "" (not bound), got ${describeInput(iss.input)}`,
  }),
  tolerations: boundedList(TolerationSchema, 'tolerations', MaxPodTolerations),
  ownerKind: boundedText('a controller kind', MaxPodTextBytes).pipe(NonEmpty).optional(),
  deletionTimestamp: Time.optional(),
  deletionGracePeriodSeconds: NonNegativeInt.optional(),
  ready: ConditionStatusSchema.optional(),
  statusReason: boundedText('a status reason', MaxPodTextBytes).optional(),
});
/** A trimmed pod as it travels (times as ISO strings). */
export type WirePod = z.input<typeof PodSchema>;

const PodChangedV1 = z.object({
  schemaVersion: z.literal(1),
  cluster: ClusterName,
  type: ChangeType,
  pod: PodSchema,
  oldNodeName: NodeName.optional(),
  /**
   * On MODIFIED: the pod's tolerations before the change, so the taint eviction controller can apply
   * upstream PodUpdated's filter (act only on a toleration or node change, not on e.g. a deletion
   * starting). Additive in v1: when absent, the update is processed.
   */
  oldTolerations: boundedList(TolerationSchema, 'tolerations', MaxPodTolerations).optional(),
});

/** The detail of a `Pod Changed` event. Parsing yields a {@link PodChanged} with a domain `Pod`. */
export const PodChangedDetail = z.discriminatedUnion('schemaVersion', [PodChangedV1], {
  error: schemaVersionError,
});
export type PodChanged = z.output<typeof PodChangedDetail>;
export type PodChangedWire = z.input<typeof PodChangedDetail>;

// ---------------------------------------------------------------------------------------------------
// Heartbeat Digest
//
// On the wire, probes are ages: milliseconds before observedAt (small integers, exact, so observedAt -
// age gives back the same instant in every digest and a probe never seems to move). Node names are
// split into three levels, because cloud node names share long parts: the DNS domain (after the first
// dot, "" when none), the prefix of the first label up to its last dash ("" when none) and the rest:
//   ip-10-0-12-7.eu-west-1.compute.internal → probeAges["eu-west-1.compute.internal"]["ip-10-0-12"]["7"]
//   gke-prod-pool-1-4f3a2b1c-x7k2           → probeAges[""]["gke-prod-pool-1-4f3a2b1c"]["x7k2"]
// The split is a bijection on valid node names (the rest has no dash, the prefix no dot), and it halves
// the size of a 5,000-node digest compared with grouping by domain only (docs/events.md, "Size").

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

// ---------------------------------------------------------------------------------------------------
// Whole events, for Powertools' parser without an envelope (the detail type and source are checked too).

export const NodeChangedEvent = EventBridgeSchema.extend({
  source: z.literal(RelaySource),
  'detail-type': z.literal(NodeChangedDetailType),
  detail: NodeChangedDetail,
});
export const HeartbeatDigestEvent = EventBridgeSchema.extend({
  source: z.literal(RelaySource),
  'detail-type': z.literal(HeartbeatDigestDetailType),
  detail: HeartbeatDigestDetail,
});
export const PodChangedEvent = EventBridgeSchema.extend({
  source: z.literal(RelaySource),
  'detail-type': z.literal(PodChangedDetailType),
  detail: PodChangedDetail,
});
/** Any of the three, told apart by `detail-type` (the local bus and tests route with it). */
export const RelayEvent = z.discriminatedUnion(
  'detail-type',
  [NodeChangedEvent, HeartbeatDigestEvent, PodChangedEvent],
  {
    error: discriminatorError(
      'detail-type',
      (detailType) =>
        `expected "${NodeChangedDetailType}", "${HeartbeatDigestDetailType}" or "${PodChangedDetailType}", got ${describeInput(detailType)}`,
    ),
  },
);
export type RelayEvent = z.output<typeof RelayEvent>;

/** What the relay sends: a detail type and its (domain) detail. */
export type OutgoingEvent =
  | { readonly detailType: typeof NodeChangedDetailType; readonly detail: NodeChanged }
  | { readonly detailType: typeof HeartbeatDigestDetailType; readonly detail: HeartbeatDigest }
  | { readonly detailType: typeof PodChangedDetailType; readonly detail: PodChanged };

// ---------------------------------------------------------------------------------------------------
// Errors that name the field

function formatPath(root: string | undefined, path: readonly PropertyKey[]): string {
  let text = root ?? '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    // Plain keys read as `.key`; others (label keys, node names) in brackets. At the root, `detail-type`.
    else if (
      typeof segment === 'string' &&
      (text === '' ? /^[A-Za-z_$][\w$-]*$/ : /^[A-Za-z_$][\w$]*$/).test(segment)
    )
      text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text === '' ? '(root)' : text;
}

/**
 * One line per problem, each naming the field: `detail.node.conditions[0].lastHeartbeatTime: expected
 * an ISO 8601 date, got "yesterday"`. `root` prefixes every path (use 'detail' for a detail alone).
 *
 * @example
 * const result = NodeChangedDetail.safeParse({ schemaVersion: 2 });
 * if (!result.success) formatZodIssues(result.error, 'detail');
 * // ['detail.schemaVersion: unsupported schemaVersion 2: this consumer reads schemaVersion 1']
 */
export function formatZodIssues(error: z.ZodError, root?: string): string[] {
  return error.issues.map((issue) => `${formatPath(root, issue.path)}: ${issueMessage(issue)}`);
}

function issueMessage(issue: z.core.$ZodIssue): string {
  // Record keys and map entries nest the reason; unions (other than on schemaVersion) nest one list per option.
  const nested =
    issue.code === 'invalid_key' || issue.code === 'invalid_element'
      ? issue.issues
      : issue.code === 'invalid_union'
        ? issue.errors.flat()
        : [];
  const reasons = [...new Set(nested.map(issueMessage))];
  if (issue.code === 'invalid_key' && reasons.length > 0) return `invalid key: ${reasons.join('; ')}`;
  if (reasons.length > 0) return reasons.join(' or ');
  return issue.message.replace(/^Invalid input: /, '');
}

function parseWith<S extends z.ZodType>(schema: S, input: unknown, what: string, root?: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new EventParseError(what, formatZodIssues(result.error, root), { cause: result.error });
}

function encodeWith<S extends z.ZodType>(
  schema: S,
  value: z.output<S>,
  what: string,
  root?: string,
): z.input<S> {
  const result = z.safeEncode(schema, value);
  if (result.success) return result.data;
  throw new EventEncodeError(what, formatZodIssues(result.error, root), { cause: result.error });
}

/** Parses a Node Changed detail; throws EventParseError naming every bad field. */
export function parseNodeChanged(detail: unknown): NodeChanged {
  return parseWith(NodeChangedDetail, detail, NodeChangedDetailType, 'detail');
}
/** Parses a Heartbeat Digest detail; throws EventParseError naming every bad field. */
export function parseHeartbeatDigest(detail: unknown): HeartbeatDigest {
  return parseWith(HeartbeatDigestDetail, detail, HeartbeatDigestDetailType, 'detail');
}
/** Parses a Pod Changed detail; throws EventParseError naming every bad field. */
export function parsePodChanged(detail: unknown): PodChanged {
  return parseWith(PodChangedDetail, detail, PodChangedDetailType, 'detail');
}
/** Parses a whole EventBridge event of any of the three types; throws EventParseError. */
export function parseRelayEvent(event: unknown): RelayEvent {
  return parseWith(RelayEvent, event, 'relay event');
}

/**
 * The EventParseError for a failure of Powertools' parser (`safeParse: true`): its `cause` is a ZodError
 * (with an envelope) or the schema's issue list (without one). One line per problem, naming the field
 * from the root of the EventBridge event (`detail.node.name: …`).
 *
 * @example
 * if (!parsed.success) throw eventParseErrorFrom(parsed.error, NodeChangedDetailType);
 */
export function eventParseErrorFrom(error: Error, what: string): EventParseError {
  const { cause } = error;
  const zodError =
    cause instanceof z.ZodError
      ? cause
      : Array.isArray(cause)
        ? new z.ZodError(cause as z.core.$ZodIssue[])
        : undefined;
  const issues = zodError === undefined ? [error.message] : formatZodIssues(zodError);
  return new EventParseError(what, issues, { cause: error });
}

/** The wire detail (a JSON-ready object) of an outgoing event; throws EventEncodeError naming the field. */
export function encodeDetail(event: OutgoingEvent): NodeChangedWire | HeartbeatDigestWire | PodChangedWire {
  switch (event.detailType) {
    case NodeChangedDetailType:
      return encodeWith(NodeChangedDetail, event.detail, event.detailType, 'detail');
    case HeartbeatDigestDetailType:
      return encodeWith(HeartbeatDigestDetail, event.detail, event.detailType, 'detail');
    case PodChangedDetailType:
      return encodeWith(PodChangedDetail, event.detail, event.detailType, 'detail');
  }
}

/** UTF-8 byte length, the unit of every EventBridge size limit and of its 64 KB billing chunks. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

// ---------------------------------------------------------------------------------------------------
// Converters between the wire and domain forms

/** A wire node as a domain Node (times to EpochMillis); throws EventParseError naming the field. */
export function nodeFromWire(wire: WireNode): Node {
  return parseWith(NodeSchema, wire, 'node', 'node');
}
/** A domain Node as a wire node (times to ISO strings); throws EventEncodeError naming the field. */
export function nodeToWire(node: Node): WireNode {
  return encodeWith(NodeSchema, node, 'node', 'node');
}
/** A wire pod as a domain Pod; throws EventParseError naming the field. */
export function podFromWire(wire: WirePod): Pod {
  return parseWith(PodSchema, wire, 'pod', 'pod');
}
/** A domain Pod as a wire pod; throws EventEncodeError naming the field. */
export function podToWire(pod: Pod): WirePod {
  return encodeWith(PodSchema, pod, 'pod', 'pod');
}
