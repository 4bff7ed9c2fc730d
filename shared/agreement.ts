// Shadow agreement: does this controller, run in shadow mode (dryRun) beside a cluster's own
// NodeLifecycleController, decide what that controller does, when it does it? Our side is the Decisions
// trail (what a dry run would have written, and when); theirs is what the cluster shows that other
// writer did (Ready=Unknown marks, node-controller taints added and removed, pods marked NotReady, pods
// deleted by taint eviction). Each action is matched per kind, subject and detail, in time order; a
// pair within the tolerance agrees, with its lag (ours minus theirs).
//
// Pure: the simulator (local/simulate), `nlc agreement` and the HTML report all call it.
import {
  formatPodRef,
  formatTaintInput,
  parseTaintInput,
  podOfDecision,
  readWriteDecision,
  taintOfDecision,
} from './decisionContract.js';
import { NodeStatusUnknownReason } from './domain/nodeHealth.js';
import { TaintNodeNotReady, TaintNodeUnreachable } from './domain/taints.js';
import {
  getNodeCondition,
  NodeReady,
  podKey,
  type EpochMillis,
  type Millis,
  type Node,
  type Pod,
} from './domain/types.js';
import { upstreamBehaviour } from './domain/upstreamVersion.js';
import type { PodChanged } from './events.js';
import type { DecisionRecord, NodeControllerSeen } from './ports/stores.js';

/** The kinds of action compared, as upstream's controllers take them. */
export const AgreementKinds = [
  'markUnknown',
  'taintAdded',
  'taintRemoved',
  'podNotReady',
  'podDeleted',
] as const;
export type AgreementKind = (typeof AgreementKinds)[number];

/** One action: who it concerns (a node, or `namespace/name`), its detail (a taint `key:effect`), when. */
export interface ControllerAction {
  readonly kind: AgreementKind;
  readonly subject: string;
  readonly detail: string;
  readonly at: EpochMillis;
  /** The node it concerns (the node itself, or the pod's), when known: "a node we never saw". */
  readonly node?: string;
}

export interface AgreementRow {
  readonly kind: AgreementKind;
  readonly subject: string;
  readonly detail: string;
  /** The node it concerns, when not the subject itself (a pod's node). */
  readonly node?: string;
  /** When this controller decided it (shadow), and when the cluster's own controller did it. */
  readonly ours?: EpochMillis;
  readonly theirs?: EpochMillis;
  /** ours − theirs, when both happened. */
  readonly lagMs?: Millis;
  readonly agreed: boolean;
  /** Why they disagree, as far as the two sides can tell. */
  readonly why?: string;
}

export interface AgreementTotals {
  readonly decisions: number;
  readonly agreed: number;
  readonly disagreed: number;
}

export interface AgreementReport {
  readonly rows: readonly AgreementRow[];
  readonly byKind: Readonly<Record<AgreementKind, AgreementTotals>>;
  readonly decisions: number;
  readonly agreed: number;
  readonly disagreed: number;
  /** Over the pairs (both sides acted): the median and largest |lag|; 0 without pairs. */
  readonly medianLagMs: Millis;
  readonly maxLagMs: Millis;
  /** The pairs with the largest |lag|, largest first (at most five). */
  readonly worst: readonly AgreementRow[];
}

/** The upstream minors of the two controllers, as far as they are known. */
export interface AgreementVersions {
  /** The minor this controller emulates (its emulationVersion). */
  readonly ours: number;
  /** The minor the cluster runs (its API's /version): the cluster's controller's. */
  readonly theirs: number;
  /**
   * This controller's nodeMonitorGracePeriod, when the cluster's is unknown (a managed control plane
   * does not show its controller's flags): compared with the default of the cluster's minor.
   */
  readonly ourGracePeriodMs?: Millis;
}

export interface AgreementOptions {
  /** Largest |lag| that still agrees: a monitor period by default (two controllers' passes need not align). */
  readonly toleranceMs: Millis;
  /** Where the two settings differ, in words ("nodeMonitorGracePeriod 40s here, 50s there"): the why of a lag. */
  readonly settingsDiffer?: readonly string[];
  /** Both minors, when known: a disagreement the versions account for says which change. */
  readonly versions?: AgreementVersions;
  /** Nodes this controller has no trace of (no health row, no decision of its own). */
  readonly nodesNeverSeen?: ReadonlySet<string>;
}

/**
 * The actions one write decision stands for, as the cluster shows them, whatever came of it: a Ready
 * condition written Unknown, taints added and removed, pods marked NotReady, a pod deleted. Reads, queue
 * bookkeeping and a write whose inputs this version cannot read (readWriteDecision) stand for none.
 *
 * @example
 * actionsOfWrite(decision); // [{ kind: 'taintAdded', subject: 'a-1', detail: '…unreachable:NoExecute', at }]
 */
