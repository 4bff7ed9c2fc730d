// shared/domain/rateLimitedTimedQueue.ts: port of upstream RateLimitedTimedQueue, UniqueQueue,
// TimedQueue and TimedValue (pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go).
//
// What differs:
// - The queue is plain serializable data and every operation returns a new value; upstream mutates
//   under two locks.
// - Time is an argument; upstream reads a package-level `now` (and the limiter its own clock).
// - Try's callback becomes a returned plan: tryNext hands out the head to process, the caller does
//   its I/O, then completeTry records the outcome. tryQueue runs upstream's whole loop in memory.
// - Upstream's min-heap becomes an array sorted by processAt, ties in insertion order (see `queue`).
// - UniqueQueue.Get is not ported: RateLimitedTimedQueue never calls it (nor TestUniqueQueueGet).
// - Deviation (see docs/upstream-deviations.md): a token spent on an item is bound to it until its
//   completeTry (TokenClaim). Upstream holds evictorLock for the whole Try loop, so nobody looks at the
//   head while its callback runs; here several drainers run at once, each between tryNext and
//   completeTry for as long as its write takes, and without the claim a second one would spend another
//   token on the same head (docs/monitor.md, "One drainer run").
import type { EpochMillis, Millis } from './types.js';
import {
  type RateLimiter,
  fakeNeverRateLimiter,
  limiterQPS,
  newTokenBucketRateLimiter,
  tryAccept,
} from './tokenBucket.js';

/** Upstream EvictionRateLimiterBurst: the burst of every eviction (tainting) rate limiter. */
export const EvictionRateLimiterBurst = 1;
/** Upstream NodeEvictionPeriod: how often the NoExecute tainting (or eviction) pass runs. */
export const NodeEvictionPeriod: Millis = 100; // ms

/** Upstream time.Duration(1) added to a retry's ProcessAt, in milliseconds. */
const NANOSECOND: Millis = 1e-6;

/** Upstream TimedValue: a value (a node name) that should be processed at a designated time. */
export interface TimedValue {
  readonly value: string;
  /** Anything that helps identify the value (upstream passes the node UID). */
  readonly uid: string;
  readonly addedAt: EpochMillis;
  readonly processAt: EpochMillis;
  /** Not upstream: present while a token spent on this item awaits its completeTry (see TokenClaim). */
  readonly claim?: TokenClaim;
}

/**
 * Not upstream: the token tryNext spent on an item, bound to it until completeTry. While `until` has
 * not come, the holder may still be writing: tryNext hands the item to nobody else and moves on to
 * the next unclaimed item, which needs a token of its own. From `until` on (the holder crashed, or
 * is still retrying a slow write), tryNext hands the item to the next caller WITHOUT a token, as the
 * token was spent on it: the item keeps its place, as upstream's head does while its callback runs.
 * Only the claim an item was handed out under completes it (completeTry).
 */
export interface TokenClaim {
  /** Who holds it: the drainer run that took the token, or that took the item over. */
  readonly by: string;
  /** The `now` of the tryNext that handed the item out (the queue's clock). */
  readonly at: EpochMillis;
  /** From this instant on, the next tryNext takes the item over without a token. */
  readonly until: EpochMillis;
}

/** Who asks tryNext for an item, and for how long it may hold the item before others take it over. */
export interface Claimant {
  readonly by: string;
  readonly ttl: Millis;
}

/** Upstream RateLimitedTimedQueue: a unique-item queue ordered by next processing time, rate limited. */
export interface RateLimitedTimedQueue {
  /**
   * Upstream UniqueQueue.queue (a TimedQueue min-heap on ProcessAt). Kept sorted by processAt
   * ascending, ties in insertion order (a Replace counts as a new insertion): a deterministic
   * stand-in for the heap, whose order among equal ProcessAt upstream leaves unspecified. The head
   * is the same item upstream's heap would give whenever processAt values differ.
   */
  readonly queue: readonly TimedValue[];
  /**
   * Upstream UniqueQueue.set: every value queued, or processed once and not removed since.
   * A value stays here after it is processed, so it can't be added again until `remove`.
   */
  readonly set: readonly string[];
  readonly limiter: RateLimiter;
}

