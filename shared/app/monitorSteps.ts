// The monitor pass's pure steps (monitor.ts runs them with its I/O steps, in the order its module comment
// lists): what a digest says about the relay's observation, the state a pass starts from, the digest's
// leases, the nodes a pass decides on, the cluster row it records and master disruption after it. Pure:
// the inputs are the loaded state, the digest and the verdict on its clock; tested case by case in
// test/unit/app/monitorSteps.test.ts.
import type { ControllerConfig } from '../config.js';
import { ClusterSubject } from '../decisionContract.js';
import type { ControllerState } from '../domain/controllerState.js';
import type { MonitorPassResult } from '../domain/monitorNodeHealth.js';
import type { EpochMillis, Lease, Millis, Node } from '../domain/types.js';
import type { HeartbeatDigest } from '../events.js';
import { maxQuietDigestPeriod } from '../heartbeatDigest.js';
import { onFunctionsClock, type DigestVerdict } from '../digestClock.js';
import type { LogFields } from '../ports/observer.js';
import type { ClusterMeta, StoreVersions } from '../ports/stores.js';
import type { ClusterVersionFields } from './clusterVersion.js';
import type { DecisionDraft } from './decidedWrite.js';
import type { NodeChecks } from './reconcileNodes.js';

/** A digest judgeDigest accepted, with its instants' mapping onto the functions' clock. */
export type AcceptedDigest = Extract<DigestVerdict, { kind: 'accept' }>;

function iso(ms: EpochMillis): string {
  return new Date(ms).toISOString();
}

/**
 * Observation gap (docs/architecture.md#observation-gap): when digests resume after a silence longer than the
 * grace period, every node gets a fresh probe and ready-transition time (as upstream does when leaving master
 * disruption), so nobody is marked Unknown because the relay or the bus was down.
 */
function freshProbes(state: ControllerState, now: EpochMillis): ControllerState {
  const nodeHealth = new Map(
    [...state.nodeHealth].map(([name, health]) => [
      name,
      { ...health, probeTimestamp: now, readyTransitionTimestamp: now },
    ]),
  );
  return { ...state, nodeHealth };
}

/**
 * Legacy mode: upstream's doEvictionPass sets nodeEvictionMap[node] = evicted when it has deleted the
 * node's pods. Here the drainer does that work but the map lives in the monitor's Nodes health rows, so
 * the monitor reads it off the queue: a node marked toBeEvicted that is still in its zone's processed-once
 * set but no longer queued was drained (the drainer's completeTry removes it from the queue only then).
 */
export function reconcileLegacyEvictionStatus(state: ControllerState): ControllerState {
  let changed: Map<string, 'evicted'> | undefined;
  for (const queue of state.zoneQueues.values()) {
    const queued = new Set(queue.queue.map((v) => v.value));
    for (const name of queue.set) {
      if (queued.has(name) || state.nodeEvictionStatus.get(name) !== 'toBeEvicted') continue;
      (changed ??= new Map()).set(name, 'evicted');
    }
  }
  if (changed === undefined) return state;
  return { ...state, nodeEvictionStatus: new Map([...state.nodeEvictionStatus, ...changed]) };
}

/** A log line and the `#cluster` decision it goes with: what a digest says about the relay's observation. */
export interface ObservationNote {
  readonly level: 'info' | 'warn';
  readonly message: string;
  readonly fields: LogFields;
  readonly decision: DecisionDraft;
}

/** What an accepted digest says about observation, before the pass. */
export interface DigestObservation {
  /** Time since the previous processed digest (both on the functions' clock); undefined for the first. */
  readonly gapMs: number | undefined;
  /** The gap is longer than nodeMonitorGracePeriod: every node gets a fresh probe. */
  readonly gapReset: boolean;
  /** The relay's observingSince on its own clock, as the cluster row keeps it (a restart shows there). */
  readonly relayObservingSince: EpochMillis;
  /** To log and record, in this order: observation gap, observation restart, then relay term or clock. */
  readonly notes: readonly ObservationNote[];
}

/**
 * What the digest says about observation, against the cluster row: an observation gap
 * (docs/architecture.md#observation-gap), a relay that restarted its observation, a new relay term, or a
 * relay clock jump that re-based the term's offset. Pure: the caller logs and records the notes.
 */