export function actionsOfWrite(d: DecisionRecord): ControllerAction[] {
  const write = readWriteDecision(d);
  if (write?.ok !== true) return [];
  const at = d.at;
  const onNode = (kind: AgreementKind, subject: string, detail = ''): ControllerAction => ({
    kind,
    subject,
    detail,
    at,
    node: d.node,
  });
  const { value } = write;
  switch (value.what) {
    case 'updateNodeStatus':
      return value.inputs.conditions.some((c) => c.type === NodeReady && c.status === 'Unknown')
        ? [onNode('markUnknown', d.node)]
        : [];
    case 'swapNodeTaints':
      return [
        ...value.inputs.add.map((taint) => onNode('taintAdded', d.node, formatTaintInput(taint))),
        ...value.inputs.remove.map((taint) => onNode('taintRemoved', d.node, formatTaintInput(taint))),
      ];
    case 'markPodsNotReady':
      return value.inputs.pods.map((pod) => onNode('podNotReady', formatPodRef(pod)));
    case 'deletePodForTaintEviction':
    case 'deletePod':
      return [onNode('podDeleted', formatPodRef(value.inputs.pod))];
    case 'setPodTerminationReason':
      return [];
  }
}

/**
 * The actions a shadow run's Decisions stand for: each dry-run write (`result: 'dryRun'`), as the
 * cluster would have shown it. Intended-only rows, reads and queue bookkeeping are not actions.
 *
 * @example
 * actionsFromDecisions(decisions); // [{ kind: 'markUnknown', subject: 'a-1', detail: '', at }, …]
 */
export function actionsFromDecisions(decisions: readonly DecisionRecord[]): ControllerAction[] {
  return decisions.flatMap((d) => (d.result === 'dryRun' ? actionsOfWrite(d) : []));
}

/** The `source` of the cluster's own controller's actions, as the functions record them in shadow mode. */
export const ClusterSource = 'cluster';

const nodeControllerTaintKeys: ReadonlySet<string> = new Set([TaintNodeNotReady, TaintNodeUnreachable]);

/**
 * What a node shows of the node controller's writes: its Ready condition (status and reason) and the
 * node-controller taints (not-ready, unreachable), with the node's uid and resourceVersion. node-taints
 * stores the last one it saw of each node (NodeStore.putNodeControllerSeen) and diffs the next against
 * it: a copy of its own, because the node copy itself is also advanced by other writers (taint eviction's
 * and the monitor's API reads), which would leave nothing to diff.
 */
export function nodeControllerView(node: Node): NodeControllerSeen {
  const ready = getNodeCondition(node.conditions, NodeReady);
  return {
    uid: node.uid,
    ...(node.resourceVersion !== undefined && { resourceVersion: node.resourceVersion }),
    ...(ready !== undefined && { ready: ready.status }),
    ...(ready?.reason !== undefined && { reason: ready.reason }),
    taints: node.taints
      .filter((t) => nodeControllerTaintKeys.has(t.key))
      .map(formatTaintInput)
      .sort(),
  };
}

/**
 * What the cluster's node controller did to a node between two views of it: Ready marked Unknown with
 * its reason (NodeStatusUnknown), node-controller taints (not-ready, unreachable) added and removed.
 * Without an earlier view of the same node (uid) nothing is known to have changed.
 *
 * @example
 * nodeControllerActions(nodeControllerView(stored), nodeControllerView(next), 'a-1', now); // [{ kind: 'markUnknown', subject: 'a-1', detail: '', at: now }]
 */
export function nodeControllerActions(
  previous: NodeControllerSeen | undefined,
  next: NodeControllerSeen,
  subject: string,
  at: EpochMillis,
): ControllerAction[] {
  if (previous === undefined || previous.uid !== next.uid) return [];
  const actions: ControllerAction[] = [];
  if (next.ready === 'Unknown' && next.reason === NodeStatusUnknownReason && previous.ready !== 'Unknown')
    actions.push({ kind: 'markUnknown', subject, detail: '', at });
  const before = new Set(previous.taints);
  const after = new Set(next.taints);
  for (const taint of [...after].sort())
    if (!before.has(taint)) actions.push({ kind: 'taintAdded', subject, detail: taint, at });
  for (const taint of [...before].sort())
    if (!after.has(taint)) actions.push({ kind: 'taintRemoved', subject, detail: taint, at });
  return actions;
}

