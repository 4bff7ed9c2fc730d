// What a monitor commit writes, decided apart from the writing: which health rows (and the version each
// is conditional on), which zone rows, which queues, whether the cluster row changes, and whether the
// fence is needed. Pure, so the write-on-change rules (docs/state.md "Write on change") are tested as a
// table (test/unit/adapters/dynamodb/commitPlan.test.ts); controllerStateStore.ts's commit carries it out.
//
// It runs on every pass over every node: identity comparisons first, so a pass that touched no node
// builds no rows.
import type { RateLimitedTimedQueue } from '../../domain/rateLimitedTimedQueue.js';
import type { ZoneState } from '../../domain/types.js';
import type { LoadedState, StateAfterPass, ZoneGaugeValues } from '../../ports/stores.js';
import { gaugeEqual, metaEqual, metaEqualButPosition } from './clusterRows.js';
import {
  healthDataNeedsWrite,
  healthNeedsWrite,
  healthRowOf,
  sameHealthEntries,
  type HealthRow,
} from './healthRows.js';

/** One node's health group to write, conditional on the version loaded (undefined: no stored row yet). */
export interface HealthWrite {
  readonly name: string;
  readonly row: HealthRow;
  readonly expected: number | undefined;
}

/** One zone row's state group to write: the zone state (undefined: the zone is gone) and changed gauges. */
export interface ZoneStateWrite {
  readonly zone: string;
  readonly state: ZoneState | undefined;
  /** Present only when the gauges changed: a state change alone leaves the stored gauges as they are. */
  readonly gauge: ZoneGaugeValues | undefined;
}

/**
 * A zone queue the pass changed, or whose stored entries lag (ZoneQueueVersion.behind): committed by
 * merging onto the stored one (zoneQueues.ts).
 */
export interface QueueWrite {
  readonly zone: string;
  readonly queue: RateLimitedTimedQueue;
}

export interface CommitPlan {
  readonly healthWrites: readonly HealthWrite[];
  /**
   * Nodes whose health-only change waits for a later commit (CommitLimits.healthWrites), oldest first:
   * the committed LoadedState's versions.pendingHealth.
   */
  readonly deferredHealth: readonly string[];
  readonly zoneStateWrites: readonly ZoneStateWrite[];
  readonly queueWrites: readonly QueueWrite[];
  /** The cluster row's meta differs from the one stored. */
  readonly metaChanged: boolean;
  /**
   * Only the position moved, the pass said it may wait, and no other row is written: the cluster row
   * is not written (docs/state.md#the-position-of-quiet-passes).
   */
  readonly positionDeferred: boolean;
  /**
   * Rows to write besides the cluster row: claim the cluster row first, keeping the old meta (the
   * fence), and record the new meta only after them. A pass that writes only the cluster row needs none.
   */
  readonly fence: boolean;
  /** Nothing to write at all, not even the cluster row. */
  readonly unchanged: boolean;
}

export interface CommitLimits {
  /**
   * Health rows written for health-only changes (StoreSettings.healthWritesPerCommit). Rows that also
   * register, forget, retry or change a node's eviction status are always written.
   */
  readonly healthWrites: number;
}

const Unlimited: CommitLimits = { healthWrites: Number.POSITIVE_INFINITY };

/** What committing `after` over `loaded` writes. */
export function planCommit(
  loaded: LoadedState,
  after: StateAfterPass,
  limits: CommitLimits = Unlimited,
): CommitPlan {
  const { healthWrites, deferredHealth } = paceHealthWrites(
    planHealthWrites(loaded, after),
    loaded,
    limits.healthWrites,
  );
  const zoneStateWrites = planZoneStateWrites(loaded, after);
  const queueWrites: QueueWrite[] = [];
  for (const [zone, queue] of after.state.zoneQueues) {
    // A queue whose last commit left entries for later is written even when the pass changed nothing.
    const behind = (loaded.versions.zoneQueues.get(zone)?.behind ?? 0) > 0;
    if (behind || queue !== loaded.state.zoneQueues.get(zone)) queueWrites.push({ zone, queue });
  }
  // Against the row as stored: a warm function's meta may run ahead of it (positionMayWait).
  const stored = loaded.versions.storedMeta ?? loaded.meta;
  const metaChanged = !metaEqual(stored, after.meta);
  const fence = healthWrites.length + zoneStateWrites.length + queueWrites.length > 0;
  const positionDeferred =
    !fence && metaChanged && after.positionMayWait === true && metaEqualButPosition(stored, after.meta);
  return {
    healthWrites,
    deferredHealth,
    zoneStateWrites,
    queueWrites,
    metaChanged,
    positionDeferred,
    fence,
    unchanged: !fence && (!metaChanged || positionDeferred),
  };
}

/** A health write, and whether it changes the health entry alone (it may wait: paceHealthWrites). */
interface PlannedHealthWrite extends HealthWrite {
  readonly healthOnly: boolean;
}

/**
 * Writes every row that registers, forgets, retries or changes an eviction status, and at most `limit`
 * rows whose change is the health entry alone: those left behind first (loaded.versions.pendingHealth,
 * in their order), then the new ones in name order. The rest wait, in that order.
 *
 * Why waiting is safe: the warm function's state holds every change, and decides from it; the stored
 * row is what another instance loads after a cold start or another monitor's commit, and there a
 * lagging Ready condition is what upstream's restarted controller starts from (nodeHealthMap rebuilt
 * from the nodes): the next pass takes the node's condition again (tryUpdateNodeHealth), only with a
 * later readyTransitionTimestamp. The pod worker, which reads the stored row, checks a not-Ready one
 * against the API before marking pods (podProcessing.ts).
 */
