import { describe, expect, it } from 'vitest';
import {
  createRequestThrottle,
  DEFAULT_RETRY_POLICY,
  isRetryableStatus,
  parseRetryAfter,
  retryDelay,
} from '../../../../shared/adapters/kubernetes/resilientHttp.js';

const now = Date.parse('2024-05-01T10:00:00Z');

describe('isRetryableStatus', () => {
  it.each([
    [429, true],
    [500, true],
    [503, true],
    [504, true],
    [400, false],
    [404, false],
    [409, false],
    [422, false],
    [200, false],
  ])('%i → %s', (status, want) => {
    expect(isRetryableStatus(status)).toBe(want);
  });
});

describe('parseRetryAfter', () => {
  it.each([
    { name: 'delta seconds', value: '3', want: 3000 },
    { name: 'zero', value: '0', want: 0 },
    { name: 'an HTTP date', value: 'Wed, 01 May 2024 10:00:05 GMT', want: 5000 },
    { name: 'an HTTP date in the past', value: 'Wed, 01 May 2024 09:00:00 GMT', want: 0 },
    { name: 'absent', value: undefined, want: undefined },
    { name: 'garbage', value: 'soon', want: undefined },
    { name: 'negative seconds', value: '-1', want: undefined },
  ])('$name', ({ value, want }) => {
    expect(parseRetryAfter(value, now)).toBe(want);
  });
});

describe('retryDelay', () => {
  it('doubles per retry from the base, is capped, and jitters within the upper half', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 200, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(n, policy, () => 0))).toEqual([100, 200, 400, 500, 500]);
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(n, policy, () => 0.999999))).toEqual([
      200, 400, 800, 1000, 1000,
    ]);
  });
});

describe('createRequestThrottle', () => {
  it('paces at qps after the burst on its clock, and counts what it paced', async () => {
    let now = 0;
    const slept: number[] = [];
    const throttle = createRequestThrottle({
      qps: 20,
      burst: 30,
      now: () => now,
      sleep: (ms) => {
        slept.push(ms);
        now += ms;
        return Promise.resolve();
      },
    });
    for (let i = 0; i < 40; i++) await throttle.wait();
    // 30 at once, then each 50 ms after the previous: 10 × 50 ms of waiting.
    expect(slept.map(Math.round)).toEqual(Array<number>(10).fill(50));
    expect(throttle.stats()).toEqual({ requests: 40, waitedMs: expect.closeTo(500, 6) as number });
    // Idle for 1.5 s refills 30 tokens: the next 30 go at once again.
    now += 1_500;
    slept.length = 0;
    for (let i = 0; i < 30; i++) await throttle.wait();
    expect(slept).toEqual([]);
  });

  it('rejects with the caller when its sleep is aborted', async () => {
    const throttle = createRequestThrottle({
      qps: 1,
      burst: 1,
      now: () => 0,
      sleep: (_ms, signal) => Promise.reject(signal?.reason as Error),
    });
    await throttle.wait();
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(throttle.wait(controller.signal)).rejects.toThrow('stop');
  });
});
