// taint-eviction: the taint eviction controller (pkg/controller/tainteviction/taint_eviction.go) for one
// Node Changed or Pod Changed event. The decisions are the domain's (shared/domain/taintEviction.ts:
// handleNodeUpdate, handlePodUpdate, processPodOnNode); this service reads what they need, applies the
// PodEvictionActions IN ORDER to the PodEvictions table (upstream's TimedWorkerQueue; evictionActions.ts),
// runs immediate deletions (upstream deletePodHandler; podDeletion.ts), and files a decision for every
// schedule, cancel and delete under the pod's node, with the taints and tolerations that made it so.
// Timers that fire later are the drainer's. This file is the two event handlers: what each reads and
// when it stops early.
//
// What differs from upstream (see docs/functions.md for the whole analysis):
// - Time is the injected clock (the real clock in Lambda): eviction timers are real time, as upstream's
//   time.Now(). Unlike upstream, a restart does not reset countdowns: PodEvictions is durable, so
//   issue #108268 does not apply. Countdowns still start when the controller sees the taint or the pod,
//   never at the taint's timeAdded.
// - upstream taintedNodes is the Nodes table's copy of the node. An event is a hint, never the truth
//   (docs/architecture.md#events-are-hints): when it may call for an eviction, the node is read from the
//   API and every decision is made on that copy, as upstream's worker reads its lister when it processes
//   an item; so a forged, stale or reordered event deletes nothing the API's node does not call for.
//   Before listing a node's pods the service stores the API's copy (conditional on a newer
//   resourceVersion): upstream updates taintedNodes before listing for the same reason (a pod bound
//   meanwhile is caught by its own update; TestEventualConsistency).
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
import { upstreamBehaviour } from '../domain/upstreamVersion.js';
import type { ControllerConfig } from '../config.js';
import {
  handleNodeUpdate,
  handlePodUpdate,
  podUpdated,
  type PodEvictionAction,
  nodeUpdatedNeedsProcessing,
} from '../domain/taintEviction.js';
import { getNoExecuteTaints } from '../domain/taints.js';
import { podKey, type EpochMillis, type Node, type Pod, type PodKey, type Taint } from '../domain/types.js';
import { RequeueError } from '../errors.js';
import type { NodeChanged, PodChanged } from '../events.js';
import type { Clock } from '../ports/clock.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { PodEviction, StateStores } from '../ports/stores.js';
import { DecidingExecutor } from './decisions.js';
import { decisionSeqBase } from './decidedWrite.js';
import {
  applyActions,
  type EvictionSummary,
  isImmediate,
  lookupIn,
  podsByKey,
  staleIncarnations,
} from './evictionActions.js';
import type { InvocationOptions, Sleep } from './podDeletion.js';

/** The `source` of the taint eviction controller's decisions. */
export const TaintEvictionSource = 'taint-eviction';

export interface TaintEvictionDeps {
  /** Legacy mode is upstream's --enable-taint-manager=false: the taint eviction controller does not run. */
  readonly config: Pick<ControllerConfig, 'dryRun' | 'evictionMode' | 'emulationVersion'>;
  readonly stores: Pick<StateStores, 'nodes' | 'podEvictions' | 'decisions'>;
  readonly cluster: Pick<ClusterPort, 'execute' | 'listPodsOnNode' | 'deletePodForTaintEviction'>;
  readonly observer: Observer;
  /** `now` of every decision: real time in Lambda (upstream time.Now()). */
  readonly clock: Clock;
  /** Between deletion attempts (10 ms); tests pass one that does not wait. */
  readonly sleep?: Sleep;
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

/**
 * The node as the API has it now (a quorum read); undefined when it no longer exists. A failed read
 * throws RequeueError, so Lambda retries the event: nothing is decided on a copy the API did not vouch for.
 */
async function readLiveNode(
  deps: TaintEvictionDeps,
  name: string,
  opts: { readonly signal?: AbortSignal },
): Promise<Node | undefined> {
  const read = await deps.cluster.execute({ kind: 'getNode', node: name }, opts);
  if (read.ok) return read.value;
  if (read.reason === 'NotFound') return undefined;
  throw new RequeueError(`node ${JSON.stringify(name)}`, 'readFailed', read.message);
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

  // Node gone: upstream drops its taintedNodes entry (node-taints tombstones our copy) and
  // (docs/upstream.md#quirk-20) does NOT cancel the scheduled evictions of its pods.
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
    // handleNodeUpdate could only cancel evictions, and none is scheduled for this node. (An event that
    // hides a taint hides it only until the monitor finds the node copy out of step with the relay's.)
    return report(deps, fields, { kind: 'skipped', reason: 'nothingToEvict' });
  }
  // The event is a hint (docs/architecture.md#events-are-hints): what to evict is decided on the node as
  // the API has it now, as upstream's worker reads its lister when it processes the update. A forged or
  // stale event with a NoExecute taint deletes nothing the API's node does not call for.
  const node = await readLiveNode(deps, nodeName, callOpts);
  if (node === undefined) return report(deps, fields, { kind: 'skipped', reason: 'nodeDeleted' });
  // Our taintedNodes entry first (see the header), from the API's copy (newer resourceVersion wins).
  await stores.nodes.putNode(change.cluster, node, callOpts);
  if (!mayAct(node)) return report(deps, fields, { kind: 'skipped', reason: 'stale' });
  const taints = getNoExecuteTaints(node.taints);
  const listed = await cluster.listPodsOnNode(nodeName, callOpts);
  if (!listed.ok)
    throw new RequeueError(`node ${JSON.stringify(nodeName)}`, 'listPodsFailed', listed.message);

  const now = deps.clock.now();
  const entries = new Map(pending.map((e) => [e.key, e]));
  const pods = podsByKey(listed.value);
  const outcome = handleNodeUpdate(
    nodeName,
    node,
    listed.value,
    lookupIn(entries, pods),
    now,
    upstreamBehaviour(deps.config.emulationVersion),
  );
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

  // upstream taintedNodes[nodeName]: the node cache says whether the node is tainted at all (most pods'
  // nodes are not: one read); when it is, the taints decided on are the API's own (an event is a hint,
  // and the cache may lag: docs/architecture.md#events-are-hints).
  const cached = await stores.nodes.getNode(change.cluster, newPod.nodeName, callOpts);
  if (cached === undefined || getNoExecuteTaints(cached.taints).length === 0) {
    return report(deps, fields, { kind: 'skipped', reason: 'nodeNotTainted' });
  }
  const node = await readLiveNode(deps, newPod.nodeName, callOpts);
  const taints = node === undefined ? [] : getNoExecuteTaints(node.taints);
  if (taints.length === 0) return report(deps, fields, { kind: 'skipped', reason: 'nodeNotTainted' });

  const existing = await stores.podEvictions.get(change.cluster, key, callOpts);
  const entries = new Map(existing === undefined ? [] : [[key, existing]]);
  let pod: Pod | undefined = newPod;
  const otherIncarnation = existing?.uid !== undefined && existing.uid !== newPod.uid;
  const decide = (): PodEvictionAction[] =>
    handlePodUpdate(
      item,
      pod,
      taints,
      lookupIn(entries, podsByKey(pod === undefined ? [] : [pod])),
      now,
      upstreamBehaviour(deps.config.emulationVersion),
    );
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
