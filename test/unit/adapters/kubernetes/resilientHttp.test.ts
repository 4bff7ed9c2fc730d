import { describe, expect, it } from 'vitest';
import {
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
