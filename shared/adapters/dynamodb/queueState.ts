// A zone's RateLimitedTimedQueue as stored rows, and back; pure, so it is unit-tested on its own.
//
// The domain keeps `queue` sorted by processAt with ties in insertion order, and `set` in insertion
// order (rateLimitedTimedQueue.ts). One row per node keeps its TimedValue, whether it is queued or only
// in the processed-once set, and two sequence numbers from a per-zone counter: `seq` orders queue rows
// with equal processAt, `setSeq` orders the set. A diff keeps a row's numbers while they still give
// the domain's order and hands out new ones only where it changed, so a steady queue costs no writes.
//
// Merging (the monitor lost a race with the drainer): the monitor's changes are per node (it queued,
// un-queued or forgot a node) plus, at most, a limiter swap. Re-applied onto a fresh read they give
// the state as if the monitor's operations ran after the drainer's, which is one of the orders
// upstream's evictorLock allows. Two token withdrawals cannot be merged: the caller rereads instead.
// The drainer's claims (TimedValue.claim) are kept: the monitor never writes one, and an entry a
// drainer claimed is not replaced by the monitor's re-queue of the node (mergeQueueChanges).
import type { RateLimitedTimedQueue, TimedValue, TokenClaim } from '../../domain/rateLimitedTimedQueue.js';
import { swapLimiter } from '../../domain/rateLimitedTimedQueue.js';
import type { RateLimiter } from '../../domain/tokenBucket.js';
import type { StoredQueueEntry, ZoneQueueVersion } from '../../ports/stores.js';
import { limitersEqual } from './codec.js';

/** One zone's stored queue: the zone row's queue group plus the entry rows. */
export interface ZoneQueueSnapshot extends ZoneQueueVersion {
  readonly zone: string;
  /** undefined = the zone row has no queue group (no queue stored). */
  readonly limiter: RateLimiter | undefined;
}

/** One entry row to write. */
export interface QueueOp {
  readonly value: string;
  readonly entry: StoredQueueEntry;
}

export function emptySnapshot(zone: string): ZoneQueueSnapshot {
  return { zone, version: 0, nextSeq: 1, limiter: undefined, entries: new Map() };
}

function timedValue(value: string, e: StoredQueueEntry): TimedValue | undefined {
  if (e.uid === undefined || e.addedAt === undefined || e.processAt === undefined) return undefined;
  const tv = { value, uid: e.uid, addedAt: e.addedAt, processAt: e.processAt };
  return e.claim === undefined ? tv : { ...tv, claim: e.claim };
}

/**
 * The queue and set that a snapshot's entries stand for, by entries map. A snapshot's entries never
 * change once it is built (a change makes a new snapshot), and an instance keeps its last snapshot of a
 * zone for as long as the zone's version stays (zoneQueues.ts): the drainer, which orders a zone's
 * entries on every run, then orders each version once.
 */
const ordered = new WeakMap<ZoneQueueSnapshot['entries'], Pick<RateLimitedTimedQueue, 'queue' | 'set'>>();

/** The domain queue a snapshot stands for; undefined when no queue is stored. */
export function toDomainQueue(snapshot: ZoneQueueSnapshot): RateLimitedTimedQueue | undefined {
  if (snapshot.limiter === undefined) return undefined;
  let known = ordered.get(snapshot.entries);
  if (known === undefined) {
    const live = [...snapshot.entries].filter(([, e]) => e.inSet);
    const queue = live
      .filter(([, e]) => e.inQueue)
      .sort(([, a], [, b]) => (a.processAt ?? 0) - (b.processAt ?? 0) || a.seq - b.seq)
      .flatMap(([value, e]) => timedValue(value, e) ?? []);
    const set = live.sort(([, a], [, b]) => a.setSeq - b.setSeq).map(([value]) => value);
    known = { queue, set };
    ordered.set(snapshot.entries, known);
  }
  return { queue: known.queue, set: known.set, limiter: snapshot.limiter };
}

function sameEntry(a: StoredQueueEntry, b: StoredQueueEntry): boolean {
  return (
    a.inQueue === b.inQueue &&
    a.inSet === b.inSet &&
    a.uid === b.uid &&
    a.addedAt === b.addedAt &&
    a.processAt === b.processAt &&
    a.seq === b.seq &&
    a.setSeq === b.setSeq &&
    sameClaim(a.claim, b.claim)
  );
}