export function observeDigest(
  meta: ClusterMeta,
  digest: Pick<HeartbeatDigest, 'relayId' | 'leaderSince' | 'observedAt' | 'observingSince'>,
  verdict: AcceptedDigest,
  config: Pick<ControllerConfig, 'cluster' | 'nodeMonitorGracePeriod'>,
): DigestObservation {
  const { cluster } = config;
  const { now, offset } = verdict;
  const notes: ObservationNote[] = [];

  const lastObservedAt = meta.lastObservedAt;
  const gapMs = lastObservedAt === undefined ? undefined : now - lastObservedAt;
  const gapReset = gapMs !== undefined && gapMs > config.nodeMonitorGracePeriod;
  if (gapReset) {
    notes.push({
      level: 'warn',
      message:
        'observation gap: digests resumed after more than the grace period; every node gets a fresh probe',
      fields: {
        cluster,
        gapSeconds: gapMs / 1000,
        lastObservedAt: iso(lastObservedAt ?? now),
        observedAt: iso(now),
        nodeMonitorGracePeriodSeconds: config.nodeMonitorGracePeriod / 1000,
      },
      decision: {
        node: ClusterSubject,
        what: 'observationGap',
        why:
          `no Heartbeat Digest processed for ${gapMs / 1000}s (more than nodeMonitorGracePeriod, ` +
          `${config.nodeMonitorGracePeriod / 1000}s): every node gets a fresh probe, nobody is marked Unknown`,
        inputs: {
          lastObservedAt: iso(lastObservedAt ?? now),
          observedAt: iso(now),
          gapSeconds: gapMs / 1000,
        },
      },
    });
  }

  // Compared on the relay's own clock (a restart shows as another instant there), shown on ours.
  const relayObservingSince = Math.min(digest.observingSince, digest.observedAt);
  const observingSince = onFunctionsClock(relayObservingSince, offset, now);
  if (
    meta.lastObservingSince !== undefined &&
    meta.lastObservingSince !== relayObservingSince &&
    !verdict.newTerm
  ) {
    // A relay restarted or another took over: its digests count every node it has a Lease or status
    // for as probed no earlier than observingSince (probeTracker.ts buildDigest).
    notes.push({
      level: 'info',
      message: 'relay observation restarted: nodes not seen renewing since count from then',
      fields: { cluster, relayId: digest.relayId, observingSince: iso(observingSince) },
      decision: {
        node: ClusterSubject,
        what: 'observationRestart',
        why:
          `relay ${digest.relayId} has observed the node Leases since ${iso(observingSince)} (a restart or a ` +
          'failover): a node it has not seen renew since then is taken as probed at that instant, as ' +
          'upstream gives every node a fresh probe when its controller starts',
        inputs: {
          observingSince: iso(observingSince),
          relayId: digest.relayId,
        },
      },
    });
  }

  if (verdict.newTerm) {
    // Another relay term: the previous one's clock offset no longer applies; this one's is taken from
    // this digest (docs/architecture.md#digest-time).
    const verified = verdict.verified ?? false;
    const previous = meta.lastRelayId !== undefined && { previousRelayId: meta.lastRelayId };
    notes.push({
      level: 'info',
      message: 'relay term accepted',
      fields: {
        cluster,
        relayId: digest.relayId,
        leaderSince: iso(digest.leaderSince),
        verified,
        clockOffsetMs: offset,
        ...previous,
      },
      decision: {
        node: ClusterSubject,
        what: 'relayTerm',
        why: verified
          ? `relay ${digest.relayId} holds the leader Lease since ${iso(digest.leaderSince)}: its digests are accepted from now on, on its own clock offset`
          : `relay ${digest.relayId} leads since ${iso(digest.leaderSince)}; no leader Lease exists to check it against (a relay without leader election)`,
        inputs: {
          relayId: digest.relayId,
          leaderSince: iso(digest.leaderSince),
          clockOffsetMs: offset,
          verified,
          ...previous,
        },
      },
    });
  } else if (verdict.rebased !== undefined) {
    notes.push({
      level: 'warn',
      message: "relay clock jumped: its term's offset is re-based",
      fields: {
        cluster,
        relayId: digest.relayId,
        direction: verdict.rebased,
        previousClockOffsetMs: meta.clockOffset,
        clockOffsetMs: offset,
      },
      decision: {
        node: ClusterSubject,
        what: 'relayClock',
        why: `the relay's clock jumped ${verdict.rebased === 'ahead' ? 'forward' : 'back'} by ${Math.round(Math.abs(offset - (meta.clockOffset ?? offset)) / 1000)}s (two digests in a row agree): its instants are moved onto the functions' clock by the new offset`,
        inputs: { previousClockOffsetMs: meta.clockOffset ?? null, clockOffsetMs: offset },
      },
    });
  }
  return { gapMs, gapReset, relayObservingSince, notes };
}

