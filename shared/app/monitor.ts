// The monitor: one Heartbeat Digest → one upstream monitorNodeHealth pass (node_lifecycle_controller.go),
// against the state in DynamoDB, with `now` = the digest's observedAt moved onto the functions' clock
// (docs/architecture.md#digest-time). The schedule fallback that reports a silent relay is
// scheduledCheck.ts; the nodes read from the API when the node cache lacks them, missingNodes.ts; the
// node copies and pods checked against the API, reconcileNodes.ts and reconcilePods.ts.
// Called by functions/monitorNodeHealth.ts, the local stack and `nlc simulate`, so it imports no middy or
// Powertools: it reports through the Observer port.
//
// One pass (runMonitorPass, then passAndCommit: one named function per step, the pure ones exported for
// monitorSteps.ts, tested case by case in test/unit/app/monitorSteps.test.ts):
//   1. load (or refresh a kept LoadedState: docs/state.md "Write on change") the cluster's state;
//   2. judge the digest (shared/digestClock.ts): another relay term is checked against the leader Lease;
//      one beyond the functions' clock, or of a term the Lease does not name, is refused (`refused`,
//      counted on the cluster row); one not after the last processed is a no-op (`stale`);
//   3. a multi-part digest waits until all its parts are stored (DigestPartStore);
//   4. observeDigest: what the digest says against the cluster row, logged and recorded as `#cluster`
//      decisions: an observation gap (docs/architecture.md#observation-gap), a relay whose observation
//      restarted, a new relay term, a re-based relay clock. passStartState: after a gap longer than
//      nodeMonitorGracePeriod every node gets a fresh probe (as upstream does when it leaves master
//      disruption), so a relay or bus outage never marks a node Unknown;
//   5. digestLeases, readPassNodes (nodes the cache lacks or has wrong, read from the API), and
//      processedMeta, the cluster row the pass records;
//   6. confirmLeasesBeforePass (v1.37): a held pass commits only the digest's position (holdPass);
//   7. runPass: the pass, its writes through the DecidingExecutor (Decisions trail, dryRun);
//   8. commitAndKeep; a lost race (VersionConflictError) reruns once from a fresh load (every write of a
//      pass is idempotent: taint swaps, status writes with resourceVersion preconditions, Ready=False);
//   9. afterCommit: node copies repaired, pods swept, the trail for the non-write decisions;
//      reportPassHealth (metrics), triggerDrainerIfDue, and one summary line (passSummary).
import type { ControllerConfig } from '../config.js';
import { ClusterSubject, zoneLabel } from '../decisionContract.js';
import type { ControllerState } from '../domain/controllerState.js';
import { driveAsync } from '../domain/effects.js';
import {
  monitorNodeHealth,
  nodesToMarkUnknown,
  type MonitorOptions,
  type MonitorPassResult,
} from '../domain/monitorNodeHealth.js';
import { upstreamBehaviour } from '../domain/upstreamVersion.js';
import { nextHandOutAt } from '../domain/rateLimitedTimedQueue.js';
import type { EpochMillis, Lease, Millis, Node } from '../domain/types.js';
import { EventParseError, VersionConflictError } from '../errors.js';
import type { HeartbeatDigest } from '../events.js';
import { judgeDigest, type DigestClockState, type DigestVerdict, type TermCheck } from '../digestClock.js';
import { mergeDigestParts, type DigestPosition } from '../heartbeatDigest.js';
import type { Clock } from '../ports/clock.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { ClusterMeta, LoadedState, StateAfterPass, StateStores } from '../ports/stores.js';
import { DecidingExecutor } from './decisions.js';
import { clampNextPassWithin } from './drainerScheduling.js';
import { refreshClusterVersion } from './clusterVersion.js';
import { confirmLeases, type LeaseConfirmation } from './leaseConfirmation.js';
import type { TriggerDrainer } from './drainer.js';
import { readMissingNodes } from './missingNodes.js';
import {
  nodeCheckDecisions,
  nodesToCheck,
  readCheckedNodes,
  repairNodes,
  type NodeChecks,
  type NodeReadMemo,
} from './reconcileNodes.js';
import { podSweepsDue, sweepPods, type PodSweepMemo } from './reconcilePods.js';
import { nodeContext, passDecisions, reportMetrics } from './monitorReport.js';
import {
  digestLeases,
  masterDisruptionAfter,
  observeDigest,
  passNodes,
  healthRowsLagUnknown,
  passStartState,
  quietPeriodTooLong,
  positionMayWait,
  processedMeta,
  summaryReason,
  type AcceptedDigest,
  type DigestObservation,
  type ObservationNote,
} from './monitorSteps.js';

/** The Decisions `source` of the monitor's records. */
export const MonitorSource = 'monitor';

/**
 * Nodes a pass registers at most (MonitorOptions.registrationLimit); the others wait for the next
 * digests. Registering a node costs a RegisteredNode Event (one API request, in turn), a Decisions row
 * and its health row: 3 WRU in the cluster's Nodes partition, which takes 1,000 WCU/s. 1,000
 * registrations are 3,000 WRU, 60% of what that partition takes in one monitor period: registration
 * adds at most that to a pass, whatever the cluster's size (docs/monitor.md#registration).
 */
export const MaxRegistrationsPerPass = 1_000;

/**
 * Seconds of API requests, at kubeApiQps, that one pass budgets for its registrations and markings
 * (MonitorOptions.markingLimit; docs/monitor.md#marking): 20, and at most 40% of the grace period. The
 * function's timeout is 60 s: this leaves room for the load, the commit, the throttle's burst and some
 * retries; and the next digest is processed when the pass ends, so a pass longer than the grace period
 * would be an observation gap (every node a fresh probe, and the silent ones marked a grace later).
 */
