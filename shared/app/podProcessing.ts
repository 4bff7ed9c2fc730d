// pod-processing: one Pod Changed event → the NodeLifecycleController's pod worker, upstream podUpdated
// + processPod (pkg/controller/nodelifecycle/node_lifecycle_controller.go): a pod newly bound to a node
// whose saved Ready condition is not True is marked Ready=False at once (MarkPodsNotReady), without
// waiting for the monitor to see a transition; in legacy mode (≤ v1.26) processNoTaintBaseEviction runs
// first for that single pod (evictPods: delete it at once on a node already evicted, else queue the node
// in its zone's eviction queue).
//
// What differs from upstream:
// - nodeHealthMap, the node lister and nodeEvictionMap are the pod's node's Nodes item (one strongly
//   consistent read, ControllerStateStore.getNodeHealth). The saved Ready condition may lag the node by up
//   to one monitor period, as upstream's.
// - `now` (legacy timeouts) is the injected clock, compared with health timestamps the monitor stored on
//   the functions' clock (its digests' instants moved by their term's offset): one clock.
// - Pod Changed has no old pod, only `oldNodeName` on a rebind. An update without it cannot be told from
//   a binding (an unbound pod's node is ""), so it is processed: every step is idempotent.
// - Legacy evictPods does not write the `toBeEvicted` status (the monitor's health group): no decision
//   reads it (evictPods only tests `evicted`), and the monitor's next pass sets it from the same saved
//   condition. cancelPodEviction likewise only takes the node out of its zone queue; its `unmarked`
//   status is the monitor's to write (it runs the same cancelPodEviction for a Ready node every pass).
// - The immediate legacy deletion (DeletePods) decides on the pod read again from the API, as upstream
//   reads the informer's copy, so a duplicate event finds it terminating and deletes nothing.
// - upstream AddRateLimited (a failed write, a node missing from the lister) is a thrown RequeueError or
//   ClusterWriteError: Lambda retries the event, then its on-failure destination keeps it.
import { ClusterSource, DeletionByTaintManager, podControllerActions } from '../agreement.js';
import type { ControllerConfig } from '../config.js';
import { formatPodRef } from '../decisionContract.js';
import { driveAsync } from '../domain/effects.js';
import { evictPods, processNoTaintBaseEviction, evictPodsError } from '../domain/legacyEviction.js';
import { runDeletePods } from '../domain/legacyEvictionPass.js';
import { processPod, podUpdated } from '../domain/podStatus.js';
import { add, remove } from '../domain/rateLimitedTimedQueue.js';
import { getNodeCondition, NodeReady, podKey, type Node, type Pod } from '../domain/types.js';
import { formatZoneKey, getZoneKey } from '../domain/zones.js';
import { ClusterWriteError, RequeueError } from '../errors.js';
import type { PodChanged } from '../events.js';
import type { Clock } from '../ports/clock.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { StateStores } from '../ports/stores.js';
import { decisionSeqBase } from './decidedWrite.js';
import { DecidingExecutor } from './decisions.js';

/** The `source` of pod-processing's decisions. */
export const PodProcessingSource = 'pod-processing';

export interface PodProcessingDeps {
  readonly config: Pick<ControllerConfig, 'dryRun' | 'evictionMode' | 'podEvictionTimeout'>;
  readonly stores: Pick<StateStores, 'controllerState' | 'zoneQueues' | 'decisions'>;
  readonly cluster: Pick<ClusterPort, 'execute' | 'listPodsOnNode' | 'getNode'>;
  readonly observer: Observer;
  readonly clock: Clock;
}

export interface InvocationOptions {
  readonly signal?: AbortSignal;
}

export type PodProcessingOutcome =
  /** Not a newly bound pod (podUpdated filter), or processPod dropped it. */
  | {
      readonly kind: 'skipped';
      readonly reason: 'notNewlyBound' | 'noNodeHealth' | 'noReadyCondition' | 'healthBehindNode';
    }
  | {
      readonly kind: 'processed';
      /** The node's saved Ready status the decision used. */
      readonly savedReady: string;
      /** Legacy mode: what processNoTaintBaseEviction led to. */
      readonly legacy?: 'none' | 'cancelPodEviction' | 'enqueued' | 'alreadyQueued' | 'deletedPods';
      /** MarkPodsNotReady wrote (or, in shadow mode, would write) Ready=False on the pod. */
      readonly markedNotReady: boolean;
    };

/**
 * Runs upstream processPod for one Pod Changed event.
 *
 * @example
 * await processPodChange({ config, stores, cluster, observer, clock }, parsePodChanged(detail), { signal });
 */