/**
 * A relay whose quiet period is over a third of this grace period (its NLC_NODE_MONITOR_GRACE_PERIOD is
 * not the functions'): quiet gaps may then pass the grace period and be taken for observation gaps,
 * every node a fresh probe, and a silent node marked late. The functions cannot make the relay send
 * sooner; they say so. Undefined when the period fits (or there is none).
 */
export function quietPeriodTooLong(
  digest: Pick<HeartbeatDigest, 'quietPeriodMs'>,
  config: Pick<ControllerConfig, 'nodeMonitorGracePeriod'>,
): { readonly quietPeriodMs: number; readonly mostMs: number } | undefined {
  const most = maxQuietDigestPeriod(config);
  const quiet = digest.quietPeriodMs;
  return quiet !== undefined && quiet > most ? { quietPeriodMs: quiet, mostMs: most } : undefined;
}

/**
 * The cluster row says the last commit left health rows lagging (StoreSettings.healthWritesPerCommit),
 * and this state does not know which: a cold load, or a full one after another monitor's commit. A
 * lagging row may hold a Ready condition or a fresh probe from before the state that was decided on,
 * and an older probe could mark a node sooner than that state would have. So every node gets a fresh
 * probe and ready-transition time, as upstream's nodeHealthMap after a controller restart (and as after
 * an observation gap): silent nodes are then marked a grace period later, never sooner.
 */
export function healthRowsLagUnknown(
  meta: Pick<ClusterMeta, 'healthRowsBehind'>,
  pendingHealth: StoreVersions['pendingHealth'],
): boolean {
  return (meta.healthRowsBehind ?? 0) > 0 && (pendingHealth ?? []).length === 0;
}

/**
 * The state the pass starts from: the loaded one with every node freshly probed after an observation
 * gap, and, in legacy mode, the nodes the drainer has drained marked evicted.
 */
export function passStartState(
  loaded: ControllerState,
  gapReset: boolean,
  now: EpochMillis,
  evictionMode: ControllerConfig['evictionMode'],
): ControllerState {
  let state = loaded;
  if (gapReset) state = freshProbes(state, now);
  if (evictionMode === 'legacy') state = reconcileLegacyEvictionStatus(state);
  return state;
}

/**
 * The digest's probes as the pass's leases, on the functions' clock and none after `now`: a relay clock
 * that ran ahead cannot push a stored probe into the future (probeTimestamp keeps the latest one).
 */
export function digestLeases(
  digest: Pick<HeartbeatDigest, 'probes'>,
  offset: number,
  now: EpochMillis,
): Map<string, Lease> {
  const leases = new Map<string, Lease>();
  digest.probes.forEach((at, name) => leases.set(name, { renewTime: onFunctionsClock(at, offset, now) }));
  return leases;
}

/**
 * The nodes the pass decides on, in name order: the cached copies, the API's copy where a check found
 * one different, none the API no longer has, and the nodes read because the cache lacked them.
 */
export function passNodes(
  cached: ReadonlyMap<string, Node>,
  checked: Pick<NodeChecks, 'corrected' | 'gone'>,
  fetched: ReadonlyMap<string, Node>,
): Node[] {
  const nodes: Node[] = [];
  for (const node of cached.values()) {
    if (!checked.gone.has(node.name)) nodes.push(checked.corrected.get(node.name)?.live ?? node);
  }
  nodes.push(...fetched.values());
  nodes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return nodes;
}

/**
 * The cluster row a committed pass records (but masterDisruption, which the pass decides): the digest's
 * position and observation instants, the settings the monitor ran with, and the relay term's clock.
 */