export const MonitorApiSecondsPerPass = 20;
const MonitorApiShareOfGrace = 0.4;

/**
 * What a whole pass may take, its load included, before its API work: 40 s, and at most 80% of the
 * grace period. A pass whose load took long (the hourly full reload, a cold start: about 30 s at
 * 100,000 nodes) gets that much less API time, so it stays well inside the 60 s timeout and shorter
 * than the grace period (bench/massFailure.ts: the reload plus a full marking budget made 44-56 s
 * passes, and the next digest an observation gap).
 */
export const MonitorPassSecondsAtMost = 40;
const MonitorPassShareOfGrace = 0.8;

/**
 * A first marking of a Ready node is at least 4 requests (its Lease confirmed, its status written, its
 * pods listed, NodeNotReady recorded), before its pods' own writes: a pass starts at most budget / 4.
 */
const RequestsPerMarkingAtLeast = 4;

/**
 * A pass's requests go one after another (upstream runs 8 node workers; here one): at a round trip of
 * 10 ms each, plus the Decisions rows of each marking (4 writes for about 14 requests: 3 ms a request
 * more), 20 s hold about 1,500 requests. A kubeApiQps above about 75 therefore does not make a pass
 * take on more; it only spends the budget sooner.
 */
export const MaxSequentialRequestsPerPass = 1_500;

/**
 * The API requests a pass may spend on registering and marking nodes: the client's burst plus
 * MonitorApiSecondsPerPass at kubeApiQps, at most MaxSequentialRequestsPerPass. 430 with upstream's 20 / 30.
 * `elapsedMs`, the time the pass has taken so far (its load), comes off MonitorPassSecondsAtMost: a
 * long load leaves fewer seconds of requests (the burst at least).
 *
 * @example
 * passApiBudget({ kubeApiQps: 20, kubeApiBurst: 30, nodeMonitorGracePeriod: 50_000 }); // 430
 * passApiBudget({ kubeApiQps: 20, kubeApiBurst: 30, nodeMonitorGracePeriod: 20_000 }); // 190
 * passApiBudget({ kubeApiQps: 500, kubeApiBurst: 750, nodeMonitorGracePeriod: 50_000 }); // 1500
 * passApiBudget({ kubeApiQps: 20, kubeApiBurst: 30, nodeMonitorGracePeriod: 50_000 }, 30_000); // 230
 */
export function passApiBudget(
  config: Pick<ControllerConfig, 'kubeApiQps' | 'kubeApiBurst' | 'nodeMonitorGracePeriod'>,
  elapsedMs = 0,
): number {
  const grace = config.nodeMonitorGracePeriod / 1000;
  const left = Math.min(MonitorPassSecondsAtMost, grace * MonitorPassShareOfGrace) - elapsedMs / 1000;
  const seconds = Math.max(0, Math.min(MonitorApiSecondsPerPass, grace * MonitorApiShareOfGrace, left));
  const atQps = Math.floor(config.kubeApiBurst + config.kubeApiQps * seconds);
  return Math.max(1, Math.min(MaxSequentialRequestsPerPass, atQps));
}

export interface MonitorDeps {
  readonly config: ControllerConfig;
  readonly stores: Pick<
    StateStores,
    'controllerState' | 'decisions' | 'digestParts' | 'podEvictions' | 'nodes' | 'zoneQueues'
  >;
  /** The pass's effects, and the node-change path of the copies it repairs (reconcileNodes.ts). */
  readonly cluster: Pick<
    ClusterPort,
    | 'execute'
    | 'getNode'
    | 'addNodeLabels'
    | 'listPodsOnNode'
    | 'deletePodForTaintEviction'
    | 'getLeaderLease'
    | 'getNodeLeaseVersion'
    | 'getServerVersion'
  >;
  readonly observer: Observer;
  /**
   * Measures how long a pass takes (metrics), and stamps the repairs of node copies (the node-change
   * path's decisions, like node-taints'); the pass's decisions use the digest's observedAt.
   */
  readonly clock: Clock;
  /** Starts the drainer after a pass that left something due; absent: the drainer's schedule does it. */
  readonly triggerDrainer?: TriggerDrainer;
  readonly signal?: AbortSignal;
  /** Replaces MaxRegistrationsPerPass (tests split a small cluster's first pass with it). */
  readonly registrationsPerPass?: number;
  /** Replaces the marking limit passApiBudget gives (tests split a small mass failure with it). */
  readonly markingLimit?: MonitorOptions['markingLimit'];
}

/**
 * LoadedStates kept between invocations of a warm function, by cluster. A Map will do. The handler keeps
 * one at module scope: an accepted exception to "module scope holds clients and config only"
 * (docs/contributing.md#module-scope), because without it every pass rereads the whole Nodes table
 * (docs/state.md). The service removes a cluster's entry while a pass works on it and puts the committed
 * state back only on success, so a failed commit always drops it.
 */
export interface MonitorCache {
  get(cluster: string): LoadedState | undefined;
  set(cluster: string, state: LoadedState): unknown;
  delete(cluster: string): unknown;
}

