// Port of upstream TimedWorkerQueue (pkg/controller/tainteviction/timed_workers.go, newest form with
// token-owned entries, commit 132c00c1) as plain data: the taint eviction controller's pending pod
// deletions, keyed by "namespace/name".
//
// What differs: upstream arms a clock.AfterFunc timer per entry and runs the work in a goroutine.
// Here an entry records the instant its timer would fire (`firesAt`); the caller asks `dueWork(now)`
// for what is due, then runs each item as upstream's timer callback does:
//   startFiring → (delete the pod) → completeWork(token).
// Work with no delay (`firing` from the start) is run by the caller right after `addWork`, then
// `completeWork`. `UpdateWork` and `CancelAndWait` are not ported: the first serves DRA device-taint
// eviction only, the second is process shutdown.
import type { EpochMillis, PodKey } from './types.js';

/** One queue entry: upstream's timedWorkerEntry together with its TimedWorker. */
export interface TimedWorkerEntry {
  readonly key: PodKey;
  /** WorkArgs.CreatedAt / TimedWorker.CreatedAt: the start of the toleration countdown. */
  readonly createdAt: EpochMillis;
  /** TimedWorker.FireAt: when the work was meant to run (also passed to the work function). */
  readonly fireAt: EpochMillis;
  /**
   * When the work actually runs. Upstream quirk (docs/upstream.md#quirk-22): the timer delay is
   * `fireAt - createdAt` counted from the moment AddWork is called, not `fireAt - now`, so this is
   * `addWork call time + (fireAt - createdAt)`. It equals `fireAt` whenever `createdAt` is the call time,
   * which is every call the controller makes except the replacement branch of processPodOnNode. For work with
   * no delay it is the call time.
   */
  readonly firesAt: EpochMillis;
  /** Entry ownership: a finishing worker removes the entry only if it still holds this token. */
  readonly token: number;
  /** Upstream `worker != nil`: the work waits on a timer (delay > 0), so CancelWork reports it. */
  readonly timerBacked: boolean;
  /** The work function is running (started at once, or its timer fired); the entry stays until it completes. */
  readonly firing: boolean;
}

export interface TimedWorkerQueue {
  /** Upstream `workers`, keyed by "namespace/name". Read it with {@link getEntry}. */
  readonly workers: Readonly<Record<PodKey, TimedWorkerEntry>>;
  /** The token the next entry gets. */
  readonly nextToken: number;
}

/** Upstream CreateWorkerQueue. */
export function createWorkerQueue(): TimedWorkerQueue {
  return { workers: {}, nextToken: 1 };
}

/** The entry under `key`, if any (own properties only: keys come from the cluster). */
export function getEntry(q: TimedWorkerQueue, key: PodKey): TimedWorkerEntry | undefined {
  return Object.hasOwn(q.workers, key) ? q.workers[key] : undefined;
}

function withEntry(q: TimedWorkerQueue, entry: TimedWorkerEntry, nextToken: number): TimedWorkerQueue {
  return { workers: { ...q.workers, [entry.key]: entry }, nextToken };
}

function withoutEntry(q: TimedWorkerQueue, key: PodKey): TimedWorkerQueue {
  const { [key]: _removed, ...workers } = q.workers;
  return { workers, nextToken: q.nextToken };
}

export type AddWorkResult =
  /** The key is already present, even as running immediate work: upstream logs
   * "Trying to add already existing work, skipping" and keeps the old entry. */
  | { readonly kind: 'skipped'; readonly queue: TimedWorkerQueue }
  /** Timer-backed: the work runs once `dueWork` reports it, at `entry.firesAt`. */
  | { readonly kind: 'scheduled'; readonly queue: TimedWorkerQueue; readonly entry: TimedWorkerEntry }
  /** `fireAt - createdAt <= 0`: the caller runs the work now, then calls `completeWork(entry.token)`. */
  | { readonly kind: 'firing'; readonly queue: TimedWorkerQueue; readonly entry: TimedWorkerEntry };