export async function processPodChange(
  deps: PodProcessingDeps,
  change: PodChanged,
  options: InvocationOptions = {},
): Promise<PodProcessingOutcome> {
  const { config, stores, cluster, observer, clock } = deps;
  const { signal } = options;
  const callOpts = signal === undefined ? {} : { signal };
  const key = podKey(change.pod);
  const item = `pod ${JSON.stringify(key)}`;
  const fields = { cluster: change.cluster, pod: key, node: change.pod.nodeName, type: change.type };
  // In shadow mode, what the cluster's own controller just did to the pod, beside this one's decisions
  // (`nlc agreement`): the counterpart of node-taints' record of its node writes.
  const observed = config.dryRun ? await recordClusterPodActions(deps, change, callOpts) : [];
  const done = (outcome: PodProcessingOutcome): PodProcessingOutcome => {
    observer.info('pod-processing', {
      ...fields,
      dryRun: config.dryRun,
      ...(outcome.kind === 'skipped' ? { skipped: outcome.reason } : outcome),
      ...(observed.length > 0 && { observedClusterActions: observed }),
    });
    return outcome;
  };

  // upstream podUpdated: bound, and new to the controller or moved to another node.
  const newPod = change.type === 'DELETED' ? undefined : change.pod;
  // The relay watches bound pods only, so a newly bound pod arrives as ADDED; a MODIFIED event without
  // `oldNodeName` (tolerations changed, deletion started) is not a new binding.
  const oldPod =
    change.type === 'MODIFIED' ? { nodeName: change.oldNodeName ?? change.pod.nodeName } : undefined;
  if (newPod === undefined || !podUpdated(oldPod, newPod))
    return done({ kind: 'skipped', reason: 'notNewlyBound' });
  const pod = newPod;

  const stored = await stores.controllerState.getNodeHealth(change.cluster, pod.nodeName, callOpts);
  const decision = processPod(pod, stored.health, stored.node !== undefined, config.evictionMode);
  switch (decision.kind) {
    case 'drop':
      // podNotFound cannot happen: the pod is the event's.
      return done({
        kind: 'skipped',
        reason: decision.reason === 'noReadyCondition' ? 'noReadyCondition' : 'noNodeHealth',
      });
    case 'requeue':
      throw new RequeueError(
        item,
        decision.reason,
        `node ${JSON.stringify(pod.nodeName)} is not in the node cache`,
      );
    case 'process':
      break;
  }
  // A saved Ready condition that is not True may lag the node by more than a monitor period: a commit
  // writes health-only changes a few hundred rows at a time (healthWritesPerCommit), so after a zone
  // comes back its rows catch up over several passes. The API decides: a node it shows Ready is not
  // acted on. A failed read leaves the saved condition to decide, as upstream's informer copy would.
  if (decision.savedReady.status !== 'True') {
    const live = await cluster.getNode(pod.nodeName, callOpts);
    if (live.ok && getNodeCondition(live.value.conditions, NodeReady)?.status === 'True')
      return done({ kind: 'skipped', reason: 'healthBehindNode' });
  }

  const now = clock.now();
  const executor = new DecidingExecutor({
    cluster: change.cluster,
    port: cluster,
    decisions: stores.decisions,
    source: PodProcessingSource,
    at: now,
    dryRun: config.dryRun,
    observer,
    seqBase: decisionSeqBase(`pod:${key}`),
    ...(signal !== undefined && { signal }),
    context: () => ({ pod: key, savedReady: decision.savedReady.status }),
  });

  let legacy: Extract<PodProcessingOutcome, { kind: 'processed' }>['legacy'];
  const node = stored.node;
  if (decision.processNoTaintBaseEviction && node !== undefined) {
    legacy = await processNoTaintBaseEvictionForPod(
      deps,
      executor,
      change.cluster,
      node,
      decision.savedReady.status,
      stored,
      pod,
      now,
      options,
    );
  }

  let markedNotReady = false;
  if (decision.markPodsNotReady.length > 0) {
    const result = await executor.execute({
      kind: 'markPodsNotReady',
      node: pod.nodeName,
      pods: decision.markPodsNotReady,
      why: `processPod: pod bound to node ${pod.nodeName}, whose saved Ready condition is ${decision.savedReady.status}`,
    });
    if (!result.ok) throw new ClusterWriteError(pod.nodeName, [result.message]);
    markedNotReady = true;
  }
  return done({
    kind: 'processed',
    savedReady: decision.savedReady.status,
    ...(legacy !== undefined && { legacy }),
    markedNotReady,
  });
}

/**
 * Shadow mode: the cluster's controller's actions on the pod this change shows (podControllerActions),
 * filed under the pod's node as Decisions with source `cluster`. A NotReady mark counts only on a node
 * that was not Ready: as the relay saw it when the pod lost Ready (the event's `nodeReady`), else its
 * stored copy, or, when that still says Ready (node-taints may not have stored the marking yet: the two
 * events are processed apart), the node as the API has it now. Reads for those changes alone.
 */