/** Upstream NewRateLimitedTimedQueue(limiter): empty, overseen by `limiter`. */
export function newRateLimitedTimedQueue(limiter: RateLimiter): RateLimitedTimedQueue {
  return { queue: [], set: [], limiter };
}

/**
 * Upstream RateLimitedTimedQueue.Add(value, uid): queue the value for processing at `now`, unless
 * it was added before and not removed since (compared by value only). `added` is false then, and
 * the queue is returned unchanged (same object).
 */
export function add(
  q: RateLimitedTimedQueue,
  value: string,
  uid: string,
  now: EpochMillis,
): { queue: RateLimitedTimedQueue; added: boolean } {
  if (q.set.includes(value)) return { queue: q, added: false };
  const item: TimedValue = { value, uid, addedAt: now, processAt: now };
  return { queue: { ...q, queue: insertByProcessAt(q.queue, item), set: [...q.set, value] }, added: true };
}

/**
 * Upstream Remove(value): forget the value, so it is not processed until added again, and allow a
 * later Add. `removed` is true if the value was in the set, even if it was no longer queued
 * (already processed); false and the same object otherwise.
 */
export function remove(
  q: RateLimitedTimedQueue,
  value: string,
): { queue: RateLimitedTimedQueue; removed: boolean } {
  if (!q.set.includes(value)) return { queue: q, removed: false };
  return {
    queue: { ...q, queue: q.queue.filter((v) => v.value !== value), set: q.set.filter((s) => s !== value) },
    removed: true,
  };
}

/**
 * Upstream UniqueQueue.RemoveFromQueue(value): take the value out of the queue but keep it in the
 * set, so it won't be added a second time. `removed` is true only if it was queued.
 */
export function removeFromQueue(
  q: RateLimitedTimedQueue,
  value: string,
): { queue: RateLimitedTimedQueue; removed: boolean } {
  if (!q.set.includes(value) || !q.queue.some((v) => v.value === value)) return { queue: q, removed: false };
  return { queue: { ...q, queue: q.queue.filter((v) => v.value !== value) }, removed: true };
}

/**
 * Upstream UniqueQueue.Replace(value): replace the queued entry with the same value (new
 * processAt). If none is queued nothing happens, the set is untouched, and `replaced` is false.
 */
export function replace(
  q: RateLimitedTimedQueue,
  item: TimedValue,
): { queue: RateLimitedTimedQueue; replaced: boolean } {
  if (!q.queue.some((v) => v.value === item.value)) return { queue: q, replaced: false };
  const rest = q.queue.filter((v) => v.value !== item.value);
  return { queue: { ...q, queue: insertByProcessAt(rest, item) }, replaced: true };
}

/** Upstream Clear(): empty the queue and the set (the limiter is kept). */
export function clear(q: RateLimitedTimedQueue): RateLimitedTimedQueue {
  return { ...q, queue: [], set: [] };
}

/** Upstream UniqueQueue.Head(): the entry with the earliest processAt, still queued. */
export function head(q: RateLimitedTimedQueue): TimedValue | undefined {
  return q.queue[0];
}

/**
 * One iteration of upstream Try's loop, up to calling its callback. With an empty queue nothing
 * happens (no token is taken). Otherwise:
 * Upstream quirk: a token is taken FIRST, then the head's processAt is checked; a head that is not
 * due yet wastes the token.
 * `item` is the head to process now (still queued); absent when rate limited or not due, which ends
 * upstream's loop. `queue` carries the limiter state and must be kept either way.
 *
 * Not upstream, claims (TokenClaim): with a `claimant`, the item handed out carries its claim, written
 * in the same queue state as the token withdrawal. Items claimed by others are skipped while their claim
 * lasts ("the head" is then the first unclaimed item; with none, nothing happens, as with an empty
 * queue), and an item whose claim ran out is handed out first, without a token (`takenOver`).
 */
