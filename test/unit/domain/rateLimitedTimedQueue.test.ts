import { describe, expect, it } from 'vitest';
import {
  type RateLimitedTimedQueue,
  type TimedValue,
  EvictionRateLimiterBurst,
  NodeEvictionPeriod,
  add,
  clear,
  completeTry,
  head,
  newRateLimitedTimedQueue,
  remove,
  removeFromQueue,
  replace,
  swapLimiter,
  tryNext,
  tryQueue,
  WorkingQueue,
} from '../../../shared/domain/rateLimitedTimedQueue.js';
import {
  type RateLimiter,
  fakeNeverRateLimiter,
  limiterQPS,
  newTokenBucketRateLimiter,
  tryAccept,
} from '../../../shared/domain/tokenBucket.js';

// Ports of rate_limited_queue_test.go (commit 5ce22905). TestUniqueQueueGet is not ported:
// UniqueQueue.Get is not (RateLimitedTimedQueue never calls it).

const T0 = Date.parse('2017-01-01T12:00:00Z');

/**
 * Stands in for flowcontrol.NewFakeAlwaysRateLimiter(): a bucket too deep to run dry in a test.
 * Its QPS is 1, as FakeAlways reports.
 */
function fakeAlwaysRateLimiter(): RateLimiter {
  return newTokenBucketRateLimiter(1, Number.MAX_SAFE_INTEGER, 0);
}

/** Adds first/11111, second/22222, third/33333, reading `clock` once per Add, as upstream. */
function addThree(q: RateLimitedTimedQueue, clock: () => number): RateLimitedTimedQueue {
  let current = q;
  for (const [value, uid] of [
    ['first', '11111'],
    ['second', '22222'],
    ['third', '33333'],
  ] as const) {
    current = add(current, value, uid, clock()).queue;
  }
  return current;
}

const fixedClock = (at: number) => () => at;
const values = (q: RateLimitedTimedQueue): string[] => q.queue.map((v) => v.value);

/** Runs tryQueue with fn → done, returning the values fn saw. */
function tryAllDone(
  q: RateLimitedTimedQueue,
  clock: () => number,
): { seen: string[]; queue: RateLimitedTimedQueue } {
  const seen: string[] = [];
  const queue = tryQueue(q, clock, (v) => {
    seen.push(v.value);
    return { done: true };
  });
  return { seen, queue };
}

describe('TestAddNode', () => {
  it('queue and set hold first, second, third in order', () => {
    const q = addThree(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), fixedClock(T0));
    expect(values(q)).toEqual(['first', 'second', 'third']);
    expect(q.set).toEqual(['first', 'second', 'third']);
  });
});

describe('TestDelNode', () => {
  // Upstream stubs now() with time.Unix(tick, 0), tick++ per call, across the three scenarios.
  it.each([
    { name: 'Remove first', firstTick: 0, removed: 'first', want: ['second', 'third'] },
    { name: 'Remove second', firstTick: 3, removed: 'second', want: ['first', 'third'] },
    { name: 'Remove third', firstTick: 6, removed: 'third', want: ['first', 'second'] },
  ])('$name', ({ firstTick, removed, want }) => {
    let tick = firstTick;
    const q = addThree(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), () => 1000 * tick++);
    const after = remove(q, removed);
    expect(after.removed).toBe(true);
    expect(values(after.queue)).toEqual(want);
    expect(after.queue.set).toEqual(want);
  });
});

describe('TestTry', () => {
  it('fn sees exactly first and third after second is removed', () => {
    const q = remove(
      addThree(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), fixedClock(T0)),
      'second',
    ).queue;
    expect(tryAllDone(q, fixedClock(T0)).seen).toEqual(['first', 'third']);
  });
});

