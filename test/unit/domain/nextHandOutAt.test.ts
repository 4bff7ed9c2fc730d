// When the drainer wakes: the first instant tryNext hands out an item (the first unclaimed one once its
// processAt has come and its zone's bucket has a token, or a claimed one once its claim runs out), found
// with the domain's own tryNext.
import { describe, expect, it } from 'vitest';
import {
  add,
  newRateLimitedTimedQueue,
  nextHandOutAt,
  tryNext,
} from '../../../shared/domain/rateLimitedTimedQueue.js';
import { fakeNeverRateLimiter, newTokenBucketRateLimiter } from '../../../shared/domain/tokenBucket.js';

const t0 = Date.parse('2026-01-01T00:00:00Z');

describe('nextHandOutAt', () => {
  it('is the next token of the zone: 10 s after the last one at 0.1/s', () => {
    let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0));
    q = add(q, 'a', 'uid-a', t0).queue;
    q = add(q, 'b', 'uid-b', t0).queue;
    q = tryNext(q, t0).queue; // a's token taken at t0 (a stays queued until completed)
    q = { ...q, queue: q.queue.slice(1) };
    expect(nextHandOutAt(q, t0)).toBe(t0 + 10_000);
  });

  it("is the head's processAt when a token is there before it", () => {
    let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0));
    q = add(q, 'a', 'uid-a', t0 + 2_500).queue;
    expect(nextHandOutAt(q, t0)).toBe(t0 + 2_500);
  });

  it('is undefined for an empty queue or a zone that never gets a token', () => {
    expect(
      nextHandOutAt(newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0)), t0),
    ).toBeUndefined();
    const never = add(newRateLimitedTimedQueue(fakeNeverRateLimiter), 'a', 'uid-a', t0).queue;
    expect(nextHandOutAt(never, t0)).toBeUndefined();
    let spent = add(newRateLimitedTimedQueue(newTokenBucketRateLimiter(0, 1, t0)), 'a', 'uid-a', t0).queue;
    spent = tryNext(spent, t0).queue; // rate 0: the burst, then nothing
    expect(nextHandOutAt(spent, t0)).toBeUndefined();
  });

  it("is the next item's token when the head is held by a run still writing", () => {
    let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0));
    q = add(q, 'a', 'uid-a', t0).queue;
    q = add(q, 'b', 'uid-b', t0).queue;
    q = tryNext(q, t0, { by: 'run-a', ttl: 60_000 }).queue; // a held for a minute
    expect(nextHandOutAt(q, t0)).toBe(t0 + 10_000);
    expect(tryNext(q, t0 + 10_000).item?.value).toBe('b');
  });

  it('is the instant a claim runs out when that comes before any token, even in a zone without tokens', () => {
    let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(0, 1, t0));
    q = add(q, 'a', 'uid-a', t0).queue;
    q = tryNext(q, t0, { by: 'run-a', ttl: 15_000 }).queue; // rate 0: the burst, then nothing
    expect(nextHandOutAt(q, t0)).toBe(t0 + 15_000);
    expect(nextHandOutAt(q, t0 + 20_000)).toBe(t0 + 20_001); // ran out already: at once
  });

  it('is strictly after `after`', () => {
    const q = add(newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0)), 'a', 'uid-a', t0).queue;
    expect(nextHandOutAt(q, t0)).toBe(t0 + 1);
  });
});
