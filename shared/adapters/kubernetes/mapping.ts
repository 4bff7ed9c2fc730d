// Conversions between the Kubernetes API objects (@kubernetes/client-node models, or their wire JSON)
// and the domain's trimmed Node and Pod (shared/domain/types.ts), in both directions. The one
// conversion the cluster adapter (cluster.ts) and the watch relay (relay/) share.
//
// Reading: the structure is validated with zod (docs/contributing.md#validation), so a
// malformed object becomes a failed Mapped naming the object and the field instead of a TypeError deep
// in the domain. Values are read tolerantly, because the API server is the authority on them: a
// condition status other than True/False/Unknown reads as Unknown, a taint effect or toleration
// operator the domain does not know is dropped (it could never match), an int64 tolerationSeconds is
// clamped to a safe integer. Only the labels the controller reads (ControllerLabelKeys) are kept, so a
// change of any other label can never look like a change the controller cares about.
// Bounding: a node writes its own status, so what it can make the controller carry is bounded here, the
// one place both the relay and the functions read objects (bounds and their sources:
// shared/eventBounds.ts). A text over its bound is cut and ends in a marker saying how many bytes went ("… [truncated
// 202,752 bytes]"); a list over its bound keeps what the controller reads first and drops the rest. A
// node says what was cut in `truncated`. Nothing is ever written back from a cut copy: status writes
// leave cut fields out (nodeConditionToPatch), taint writes read the whole list (allTaintsFromV1).
// Writing: times go out as metav1.Time does on the wire, RFC 3339 in whole seconds (Go's
// `t.UTC().Format(time.RFC3339)` truncates), so what this adapter writes is what client-go would have.
// The shapes read are in v1Schemas.ts, the bounding in bounds.ts.
import type { z } from 'zod';
import type {
  ConditionStatus,
  EpochMillis,
  Node,
  NodeCondition,
  Pod,
  Taint,
  TaintEffect,
  Toleration,
  TolerationOperator,
} from '../../domain/types.js';
import { MaxPodTextBytes } from '../../eventBounds.js';
import { ControllerLabelKeys } from '../../events.js';
import { memoized } from '../../memo.js';
import { isLabelValue, parseWireTime } from '../../wireFormat.js';
import {
  boundConditions,
  boundTaints,
  boundTolerations,
  isTruncatedText,
  truncateText,
  TruncationNotes,
} from './bounds.js';
import {
  describeIssues,
  malformed,
  V1NodeSchema,
  V1PodSchema,
  type Mapped,
  type V1TaintSchema,
  type V1TolerationSchema,
} from './v1Schemas.js';

export type { Mapped } from './v1Schemas.js';

/** metav1.Time on the wire: RFC 3339, UTC, whole seconds (truncated, as Go formats it). */
export function formatKubeTime(ms: EpochMillis): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

// The relay reads every lease renewal's renewTime, and a tick's renewals share one instant.
const kubeTimeTextToMillis = memoized(
  (value: string): EpochMillis | undefined => {
    const m = /^([^.]*?)(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(value);
    if (m === null) return undefined;
    const fraction = (m[2] ?? '').slice(0, 3);
    return parseWireTime(`${m[1] ?? ''}${fraction === '' ? '' : `.${fraction}`}${m[3] ?? ''}`);
  },
  4096,
  (value) => value.length <= 40,
);

/**
 * A Kubernetes time as EpochMillis. client-node hands out `Date`s for objects it lists but the raw
 * JSON strings for objects from a watch (kubernetes-client/javascript#487), so both are accepted;
 * MicroTime's extra digits (lease renewTime) are truncated to the millisecond. Undefined for anything
 * else.
 *
 * @example kubeTimeToMillis('2026-11-21T10:00:00.123456Z') // 1763719200123
 */
export function kubeTimeToMillis(value: unknown): EpochMillis | undefined {
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isFinite(ms) ? ms : undefined;
  }
  if (typeof value !== 'string') return undefined;
  return kubeTimeTextToMillis(value);
}

// ---------------------------------------------------------------------------------------------------
// Values, read as the controller would

const conditionStatuses: readonly string[] = ['True', 'False', 'Unknown'];
const taintEffects: readonly string[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const tolerationOperators: readonly string[] = ['Exists', 'Equal', 'Lt', 'Gt', ''];

/** Whether the domain knows the taint effect (the API server admits only these three). */
export function isTaintEffect(effect: string): effect is TaintEffect {
  return taintEffects.includes(effect);
}

// Kubelets only post True/False/Unknown; anything else reads as Unknown, as a condition the controller
// cannot interpret.
function conditionStatus(status: string): ConditionStatus {
  return conditionStatuses.includes(status) ? (status as ConditionStatus) : 'Unknown';
}

// JSON numbers above 2^53 (tolerationSeconds is an int64) are clamped: 285 million years still means
// "tolerated for practically ever", and the wire carries only safe integers.
function safeInteger(n: number): number {
  return Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Math.trunc(n)));
}