describe('TestTryOrdering', () => {
  it('second is retried at 5ms+2ms+1ns, which is not due at 6ms: order [first, third], 3 calls', () => {
    // The current time is incremented by 1ms every time now is invoked, unless a delay is pending.
    let current = 0;
    let delay = 0;
    const clock = (): number => {
      if (delay > 0) delay--;
      else current += 1;
      return current;
    };
    const q = addThree(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), clock);

    const order: string[] = [];
    const seen: TimedValue[] = [];
    let count = 0;
    let hasQueued = false;
    const after = tryQueue(q, clock, (value) => {
      count++;
      seen.push(value);
      if (value.value === 'second' && !hasQueued) {
        hasQueued = true;
        delay = 1;
        return { done: false, wait: 2 };
      }
      order.push(value.value);
      return { done: true };
    });

    expect(order).toEqual(['first', 'third']);
    expect(count).toBe(3);
    expect(seen.map((v) => [v.value, v.addedAt])).toEqual([
      ['first', 1],
      ['second', 2],
      ['third', 3],
    ]);
    // "second" stays queued for 5ms (its t) + 2ms (wait) + 1ns, and stays in the set.
    expect(after.queue).toEqual([{ value: 'second', uid: '22222', addedAt: 2, processAt: 7.000001 }]);
    expect(after.set).toEqual(['first', 'second', 'third']);
  });
});

describe('TestTryRemovingWhileTry', () => {
  it('second removed while being processed is not retried: order [first, third], 3 calls', () => {
    // Upstream removes "second" from another goroutine while fn runs; with the step API the caller
    // does it between tryNext and completeTry.
    let q = addThree(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), fixedClock(T0));
    const order: string[] = [];
    let count = 0;
    let queued = false;
    for (;;) {
      const now = T0 + 1;
      const step = tryNext(q, now);
      q = step.queue;
      if (step.item === undefined) break;
      count++;
      if (!queued && step.item.value === 'second') {
        queued = true;
        q = remove(q, 'second').queue;
        q = completeTry(q, step.item, { done: false, wait: 1 }, now);
        continue;
      }
      order.push(step.item.value);
      q = completeTry(q, step.item, { done: true }, now);
    }
    expect(order).toEqual(['first', 'third']);
    expect(count).toBe(3);
    expect(q.queue).toEqual([]);
  });
});

describe('TestClear', () => {
  it('Clear should remove all elements from the queue.', () => {
    const q = clear(addThree(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), fixedClock(T0)));
    expect(q.queue).toEqual([]);
    expect(q.set).toEqual([]);
  });
});

describe('TestSwapLimiter', () => {
  it('QPS follows the swaps; the same QPS keeps the same limiter', () => {
    let q = newRateLimitedTimedQueue(fakeAlwaysRateLimiter());
    expect(limiterQPS(q.limiter)).toBe(limiterQPS(fakeAlwaysRateLimiter()));

    q = swapLimiter(q, 0, T0);
    expect(limiterQPS(q.limiter)).toBe(limiterQPS(fakeNeverRateLimiter));

    const createdQPS = 5.5;
    q = swapLimiter(q, createdQPS, T0);
    expect(limiterQPS(q.limiter)).toBe(createdQPS);

    const prev = q.limiter;
    const again = swapLimiter(q, createdQPS, T0 + 60_000);
    expect(again.limiter).toBe(prev); // Limiter should not be swapped if the QPS is the same.
    expect(again).toBe(q);
  });
});

describe('TestAddAfterTry', () => {
  it("We shouldn't process the same value if the explicit remove wasn't called.", () => {
    let q = remove(
      addThree(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), fixedClock(T0)),
      'second',
    ).queue;
    const first = tryAllDone(q, fixedClock(T0));
    expect(first.seen).toEqual(['first', 'third']);

    const readd = add(first.queue, 'first', '11111', T0);
    expect(readd.added).toBe(false);
    q = readd.queue;
    expect(tryAllDone(q, fixedClock(T0)).seen).toEqual([]);
  });
});

// Our own cases, for branches upstream's tests don't reach.

describe('constants', () => {
  it('match upstream', () => {
    expect(EvictionRateLimiterBurst).toBe(1);
    expect(NodeEvictionPeriod).toBe(100);
  });
});

