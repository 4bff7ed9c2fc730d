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
// one place both the relay and the functions read objects (bounds and their sources: shared/events.ts,
// "Bounds"). A text over its bound is cut and ends in a marker saying how many bytes went ("… [truncated
// 202,752 bytes]"); a list over its bound keeps what the controller reads first and drops the rest. A
// node says what was cut in `truncated`. Nothing is ever written back from a cut copy: status writes
// leave cut fields out (nodeConditionToPatch), taint writes read the whole list (allTaintsFromV1).
// Writing: times go out as metav1.Time does on the wire, RFC 3339 in whole seconds (Go's
// `t.UTC().Format(time.RFC3339)` truncates), so what this adapter writes is what client-go would have.
import { Buffer } from 'node:buffer';
import { z } from 'zod';
import { ownedByNodeController } from '../../domain/taints.js';
import {
  NodeDiskPressure,
  NodeMemoryPressure,
  NodeNetworkUnavailable,
  NodePIDPressure,
  NodeReady,
  type ConditionStatus,
  type EpochMillis,
  type Node,
  type NodeCondition,
  type Pod,
  type Taint,
  type TaintEffect,
  type Toleration,
  type TolerationOperator,
} from '../../domain/types.js';
import {
  ControllerLabelKeys,
  MaxConditionMessageBytes,
  MaxConditionReasonBytes,
  MaxConditionTypeBytes,
  MaxNodeConditions,
  MaxNodeTaints,
  MaxPodTextBytes,
  MaxPodTolerations,
  MaxTaintKeyBytes,
  MaxTaintValueBytes,
  MaxTruncationNotes,
  wireBytes,
} from '../../events.js';
import { isLabelValue, parseWireTime } from '../../wireFormat.js';

/** metav1.Time on the wire: RFC 3339, UTC, whole seconds (truncated, as Go formats it). */
export function formatKubeTime(ms: EpochMillis): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

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
  const m = /^([^.]*?)(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(value);
  if (m === null) return undefined;
  const fraction = (m[2] ?? '').slice(0, 3);
  return parseWireTime(`${m[1] ?? ''}${fraction === '' ? '' : `.${fraction}`}${m[3] ?? ''}`);
}

// ---------------------------------------------------------------------------------------------------
// The shapes read. Leaves the domain interprets tolerantly are plain strings here; anything else the
// API server always sends (a name, a uid, a list where a list belongs) is checked.

const optionalString = z.string().nullish();
// A Date (listed objects) or a string (watched objects); unreadable optional times read as absent.
const kubeTimeInput = z.union([z.date(), z.string()]).nullish();

const V1TaintSchema = z.object({
  key: z.string(),
  value: optionalString,
  effect: z.string(),
  timeAdded: kubeTimeInput,
});

const V1NodeSchema = z.object({
  metadata: z.object({
    name: z.string().min(1),
    uid: z.string().min(1),
    resourceVersion: optionalString,
    creationTimestamp: kubeTimeInput,
    labels: z.record(z.string(), z.string()).nullish(),
  }),
  spec: z
    .object({
      taints: z.array(V1TaintSchema).nullish(),
      unschedulable: z.boolean().nullish(),
    })
    .nullish(),
  status: z
    .object({
      conditions: z
        .array(
          z.object({
            type: z.string(),
            status: z.string(),
            reason: optionalString,
            message: optionalString,
            lastHeartbeatTime: kubeTimeInput,
            lastTransitionTime: kubeTimeInput,
          }),
        )
        .nullish(),
    })
    .nullish(),
});

const V1TolerationSchema = z.object({
  key: optionalString,
  operator: optionalString,
  value: optionalString,
  effect: optionalString,
  tolerationSeconds: z.number().nullish(),
});

const V1PodSchema = z.object({
  metadata: z.object({
    name: z.string().min(1),
    namespace: z.string().min(1),
    uid: z.string().min(1),
    deletionTimestamp: kubeTimeInput,
    deletionGracePeriodSeconds: z.number().nullish(),
    ownerReferences: z.array(z.object({ kind: z.string(), controller: z.boolean().nullish() })).nullish(),
  }),
  spec: z
    .object({
      nodeName: optionalString,
      tolerations: z.array(V1TolerationSchema).nullish(),
    })
    .nullish(),
  status: z
    .object({
      reason: optionalString,
      conditions: z.array(z.object({ type: z.string(), status: z.string() })).nullish(),
    })
    .nullish(),
});

export type Mapped<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => {
      const path = issue.path.join('.') || '(root)';
      return issue.code === 'invalid_type' && issue.input === undefined
        ? `${path}: missing`
        : `${path}: ${issue.message}`;
    })
    .join('; ');
}

/** metadata.name (and namespace) of an object that failed validation, for the message. */
function nameOf(obj: unknown): string {
  const meta: unknown =
    typeof obj === 'object' && obj !== null ? (obj as { metadata?: unknown }).metadata : undefined;
  if (typeof meta !== 'object' || meta === null) return '';
  const { name, namespace } = meta as { name?: unknown; namespace?: unknown };
  const n = typeof name === 'string' ? name : '';
  return typeof namespace === 'string' && namespace !== '' ? `${namespace}/${n}` : n;
}