function sameClaim(a: TokenClaim | undefined, b: TokenClaim | undefined): boolean {
  return (
    a === b || (a !== undefined && b !== undefined && a.by === b.by && a.at === b.at && a.until === b.until)
  );
}

export interface QueueDiff {
  /** Entry rows to write (new, changed, and tombstones for removed ones). */
  readonly ops: readonly QueueOp[];
  readonly limiterChanged: boolean;
  /** The snapshot once the ops are written. */
  readonly next: ZoneQueueSnapshot;
}

/** What must be written to turn `snapshot` into `after`. */
export function diffQueue(snapshot: ZoneQueueSnapshot, after: RateLimitedTimedQueue): QueueDiff {
  let nextSeq = snapshot.nextSeq;
  const entries = new Map<string, StoredQueueEntry>();

  // Queue order: within a run of equal processAt, seq must increase along the domain's array.
  let runAt: number | undefined;
  let previous = -Infinity;
  const queueSeq = new Map<string, number>();
  for (const tv of after.queue) {
    if (tv.processAt !== runAt) {
      runAt = tv.processAt;
      previous = -Infinity;
    }
    const old = snapshot.entries.get(tv.value);
    const keep =
      old?.inSet === true &&
      old.inQueue &&
      old.uid === tv.uid &&
      old.addedAt === tv.addedAt &&
      old.processAt === tv.processAt &&
      old.seq > previous;
    const seq = keep ? old.seq : nextSeq++;
    previous = seq;
    queueSeq.set(tv.value, seq);
  }

  // Set order (queued values are always in the set; a queued value missing from it is added last).
  const inSet = new Set(after.set);
  const setOrder = [...after.set, ...after.queue.map((tv) => tv.value).filter((v) => !inSet.has(v))];
  previous = -Infinity;
  const queued = new Map(after.queue.map((tv) => [tv.value, tv]));
  for (const value of setOrder) {
    const old = snapshot.entries.get(value);
    const setSeq = old?.inSet === true && old.setSeq > previous ? old.setSeq : nextSeq++;
    previous = setSeq;
    const tv = queued.get(value);
    entries.set(
      value,
      tv !== undefined
        ? {
            inQueue: true,
            inSet: true,
            uid: tv.uid,
            addedAt: tv.addedAt,
            processAt: tv.processAt,
            seq: queueSeq.get(value) ?? 0,
            setSeq,
            ...(tv.claim !== undefined && { claim: tv.claim }),
          }
        : { ...stripUndefined(old), inQueue: false, inSet: true, seq: old?.seq ?? 0, setSeq },
    );
  }

  // Rows no longer in the set become tombstones (kept: see zoneQueues.ts); old tombstones stay. A claim
  // ends with its entry's place in the queue.
  for (const [value, old] of snapshot.entries) {
    if (entries.has(value)) continue;
    if (!old.inSet) {
      entries.set(value, old);
      continue;
    }
    const { claim: _ended, ...rest } = old;
    entries.set(value, { ...rest, inQueue: false, inSet: false });
  }

  const ops: QueueOp[] = [];
  for (const [value, entry] of entries) {
    const old = snapshot.entries.get(value);
    if (old === undefined || !sameEntry(old, entry)) ops.push({ value, entry });
  }
  return {
    ops,
    limiterChanged: !limitersEqual(snapshot.limiter, after.limiter),
    next: { zone: snapshot.zone, version: snapshot.version, nextSeq, limiter: after.limiter, entries },
  };
}

function stripUndefined(e: StoredQueueEntry | undefined): Partial<StoredQueueEntry> {
  if (e === undefined) return {};
  return {
    ...(e.uid !== undefined && { uid: e.uid }),
    ...(e.addedAt !== undefined && { addedAt: e.addedAt }),
    ...(e.processAt !== undefined && { processAt: e.processAt }),
  };
}

/** Counts of a snapshot's live entries (stored on the zone row so empty zones are never queried). */
export function queueCounts(entries: ReadonlyMap<string, StoredQueueEntry>): {
  queued: number;
  inSet: number;
} {
  let queued = 0;
  let inSet = 0;
  for (const e of entries.values()) {
    if (e.inSet) inSet++;
    if (e.inSet && e.inQueue) queued++;
  }
  return { queued, inSet };
}

// ---------------------------------------------------------------------------------------------------
// Merging