export interface MonitorPassSummary {
  readonly cluster: string;
  readonly sequence: number;
  readonly observedAt: EpochMillis;
  readonly nodes: number;
  /** Decisions recorded (writes intended and done, queue and zone changes, registrations). */
  readonly changes: number;
  readonly zones: Readonly<Record<string, string>>;
  readonly masterDisruption: boolean;
  /** Time since the previous processed digest (both on the functions' clock); absent for the first one. */
  readonly observationGapMs?: number;
  /** The gap was longer than nodeMonitorGracePeriod: every node got a fresh probe. */
  readonly observationGapReset: boolean;
  /** Wall time of the whole invocation's pass work (load, pass, commit) and of the pass alone. */
  readonly durationMs: number;
  readonly passMs: number;
  /** 1, or 2 after a lost race. */
  readonly attempts: number;
  /** New nodes left for the next passes (MaxRegistrationsPerPass); absent when none. */
  readonly waitingToRegister?: number;
  /** Nodes due to be marked left for the next passes (passApiBudget); absent when none. */
  readonly waitingToMark?: number;
  /** API requests the pass's decisions stood for (lease confirmations included); absent when none. */
  readonly apiRequests?: number;
  /**
   * Health rows whose health-only change waits for the next commits (healthWritesPerCommit, after a
   * zone comes back); absent when none.
   */
  readonly healthRowsBehind?: number;
  /**
   * Zone queue entry changes waiting for the next commits (queueEntriesPerCommit, after a zone comes
   * back); absent when none.
   */
  readonly queueEntriesBehind?: number;
  readonly drainerTriggered: boolean;
  /**
   * The pass was held by lease confirmation (v1.37, PR #138698): nothing decided, the digest's position
   * committed. `stale`: a node's Lease in the API is newer than the relay's copy; `waiting`: the relay
   * has not synced past that yet; `lookupFailed`: a Lease could not be read.
   */
  readonly heldBy?: 'stale' | 'waiting' | 'lookupFailed';
}

export type MonitorOutcome =
  | { readonly kind: 'stale'; readonly last: DigestPosition | undefined }
  /**
   * Not accepted (shared/digestClock.ts): from a relay that does not hold the leader Lease, beyond the
   * functions' clock, or with an impossible sequence. Counted on the cluster row; nothing else written.
   */
  | { readonly kind: 'refused'; readonly reason: string; readonly detail: string }
  /** A part of a multi-part digest was stored; the pass runs when the last one arrives. */
  | { readonly kind: 'waitingForParts'; readonly missing: readonly number[] }
  | { readonly kind: 'processed'; readonly summary: MonitorPassSummary };

export interface RunMonitorPassOptions {
  readonly cache?: MonitorCache;
  /**
   * What nodes were read from the API for, and when (reconcileNodes.ts): kept by the warm function
   * beside `cache`, so a difference the API cannot settle is not read again every pass.
   */
  readonly readMemo?: NodeReadMemo;
  /** When the pods of each node that matters were last decided from the API (reconcilePods.ts). */
  readonly podSweepMemo?: PodSweepMemo;
}

function positionOf(meta: ClusterMeta): DigestPosition | undefined {
  if (meta.lastSequence === undefined) return undefined;
  // A cluster row written before leaderSince/relayId were stored compares as the oldest leadership.
  return {
    leaderSince: meta.lastLeaderSince ?? 0,
    relayId: meta.lastRelayId ?? '',
    sequence: meta.lastSequence,
  };
}

function iso(ms: EpochMillis): string {
  return new Date(ms).toISOString();
}

/** What the cluster row says was accepted last, as judgeDigest reads it. */
function clockStateOf(meta: ClusterMeta): DigestClockState {
  return {
    ...(meta.lastRelayId !== undefined && { relayId: meta.lastRelayId }),
    ...(meta.lastLeaderSince !== undefined && { leaderSince: meta.lastLeaderSince }),
    ...(meta.lastSequence !== undefined && { sequence: meta.lastSequence }),
    // On rows from before offsets were kept, lastObservedAt is on the relay's clock: not comparable.
    ...(meta.lastObservedAt !== undefined &&
      meta.clockOffset !== undefined && { observedAt: meta.lastObservedAt }),
    ...(meta.clockOffset !== undefined && { offset: meta.clockOffset }),
    ...(meta.clockCandidate !== undefined && { candidate: meta.clockCandidate }),
  };
}

/** A refused term is not read again within this long: a deposed leader's burst costs one Lease read. */
const RefusedTermMemo = 60_000;

const termOf = (digest: Pick<HeartbeatDigest, 'relayId' | 'leaderSince'>): string =>
  `${digest.relayId}@${iso(digest.leaderSince)}`;

/**
 * Whether the leader Lease (config.relayLease) says the digest's relay holds it, in the term the digest
 * names (its holder, and the acquireTime the relay wrote as its leaderSince): the API server vouches
 * for the order of relay terms, no relay clock does (docs/events.md#order-across-relay-leaders).
 */
async function checkTerm(
  deps: MonitorDeps,
  meta: ClusterMeta,
  digest: HeartbeatDigest,
  receivedAt: EpochMillis,
): Promise<TermCheck> {
  if (
    meta.lastRefusedTerm === termOf(digest) &&
    meta.lastRefusedAt !== undefined &&
    receivedAt - meta.lastRefusedAt < RefusedTermMemo
  ) {
    return 'notCurrent';
  }
  const [namespace = '', name = ''] = deps.config.relayLease.split('/');
  const lease = await deps.cluster.getLeaderLease(
    namespace,
    name,
    deps.signal === undefined ? {} : { signal: deps.signal },
  );
  if (!lease.ok) {
    if (lease.reason === 'NotFound') return 'noLease';
    deps.observer.warn('cannot read the leader Lease to check a new relay term', {
      cluster: deps.config.cluster,
      lease: deps.config.relayLease,
      error: lease.message,
    });
    return 'unreadable';
  }
  return lease.value.holderIdentity === digest.relayId && lease.value.acquireTime === digest.leaderSince
    ? 'current'
    : 'notCurrent';
}

