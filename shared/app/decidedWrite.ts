// Cluster writes that are not domain Effects (label patches, taint eviction deletes) kept in the
// Decisions trail exactly as DecidingExecutor keeps effects: recorded before the attempt (so a function
// that dies mid-write still leaves the trail), skipped in shadow mode, and recorded again with the outcome.
import type { DecisionRecord } from '../ports/stores.js';
import type { DecidingExecutor } from './decisions.js';

/** A decision as the service builds it: the executor adds time, source, sequence and the dryRun flag. */
export type DecisionDraft = Omit<DecisionRecord, 'at' | 'source' | 'seq' | 'dryRun' | 'result'>;

/**
 * Records `decision` as intended (or `dryRun`), performs `write` unless in shadow mode, then records
 * its outcome. Returns the write's result, or undefined in shadow mode.
 *
 * @example
 * const result = await decidedWrite(executor, dryRun, { node, what: 'addNodeLabels', why, inputs },
 *   () => cluster.addNodeLabels(node, labels, { signal }), describeResult);
 */
export async function decidedWrite<R>(
  executor: DecidingExecutor,
  dryRun: boolean,
  decision: DecisionDraft,
  write: () => Promise<R>,
  describe: (result: R) => string,
): Promise<R | undefined> {
  await executor.record([{ ...decision, result: dryRun ? 'dryRun' : 'intended' }]);
  if (dryRun) return undefined;
  const result = await write();
  await executor.record([{ ...decision, result: describe(result) }]);
  return result;
}

/**
 * A DecidingExecutor `seqBase` for decisions made on one event: a multiple of 1,000 below 1,000,000
 * (decision keys pad the sequence to six digits) derived from the event's identity (FNV-1a), so
 * invocations for different pods or node versions deciding at the same millisecond about the same node
 * file distinct rows, and a retry of the same event rewrites its own.
 *
 * @example
 * new DecidingExecutor({ ...options, seqBase: decisionSeqBase(`pod:${key}`) });
 */
export function decisionSeqBase(identity: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < identity.length; i++) {
    hash ^= identity.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return (hash % 1000) * 1000;
}
