// The taint eviction controller's fired timers, as one drainer run fires them (drainer.ts runDrainer):
// each due PodEvictions entry is decided again on the node and the pod as the API has them now
// (decideFiredEviction: a timer is a hint, docs/architecture.md#events-are-hints), and only a deletion
// that decision still calls for runs upstream's deletePodHandler (podDeletion.ts); then the entry is
// completed. A timer whose taint is gone (the Node Changed that would have cancelled it was lost) is
// cancelled with upstream's "Cancelling deletion" Event; one whose pod is gone, terminating or moved is
// dropped without an Event.
import { asIfNotEvictedByAnother } from '../agreement.js';
import { upstreamBehaviour } from '../domain/upstreamVersion.js';
import type { ControllerConfig } from '../config.js';
import { formatTaintInput } from '../decisionContract.js';
import { cancelPodDeletionEvent } from '../domain/kubeEvents.js';
import { decideFiredEviction, type FiredEvictionDecision } from '../domain/taintEviction.js';
import { parsePodKey, podKey, type EpochMillis, type Node, type Pod } from '../domain/types.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { JsonValue, PodEviction, StateStores } from '../ports/stores.js';
import type { DecidingExecutor } from './decisions.js';
import { deletePodHandler, type PodDeletionDeps, type Sleep } from './podDeletion.js';

/** Pod deletions one run starts at most; the rest wait for the next run (they stay due). */
export const DefaultMaxPodDeletionsPerRun = 500;

/** What firing the timers needs of the drainer's dependencies (DrainerDeps provides it). */
export interface FiredPodEvictionsDeps {
  readonly config: Pick<ControllerConfig, 'cluster' | 'dryRun' | 'emulationVersion'>;
  readonly stores: Pick<StateStores, 'podEvictions'>;
  readonly cluster: PodDeletionDeps['cluster'] & Pick<ClusterPort, 'listPodsOnNode'>;
  readonly observer: Observer;
  readonly signal?: AbortSignal;
  readonly sleep?: Sleep;
  readonly maxPodDeletionsPerRun?: number;
}

export interface PodDeletionResult {
  /** Pods deleted (not counting pods that were already gone). */
  readonly deleted: number;
  readonly alreadyGone: number;
  /** Deletions that failed every attempt (the entry is completed anyway, as upstream). */
  readonly failed: number;
  /**
   * Due entries another drainer started first, or replaced meanwhile, or whose node or pods could not be
   * read (they stay due for the next run).
   */
  readonly skipped: number;
  /** dryRun: recorded, timer consumed, pod left alone. */
  readonly shadowed: number;
  /** Timers the API's node and pod no longer call for: cancelled, dropped or moved later. */
  readonly revoked: number;
}

/** The node and its pods as the API has them, read once per node per run. */
interface LiveNode {
  readonly node: Node | undefined;
  readonly pods: readonly Pod[];
}

/**
 * The taint eviction controller's fired timers: upstream's TimedWorker callback deletePodHandler
 * (podDeletion.ts), run for each due PodEvictions entry that the API's node and pod still call for and
 * whose timer this run starts (startFiring is conditional on the entry's token, so two drainers never run
 * the same entry). Upstream order: the TaintManagerEviction Event, then up to deletePodRetries attempts
 * of addConditionAndDeletePod deletePodRetryInterval apart, then the entry is completed whatever the
 * outcome (upstream only logs the error).
 */
export async function firePodEvictions(
  deps: FiredPodEvictionsDeps,
  executor: DecidingExecutor,
  now: EpochMillis,
): Promise<{ result: PodDeletionResult; capped: boolean }> {
  const { config, stores, observer, signal } = deps;
  const cluster = config.cluster;
  const opts = signal === undefined ? {} : { signal };
  const max = deps.maxPodDeletionsPerRun ?? DefaultMaxPodDeletionsPerRun;
  const deletionDeps = {
    cluster: deps.cluster,
    observer,
    dryRun: config.dryRun,
    emulationVersion: config.emulationVersion,
    ...(deps.sleep !== undefined && { sleep: deps.sleep }),
  };
  const due = await stores.podEvictions.dueEvictions(cluster, now, opts);
  const result = { deleted: 0, alreadyGone: 0, failed: 0, skipped: 0, shadowed: 0, revoked: 0 };
  const live = new Map<string, LiveNode | undefined>();
  const readLive = async (name: string): Promise<LiveNode | undefined> => {
    if (live.has(name)) return live.get(name);
    const read = await readLiveNode(deps, name);
    live.set(name, read);
    return read;
  };
  for (const eviction of due.slice(0, max)) {
    const current = await readLive(eviction.nodeName);
    if (current === undefined) {
      // Not decided without the API's word: the entry stays due and the next run reads again.
      result.skipped++;
      continue;
    }
    const found = current.pods.find((p) => podKey(p) === eviction.key);
    // A shadow decides as if the cluster's own taint eviction had not begun deleting the pod.
    const pod = found !== undefined && config.dryRun ? asIfNotEvictedByAnother(found) : found;
    const decision = decideFiredEviction(
      eviction,
      pod,
      current.node,
      now,
      upstreamBehaviour(config.emulationVersion),
    );
    if (decision.kind !== 'delete') {
      if (await revoke(deps, executor, eviction, decision, now)) result.revoked++;
      else result.skipped++;
      continue;
    }
    if (!(await stores.podEvictions.startFiring(cluster, eviction.key, eviction.token, opts))) {
      result.skipped++;
      continue;
    }
    const deleted = await deletePodHandler(
      deletionDeps,
      executor,
      {
        key: eviction.key,
        // Bound to the pod the eviction was decided for: a pod re-created under the name is left alone.
        ...(eviction.uid !== undefined && { uid: eviction.uid }),
        nodeName: eviction.nodeName,
        why: `taint eviction: ${decision.why}`,
        inputs: podEvictionInputs(eviction, current.node),
      },
      opts,
    );
    if (deleted === undefined) result.shadowed++;
    else if (!deleted.ok) result.failed++;
    else if (deleted.podWasGone) result.alreadyGone++;
    else result.deleted++;
    await stores.podEvictions.complete(cluster, eviction.key, eviction.token, opts);
  }
  return { result, capped: due.length > max };
}