export function tryNext(
  q: RateLimitedTimedQueue,
  now: EpochMillis,
  claimant?: Claimant,
): { queue: RateLimitedTimedQueue; item?: TimedValue; takenOver?: true } {
  // Its token was spent when it was first handed out: taking it over spends none.
  const stale = q.queue.find((v) => v.claim !== undefined && now >= v.claim.until);
  if (stale !== undefined) {
    const item = claimed(stale, claimant, now);
    return { queue: withEntry(q, item), item, takenOver: true };
  }
  const first = q.queue.find((v) => v.claim === undefined);
  if (first === undefined) return { queue: q };
  const { accepted, limiter } = tryAccept(q.limiter, now);
  const limited = limiter === q.limiter ? q : { ...q, limiter };
  if (!accepted || now < first.processAt) return { queue: limited };
  const item = claimed(first, claimant, now);
  return { queue: withEntry(limited, item), item };
}

/**
 * The item tryNext would hand out at `now` if the limiter had a token, without taking one: an item
 * whose claim ran out, else the first unclaimed item if it is due. Not upstream (its Try peeks
 * nothing); the drainer reads this item's node before it spends a token on it.
 */
export function peekNext(q: RateLimitedTimedQueue, now: EpochMillis): TimedValue | undefined {
  const stale = q.queue.find((v) => v.claim !== undefined && now >= v.claim.until);
  if (stale !== undefined) return stale;
  const first = q.queue.find((v) => v.claim === undefined);
  return first !== undefined && first.processAt <= now ? first : undefined;
}

function claimed(item: TimedValue, claimant: Claimant | undefined, now: EpochMillis): TimedValue {
  if (claimant === undefined) return item;
  return { ...item, claim: { by: claimant.by, at: now, until: now + claimant.ttl } };
}

/** `q` with `item` in place of the queued entry of the same value (same position); `q` itself if unchanged. */
function withEntry(q: RateLimitedTimedQueue, item: TimedValue): RateLimitedTimedQueue {
  const index = q.queue.findIndex((v) => v.value === item.value);
  if (index === -1 || q.queue[index] === item) return q;
  return { ...q, queue: q.queue.with(index, item) };
}

function sameClaim(a: TokenClaim | undefined, b: TokenClaim | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.by === b.by && a.at === b.at);
}

/** Outcome of processing an item: upstream ActionFunc's (done, wait). */
export type TryResult = { readonly done: true } | { readonly done: false; readonly wait: Millis };

/**
 * The rest of upstream Try's iteration, after its callback returned `result` for `item`.
 * `now` is the instant given to tryNext for this item (upstream's `t`).
 * - done: RemoveFromQueue; the value stays in the set, so it is processed only once until `remove`.
 * - not done: retry at now + wait + 1ns (Replace), a no-op if the value was removed meanwhile.
 * Either way the item's claim ends with it. Not upstream: a no-op, the same object returned, when the
 * queued entry no longer carries the claim `item` was handed out under (another caller took it over, or
 * it was removed and queued again), or when `item` carries none and another caller's claim on the entry
 * still lasts at `now`: that caller completes it.
 */
export function completeTry(
  q: RateLimitedTimedQueue,
  item: TimedValue,
  result: TryResult,
  now: EpochMillis,
): RateLimitedTimedQueue {
  const entry = q.queue.find((v) => v.value === item.value);
  if (entry !== undefined && !sameClaim(entry.claim, item.claim)) {
    if (item.claim !== undefined || (entry.claim !== undefined && now < entry.claim.until)) return q;
  }
  if (result.done) return removeFromQueue(q, item.value).queue;
  const { claim: _spent, ...retry } = item;
  return replace(q, { ...retry, processAt: strictlyAfter(now + result.wait) }).queue;
}