/** The DisruptionTarget reason upstream's taint eviction writes before it deletes a pod. */
export const DeletionByTaintManager = 'DeletionByTaintManager';

/**
 * What the cluster's controllers did to a pod, as one Pod Changed shows it (the event carries the old
 * Ready status and deletionTimestamp): marked NotReady on a node whose saved Ready is not True
 * (MarkPodsNotReady), or its deletion begun with DisruptionTarget DeletionByTaintManager (taint
 * eviction; before v1.26 nothing tells those deletions from others, so none is recorded).
 *
 * @example
 * podControllerActions(change, 'Unknown', now); // [{ kind: 'podNotReady', subject: 'default/web-1', detail: '', at: now }]
 */
export function podControllerActions(
  change: Pick<PodChanged, 'type' | 'pod' | 'oldReady' | 'oldDeletionTimestamp'>,
  nodeReady: string | undefined,
  at: EpochMillis,
): ControllerAction[] {
  if (change.type !== 'MODIFIED') return [];
  const { pod } = change;
  const subject = podKey(pod);
  const actions: ControllerAction[] = [];
  if (change.oldReady === 'True' && pod.ready === 'False' && nodeReady !== undefined && nodeReady !== 'True')
    actions.push({ kind: 'podNotReady', subject, detail: '', at });
  if (
    change.oldDeletionTimestamp === undefined &&
    pod.deletionTimestamp !== undefined &&
    pod.disruptionTarget === DeletionByTaintManager
  )
    actions.push({ kind: 'podDeleted', subject, detail: '', at });
  return actions;
}

/**
 * Shadow mode (not upstream): a pod the other controller's taint eviction is deleting (terminating, with
 * DisruptionTarget DeletionByTaintManager) as this controller would see it had that not happened — not
 * terminating — so the shadow still decides the deletion it would have made. Any other pod as it is.
 *
 * @example
 * asIfNotEvictedByAnother(terminatingByTheCluster).deletionTimestamp; // undefined
 */
export function asIfNotEvictedByAnother<P extends Pick<Pod, 'deletionTimestamp' | 'disruptionTarget'>>(
  pod: P,
): P {
  if (pod.deletionTimestamp === undefined || pod.disruptionTarget !== DeletionByTaintManager) return pod;
  const { deletionTimestamp: _deleting, ...rest } = pod;
  return rest as P;
}

/**
 * How long a redelivered Pod Changed may come after the first delivery: Lambda's retries end at the
 * functions' maximumEventAge (10 minutes). Node actions need no window: they carry the node's
 * resourceVersion, and one version's action recorded twice is one.
 */
const PodRedeliveryWindowMs = 15 * 60_000;

/**
 * The cluster's actions the functions recorded (source `cluster`, `what` the action's kind). A pod
 * action recorded again for the same pod (uid) within the redelivery window is the same event
 * delivered twice, and one action; so is a node action recorded again for the same node version.
 */
export function actionsFromClusterDecisions(decisions: readonly DecisionRecord[]): ControllerAction[] {
  const kinds: ReadonlySet<string> = new Set(AgreementKinds);
  const lastPodAction = new Map<string, EpochMillis>();
  const seenNodeVersions = new Set<string>();
  return [...decisions]
    .sort((a, b) => a.at - b.at)
    .flatMap((d): ControllerAction[] => {
      if (d.source !== ClusterSource || !kinds.has(d.what)) return [];
      const taint = taintOfDecision(d);
      const pod = podOfDecision(d);
      const detail = taint === undefined ? '' : formatTaintInput(taint);
      const subject = pod === undefined ? d.node : formatPodRef(pod);
      // One node version's change, recorded again by a retried invocation (node-taints records before it
      // moves its view: nodeTaints.ts), is one action.
      if (pod === undefined && typeof d.inputs?.resourceVersion === 'string') {
        const identity = `${d.what}\u0000${d.node}\u0000${detail}\u0000${d.inputs.resourceVersion}`;
        if (seenNodeVersions.has(identity)) return [];
        seenNodeVersions.add(identity);
      }
      if (typeof d.inputs?.uid === 'string') {
        const identity = `${d.what}\u0000${d.inputs.uid}`;
        const previous = lastPodAction.get(identity);
        lastPodAction.set(identity, d.at);
        if (previous !== undefined && d.at - previous <= PodRedeliveryWindowMs) return [];
      }
      return [{ kind: d.what as AgreementKind, subject, detail, at: d.at, node: d.node }];
    });
}

const keyOf = (a: Pick<ControllerAction, 'kind' | 'subject' | 'detail'>): string =>
  `${a.kind}\u0000${a.subject}\u0000${a.detail}`;