/** A refused digest: logged, counted, recorded on the cluster row for `nlc status`; nothing else. */
async function refuse(
  deps: MonitorDeps,
  loaded: LoadedState,
  digest: HeartbeatDigest,
  verdict: Extract<DigestVerdict, { kind: 'refuse' }>,
  receivedAt: EpochMillis,
  cache: MonitorCache | undefined,
): Promise<void> {
  const { config, observer, stores, signal } = deps;
  const reason = `${verdict.reason}: ${verdict.detail}`;
  observer.metric('nlc_refused_digests_total', 'Count', 1);
  observer.warn('Heartbeat Digest refused', {
    cluster: config.cluster,
    reason: verdict.reason,
    detail: verdict.detail,
    relayId: digest.relayId,
    leaderSince: iso(digest.leaderSince),
    sequence: digest.sequence,
    observedAt: iso(digest.observedAt),
    receivedAt: iso(receivedAt),
  });
  const refused = {
    at: receivedAt,
    reason,
    term: termOf(digest),
    ...(verdict.candidate !== undefined && { clockCandidate: verdict.candidate }),
  };
  await stores.controllerState.recordRefusedDigest(
    config.cluster,
    refused,
    signal === undefined ? {} : { signal },
  );
  const { clockCandidate: _previous, ...meta } = loaded.meta;
  cache?.set(config.cluster, {
    ...loaded,
    meta: {
      ...meta,
      ...(verdict.candidate !== undefined && { clockCandidate: verdict.candidate }),
      refusedDigests: (loaded.meta.refusedDigests ?? 0) + 1,
      lastRefusedAt: receivedAt,
      lastRefusal: reason,
      lastRefusedTerm: refused.term,
    },
  });
}

/** Rejects a digest for another cluster: this deployment's kubeconfig points at its own cluster. */
function checkCluster(digest: HeartbeatDigest, served: string): void {
  if (digest.cluster !== served) {
    throw new EventParseError('Heartbeat Digest', [
      `detail.cluster: this deployment serves cluster ${JSON.stringify(served)}, got ${JSON.stringify(digest.cluster)}`,
    ]);
  }
}

/**
 * One monitor pass for one Heartbeat Digest (see the module comment for the steps).
 *
 * @example
 * const outcome = await runMonitorPass({ config, stores, cluster, observer, clock, signal }, digest, { cache });
 * if (outcome.kind === 'stale') return; // a duplicate or reordered digest
 */
export async function runMonitorPass(
  deps: MonitorDeps,
  digest: HeartbeatDigest,
  options: RunMonitorPassOptions = {},
): Promise<MonitorOutcome> {
  const { config, stores, observer, clock, signal } = deps;
  const { cache } = options;
  const cluster = config.cluster;
  const opts = signal === undefined ? {} : { signal };
  checkCluster(digest, cluster);
  const startedAt = clock.now();
  let whole: HeartbeatDigest | undefined;
  const split = digest.part.count > 1;

  for (let attempt = 1; ; attempt++) {
    const kept = cache?.get(cluster);
    cache?.delete(cluster);
    const loaded =
      kept === undefined
        ? await stores.controllerState.load(cluster, opts)
        : await stores.controllerState.refresh(kept, opts);
    const last = positionOf(loaded.meta);
    const receivedAt = clock.now();
    let verdict = judgeDigest(clockStateOf(loaded.meta), digest, receivedAt);
    if (verdict.kind === 'verifyTerm') {
      verdict = judgeDigest(
        clockStateOf(loaded.meta),
        digest,
        receivedAt,
        await checkTerm(deps, loaded.meta, digest, receivedAt),
      );
    }
    if (verdict.kind === 'refuse') {
      await refuse(deps, loaded, digest, verdict, receivedAt, cache);
      return { kind: 'refused', reason: verdict.reason, detail: verdict.detail };
    }
    if (verdict.kind === 'stale' || verdict.kind === 'verifyTerm') {
      cache?.set(cluster, loaded);
      observer.metric('nlc_stale_digests_total', 'Count', 1);
      observer.info('digest not newer than the last processed one: no-op', {
        cluster,
        sequence: digest.sequence,
        relayId: digest.relayId,
        lastSequence: loaded.meta.lastSequence,
        lastRelayId: loaded.meta.lastRelayId,
      });
      return { kind: 'stale', last };
    }
    if (whole === undefined) {
      if (split) {
        const parts = await stores.digestParts.addPart(cluster, digest, opts);
        const merged = mergeDigestParts(parts);
        if (merged.kind === 'incomplete') {
          cache?.set(cluster, loaded);
          observer.debug('digest part stored, waiting for the others', {
            cluster,
            sequence: digest.sequence,
            part: digest.part.index,
            count: digest.part.count,
            missing: merged.missing,
          });
          return { kind: 'waitingForParts', missing: merged.missing };
        }
        whole = merged.digest;
      } else {
        whole = digest;
      }
    }
    try {
      const summary = await passAndCommit(deps, loaded, whole, {
        verdict,
        attempts: attempt,
        startedAt,
        split,
        cache,
        readMemo: options.readMemo ?? (new Map() as NodeReadMemo),
        podSweepMemo: options.podSweepMemo ?? (new Map() as PodSweepMemo),
      });
      return { kind: 'processed', summary };
    } catch (error) {
      // Another monitor committed in between: every write of the pass is idempotent, so rerun once from
      // a fresh load (usually the digest is then no longer newer: a no-op).
      if (error instanceof VersionConflictError && attempt === 1) {
        observer.warn('monitor commit lost a race: rerunning from a fresh load', {
          cluster,
          sequence: whole.sequence,
          table: error.table,
        });
        continue;
      }
      throw error;
    }
  }
}

interface PassOptions {
  /** How the digest's instants map onto the functions' clock (shared/digestClock.ts). */
  readonly verdict: AcceptedDigest;
  readonly attempts: number;
  readonly startedAt: EpochMillis;
  /** The digest arrived in parts: its stored parts are dropped once it is committed. */
  readonly split: boolean;
  readonly cache: MonitorCache | undefined;
  readonly readMemo: NodeReadMemo;
  readonly podSweepMemo: PodSweepMemo;
}

