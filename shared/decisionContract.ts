// The contract of the Decisions trail (DecisionRecord, shared/ports/stores.ts): how a decision's subject
// and the values of its inputs are written as strings, and how they are read back. Each format's writer
// and reader sit side by side, so the functions that record decisions (shared/app) and those that read
// them (`nlc explain`, `nlc agreement`, the simulator's report, the local stack's view) cannot drift
// apart. Rows live in DynamoDB for 14 days: a format changes here only with a reader for the rows
// already written.
//
// Readers never throw on a row: one that does not match (written by an older version, or by hand) reads
// as undefined or as an error in words, and an entry of a list that does not parse is skipped, not the
// whole row, as the consumers always did.
import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import type { ConditionStatus, PodKey, TaintEffect, ZoneState } from './domain/types.js';
import { formatZoneKey } from './domain/zones.js';
import type { DecisionRecord, JsonValue } from './ports/stores.js';

const ConditionStatuses = ['True', 'False', 'Unknown'] as const satisfies readonly ConditionStatus[];
const TaintEffects = [
  'NoSchedule',
  'PreferNoSchedule',
  'NoExecute',
] as const satisfies readonly TaintEffect[];
const ZoneStates = [
  'Initial',
  'Normal',
  'PartialDisruption',
  'FullDisruption',
] as const satisfies readonly ZoneState[];

const oneOf =
  <T extends string>(values: readonly T[]) =>
  (text: string): text is T =>
    (values as readonly string[]).includes(text);
const isConditionStatus = oneOf(ConditionStatuses);
const isTaintEffect = oneOf(TaintEffects);

// ---------------------------------------------------------------------------------------------------
// Subjects (DecisionRecord.node, the partition key's second half)

/**
 * Who a decision is about: a node, a zone, or the whole cluster. `zone` is the zone as people read it,
 * `region:zone` (formatZoneKey), '' for nodes without zone labels. Not every string is a subject: node
 * names are DNS subdomains, so none starts with '#', and a zone label is '' or has a ':' in it, so none
 * is '-'.
 */
export type DecisionSubject =
  | { readonly kind: 'node'; readonly name: string }
  | { readonly kind: 'zone'; readonly zone: string }
  | { readonly kind: 'cluster' };

/** The subject of cluster-wide decisions (master disruption, observation gaps). */
export const ClusterSubject = '#cluster';
const ZoneSubjectPrefix = '#zone:';
/** The zone of nodes without zone labels: '' would read as no zone written at all. */
const NoZoneLabel = '-';

export function formatDecisionSubject(subject: DecisionSubject): string {
  switch (subject.kind) {
    case 'node':
      return subject.name;
    case 'zone':
      return `${ZoneSubjectPrefix}${subject.zone || NoZoneLabel}`;
    case 'cluster':
      return ClusterSubject;
  }
}

/**
 * A stored subject read back: `#cluster`, `#zone:<region:zone>` (`#zone:-` for no zone), else a node.
 * Undefined for '' and for any other '#…' (no node is named so).
 *
 * @example parseDecisionSubject('#zone:eu-west-1:eu-west-1a') // { kind: 'zone', zone: 'eu-west-1:eu-west-1a' }
 */
export function parseDecisionSubject(subject: string): DecisionSubject | undefined {
  if (subject === ClusterSubject) return { kind: 'cluster' };
  if (subject.startsWith(ZoneSubjectPrefix)) {
    const label = subject.slice(ZoneSubjectPrefix.length);
    if (label === '') return undefined;
    return { kind: 'zone', zone: label === NoZoneLabel ? '' : label };
  }
  if (subject === '' || subject.startsWith('#')) return undefined;
  return { kind: 'node', name: subject };
}

/** A zone key (getZoneKey) as people read it: `region:zone`, `-` for nodes without zone labels. */
export function zoneLabel(zoneKey: string): string {
  return formatZoneKey(zoneKey) || NoZoneLabel;
}

/** The subject of a zone's decisions, from its zone as people read it (zoneLabel; `-` for no zone). */
export function zoneSubjectOfLabel(label: string): string {
  return formatDecisionSubject({ kind: 'zone', zone: label === NoZoneLabel ? '' : label });
}

/** The subject of a zone's decisions, from its zone key (getZoneKey). */
export function zoneSubject(zoneKey: string): string {
  return formatDecisionSubject({ kind: 'zone', zone: formatZoneKey(zoneKey) });
}

// ---------------------------------------------------------------------------------------------------
// Input values

/** A node condition as an input value: `Type=Status`, then ` (Reason)` when it has a reason. */
export interface ConditionInput {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason?: string;
}

