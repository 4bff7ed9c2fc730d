// What the HTML report of a run draws (`nlc simulate --report`), derived from the run alone: pure, no
// clock, no I/O, so the same run gives the same model and the same bytes.
//
// - A lane per node; beyond 50 nodes, only per node that "did something": the controller wrote to it or
//   its pods, its Ready status was ever other than True, it came or went during the run, or the scenario
//   acted on it. The others are counted per zone: at 5,000 nodes the picture shows the few hundred that
//   matter, not 5,000 green bars.
// - A node lane: its Ready status over time as the API held it (the kubelet's writes too, which are not
//   timeline records), the taints the controller added and removed, marks for its pods' evictions and
//   NotReady writes and for the scenario's actions on it.
// - A zone lane: the zone's state (the monitor's ZoneState records) and its NoExecute limiter's rate.
//   The rate is what handleDisruption swapped the limiter to: the zoneState decisions carry it; leaving
//   master disruption resets every zone's limiter, changed or not, to its state's rate.
// - Every mark explains itself on hover: what happened to that node at that instant (records, Events,
//   the decisions the functions recorded about it). Texts are kept once in a table (`tips`) that marks
//   refer to by index: a zone failure gives hundreds of marks with the same few texts.
import { naturalCompare } from '../../../shared/present/names.js';
import { type ControllerConfig } from '../../../shared/config.js';
import {
  formatPodRef,
  parseDecisionSubject,
  podOfDecision,
  readZoneStateDecision,
} from '../../../shared/decisionContract.js';
import { formatDuration } from '../../../shared/duration.js';
import type { TaintEffect, ZoneState } from '../../../shared/domain/types.js';
import {
  defaultDisruptionQPSFuncs,
  formatZoneKey,
  getZoneKey,
  setLimiterInZone,
} from '../../../shared/domain/zones.js';
import type { DecisionRecord } from '../../../shared/ports/stores.js';
import { nodeLabels } from '../../kubelet/nodeStatus.js';
import type { NodeReadyStatus } from '../observe.js';
import type { Scenario, ScenarioAction } from '../scenario.js';
import type { SummaryRecord, TimelineLine } from '../timeline.js';

// The CLI's one natural order (a-1, a-2, a-10), so the report sorts as `nlc status` and the live view do.
export { naturalCompare };

/** A node's Ready status as the API held it at an instant (seconds since the start). */
export interface ReadyChange {
  readonly t: number;
  readonly node: string;
  readonly ready: NodeReadyStatus;
  /** In a run of several clusters: whose node. */
  readonly cluster?: string;
}

/** A decision the functions recorded, at its instant of virtual time (seconds since the start). */
export interface TimedDecision {
  readonly t: number;
  readonly decision: DecisionRecord;
  /** In a run of several clusters: whose decision. */
  readonly cluster?: string;
}

/** Everything the report is drawn from. */
export interface ReportRun {
  readonly scenario: Pick<Scenario, 'name' | 'duration' | 'nodes' | 'pods' | 'timeline'> & {
    readonly config: Pick<ControllerConfig, 'nodeEvictionRate'> &
      Parameters<typeof defaultDisruptionQPSFuncs>[0];
  };
  readonly lines: readonly TimelineLine[];
  readonly readyChanges: readonly ReadyChange[];
  readonly decisions: readonly TimedDecision[];
}

/** [from, to) in seconds since the start, and what held meanwhile. */
export interface Span<T> {
  readonly from: number;
  readonly to: number;
  readonly value: T;
}

/** A span with its hover text (an index into ReportModel.texts). */
export interface Segment<T> extends Span<T> {
  readonly tip: number;
}

export interface TaintBar extends Span<TaintEffect> {
  readonly key: string;
}

export type MarkKind = 'eviction' | 'podNotReady' | 'action';

export interface Mark {
  readonly t: number;
  readonly kind: MarkKind;
  /** Pods evicted or marked NotReady at that instant; 1 for an action. */
  readonly count: number;
}

/**
 * A node's lane. Its hover texts are made in the page from `notes` (what happened to it, in order;
 * at one instant the scenario's action, then the records, then the decisions): a mark or a bar shows
 * the notes of its instant, the node's name all of them. Kept once per node, not once per mark.
 */