export function processedMeta(
  meta: ClusterMeta,
  digest: Pick<HeartbeatDigest, 'sequence' | 'leaderSince' | 'relayId'>,
  verdict: AcceptedDigest,
  config: Pick<ControllerConfig, 'nodeMonitorGracePeriod' | 'emulationVersion' | 'dryRun'>,
  relayObservingSince: EpochMillis,
  clusterVersion: ClusterVersionFields,
): Omit<ClusterMeta, 'masterDisruption'> {
  const { now } = verdict;
  return {
    lastSequence: digest.sequence,
    lastObservedAt: now,
    lastLeaderSince: digest.leaderSince,
    lastRelayId: digest.relayId,
    relayLastSeen: now,
    lastObservingSince: relayObservingSince,
    nodeMonitorGracePeriodMs: config.nodeMonitorGracePeriod,
    emulationVersion: config.emulationVersion,
    dryRun: config.dryRun,
    ...clusterVersion,
    clockOffset: verdict.offset,
    ...(verdict.candidate !== undefined && { clockCandidate: verdict.candidate }),
    termVerified: verdict.newTerm ? (verdict.verified ?? false) : (meta.termVerified ?? false),
  };
}

/** masterDisruption after the pass: entered, kept while it stays, cleared otherwise. */
export function masterDisruptionAfter(
  transition: MonitorPassResult['disruption']['masterDisruption'],
  before: boolean,
): boolean {
  return transition === 'enter' ? true : transition === 'stay' ? before : false;
}

/** What summaryReason reads of a pass's summary (MonitorPassSummary, monitor.ts). */
export interface PassFigures {
  readonly changes: number;
  readonly observationGapMs?: number;
  readonly observationGapReset: boolean;
  readonly attempts: number;
  readonly waitingToRegister?: number;
  readonly healthRowsBehind?: number;
  readonly queueEntriesBehind?: number;
  readonly drainerTriggered: boolean;
  readonly heldBy?: string;
  readonly durationMs: number;
}

/**
 * Why a pass's summary line is written at info level, with its duration and gap metrics, or undefined
 * when it is only a debug line (docs/monitor.md#log-lines). `changed`: the pass did or saw something an
 * operator reads: a decision recorded, a digest missing before it (a gap over two monitor periods), a
 * lost race, nodes waiting to register, the drainer started, a held pass, or a pass slower than the
 * monitor period. `minute`: the first pass of a minute of digest time (the same rule as the zone
 * gauges), so a steady cluster shows one line a minute, and two lines' sequences show how many digests
 * the minute had. `previousObservedAt` is the previous processed digest's time.
 */
export function summaryReason(
  pass: PassFigures,
  previousObservedAt: EpochMillis | undefined,
  now: EpochMillis,
  config: Pick<ControllerConfig, 'nodeMonitorPeriod'>,
  /** The digests' period as this one states it (the relay's quiet period): a gap of two is no miss. */
  digestPeriod: Millis = config.nodeMonitorPeriod,
): 'changed' | 'minute' | undefined {
  const period = config.nodeMonitorPeriod;
  const expectedGap = Math.max(period, digestPeriod);
  if (
    pass.changes > 0 ||
    pass.observationGapReset ||
    (pass.observationGapMs ?? 0) > 2 * expectedGap ||
    pass.attempts > 1 ||
    (pass.waitingToRegister ?? 0) > 0 ||
    (pass.healthRowsBehind ?? 0) > 0 ||
    (pass.queueEntriesBehind ?? 0) > 0 ||
    pass.drainerTriggered ||
    pass.heldBy !== undefined ||
    pass.durationMs > period
  ) {
    return 'changed';
  }
  if (
    previousObservedAt === undefined ||
    Math.floor(previousObservedAt / 60_000) !== Math.floor(now / 60_000)
  ) {
    return 'minute';
  }
  return undefined;
}

/**
 * How long a quiet pass may leave the cluster row's position unwritten: half the grace period (25 s by
 * default), so that after a cold start the previous digest the row names is at most that much older
 * than the last one processed, and the next digest's gap stays well under the grace period
 * (docs/state.md#the-position-of-quiet-passes).
 */
export function positionWriteEvery(config: Pick<ControllerConfig, 'nodeMonitorGracePeriod'>): number {
  return config.nodeMonitorGracePeriod / 2;
}

/**
 * Whether a quiet pass (no decision recorded, no node read from the API) may leave its position
 * unwritten: the row's position (`stored`, what a cold start would load) is younger than
 * positionWriteEvery at `now`. The store writes the row anyway when anything else changed.
 */
export function positionMayWait(
  stored: Pick<ClusterMeta, 'lastObservedAt'>,
  quiet: boolean,
  now: EpochMillis,
  config: Pick<ControllerConfig, 'nodeMonitorGracePeriod'>,
): boolean {
  return (
    quiet && stored.lastObservedAt !== undefined && now - stored.lastObservedAt < positionWriteEvery(config)
  );
}
