// Level-triggered node copies (docs/architecture.md#level-triggered): each monitor pass checks the
// functions' node cache against the cluster, and corrects what differs, whatever was lost, duplicated,
// reordered, dead-lettered or forged on the way.
//
// - A stale copy: the digest carries, per node, the fingerprint of the relay's copy
//   (shared/nodeFingerprint.ts). A node whose stored copy has another fingerprint, or that the relay no
//   longer knows, is read from the API; the API's copy replaces the stored one whatever resourceVersion
//   was stored (one that jumped ahead, or went back after an etcd restore), and the node-change path
//   runs on it (node-taints, the taint eviction controller), as upstream's informer would deliver the
//   update. A node the API no longer has becomes a tombstone.
// - A missed action: a copy that is current but calls for a NoSchedule taint or label write node-taints
//   never made (its invocation failed for good) gets node-taints again, on the API's node.
//
// Reads are bounded per pass (MaxNodeReadsPerPass; the rest the next pass, 5 s later), and a node read
// whose answer did not match the relay's (the relay lags, or runs another version of the mapping) is
// not read again for the same relay fingerprint until NodeReadMemoTtl has passed, so a disagreement the
// API cannot settle costs one read per node per 5 minutes, not one per pass.
import type { ControllerConfig } from '../config.js';
import { reconcileNodeLabels } from '../domain/nodeLabels.js';
import { doNoScheduleTaintingPass } from '../domain/taints.js';
import type { EpochMillis, Millis, Node } from '../domain/types.js';
import { digestChecksFingerprintOf, type HeartbeatDigest, type NodeChanged } from '../events.js';
import { nodeFingerprint } from '../nodeFingerprint.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { DecisionRecord, StateStores } from '../ports/stores.js';
import { runNodeTaints } from './nodeTaints.js';
import type { Sleep } from './podDeletion.js';
import { handleNodeChanged } from './taintEviction.js';

/** Nodes read from the API per pass to check their copies; the rest the next pass. */
export const MaxNodeReadsPerPass = 100;

/** How long a read whose answer did not settle a difference stands for the same fingerprint. */
export const NodeReadMemoTtl: Millis = 5 * 60_000;

/** After a repair failed (an API error, a write refused), how long before the node is read again. */
export const FailedRepairRetry: Millis = 30_000;

/**
 * How long a copy must have been stored before a write it calls for counts as missed: node-taints acts
 * within a second of the change reaching the bus, and its own write comes back as the next Node Changed.
 */
export const MissedWriteSettle: Millis = 15_000;

/**
 * Per node, what it was last read for and when: `relay:<fingerprint>` (a stale-copy check) or
 * `copy:<fingerprint>` (a missed-action check). Kept by the warm monitor beside its LoadedState; losing
 * it costs at most one more read per node.
 */
export type NodeReadMemo = Map<string, { readonly reason: string; readonly at: EpochMillis }>;

/** Why a node is read this pass. */
export type NodeCheck =
  | { readonly kind: 'fingerprint'; readonly name: string; readonly stored: Node; readonly relay: string }
  | { readonly kind: 'unknownToRelay'; readonly name: string; readonly stored: Node }
  | { readonly kind: 'missedWrite'; readonly name: string; readonly stored: Node };

function memoKey(check: NodeCheck): string {
  switch (check.kind) {
    case 'fingerprint':
      return `relay:${check.relay}`;
    case 'unknownToRelay':
      return 'relay:-';
    case 'missedWrite':
      return `copy:${nodeFingerprint(check.stored)}`;
  }
}

function memoized(memo: NodeReadMemo, check: NodeCheck, now: EpochMillis): boolean {
  const entry = memo.get(check.name);
  return entry !== undefined && entry.reason === memoKey(check) && now - entry.at < NodeReadMemoTtl;
}

/**
 * The nodes to read this pass, in name order, at most MaxNodeReadsPerPass: stored copies whose
 * fingerprint differs from the relay's or that the relay does not know (only with a digest that carries
 * fingerprints, and only for the nodes its fingerprintShard covers), then copies that call for a
 * NoSchedule taint or label write. Pure.
 */
