// The Decisions trail and shadow mode, in one place: every effect that would change the cluster is
// recorded before it is attempted (so a function that dies mid-write still leaves the trail), and its
// outcome after. With dryRun, the decision is recorded and the write is skipped (shadow mode,
// docs/architecture.md#shadow-mode): reads still go to the cluster, so every later decision is made on
// real inputs.
import { formatConditionInput, formatPodRef, formatTaintInput } from '../decisionContract.js';
import type { Effect, EffectResult } from '../domain/effects.js';
import type { EpochMillis } from '../domain/types.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Decision, Observer } from '../ports/observer.js';
import type { DecisionRecord, DecisionStore, JsonValue } from '../ports/stores.js';

type ChangingEffect = Extract<
  Effect,
  {
    kind:
      'updateNodeStatus' | 'swapNodeTaints' | 'markPodsNotReady' | 'setPodTerminationReason' | 'deletePod';
  }
>;

export function changesCluster(effect: Effect): effect is ChangingEffect {
  switch (effect.kind) {
    case 'updateNodeStatus':
    case 'swapNodeTaints':
    case 'markPodsNotReady':
    case 'setPodTerminationReason':
    case 'deletePod':
      return true;
    case 'getNode':
    case 'listPodsOnNode':
    case 'recordEvent':
      return false;
  }
}

/** The node a decision is filed under (pods under the node they run on), for `nlc explain NODE`. */
export function subjectOf(effect: ChangingEffect): string {
  switch (effect.kind) {
    case 'updateNodeStatus':
    case 'swapNodeTaints':
    case 'markPodsNotReady':
      return effect.node;
    case 'setPodTerminationReason':
    case 'deletePod':
      return effect.pod.nodeName;
  }
}

/** What the effect asks for, compactly: the inputs column of the trail (readWriteDecision reads it back). */
export function effectInputs(effect: ChangingEffect): Record<string, JsonValue> {
  switch (effect.kind) {
    case 'updateNodeStatus':
      return { conditions: effect.conditions.map(formatConditionInput) };
    case 'swapNodeTaints':
      return { add: effect.toAdd.map(formatTaintInput), remove: effect.toRemove.map(formatTaintInput) };
    case 'markPodsNotReady':
      return { pods: effect.pods.map(formatPodRef) };
    case 'setPodTerminationReason':
      return { pod: formatPodRef(effect.pod), reason: effect.reason };
    case 'deletePod':
      return { pod: formatPodRef(effect.pod) };
  }
}

export function describeResult(result: EffectResult): string {
  if (!result.ok) return `${result.reason}: ${result.message}`;
  return 'unchanged' in result && result.unchanged === true ? 'ok (already so)' : 'ok';
}

export interface DecidingExecutorOptions {
  readonly cluster: string;
  readonly port: Pick<ClusterPort, 'execute'>;
  readonly decisions: DecisionStore;
  /** The deciding function, part of each record's key (`monitor`, `drainer`, `node-taints`, …). */
  readonly source: string;
  /** The instant decisions are made at (the pass's `now`). */
  readonly at: EpochMillis;
  readonly dryRun: boolean;
  readonly signal?: AbortSignal;
  readonly observer?: Observer;
  /** Extra inputs for a decision: what the pass knew that made it so (Ready, zone state, …). */
  readonly context?: (subject: string) => Readonly<Record<string, JsonValue>> | undefined;
  /**
   * The first sequence number (default 0). Decision keys are `<at>#<source>#<seq>`, so two invocations
   * of one function deciding about the same subject at the same millisecond (two Pod Changed events for
   * pods of one node) would overwrite each other's rows; event-driven functions pass a base derived from
   * the event (decidedWrite.ts decisionSeqBase), which a retry of the same event reproduces.
   */
  readonly seqBase?: number;
}

/**
 * An effect executor for driveAsync that keeps the Decisions trail and honours dryRun.
 *
 * @example
 * const executor = new DecidingExecutor({ cluster, port, decisions, source: 'monitor', at, dryRun });
 * const result = await driveAsync(monitorNodeHealth(state, input, at, config), executor.execute);
 */
export class DecidingExecutor {
  private seq: number;
  private readonly log: Decision[] = [];

  constructor(private readonly options: DecidingExecutorOptions) {
    this.seq = options.seqBase ?? 0;
  }

  /** The decisions recorded so far, in order. */
  get recorded(): readonly Decision[] {
    return this.log;
  }

  readonly execute = async (effect: Effect): Promise<EffectResult> => {
    const { port, dryRun, signal } = this.options;
    if (!changesCluster(effect)) {
      // Events follow writes; in shadow mode there were none.
      if (effect.kind === 'recordEvent' && dryRun) return { ok: true };
      return port.execute(effect, signal === undefined ? {} : { signal });
    }
    const subject = subjectOf(effect);
    const inputs = { ...effectInputs(effect), ...this.options.context?.(subject) };
    const decision = { node: subject, what: effect.kind, why: effect.why, inputs };
    await this.record([{ ...decision, result: dryRun ? 'dryRun' : 'intended' }]);
    if (dryRun) return { ok: true };
    const result = await port.execute(effect, signal === undefined ? {} : { signal });
    await this.record([{ ...decision, result: describeResult(result) }]);
    return result;
  };

  /** Records decisions that are not cluster writes (queueing, zone states, registrations). */
  async record(records: readonly Omit<DecisionRecord, 'at' | 'source' | 'seq' | 'dryRun'>[]): Promise<void> {
    if (records.length === 0) return;
    const { cluster, at, source, dryRun, decisions, signal, observer } = this.options;
    const full = records.map((r): Decision => ({
      ...r,
      cluster,
      at,
      source,
      seq: this.seq++,
      ...(dryRun && { dryRun: true }),
    }));
    await decisions.append(cluster, full, signal === undefined ? {} : { signal });
    for (const d of full) {
      this.log.push(d);
      observer?.decided?.(d);
    }
  }
}
