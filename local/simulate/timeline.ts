// What `nlc simulate` prints (docs/simulate.md "Output", a public interface): one record per thing the
// controller did, in time order, each with `t` (seconds since the scenario's start) and `time` (ISO
// 8601), and a Summary last. `--json` writes them as JSON Lines with the fields in the order below:
// `t`, `time`, `kind`, then the kind's fields (documented in docs/simulate.md).
//
// Order within one instant: the order the simulator observed the records in. Everything but ZoneState
// and Summary comes from the API simulator, in the order the writes were committed (resourceVersion
// order); a ZoneState line comes when the monitor pass that decided it recorded it, which is after that
// pass's writes (upstream's handleDisruption runs last in monitorNodeHealth). The simulation is
// sequential and deterministic, so the same scenario gives the same lines, byte for byte.
import type { ConditionStatus, TaintEffect, ZoneState } from '../../shared/domain/types.js';

export interface NodeConditionRecord {
  readonly kind: 'NodeCondition';
  readonly node: string;
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
}

export interface TaintRecord {
  readonly kind: 'TaintAdded' | 'TaintRemoved';
  readonly node: string;
  readonly key: string;
  readonly effect: TaintEffect;
}

export interface PodNotReadyRecord {
  readonly kind: 'PodNotReady';
  /** `namespace/name`. */
  readonly pod: string;
  readonly node: string;
}

export interface PodDeletedRecord {
  readonly kind: 'PodDeleted';
  readonly pod: string;
  readonly node: string;
  /** `TaintManagerEviction` (taint mode) or `NodeLost` (legacy mode). */
  readonly reason: string;
}

export interface ZoneStateRecord {
  readonly kind: 'ZoneState';
  /** `region:zone`; `""` for nodes with neither label. */
  readonly zone: string;
  readonly from: ZoneState;
  readonly to: ZoneState;
}

export interface EventRecord {
  readonly kind: 'Event';
  readonly reason: string;
  /** `Node/a-1`, `Pod/default/web-1`. */
  readonly object: string;
  readonly message: string;
  /** Normal or Warning (added after the first version of the format). */
  readonly type: string;
}

export interface SummaryZone {
  readonly zone: string;
  readonly state: ZoneState;
  /** Nodes counted in the zone's health (excluded nodes are not). */
  readonly size: number;
  readonly unhealthy: number;
}

export interface SummaryNode {
  readonly node: string;
  readonly zone: string;
  /** The node's Ready status; `""` when it has no Ready condition. */
  readonly ready: ConditionStatus | '';
  readonly taints: readonly { readonly key: string; readonly effect: TaintEffect }[];
}

export interface SummaryRecord {
  readonly kind: 'Summary';
  readonly zones: readonly SummaryZone[];
  readonly nodes: readonly SummaryNode[];
  /** Pods the controller deleted (PodDeleted lines). */
  readonly evictions: number;
  /**
   * With `--chaos` only: delivery attempts (copies and retries), failed attempts, and deliveries given
   * up on after Lambda's retries (the dead-letter queue).
   */
  readonly deliveries?: {
    readonly deliveries: number;
    readonly failures: number;
    readonly deadLettered: number;
  };
  /**
   * With `managedController` only: the shadow's decisions matched with the managed controller's actions
   * (shared/agreement.ts): how many, how many agreed, and the median and largest lag of the pairs.
   */
  readonly agreement?: {
    readonly decisions: number;
    readonly agreed: number;
    readonly disagreed: number;
    readonly medianLagMs: number;
    readonly maxLagMs: number;
  };
}

export type TimelineRecord =
  | NodeConditionRecord
  | TaintRecord
  | PodNotReadyRecord
  | PodDeletedRecord
  | ZoneStateRecord
  | EventRecord
  | SummaryRecord;

export type TimelineKind = TimelineRecord['kind'];

/**
 * One output line: when, then what; in a run of several clusters (docs/simulate.md, "Several
 * clusters"), `cluster` says whose, right after `kind`.
 */
export type TimelineLine = {
  readonly t: number;
  readonly time: string;
  readonly cluster?: string;
} & TimelineRecord;

/** A line with `t`, `time` and `kind` first (JSON keeps insertion order), then `cluster` when given. */
export function timelineLine(
  start: number,
  now: number,
  record: TimelineRecord,
  cluster?: string,
): TimelineLine {
  const t = (now - start) / 1000;
  const time = new Date(now).toISOString();
  if (cluster === undefined) return { t, time, ...record };
  // `kind` first, then `cluster`: assigning the record's fields keeps the place `kind` took first.
  return Object.assign({ t, time, kind: record.kind, cluster }, record);
}

/** The `--json` output: one JSON object per line. */
export function toJsonLines(lines: readonly TimelineLine[]): string {
  return lines.map((line) => `${JSON.stringify(line)}\n`).join('');
}

/**
 * What a record says, in the words of the human timeline and the HTML report's hover texts: the
 * condition, taint, reason or Event message (empty for the Summary).
 *
 * @example recordDetail({ kind: 'TaintAdded', key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', … })
 * // 'node.kubernetes.io/unreachable:NoExecute'
 */
export function recordDetail(line: TimelineRecord): string {
  switch (line.kind) {
    case 'NodeCondition':
      return `${line.type}=${line.status}${line.reason === '' ? '' : ` (${line.reason})`}`;
    case 'TaintAdded':
    case 'TaintRemoved':
      return `${line.key}:${line.effect}`;
    case 'PodNotReady':
      return `Ready=False on node ${line.node}`;
    case 'PodDeleted':
      return `${line.reason} (node ${line.node})`;
    case 'ZoneState':
      return `${line.from} → ${line.to}`;
    case 'Event':
      return `${line.type === 'Warning' ? 'Warning ' : ''}${line.reason}: ${line.message}`;
    case 'Summary':
      return '';
  }
}