/**
 * A dry run decides the same write again on every pass until the cluster shows it (nothing it decided
 * was written): actions of one key that follow each other within `window` are that one decision.
 */
function withoutRepeats(actions: readonly ControllerAction[], window: Millis): ControllerAction[] {
  const last = new Map<string, EpochMillis>();
  const kept: ControllerAction[] = [];
  for (const action of [...actions].sort((a, b) => a.at - b.at)) {
    const key = keyOf(action);
    const previous = last.get(key);
    last.set(key, action.at);
    // A pod is deleted once: a shadow that decides it again (the pod still terminating, the cluster's
    // deletion set aside: asIfNotEvictedByAnother) repeats that one decision.
    const repeatWindow = action.kind === 'podDeleted' ? Infinity : window;
    if (previous === undefined || action.at - previous > repeatWindow) kept.push(action);
  }
  return kept;
}

function seconds(ms: Millis): string {
  return `${Math.round(ms / 100) / 10}s`;
}

/** A minor as operators read it. */
const v = (minor: number): string => `v1.${minor}`;

/** The kinds whose instants follow a node's grace period: a different one shifts them all. */
const graceTimedKinds: ReadonlySet<AgreementKind> = new Set([
  'markUnknown',
  'taintAdded',
  'podNotReady',
  'podDeleted',
]);

/**
 * The upstream changes between the two minors that account for this row, in words; none when the
 * versions do not explain it. Each names its PR (docs/upstream.md, "Versions"). Only changes whose
 * effect the row shows for certain: the v1.37 Lease read delays a mark only when the lease cache is
 * behind, and Lt/Gt tolerations matter only to pods that have them, so those two are left to the
 * version difference itself.
 */
function versionReasons(row: Omit<AgreementRow, 'agreed' | 'why'>, versions: AgreementVersions): string[] {
  const { ours, theirs } = versions;
  const reasons: string[] = [];
  // One side before `minor`, the other from it.
  const across = (minor: number): boolean =>
    Math.min(ours, theirs) < minor && minor <= Math.max(ours, theirs);
  const lag = row.lagMs;
  // Whether the side at or past `minor` acted later than the other.
  const newerLater = (minor: number): boolean | undefined =>
    lag === undefined || lag === 0 ? undefined : lag > 0 === ours >= minor;
  if (
    row.kind === 'taintAdded' &&
    parseTaintInput(row.detail)?.effect === 'NoExecute' &&
    across(34) &&
    newerLater(34) === false
  )
    reasons.push(
      'from v1.34 the NoExecute taint comes in the pass that marks the node, before v1.34 one monitor period later (PR #120816)',
    );
  if (row.kind === 'podDeleted' && row.theirs === undefined && theirs < 26)
    reasons.push(
      `${v(theirs)} writes no DisruptionTarget condition (from v1.26, PR #110959), so its taint evictions cannot be told from other deletions and none is recorded`,
    );
  const grace = versions.ourGracePeriodMs;
  if (grace !== undefined && lag !== undefined && graceTimedKinds.has(row.kind)) {
    const theirDefault = upstreamBehaviour(`1.${theirs}`).defaultNodeMonitorGracePeriod;
    if (grace !== theirDefault && lag > 0 === grace > theirDefault)
      reasons.push(
        `this controller's nodeMonitorGracePeriod is ${seconds(grace)}, ${v(theirs)}'s default ${seconds(theirDefault)} (50s from v1.32, PR #126287; a control plane may set its own)`,
      );
  }
  return reasons;
}

function explain(row: Omit<AgreementRow, 'agreed' | 'why'>, options: AgreementOptions): string | undefined {
  const lag = row.lagMs ?? 0;
  if (row.ours !== undefined && row.theirs !== undefined && Math.abs(lag) <= options.toleranceMs)
    return undefined;
  const node = row.node ?? row.subject;
  // Nothing to decide on: neither the versions nor the settings are the why.
  if (row.ours === undefined && options.nodesNeverSeen?.has(node) === true)
    return `the cluster's controller did it; this controller never saw node ${node} (no health row, no decision of its own)`;
  const base =
    row.ours === undefined
      ? "the cluster's controller did it; this one did not decide it"
      : row.theirs === undefined
        ? "this controller decided it; the cluster's did not do it"
        : `${seconds(Math.abs(lag))} ${lag > 0 ? 'later' : 'earlier'} than the cluster's controller`;
  const notes: string[] = [];
  const { versions } = options;
  if (versions !== undefined) {
    const reasons = versionReasons(row, versions);
    if (versions.ours !== versions.theirs)
      notes.push(
        `a version difference (this controller emulates 1.${versions.ours}, the cluster runs ${v(versions.theirs)})${reasons.length > 0 ? `: ${reasons.join('; ')}` : ''}`,
      );
    else notes.push(...reasons);
  }
  if (options.settingsDiffer !== undefined && options.settingsDiffer.length > 0)
    notes.push(`the settings differ: ${options.settingsDiffer.join(', ')}`);
  return [base, ...notes].join('; ');
}