export function nodesToCheck(
  nodes: ReadonlyMap<string, Node>,
  digest: Pick<HeartbeatDigest, 'fingerprints' | 'fingerprintShard' | 'probes'>,
  memo: NodeReadMemo,
  now: EpochMillis,
  /** When each copy was stored (the functions' clock); a copy without one counts as settled. */
  storedAt: (name: string) => EpochMillis | undefined = () => undefined,
): NodeCheck[] {
  const checks: NodeCheck[] = [];
  const { fingerprints } = digest;
  for (const [name, stored] of nodes) {
    let check: NodeCheck | undefined;
    // A digest with a fingerprintShard says nothing of the probed nodes outside it: the next ones do.
    if (fingerprints !== undefined && digestChecksFingerprintOf(digest, name)) {
      const relay = fingerprints.get(name);
      if (relay === undefined) check = { kind: 'unknownToRelay', name, stored };
      else if (relay !== nodeFingerprint(stored)) check = { kind: 'fingerprint', name, stored, relay };
    }
    if (
      check === undefined &&
      now - (storedAt(name) ?? Number.NEGATIVE_INFINITY) >= MissedWriteSettle &&
      (doNoScheduleTaintingPass(stored) !== undefined || reconcileNodeLabels(stored) !== undefined)
    ) {
      check = { kind: 'missedWrite', name, stored };
    }
    if (check !== undefined && !memoized(memo, check, now)) checks.push(check);
  }
  checks.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return checks.slice(0, MaxNodeReadsPerPass);
}

/** What the reads found: copies to correct, nodes gone, and nodes whose copy needs node-taints again. */
export interface NodeChecks {
  /** The API's copy, for nodes whose stored copy differs from it. */
  readonly corrected: ReadonlyMap<
    string,
    { readonly stored: Node; readonly live: Node; readonly check: NodeCheck }
  >;
  /** Nodes the API no longer has (their stored copy). */
  readonly gone: ReadonlyMap<string, Node>;
  /** Current copies that call for a NoSchedule taint or label write: the API's copy. */
  readonly missedWrites: ReadonlyMap<string, Node>;
}

export interface NodeCheckDeps {
  readonly config: Pick<ControllerConfig, 'cluster' | 'dryRun' | 'evictionMode' | 'emulationVersion'>;
  readonly stores: Pick<StateStores, 'nodes' | 'podEvictions' | 'decisions'>;
  readonly cluster: Pick<
    ClusterPort,
    'execute' | 'getNode' | 'addNodeLabels' | 'listPodsOnNode' | 'deletePodForTaintEviction'
  >;
  readonly observer: Observer;
  readonly clock: { now(): EpochMillis };
  readonly signal?: AbortSignal;
  readonly sleep?: Sleep;
}

/**
 * Reads the checked nodes from the API. A node whose API copy has the stored copy's fingerprint needs
 * nothing (the relay lags or leads), and is remembered so it is not read again for the same answer.
 * A failed read is left for the next pass.
 */
export async function readCheckedNodes(
  deps: NodeCheckDeps,
  checks: readonly NodeCheck[],
  memo: NodeReadMemo,
  now: EpochMillis,
): Promise<NodeChecks> {
  const corrected = new Map<string, { stored: Node; live: Node; check: NodeCheck }>();
  const gone = new Map<string, Node>();
  const missedWrites = new Map<string, Node>();
  const opts = deps.signal === undefined ? {} : { signal: deps.signal };
  for (const check of checks) {
    const read = await deps.cluster.execute({ kind: 'getNode', node: check.name }, opts);
    if (!read.ok && read.reason !== 'NotFound') continue;
    memo.set(check.name, { reason: memoKey(check), at: now });
    if (!read.ok) {
      gone.set(check.name, check.stored);
      continue;
    }
    const live = read.value;
    if (nodeFingerprint(live) !== nodeFingerprint(check.stored)) {
      corrected.set(check.name, { stored: check.stored, live, check });
    } else if (doNoScheduleTaintingPass(live) !== undefined || reconcileNodeLabels(live) !== undefined) {
      missedWrites.set(check.name, live);
    }
  }
  if (checks.length > 0) {
    deps.observer.info('node copies checked against the API', {
      cluster: deps.config.cluster,
      read: checks.length,
      corrected: corrected.size,
      gone: gone.size,
      missedWrites: missedWrites.size,
      nodes: checks.slice(0, 10).map((c) => `${c.name} (${c.kind})`),
    });
  }
  return { corrected, gone, missedWrites };
}