/**
 * Upstream AddWork: the work for `key` runs `fireAt - createdAt` after this call (`now`), or at once
 * when that is <= 0. An existing entry for the key wins. `token` lets a store supply its own entry
 * token; by default the queue's counter is used.
 */
export function addWork(
  q: TimedWorkerQueue,
  key: PodKey,
  createdAt: EpochMillis,
  fireAt: EpochMillis,
  now: EpochMillis,
  token?: number,
): AddWorkResult {
  if (getEntry(q, key) !== undefined) return { kind: 'skipped', queue: q };
  const entryToken = token ?? q.nextToken;
  const nextToken = Math.max(q.nextToken, entryToken + 1);
  const delay = fireAt - createdAt;
  if (delay <= 0) {
    const entry: TimedWorkerEntry = {
      key,
      createdAt,
      fireAt,
      firesAt: now,
      token: entryToken,
      timerBacked: false,
      firing: true,
    };
    return { kind: 'firing', queue: withEntry(q, entry, nextToken), entry };
  }
  const entry: TimedWorkerEntry = {
    key,
    createdAt,
    fireAt,
    firesAt: now + delay,
    token: entryToken,
    timerBacked: true,
    firing: false,
  };
  return { kind: 'scheduled', queue: withEntry(q, entry, nextToken), entry };
}

/**
 * Upstream CancelWork: removes the entry, whatever its state. `cancelled` is true only for a
 * timer-backed entry, including one whose timer already fired and whose work is still running
 * (upstream sets the worker's `cancelled` flag and stops the timer; the running work finishes anyway).
 * Running immediate work is removed but reported as not cancelled. The taint eviction controller
 * emits "Cancelling deletion of Pod ns/name" exactly when this returns true.
 */
export function cancelWork(
  q: TimedWorkerQueue,
  key: PodKey,
): { readonly queue: TimedWorkerQueue; readonly cancelled: boolean } {
  const entry = getEntry(q, key);
  if (entry === undefined) return { queue: q, cancelled: false };
  return { queue: withoutEntry(q, key), cancelled: entry.timerBacked };
}

/**
 * Upstream GetWorkerUnsafe: the timer-backed entry for `key`, firing or not; undefined when the key
 * is absent or holds running immediate work (upstream stores a nil worker for it).
 */
export function getWorkerUnsafe(q: TimedWorkerQueue, key: PodKey): TimedWorkerEntry | undefined {
  const entry = getEntry(q, key);
  return entry?.timerBacked === true ? entry : undefined;
}

/**
 * Timer-backed entries whose timer has fired by `now` (`firesAt <= now`, as a fake clock fires a timer
 * whose target is not after now) and whose work has not started, earliest first (ties by key).
 */
export function dueWork(q: TimedWorkerQueue, now: EpochMillis): TimedWorkerEntry[] {
  return Object.values(q.workers)
    .filter((entry) => entry.timerBacked && !entry.firing && entry.firesAt <= now)
    .sort((a, b) => a.firesAt - b.firesAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * The timer of the entry holding `token` fires: mark its work as running. `started` is false when that
 * entry is gone or was replaced (upstream: the cancelled flag makes the callback return without
 * running the work) or is already running; the caller then must not run the work.
 */
export function startFiring(
  q: TimedWorkerQueue,
  key: PodKey,
  token: number,
): { readonly queue: TimedWorkerQueue; readonly started: boolean } {
  const entry = getEntry(q, key);
  if (entry?.token !== token || entry.firing) return { queue: q, started: false };
  return { queue: withEntry(q, { ...entry, firing: true }, q.nextToken), started: true };
}

/**
 * The work of the entry holding `token` finished (successfully or not: upstream only logs errors).
 * Removes the entry only if it still holds that token, so a replacement added while the work was
 * running survives (newest upstream; older versions deleted whatever entry had the key, issue #107543).
 */
export function completeWork(q: TimedWorkerQueue, key: PodKey, token: number): TimedWorkerQueue {
  return getEntry(q, key)?.token === token ? withoutEntry(q, key) : q;
}