function malformed(kind: string, obj: unknown, problem: string): { ok: false; message: string } {
  return { ok: false, message: `malformed ${kind} ${JSON.stringify(nameOf(obj))}: ${problem}` };
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

// ---------------------------------------------------------------------------------------------------
// Bounds (shared/events.ts, "Bounds")

const count = (n: number): string => n.toLocaleString('en-US');
const truncationMarker = (droppedBytes: number): string => `… [truncated ${count(droppedBytes)} bytes]`;
const TruncationMarker = /… \[truncated [\d,]+ bytes\]$/u;

/**
 * Whether a text ends in the marker the mapping appends to what it cut: such a text is a prefix of the
 * real one, which must never be written back.
 */
export function isTruncatedText(text: string): boolean {
  return TruncationMarker.test(text);
}

// The bytes one code point takes in JSON (see wireBytes): escapes for quote, backslash and control
// characters, `\udXXX` for a lone surrogate, else its UTF-8 length.
function codePointWireBytes(cp: number): number {
  if (cp === 0x22 || cp === 0x5c) return 2;
  if (cp < 0x20) return [0x08, 0x09, 0x0a, 0x0c, 0x0d].includes(cp) ? 2 : 6;
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp >= 0xd800 && cp <= 0xdfff) return 6;
  return cp < 0x10000 ? 3 : 4;
}

/**
 * `text` within `max` wire bytes: unchanged when it fits, else its longest prefix (whole code points)
 * that fits with the marker after it, and how many UTF-8 bytes of the text were dropped.
 *
 * @example truncateText('x'.repeat(5000), 100)?.text // 73 × 'x', then '… [truncated 4,927 bytes]'
 */
export function truncateText(
  text: string,
  max: number,
): { readonly text: string; readonly droppedBytes: number } | undefined {
  if (text.length * 6 <= max || wireBytes(text) <= max) return undefined;
  const totalBytes = Buffer.byteLength(text, 'utf8');
  // The marker's room is taken for the largest count it could show, so the real one always fits.
  const budget = max - wireBytes(truncationMarker(totalBytes));
  let used = 0;
  let end = 0;
  for (const ch of text) {
    const cost = codePointWireBytes(ch.codePointAt(0) ?? 0);
    if (used + cost > budget) break;
    used += cost;
    end += ch.length;
  }
  const kept = text.slice(0, end);
  const droppedBytes = totalBytes - Buffer.byteLength(kept, 'utf8');
  return { text: kept + truncationMarker(droppedBytes), droppedBytes };
}

/** The notes of one node, at most MaxTruncationNotes: the last one counts those left out. */
class TruncationNotes {
  private readonly notes: string[] = [];

  add(note: string): void {
    this.notes.push(note);
  }

  /** A text field: cut when over `max`, with a note naming `field`. */
  text(field: string, text: string, max: number): string {
    const cut = truncateText(text, max);
    if (cut === undefined) return text;
    this.add(`${field}: ${count(Buffer.byteLength(text, 'utf8'))} bytes, truncated to ${count(max)}`);
    return cut.text;
  }

  list(): readonly string[] | undefined {
    if (this.notes.length === 0) return undefined;
    if (this.notes.length <= MaxTruncationNotes) return this.notes;
    const shown = this.notes.slice(0, MaxTruncationNotes - 1);
    return [...shown, `and ${count(this.notes.length - shown.length)} more`];
  }
}