/** The Decisions records of the corrections (the monitor files them with its pass). */
export function nodeCheckDecisions(
  found: NodeChecks,
): Omit<DecisionRecord, 'at' | 'source' | 'seq' | 'dryRun'>[] {
  const records: Omit<DecisionRecord, 'at' | 'source' | 'seq' | 'dryRun'>[] = [];
  for (const [name, { stored, live, check }] of found.corrected) {
    records.push({
      node: name,
      what: 'reconcileNode',
      why:
        check.kind === 'fingerprint'
          ? "the node copy differed from the relay's: read from the API, whose copy replaces it"
          : check.kind === 'unknownToRelay'
            ? 'the relay does not know the node: read from the API, whose copy replaces the stored one'
            : 'the node copy differed from the API: replaced',
      inputs: {
        storedResourceVersion: stored.resourceVersion ?? null,
        apiResourceVersion: live.resourceVersion ?? null,
        storedFingerprint: nodeFingerprint(stored),
        apiFingerprint: nodeFingerprint(live),
        ...(check.kind === 'fingerprint' && { relayFingerprint: check.relay }),
      },
    });
  }
  for (const [name, stored] of found.gone) {
    records.push({
      node: name,
      what: 'reconcileNode',
      why: 'the API has no such node (its deletion was never seen): the copy becomes a tombstone',
      inputs: { storedResourceVersion: stored.resourceVersion ?? null },
    });
  }
  return records;
}

/**
 * After the pass is committed: the corrected copies replace the stored ones, and the node-change path
 * runs on each (node-taints, and in taint mode the taint eviction controller), as upstream's informer
 * delivers the update; gone nodes become tombstones; missed writes get node-taints again. A copy is
 * replaced only once its node-change path succeeded, so a failure leaves the difference for the next
 * pass to find (a level-triggered retry). Errors are logged, never thrown: the pass is committed.
 */
export async function repairNodes(deps: NodeCheckDeps, found: NodeChecks, memo: NodeReadMemo): Promise<void> {
  // A failed repair is tried again FailedRepairRetry later, not every pass.
  const retrySoon = (name: string): void => {
    const entry = memo.get(name);
    if (entry !== undefined) memo.set(name, { ...entry, at: entry.at - NodeReadMemoTtl + FailedRepairRetry });
  };
  const { config, stores, observer, signal } = deps;
  const cluster = config.cluster;
  const opts = signal === undefined ? {} : { signal };
  const change = (node: Node): NodeChanged => ({ schemaVersion: 1, cluster, type: 'MODIFIED', node });
  const failed: string[] = [];
  for (const [name, stored] of found.gone) {
    await stores.nodes.replaceNode(
      cluster,
      name,
      undefined,
      { resourceVersion: stored.resourceVersion },
      opts,
    );
  }
  for (const [name, { stored, live }] of found.corrected) {
    try {
      await runNodeTaints(deps, change(live), { signal, fromApi: true });
      if (config.evictionMode === 'taint') await handleNodeChanged(deps, change(live), opts);
    } catch (error) {
      failed.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      retrySoon(name);
      continue;
    }
    await stores.nodes.replaceNode(cluster, name, live, { resourceVersion: stored.resourceVersion }, opts);
  }
  for (const [name, live] of found.missedWrites) {
    try {
      await runNodeTaints(deps, change(live), { signal, fromApi: true });
    } catch (error) {
      failed.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      retrySoon(name);
    }
  }
  if (failed.length > 0) {
    observer.warn('repairing node copies failed for some nodes; they are tried again in 30 s', {
      cluster,
      failed: failed.length,
      errors: failed.slice(0, 10),
    });
  }
}