function paceHealthWrites(
  planned: readonly PlannedHealthWrite[],
  loaded: LoadedState,
  limit: number,
): { healthWrites: HealthWrite[]; deferredHealth: string[] } {
  const healthWrites: HealthWrite[] = [];
  const healthOnly = new Map<string, HealthWrite>();
  for (const { healthOnly: only, ...write } of planned) {
    if (only) healthOnly.set(write.name, write);
    else healthWrites.push(write);
  }
  if (healthOnly.size <= limit)
    return { healthWrites: [...healthWrites, ...healthOnly.values()], deferredHealth: [] };
  const order: string[] = [];
  for (const name of loaded.versions.pendingHealth ?? []) if (healthOnly.has(name)) order.push(name);
  const waiting = new Set(order);
  order.push(...[...healthOnly.keys()].filter((name) => !waiting.has(name)).sort(compareNames));
  for (const name of order.slice(0, limit)) {
    const write = healthOnly.get(name);
    if (write !== undefined) healthWrites.push(write);
  }
  return { healthWrites, deferredHealth: order.slice(limit) };
}

const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function planHealthWrites(loaded: LoadedState, after: StateAfterPass): PlannedHealthWrite[] {
  const state = after.state;
  const stored = loaded.versions.health;
  // Rows an earlier commit left behind: their stored row lags loaded.state, so they are written even
  // when the pass changed nothing more (and compared with nothing: the stored row is not at hand).
  const pending = new Set(loaded.versions.pendingHealth ?? []);
  // What changed: the nodes whose health entries are not the very same values as loaded (a node the
  // pass left alone, most nodes on most passes, needs no row comparison), and any without a stored row.
  const names = new Set<string>();
  const differing = <V>(before: ReadonlyMap<string, V>, now: ReadonlyMap<string, V>): void => {
    for (const [name, value] of now) {
      if (before.get(name) !== value || !stored.has(name)) names.add(name);
    }
    for (const name of before.keys()) if (!now.has(name)) names.add(name);
  };
  differing(loaded.state.knownNodes, state.knownNodes);
  // Every pass gives each renewing node a new health entry (its probe and lease) that needs no write:
  // those are told apart here, without building its rows. A node whose other entries changed is named
  // by their comparisons, and its whole row compared below.
  for (const [name, health] of state.nodeHealth) {
    const before = loaded.state.nodeHealth.get(name);
    if (
      stored.has(name) &&
      (before === health || (before !== undefined && !healthDataNeedsWrite(before, health)))
    )
      continue;
    names.add(name);
  }
  for (const name of loaded.state.nodeHealth.keys()) if (!state.nodeHealth.has(name)) names.add(name);
  differing(loaded.state.nodeEvictionStatus, state.nodeEvictionStatus);
  for (const name of state.nodesToRetry) {
    if (!loaded.state.nodesToRetry.has(name) || !stored.has(name)) names.add(name);
  }
  for (const name of loaded.state.nodesToRetry) if (!state.nodesToRetry.has(name)) names.add(name);
  for (const name of pending) names.add(name);

  const writes: PlannedHealthWrite[] = [];
  for (const name of names) {
    const expected = stored.get(name);
    const lagging = pending.has(name);
    if (!lagging && expected !== undefined && sameHealthEntries(loaded.state, state, name)) continue;
    const before = healthRowOf(loaded.state, name);
    const row = healthRowOf(state, name);
    const empty =
      row.registeredUid === undefined &&
      row.health === undefined &&
      !row.retry &&
      row.evictionStatus === undefined;
    // Nothing to store, and nothing stored to clear.
    if (empty && expected === undefined) continue;
    if (!lagging && expected !== undefined && !healthNeedsWrite(before, row)) continue;
    // A pending row's other fields are as stored (only health-only changes wait), so comparing with
    // loaded.state tells whether they change now.
    const healthOnly =
      expected !== undefined &&
      before.registeredUid === row.registeredUid &&
      before.retry === row.retry &&
      before.evictionStatus === row.evictionStatus;
    writes.push({ name, row, expected, healthOnly });
  }
  return writes;
}

function planZoneStateWrites(loaded: LoadedState, after: StateAfterPass): ZoneStateWrite[] {
  const state = after.state;
  const gauges = new Map((after.gauges ?? []).map(({ zone, ...g }) => [zone, g]));
  const writes: ZoneStateWrite[] = [];
  for (const zone of new Set([
    ...loaded.state.zoneStates.keys(),
    ...state.zoneStates.keys(),
    ...gauges.keys(),
  ])) {
    const zoneState = state.zoneStates.get(zone);
    const gauge = gauges.get(zone);
    const gaugeChanged = gauge !== undefined && !gaugeEqual(loaded.zones.get(zone), gauge);
    if (zoneState === loaded.state.zoneStates.get(zone) && !gaugeChanged) continue;
    writes.push({ zone, state: zoneState, gauge: gaugeChanged ? gauge : undefined });
  }
  return writes;
}