/** At most `max` of `items`: the lowest `rank` first, then the earliest; kept in their original order. */
function keepFirst<T>(items: readonly T[], max: number, rank: (item: T, index: number) => number): T[] {
  if (items.length <= max) return [...items];
  const chosen = items
    .map((item, index) => ({ index, rank: rank(item, index) }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .slice(0, max)
    .map((c) => c.index)
    .sort((a, b) => a - b);
  return chosen.map((index) => items[index] as T);
}

// The condition types the controller reads: tryUpdateNodeHealth marks the first four Unknown,
// doNoScheduleTaintingPass maps all five to taints. GetNodeCondition reads the first of a type.
const controllerConditionTypes: readonly string[] = [
  NodeReady,
  NodeMemoryPressure,
  NodeDiskPressure,
  NodePIDPressure,
  NodeNetworkUnavailable,
];

function boundConditions(conditions: readonly NodeCondition[], notes: TruncationNotes): NodeCondition[] {
  // A type the events cannot carry (empty, or over metav1.Condition's 316 bytes) is not one the
  // controller reads: the condition is dropped, whole.
  const typed = conditions.filter(
    (c) =>
      c.type !== '' &&
      (c.type.length * 6 <= MaxConditionTypeBytes || wireBytes(c.type) <= MaxConditionTypeBytes),
  );
  if (typed.length < conditions.length) {
    notes.add(
      `status.conditions: dropped ${count(conditions.length - typed.length)} whose type is empty or over ${count(MaxConditionTypeBytes)} bytes`,
    );
  }
  const firstOfType = new Set(
    controllerConditionTypes.map((type) => typed.findIndex((c) => c.type === type)).filter((i) => i >= 0),
  );
  const kept = keepFirst(typed, MaxNodeConditions, (_c, index) => (firstOfType.has(index) ? 0 : 1));
  if (kept.length < typed.length) {
    notes.add(
      `status.conditions: dropped ${count(typed.length - kept.length)} of ${count(typed.length)} (at most ${MaxNodeConditions} are kept)`,
    );
  }
  return kept.map((c) => {
    const field = `status.conditions[${c.type}]`;
    const reason =
      c.reason === undefined ? undefined : notes.text(`${field}.reason`, c.reason, MaxConditionReasonBytes);
    const message =
      c.message === undefined
        ? undefined
        : notes.text(`${field}.message`, c.message, MaxConditionMessageBytes);
    return reason === c.reason && message === c.message
      ? c
      : {
          ...c,
          ...(reason !== undefined && { reason }),
          ...(message !== undefined && { message }),
        };
  });
}

const withinKeyBounds = (key: string | undefined, value: string | undefined): boolean =>
  wireBytes(key ?? '') <= MaxTaintKeyBytes && wireBytes(value ?? '') <= MaxTaintValueBytes;

function boundTaints(taints: readonly Taint[], notes: TruncationNotes): Taint[] {
  // The API server validates keys and values (validateNodeTaints): one over them is not from a
  // conforming server. Dropping a taint only ever means fewer evictions.
  const valid = taints.filter((t) => t.key !== '' && withinKeyBounds(t.key, t.value));
  if (valid.length < taints.length) {
    notes.add(
      `spec.taints: dropped ${count(taints.length - valid.length)} whose key or value is over the API's bounds`,
    );
  }
  // The controller's own taints decide its writes; NoExecute ones decide evictions.
  const kept = keepFirst(valid, MaxNodeTaints, (t) =>
    ownedByNodeController(t) ? 0 : t.effect === 'NoExecute' ? 1 : 2,
  );
  if (kept.length < valid.length) {
    notes.add(
      `spec.taints: dropped ${count(valid.length - kept.length)} of ${count(valid.length)} (at most ${MaxNodeTaints} are kept)`,
    );
  }
  return kept;
}

// A toleration that tolerates every taint forever (upstream: an empty key with Exists matches all).
const toleratesEverything: Toleration = Object.freeze({ operator: 'Exists' });

function sameToleration(a: Toleration, b: Toleration): boolean {
  return (
    a.key === b.key &&
    a.operator === b.operator &&
    a.value === b.value &&
    a.effect === b.effect &&
    a.tolerationSeconds === b.tolerationSeconds
  );
}

/**
 * A pod's tolerations within MaxPodTolerations, never evicting a pod upstream would keep. Only
 * NoExecute taints are ever matched against tolerations (taint eviction), and the first toleration
 * that tolerates a taint decides (GetMatchingTolerations). So, when the list is over its bounds: those
 * that cannot tolerate a NoExecute taint go, then exact repeats (a later one never decides); if still
 * too many, or one is over the API's key and value bounds, the list is cut there and ends in a
 * toleration of everything, forever. A taint the kept ones decide is decided as upstream would; any
 * other is tolerated forever, where upstream would evict: such a pod is evicted later or never, never
 * sooner.
 */
function boundTolerations(tolerations: readonly Toleration[]): readonly Toleration[] {
  const fits = (list: readonly Toleration[]) =>
    list.length <= MaxPodTolerations && list.every((t) => withinKeyBounds(t.key, t.value));
  if (fits(tolerations)) return tolerations;
  const matching = tolerations.filter(
    (t) => t.effect === undefined || t.effect === '' || t.effect === 'NoExecute',
  );
  const unique = matching.filter((t, i) => matching.findIndex((u) => sameToleration(t, u)) === i);
  if (fits(unique)) return unique;
  const out: Toleration[] = [];
  for (const t of unique) {
    if (out.length === MaxPodTolerations - 1 || !withinKeyBounds(t.key, t.value)) break;
    out.push(t);
  }
  return [...out, toleratesEverything];
}

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
  const deletionTimestamp = kubeTimeToMillis(metadata.deletionTimestamp);
  const grace = metadata.deletionGracePeriodSeconds;
  const ready = status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const statusReason = status?.reason == null ? undefined : cutPodText(status.reason);
  return {
    ok: true,
    value: {
      namespace: metadata.namespace,
      name: metadata.name,
      uid: metadata.uid,
      nodeName: spec?.nodeName ?? '',
      tolerations: boundTolerations((spec?.tolerations ?? []).map(tolerationFromV1).filter(defined)),
      ...(ownerKind !== undefined && { ownerKind }),
      ...(deletionTimestamp !== undefined && { deletionTimestamp }),
      ...(typeof grace === 'number' && { deletionGracePeriodSeconds: Math.max(0, safeInteger(grace)) }),
      ...(ready !== undefined && { ready: conditionStatus(ready) }),
      ...(statusReason !== undefined && { statusReason }),
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