describe('add', () => {
  it('keeps processAt order, ties in insertion order', () => {
    let q = newRateLimitedTimedQueue(fakeAlwaysRateLimiter());
    q = add(q, 'b', 'ub', T0 + 5).queue;
    q = add(q, 'a', 'ua', T0).queue;
    q = add(q, 'c', 'uc', T0 + 5).queue;
    expect(q.queue).toEqual([
      { value: 'a', uid: 'ua', addedAt: T0, processAt: T0 },
      { value: 'b', uid: 'ub', addedAt: T0 + 5, processAt: T0 + 5 },
      { value: 'c', uid: 'uc', addedAt: T0 + 5, processAt: T0 + 5 },
    ]);
    expect(q.set).toEqual(['b', 'a', 'c']);
  });

  it('refuses a queued value and returns the same object', () => {
    const q = add(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), 'a', 'u1', T0).queue;
    const again = add(q, 'a', 'u2', T0 + 1);
    expect(again).toEqual({ queue: q, added: false });
    expect(again.queue).toBe(q);
  });

  it('does not change its input', () => {
    const q = add(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), 'a', 'u1', T0).queue;
    const snapshot = structuredClone(q);
    add(q, 'b', 'u2', T0);
    remove(q, 'a');
    expect(q).toEqual(snapshot);
  });
});

describe('remove', () => {
  it.each([
    {
      name: 'queued value: removed from queue and set',
      processFirst: false,
      value: 'a',
      want: true,
      queued: [],
    },
    {
      name: 'processed value only in the set: still true',
      processFirst: true,
      value: 'a',
      want: true,
      queued: [],
    },
    { name: 'unknown value: false', processFirst: false, value: 'z', want: false, queued: ['a'] },
  ])('$name', ({ processFirst, value, want, queued }) => {
    let q = add(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), 'a', 'ua', T0).queue;
    if (processFirst) q = tryAllDone(q, fixedClock(T0)).queue;
    const result = remove(q, value);
    expect(result.removed).toBe(want);
    expect(values(result.queue)).toEqual(queued);
    expect(result.queue.set).toEqual(want ? [] : ['a']);
    if (!want) expect(result.queue).toBe(q);
  });

  it('allows a processed value to be added again', () => {
    const processed = tryAllDone(
      add(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), 'a', 'ua', T0).queue,
      fixedClock(T0),
    );
    const readd = add(remove(processed.queue, 'a').queue, 'a', 'ua2', T0 + 10);
    expect(readd.added).toBe(true);
    expect(tryAllDone(readd.queue, fixedClock(T0 + 10)).seen).toEqual(['a']);
  });
});

describe('removeFromQueue', () => {
  it.each([
    {
      name: 'queued value: out of the queue, kept in the set',
      process: false,
      value: 'a',
      want: true,
      queued: [],
    },
    { name: 'value only in the set: false', process: true, value: 'a', want: false, queued: [] },
    { name: 'unknown value: false', process: false, value: 'z', want: false, queued: ['a'] },
  ])('$name', ({ process, value, want, queued }) => {
    let q = add(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), 'a', 'ua', T0).queue;
    if (process) q = tryAllDone(q, fixedClock(T0)).queue;
    const result = removeFromQueue(q, value);
    expect(result.removed).toBe(want);
    expect(values(result.queue)).toEqual(queued);
    expect(result.queue.set).toEqual(['a']);
    if (!want) expect(result.queue).toBe(q);
  });
});

describe('replace', () => {
  it('moves the entry to its new processAt, after entries due at the same time', () => {
    let q = newRateLimitedTimedQueue(fakeAlwaysRateLimiter());
    q = add(q, 'a', 'ua', T0).queue;
    q = add(q, 'b', 'ub', T0 + 10).queue;
    q = add(q, 'c', 'uc', T0 + 20).queue;
    const result = replace(q, { value: 'a', uid: 'ua', addedAt: T0, processAt: T0 + 10 });
    expect(result.replaced).toBe(true);
    expect(values(result.queue)).toEqual(['b', 'a', 'c']);
    expect(result.queue.set).toEqual(['a', 'b', 'c']);
  });

  it('does nothing for a value not queued', () => {
    const q = add(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), 'a', 'ua', T0).queue;
    const result = replace(q, { value: 'z', uid: 'uz', addedAt: T0, processAt: T0 });
    expect(result).toEqual({ queue: q, replaced: false });
    expect(result.queue).toBe(q);
  });
});

