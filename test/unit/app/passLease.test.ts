// withPassLease (shared/app/passLease.ts): the pass runs only under its cluster's lease, taken until the
// invocation's deadline plus the margin and given back whatever the pass does; a held lease makes the
// delivery a counted no-op, except that a part of a split digest asks again (up to `waitMs`) rather
// than be dropped.
import { describe, expect, it } from 'vitest';
import { PassLeaseMarginMs, PassLeaseRetryMs, withPassLease } from '../../../shared/app/passLease.js';
import type { PassLeaseResult, PassLeaseStore } from '../../../shared/ports/stores.js';
import { silentObserver, type Observer } from '../../../shared/ports/observer.js';

const t0 = 1_000_000;

/** A lease store answering `held` for the first `busyFor` asks, recording every call. */
function fakeStore(busyFor: number) {
  const calls: string[] = [];
  let asks = 0;
  const store: PassLeaseStore = {
    acquire: (cluster, lease) => {
      asks++;
      calls.push(`acquire ${cluster} ${lease.holder} until ${lease.until - t0}`);
      const result: PassLeaseResult =
        asks <= busyFor
          ? { acquired: false, held: { holder: 'other', until: t0 + 30_000 } }
          : { acquired: true };
      return Promise.resolve(result);
    },
    release: (cluster, holder) => {
      calls.push(`release ${cluster} ${holder}`);
      return Promise.resolve();
    },
  };
  return { store, calls };
}

function deps(store: PassLeaseStore, observer: Observer = silentObserver) {
  let now = t0;
  const slept: number[] = [];
  return {
    slept,
    deps: {
      config: { cluster: 'prod' },
      stores: { passLease: store },
      clock: { now: () => now },
      observer,
      sleep: (ms: number) => {
        slept.push(ms);
        now += ms;
        return Promise.resolve();
      },
    },
  };
}

describe('withPassLease', () => {
  it('runs the pass under the lease until the deadline plus the margin, then gives it back', async () => {
    const { store, calls } = fakeStore(0);
    const run = await withPassLease(deps(store).deps, { holder: 'me', remainingMs: 60_000 }, () =>
      Promise.resolve(42),
    );
    expect(run).toEqual({ kind: 'ran', value: 42 });
    expect(calls).toEqual([`acquire prod me until ${60_000 + PassLeaseMarginMs}`, 'release prod me']);
  });

  it('gives the lease back when the pass throws', async () => {
    const { store, calls } = fakeStore(0);
    await expect(
      withPassLease(deps(store).deps, { holder: 'me', remainingMs: 60_000 }, () =>
        Promise.reject(new Error('boom')),
      ),
    ).rejects.toThrow('boom');
    expect(calls.at(-1)).toBe('release prod me');
  });

  it('a held lease: no pass, counted and logged with its holder', async () => {
    const { store, calls } = fakeStore(1);
    const metrics: string[] = [];
    const lines: unknown[] = [];
    const observer: Observer = {
      ...silentObserver,
      metric: (name) => void metrics.push(name),
      info: (message, fields) => void lines.push({ message, ...fields }),
    };
    let ran = false;
    const run = await withPassLease(deps(store, observer).deps, { holder: 'me', remainingMs: 60_000 }, () => {
      ran = true;
      return Promise.resolve();
    });
    expect(run).toEqual({ kind: 'busy', held: { holder: 'other', until: t0 + 30_000 } });
    expect(ran).toBe(false);
    expect(calls).toHaveLength(1); // nothing released: it was never ours
    expect(metrics).toEqual(['nlc_monitor_pass_lease_busy_total']);
    expect(lines).toEqual([expect.objectContaining({ cluster: 'prod', holder: 'other', heldForMs: 30_000 })]);
  });

  it('a part of a split digest asks again for up to waitMs, keeping its deadline', async () => {
    const { store, calls } = fakeStore(3);
    const { deps: d, slept } = deps(store);
    const run = await withPassLease(d, { holder: 'me', remainingMs: 60_000, waitMs: 5_000 }, () =>
      Promise.resolve('merged'),
    );
    expect(run).toEqual({ kind: 'ran', value: 'merged' });
    expect(slept).toEqual([PassLeaseRetryMs, PassLeaseRetryMs, PassLeaseRetryMs]);
    expect(calls.filter((c) => c.startsWith('acquire'))).toEqual(
      Array.from({ length: 4 }, () => `acquire prod me until ${60_000 + PassLeaseMarginMs}`),
    );
    // And gives up after waitMs.
    const busy = fakeStore(1_000);
    const { deps: d2, slept: slept2 } = deps(busy.store);
    expect(
      (await withPassLease(d2, { holder: 'me', remainingMs: 60_000, waitMs: 500 }, () => Promise.resolve()))
        .kind,
    ).toBe('busy');
    expect(slept2).toHaveLength(500 / PassLeaseRetryMs);
  });
});
