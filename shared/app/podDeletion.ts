// Upstream deletePodHandler for a pod whose eviction is due now: the TaintManagerEviction Event, then
// up to deletePodRetries attempts of addConditionAndDeletePod, each decision filed in the Decisions
// trail. The taint eviction service runs it for immediate deletions (a NoExecute taint not tolerated),
// the drainer for the PodEvictions timers that fired (drainer.ts firePodEvictions).
import { setTimeout as sleepFor } from 'node:timers/promises';
import { taintManagerEvictionEvent } from '../domain/kubeEvents.js';
import { deletePodRetries, deletePodRetryInterval } from '../domain/taintEviction.js';
import { parsePodKey, type Millis, type PodKey } from '../domain/types.js';
import {
  upstreamBehaviour,
  type EmulationVersion,
  type UpstreamBehaviour,
} from '../domain/upstreamVersion.js';
import type { ClusterPort, DisruptionTargetWrite, TaintEvictionDeleteResult } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { JsonValue } from '../ports/stores.js';
import { decidedWrite, type DecisionDraft } from './decidedWrite.js';
import type { DecidingExecutor } from './decisions.js';

/** Waits `ms` (upstream time.Sleep); rejects when `signal` aborts. */
export type Sleep = (ms: Millis, signal?: AbortSignal) => Promise<void>;

const realSleep: Sleep = async (ms, signal) => {
  await sleepFor(ms, undefined, signal === undefined ? {} : { signal });
};

export interface InvocationOptions {
  readonly signal?: AbortSignal;
}

export interface PodDeletionDeps {
  readonly cluster: Pick<ClusterPort, 'execute' | 'deletePodForTaintEviction'>;
  readonly observer: Observer;
  readonly dryRun: boolean;
  /** The emulated minor: the Event's source component and how DisruptionTarget is written. */
  readonly emulationVersion: EmulationVersion;
  readonly sleep?: Sleep;
}

/**
 * How addConditionAndDeletePod writes DisruptionTarget at a minor: not at all with PodDisruptionConditions
 * off (v1.25), with the pod's generation as observedGeneration from v1.34 (PodObservedGenerationTracking).
 */
export function disruptionTargetWrite(behaviour: UpstreamBehaviour): DisruptionTargetWrite {
  if (!behaviour.podDisruptionConditions) return 'none';
  return behaviour.podConditionObservedGeneration ? 'withObservedGeneration' : 'condition';
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
  const behaviour = upstreamBehaviour(deps.emulationVersion);
  const disruptionTarget = disruptionTargetWrite(behaviour);
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
      await executor.execute({
        kind: 'recordEvent',
        event: taintManagerEvictionEvent(ref, behaviour.taintEvictionEventSource),
      });
      for (;;) {
        attempts++;
        const attempt = await cluster.deletePodForTaintEviction(ref.namespace, ref.name, {
          ...callOpts,
          disruptionTarget,
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