/**
 * One accepted digest, step by step (the module comment's steps 4 to 9). The digest's instants are on
 * the functions' clock (docs/architecture.md#digest-time): its observedAt is the pass's `now`, never after
 * the functions' own clock, and no probe after it.
 */
async function passAndCommit(
  deps: MonitorDeps,
  loaded: LoadedState,
  digest: HeartbeatDigest,
  options: PassOptions,
): Promise<MonitorPassSummary> {
  const { config, observer, clock } = deps;
  const { verdict } = options;
  const { now } = verdict;

  const observation = observeDigest(loaded.meta, digest, verdict, config);
  // Rows a commit left lagging, read by an instance that cannot tell which: upstream's restart.
  const lagging = healthRowsLagUnknown(loaded.meta, loaded.versions.pendingHealth);
  if (lagging) {
    observer.warn('health rows lag the last commit: every node gets a fresh probe, as after a restart', {
      cluster: config.cluster,
      healthRowsBehind: loaded.meta.healthRowsBehind,
    });
  }
  const state = passStartState(loaded.state, observation.gapReset || lagging, now, config.evictionMode);
  const executor = passExecutor(deps, loaded, state, now);
  await recordObservation(observer, executor, observation.notes);

  const leases = digestLeases(digest, verdict.offset, now);
  const read = await readPassNodes(deps, loaded, digest, options.readMemo);
  const baseMeta = processedMeta(
    loaded.meta,
    digest,
    verdict,
    config,
    observation.relayObservingSince,
    await refreshClusterVersion(deps, loaded.meta, clock.now()),
  );

  const confirmation = await confirmLeasesBeforePass(
    deps,
    loaded.meta,
    digest,
    { state, nodes: read.nodes, leases, now },
    options.startedAt,
  );
  if (confirmation !== undefined && confirmation.kind !== 'proceed') {
    return holdPass(deps, loaded, digest, options, {
      state,
      meta: {
        ...baseMeta,
        masterDisruption: loaded.meta.masterDisruption,
        ...(confirmation.written !== undefined && { leaseWrittenVersion: confirmation.written }),
      },
      confirmation,
      executor,
      observation,
      nodes: read.nodes.length,
    });
  }

  // The Lease reads of confirmation came out of the same budget (an unconfirmed node was not read).
  const confirmations = confirmation === undefined ? 0 : confirmation.confirmed.length;
  const { pass, passMs } = await runPass(
    deps,
    executor,
    { state, nodes: read.nodes, leases, now },
    confirmations,
    options.startedAt,
  );
  const masterDisruption = masterDisruptionAfter(
    pass.disruption.masterDisruption,
    loaded.meta.masterDisruption,
  );
  // Diffed against what was loaded: the observation-gap reset and the legacy status are changes too.
  // A quiet pass leaves the position unwritten for a while (docs/state.md#the-position-of-quiet-passes).
  const quiet =
    executor.recorded.length === 0 &&
    read.fetched.size === 0 &&
    read.checked.corrected.size === 0 &&
    read.checked.gone.size === 0 &&
    read.checked.missedWrites.size === 0;
  const committed = await commitAndKeep(deps, loaded, digest, options, {
    state: pass.state,
    meta: { ...baseMeta, masterDisruption },
    gauges: pass.disruption.gauges,
    positionMayWait: positionMayWait(loaded.versions.storedMeta ?? loaded.meta, quiet, now, config),
  });
  await afterCommit(deps, executor, loaded, options, { read, pass, before: state, now });

  // The relay's quiet period, if its digest has one: the next pass may be that far away.
  const nextPassWithin = clampNextPassWithin(digest.quietPeriodMs, config);
  const tooLong = quietPeriodTooLong(digest, config);
  if (tooLong !== undefined) {
    observer.warn('relay quiet period too long for this grace period', {
      cluster: config.cluster,
      ...tooLong,
      nodeMonitorGracePeriodMs: config.nodeMonitorGracePeriod,
      fix: "set the relay's NLC_NODE_MONITOR_GRACE_PERIOD to the functions' value",
    });
  }
  const drainerTriggered = await triggerDrainerIfDue(deps, committed, now, nextPassWithin);
  const summary = passSummary(config.cluster, digest, now, observation, options, {
    nodes: read.nodes.length,
    changes: executor.recorded.length,
    zoneStates: pass.state.zoneStates,
    masterDisruption,
    durationMs: clock.now() - options.startedAt,
    passMs,
    drainerTriggered,
    waitingToRegister: pass.waiting,
    waitingToMark: pass.waitingToMark,
    apiRequests: pass.apiRequests + confirmations,
    healthRowsBehind: committed.versions.pendingHealth?.length ?? 0,
    queueEntriesBehind: [...committed.versions.zoneQueues.values()].reduce((n, v) => n + (v.behind ?? 0), 0),
  });
  // A steady pass is a debug line; one that did or saw something, and the first of each minute, are
  // info lines with the pass's metrics (docs/monitor.md#log-lines).
  const reason = summaryReason(summary, loaded.meta.lastObservedAt, now, config, nextPassWithin);
  reportPassHealth(deps, loaded, pass, {
    gapMs: observation.gapMs,
    passMs,
    nodes: read.nodes.length,
    now,
    passMetrics: reason !== undefined,
  });
  const line = { ...summary, observedAt: iso(now), dryRun: config.dryRun };
  if (reason === undefined) observer.debug('monitor pass', line);
  else observer.info('monitor pass', { ...line, logged: reason });
  return summary;
}

