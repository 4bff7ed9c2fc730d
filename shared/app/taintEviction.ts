// taint-eviction: the taint eviction controller (pkg/controller/tainteviction/taint_eviction.go) for one
// Node Changed or Pod Changed event. The decisions are the domain's (shared/domain/taintEviction.ts:
// handleNodeUpdate, handlePodUpdate, processPodOnNode); this service reads what they need, applies the
// PodEvictionActions IN ORDER to the PodEvictions table (upstream's TimedWorkerQueue), runs immediate
// deletions (upstream deletePodHandler), and files a decision for every schedule, cancel and delete
// under the pod's node, with the taints and tolerations that made it so. Timers that fire later are the
// drainer's (it reuses `deletePodHandler` below).
//
// What differs from upstream (see docs/functions.md for the whole analysis):
// - Time is the injected clock (the real clock in Lambda): eviction timers are real time, as upstream's
//   time.Now(). Unlike upstream, a restart does not reset countdowns: PodEvictions is durable, so
//   issue #108268 does not apply. Countdowns still start when the controller sees the taint or the pod,
//   never at the taint's timeAdded.
// - upstream taintedNodes is the Nodes table's copy of the node. Before listing a node's pods the
//   service stores the event's node itself (conditional on a newer resourceVersion, so harmless when
//   node-taints got there first): upstream updates taintedNodes before listing for the same reason (a pod
//   bound meanwhile is caught by its own update; TestEventualConsistency). A stale Node Changed (older
//   than the stored copy) is dropped: acting on it could schedule evictions for taints already gone.
// - The relay sends Node Changed without the old node, so upstream's NodeUpdated filter cannot run; every
//   event is processed, which is correct because processPodOnNode keeps an earlier eviction. To stay
//   cheap, a node's pods are listed only when the event's node has NoExecute taints or a PodEvictions
//   entry exists for the node (otherwise handleNodeUpdate could only cancel nothing).
// - A pod that is already terminating is not deleted again at once (upstream re-issues the DELETE, which
//   changes nothing, and records another "Marking for deletion" Event). With the fresh read below this
//   makes a duplicate event act once.
// - Pod Changed carries the pod as it was; upstream reads the informer's copy when it processes the item.
//   Before an immediate deletion the pod is read again from the API (its node's pod list), so a stale or
//   duplicate event cannot delete twice.
// - In legacy mode (upstream ≤ v1.26 with --enable-taint-manager=false) the controller does not run: both
//   handlers return at once.
// - DaemonSet pods get no special case: the DaemonSet controller gives them NoExecute tolerations for
//   not-ready and unreachable without tolerationSeconds, so they are tolerated forever, as upstream.
// - After 5 failed deletion attempts the entry is completed and the failure logged, as upstream (no
//   requeue): the next event for the node or pod decides again. Other failures (a store, a pod list)
//   throw, so Lambda retries the event; every action is idempotent (add skips a present key, cancel of
//   nothing does nothing).
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { ControllerConfig } from '../config.js';
import { cancelPodDeletionEvent, taintManagerEvictionEvent } from '../domain/kubeEvents.js';
import {
  deletePodRetries,
  deletePodRetryInterval,
  handleNodeUpdate,
  handlePodUpdate,
  podUpdated,
  type PodEvictionAction,
  type ScheduledEvictionLookup,
  nodeUpdatedNeedsProcessing,
} from '../domain/taintEviction.js';
import { getNoExecuteTaints } from '../domain/taints.js';
import { getMatchingTolerations, getMinTolerationTime, toleratesTaint } from '../domain/tolerations.js';
import {
  parsePodKey,
  podKey,
  type EpochMillis,
  type Millis,
  type Node,
  type Pod,
  type PodKey,
  type Taint,
  type Toleration,
} from '../domain/types.js';
import { RequeueError } from '../errors.js';
import type { NodeChanged, PodChanged } from '../events.js';
import { formatWireTime } from '../wireFormat.js';
import type { Clock } from '../ports/clock.js';
import type { ClusterPort, TaintEvictionDeleteResult } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { JsonValue, PodEviction, StateStores } from '../ports/stores.js';
import { DecidingExecutor } from './decisions.js';
import { decidedWrite, decisionSeqBase, type DecisionDraft } from './decidedWrite.js';
import { recordNodeChange } from './nodeChanges.js';

