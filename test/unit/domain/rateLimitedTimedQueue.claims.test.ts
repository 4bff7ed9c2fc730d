// Token claims (rateLimitedTimedQueue.ts TokenClaim, not upstream): the token tryNext spends is bound to
// its item until completeTry, so that drainers running at once never spend a second token on an item
// whose write is in flight, and the zone's next item is handed out with a token of its own.
import { describe, expect, it } from 'vitest';
import {
  add,
  type Claimant,
  completeTry,
  newRateLimitedTimedQueue,
  peekNext,
  type RateLimitedTimedQueue,
  remove,
  type TimedValue,
  tryNext,
} from '../../../shared/domain/rateLimitedTimedQueue.js';
import {
  fakeNeverRateLimiter,
  newTokenBucketRateLimiter,
  tryAccept,
} from '../../../shared/domain/tokenBucket.js';

const T0 = Date.parse('2026-03-02T09:00:00Z');
const TTL = 15_000;
const runA: Claimant = { by: 'run-a', ttl: TTL };
const runB: Claimant = { by: 'run-b', ttl: TTL };

/** a, b, c queued at T0, T0 + 1 s, T0 + 2 s in a zone at 0.1/s, burst 1 (full at T0). */
function zone(): RateLimitedTimedQueue {
  let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, T0));
  for (const [i, v] of ['a', 'b', 'c'].entries()) q = add(q, v, `uid-${v}`, T0 + i * 1_000).queue;
  return q;
}

/** The zone after run A took a's token at T0 and is still writing its taint. */
function aHeldByRunA(): { q: RateLimitedTimedQueue; item: TimedValue } {
  const step = tryNext(zone(), T0, runA);
  return { q: step.queue, item: step.item! };
}

const claimOf = (q: RateLimitedTimedQueue, value: string) => q.queue.find((v) => v.value === value)?.claim;
const tokenAt = (q: RateLimitedTimedQueue, at: number) => tryAccept(q.limiter, at).accepted;

describe('tryNext with claims', () => {
  it('binds the token it spends to the item, in the same queue state: claimed at now until now + ttl', () => {
    const q = zone();
    const step = tryNext(q, T0, runA);
    expect(step.item).toEqual({
      value: 'a',
      uid: 'uid-a',
      addedAt: T0,
      processAt: T0,
      claim: { by: 'run-a', at: T0, until: T0 + TTL },
    });
    expect(step.takenOver).toBeUndefined();
    expect(step.queue.queue.map((v) => v.value)).toEqual(['a', 'b', 'c']);
    expect(claimOf(step.queue, 'a')).toEqual(step.item?.claim);
    expect(tokenAt(step.queue, T0)).toBe(false);
    expect(q.queue[0]?.claim).toBeUndefined(); // the input is not changed
  });

  // Each case: the queue, when another run asks, and what it gets. In the same loop, peekNext names the
  // item tryNext hands out whenever the bucket has a token (the drainer reads that item's node first),
  // and a token is spent exactly when an unclaimed item is considered.
  it.each([
    {
      name: 'a held item is skipped: the next due item is handed out with a token of its own',
      queue: () => aHeldByRunA().q,
      at: T0 + 10_000,
      want: { value: 'b', takenOver: false, tokenSpent: true },
    },
    {
      name: 'a held item is skipped, the next item is due but no token has come: nothing',
      queue: () => aHeldByRunA().q,
      at: T0 + 9_999,
      want: { value: undefined, takenOver: false, tokenSpent: false },
    },
    {
      name: 'every item held by others: nothing handed out and no token taken, as an empty queue',
      queue: () => {
        // Three runs whose writes are slow: a minute each.
        let q = tryNext(zone(), T0, { by: 'run-x', ttl: 60_000 }).queue;
        q = tryNext(q, T0 + 10_000, { by: 'run-y', ttl: 60_000 }).queue;
        return tryNext(q, T0 + 20_000, { by: 'run-z', ttl: 60_000 }).queue;
      },
      at: T0 + 30_000,
      want: { value: undefined, takenOver: false, tokenSpent: false },
    },
    {
      name: 'upstream quirk, after a held item: the next item not due yet wastes the token',
      queue: () => {
        let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, T0));
        q = add(q, 'a', 'uid-a', T0).queue;
        q = add(q, 'b', 'uid-b', T0 + 60_000).queue;
        return tryNext(q, T0, runA).queue;
      },
      at: T0 + 10_000,
      want: { value: undefined, takenOver: false, tokenSpent: true },
    },
    {
      name: 'a claim that ran out (its holder crashed): taken over without a token, before the next due item',
      queue: () => aHeldByRunA().q,
      at: T0 + TTL,
      want: { value: 'a', takenOver: true, tokenSpent: false },
    },
    {
      name: 'a claim that ran out, in a zone whose bucket never gives a token: still taken over',
      queue: () => ({ ...aHeldByRunA().q, limiter: fakeNeverRateLimiter }),
      at: T0 + TTL,
      want: { value: 'a', takenOver: true, tokenSpent: false },
    },
    {
      name: 'one millisecond before the claim runs out: the holder may still be writing, b gets the token',
      queue: () => aHeldByRunA().q,
      at: T0 + TTL - 1,
      want: { value: 'b', takenOver: false, tokenSpent: true },
    },
  ])('$name', ({ queue, at, want }) => {
    const q = queue();
    const step = tryNext(q, at, runB);
    expect(step.item?.value).toBe(want.value);
    expect(step.takenOver === true).toBe(want.takenOver);
    expect(step.queue.limiter !== q.limiter).toBe(want.tokenSpent);
    if (step.item !== undefined) {
      expect(step.item.claim).toEqual({ by: 'run-b', at, until: at + TTL });
      expect(claimOf(step.queue, step.item.value)).toEqual(step.item.claim);
    }
    if (tokenAt(q, at) || want.takenOver) expect(peekNext(q, at)?.value).toBe(want.value);
    // What others hold stays theirs.
    for (const v of q.queue) {
      if (v.value !== step.item?.value) expect(claimOf(step.queue, v.value)).toEqual(v.claim);
    }
  });

  it('without a claimant (upstream Try in memory) writes no claim, and still leaves held items alone', () => {
    const { q } = aHeldByRunA();
    const step = tryNext(q, T0 + 10_000);
    expect(step.item).toEqual({ value: 'b', uid: 'uid-b', addedAt: T0 + 1_000, processAt: T0 + 1_000 });
    expect(claimOf(step.queue, 'b')).toBeUndefined();
    expect(claimOf(step.queue, 'a')?.by).toBe('run-a');
  });
});

