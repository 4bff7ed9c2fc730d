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

/** A zone queue the pass changed: committed by merging onto the stored one (zoneQueues.ts). */
export interface QueueWrite {
  readonly zone: string;
  readonly queue: RateLimitedTimedQueue;
}

export interface CommitPlan {
  readonly healthWrites: readonly HealthWrite[];
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

/** What committing `after` over `loaded` writes. */
export function planCommit(loaded: LoadedState, after: StateAfterPass): CommitPlan {
  const healthWrites = planHealthWrites(loaded, after);
  const zoneStateWrites = planZoneStateWrites(loaded, after);
  const queueWrites: QueueWrite[] = [];
  for (const [zone, queue] of after.state.zoneQueues) {
    if (queue !== loaded.state.zoneQueues.get(zone)) queueWrites.push({ zone, queue });
  }
  // Against the row as stored: a warm function's meta may run ahead of it (positionMayWait).
  const stored = loaded.versions.storedMeta ?? loaded.meta;
  const metaChanged = !metaEqual(stored, after.meta);
  const fence = healthWrites.length + zoneStateWrites.length + queueWrites.length > 0;
  const positionDeferred =
    !fence && metaChanged && after.positionMayWait === true && metaEqualButPosition(stored, after.meta);
  return {
    healthWrites,
    zoneStateWrites,
    queueWrites,
    metaChanged,
    positionDeferred,
    fence,
    unchanged: !fence && (!metaChanged || positionDeferred),
  };
}

function planHealthWrites(loaded: LoadedState, after: StateAfterPass): HealthWrite[] {
  const state = after.state;
  const stored = loaded.versions.health;
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

  const writes: HealthWrite[] = [];
  for (const name of names) {
    const expected = stored.get(name);
    if (expected !== undefined && sameHealthEntries(loaded.state, state, name)) continue;
    const row = healthRowOf(state, name);
    const empty =
      row.registeredUid === undefined &&
      row.health === undefined &&
      !row.retry &&
      row.evictionStatus === undefined;
    // Nothing to store, and nothing stored to clear.
    if (empty && expected === undefined) continue;
    if (expected !== undefined && !healthNeedsWrite(healthRowOf(loaded.state, name), row)) continue;
    writes.push({ name, row, expected });
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
