import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  diffQueue,
  emptySnapshot,
  mergeLimiter,
  mergeQueueChanges,
  toDomainQueue,
  type ZoneQueueSnapshot,
} from '../../../../shared/adapters/dynamodb/queueState.js';
import {
  add,
  completeTry,
  newRateLimitedTimedQueue,
  remove,
  removeFromQueue,
  replace,
  swapLimiter,
  tryNext,
  type RateLimitedTimedQueue,
} from '../../../../shared/domain/rateLimitedTimedQueue.js';
import { fakeNeverRateLimiter, newTokenBucketRateLimiter } from '../../../../shared/domain/tokenBucket.js';

const T0 = Date.parse('2026-01-29T09:00:00Z');
const values = ['a', 'b', 'c', 'd', 'e'];

type Op =
  | { kind: 'add'; value: string; at: number }
  | { kind: 'remove' | 'removeFromQueue'; value: string }
  | { kind: 'replace'; value: string; at: number }
  | { kind: 'try'; at: number; done: boolean; wait: number }
  | { kind: 'hold'; at: number; by: string }
  | { kind: 'swap'; qps: number; at: number };

const instant = fc.integer({ min: 0, max: 3 }).map((i) => T0 + i * 1_000); // few instants: many ties
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), value: fc.constantFrom(...values), at: instant }),
  fc.record({
    kind: fc.constantFrom('remove' as const, 'removeFromQueue' as const),
    value: fc.constantFrom(...values),
  }),
  fc.record({ kind: fc.constant('replace' as const), value: fc.constantFrom(...values), at: instant }),
  fc.record({
    kind: fc.constant('try' as const),
    at: instant,
    done: fc.boolean(),
    wait: fc.constantFrom(0, 50),
  }),
  fc.record({ kind: fc.constant('swap' as const), qps: fc.constantFrom(0, 0.01, 1), at: instant }),
  // A drainer took an item's token (or took it over) and is still writing: its claim stays on the entry.
  fc.record({ kind: fc.constant('hold' as const), at: instant, by: fc.constantFrom('run-1', 'run-2') }),
);

function apply(q: RateLimitedTimedQueue, op: Op): RateLimitedTimedQueue {
  switch (op.kind) {
    case 'add':
      return add(q, op.value, `uid-${op.value}`, op.at).queue;
    case 'remove':
      return remove(q, op.value).queue;
    case 'removeFromQueue':
      return removeFromQueue(q, op.value).queue;
    case 'replace':
      return replace(q, { value: op.value, uid: `uid-${op.value}`, addedAt: op.at, processAt: op.at }).queue;
    case 'try': {
      const step = tryNext(q, op.at + 10_000);
      if (step.item === undefined) return step.queue;
      return completeTry(
        step.queue,
        step.item,
        op.done ? { done: true } : { done: false, wait: op.wait },
        op.at,
      );
    }
    case 'swap':
      return swapLimiter(q, op.qps, op.at);
    case 'hold':
      return tryNext(q, op.at + 10_000, { by: op.by, ttl: 15_000 }).queue;
  }
}

/** What writing the diff's ops does to the stored rows. */
function written(snapshot: ZoneQueueSnapshot, after: RateLimitedTimedQueue): ZoneQueueSnapshot {
  const diff = diffQueue(snapshot, after);
  const entries = new Map(snapshot.entries);
  for (const op of diff.ops) entries.set(op.value, op.entry);
  return { ...diff.next, entries };
}

