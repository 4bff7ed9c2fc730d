import { describe, expect, it } from 'vitest';
import {
  type RateLimiter,
  fakeNeverRateLimiter,
  limiterQPS,
  newTokenBucketRateLimiter,
  reserve,
  tokensAt,
  tryAccept,
} from '../../../shared/domain/tokenBucket.js';

// Expected values come from x/time/rate's token bucket: full at creation, +qps tokens per second,
// capped at burst, a token per accepted call, no state change on rejection.

const T0 = Date.parse('2017-01-01T12:00:00Z');

/** Calls tryAccept at each instant in turn, threading the limiter; returns the answers. */
function acceptAll(
  limiter: RateLimiter,
  instants: readonly number[],
): { answers: boolean[]; limiter: RateLimiter } {
  const answers: boolean[] = [];
  let current = limiter;
  for (const at of instants) {
    const result = tryAccept(current, at);
    answers.push(result.accepted);
    current = result.limiter;
  }
  return { answers, limiter: current };
}

describe('tryAccept', () => {
  it.each([
    {
      name: 'initial bucket is full: burst calls at once, then none',
      qps: 1,
      burst: 3,
      instants: [T0, T0, T0, T0],
      want: [true, true, true, false],
    },
    {
      name: 'refills at qps tokens per second',
      qps: 2,
      burst: 1,
      instants: [T0, T0 + 400, T0 + 500, T0 + 999, T0 + 1000],
      want: [true, false, true, false, true],
    },
    {
      name: 'default eviction rate: one token per 10s',
      qps: 0.1,
      burst: 1,
      instants: [T0, T0 + 100, T0 + 9_999, T0 + 10_000, T0 + 10_000],
      want: [true, false, false, true, false],
    },
    {
      name: 'refill is capped at burst',
      qps: 10,
      burst: 2,
      instants: [T0, T0, T0 + 10_000, T0 + 10_000, T0 + 10_000],
      want: [true, true, true, true, false],
    },
    {
      name: 'clock going backwards: no time elapses',
      qps: 1,
      burst: 1,
      instants: [T0 + 10_000, T0 + 5_000, T0 + 10_999, T0 + 11_000],
      want: [true, false, false, true],
    },
    {
      name: 'clock going backwards does not move last back (no interval is granted twice)',
      qps: 1,
      burst: 2,
      // T0+10s: 2 → 1; T0+5s: elapsed 0, 1 → 0; T0+11s: one second since T0+10s → 1 token only.
      instants: [T0 + 10_000, T0 + 5_000, T0 + 11_000, T0 + 11_000],
      want: [true, true, true, false],
    },
    {
      name: 'qps 0: burst calls, then none ever',
      qps: 0,
      burst: 2,
      instants: [T0, T0 + 1, T0 + 86_400_000, T0 + 2 * 86_400_000],
      want: [true, true, false, false],
    },
    {
      name: 'negative qps refills nothing, like qps 0',
      qps: -1,
      burst: 1,
      instants: [T0, T0 + 86_400_000],
      want: [true, false],
    },
    {
      name: 'burst 0 never accepts',
      qps: 1_000_000_000,
      burst: 0,
      instants: [T0, T0 + 1_000],
      want: [false, false],
    },
    {
      name: 'a deficit refilled in under 1ns is no wait (x/time truncates to whole nanoseconds)',
      qps: 1,
      burst: 1,
      instants: [0, 999.9999995],
      want: [true, true],
    },
    {
      name: 'a deficit of 2ns is a wait',
      qps: 1,
      burst: 1,
      instants: [0, 999.999998],
      want: [true, false],
    },
  ])('$name', ({ qps, burst, instants, want }) => {
    const first = instants[0] ?? T0;
    expect(acceptAll(newTokenBucketRateLimiter(qps, burst, first), instants).answers).toEqual(want);
  });

  it('a rejected call returns the very same limiter (no state change)', () => {
    const drained = tryAccept(newTokenBucketRateLimiter(0.1, 1, T0), T0).limiter;
    const rejected = tryAccept(drained, T0 + 5_000);
    expect(rejected.accepted).toBe(false);
    expect(rejected.limiter).toBe(drained);
  });

  it('an accepted call takes one token and records the instant', () => {
    const result = tryAccept(newTokenBucketRateLimiter(0.5, 3, T0), T0 + 1_000);
    expect(result).toEqual({
      accepted: true,
      limiter: { kind: 'tokenBucket', qps: 0.5, burst: 3, tokens: 2, last: T0 + 1_000 },
    });
  });

  it('partial tokens accumulate as a float', () => {
    const drained = acceptAll(newTokenBucketRateLimiter(0.1, 2, T0), [T0, T0]).limiter;
    // Rejected calls don't store the refill; the next accepted one sees the full elapsed time:
    // 15s × 0.1 = 1.5 tokens, one taken.
    const { limiter } = acceptAll(drained, [T0 + 2_500, T0 + 15_000]);
    expect(limiter).toMatchObject({ tokens: 0.5, last: T0 + 15_000 });
  });

  it('a bucket created before a first call in the past is still full (x/time fills lazily)', () => {
    expect(tryAccept(newTokenBucketRateLimiter(1, 1, T0), T0 - 60_000).accepted).toBe(true);
  });

  it('the never-limiter never accepts and is returned unchanged', () => {
    const result = tryAccept(fakeNeverRateLimiter, T0);
    expect(result.accepted).toBe(false);
    expect(result.limiter).toBe(fakeNeverRateLimiter);
  });

  it('limiter state survives a JSON round trip', () => {
    const { limiter } = acceptAll(newTokenBucketRateLimiter(0.1, 1, T0), [T0, T0 + 2_500]);
    const stored = JSON.parse(JSON.stringify(limiter)) as RateLimiter;
    expect(stored).toEqual(limiter);
    expect(acceptAll(stored, [T0 + 9_999, T0 + 10_000]).answers).toEqual([false, true]);
  });
});