/** Each note's line, then its decision, one after the other (the trail keeps their order). */
async function recordObservation(
  observer: Observer,
  executor: DecidingExecutor,
  notes: readonly ObservationNote[],
): Promise<void> {
  for (const note of notes) {
    if (note.level === 'warn') observer.warn(note.message, note.fields);
    else observer.info(note.message, note.fields);
    await executor.record([note.decision]);
  }
}

/** Records the pass's decisions at `now`, each with what the pass knew of its node. */
function passExecutor(
  deps: MonitorDeps,
  loaded: LoadedState,
  before: ControllerState,
  now: EpochMillis,
): DecidingExecutor {
  const { config, stores, observer, signal } = deps;
  return new DecidingExecutor({
    cluster: config.cluster,
    port: deps.cluster,
    decisions: stores.decisions,
    source: MonitorSource,
    at: now,
    dryRun: config.dryRun,
    observer,
    context: (subject) => nodeContext(before, loaded.nodes.get(subject), now),
    ...(signal === undefined ? {} : { signal }),
  });
}

/** The nodes the pass decides on, with what was read from the API for them. */
interface PassNodes {
  /** Nodes the digest names that the node cache lacks, read from the API. */
  readonly fetched: ReadonlyMap<string, Node>;
  /** Cached copies checked against the API (reconcileNodes.ts). */
  readonly checked: NodeChecks;
  /** In name order. */
  readonly nodes: readonly Node[];
}

async function readPassNodes(
  deps: MonitorDeps,
  loaded: LoadedState,
  digest: HeartbeatDigest,
  readMemo: NodeReadMemo,
): Promise<PassNodes> {
  const { clock } = deps;
  // Nodes the relay knows (the digest names them) that the node cache lacks: their Node Changed is late,
  // or was lost. Read from the API, a node counts in its zone from the first digest that names it (a
  // zone counted without its dead nodes would be tainted at the normal rate); kept with the pass's copies.
  const fetched = await readMissingNodes(deps, loaded, digest);
  // Level-triggered (docs/architecture.md#level-triggered): copies that differ from the relay's, that the
  // relay no longer knows, or that call for a write node-taints never made, are read from the API; the
  // pass decides on the API's copies, and repairNodes makes them the stored ones after the commit.
  const checked = await readCheckedNodes(
    deps,
    nodesToCheck(
      loaded.nodes,
      digest,
      readMemo,
      clock.now(),
      (name) => loaded.versions.nodes.get(name)?.updatedAtMs,
    ),
    readMemo,
    clock.now(),
  );
  return { fetched, checked, nodes: passNodes(loaded.nodes, checked, fetched) };
}

/** What a pass decides on: the state it starts from, its nodes and leases, and `now`. */
interface PassInput {
  readonly state: ControllerState;
  readonly nodes: readonly Node[];
  readonly leases: ReadonlyMap<string, Lease>;
  readonly now: EpochMillis;
}

/**
 * Lease confirmation (v1.37): the API's word on the Leases of the nodes about to be marked Unknown.
 * Undefined when the emulated version has none.
 */
async function confirmLeasesBeforePass(
  deps: MonitorDeps,
  meta: ClusterMeta,
  digest: HeartbeatDigest,
  input: PassInput,
  startedAt: EpochMillis,
): Promise<LeaseConfirmation | undefined> {
  const { config, observer, clock } = deps;
  if (!upstreamBehaviour(config.emulationVersion).leaseConfirmation) return undefined;
  const { state, nodes, leases, now } = input;
  const confirmation = await confirmLeases(deps, {
    written: meta.leaseWrittenVersion,
    digest,
    candidates: () =>
      nodesToMarkUnknown(
        state,
        { nodes, leases },
        now,
        config,
        passOptions(deps, 0, clock.now() - startedAt),
      ),
  });
  if (confirmation.kind === 'proceed' && confirmation.cleared !== undefined) {
    observer.info('lease confirmation: the relay has caught up; node health updates resume', {
      cluster: config.cluster,
      leaseWrittenVersion: confirmation.cleared,
      leaseResourceVersion: digest.leaseResourceVersion ?? null,
    });
  }
  return confirmation;
}

/**
 * A pass held by lease confirmation: the digest's position and the observation-gap reset are committed,
 * nothing else decided.
 */
async function holdPass(
  deps: MonitorDeps,
  loaded: LoadedState,
  digest: HeartbeatDigest,
  options: PassOptions,
  held: {
    readonly state: ControllerState;
    readonly meta: ClusterMeta;
    readonly confirmation: Exclude<LeaseConfirmation, { kind: 'proceed' }>;
    readonly executor: DecidingExecutor;
    readonly observation: DigestObservation;
    readonly nodes: number;
  },
): Promise<MonitorPassSummary> {
  const { config, clock } = deps;
  const { now } = options.verdict;
  await commitAndKeep(deps, loaded, digest, options, { state: held.state, meta: held.meta });
  await recordHeldPass(deps, held.executor, held.confirmation, now);
  return passSummary(config.cluster, digest, now, held.observation, options, {
    nodes: held.nodes,
    changes: held.executor.recorded.length,
    zoneStates: held.state.zoneStates,
    masterDisruption: loaded.meta.masterDisruption,
    durationMs: clock.now() - options.startedAt,
    passMs: 0,
    drainerTriggered: false,
    heldBy: held.confirmation.kind,
  });
}

/**
 * How the functions run monitorNodeHealth: the digest is the only probe source (nodeHealth.ts
 * heartbeatIsProbe: the node copies lag), shadow mode, and registrations and markings bounded per pass
 * by its API budget (passApiBudget), less the requests already `spent` on it (lease confirmation).
 */