async function recordClusterPodActions(
  deps: PodProcessingDeps,
  change: PodChanged,
  opts: InvocationOptions,
): Promise<string[]> {
  const { pod } = change;
  if (change.type !== 'MODIFIED' || pod.nodeName === '') return [];
  const readyLost = change.oldReady === 'True' && pod.ready === 'False';
  const stored =
    readyLost && change.nodeReady === undefined
      ? await deps.stores.controllerState.getNodeHealth(change.cluster, pod.nodeName, opts)
      : undefined;
  const storedReady =
    stored?.node === undefined ? undefined : getNodeCondition(stored.node.conditions, NodeReady)?.status;
  // What the relay saw when the pod lost Ready first: this event may be processed after the node is back.
  let nodeReady = change.nodeReady ?? storedReady;
  if (readyLost && nodeReady !== 'False' && nodeReady !== 'Unknown') {
    const live = await deps.cluster.getNode(pod.nodeName, opts);
    if (live.ok) nodeReady = getNodeCondition(live.value.conditions, NodeReady)?.status;
  }
  const actions = podControllerActions(change, nodeReady, deps.clock.now());
  if (actions.length === 0) return [];
  const key = podKey(pod);
  await deps.stores.decisions.append(
    change.cluster,
    actions.map((action, i) => ({
      node: pod.nodeName,
      at: action.at,
      source: ClusterSource,
      what: action.kind,
      why:
        action.kind === 'podNotReady'
          ? `observed: the cluster's own controller marked pod ${key} Ready=False (its node is ${nodeReady ?? '?'})`
          : `observed: the cluster's own taint eviction began deleting pod ${key} (DisruptionTarget ${DeletionByTaintManager})`,
      inputs: { pod: formatPodRef(pod), uid: pod.uid },
      seq: decisionSeqBase(`cluster:${key}@${pod.uid}`) + i,
    })),
    opts,
  );
  return actions.map((a) => a.kind);
}

/** The legacy branch of processPod for the one pod: processNoTaintBaseEviction(node, savedReady, [pod]). */
async function processNoTaintBaseEvictionForPod(
  deps: PodProcessingDeps,
  executor: DecidingExecutor,
  clusterName: string,
  node: Node,
  savedReady: 'True' | 'False' | 'Unknown',
  stored: Awaited<ReturnType<PodProcessingDeps['stores']['controllerState']['getNodeHealth']>>,
  pod: Pod,
  now: number,
  options: InvocationOptions,
): Promise<'none' | 'cancelPodEviction' | 'enqueued' | 'alreadyQueued' | 'deletedPods'> {
  const { config, stores, cluster } = deps;
  const { signal } = options;
  const callOpts = signal === undefined ? {} : { signal };
  const item = `pod ${JSON.stringify(podKey(pod))}`;
  const zone = getZoneKey(node.labels);
  const decision = processNoTaintBaseEviction(node.name, { status: savedReady }, stored.health, now, config);
  switch (decision.kind) {
    case 'none':
      return 'none';
    case 'error':
      throw new RequeueError(item, 'noNodeHealth', decision.message);
    case 'cancelPodEviction': {
      // The queue half of cancelPodEviction (see the header for the status).
      const { result: removed } = await stores.zoneQueues.updateZoneQueue(
        clusterName,
        zone,
        (q) => {
          const r = q === undefined ? undefined : remove(q, node.name);
          return { queue: r?.removed === true ? r.queue : undefined, result: r?.removed === true };
        },
        callOpts,
      );
      if (removed) {
        await executor.record([
          {
            node: node.name,
            what: 'dequeue',
            why: 'processPod: cancelPodEviction, the node is Ready',
            inputs: { zone: formatZoneKey(zone), pod: formatPodRef(pod) },
          },
        ]);
      }
      return 'cancelPodEviction';
    }
    case 'evictPods':
      break;
  }

  const evict = evictPods(stored.evictionStatus ?? 'unmarked');
  if (evict.kind === 'deletePodsNow') {
    // Pods that arrive on a node already evicted go at once, bypassing the rate limiter
    // (docs/upstream.md#quirk-28), decided on the pod as the API has it now.
    const listed = await cluster.listPodsOnNode(node.name, callOpts);
    if (!listed.ok) throw new RequeueError(item, 'listPodsFailed', listed.message);
    const fresh = listed.value.filter((p) => podKey(p) === podKey(pod));
    const outcome = await driveAsync(runDeletePods(fresh, node.name, node.uid), executor.execute);
    if (outcome.error !== undefined)
      throw new ClusterWriteError(node.name, [evictPodsError(node.name, outcome.error)]);
    return 'deletedPods';
  }
  // upstream zonePodEvictor[zone].Add(node.Name, node.UID); a zone the monitor never saw has no queue yet,
  // and the monitor queues the node itself on its next pass.
  const { result: added } = await stores.zoneQueues.updateZoneQueue(
    clusterName,
    zone,
    (q) => {
      const r = q === undefined ? undefined : add(q, node.name, node.uid, now);
      return { queue: r?.added === true ? r.queue : undefined, result: r?.added === true };
    },
    callOpts,
  );
  if (added) {
    await executor.record([
      {
        node: node.name,
        what: 'enqueue',
        why: `processPod: evictPods, Ready has been ${savedReady} for longer than podEvictionTimeout`,
        inputs: { zone: formatZoneKey(zone), pod: formatPodRef(pod) },
      },
    ]);
  }
  return added ? 'enqueued' : 'alreadyQueued';
}