describe('diffQueue / toDomainQueue', () => {
  it('the rows written for any sequence of queue operations read back as the same queue', () => {
    fc.assert(
      fc.property(fc.array(fc.array(opArb, { maxLength: 6 }), { maxLength: 12 }), (batches) => {
        let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(1, 1, T0));
        let snapshot = written(emptySnapshot('z'), q);
        for (const batch of batches) {
          q = batch.reduce(apply, q);
          snapshot = written(snapshot, q);
          expect(toDomainQueue(snapshot)).toEqual(q);
          // Idempotent: nothing left to write.
          const again = diffQueue(snapshot, q);
          expect(again.ops).toEqual([]);
          expect(again.limiterChanged).toBe(false);
        }
      }),
    );
  });

  it('writes a claim on its entry row only, and never on a tombstone', () => {
    let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(1, 1, T0));
    q = ['a', 'b'].reduce((acc, v) => add(acc, v, `uid-${v}`, T0).queue, q);
    const snapshot = written(emptySnapshot('z'), q);
    const held = tryNext(q, T0, { by: 'run-1', ttl: 15_000 }).queue;
    const claim = { by: 'run-1', at: T0, until: T0 + 15_000 };
    const diff = diffQueue(snapshot, held);
    expect(diff.ops.map((op) => [op.value, op.entry.claim, op.entry.seq])).toEqual([
      ['a', claim, snapshot.entries.get('a')?.seq],
    ]);
    const forgotten = diffQueue(written(snapshot, held), remove(held, 'a').queue);
    expect(forgotten.ops.map((op) => [op.value, op.entry.inSet, op.entry.claim])).toEqual([
      ['a', false, undefined],
    ]);
  });

  it('writes only the rows that changed', () => {
    let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(1, 1, T0));
    q = ['a', 'b', 'c'].reduce((acc, v) => add(acc, v, `uid-${v}`, T0).queue, q);
    const snapshot = written(emptySnapshot('z'), q);
    const after = removeFromQueue(q, 'b').queue;
    const diff = diffQueue(snapshot, after);
    expect(diff.ops.map((op) => [op.value, op.entry.inQueue, op.entry.inSet])).toEqual([['b', false, true]]);
    const forgotten = diffQueue(snapshot, remove(q, 'c').queue);
    expect(forgotten.ops.map((op) => [op.value, op.entry.inSet])).toEqual([['c', false]]);
  });
});

function statuses(q: RateLimitedTimedQueue): Record<string, unknown> {
  return Object.fromEntries(
    values.map((v) => {
      const tv = q.queue.find((x) => x.value === v);
      return [v, tv ?? q.set.includes(v)];
    }),
  );
}

describe('mergeQueueChanges', () => {
  it('with nobody else writing, the merge has the same entries and limiter as the change itself', () => {
    // Without claims: an entry a drainer claimed is not the monitor's to change (see below).
    const unclaimedOp = opArb.filter((op) => op.kind !== 'hold');
    fc.assert(
      fc.property(
        fc.array(unclaimedOp, { maxLength: 8 }),
        fc.array(unclaimedOp, { maxLength: 8 }),
        (setup, change) => {
          const loaded = setup.reduce(apply, newRateLimitedTimedQueue(newTokenBucketRateLimiter(1, 1, T0)));
          const after = change.reduce(apply, loaded);
          const merged = mergeQueueChanges(loaded, after, loaded);
          expect(merged).toBeDefined();
          expect(statuses(merged!)).toEqual(statuses(after));
          expect(merged!.limiter).toEqual(after.limiter);
        },
      ),
    );
  });

  it('keeps the changes of the other writer for nodes this one did not touch', () => {
    let loaded = newRateLimitedTimedQueue(newTokenBucketRateLimiter(1, 1, T0));
    loaded = ['a', 'b'].reduce((acc, v) => add(acc, v, `uid-${v}`, T0).queue, loaded);
    const fresh = removeFromQueue(loaded, 'a').queue; // the drainer processed 'a'
    const after = add(remove(loaded, 'b').queue, 'c', 'uid-c', T0 + 1).queue; // the monitor
    const merged = mergeQueueChanges(loaded, after, fresh);
    expect(merged?.queue.map((v) => v.value)).toEqual(['c']);
    expect(merged?.set).toEqual(['a', 'c']);
  });
});