function passOptions(
  deps: Pick<MonitorDeps, 'config' | 'registrationsPerPass' | 'markingLimit'>,
  spent = 0,
  elapsedMs = 0,
): MonitorOptions {
  const budget = passApiBudget(deps.config, elapsedMs);
  const markingLimit = deps.markingLimit ?? {
    nodes: Math.max(1, Math.floor(budget / RequestsPerMarkingAtLeast)),
    requests: budget,
  };
  return {
    heartbeatIsProbe: false,
    shadow: deps.config.dryRun,
    // Half the budget at most: a cluster registering a backlog still marks its silent nodes.
    registrationLimit:
      deps.registrationsPerPass ?? Math.min(MaxRegistrationsPerPass, Math.max(1, Math.floor(budget / 2))),
    markingLimit: { nodes: markingLimit.nodes, requests: Math.max(0, markingLimit.requests - spent) },
  };
}

/** The pass itself: upstream monitorNodeHealth, its writes through the DecidingExecutor. */
async function runPass(
  deps: MonitorDeps,
  executor: DecidingExecutor,
  input: PassInput,
  spent: number,
  startedAt: EpochMillis,
): Promise<{ pass: MonitorPassResult; passMs: number }> {
  const { config, clock } = deps;
  const { state, nodes, leases, now } = input;
  const passStarted = clock.now();
  const options = passOptions(deps, spent, passStarted - startedAt);
  const pass: MonitorPassResult = await driveAsync(
    monitorNodeHealth(state, { nodes, leases }, now, config, options),
    executor.execute,
  );
  return { pass, passMs: clock.now() - passStarted };
}

/**
 * Commits what the pass ends with, keeps the committed state for the warm function, and drops the
 * digest's stored parts (they are processed now).
 */
async function commitAndKeep(
  deps: MonitorDeps,
  loaded: LoadedState,
  digest: HeartbeatDigest,
  { split, cache }: Pick<PassOptions, 'split' | 'cache'>,
  after: StateAfterPass,
): Promise<LoadedState> {
  const { config, stores, signal } = deps;
  const opts = signal === undefined ? {} : { signal };
  const committed = await stores.controllerState.commit(loaded, after, opts);
  cache?.set(config.cluster, committed);
  if (split) await stores.digestParts.clearParts(config.cluster, digest, opts);
  return committed;
}

/**
 * After the commit: the node copies the checks found wrong are repaired, pods swept where due, the API's
 * node copies kept, and the decisions read off the pass recorded.
 */
async function afterCommit(
  deps: MonitorDeps,
  executor: DecidingExecutor,
  loaded: LoadedState,
  { readMemo, podSweepMemo }: Pick<PassOptions, 'readMemo' | 'podSweepMemo'>,
  done: {
    readonly read: PassNodes;
    readonly pass: MonitorPassResult;
    readonly before: ControllerState;
    readonly now: EpochMillis;
  },
): Promise<void> {
  const { config, stores, clock, signal } = deps;
  const { read, pass, before, now } = done;
  const opts = signal === undefined ? {} : { signal };
  // Before the pass's own node copies (putNode keeps the newest resourceVersion): a replacement is
  // conditional on the stored copy the check compared.
  await executor.record(nodeCheckDecisions(read.checked));
  await repairNodes(deps, read.checked, readMemo);
  // Pods, on a slower period: for the nodes where they matter, decided again from the API.
  const sweepAt = clock.now();
  await sweepPods(
    deps,
    podSweepsDue(read.nodes, pass.state, config.evictionMode, podSweepMemo, sweepAt),
    podSweepMemo,
    sweepAt,
  );
  // Nodes the API returned in this pass are newer than the cache's copies (heartbeat-only status posts
  // are not Node Changed): keep them, so the next status write starts from the cluster's resourceVersion.
  // putNode never replaces a newer copy, so a Node Changed that got there first wins.
  for (const node of new Map([...read.fetched, ...pass.nodeCopies]).values()) {
    await stores.nodes.putNode(config.cluster, node, opts);
  }
  await executor.record(
    passDecisions({ before, pass, nodes: loaded.nodes, evictionMode: config.evictionMode, now }),
  );
}

/** The nodes the pass could not update, and upstream's metrics. */
function reportPassHealth(
  deps: MonitorDeps,
  loaded: LoadedState,
  pass: MonitorPassResult,
  figures: {
    readonly gapMs: number | undefined;
    readonly passMs: number;
    readonly nodes: number;
    readonly now: EpochMillis;
    /** Send the pass's duration and gap metrics (summaryReason): not on a quiet pass. */
    readonly passMetrics: boolean;
  },
): void {
  const { config, observer } = deps;
  if (pass.healthUpdateFailures.length > 0) {
    // Upstream logs this per node ("Skipping - no pods will be evicted"); the trail has each failed write.
    observer.warn('node health could not be updated: the nodes are skipped in this pass', {
      cluster: config.cluster,
      count: pass.healthUpdateFailures.length,
      nodes: pass.healthUpdateFailures.slice(0, 10),
      observedAt: iso(figures.now),
    });
  }
  reportMetrics(observer, loaded, pass, figures);
}