/** A domain Taint from the API's, keeping timeAdded when present; undefined for an unknown effect. */
export function taintFromV1(taint: z.output<typeof V1TaintSchema>): Taint | undefined {
  if (!isTaintEffect(taint.effect)) return undefined;
  const timeAdded = kubeTimeToMillis(taint.timeAdded);
  return {
    key: taint.key,
    ...(taint.value != null && { value: taint.value }),
    effect: taint.effect,
    ...(timeAdded !== undefined && { timeAdded }),
  };
}

function conditionFromV1(
  c: NonNullable<NonNullable<z.output<typeof V1NodeSchema>['status']>['conditions']>[number],
): NodeCondition {
  const lastHeartbeatTime = kubeTimeToMillis(c.lastHeartbeatTime);
  const lastTransitionTime = kubeTimeToMillis(c.lastTransitionTime);
  return {
    type: c.type,
    status: conditionStatus(c.status),
    ...(c.reason != null && { reason: c.reason }),
    ...(c.message != null && { message: c.message }),
    ...(lastHeartbeatTime !== undefined && { lastHeartbeatTime }),
    ...(lastTransitionTime !== undefined && { lastTransitionTime }),
  };
}

// A toleration with an operator or effect the domain does not know never tolerates anything upstream
// (ToleratesTaint's default branch; taints only carry the three effects), so dropping it is the same.
function tolerationFromV1(t: z.output<typeof V1TolerationSchema>): Toleration | undefined {
  const operator = t.operator ?? undefined;
  const effect = t.effect ?? undefined;
  if (operator !== undefined && !tolerationOperators.includes(operator)) return undefined;
  if (effect !== undefined && effect !== '' && !isTaintEffect(effect)) return undefined;
  return {
    ...(t.key != null && { key: t.key }),
    ...(operator !== undefined && { operator: operator as TolerationOperator }),
    ...(t.value != null && { value: t.value }),
    ...(effect !== undefined && { effect: effect }),
    ...(typeof t.tolerationSeconds === 'number' && { tolerationSeconds: safeInteger(t.tolerationSeconds) }),
  };
}

const defined = <T>(value: T | undefined): value is T => value !== undefined;

/**
 * The node as the controller reads it: identity, the labels in ControllerLabelKeys, the conditions,
 * taints and unschedulable, within their bounds (what was cut is listed in `truncated`). Images,
 * capacity, addresses, other labels and the rest are dropped. Fails, naming the node and the field,
 * when a field the API server always sets (name, uid, creationTimestamp) is missing or unreadable.
 *
 * @example
 * const node = nodeFromV1(await core.readNode({ name: 'node-a' }));
 * if (node.ok) node.value.labels; // { 'topology.kubernetes.io/zone': 'eu-west-1a' }
 */
export function nodeFromV1(v1: unknown): Mapped<Node> {
  const parsed = V1NodeSchema.safeParse(v1);
  if (!parsed.success) return malformed('node', v1, describeIssues(parsed.error));
  const { metadata, spec, status } = parsed.data;
  const creationTimestamp = kubeTimeToMillis(metadata.creationTimestamp);
  if (creationTimestamp === undefined) {
    return malformed('node', v1, 'metadata.creationTimestamp: missing or not a time');
  }
  const notes = new TruncationNotes();
  const labels: Record<string, string> = {};
  for (const key of ControllerLabelKeys) {
    const value =
      metadata.labels != null && Object.hasOwn(metadata.labels, key) ? metadata.labels[key] : undefined;
    if (value === undefined) continue;
    // The API server validates label values; one that is not could not be sent.
    if (isLabelValue(value)) labels[key] = value;
    else notes.add(`metadata.labels[${key}]: dropped, not a valid label value`);
  }
  const conditions = boundConditions((status?.conditions ?? []).map(conditionFromV1), notes);
  const taints = boundTaints((spec?.taints ?? []).map(taintFromV1).filter(defined), notes);
  const truncated = notes.list();
  return {
    ok: true,
    value: {
      name: metadata.name,
      uid: metadata.uid,
      ...(metadata.resourceVersion != null && { resourceVersion: metadata.resourceVersion }),
      creationTimestamp,
      labels,
      conditions,
      taints,
      unschedulable: spec?.unschedulable === true,
      ...(truncated !== undefined && { truncated }),
    },
  };
}