describe('mergeQueueChanges and the drainer’s claims', () => {
  const held = { by: 'run-1', ttl: 15_000 };
  /** a, b queued; the monitor read this, then a drainer took a's token and is writing a's taint. */
  function raced() {
    let loaded = newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, T0));
    loaded = ['a', 'b'].reduce((acc, v) => add(acc, v, `uid-${v}`, T0).queue, loaded);
    return { loaded, fresh: tryNext(loaded, T0 + 1_000, held).queue };
  }

  it.each([
    {
      name: 'a node the monitor left alone keeps the claim',
      monitor: (q: RateLimitedTimedQueue) => add(q, 'c', 'uid-c', T0 + 1_000).queue,
      want: { a: 'claimed', queued: ['a', 'b', 'c'] },
    },
    {
      name: 'the monitor’s re-queue of the claimed node (re-created, new UID) leaves it queued once, claimed',
      monitor: (q: RateLimitedTimedQueue) => add(remove(q, 'a').queue, 'a', 'uid-a-2', T0 + 1_000).queue,
      want: { a: 'claimed', queued: ['a', 'b'] },
    },
    {
      name: 'a node the monitor forgot (Ready again) goes, claim and all (upstream Remove)',
      monitor: (q: RateLimitedTimedQueue) => remove(q, 'a').queue,
      want: { a: 'gone', queued: ['b'] },
    },
  ])('$name', ({ monitor, want }) => {
    const { loaded, fresh } = raced();
    const merged = mergeQueueChanges(loaded, monitor(loaded), fresh)!;
    expect(merged.queue.map((v) => v.value)).toEqual(want.queued);
    const a = merged.queue.find((v) => v.value === 'a');
    expect(a === undefined ? 'gone' : a.claim === undefined ? 'unclaimed' : 'claimed').toBe(want.a);
    if (a !== undefined) expect(a).toBe(fresh.queue[0]);
    // The drainer's token withdrawal stands.
    expect(merged.limiter).toBe(fresh.limiter);
  });

  it('for any change of the monitor, every entry a drainer claimed meanwhile is kept as it is unless forgotten, and nothing is queued twice', () => {
    const monitorOp = fc.oneof(
      fc.record({
        kind: fc.constant('add' as const),
        value: fc.constantFrom(...values),
        uid: fc.constantFrom('1', '2'),
      }),
      fc.record({ kind: fc.constant('remove' as const), value: fc.constantFrom(...values) }),
      fc.record({
        kind: fc.constant('requeue' as const),
        value: fc.constantFrom(...values),
        uid: fc.constantFrom('1', '2'),
      }),
    );
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 10 }),
        fc.array(fc.constantFrom(1_000, 20_000, 40_000), { maxLength: 3 }),
        fc.array(monitorOp, { maxLength: 8 }),
        (setup, holds, changes) => {
          const loaded = setup.reduce(apply, newRateLimitedTimedQueue(newTokenBucketRateLimiter(1, 3, T0)));
          const fresh = holds.reduce(
            (q, at, i) => tryNext(q, T0 + at, { by: `run-${i}`, ttl: 15_000 }).queue,
            loaded,
          );
          const after = changes.reduce((q, c) => {
            const now = T0 + 5_000;
            if (c.kind === 'add') return add(q, c.value, `uid-${c.value}-${c.uid}`, now).queue;
            if (c.kind === 'remove') return remove(q, c.value).queue;
            return add(remove(q, c.value).queue, c.value, `uid-${c.value}-${c.uid}`, now).queue;
          }, loaded);
          const merged = mergeQueueChanges(loaded, after, fresh)!;
          const queued = merged.queue.map((v) => v.value);
          expect(new Set(queued).size).toBe(queued.length);
          for (const v of fresh.queue) {
            if (v.claim === undefined) continue;
            const forgotten = !after.set.includes(v.value);
            const now = merged.queue.find((m) => m.value === v.value);
            if (forgotten) expect(now).toBeUndefined();
            else expect(now).toBe(v);
          }
        },
      ),
    );
  });
});

describe('mergeLimiter', () => {
  const bucket = newTokenBucketRateLimiter(0.1, 1, T0);
  const spent = { ...bucket, tokens: 0, last: T0 + 1_000 };
  it.each([
    { name: 'only the other side changed it', loaded: bucket, after: bucket, fresh: spent, want: spent },
    { name: 'only this side changed it', loaded: bucket, after: spent, fresh: bucket, want: spent },
    {
      name: 'a swap to never wins',
      loaded: bucket,
      after: fakeNeverRateLimiter,
      fresh: spent,
      want: fakeNeverRateLimiter,
    },
    {
      name: 'a swap is replayed on the fresh bucket (drained: it had no token)',
      loaded: bucket,
      after: newTokenBucketRateLimiter(0.01, 1, T0 + 2_000),
      fresh: spent,
      want: { kind: 'tokenBucket', qps: 0.01, burst: 1, tokens: 0, last: T0 + 2_000 },
    },
    {
      name: 'two withdrawals cannot be merged',
      loaded: bucket,
      after: spent,
      fresh: { ...spent, last: T0 + 2_000 },
      want: undefined,
    },
  ])('$name', ({ loaded, after, fresh, want }) => {
    expect(mergeLimiter(loaded, after, fresh)).toEqual(want);
  });
});
