// Applying the taint eviction controller's PodEvictionActions, in order, to the PodEvictions table
// (upstream's TimedWorkerQueue: AddWork, CancelWork; a timer due at once runs deletePodHandler), and
// filing each schedule, cancel and delete under the pod's node with the taints and tolerations that
// made it so. The decisions themselves are the domain's (shared/domain/taintEviction.ts).
import { asIfNotEvictedByAnother } from '../agreement.js';
import type { ControllerConfig } from '../config.js';
import { formatTaintWithValueInput } from '../decisionContract.js';
import { cancelPodDeletionEvent } from '../domain/kubeEvents.js';
import type { PodEvictionAction, ScheduledEvictionLookup } from '../domain/taintEviction.js';
import {
  getMatchingTolerations,
  getMinTolerationTime,
  toleratesTaint,
  type TolerationRules,
} from '../domain/tolerations.js';
import {
  parsePodKey,
  podKey,
  type EpochMillis,
  type Pod,
  type PodKey,
  type Taint,
  type Toleration,
} from '../domain/types.js';
import { upstreamBehaviour } from '../domain/upstreamVersion.js';
import type { Observer } from '../ports/observer.js';
import type { JsonValue, PodEviction, StateStores } from '../ports/stores.js';
import { formatWireTime } from '../wireFormat.js';
import type { DecidingExecutor } from './decisions.js';
import { deletePodHandler, type PodDeletionDeps, type Sleep } from './podDeletion.js';

/** What applying actions needs of the service's dependencies (TaintEvictionDeps provides it). */
export interface EvictionActionDeps {
  readonly config: Pick<ControllerConfig, 'dryRun' | 'emulationVersion'>;
  readonly stores: Pick<StateStores, 'podEvictions'>;
  readonly cluster: PodDeletionDeps['cluster'];
  readonly observer: Observer;
  readonly sleep?: Sleep;
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

// Why: the taints and tolerations behind a pod's decision, for the Decisions trail.

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
  rules: TolerationRules,
): PodReasoning {
  const matches = taints.map((taint) => {
    const used = tolerations.find((t) => toleratesTaint(t, taint, rules));
    return `${formatTaintWithValueInput(taint)} <- ${used === undefined ? 'not tolerated' : describeToleration(used)}`;
  });
  const inputs = { pod: key, taints: taints.map(formatTaintWithValueInput), tolerations: matches };
  if (taints.length === 0) return { why: 'the node has no NoExecute taints', inputs };
  const { allTolerated, used } = getMatchingTolerations(taints, tolerations, rules);
  if (!allTolerated) return { why: 'a NoExecute taint is not tolerated: delete now', inputs };
  const min = getMinTolerationTime(used);
  if (min < 0) return { why: 'every NoExecute taint is tolerated forever', inputs };
  return {
    why: `every NoExecute taint is tolerated; the shortest tolerationSeconds is ${min / 1000}s`,
    inputs,
  };
}

export interface ApplyContext {
  readonly deps: EvictionActionDeps;
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

/** A schedule that fires at once: upstream deletes the pod now instead of starting a timer. */
export const isImmediate = (a: Extract<PodEvictionAction, { kind: 'schedule' }>): boolean =>
  a.fireAt <= a.createdAt;

/** Applies `actions` in order (upstream's TimedWorkerQueue AddWork / CancelWork, and deletePodHandler). */
export async function applyActions(
  ctx: ApplyContext,
  actions: readonly PodEvictionAction[],
): Promise<EvictionSummary> {
  const { deps, cluster, executor, now, signal } = ctx;
  const { podEvictions } = deps.stores;
  const callOpts = signal === undefined ? {} : { signal };
  const summary: EvictionSummary = { scheduled: [], cancelled: [], deleted: [], failed: [] };
  const behaviour = upstreamBehaviour(deps.config.emulationVersion);
  const eventSource = behaviour.taintEvictionEventSource;
  const reasoning = (key: PodKey): PodReasoning => {
    const pod = ctx.pods.get(key);
    return pod === undefined
      ? { why: ctx.goneWhy, inputs: { pod: key } }
      : reasonAbout(key, ctx.taints, pod.tolerations, behaviour);
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
          event: cancelPodDeletionEvent(parsePodKey(action.key), eventSource),
        });
      }
      continue;
    }

    const listed = ctx.pods.get(action.key);
    // A shadow decides as if the cluster's own taint eviction had not begun deleting the pod.
    const pod = listed !== undefined && deps.config.dryRun ? asIfNotEvictedByAnother(listed) : listed;
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
            event: cancelPodDeletionEvent(parsePodKey(action.key), eventSource),
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
            emulationVersion: deps.config.emulationVersion,
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

export function podsByKey(pods: readonly Pod[]): Map<PodKey, Pod> {
  return new Map(pods.map((p) => [podKey(p), p]));
}

/**
 * upstream GetWorkerUnsafe over entries read before any action: timer-backed entries only, and only the
 * decided-about pod's own (an entry of an earlier pod of the same name is not its countdown).
 */
export function lookupIn(
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
export function staleIncarnations(
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
