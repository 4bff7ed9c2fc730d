// PassLeaseStore on dynalite: one monitor pass per cluster at a time. A held lease refuses a second
// holder, an expired one is taken over, a release never deletes a lease taken over, and clusters are
// independent (their passes run in parallel).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';

const t0 = Date.parse('2026-03-02T09:00:00.000Z');
let db: DynamoFixture;
beforeAll(async () => {
  db = await startDynamoDb('nlc-lease');
});
afterAll(async () => {
  await db.stop();
});

describe('PassLeaseStore', () => {
  it('refuses a second holder while the lease is unexpired, and says whose it is', async () => {
    const { passLease } = db.stores();
    expect(await passLease.acquire('overlap', { holder: 'a', until: t0 + 60_000, now: t0 })).toEqual({
      acquired: true,
    });
    expect(await passLease.acquire('overlap', { holder: 'b', until: t0 + 61_000, now: t0 + 1_000 })).toEqual({
      acquired: false,
      held: { holder: 'a', until: t0 + 60_000 },
    });
    // At its very deadline the lease still holds: expiry is strictly after `until`.
    expect(
      (await passLease.acquire('overlap', { holder: 'b', until: t0 + 120_000, now: t0 + 60_000 })).acquired,
    ).toBe(false);
  });

  it('is taken over once expired (its holder crashed or timed out); the old holder cannot release it', async () => {
    const { passLease } = db.stores();
    await passLease.acquire('takeover', { holder: 'crashed', until: t0 + 60_000, now: t0 });
    expect(
      await passLease.acquire('takeover', { holder: 'next', until: t0 + 125_000, now: t0 + 65_000 }),
    ).toEqual({ acquired: true });
    await passLease.release('takeover', 'crashed');
    expect(
      await passLease.acquire('takeover', { holder: 'third', until: t0 + 130_000, now: t0 + 70_000 }),
    ).toEqual({
      acquired: false,
      held: { holder: 'next', until: t0 + 125_000 },
    });
  });

  it('is free again once released', async () => {
    const { passLease } = db.stores();
    await passLease.acquire('release', { holder: 'a', until: t0 + 60_000, now: t0 });
    await passLease.release('release', 'a');
    expect(await passLease.acquire('release', { holder: 'b', until: t0 + 60_000, now: t0 + 1 })).toEqual({
      acquired: true,
    });
  });

  it('one holder per cluster: leases of different clusters never wait for each other', async () => {
    const { passLease } = db.stores();
    const clusters = Array.from({ length: 10 }, (_, i) => `parallel-${i}`);
    // Two contenders per cluster, all at once: exactly one wins each cluster.
    const results = await Promise.all(
      clusters.flatMap((cluster) =>
        ['x', 'y'].map(async (holder) => ({
          cluster,
          acquired: (await passLease.acquire(cluster, { holder, until: t0 + 60_000, now: t0 })).acquired,
        })),
      ),
    );
    for (const cluster of clusters) {
      expect(results.filter((r) => r.cluster === cluster && r.acquired)).toHaveLength(1);
    }
  });

  it('lives outside the cluster’s own Zones partition', async () => {
    const stores = db.stores();
    await stores.passLease.acquire('apart', { holder: 'a', until: t0 + 60_000, now: t0 });
    const loaded = await stores.controllerState.load('apart');
    expect(loaded.zones.size).toBe(0);
    expect(loaded.meta.lastSequence).toBeUndefined();
  });
});