export interface NodeLane {
  readonly node: string;
  readonly zone: string;
  readonly ready: readonly Span<Exclude<NodeReadyStatus, 'Deleted'>>[];
  readonly taints: readonly TaintBar[];
  readonly marks: readonly Mark[];
  /** [t, index into ReportModel.texts], in order. */
  readonly notes: readonly (readonly [number, number])[];
}

export interface ZoneLane {
  /** `region:zone`; `""` for nodes with neither label. */
  readonly zone: string;
  readonly states: readonly Segment<ZoneState>[];
  /** The NoExecute limiter's QPS; absent before the first pass sets it. */
  readonly rates: readonly Segment<number>[];
  readonly nodes: readonly NodeLane[];
  /** Nodes of the zone with no lane (large clusters only): Ready=True throughout, nothing done to them. */
  readonly quiet: number;
}

export interface ReportModel {
  readonly name: string;
  /** Seconds. */
  readonly duration: number;
  readonly zones: readonly ZoneLane[];
  /** The scenario's timeline actions, on a lane of their own, each with its hover text. */
  readonly actions: readonly (Mark & { readonly tip: number })[];
  /** Every hover text and note, each once. */
  readonly texts: readonly string[];
  readonly summary: SummaryRecord | undefined;
  readonly counts: {
    readonly nodes: number;
    readonly lanes: number;
    readonly pods: number;
    readonly evictions: number;
    readonly records: number;
  };
}

// ---------------------------------------------------------------------------------------------------

/** Up to this many nodes, every node gets a lane; beyond, only the nodes that did something. */
export const DrawEveryNodeUpTo = 50;

const time = (t: number): string => formatDuration(t * 1000);
const zoneText = (zone: string): string => (zone === '' ? '""' : zone);

/** Keeps each text once. */
class Texts {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();

  add(text: string): number {
    const known = this.index.get(text);
    if (known !== undefined) return known;
    this.list.push(text);
    this.index.set(text, this.list.length - 1);
    return this.list.length - 1;
  }
}

/** The node names a scenario action targets. */
function actionNodes(action: ScenarioAction): readonly string[] {
  switch (action.kind) {
    case 'stopKubelet':
    case 'startKubelet':
    case 'cordon':
    case 'uncordon':
    case 'deleteNode':
    case 'setCondition':
      return action.nodes;
    case 'addNode':
      return action.nodes.map((n) => n.name);
    case 'addPod':
      return action.pods.map((p) => p.node);
    case 'injectEvent':
      return action.detailType === 'Node Changed' ? [action.node] : [];
    case 'deletePod':
    case 'stopRelay':
    case 'startRelay':
    case 'restartRelay':
    case 'relayClockStep':
    case 'stallWatch':
    case 'restoreApiServer':
      return [];
  }
}

/** A signed duration as the scenario writes it: `+90s`, `-2m`. */
function signed(ms: number): string {
  return ms < 0 ? `-${formatDuration(-ms)}` : `+${formatDuration(ms)}`;
}

/** A list of names, the first 20 of them at most. */
function names(list: readonly string[]): string {
  return list.length <= 20 ? list.join(', ') : `${list.slice(0, 20).join(', ')}, … (${list.length} in all)`;
}

function describeAction(action: ScenarioAction): string {
  switch (action.kind) {
    case 'stopKubelet':
    case 'startKubelet':
    case 'cordon':
    case 'uncordon':
    case 'deleteNode':
      return `${action.kind} ${names(action.nodes)}`;
    case 'setCondition':
      return `setCondition ${action.type}=${action.status}${action.reason === undefined ? '' : ` (${action.reason})`} on ${names(action.nodes)}`;
    case 'addNode':
      return `addNode ${names(action.nodes.map((n) => n.name))}`;
    case 'addPod':
      return `addPod ${names(action.pods.map((p) => `${p.namespace ?? 'default'}/${p.name} on ${p.node}`))}`;
    case 'deletePod':
      return `deletePod ${names(action.pods.map((p) => `${p.namespace}/${p.name}`))}`;
    case 'stopRelay':
    case 'startRelay':
      return action.kind;
    case 'stallWatch':
      return `stallWatch ${action.resource} for ${formatDuration(action.duration)}`;
    case 'restartRelay':
      return `restartRelay (clock ${signed(action.clockSkew)})`;
    case 'relayClockStep':
      return `relayClockStep ${signed(action.step)}`;
    case 'injectEvent':
      return `injectEvent ${action.detailType}${
        action.detailType === 'Node Changed'
          ? ` ${action.node}`
          : action.detailType === 'Pod Changed'
            ? ` ${action.pod.namespace}/${action.pod.name}`
            : ''
      }`;
    case 'restoreApiServer':
      return `restoreApiServer ${formatDuration(action.back)} back`;
  }
}