/** @example formatConditionInput({ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }) // 'Ready=Unknown (NodeStatusUnknown)' */
export function formatConditionInput(condition: ConditionInput): string {
  const { type, status, reason } = condition;
  return `${type}=${status}${reason ? ` (${reason})` : ''}`;
}

// Condition types are CamelCase names (no '='); a reason may hold anything, parentheses and newlines too.
const conditionInputPattern = /^([^=]+)=([A-Za-z]+)(?: \((.*)\))?$/s;

/**
 * A condition input read back; undefined unless it is `Type=Status` with an upstream status (True, False,
 * Unknown), optionally followed by ` (Reason)`. An empty reason reads as none, as it is written.
 */
export function parseConditionInput(text: string): ConditionInput | undefined {
  const [, type, status, reason] = conditionInputPattern.exec(text) ?? [];
  if (type === undefined || status === undefined || !isConditionStatus(status)) return undefined;
  return reason ? { type, status, reason } : { type, status };
}

/** A taint as an input value: `key:Effect`, what upstream's MatchTaint compares (the value is not part of it). */
export interface TaintInput {
  readonly key: string;
  readonly effect: TaintEffect;
}

/** @example formatTaintInput({ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }) // 'node.kubernetes.io/unreachable:NoExecute' */
export function formatTaintInput(taint: TaintInput): string {
  return `${taint.key}:${taint.effect}`;
}

/**
 * A taint input read back; undefined without a key or an upstream effect. Taint keys are qualified names
 * and cannot contain ':', so the effect is what follows the last one.
 */
export function parseTaintInput(text: string): TaintInput | undefined {
  const colon = text.lastIndexOf(':');
  const key = text.slice(0, colon);
  const effect = text.slice(colon + 1);
  if (colon <= 0 || !isTaintEffect(effect)) return undefined;
  return { key, effect };
}

/** A taint with its value, as taint eviction matched tolerations against it: `key=value:Effect`. */
export interface TaintWithValueInput extends TaintInput {
  readonly value?: string;
}

/** `key=value:Effect`, or `key:Effect` when the value is empty or absent. */
export function formatTaintWithValueInput(taint: TaintWithValueInput): string {
  return `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
}

/**
 * A taint-with-value input read back; undefined as parseTaintInput. Keys cannot contain '=' (nor values
 * ':'), so the value is between the first '=' and the last ':'; an empty one reads as none.
 */
export function parseTaintWithValueInput(text: string): TaintWithValueInput | undefined {
  const taint = parseTaintInput(text);
  if (taint === undefined) return undefined;
  const equals = taint.key.indexOf('=');
  if (equals < 0) return taint;
  const key = taint.key.slice(0, equals);
  const value = taint.key.slice(equals + 1);
  if (key === '') return undefined;
  return value === '' ? { key, effect: taint.effect } : { key, value, effect: taint.effect };
}

/** A pod as an input value: `namespace/name`, upstream's pod key (shared/domain/types.ts PodKey). */
export interface PodRef {
  readonly namespace: string;
  readonly name: string;
}

export function formatPodRef(pod: PodRef): PodKey {
  return `${pod.namespace}/${pod.name}`;
}

/** A pod input read back; undefined unless both parts are there. Namespaces cannot contain '/'. */
export function parsePodRef(text: string): PodRef | undefined {
  const slash = text.indexOf('/');
  const namespace = text.slice(0, slash);
  const name = text.slice(slash + 1);
  if (slash <= 0 || name === '') return undefined;
  return { namespace, name };
}

// ---------------------------------------------------------------------------------------------------
// The inputs of decisions

/** What a reader makes of a row: the typed value, or why the row does not match, in words. */
export type ReadResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

function readWith<T>(schema: z.ZodType<T>, what: string, value: unknown): ReadResult<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(row)'}: ${i.message}`);
  return { ok: false, error: `${what}: ${issues.join('; ')}` };
}

/** One formatted value, or an issue naming the value that does not parse. */
function formatted<T>(parse: (text: string) => T | undefined, expected: string) {
  return z.string().transform((text, ctx) => {
    const value = parse(text);
    if (value !== undefined) return value;
    ctx.addIssue({
      code: 'custom',
      message: `expected ${expected}, got ${JSON.stringify(text)}`,
      input: text,
    });
    return z.NEVER;
  });
}

/**
 * A list of formatted values, read leniently as the consumers always read it: absent is empty, and an
 * entry that is not such a value (not a string, or malformed) is skipped.
 */
function formattedList<T>(parse: (text: string) => T | undefined) {
  return z
    .array(z.unknown())
    .optional()
    .transform((items) =>
      (items ?? []).flatMap((item): T[] => {
        const value = typeof item === 'string' ? parse(item) : undefined;
        return value === undefined ? [] : [value];
      }),
    );
}