/**
 * Upstream `t.Add(wait + 1)`: one nanosecond later, so the retry sorts after `t + wait`. At epoch
 * magnitudes (~1.7e12 ms) doubles are ~2.4e-4 ms apart and `+ 1e-6` rounds away; we then take the
 * next representable instant, which keeps "strictly after".
 */
function strictlyAfter(at: EpochMillis): EpochMillis {
  const bumped = at + NANOSECOND;
  return bumped > at ? bumped : nextUp(at);
}

/** The smallest double greater than `x` (finite, not 0: those are handled by `+ NANOSECOND`). */
function nextUp(x: number): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigInt64(0);
  view.setBigInt64(0, x > 0 ? bits + 1n : bits - 1n);
  return view.getFloat64(0);
}

/**
 * Upstream Try(fn), whole: process due items while the limiter allows, in processAt order. `fn`
 * returns done, or not done with an optional minimum wait before the retry (upstream ActionFunc).
 * `clock` is read once per iteration (upstream reads `now()` once per iteration, after TryAccept;
 * here the same reading also feeds the limiter, whose own clock upstream reads inside TryAccept).
 * For I/O between the steps, use tryNext and completeTry.
 */
export function tryQueue(
  q: RateLimitedTimedQueue,
  clock: () => EpochMillis,
  fn: (v: TimedValue) => { done: boolean; wait?: Millis },
): RateLimitedTimedQueue {
  let current = q;
  while (current.queue.length > 0) {
    const now = clock();
    const step = tryNext(current, now);
    current = step.queue;
    if (step.item === undefined) break;
    const { done, wait = 0 } = fn(step.item);
    current = completeTry(current, step.item, done ? { done: true } : { done: false, wait }, now);
  }
  return current;
}

/**
 * Upstream SwapLimiter(newQPS): install a limiter for a new QPS.
 * Upstream quirk: nothing happens when the current limiter's QPS() already equals newQPS (same
 * object returned), and the never-limiter reports QPS 1: a never-limiter stays in place on a swap
 * to 1, and a swap to 0 replaces it with another never-limiter.
 * newQPS <= 0 installs the never-limiter. Otherwise a full token bucket (burst
 * EvictionRateLimiterBurst), drained at once if the old limiter has no token available at `now`:
 * upstream drains the new one when it was "currently waiting on" the old one, a good approach when
 * the burst is 1 (upstream leaves higher bursts as a TODO).
 */
export function swapLimiter(
  q: RateLimitedTimedQueue,
  newQPS: number,
  now: EpochMillis,
): RateLimitedTimedQueue {
  if (limiterQPS(q.limiter) === newQPS) return q;
  if (newQPS <= 0) return { ...q, limiter: fakeNeverRateLimiter };
  const fresh = newTokenBucketRateLimiter(newQPS, EvictionRateLimiterBurst, now);
  const oldHadToken = tryAccept(q.limiter, now).accepted;
  return { ...q, limiter: oldHadToken ? fresh : tryAccept(fresh, now).limiter };
}

/**
 * The first instant after `after` at which {@link tryNext} hands out an item: the first unclaimed one
 * once its processAt has come and the limiter has a token, or a claimed one once its claim runs out (no
 * token needed). Not upstream (its pass polls every 100 ms); the drainer uses it to wake at the due
 * instant instead of polling. Found with tryNext itself (a binary search over whole milliseconds: at
 * most 1 ms late), so no limiter arithmetic is written twice. Undefined for an empty queue, or one with
 * no claimed item and a limiter that never gives a token (a zone rate of 0).
 *
 * @example nextHandOutAt(queue, now) // e.g. now + 9_400: the zone's next token, 1 / 0.1 qps after the last
 */
