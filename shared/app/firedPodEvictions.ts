// The taint eviction controller's fired timers, as one drainer run fires them (drainer.ts runDrainer):
// each due PodEvictions entry this run starts runs upstream's deletePodHandler (podDeletion.ts), then is
// completed.
import type { ControllerConfig } from '../config.js';
import type { EpochMillis } from '../domain/types.js';
import type { Observer } from '../ports/observer.js';
import type { JsonValue, PodEviction, StateStores } from '../ports/stores.js';
import type { DecidingExecutor } from './decisions.js';
import { deletePodHandler, type PodDeletionDeps, type Sleep } from './podDeletion.js';

/** Pod deletions one run starts at most; the rest wait for the next run (they stay due). */
export const DefaultMaxPodDeletionsPerRun = 500;

/** What firing the timers needs of the drainer's dependencies (DrainerDeps provides it). */
export interface FiredPodEvictionsDeps {
  readonly config: Pick<ControllerConfig, 'cluster' | 'dryRun'>;
  readonly stores: Pick<StateStores, 'podEvictions'>;
  readonly cluster: PodDeletionDeps['cluster'];
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
  /** Due entries another drainer started first, or replaced meanwhile. */
  readonly skipped: number;
  /** dryRun: recorded, timer consumed, pod left alone. */
  readonly shadowed: number;
}

/**
 * The taint eviction controller's fired timers: upstream's TimedWorker callback deletePodHandler
 * (podDeletion.ts), run for each due PodEvictions entry whose timer this run starts (startFiring is
 * conditional on the entry's token, so two drainers never run the same entry). Upstream order: the
 * TaintManagerEviction Event, then up to deletePodRetries attempts of addConditionAndDeletePod
 * deletePodRetryInterval apart, then the entry is completed whatever the outcome (upstream only logs the
 * error).
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
    ...(deps.sleep !== undefined && { sleep: deps.sleep }),
  };
  const due = await stores.podEvictions.dueEvictions(cluster, now, opts);
  const result = { deleted: 0, alreadyGone: 0, failed: 0, skipped: 0, shadowed: 0 };
  for (const eviction of due.slice(0, max)) {
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
        why: "taint eviction: the pod does not tolerate the node's NoExecute taint for longer",
        inputs: podEvictionInputs(eviction),
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

/** The timer's instants, for the trail (deletePodHandler adds the pod). */
function podEvictionInputs(eviction: PodEviction): Record<string, JsonValue> {
  return {
    createdAt: new Date(eviction.createdAt).toISOString(),
    fireAt: new Date(eviction.fireAt).toISOString(),
  };
}