/** The `source` of the taint eviction controller's decisions. */
export const TaintEvictionSource = 'taint-eviction';

/** Waits `ms` (upstream time.Sleep); rejects when `signal` aborts. */
export type Sleep = (ms: Millis, signal?: AbortSignal) => Promise<void>;

const realSleep: Sleep = async (ms, signal) => {
  await sleepFor(ms, undefined, signal === undefined ? {} : { signal });
};

export interface TaintEvictionDeps {
  /** Legacy mode is upstream's --enable-taint-manager=false: the taint eviction controller does not run. */
  readonly config: Pick<ControllerConfig, 'dryRun' | 'evictionMode'>;
  readonly stores: Pick<StateStores, 'nodes' | 'podEvictions' | 'decisions'>;
  readonly cluster: Pick<ClusterPort, 'execute' | 'listPodsOnNode' | 'deletePodForTaintEviction'>;
  readonly observer: Observer;
  /** `now` of every decision: real time in Lambda (upstream time.Now()). */
  readonly clock: Clock;
  /** Between deletion attempts (10 ms); tests pass one that does not wait. */
  readonly sleep?: Sleep;
}

export interface InvocationOptions {
  readonly signal?: AbortSignal;
}

/** What one invocation did to the PodEvictions table and the cluster, by pod key. */
export interface EvictionSummary {
  readonly scheduled: PodKey[];
  readonly cancelled: PodKey[];
  /** Deleted at once (or, in shadow mode, would have been). */
  readonly deleted: PodKey[];
  /** Immediate deletions that failed every attempt (left for the next event, as upstream). */
  readonly failed: PodKey[];
}

export type TaintEvictionOutcome =
  | {
      readonly kind: 'skipped';
      readonly reason:
        | 'taintManagerDisabled'
        | 'stale'
        | 'nodeDeleted'
        | 'nothingToEvict'
        | 'filtered'
        | 'notBound'
        | 'nodeNotTainted'
        | 'noExecuteTaintsUnchanged';
    }
  | { readonly kind: 'processed'; readonly summary: EvictionSummary };

// ---------------------------------------------------------------------------------------------------
// Why: the taints and tolerations behind a pod's decision, for the Decisions trail.