export function nextHandOutAt(queue: RateLimitedTimedQueue, after: EpochMillis): EpochMillis | undefined {
  const earliest = Math.floor(after) + 1;
  let takeOver: EpochMillis | undefined;
  for (const v of queue.queue) {
    if (v.claim === undefined) continue;
    const at = Math.max(earliest, Math.ceil(v.claim.until));
    if (takeOver === undefined || at < takeOver) takeOver = at;
  }
  if (takeOver === undefined) return tokenHandOutAt(queue, earliest);
  const unclaimed = queue.queue.filter((v) => v.claim === undefined);
  const byToken = tokenHandOutAt({ ...queue, queue: unclaimed }, earliest);
  return byToken === undefined || takeOver < byToken ? takeOver : byToken;
}

/** nextHandOutAt of a queue without claims: its head and its limiter, from `earliest` on. */
function tokenHandOutAt(queue: RateLimitedTimedQueue, earliest: EpochMillis): EpochMillis | undefined {
  const first = head(queue);
  if (first === undefined) return undefined;
  const handsOut = (t: EpochMillis): boolean => tryNext(queue, t).item !== undefined;
  let lo = Math.max(earliest, Math.ceil(first.processAt));
  if (handsOut(lo)) return lo;
  const { limiter } = queue;
  if (limiter.kind === 'never' || limiter.qps <= 0) return undefined;
  // A bucket refilled from empty for burst/qps seconds is full: a token is certain by then.
  let hi = lo + Math.ceil((limiter.burst / limiter.qps) * 1000) + 1;
  if (!handsOut(hi)) return undefined;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (handsOut(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * A zone's queue while one pass changes it: Add and Remove of upstream's UniqueQueue, in O(1) on an
 * insertion-ordered Map (the queued entries) and Set (the set) instead of copying both arrays per
 * call. markNodeForTainting runs Remove then Add for every unhealthy node on every monitor pass, so
 * with the plain functions a pass over n unhealthy nodes of one zone copied n-element arrays 2n times.
 * `queue()` gives the plain RateLimitedTimedQueue, equal to what the same add/remove calls return:
 * the entries sorted by processAt with a stable sort, which keeps ties in insertion order because the
 * Map starts in the plain queue's order and a re-added value moves to its end. Mutable on purpose; it
 * never leaves the pass's WorkingState.
 */
export class WorkingQueue {
  private base: RateLimitedTimedQueue;
  private readonly waiting: Map<string, TimedValue>;
  private readonly values: Set<string>;
  /** A change since `base` was built: the next `queue()` builds a new plain queue. */
  private changed = false;

  constructor(q: RateLimitedTimedQueue) {
    this.base = q;
    this.waiting = new Map(q.queue.map((v) => [v.value, v]));
    this.values = new Set(q.set);
  }

  /** {@link add}: false when the value was added before and not removed since. */
  add(value: string, uid: string, now: EpochMillis): boolean {
    if (this.values.has(value)) return false;
    this.values.add(value);
    this.waiting.set(value, { value, uid, addedAt: now, processAt: now });
    this.changed = true;
    return true;
  }

  /** The value's entry while it waits in the queue (not once processed or removed). */
  waitingEntry(value: string): TimedValue | undefined {
    return this.waiting.get(value);
  }

  /** {@link remove}: true if the value was in the set, even if no longer queued. */
  remove(value: string): boolean {
    if (!this.values.delete(value)) return false;
    this.waiting.delete(value);
    this.changed = true;
    return true;
  }

  /** The plain queue; the same object as long as nothing changed, as the plain functions return. */
  queue(): RateLimitedTimedQueue {
    if (this.changed) {
      const queue = [...this.waiting.values()].sort((a, b) => a.processAt - b.processAt);
      this.base = { ...this.base, queue, set: [...this.values] };
      this.changed = false;
    }
    return this.base;
  }
}

function insertByProcessAt(queue: readonly TimedValue[], item: TimedValue): TimedValue[] {
  // After every entry due at or before it: ties keep insertion order.
  const index = queue.findIndex((v) => v.processAt > item.processAt);
  return index === -1 ? [...queue, item] : [...queue.slice(0, index), item, ...queue.slice(index)];
}