type EntryStatus =
  | { readonly kind: 'absent' }
  | { readonly kind: 'set' }
  | { readonly kind: 'queued'; readonly tv: TimedValue };

function statusIn(q: RateLimitedTimedQueue | undefined, value: string): EntryStatus {
  if (q === undefined) return { kind: 'absent' };
  const tv = q.queue.find((v) => v.value === value);
  if (tv !== undefined) return { kind: 'queued', tv };
  return q.set.includes(value) ? { kind: 'set' } : { kind: 'absent' };
}

function sameStatus(a: EntryStatus, b: EntryStatus): boolean {
  if (a.kind !== 'queued' || b.kind !== 'queued') return a.kind === b.kind;
  return a.tv.uid === b.tv.uid && a.tv.addedAt === b.tv.addedAt && a.tv.processAt === b.tv.processAt;
}

function insertByProcessAt(queue: readonly TimedValue[], item: TimedValue): TimedValue[] {
  // As the domain does: after every entry due at or before it.
  const index = queue.findIndex((v) => v.processAt > item.processAt);
  return index === -1 ? [...queue, item] : [...queue.slice(0, index), item, ...queue.slice(index)];
}

/**
 * The limiter after re-applying the change loaded → after onto `fresh`; undefined when both sides
 * withdrew tokens from the same bucket (not mergeable).
 */
export function mergeLimiter(
  loaded: RateLimiter | undefined,
  after: RateLimiter,
  fresh: RateLimiter | undefined,
): RateLimiter | undefined {
  if (fresh === undefined) return after;
  // We created the zone's queue and so did someone else: theirs stands (ours was a new bucket too).
  if (loaded === undefined) return fresh;
  if (limitersEqual(loaded, after)) return fresh;
  if (limitersEqual(loaded, fresh)) return after;
  if (after.kind === 'never') return after;
  const sameBucket =
    loaded.kind === 'tokenBucket' && loaded.qps === after.qps && loaded.burst === after.burst;
  if (sameBucket) return undefined;
  // A swap (handleDisruption's SwapLimiter at `after.last`, the pass's now), replayed on the fresh limiter.
  return swapLimiter({ queue: [], set: [], limiter: fresh }, after.qps, after.last).limiter;
}

/**
 * Re-applies the changes `loaded` → `after` onto `fresh` (per node: last writer wins; the limiter by
 * mergeLimiter). undefined when they cannot be merged.
 */
export function mergeQueueChanges(
  loaded: RateLimitedTimedQueue | undefined,
  after: RateLimitedTimedQueue,
  fresh: RateLimitedTimedQueue | undefined,
): RateLimitedTimedQueue | undefined {
  const limiter = mergeLimiter(loaded?.limiter, after.limiter, fresh?.limiter);
  if (limiter === undefined) return undefined;
  const values = new Set([
    ...(loaded?.set ?? []),
    ...(loaded?.queue.map((v) => v.value) ?? []),
    ...after.set,
    ...after.queue.map((v) => v.value),
  ]);
  // A claimed entry's token is spent (TokenClaim): only its completion, or a Remove that forgets the
  // node, ends it. This side's re-queue of it (or removal from the queue alone) would make it a new,
  // unclaimed entry and hand the node out for a second token, so the claimed entry stands.
  const claimed = new Set(fresh?.queue.flatMap((v) => (v.claim === undefined ? [] : [v.value])));
  const changed = new Set(
    [...values].filter(
      (v) =>
        !sameStatus(statusIn(loaded, v), statusIn(after, v)) &&
        !(claimed.has(v) && statusIn(after, v).kind !== 'absent'),
    ),
  );

  let queue = fresh?.queue ?? [];
  let set = fresh?.set ?? [];
  for (const value of changed) {
    const status = statusIn(after, value);
    if (status.kind !== 'queued') queue = queue.filter((v) => v.value !== value);
    if (status.kind === 'absent') set = set.filter((v) => v !== value);
  }
  // Added to the set in the order the pass added them, queued in the pass's queue order.
  for (const value of [...after.set, ...after.queue.map((v) => v.value)]) {
    if (changed.has(value) && !set.includes(value)) set = [...set, value];
  }
  for (const tv of after.queue) {
    if (changed.has(tv.value))
      queue = insertByProcessAt(
        queue.filter((v) => v.value !== tv.value),
        tv,
      );
  }
  return { queue, set, limiter };
}