function describeRecord(line: TimelineLine): string {
  switch (line.kind) {
    case 'NodeCondition':
      return `NodeCondition ${line.type}=${line.status}${line.reason === '' ? '' : ` (${line.reason})`}`;
    case 'TaintAdded':
    case 'TaintRemoved':
      return `${line.kind} ${line.key}:${line.effect}`;
    case 'PodNotReady':
      return `PodNotReady ${line.pod}`;
    case 'PodDeleted':
      return `PodDeleted ${line.pod} (${line.reason})`;
    case 'ZoneState':
      return `ZoneState ${zoneText(line.zone)} ${line.from} → ${line.to}`;
    case 'Event':
      return `Event ${line.type === 'Warning' ? 'Warning ' : ''}${line.reason} ${line.object}: ${line.message}`;
    case 'Summary':
      return 'Summary';
  }
}

function describeDecision(d: DecisionRecord): string {
  const pod = podOfDecision(d);
  const about = pod === undefined ? '' : ` (pod ${formatPodRef(pod)})`;
  const result = d.result === undefined || d.result === 'ok' ? '' : ` [${d.result}]`;
  return `${d.source} · ${d.what}${about}: ${d.why}${result}`;
}

/**
 * The decisions as they ended: a write recorded as `intended` and then with its outcome is listed once,
 * with the outcome (an intention never followed by one stays: the write did not finish).
 */
function settledDecisions(decisions: readonly TimedDecision[]): TimedDecision[] {
  const settled: TimedDecision[] = [];
  const pending = new Map<string, number>();
  for (const timed of decisions) {
    const d = timed.decision;
    const id = JSON.stringify([d.node, timed.t, d.source, d.what, d.why, d.inputs ?? null]);
    const at = pending.get(id);
    if (at !== undefined) {
      settled[at] = timed;
      pending.delete(id);
    } else {
      if (d.result === 'intended') pending.set(id, settled.length);
      settled.push(timed);
    }
  }
  return settled;
}

/** What a node's hover says about an action on many nodes: this node, and how many others. */
function actionOn(action: ScenarioAction, node: string): string {
  const targets = new Set(actionNodes(action));
  if (targets.size <= 3) return describeAction(action);
  return `${action.kind} ${node} (and ${targets.size - 1} other nodes)`;
}

/** At most `limit` lines, then how many were left out. */
function capped(lines: readonly string[], limit: number): string[] {
  return lines.length <= limit ? [...lines] : [...lines.slice(0, limit), `… ${lines.length - limit} more`];
}

function push<K, V>(map: Map<K, V[]>, k: K, v: V): void {
  const list = map.get(k);
  if (list === undefined) map.set(k, [v]);
  else list.push(v);
}

/** Ready segments from a node's changes; zero-length ones (two writes in one instant) are dropped. */
function readySegments(
  changes: readonly ReadyChange[],
  end: number,
): { from: number; to: number; value: Exclude<NodeReadyStatus, 'Deleted'> }[] {
  const segments: { from: number; to: number; value: Exclude<NodeReadyStatus, 'Deleted'> }[] = [];
  let open: { from: number; value: Exclude<NodeReadyStatus, 'Deleted'> } | undefined;
  const close = (t: number): void => {
    if (open !== undefined && t > open.from) segments.push({ ...open, to: t });
    open = undefined;
  };
  for (const change of changes) {
    if (open !== undefined && change.ready === open.value) continue;
    close(change.t);
    if (change.ready !== 'Deleted') open = { from: change.t, value: change.ready };
  }
  close(end);
  // Adjacent segments of one status (a zero-length one dropped in between) become one.
  return segments.reduce<typeof segments>((merged, s) => {
    const last = merged.at(-1);
    if (last !== undefined && last.value === s.value && last.to === s.from) {
      merged[merged.length - 1] = { ...last, to: s.to };
    } else merged.push(s);
    return merged;
  }, []);
}