describe('peekNext', () => {
  it.each([
    {
      name: 'empty queue: nothing',
      queue: () => newRateLimitedTimedQueue(fakeNeverRateLimiter),
      at: T0,
      want: undefined,
    },
    { name: 'the due head', queue: zone, at: T0, want: 'a' },
    { name: 'a head not due yet: nothing', queue: zone, at: T0 - 1, want: undefined },
    { name: 'a held head: the next item, once due', queue: () => aHeldByRunA().q, at: T0 + 1_000, want: 'b' },
    {
      name: 'a held head, the next item not due: nothing',
      queue: () => aHeldByRunA().q,
      at: T0 + 999,
      want: undefined,
    },
    { name: 'a claim that ran out: that item', queue: () => aHeldByRunA().q, at: T0 + TTL, want: 'a' },
  ])('$name', ({ queue, at, want }) => {
    const q = queue();
    expect(peekNext(q, at)?.value).toBe(want);
    // Peeking takes nothing.
    expect(peekNext(q, at)).toBe(peekNext(q, at));
  });
});

describe('completeTry with claims', () => {
  it('the holder, done: out of the queue with its claim, kept in the set', () => {
    const { q, item } = aHeldByRunA();
    const after = completeTry(q, item, { done: true }, T0);
    expect(after.queue.map((v) => v.value)).toEqual(['b', 'c']);
    expect(after.set).toEqual(['a', 'b', 'c']);
  });

  it('the holder, not done: retried at t + wait + 1ns, unclaimed, so the retry needs a token of its own', () => {
    const { q, item } = aHeldByRunA();
    const after = completeTry(q, item, { done: false, wait: 0 }, T0);
    const retry = after.queue.find((v) => v.value === 'a');
    expect(retry?.claim).toBeUndefined();
    expect(retry?.processAt).toBeGreaterThan(T0);
    expect(retry).toMatchObject({ uid: 'uid-a', addedAt: T0 });
    expect(tryNext(after, T0 + 9_999, runB).item).toBeUndefined(); // the bucket spent its token at T0
  });

  it.each([
    {
      name: 'a holder whose item was taken over after its claim ran out: no-op, the taker completes it',
      change: (q: RateLimitedTimedQueue) => tryNext(q, T0 + TTL, runB).queue,
      at: T0,
    },
    {
      name: 'a holder whose node was forgotten and queued again meanwhile: no-op, the new entry waits',
      change: (q: RateLimitedTimedQueue) => add(remove(q, 'a').queue, 'a', 'uid-a', T0 + 5_000).queue,
      at: T0,
    },
  ])('$name', ({ change, at }) => {
    const { q, item } = aHeldByRunA();
    const changed = change(q);
    expect(completeTry(changed, item, { done: true }, at)).toBe(changed);
    expect(completeTry(changed, item, { done: false, wait: 0 }, at)).toBe(changed);
  });

  it('an item peeked while unclaimed (its taint found in place) is not completed while another run holds it', () => {
    const q = zone();
    const peeked = peekNext(q, T0)!;
    const held = tryNext(q, T0, runA).queue; // run A claimed it between the peek and the completion
    expect(completeTry(held, peeked, { done: true }, T0 + 1_000)).toBe(held);
    // Once A's claim has run out, it is anyone's again.
    expect(completeTry(held, peeked, { done: true }, T0 + TTL).queue.map((v) => v.value)).toEqual(['b', 'c']);
  });

  it('the taker of an item whose claim ran out completes it under its own claim', () => {
    const { q, item: heldByA } = aHeldByRunA();
    const takeOver = tryNext(q, T0 + TTL, runB);
    expect(takeOver.takenOver).toBe(true);
    const done = completeTry(takeOver.queue, takeOver.item!, { done: true }, T0 + TTL);
    expect(done.queue.map((v) => v.value)).toEqual(['b', 'c']);
    // A's late completion finds nothing of its own.
    expect(completeTry(done, heldByA, { done: false, wait: 0 }, T0)).toBe(done);
  });
});
