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
import type { Node, Pod } from './domain/types.js';
import {
  LabelNodeExcludeDisruption,
  LabelTopologyRegion,
  LabelTopologyZone,
  LabelZoneFailureDomain,
  LabelZoneRegion,
} from './domain/zones.js';
import { deepFreeze } from './deepFreeze.js';
import { EventEncodeError, EventParseError } from './errors.js';
import {
  MaxConditionMessageBytes,
  MaxConditionReasonBytes,
  MaxConditionTypeBytes,
  MaxNodeConditions,
  MaxNodeLabels,
  MaxNodeTaints,
  MaxPodTextBytes,
  MaxPodTolerations,
  MaxTaintKeyBytes,
  MaxTaintValueBytes,
  MaxTruncationNoteBytes,
  MaxTruncationNotes,
  wireBytes,
} from './eventBounds.js';
import {
  ClusterName,
  discriminatorError,
  LabelKey,
  LabelValue,
  NamespaceName,
  NodeName,
  NonEmpty,
  NonNegativeInt,
  PodName,
  schemaVersionError,
  Time,
} from './eventPrimitives.js';
import {
  encodeHeartbeatDigest,
  HeartbeatDigestDetail,
  type HeartbeatDigest,
  type HeartbeatDigestWire,
} from './heartbeatDigestWire.js';
import { describeInput, isDNS1123Subdomain } from './wireFormat.js';

export { formatWireTime, MaxEpochMillis, MinEpochMillis, parseWireTime } from './wireFormat.js';
export { EventSchemaVersion } from './eventPrimitives.js';
export {
  digestChecksFingerprintOf,
  fingerprintShardOf,
  HeartbeatDigestDetail,
  MaxPackedBytes,
  type FingerprintShard,
  type HeartbeatDigest,
  type HeartbeatDigestWire,
} from './heartbeatDigestWire.js';

/** The `source` of every event the relay sends. */
export const RelaySource = 'nlc.relay';
export const NodeChangedDetailType = 'Node Changed';
export const HeartbeatDigestDetailType = 'Heartbeat Digest';
export const PodChangedDetailType = 'Pod Changed';

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

// Texts and lists within their bounds (eventBounds.ts says where each comes from).
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
  /** Additive in v1: when the pod was created (the pod sweep reads it). */
  creationTimestamp: Time.optional(),
  deletionTimestamp: Time.optional(),
  deletionGracePeriodSeconds: NonNegativeInt.optional(),
  ready: ConditionStatusSchema.optional(),
  statusReason: boundedText('a status reason', MaxPodTextBytes).optional(),
  /** Additive in v1: the reason of a True DisruptionTarget condition ("" when it has none). */
  disruptionTarget: boundedText('a condition reason', MaxPodTextBytes).optional(),
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
  /**
   * On MODIFIED, additive in v1: the pod's Ready status and deletionTimestamp before the change, so a
   * shadow can tell what the cluster's own controller just did to it (marked it NotReady, began its
   * taint eviction) from what was so already.
   */
  oldReady: ConditionStatusSchema.optional(),
  oldDeletionTimestamp: Time.optional(),
  /**
   * Additive in v1, on a pod's Ready lost: its node's Ready status as the relay saw it then (not True:
   * the node controller's MarkPodsNotReady). The functions may process the event after the node is back.
   */
  nodeReady: ConditionStatusSchema.optional(),
});

/** The detail of a `Pod Changed` event. Parsing yields a {@link PodChanged} with a domain `Pod`. */
export const PodChangedDetail = z.discriminatedUnion('schemaVersion', [PodChangedV1], {
  error: schemaVersionError,
});
export type PodChanged = z.output<typeof PodChangedDetail>;
export type PodChangedWire = z.input<typeof PodChangedDetail>;

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
/** A schedule rule's event (EventBridge's classic form): the monitor's and the drainer's cron. */
export const ScheduledEvent = EventBridgeSchema.extend({
  source: z.literal('aws.events'),
  'detail-type': z.literal('Scheduled Event'),
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

// A digest goes through encodeHeartbeatDigest (the codec's wire, built once and memoized, without
// checking the relay's own output again: 100,000 nodes in tens of milliseconds, not a second); the codec
// runs only to name what is wrong with one that cannot be encoded.
function encodeDigest(digest: HeartbeatDigest): HeartbeatDigestWire {
  return (
    encodeHeartbeatDigest(digest) ??
    deepFreeze(encodeWith(HeartbeatDigestDetail, digest, HeartbeatDigestDetailType, 'detail'))
  );
}

/**
 * The wire detail (a JSON-ready object) of an outgoing event; throws EventEncodeError naming the field.
 * A digest's is shared and frozen (see encodedDigests): copy it to change it.
 */
export function encodeDetail(event: OutgoingEvent): NodeChangedWire | HeartbeatDigestWire | PodChangedWire {
  switch (event.detailType) {
    case NodeChangedDetailType:
      return encodeWith(NodeChangedDetail, event.detail, event.detailType, 'detail');
    case HeartbeatDigestDetailType:
      return encodeDigest(event.detail);
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