function describeTaint(t: Taint): string {
  return `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;
}

function describeToleration(t: Toleration): string {
  const operator = t.operator || 'Equal';
  const match =
    operator === 'Exists'
      ? ' Exists'
      : operator === 'Equal'
        ? `=${t.value ?? ''}`
        : ` ${operator} ${t.value ?? ''}`;
  const seconds = t.tolerationSeconds === undefined ? 'forever' : `${t.tolerationSeconds}s`;
  return `${t.key || '*'}${match}:${t.effect || '*'} for ${seconds}`;
}

interface PodReasoning {
  readonly why: string;
  readonly inputs: Record<string, JsonValue>;
}

/** processPodOnNode's reasoning for a pod, in words and inputs (getMatchingTolerations, first match). */
function reasonAbout(
  key: PodKey,
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
): PodReasoning {
  const matches = taints.map((taint) => {
    const used = tolerations.find((t) => toleratesTaint(t, taint));
    return `${describeTaint(taint)} <- ${used === undefined ? 'not tolerated' : describeToleration(used)}`;
  });
  const inputs = { pod: key, taints: taints.map(describeTaint), tolerations: matches };
  if (taints.length === 0) return { why: 'the node has no NoExecute taints', inputs };
  const { allTolerated, used } = getMatchingTolerations(taints, tolerations);
  if (!allTolerated) return { why: 'a NoExecute taint is not tolerated: delete now', inputs };
  const min = getMinTolerationTime(used);
  if (min < 0) return { why: 'every NoExecute taint is tolerated forever', inputs };
  return {
    why: `every NoExecute taint is tolerated; the shortest tolerationSeconds is ${min / 1000}s`,
    inputs,
  };
}

// ---------------------------------------------------------------------------------------------------
// deletePodHandler (shared with the drainer, which fires the timers)

export interface PodDeletionDeps {
  readonly cluster: Pick<ClusterPort, 'execute' | 'deletePodForTaintEviction'>;
  readonly observer: Observer;
  readonly dryRun: boolean;
  readonly sleep?: Sleep;
}

/** One due deletion: the pod, the node it is filed under, and why. */
export interface PodDeletion {
  readonly key: PodKey;
  /** The pod decided about: a pod of another UID under the same name is left alone. */
  readonly uid?: string;
  readonly nodeName: string;
  readonly why: string;
  readonly inputs?: Record<string, JsonValue>;
}

/**
 * Upstream deletePodHandler: records "Marking for deletion Pod ns/name" (Normal TaintManagerEviction),
 * then up to 5 attempts of addConditionAndDeletePod (DisruptionTarget condition, then DELETE), 10 ms
 * apart; counts taint_eviction_controller_pod_deletions_total on success. A pod already gone counts as
 * done, without the metric. Files the decision (intended, then the outcome) through `executor`. Returns
 * the last attempt's result, or undefined in shadow mode. The caller completes the PodEvictions entry
 * afterwards, whatever the result: upstream does not requeue a failed deletion.
 *
 * @example
 * const result = await deletePodHandler(deps, executor, { key: 'default/web-1', nodeName, why }, { signal });
 * await stores.podEvictions.complete(cluster, 'default/web-1', eviction.token, { signal });
 */
export async function deletePodHandler(
  deps: PodDeletionDeps,
  executor: DecidingExecutor,
  deletion: PodDeletion,
  options: InvocationOptions = {},
): Promise<TaintEvictionDeleteResult | undefined> {
  const { cluster, observer, dryRun } = deps;
  const sleep = deps.sleep ?? realSleep;
  const { signal } = options;
  const callOpts = signal === undefined ? {} : { signal };
  const ref = parsePodKey(deletion.key);
  const decision: DecisionDraft = {
    node: deletion.nodeName,
    what: 'deletePodForTaintEviction',
    why: deletion.why,
    inputs: { pod: deletion.key, ...deletion.inputs },
  };
  let attempts = 0;
  const result = await decidedWrite(
    executor,
    dryRun,
    decision,
    async () => {
      // Upstream emits the Event when the work fires, before the first attempt (best effort).
      await executor.execute({ kind: 'recordEvent', event: taintManagerEvictionEvent(ref) });
      for (;;) {
        attempts++;
        const attempt = await cluster.deletePodForTaintEviction(ref.namespace, ref.name, {
          ...callOpts,
          ...(deletion.uid !== undefined && { uid: deletion.uid }),
        });
        if (attempt.ok || attempts >= deletePodRetries) return attempt;
        await sleep(deletePodRetryInterval, signal);
      }
    },
    (r) =>
      r.ok
        ? r.podWasGone
          ? 'ok (pod already gone)'
          : 'ok'
        : `${r.reason}: ${r.message} (${attempts} attempt${attempts === 1 ? '' : 's'})`,
  );
  if (result?.ok === true && !result.podWasGone) {
    observer.metric('taint_eviction_controller_pod_deletions_total', 'Count', 1);
  }
  if (result?.ok === false) {
    observer.error('taint eviction: deleting the pod failed; left for the next event', {
      pod: deletion.key,
      node: deletion.nodeName,
      attempts,
      error: result.message,
    });
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------
// Applying the actions

interface ApplyContext {
  readonly deps: TaintEvictionDeps;
  readonly cluster: string;
  readonly executor: DecidingExecutor;
  readonly now: EpochMillis;
  readonly signal: AbortSignal | undefined;
  /** The NoExecute taints decided on. */
  readonly taints: readonly Taint[];
  /** The pods decided on, by key (fresh from the API wherever an immediate deletion can follow). */
  readonly pods: ReadonlyMap<PodKey, Pod>;
  /** Why a cancel happened when the pod is not in `pods` (it was deleted). */
  readonly goneWhy: string;
  /** The UID of the pod the event was about, for a key not in `pods` (a deleted pod). */
  readonly eventUid?: { readonly key: PodKey; readonly uid: string };
  /** Entries of earlier pods under the names decided about (another UID): see staleIncarnations. */
  readonly staleEntries: ReadonlyMap<PodKey, PodEviction>;
}

const isImmediate = (a: Extract<PodEvictionAction, { kind: 'schedule' }>): boolean => a.fireAt <= a.createdAt;

async function applyActions(
  ctx: ApplyContext,
  actions: readonly PodEvictionAction[],
): Promise<EvictionSummary> {
  const { deps, cluster, executor, now, signal } = ctx;
  const { podEvictions } = deps.stores;
  const callOpts = signal === undefined ? {} : { signal };
  const summary: EvictionSummary = { scheduled: [], cancelled: [], deleted: [], failed: [] };
  const reasoning = (key: PodKey): PodReasoning => {
    const pod = ctx.pods.get(key);
    return pod === undefined
      ? { why: ctx.goneWhy, inputs: { pod: key } }
      : reasonAbout(key, ctx.taints, pod.tolerations);
  };

  const uidOf = (key: PodKey): string | undefined =>
    ctx.pods.get(key)?.uid ?? (ctx.eventUid?.key === key ? ctx.eventUid.uid : undefined);

  for (const action of actions) {
    if (action.kind === 'cancel') {
      // upstream cancelWorkWithEvent, for the pod decided about only: an entry of a pod re-created
      // under the name stays.
      const uid = uidOf(action.key);
      const { cancelled, removed } = await podEvictions.cancel(cluster, action.key, {
        ...callOpts,
        ...(uid !== undefined && { uid }),
      });
      if (removed === undefined) continue; // nothing was scheduled: no decision, no Event
      const { why, inputs } = reasoning(action.key);
      await executor.record([
        {
          node: removed.nodeName,
          what: 'cancelPodEviction',
          why: `cancelWorkWithEvent: ${why}`,
          inputs: {
            ...inputs,
            createdAt: formatWireTime(removed.createdAt),
            fireAt: formatWireTime(removed.fireAt),
          },
          result: cancelled ? 'cancelled' : 'removed a running deletion',
        },
      ]);
      summary.cancelled.push(action.key);
      if (cancelled) {
        await executor.execute({
          kind: 'recordEvent',
          event: cancelPodDeletionEvent(parsePodKey(action.key)),
        });
      }
      continue;
    }

    const pod = ctx.pods.get(action.key);
    if (isImmediate(action) && pod?.deletionTimestamp !== undefined) {
      deps.observer.debug('taint eviction: pod already terminating, not deleted again', { pod: action.key });
      continue;
    }
    // An entry left by an earlier pod of the same name (deleted and re-created, its events late): it
    // is not this pod's eviction, and AddWork would skip this pod for it. Remove it first.
    const stale = ctx.staleEntries.get(action.key);
    if (stale !== undefined && stale.uid !== undefined) {
      const { cancelled, removed } = await podEvictions.cancel(cluster, action.key, {
        ...callOpts,
        uid: stale.uid,
      });
      if (removed !== undefined) {
        await executor.record([
          {
            node: removed.nodeName,
            what: 'cancelPodEviction',
            why: `cancelWorkWithEvent: the eviction was decided for another pod of that name (uid ${stale.uid}), deleted since`,
            inputs: {
              pod: action.key,
              uid: stale.uid,
              ...(action.uid !== undefined && { newUid: action.uid }),
            },
            result: cancelled ? 'cancelled' : 'removed a running deletion',
          },
        ]);
        // What upstream records when it processes that pod's deletion, which arrived late or not at all.
        if (cancelled) {
          await executor.execute({
            kind: 'recordEvent',
            event: cancelPodDeletionEvent(parsePodKey(action.key)),
          });
        }
      }
    }
    // upstream AddWork
    const added = await podEvictions.add(
      cluster,
      {
        key: action.key,
        ...(action.uid !== undefined && { uid: action.uid }),
        nodeName: action.nodeName,
        createdAt: action.createdAt,
        fireAt: action.fireAt,
        now,
      },
      callOpts,
    );
    const { why, inputs } = reasoning(action.key);
    switch (added.kind) {
      case 'skipped':
        // "Trying to add already existing work, skipping"
        deps.observer.debug('taint eviction: eviction already present, skipping', { pod: action.key });
        break;
      case 'scheduled':
        await executor.record([
          {
            node: action.nodeName,
            what: 'schedulePodEviction',
            why: `processPodOnNode: ${why}`,
            inputs: {
              ...inputs,
              createdAt: formatWireTime(action.createdAt),
              fireAt: formatWireTime(action.fireAt),
            },
            result: `fires at ${formatWireTime(added.eviction.firesAt)}`,
          },
        ]);
        summary.scheduled.push(action.key);
        break;
      case 'firing': {
        const result = await deletePodHandler(
          {
            cluster: deps.cluster,
            observer: deps.observer,
            dryRun: deps.config.dryRun,
            ...(deps.sleep !== undefined && { sleep: deps.sleep }),
          },
          executor,
          {
            key: action.key,
            ...(action.uid !== undefined && { uid: action.uid }),
            nodeName: action.nodeName,
            why: `processPodOnNode: ${why}`,
            inputs,
          },
          { ...(signal !== undefined && { signal }) },
        );
        await podEvictions.complete(cluster, action.key, added.eviction.token, callOpts);
        if (result === undefined || result.ok) summary.deleted.push(action.key);
        else summary.failed.push(action.key);
        break;
      }
    }
  }
  return summary;
}

/** One executor per event; `identity` names the event (see decisionSeqBase). */
function newExecutor(
  deps: TaintEvictionDeps,
  cluster: string,
  now: EpochMillis,
  identity: string,
  signal?: AbortSignal,
): DecidingExecutor {
  return new DecidingExecutor({
    cluster,
    port: deps.cluster,
    decisions: deps.stores.decisions,
    source: TaintEvictionSource,
    at: now,
    dryRun: deps.config.dryRun,
    observer: deps.observer,
    seqBase: decisionSeqBase(identity),
    ...(signal !== undefined && { signal }),
  });
}

function podsByKey(pods: readonly Pod[]): Map<PodKey, Pod> {
  return new Map(pods.map((p) => [podKey(p), p]));
}

/**
 * upstream GetWorkerUnsafe over entries read before any action: timer-backed entries only, and only the
 * decided-about pod's own (an entry of an earlier pod of the same name is not its countdown).
 */
function lookupIn(
  entries: ReadonlyMap<PodKey, PodEviction>,
  pods: ReadonlyMap<PodKey, Pod>,
): ScheduledEvictionLookup {
  const stale = staleIncarnations(entries, pods);
  return (key) => {
    const entry = entries.get(key);
    if (entry === undefined || stale.has(key)) return undefined;
    return entry.timerBacked ? { createdAt: entry.createdAt, fireAt: entry.fireAt } : undefined;
  };
}

/** Entries whose pod UID is not the UID of the pod now known under that name. */
function staleIncarnations(
  entries: ReadonlyMap<PodKey, PodEviction>,
  pods: ReadonlyMap<PodKey, Pod>,
): Map<PodKey, PodEviction> {
  const stale = new Map<PodKey, PodEviction>();
  for (const [key, pod] of pods) {
    const entry = entries.get(key);
    if (entry?.uid !== undefined && entry.uid !== pod.uid) stale.set(key, entry);
  }
  return stale;
}

function report(
  deps: TaintEvictionDeps,
  fields: Record<string, unknown>,
  outcome: TaintEvictionOutcome,
): TaintEvictionOutcome {
  deps.observer.info('taint eviction', {
    ...fields,
    dryRun: deps.config.dryRun,
    ...(outcome.kind === 'skipped' ? { skipped: outcome.reason } : outcome.summary),
  });
  return outcome;
}

// ---------------------------------------------------------------------------------------------------
// The two handlers

/**
 * Upstream NodeUpdated + handleNodeUpdate for one Node Changed event.
 *
 * @example
 * await handleNodeChanged({ config, stores, cluster, observer, clock }, parseNodeChanged(detail), { signal });
 */
export async function handleNodeChanged(
  deps: TaintEvictionDeps,
  change: NodeChanged,
  options: InvocationOptions = {},
): Promise<TaintEvictionOutcome> {
  const { stores, cluster } = deps;
  const { signal } = options;
  const callOpts = signal === undefined ? {} : { signal };
  const nodeName = change.node.name;
  const fields = { cluster: change.cluster, node: nodeName, type: change.type, event: 'Node Changed' };
  if (deps.config.evictionMode === 'legacy') {
    return report(deps, fields, { kind: 'skipped', reason: 'taintManagerDisabled' });
  }

  // Node gone: upstream drops its taintedNodes entry (node-taints tombstones our copy) and, quirk
  // §4.2.20, does NOT cancel the scheduled evictions of its pods.
  if (change.type === 'DELETED') return report(deps, fields, { kind: 'skipped', reason: 'nodeDeleted' });

  // upstream NodeUpdated: an update that leaves the NoExecute taints as they were is ignored.
  if (
    change.type === 'MODIFIED' &&
    change.oldNoExecuteTaints !== undefined &&
    !nodeUpdatedNeedsProcessing({ ...change.node, taints: change.oldNoExecuteTaints }, change.node)
  ) {
    return report(deps, fields, { kind: 'skipped', reason: 'noExecuteTaintsUnchanged' });
  }
  const pending = await stores.podEvictions.list(change.cluster, callOpts);
  const mayAct = (candidate: Node): boolean =>
    getNoExecuteTaints(candidate.taints).length > 0 || pending.some((e) => e.nodeName === nodeName);
  if (!mayAct(change.node)) {
    // handleNodeUpdate could only cancel evictions, and none is scheduled for this node.
    return report(deps, fields, { kind: 'skipped', reason: 'nothingToEvict' });
  }
  // Our taintedNodes entry first (see the header). An event older than the stored copy still says
  // that the NoExecute taints changed (the filter above): a newer event may have been filtered out for
  // carrying the same taints as this one (it arrived first: delivery is unordered). Upstream's worker
  // reads the node from its lister when it processes the update, so decide on the newest copy.
  let node = change.node;
  if ((await recordNodeChange(stores.nodes, change, callOpts)) === 'stale') {
    const newest = await stores.nodes.getNode(change.cluster, nodeName, callOpts);
    if (newest === undefined) return report(deps, fields, { kind: 'skipped', reason: 'nodeDeleted' });
    if (!mayAct(newest)) return report(deps, fields, { kind: 'skipped', reason: 'stale' });
    node = newest;
  }
  const taints = getNoExecuteTaints(node.taints);
  const listed = await cluster.listPodsOnNode(nodeName, callOpts);
  if (!listed.ok)
    throw new RequeueError(`node ${JSON.stringify(nodeName)}`, 'listPodsFailed', listed.message);

  const now = deps.clock.now();
  const entries = new Map(pending.map((e) => [e.key, e]));
  const pods = podsByKey(listed.value);
  const outcome = handleNodeUpdate(nodeName, node, listed.value, lookupIn(entries, pods), now);
  const summary = await applyActions(
    {
      deps,
      cluster: change.cluster,
      executor: newExecutor(
        deps,
        change.cluster,
        now,
        `node:${nodeName}@${node.resourceVersion ?? ''}`,
        signal,
      ),
      now,
      signal,
      taints,
      pods,
      goneWhy: 'the pod is no longer on the node',
      // The pods are the API's own list: an entry under one of their names with another UID is an
      // earlier pod's.
      staleEntries: staleIncarnations(entries, pods),
    },
    outcome.actions,
  );
  return report(deps, { ...fields, pods: listed.value.length }, { kind: 'processed', summary });
}

/**
 * Upstream PodUpdated + handlePodUpdate for one Pod Changed event.
 *
 * @example
 * await handlePodChanged({ config, stores, cluster, observer, clock }, parsePodChanged(detail), { signal });
 */
export async function handlePodChanged(
  deps: TaintEvictionDeps,
  change: PodChanged,
  options: InvocationOptions = {},
): Promise<TaintEvictionOutcome> {
  const { stores, cluster } = deps;
  const { signal } = options;
  const callOpts = signal === undefined ? {} : { signal };
  const key = podKey(change.pod);
  const fields = {
    cluster: change.cluster,
    pod: key,
    node: change.pod.nodeName,
    type: change.type,
    event: 'Pod Changed',
  };

  if (deps.config.evictionMode === 'legacy') {
    return report(deps, fields, { kind: 'skipped', reason: 'taintManagerDisabled' });
  }

  // upstream PodUpdated's filter, with the old data the event carries: the previous node on a rebind.
  // Without it (an add, or an update the relay sent for another reason) the event is processed.
  const newPod = change.type === 'DELETED' ? undefined : change.pod;
  const oldPod =
    change.type === 'DELETED'
      ? change.pod
      : change.oldNodeName === undefined && change.oldTolerations === undefined
        ? undefined
        : {
            ...change.pod,
            nodeName: change.oldNodeName ?? change.pod.nodeName,
            tolerations: change.oldTolerations ?? [],
          };
  const item = podUpdated(oldPod, newPod);
  if (item === undefined) return report(deps, fields, { kind: 'skipped', reason: 'filtered' });

  const now = deps.clock.now();
  const apply = (
    actions: readonly PodEvictionAction[],
    pods: readonly Pod[],
    taints: readonly Taint[],
    staleEntries: ReadonlyMap<PodKey, PodEviction> = new Map(),
  ): Promise<EvictionSummary> =>
    applyActions(
      {
        deps,
        cluster: change.cluster,
        executor: newExecutor(deps, change.cluster, now, `pod:${key}#${change.type}`, signal),
        now,
        signal,
        taints,
        pods: podsByKey(pods),
        goneWhy: 'handlePodUpdate: the pod was deleted',
        eventUid: { key, uid: change.pod.uid },
        staleEntries,
      },
      actions,
    );

  if (newPod === undefined) {
    // Deleted: upstream's lister says NotFound, so the pod's eviction is cancelled.
    const actions = handlePodUpdate(item, undefined, undefined, () => undefined, now);
    return report(deps, fields, { kind: 'processed', summary: await apply(actions, [], []) });
  }
  if (newPod.nodeName === '') return report(deps, fields, { kind: 'skipped', reason: 'notBound' });

  // upstream taintedNodes[nodeName]
  const node = await stores.nodes.getNode(change.cluster, newPod.nodeName, callOpts);
  const taints = node === undefined ? [] : getNoExecuteTaints(node.taints);
  if (taints.length === 0) return report(deps, fields, { kind: 'skipped', reason: 'nodeNotTainted' });

  const existing = await stores.podEvictions.get(change.cluster, key, callOpts);
  const entries = new Map(existing === undefined ? [] : [[key, existing]]);
  let pod: Pod | undefined = newPod;
  const otherIncarnation = existing?.uid !== undefined && existing.uid !== newPod.uid;
  const decide = (): PodEvictionAction[] =>
    handlePodUpdate(item, pod, taints, lookupIn(entries, podsByKey(pod === undefined ? [] : [pod])), now);
  let actions = decide();
  if (otherIncarnation || actions.some((a) => a.kind === 'schedule' && isImmediate(a))) {
    // Decide again on the pod as the API has it now (upstream's lister read): before an immediate
    // deletion, and when an eviction exists for another pod of this name (the API tells which of the
    // two is the pod that lives now: an event about the other one is older than what we know).
    const listed = await cluster.listPodsOnNode(newPod.nodeName, callOpts);
    if (!listed.ok) throw new RequeueError(`pod ${JSON.stringify(key)}`, 'listPodsFailed', listed.message);
    pod = listed.value.find((p) => podKey(p) === key);
    if (otherIncarnation && pod?.uid !== newPod.uid) {
      return report(deps, fields, { kind: 'skipped', reason: 'stale' });
    }
    actions = decide();
  }
  const current = pod === undefined ? [] : [pod];
  const summary = await apply(actions, current, taints, staleIncarnations(entries, podsByKey(current)));
  return report(deps, fields, { kind: 'processed', summary });
}