/** The summary of a processed (or held) pass. */
function passSummary(
  cluster: string,
  digest: HeartbeatDigest,
  now: EpochMillis,
  { gapMs, gapReset }: DigestObservation,
  { attempts }: Pick<PassOptions, 'attempts'>,
  pass: {
    readonly nodes: number;
    readonly changes: number;
    readonly zoneStates: ControllerState['zoneStates'];
    readonly masterDisruption: boolean;
    readonly durationMs: number;
    readonly passMs: number;
    readonly drainerTriggered: boolean;
    readonly heldBy?: MonitorPassSummary['heldBy'];
    readonly waitingToRegister?: number;
    readonly waitingToMark?: number;
    readonly apiRequests?: number;
    readonly healthRowsBehind?: number;
    readonly queueEntriesBehind?: number;
  },
): MonitorPassSummary {
  return {
    cluster,
    sequence: digest.sequence,
    observedAt: now,
    nodes: pass.nodes,
    changes: pass.changes,
    zones: Object.fromEntries([...pass.zoneStates].map(([zone, z]) => [zoneLabel(zone), z])),
    masterDisruption: pass.masterDisruption,
    ...(gapMs !== undefined && { observationGapMs: gapMs }),
    observationGapReset: gapReset,
    durationMs: pass.durationMs,
    passMs: pass.passMs,
    attempts,
    drainerTriggered: pass.drainerTriggered,
    ...(pass.heldBy !== undefined && { heldBy: pass.heldBy }),
    ...(pass.waitingToRegister !== undefined &&
      pass.waitingToRegister > 0 && { waitingToRegister: pass.waitingToRegister }),
    ...(pass.waitingToMark !== undefined && pass.waitingToMark > 0 && { waitingToMark: pass.waitingToMark }),
    ...(pass.apiRequests !== undefined && pass.apiRequests > 0 && { apiRequests: pass.apiRequests }),
    ...(pass.healthRowsBehind !== undefined &&
      pass.healthRowsBehind > 0 && { healthRowsBehind: pass.healthRowsBehind }),
    ...(pass.queueEntriesBehind !== undefined &&
      pass.queueEntriesBehind > 0 && { queueEntriesBehind: pass.queueEntriesBehind }),
  };
}

/** The trail, log and metric of a pass held by lease confirmation. */
async function recordHeldPass(
  deps: MonitorDeps,
  executor: DecidingExecutor,
  held: Exclude<LeaseConfirmation, { kind: 'proceed' }>,
  now: EpochMillis,
): Promise<void> {
  const { config, observer } = deps;
  const cluster = config.cluster;
  const why =
    held.kind === 'stale'
      ? `tryUpdateNodeHealth: the API's Lease of ${held.node} (resourceVersion ${held.live}) is not the relay's copy (${held.cached === '' ? 'none' : held.cached}): the relay's lease cache is behind, so ${held.node} is not marked Unknown and node health updates are held until the relay has synced ${held.live} (PR #138698)`
      : held.kind === 'waiting'
        ? `node health updates held: the relay's lease cache has synced ${held.synced ?? 'nothing'}, not yet ${held.written} (PR #138698)`
        : `tryUpdateNodeHealth: the Lease of ${held.node} could not be read (${held.message}): it is not marked Unknown, node health updates are held for this pass`;
  await executor.record([
    {
      node: held.kind === 'waiting' ? ClusterSubject : held.node,
      what: 'leaseConfirmation',
      why,
      inputs: {
        result: held.kind,
        ...(held.kind === 'stale' && { cachedVersion: held.cached, liveVersion: held.live }),
        ...(held.kind === 'waiting' && { writtenVersion: held.written, syncedVersion: held.synced ?? null }),
      },
    },
  ]);
  observer.metric('nlc_lease_confirmation_holds_total', 'Count', 1);
  // Upstream logs the short-circuit as a node health update error ("Skipping - no pods will be evicted").
  const log = held.kind === 'waiting' ? observer.info.bind(observer) : observer.warn.bind(observer);
  log('node health updates held: lease confirmation (v1.37)', {
    cluster,
    result: held.kind,
    observedAt: new Date(now).toISOString(),
    ...(held.kind !== 'waiting' && { node: held.node }),
    ...(held.kind === 'stale' && { cachedVersion: held.cached, liveVersion: held.live }),
    ...(held.kind === 'waiting' && { writtenVersion: held.written, syncedVersion: held.synced ?? null }),
    ...(held.kind === 'lookupFailed' && { error: held.message }),
  });
}

/**
 * After a committed pass: start the drainer when something becomes due before the next pass: a zone
 * queue hands out an item within nodeMonitorPeriod (tryNext / nextHandOutAt on the committed queue), or,
 * in taint mode, a pod eviction timer is due within it (both on the functions' clock). The drainer waits in process for the instant (drainerWaitBudget),
 * so a token is used when it comes, not on the next pass. A failed invoke is logged, not thrown: the
 * pass is committed, and the drainer's own schedule runs within a minute (a retry of this event would
 * be a stale no-op and never trigger it either).
 */
async function triggerDrainerIfDue(
  deps: MonitorDeps,
  committed: LoadedState,
  now: EpochMillis,
  /** Until the next pass (clampNextPassWithin): what is due before it is this pass's to start. */
  horizon: Millis,
): Promise<boolean> {
  const { config, stores, observer, triggerDrainer, signal, clock } = deps;
  if (triggerDrainer === undefined) return false;
  const zones = [...committed.state.zoneQueues]
    .filter(([, queue]) => {
      const at = nextHandOutAt(queue, now - 1);
      return at !== undefined && at <= now + horizon;
    })
    .map(([zone]) => zoneLabel(zone));
  let podEvictionsDue = 0;
  if (zones.length === 0 && config.evictionMode === 'taint') {
    podEvictionsDue = (
      await stores.podEvictions.dueEvictions(
        config.cluster,
        clock.now() + horizon,
        signal === undefined ? {} : { signal },
      )
    ).length;
  }
  if (zones.length === 0 && podEvictionsDue === 0) return false;
  try {
    await triggerDrainer({
      source: 'nlc.monitor',
      cluster: config.cluster,
      reason: 'monitorPass',
      ...(horizon > config.nodeMonitorPeriod && { nextPassWithinMs: horizon }),
    });
  } catch (error) {
    observer.warn('could not start the eviction drainer; its schedule will run it', {
      cluster: config.cluster,
      error: error instanceof Error ? error.message : String(error),
    });
    return false;
  }
  observer.debug('eviction drainer started', { cluster: config.cluster, zones, podEvictionsDue });
  return true;
}
