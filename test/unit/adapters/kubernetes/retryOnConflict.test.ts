import { describe, expect, it } from 'vitest';
import {
  UpdateTaintBackoff,
  backoffWaits,
  retryOnConflict,
} from '../../../../shared/adapters/kubernetes/retryOnConflict.js';

describe('UpdateTaintBackoff', () => {
  it('is upstream pkg/controller UpdateTaintBackoff: 5 steps of 100ms with jitter 1.0', () => {
    expect(UpdateTaintBackoff).toEqual({ steps: 5, duration: 100, factor: 1.0, jitter: 1.0 });
    // wait.ExponentialBackoff sleeps between attempts only: 4 waits in [100, 200) ms.
    expect(backoffWaits(UpdateTaintBackoff, () => 0)).toEqual([100, 100, 100, 100]);
    expect(backoffWaits(UpdateTaintBackoff, () => 0.5)).toEqual([150, 150, 150, 150]);
  });

  it('grows by factor per step when one is set (wait.Backoff.Step)', () => {
    expect(backoffWaits({ steps: 4, duration: 10, factor: 2, jitter: 0 }, () => 0.9)).toEqual([10, 20, 40]);
  });
});

describe('retryOnConflict (client-go retry.RetryOnConflict)', () => {
  const conflict = { ok: false, reason: 'Conflict' } as const;
  const done = { ok: true } as const;
  type R = typeof conflict | typeof done;

  function run(results: R[]) {
    const slept: number[] = [];
    let calls = 0;
    const promise = retryOnConflict<R>(
      UpdateTaintBackoff,
      () => Promise.resolve(results[calls++] ?? done),
      (r) => !r.ok,
      {
        sleep: (ms) => {
          slept.push(ms);
          return Promise.resolve();
        },
        random: () => 0,
      },
    );
    return { promise, slept, calls: () => calls };
  }

  it('returns the first non-conflict result, sleeping only between attempts', async () => {
    const r = run([conflict, conflict, done]);
    await expect(r.promise).resolves.toEqual(done);
    expect(r.calls()).toBe(3);
    expect(r.slept).toEqual([100, 100]);
  });

  it('gives up after steps attempts and returns the last conflict', async () => {
    const r = run([conflict, conflict, conflict, conflict, conflict, done]);
    await expect(r.promise).resolves.toEqual(conflict);
    expect(r.calls()).toBe(5);
    expect(r.slept).toHaveLength(4);
  });
});
