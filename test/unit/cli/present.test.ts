// What status, queue, explain and the live view show for the same stored values: tokens at now, probe
// ages, decision results.
import { describe, expect, it } from 'vitest';
import {
  limiterView,
  probeAge,
  probeAgeCell,
  probeAgeFields,
  resultKind,
  tokensCell,
} from '../../../shared/present/present.js';
import { fakeNeverRateLimiter } from '../../../shared/domain/tokenBucket.js';

const T = Date.parse('2026-01-29T09:00:00Z');

describe('limiterView', () => {
  const drained = { kind: 'tokenBucket', qps: 0.1, burst: 1, tokens: 0, last: T } as const;

  it.each([
    { name: 'just drained', now: T, tokensNow: 0, cell: '0.00/1' },
    { name: 'refilling', now: T + 5_000, tokensNow: 0.5, cell: '0.50/1' },
    // The live view once showed 0/1 here: the stored tokens, not the bucket at now.
    { name: 'refilled long ago', now: T + 600_000, tokensNow: 1, cell: '1.00/1' },
    { name: 'a reader whose clock is behind the bucket', now: T - 60_000, tokensNow: 0, cell: '0.00/1' },
  ])('$name: $cell', ({ now, tokensNow, cell }) => {
    const view = limiterView(drained, now);
    expect(view).toMatchObject({
      kind: 'tokenBucket',
      tokens: 0,
      tokensNow,
      last: new Date(T).toISOString(),
    });
    expect(tokensCell(view)).toBe(cell);
  });

  it('the never-limiter has no tokens', () => {
    expect(limiterView(fakeNeverRateLimiter, T)).toEqual({ kind: 'never', qps: 0 });
    expect(tokensCell(limiterView(fakeNeverRateLimiter, T))).toBe('-');
    expect(tokensCell(null)).toBe('-');
  });
});

describe('probeAge', () => {
  const observedAt = T + 70_000;

  it.each([
    {
      name: 'a node the controller marked Unknown: the age of its last probe, on the relay clock',
      node: { probeTime: T, ready: 'Unknown' },
      want: { kind: 'silent', seconds: 70 },
      cell: '1m10s',
    },
    {
      // Its stored probe is from registration; the controller saw newer ones it did not store.
      name: 'a Ready node: live, never the age of an old stored probe',
      node: { probeTime: T - 3_600_000, ready: 'True' },
      want: { kind: 'live' },
      cell: 'live',
    },
    {
      name: 'a node whose kubelet posts NotReady is alive too',
      node: { probeTime: T - 3_600_000, ready: 'False' },
      want: { kind: 'live' },
      cell: 'live',
    },
    {
      name: 'no health stored yet',
      node: { probeTime: undefined, ready: null },
      want: { kind: 'unknown' },
      cell: '-',
    },
  ])('$name', ({ node, want, cell }) => {
    const age = probeAge(node, observedAt);
    expect(age).toEqual(want);
    expect(probeAgeCell(probeAgeFields(age))).toBe(cell);
  });

  it('is unknown before the first digest', () => {
    expect(probeAge({ probeTime: T, ready: 'Unknown' }, undefined)).toEqual({ kind: 'unknown' });
  });

  it('a silent node always reads staler than a live one', () => {
    const silent = probeAgeFields(probeAge({ probeTime: T, ready: 'Unknown' }, observedAt));
    const live = probeAgeFields(probeAge({ probeTime: T - 3_600_000, ready: 'True' }, observedAt));
    expect(silent).toEqual({ probe: 'silent', probeAgeSeconds: 70 });
    expect(live).toEqual({ probe: 'live', probeAgeSeconds: null });
  });
});

describe('resultKind', () => {
  it.each([
    { result: undefined, want: 'none' },
    { result: null, want: 'none' },
    { result: 'intended', want: 'intended' },
    { result: 'dryRun', want: 'dryRun' },
    { result: 'ok', want: 'ok' },
    { result: 'ok (already so)', want: 'ok' },
    { result: 'ok (pod already gone)', want: 'ok' },
    { result: 'Conflict: the object has been modified', want: 'failed' },
    { result: 'NotFound: pods "web-1" not found (3 attempts)', want: 'failed' },
    { result: 'Failed: connection reset', want: 'failed' },
    { result: 'fires at 2026-01-29T09:05:00.000Z', want: 'note' },
    { result: 'cancelled', want: 'note' },
    { result: 'removed a running deletion', want: 'note' },
  ])('$result → $want', ({ result, want }) => {
    expect(resultKind(result)).toBe(want);
  });
});