const podRef = formatted(parsePodRef, 'a pod namespace/name');

// The cluster writes, as DecidingExecutor records them (shared/app/decisions.ts effectInputs) and
// deletePodHandler (shared/app/podDeletion.ts). Extra inputs (the context a decision was made in) are
// not part of the contract and are dropped.
const WriteDecisionSchema = z.discriminatedUnion('what', [
  z.object({
    what: z.literal('updateNodeStatus'),
    inputs: z.object({ conditions: formattedList(parseConditionInput) }),
  }),
  z.object({
    what: z.literal('swapNodeTaints'),
    inputs: z.object({ add: formattedList(parseTaintInput), remove: formattedList(parseTaintInput) }),
  }),
  z.object({ what: z.literal('markPodsNotReady'), inputs: z.object({ pods: formattedList(parsePodRef) }) }),
  z.object({
    what: z.literal('setPodTerminationReason'),
    inputs: z.object({ pod: podRef, reason: z.string() }),
  }),
  z.object({ what: z.literal('deletePod'), inputs: z.object({ pod: podRef }) }),
  z.object({ what: z.literal('deletePodForTaintEviction'), inputs: z.object({ pod: podRef }) }),
]);

/** A cluster write as the trail recorded it, with its inputs typed. */
export type WriteDecision = z.output<typeof WriteDecisionSchema>;
export type WriteWhat = WriteDecision['what'];

const writeWhats: ReadonlySet<string> = new Set<WriteWhat>([
  'updateNodeStatus',
  'swapNodeTaints',
  'markPodsNotReady',
  'setPodTerminationReason',
  'deletePod',
  'deletePodForTaintEviction',
]);

/**
 * A cluster write read back (updateNodeStatus, swapNodeTaints, markPodsNotReady, setPodTerminationReason,
 * deletePod, deletePodForTaintEviction); undefined for any other decision. A missing list reads as empty
 * and a malformed entry of one is skipped; a missing or malformed pod is an error.
 *
 * @example
 * const write = readWriteDecision(d);
 * if (write?.ok === true && write.value.what === 'swapNodeTaints') write.value.inputs.add; // TaintInput[]
 */
export function readWriteDecision(
  d: Pick<DecisionRecord, 'what' | 'inputs'>,
): ReadResult<WriteDecision> | undefined {
  if (!writeWhats.has(d.what)) return undefined;
  return readWith(WriteDecisionSchema, d.what, { what: d.what, inputs: d.inputs ?? {} });
}

/** A number read leniently, as the report always read it: anything else is absent. */
const optionalNumber = z.number().optional().catch(undefined);

const ZoneStateInputsSchema = z.object({
  from: z.enum(ZoneStates),
  to: z.enum(ZoneStates),
  zoneSize: optionalNumber,
  unhealthyNodes: optionalNumber,
  /** Absent when the zone's health is not a number (an empty zone). */
  zoneHealthPercent: optionalNumber,
  /** The zone limiter's new rate (setLimiterInZone), when it changed. */
  evictionRate: optionalNumber,
});

/** The inputs of a `zoneState` decision (handleDisruption: a zone's state changed). */
export type ZoneStateInputs = z.output<typeof ZoneStateInputsSchema>;

/** The inputs of a zoneState decision as the monitor writes them: the absent ones left out, in this order. */
export function zoneStateInputs(inputs: ZoneStateInputs): Record<string, JsonValue> {
  const { from, to, zoneSize, unhealthyNodes, zoneHealthPercent, evictionRate } = inputs;
  return {
    from,
    to,
    ...(zoneSize !== undefined && { zoneSize }),
    ...(unhealthyNodes !== undefined && { unhealthyNodes }),
    ...(zoneHealthPercent !== undefined && { zoneHealthPercent }),
    ...(evictionRate !== undefined && { evictionRate }),
  };
}

/**
 * A `zoneState` decision read back: its zone (from the subject) and typed inputs; undefined for any other
 * decision. `from` and `to` must be upstream zone states; a gauge or rate that is not a number is absent.
 */
export function readZoneStateDecision(
  d: Pick<DecisionRecord, 'node' | 'what' | 'inputs'>,
): ReadResult<ZoneStateInputs & { readonly zone: string }> | undefined {
  if (d.what !== 'zoneState') return undefined;
  const subject = parseDecisionSubject(d.node);
  if (subject?.kind !== 'zone') {
    return { ok: false, error: `zoneState: subject ${JSON.stringify(d.node)} is not a zone` };
  }
  const inputs = readWith(ZoneStateInputsSchema, d.what, d.inputs ?? {});
  return inputs.ok ? { ok: true, value: { ...inputs.value, zone: subject.zone } } : inputs;
}