describe('head', () => {
  it.each([
    { name: 'empty queue: undefined', adds: [] as [string, number][], want: undefined },
    {
      name: 'earliest processAt',
      adds: [
        ['b', T0 + 1],
        ['a', T0],
      ] as [string, number][],
      want: 'a',
    },
  ])('$name', ({ adds, want }) => {
    let q = newRateLimitedTimedQueue(fakeAlwaysRateLimiter());
    for (const [value, at] of adds) q = add(q, value, value, at).queue;
    expect(head(q)?.value).toBe(want);
  });
});

describe('tryNext', () => {
  const bucket = (): RateLimiter => newTokenBucketRateLimiter(0.1, EvictionRateLimiterBurst, T0);

  it('empty queue: no item and no token taken', () => {
    const q = newRateLimitedTimedQueue(bucket());
    const step = tryNext(q, T0);
    expect(step).toEqual({ queue: q });
    expect(step.queue).toBe(q);
  });

  it('due head and a token: the head, still queued, and the token is spent', () => {
    const q = add(newRateLimitedTimedQueue(bucket()), 'a', 'ua', T0).queue;
    const step = tryNext(q, T0);
    expect(step.item).toEqual({ value: 'a', uid: 'ua', addedAt: T0, processAt: T0 });
    expect(values(step.queue)).toEqual(['a']);
    expect(tryAccept(step.queue.limiter, T0).accepted).toBe(false);
  });

  it('no token: no item, and the limiter is unchanged', () => {
    const q = add(newRateLimitedTimedQueue(fakeNeverRateLimiter), 'a', 'ua', T0).queue;
    const step = tryNext(q, T0);
    expect(step).toEqual({ queue: q });
    expect(step.queue).toBe(q);
  });

  it('upstream quirk: a head not due yet wastes the token', () => {
    const q = add(newRateLimitedTimedQueue(bucket()), 'a', 'ua', T0 + 1_000).queue;
    const step = tryNext(q, T0);
    expect(step.item).toBeUndefined();
    expect(tryAccept(step.queue.limiter, T0 + 1_000).accepted).toBe(false);
    // The next token comes 10s (0.1 qps) after the wasted one.
    expect(tryNext(step.queue, T0 + 9_999).item).toBeUndefined();
    expect(tryNext(step.queue, T0 + 10_000).item?.value).toBe('a');
  });
});

describe('completeTry', () => {
  const start = (): { q: RateLimitedTimedQueue; item: TimedValue } => {
    const q = add(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), 'a', 'ua', T0).queue;
    const step = tryNext(q, T0);
    return { q: step.queue, item: step.item! };
  };

  it('done: out of the queue, kept in the set (re-Add refused)', () => {
    const { q, item } = start();
    const after = completeTry(q, item, { done: true }, T0);
    expect(after.queue).toEqual([]);
    expect(after.set).toEqual(['a']);
    expect(add(after, 'a', 'ua', T0 + 1).added).toBe(false);
  });

  it('not done: retried at t + wait + 1ns', () => {
    const { q, item } = start();
    const after = completeTry(q, item, { done: false, wait: 50 }, T0);
    expect(after.queue).toHaveLength(1);
    const retry = after.queue[0]!;
    expect(retry.processAt).toBeGreaterThan(T0 + 50);
    expect(retry.processAt - (T0 + 50)).toBeLessThan(0.001);
    expect(retry).toMatchObject({ value: 'a', uid: 'ua', addedAt: T0 });
    // Not due at t + wait; due one millisecond later.
    expect(tryNext(after, T0 + 50).item).toBeUndefined();
    expect(tryNext(after, T0 + 51).item?.value).toBe('a');
  });

  it('not done with no wait: strictly after t even at epoch magnitudes (+1ns would round away)', () => {
    const { q, item } = start();
    const after = completeTry(q, item, { done: false, wait: 0 }, T0);
    expect(T0 + 1e-6).toBe(T0); // the precision problem this guards against
    expect(after.queue[0]!.processAt).toBeGreaterThan(T0);
    expect(tryNext(after, T0).item).toBeUndefined();
  });

  it('not done at a time before the epoch: still strictly after t', () => {
    const t = -T0;
    const q = add(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), 'a', 'ua', t).queue;
    const step = tryNext(q, t);
    const after = completeTry(step.queue, step.item!, { done: false, wait: 0 }, t);
    expect(after.queue[0]!.processAt).toBeGreaterThan(t);
  });

  it('not done after a remove: no-op (TestTryRemovingWhileTry)', () => {
    const { q, item } = start();
    const removed = remove(q, 'a').queue;
    expect(completeTry(removed, item, { done: false, wait: 1 }, T0)).toBe(removed);
  });
});