/**
 * Matches our actions with theirs: per kind, subject and detail, the n-th of ours with the n-th of
 * theirs (a taint added, removed and added again is three actions). Rows come in time order. Our
 * removal of a taint the cluster's controller had not added is left out (a swap removes "if present"),
 * and our repeats of one decision within two tolerances are one (a dry run decides again every pass).
 *
 * @example
 * const report = matchActions(actionsFromDecisions(trail), observed, { toleranceMs: 5_000 });
 * report.agreed / report.decisions; // 1 when both controllers did the same within a period
 */
export function matchActions(
  ours: readonly ControllerAction[],
  theirs: readonly ControllerAction[],
  options: AgreementOptions,
): AgreementReport {
  const byTime = (a: ControllerAction, b: ControllerAction): number => a.at - b.at;
  const group = (actions: readonly ControllerAction[]): Map<string, ControllerAction[]> => {
    const groups = new Map<string, ControllerAction[]>();
    for (const action of [...actions].sort(byTime)) {
      const key = keyOf(action);
      const list = groups.get(key);
      if (list === undefined) groups.set(key, [action]);
      else list.push(action);
    }
    return groups;
  };
  // Upstream swaps and lifts taints "if present": a removal of a taint the cluster's controller never
  // added (by then) changes nothing the cluster can show, so it is no decision to compare.
  const addedBy = (subject: string, detail: string, until: EpochMillis): boolean =>
    theirs.some(
      (t) => t.kind === 'taintAdded' && t.subject === subject && t.detail === detail && t.at <= until,
    );
  const mine = group(
    withoutRepeats(
      ours.filter(
        (a) => a.kind !== 'taintRemoved' || addedBy(a.subject, a.detail, a.at + options.toleranceMs),
      ),
      2 * options.toleranceMs,
    ),
  );
  const other = group(theirs);
  const rows: AgreementRow[] = [];
  for (const key of new Set([...mine.keys(), ...other.keys()])) {
    const a = mine.get(key) ?? [];
    const b = other.get(key) ?? [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const o = a[i];
      const t = b[i];
      const first = (o ?? t) as ControllerAction;
      const base = {
        kind: first.kind,
        subject: first.subject,
        detail: first.detail,
        ...(first.node !== undefined && first.node !== first.subject && { node: first.node }),
        ...(o !== undefined && { ours: o.at }),
        ...(t !== undefined && { theirs: t.at }),
        ...(o !== undefined && t !== undefined && { lagMs: o.at - t.at }),
      };
      const why = explain(base, options);
      rows.push({ ...base, agreed: why === undefined, ...(why !== undefined && { why }) });
    }
  }
  rows.sort(
    (x, y) =>
      Math.min(x.ours ?? Infinity, x.theirs ?? Infinity) -
        Math.min(y.ours ?? Infinity, y.theirs ?? Infinity) || keyOf(x).localeCompare(keyOf(y)),
  );
  const byKind = Object.fromEntries(
    AgreementKinds.map((kind) => {
      const of = rows.filter((r) => r.kind === kind);
      const agreed = of.filter((r) => r.agreed).length;
      return [kind, { decisions: of.length, agreed, disagreed: of.length - agreed }];
    }),
  ) as Record<AgreementKind, AgreementTotals>;
  const pairs = rows.filter((r) => r.lagMs !== undefined);
  const lags = pairs.map((r) => Math.abs(r.lagMs ?? 0)).sort((x, y) => x - y);
  const median =
    lags.length === 0
      ? 0
      : lags.length % 2 === 1
        ? (lags[(lags.length - 1) / 2] ?? 0)
        : ((lags[lags.length / 2 - 1] ?? 0) + (lags[lags.length / 2] ?? 0)) / 2;
  const agreed = rows.filter((r) => r.agreed).length;
  return {
    rows,
    byKind,
    decisions: rows.length,
    agreed,
    disagreed: rows.length - agreed,
    medianLagMs: median,
    maxLagMs: lags.at(-1) ?? 0,
    worst: [...pairs].sort((x, y) => Math.abs(y.lagMs ?? 0) - Math.abs(x.lagMs ?? 0)).slice(0, 5),
  };
}