describe('newTokenBucketRateLimiter', () => {
  it('starts full at now', () => {
    expect(newTokenBucketRateLimiter(0.1, 1, T0)).toEqual({
      kind: 'tokenBucket',
      qps: 0.1,
      burst: 1,
      tokens: 1,
      last: T0,
    });
  });
});

describe('limiterQPS', () => {
  it.each([
    {
      name: 'token bucket reports its configured qps',
      limiter: newTokenBucketRateLimiter(5.5, 1, T0),
      want: 5.5,
    },
    { name: 'token bucket with qps 0 reports 0', limiter: newTokenBucketRateLimiter(0, 1, T0), want: 0 },
    { name: 'never-limiter reports 1 (upstream quirk)', limiter: fakeNeverRateLimiter, want: 1 },
  ])('$name', ({ limiter, want }) => {
    expect(limiterQPS(limiter)).toBe(want);
  });
});

describe('tokensAt', () => {
  const drained = { kind: 'tokenBucket', qps: 0.1, burst: 1, tokens: 0, last: T0 } as const;
  it.each([
    { name: 'a drained bucket at its last instant holds nothing', at: T0, want: 0 },
    { name: 'half refilled after half a token interval', at: T0 + 5_000, want: 0.5 },
    { name: 'full after one token interval', at: T0 + 10_000, want: 1 },
    { name: 'capped at burst long after', at: T0 + 3_600_000, want: 1 },
    { name: 'an instant before last refills nothing', at: T0 - 60_000, want: 0 },
  ])('$name', ({ at, want }) => {
    expect(tokensAt(drained, at)).toBeCloseTo(want, 9);
  });

  it('is what tryAccept finds available: a token taken exactly when tokensAt reaches 1', () => {
    const full = T0 + 10_000;
    expect(tokensAt(drained, full - 1)).toBeLessThan(1);
    expect(tryAccept(drained, full - 1).accepted).toBe(false);
    expect(tryAccept(drained, full).accepted).toBe(true);
  });
});

// client-go's tokenBucketRateLimiter.Wait (x/time reserveN with a wait budget): what the Kubernetes
// adapter paces its requests with.
describe('reserve', () => {
  it('spends the burst at once, then spaces callers 1/qps apart (client-go QPS 20, burst 30)', () => {
    let limiter = newTokenBucketRateLimiter(20, 30, 0);
    const waits: number[] = [];
    for (let i = 0; i < 33; i++) {
      const r = reserve(limiter, 0);
      limiter = r.limiter;
      waits.push(r.waitMs);
    }
    expect(waits.slice(0, 30)).toEqual(Array<number>(30).fill(0));
    expect(waits.slice(30).map((w) => Math.round(w))).toEqual([50, 100, 150]);
  });

  it('refills with time: after the debt is paid, the next token is free again', () => {
    let limiter = newTokenBucketRateLimiter(10, 1, 0);
    limiter = reserve(limiter, 0).limiter;
    const second = reserve(limiter, 0);
    expect(second.waitMs).toBeCloseTo(100, 6);
    // At 200 ms the debt (-1 at 0) is repaid and one token more has come.
    expect(reserve(second.limiter, 200).waitMs).toBe(0);
  });

  it('a clock going backwards refills nothing and grants no extra token', () => {
    let limiter = newTokenBucketRateLimiter(1, 1, 10_000);
    limiter = reserve(limiter, 10_000).limiter;
    expect(reserve(limiter, 5_000).waitMs).toBeCloseTo(1_000, 6);
  });

  it('waits forever on a zero rate once the burst is spent, and on the never limiter', () => {
    const zero = reserve(newTokenBucketRateLimiter(0, 1, 0), 0);
    expect(zero.waitMs).toBe(0);
    expect(reserve(zero.limiter, 60_000).waitMs).toBe(Infinity);
    expect(reserve(fakeNeverRateLimiter, 0).waitMs).toBe(Infinity);
  });
});