describe('tryQueue', () => {
  it('empty queue: the clock is not read', () => {
    let reads = 0;
    const q = newRateLimitedTimedQueue(fakeAlwaysRateLimiter());
    const after = tryQueue(
      q,
      () => {
        reads++;
        return T0;
      },
      () => ({ done: true }),
    );
    expect(after).toBe(q);
    expect(reads).toBe(0);
  });

  it('a burst-1 bucket processes one item per token', () => {
    let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, EvictionRateLimiterBurst, T0));
    q = addThree(q, fixedClock(T0));
    const pass1 = tryAllDone(q, fixedClock(T0));
    expect(pass1.seen).toEqual(['first']);
    const pass2 = tryAllDone(pass1.queue, fixedClock(T0 + NodeEvictionPeriod));
    expect(pass2.seen).toEqual([]);
    const pass3 = tryAllDone(pass2.queue, fixedClock(T0 + 10_000));
    expect(pass3.seen).toEqual(['second']);
  });

  it('not done without a wait: retried once time has moved past t', () => {
    let at = T0;
    const q = add(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), 'a', 'ua', T0).queue;
    const calls: number[] = [];
    const after = tryQueue(
      q,
      () => at++,
      (v) => {
        calls.push(v.processAt);
        return calls.length < 3 ? { done: false } : { done: true };
      },
    );
    expect(calls).toHaveLength(3);
    expect(after.queue).toEqual([]);
  });

  it('never-limiter: fn is never called', () => {
    const q = addThree(newRateLimitedTimedQueue(fakeNeverRateLimiter), fixedClock(T0));
    expect(tryAllDone(q, fixedClock(T0 + 3_600_000)).seen).toEqual([]);
  });
});

describe('swapLimiter', () => {
  const drainedBucket = (qps: number): RateLimiter =>
    tryAccept(newTokenBucketRateLimiter(qps, EvictionRateLimiterBurst, T0), T0).limiter;

  it.each([
    {
      name: 'old limiter has a token: new bucket starts full',
      old: newTokenBucketRateLimiter(0.1, 1, T0),
      newQPS: 0.01,
      acceptsAtSwap: true,
    },
    {
      name: 'old limiter has no token: new bucket is drained',
      old: drainedBucket(0.1),
      newQPS: 0.01,
      acceptsAtSwap: false,
    },
    {
      name: 'from the never-limiter: new bucket is drained (exit of master disruption)',
      old: fakeNeverRateLimiter,
      newQPS: 0.1,
      acceptsAtSwap: false,
    },
  ])('$name', ({ old, newQPS, acceptsAtSwap }) => {
    const at = T0 + 1_000;
    const q = swapLimiter(newRateLimitedTimedQueue(old), newQPS, at);
    expect(q.limiter).toMatchObject({ kind: 'tokenBucket', qps: newQPS, burst: EvictionRateLimiterBurst });
    expect(tryAccept(q.limiter, at).accepted).toBe(acceptsAtSwap);
    // A drained bucket has its first token 1/qps after the swap.
    expect(tryAccept(q.limiter, at + 1_000 / newQPS).accepted).toBe(true);
  });

  it.each([
    { name: 'qps 0 installs the never-limiter', newQPS: 0 },
    { name: 'negative qps installs the never-limiter', newQPS: -1 },
  ])('$name', ({ newQPS }) => {
    const q = swapLimiter(newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, T0)), newQPS, T0);
    expect(q.limiter).toBe(fakeNeverRateLimiter);
  });

  it('upstream quirk: the never-limiter reports QPS 1, so a swap to 1 keeps it', () => {
    const q = newRateLimitedTimedQueue(fakeNeverRateLimiter);
    expect(swapLimiter(q, 1, T0)).toBe(q);
  });

  it('upstream quirk: a swap to 0 replaces a never-limiter with another never-limiter', () => {
    const q = newRateLimitedTimedQueue(fakeNeverRateLimiter);
    expect(swapLimiter(q, 0, T0).limiter).toEqual(fakeNeverRateLimiter);
  });

  it('keeps the queue and set', () => {
    const q = addThree(newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, T0)), fixedClock(T0));
    const swapped = swapLimiter(q, 0.01, T0);
    expect(swapped.queue).toBe(q.queue);
    expect(swapped.set).toBe(q.set);
  });
});