/**
 * Every taint of a node the domain can read, unbounded, in order: for a writer that sends the whole
 * list back (cluster.ts swapNodeTaints), which must never drop a taint the bounded copy left out.
 */
export function allTaintsFromV1(taints: readonly z.input<typeof V1TaintSchema>[]): Taint[] {
  return taints.map((t) => taintFromV1(t)).filter(defined);
}

// status.reason and the controller's kind: short words by convention, bounded all the same.
const cutPodText = (text: string): string => truncateText(text, MaxPodTextBytes)?.text ?? text;

/**
 * The pod as the controllers read it. `ownerKind` is the kind of the controller owner reference
 * (`controller: true`, upstream metav1.GetControllerOf), `ready` the status of the Ready condition.
 * Fails, naming the pod and the field, when name, namespace or uid is missing.
 */
export function podFromV1(v1: unknown): Mapped<Pod> {
  const parsed = V1PodSchema.safeParse(v1);
  if (!parsed.success) return malformed('pod', v1, describeIssues(parsed.error));
  const { metadata, spec, status } = parsed.data;
  const controllerKind = metadata.ownerReferences?.find((ref) => ref.controller === true)?.kind;
  const ownerKind = controllerKind === undefined ? undefined : cutPodText(controllerKind);
  const creationTimestamp = kubeTimeToMillis(metadata.creationTimestamp);
  const deletionTimestamp = kubeTimeToMillis(metadata.deletionTimestamp);
  const grace = metadata.deletionGracePeriodSeconds;
  const ready = status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const statusReason = status?.reason == null ? undefined : cutPodText(status.reason);
  const disruption = status?.conditions?.find((c) => c.type === 'DisruptionTarget' && c.status === 'True');
  const disruptionTarget = disruption === undefined ? undefined : cutPodText(disruption.reason ?? '');
  return {
    ok: true,
    value: {
      namespace: metadata.namespace,
      name: metadata.name,
      uid: metadata.uid,
      nodeName: spec?.nodeName ?? '',
      tolerations: boundTolerations((spec?.tolerations ?? []).map(tolerationFromV1).filter(defined)),
      ...(ownerKind !== undefined && { ownerKind }),
      ...(creationTimestamp !== undefined && { creationTimestamp }),
      ...(deletionTimestamp !== undefined && { deletionTimestamp }),
      ...(typeof grace === 'number' && { deletionGracePeriodSeconds: Math.max(0, safeInteger(grace)) }),
      ...(ready !== undefined && { ready: conditionStatus(ready) }),
      ...(statusReason !== undefined && { statusReason }),
      ...(disruptionTarget !== undefined && { disruptionTarget }),
    },
  };
}

/** core/v1 Taint as JSON on the wire. */
export interface TaintJson {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

/** The API's Taint from a domain one (the value omitted when empty, as Go's omitempty does). */
export function taintToJson(taint: Taint): TaintJson {
  const out: TaintJson = { key: taint.key, effect: taint.effect };
  if (taint.value !== undefined && taint.value !== '') out.value = taint.value;
  if (taint.timeAdded !== undefined) out.timeAdded = formatKubeTime(taint.timeAdded);
  return out;
}

/**
 * A condition as a status patch sends it (a strategic merge patch, keyed by type): a reason or
 * message the mapping cut is left out, so the server keeps the real one.
 */
export function nodeConditionToPatch(condition: NodeCondition): Record<string, string> {
  const out = nodeConditionToJson(condition);
  if (condition.reason !== undefined && isTruncatedText(condition.reason)) delete out.reason;
  if (condition.message !== undefined && isTruncatedText(condition.message)) delete out.message;
  return out;
}

/** A domain NodeCondition as the API's JSON. */
export function nodeConditionToJson(condition: NodeCondition): Record<string, string> {
  const out: Record<string, string> = { type: condition.type, status: condition.status };
  if (condition.reason !== undefined) out.reason = condition.reason;
  if (condition.message !== undefined) out.message = condition.message;
  if (condition.lastHeartbeatTime !== undefined)
    out.lastHeartbeatTime = formatKubeTime(condition.lastHeartbeatTime);
  if (condition.lastTransitionTime !== undefined)
    out.lastTransitionTime = formatKubeTime(condition.lastTransitionTime);
  return out;
}