/**
 * The pod a decision is about (its `pod` input: pod writes, pod evictions scheduled and cancelled, pods
 * seen marked or deleted by the cluster's controller); undefined when it has none or it is malformed.
 */
export function podOfDecision(d: Pick<DecisionRecord, 'inputs'>): PodRef | undefined {
  const pod = d.inputs?.pod;
  return typeof pod === 'string' ? parsePodRef(pod) : undefined;
}

/**
 * The taint a decision is about (its `taint` input: node-controller taints seen added or removed by the
 * cluster's controller, shared/app/nodeTaints.ts); undefined when it has none or it is malformed.
 */
export function taintOfDecision(d: Pick<DecisionRecord, 'inputs'>): TaintInput | undefined {
  const taint = d.inputs?.taint;
  return typeof taint === 'string' ? parseTaintInput(taint) : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Mass decisions: the same queue decision about many nodes of a zone in one pass

/**
 * Above this many nodes of one zone given the same queue decision in one pass (a zone back from an
 * outage dequeues all of its nodes at once; a zone whose kubelets all post NotReady enqueues them all),
 * the decision is filed under the zone, not under each node: one row per MassDecisionNodesPerRow nodes
 * instead of one row each. 33,333 rows took a pass 21 s of conditional puts at 8 in flight.
 */
export const MassDecisionThreshold = 100;
/**
 * Node names per mass-decision row. The names are stored gzipped (`nodesGzip`): a zone's names share
 * most of their characters (`ip-10-0-1-17.eu-west-1.compute.internal`: 42 bytes, about 3 gzipped), and
 * every byte of a row is a write unit in the zone's one partition (1,000 WCU/s). 1,000 names of the
 * longest (253 characters), incompressible, still fit DynamoDB's 400 KB item in base64.
 */
export const MassDecisionNodesPerRow = 1000;

const MassDecisionInputsSchema = z.object({
  nodesGzip: z.string(),
  count: z.number().int().positive(),
  part: z.number().int().positive(),
  parts: z.number().int().positive(),
});

/**
 * The rows of one mass decision: `names` in parts of MassDecisionNodesPerRow, each row's inputs the
 * shared `inputs` plus `nodesGzip` (its part of the names, one a line, gzipped, in base64), `count`
 * (all of them), `part` and `parts`.
 *
 * @example massDecisionInputs(['a-1', 'a-2'], { zoneState: 'Normal' }) // [{ zoneState: 'Normal', count: 2, part: 1, parts: 1, nodesGzip: 'H4sI…' }]
 */
export function massDecisionInputs(
  names: readonly string[],
  inputs: Readonly<Record<string, JsonValue>> = {},
): Record<string, JsonValue>[] {
  const parts = Math.ceil(names.length / MassDecisionNodesPerRow);
  return Array.from({ length: parts }, (_, i) => ({
    ...inputs,
    count: names.length,
    part: i + 1,
    parts,
    nodesGzip: gzipSync(
      names.slice(i * MassDecisionNodesPerRow, (i + 1) * MassDecisionNodesPerRow).join('\n'),
    ).toString('base64'),
  }));
}

/**
 * The node names of a mass-decision row (its part of them); undefined for a node's own row, a row that
 * is no mass decision, or one whose names do not decode.
 */
export function massDecisionNodes(row: Pick<DecisionRecord, 'node' | 'inputs'>): string[] | undefined {
  if (parseDecisionSubject(row.node)?.kind === 'node') return undefined;
  const parsed = MassDecisionInputsSchema.safeParse(row.inputs ?? {});
  if (!parsed.success) return undefined;
  try {
    return gunzipSync(Buffer.from(parsed.data.nodesGzip, 'base64')).toString('utf8').split('\n');
  } catch {
    return undefined;
  }
}

/**
 * A zone's or the cluster's row as the decision about `node` it stands for, when it is a mass decision
 * naming the node: the row with `node` as its subject and, for inputs, the shared ones plus `filedUnder`
 * (the subject it is stored under) and `count`; undefined for any other row.
 *
 * @example massDecisionAbout(zoneRow, 'a-7')?.inputs // { zoneState: 'Normal', count: 33333, filedUnder: '#zone:eu-west-1:eu-west-1a' }
 */
export function massDecisionAbout<D extends DecisionRecord>(row: D, node: string): D | undefined {
  if (massDecisionNodes(row)?.includes(node) !== true) return undefined;
  const { nodesGzip: _nodes, part: _part, parts: _parts, ...shared } = row.inputs ?? {};
  return { ...row, node, inputs: { ...shared, filedUnder: row.node } };
}