describe('WorkingQueue', () => {
  const abc = (): RateLimitedTimedQueue =>
    addThree(newRateLimitedTimedQueue(fakeAlwaysRateLimiter()), fixedClock(T0));

  it('Remove then Add moves the value to the end of the queue and of the set', () => {
    const working = new WorkingQueue(abc());
    expect(working.remove('first')).toBe(true);
    expect(working.add('first', 'u1', T0 + 5)).toBe(true);
    expect(working.queue()).toEqual(add(remove(abc(), 'first').queue, 'first', 'u1', T0 + 5).queue);
    expect(values(working.queue())).toEqual(['second', 'third', 'first']);
    expect(working.queue().set).toEqual(['second', 'third', 'first']);
  });

  it('keeps processAt order, ties in insertion order, for an Add earlier than the queue', () => {
    const working = new WorkingQueue(abc());
    working.add('early', 'u0', T0 - 1);
    working.add('tie', 'u4', T0);
    expect(values(working.queue())).toEqual(['early', 'first', 'second', 'third', 'tie']);
  });

  it('refuses a value in the set, even one processed and no longer queued', () => {
    const processed = tryAllDone(abc(), fixedClock(T0)).queue;
    const working = new WorkingQueue(processed);
    expect(working.add('first', 'u1', T0 + 1)).toBe(false);
    expect(working.remove('first')).toBe(true);
    expect(working.remove('first')).toBe(false);
    expect(working.remove('unknown')).toBe(false);
    expect(working.add('first', 'u1', T0 + 1)).toBe(true);
    expect(values(working.queue())).toEqual(['first']);
  });

  it('gives the same object until something changes, and keeps working after a read', () => {
    const q = abc();
    const working = new WorkingQueue(q);
    working.add('first', 'u1', T0 + 1);
    working.remove('unknown');
    expect(working.queue()).toBe(q);
    working.remove('second');
    const read = working.queue();
    expect(read).not.toBe(q);
    expect(working.queue()).toBe(read);
    working.add('second', 'u2', T0 + 2);
    expect(values(working.queue())).toEqual(['first', 'third', 'second']);
    expect(values(read)).toEqual(['first', 'third']);
  });

  it('does not change the queue it started from', () => {
    const q = abc();
    const snapshot = structuredClone(q);
    const working = new WorkingQueue(q);
    working.remove('first');
    working.add('fourth', 'u4', T0);
    working.queue();
    expect(q).toEqual(snapshot);
  });
});

describe('serialization', () => {
  it('a queue survives a JSON round trip and behaves the same', () => {
    let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, T0));
    q = addThree(q, fixedClock(T0));
    q = tryAllDone(q, fixedClock(T0)).queue;
    const stored = JSON.parse(JSON.stringify(q)) as RateLimitedTimedQueue;
    expect(stored).toEqual(q);
    expect(tryAllDone(stored, fixedClock(T0 + 10_000))).toEqual(tryAllDone(q, fixedClock(T0 + 10_000)));
  });
});