/** The node (undefined: deleted) and its pods, or undefined when either read failed. */
async function readLiveNode(deps: FiredPodEvictionsDeps, name: string): Promise<LiveNode | undefined> {
  const opts = deps.signal === undefined ? {} : { signal: deps.signal };
  const node = await deps.cluster.execute({ kind: 'getNode', node: name }, opts);
  if (!node.ok && node.reason !== 'NotFound') {
    deps.observer.warn('taint eviction: cannot read the node of a due eviction; it stays due', {
      node: name,
      error: node.message,
    });
    return undefined;
  }
  const pods = await deps.cluster.listPodsOnNode(name, opts);
  if (!pods.ok) {
    deps.observer.warn('taint eviction: cannot list the pods of a due eviction; it stays due', {
      node: name,
      error: pods.message,
    });
    return undefined;
  }
  return { node: node.ok ? node.value : undefined, pods: pods.value };
}

/**
 * A timer the API's node and pod no longer call for: cancelled (with upstream's Event, as its informer
 * would have cancelled it when the taint went), dropped, or moved later. False when another drainer or
 * event got to the entry first (nothing was removed).
 */
async function revoke(
  deps: FiredPodEvictionsDeps,
  executor: DecidingExecutor,
  eviction: PodEviction,
  decision: Exclude<FiredEvictionDecision, { kind: 'delete' }>,
  now: EpochMillis,
): Promise<boolean> {
  const { config, stores, signal } = deps;
  const opts = signal === undefined ? {} : { signal };
  const uid = eviction.uid === undefined ? {} : { uid: eviction.uid };
  const eventSource = upstreamBehaviour(config.emulationVersion).taintEvictionEventSource;
  const { cancelled, removed } = await stores.podEvictions.cancel(config.cluster, eviction.key, {
    ...opts,
    ...uid,
    token: eviction.token,
  });
  if (removed === undefined) return false;
  if (decision.kind === 'reschedule') {
    await stores.podEvictions.add(
      config.cluster,
      {
        key: eviction.key,
        ...uid,
        nodeName: eviction.nodeName,
        createdAt: decision.createdAt,
        fireAt: decision.fireAt,
        now,
      },
      opts,
    );
  }
  const why =
    decision.kind === 'reschedule'
      ? `processPodOnNode: the timer moves to ${new Date(decision.fireAt).toISOString()}`
      : decision.why;
  await executor.record([
    {
      node: eviction.nodeName,
      what: decision.kind === 'reschedule' ? 'schedulePodEviction' : 'cancelPodEviction',
      why: `taint eviction: the timer fired, decided again on the API's node and pod: ${why}`,
      inputs: { pod: eviction.key, ...podEvictionInputs(eviction, undefined) },
      result:
        decision.kind === 'cancel' ? (cancelled ? 'cancelled' : 'removed a running deletion') : decision.kind,
    },
  ]);
  if (decision.kind === 'cancel' && cancelled) {
    await executor.execute({
      kind: 'recordEvent',
      event: cancelPodDeletionEvent(parsePodKey(eviction.key), eventSource),
    });
  }
  return true;
}

/** The timer's instants and the taints it was decided on, for the trail (deletePodHandler adds the pod). */
function podEvictionInputs(eviction: PodEviction, node: Node | undefined): Record<string, JsonValue> {
  return {
    createdAt: new Date(eviction.createdAt).toISOString(),
    fireAt: new Date(eviction.fireAt).toISOString(),
    ...(node !== undefined && {
      taints: node.taints.filter((t) => t.effect === 'NoExecute').map(formatTaintInput),
    }),
  };
}