/**
 * The report's model of a run.
 *
 * @example
 * const model = buildReportModel({ scenario, lines: result.lines, readyChanges, decisions });
 */
export function buildReportModel(run: ReportRun): ReportModel {
  const { scenario, lines } = run;
  const end = scenario.duration / 1000;
  const tips = new Texts();
  const summary = lines.find((l): l is TimelineLine & SummaryRecord => l.kind === 'Summary');
  const records = lines.filter((l) => l.kind !== 'Summary');

  // --- where each node and pod is ---------------------------------------------------------------------
  const zoneOf = new Map<string, string>();
  for (const node of scenario.nodes) zoneOf.set(node.name, formatZoneKey(getZoneKey(nodeLabels(node))));
  const podNode = new Map<string, string>();
  for (const pod of scenario.pods) podNode.set(`${pod.namespace ?? 'default'}/${pod.name}`, pod.node);
  for (const { action } of scenario.timeline) {
    if (action.kind === 'addNode') {
      for (const node of action.nodes) zoneOf.set(node.name, formatZoneKey(getZoneKey(nodeLabels(node))));
    }
    if (action.kind === 'addPod') {
      for (const pod of action.pods) podNode.set(`${pod.namespace ?? 'default'}/${pod.name}`, pod.node);
    }
  }
  for (const node of summary?.nodes ?? []) zoneOf.set(node.node, node.zone);

  // --- what happened to each node, by instant -----------------------------------------------------------
  // Notes per node; at one instant the scenario's action first, then what the controller did, then
  // the decisions that explain it.
  const notes = new Map<string, { t: number; rank: number; text: string }[]>();
  const busy = new Set<string>();
  const recordNodeOf = (line: TimelineLine): string | undefined => {
    switch (line.kind) {
      case 'NodeCondition':
      case 'TaintAdded':
      case 'TaintRemoved':
      case 'PodNotReady':
      case 'PodDeleted':
        return line.node;
      case 'Event': {
        const [kind, ...rest] = line.object.split('/');
        return kind === 'Node' ? rest.join('/') : kind === 'Pod' ? podNode.get(rest.join('/')) : undefined;
      }
      case 'ZoneState':
      case 'Summary':
        return undefined;
    }
  };
  const note = (node: string, t: number, rank: number, text: string): void => {
    push(notes, node, { t, rank, text });
  };
  for (const line of records) {
    const node = recordNodeOf(line);
    if (node === undefined) continue;
    if (line.kind !== 'Event') busy.add(node);
    note(node, line.t, 1, describeRecord(line));
  }
  const actionMarks: (Mark & { tip: number })[] = [];
  const nodeActions = new Map<string, { t: number; text: string }[]>();
  for (const entry of scenario.timeline) {
    const t = entry.at / 1000;
    const text = `scenario: ${describeAction(entry.action)}`;
    actionMarks.push({ t, kind: 'action', count: 1, tip: tips.add(`${time(t)}  ${text}`) });
    for (const node of new Set(actionNodes(entry.action))) {
      busy.add(node);
      push(nodeActions, node, { t, text });
      note(node, t, 0, `scenario: ${actionOn(entry.action, node)}`);
    }
  }
  const decisions = settledDecisions(run.decisions);
  for (const { t, decision } of decisions) {
    const subject = parseDecisionSubject(decision.node);
    if (subject?.kind === 'node') note(subject.name, t, 2, describeDecision(decision));
  }
  const changesOf = new Map<string, ReadyChange[]>();
  for (const change of run.readyChanges) push(changesOf, change.node, change);
  for (const [node, changes] of changesOf) {
    if (!zoneOf.has(node)) zoneOf.set(node, '');
    const arrivedLate = changes[0] !== undefined && changes[0].t > 0;
    if (arrivedLate || changes.some((c) => c.ready !== 'True')) busy.add(node);
  }
  // A small cluster is drawn whole (a lane per node reads at a glance); a large one, only its busy nodes.
  const drawn = zoneOf.size <= DrawEveryNodeUpTo ? new Set([...zoneOf.keys(), ...busy]) : busy;
  const notesOf = (node: string): [number, number][] =>
    [...(notes.get(node) ?? [])]
      .sort((a, b) => a.t - b.t || a.rank - b.rank)
      .map((n): [number, number] => [n.t, tips.add(n.text)]);

  // --- node lanes ------------------------------------------------------------------------------------------
  for (const node of drawn) if (!zoneOf.has(node)) zoneOf.set(node, '');
  const lanesByZone = new Map<string, NodeLane[]>();
  const nodesByZone = new Map<string, number>();
  for (const zone of zoneOf.values()) nodesByZone.set(zone, (nodesByZone.get(zone) ?? 0) + 1);

  const byNode = new Map<string, TimelineLine[]>();
  for (const line of records) {
    const node = recordNodeOf(line);
    if (node !== undefined && line.kind !== 'Event') push(byNode, node, line);
  }
  for (const node of [...drawn].sort(naturalCompare)) {
    const zone = zoneOf.get(node) ?? '';
    const ready = readySegments(changesOf.get(node) ?? [], end);
    const taints: TaintBar[] = [];
    const open = new Map<string, { from: number; key: string; effect: TaintEffect }>();
    const closeTaint = (id: string, to: number): void => {
      const bar = open.get(id);
      open.delete(id);
      if (bar === undefined || to <= bar.from) return;
      taints.push({ from: bar.from, to, key: bar.key, value: bar.effect });
    };
    const evictions = new Map<number, number>();
    const notReady = new Map<number, number>();
    for (const line of byNode.get(node) ?? []) {
      if (line.kind === 'TaintAdded') {
        const id = `${line.key}:${line.effect}`;
        if (!open.has(id)) open.set(id, { from: line.t, key: line.key, effect: line.effect });
      } else if (line.kind === 'TaintRemoved') {
        const id = `${line.key}:${line.effect}`;
        // A taint the controller did not add (the scenario's) is drawn from the start.
        if (!open.has(id)) open.set(id, { from: 0, key: line.key, effect: line.effect });
        closeTaint(id, line.t);
      } else if (line.kind === 'PodDeleted') evictions.set(line.t, (evictions.get(line.t) ?? 0) + 1);
      else if (line.kind === 'PodNotReady') notReady.set(line.t, (notReady.get(line.t) ?? 0) + 1);
    }
    const gone = (changesOf.get(node) ?? []).find((c) => c.ready === 'Deleted')?.t ?? end;
    for (const id of [...open.keys()]) closeTaint(id, gone);
    taints.sort((a, b) => a.from - b.from || naturalCompare(a.key, b.key));
    const marks: Mark[] = [
      ...[...notReady].map(([t, count]) => ({ t, kind: 'podNotReady' as const, count })),
      ...(nodeActions.get(node) ?? []).map(({ t }) => ({ t, kind: 'action' as const, count: 1 })),
      ...[...evictions].map(([t, count]) => ({ t, kind: 'eviction' as const, count })),
    ];
    push(lanesByZone, zone, { node, zone, ready, taints, marks, notes: notesOf(node) });
  }

  // --- zone lanes ------------------------------------------------------------------------------------------
  const zoneChanges = new Map<string, { t: number; to: ZoneState; why: string }[]>();
  for (const line of records) {
    if (line.kind === 'ZoneState')
      push(zoneChanges, line.zone, { t: line.t, to: line.to, why: describeRecord(line) });
  }
  const rateChanges = new Map<string, { t: number; qps: number }[]>();
  const zoneDecisions = new Map<string, string[]>();
  const fullRate = setLimiterInZone(
    0,
    'FullDisruption',
    scenario.config,
    defaultDisruptionQPSFuncs(scenario.config),
  );
  for (const { t, decision } of decisions) {
    const subject = parseDecisionSubject(decision.node);
    if (subject?.kind === 'zone') {
      push(zoneDecisions, `${subject.zone}\u0000${t}`, describeDecision(decision));
      const zoneState = readZoneStateDecision(decision);
      const qps = zoneState?.ok === true ? zoneState.value.evictionRate : undefined;
      if (qps !== undefined) push(rateChanges, subject.zone, { t, qps });
    } else if (subject?.kind === 'cluster') {
      for (const zone of zoneChanges.keys())
        push(zoneDecisions, `${zone}\u0000${t}`, describeDecision(decision));
    }
  }
  // Master disruption (every zone FullDisruption): entering it stops every zone's limiter, also of the
  // zones already Full, which made no zoneState decision; leaving it resets every zone's limiter to its
  // state's rate, and a zone still Full made no zoneState decision either.
  const current = new Map<string, ZoneState>();
  const allFull = (): boolean =>
    current.size > 0 && [...current.values()].every((state) => state === 'FullDisruption');
  const instants = [...new Set(records.filter((l) => l.kind === 'ZoneState').map((l) => l.t))];
  for (const t of instants) {
    const before = allFull();
    for (const line of records) {
      if (line.kind === 'ZoneState' && line.t === t) current.set(line.zone, line.to);
    }
    const after = allFull();
    if (before === after) continue;
    for (const [zone, state] of current) {
      if (after) push(rateChanges, zone, { t, qps: 0 });
      else if (state === 'FullDisruption' && fullRate !== undefined)
        push(rateChanges, zone, { t, qps: fullRate });
    }
  }
  for (const list of rateChanges.values()) list.sort((a, b) => a.t - b.t);
  const zoneTip = (zone: string, t: number, header: string): number =>
    tips.add([header, ...capped(zoneDecisions.get(`${zone}\u0000${t}`) ?? [], 12)].join('\n'));
  const zones = new Set<string>([...nodesByZone.keys(), ...zoneChanges.keys()]);
  const zoneLanes: ZoneLane[] = [...zones].sort(naturalCompare).map((zone) => {
    const changes = zoneChanges.get(zone) ?? [];
    const states = changes
      .map((c, i) => ({ from: c.t, to: changes[i + 1]?.t ?? end, value: c.to }))
      .filter((s) => s.to > s.from)
      .map((s) => ({
        ...s,
        tip: zoneTip(
          zone,
          s.from,
          `zone ${zoneText(zone)}: ${s.value} from ${time(s.from)} to ${time(s.to)}`,
        ),
      }));
    // A swap to the same rate (Normal → FullDisruption keeps it) changes nothing to draw.
    const rateList = (rateChanges.get(zone) ?? []).filter((r, i, all) => all[i - 1]?.qps !== r.qps);
    const rates = rateList
      .map((r, i) => ({ from: r.t, to: rateList[i + 1]?.t ?? end, value: r.qps }))
      .filter((s) => s.to > s.from)
      .map((s) => ({
        ...s,
        tip: zoneTip(
          zone,
          s.from,
          `zone ${zoneText(zone)}: NoExecute limiter ${formatRate(s.value)} from ${time(s.from)} to ${time(s.to)}`,
        ),
      }));
    const nodes = lanesByZone.get(zone) ?? [];
    return { zone, states, rates, nodes, quiet: Math.max(0, (nodesByZone.get(zone) ?? 0) - nodes.length) };
  });

  return {
    name: scenario.name,
    duration: end,
    zones: zoneLanes,
    actions: actionMarks,
    texts: tips.list,
    summary,
    counts: {
      nodes: zoneOf.size,
      lanes: drawn.size,
      pods: podNode.size,
      evictions: records.filter((l) => l.kind === 'PodDeleted').length,
      records: records.length,
    },
  };
}

/** A limiter rate as people read it: `0.1/s`, or `0 (stopped)`. */
export function formatRate(qps: number): string {
  return qps === 0 ? '0 (stopped)' : `${qps}/s`;
}
