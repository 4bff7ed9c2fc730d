// PodEvictionStore against dynalite: upstream AddWork/CancelWork semantics, token ownership, and the
// due query on the byFiresAt index.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';
import { t } from '../../helpers/fakeCluster.js';

let db: DynamoFixture;
beforeAll(async () => {
  db = await startDynamoDb();
});
afterAll(async () => {
  await db.stop();
});

const t0 = t('2026-01-29T09:00:00Z');

describe('PodEvictionStore', () => {
  it('schedules, skips an existing entry, and runs immediate work at once (upstream AddWork)', async () => {
    const stores = db.stores();
    const cluster = 'add';
    const scheduled = await stores.podEvictions.add(cluster, {
      key: 'default/web-1',
      nodeName: 'n1',
      createdAt: t0,
      fireAt: t0 + 300_000,
      now: t0,
    });
    expect(scheduled).toEqual({
      kind: 'scheduled',
      eviction: {
        key: 'default/web-1',
        nodeName: 'n1',
        createdAt: t0,
        fireAt: t0 + 300_000,
        firesAt: t0 + 300_000,
        token: 1,
        timerBacked: true,
        firing: false,
      },
    });
    const again = await stores.podEvictions.add(cluster, {
      key: 'default/web-1',
      nodeName: 'n1',
      createdAt: t0 + 5_000,
      fireAt: t0 + 5_000,
      now: t0 + 5_000,
    });
    expect(again).toEqual({
      kind: 'skipped',
      existing: scheduled.kind === 'skipped' ? undefined : scheduled.eviction,
    });
    const immediate = await stores.podEvictions.add(cluster, {
      key: 'kube-system/agent',
      nodeName: 'n1',
      createdAt: t0,
      fireAt: t0,
      now: t0 + 7,
    });
    expect(immediate).toMatchObject({
      kind: 'firing',
      eviction: { firesAt: t0 + 7, timerBacked: false, firing: true, token: 3 },
    });
    expect((await stores.podEvictions.list(cluster)).map((e) => e.key)).toEqual([
      'default/web-1',
      'kube-system/agent',
    ]);
  });

  it('reports due timers earliest first, ties by key, and only waiting ones', async () => {
    const stores = db.stores();
    const cluster = 'due';
    const add = (key: string, delay: number) =>
      stores.podEvictions.add(cluster, { key, nodeName: 'n1', createdAt: t0, fireAt: t0 + delay, now: t0 });
    await add('ns/c', 60_000);
    await add('ns/b', 30_000);
    await add('ns/a', 30_000);
    await add('ns/later', 600_000);
    await add('ns/now', 0);
    expect(await stores.podEvictions.dueEvictions(cluster, t0 + 29_999)).toEqual([]);
    expect((await stores.podEvictions.dueEvictions(cluster, t0 + 60_000)).map((e) => e.key)).toEqual([
      'ns/a',
      'ns/b',
      'ns/c',
    ]);
    const [first] = await stores.podEvictions.dueEvictions(cluster, t0 + 30_000);
    expect(await stores.podEvictions.startFiring(cluster, first!.key, first!.token)).toBe(true);
    // A second drainer that read the same due entry loses.
    expect(await stores.podEvictions.startFiring(cluster, first!.key, first!.token)).toBe(false);
    expect((await stores.podEvictions.dueEvictions(cluster, t0 + 30_000)).map((e) => e.key)).toEqual([
      'ns/b',
    ]);
  });

  it('reclaims an entry whose run died between startFiring and complete, once its lease ran out', async () => {
    let now = t0;
    const stores = db.stores({ clock: { now: () => now }, settings: { firingLeaseMs: 60_000 } });
    const cluster = 'lease';
    const added = await stores.podEvictions.add(cluster, {
      key: 'ns/timer',
      nodeName: 'n1',
      createdAt: t0,
      fireAt: t0 + 10_000,
      now: t0,
    });
    const immediate = await stores.podEvictions.add(cluster, {
      key: 'ns/immediate',
      nodeName: 'n1',
      createdAt: t0,
      fireAt: t0,
      now: t0,
    });
    if (added.kind !== 'scheduled' || immediate.kind !== 'firing') throw new Error('unexpected');
    now = t0 + 10_000;
    expect(await stores.podEvictions.startFiring(cluster, 'ns/timer', added.eviction.token)).toBe(true);
    // Both runs "die" here: nothing completes either entry. Within the lease nobody may take them.
    now = t0 + 59_999;
    expect((await stores.podEvictions.dueEvictions(cluster, now)).map((e) => e.key)).toEqual([]);
    expect(await stores.podEvictions.startFiring(cluster, 'ns/timer', added.eviction.token)).toBe(false);
    // After the lease a drainer finds both due and can start them again, exactly once.
    now = t0 + 70_001;
    const due = await stores.podEvictions.dueEvictions(cluster, now);
    expect(due.map((e) => e.key).sort()).toEqual(['ns/immediate', 'ns/timer']);
    for (const e of due) expect(await stores.podEvictions.startFiring(cluster, e.key, e.token)).toBe(true);
    for (const e of due) expect(await stores.podEvictions.startFiring(cluster, e.key, e.token)).toBe(false);
    for (const e of due) expect(await stores.podEvictions.complete(cluster, e.key, e.token)).toBe(true);
    expect(await stores.podEvictions.list(cluster)).toEqual([]);
  });

  it('a finishing worker removes only the entry it owns; cancel reports timer-backed entries', async () => {
    const stores = db.stores();
    const cluster = 'tokens';
    const work = { key: 'ns/p', nodeName: 'n1', createdAt: t0, fireAt: t0 + 10_000, now: t0 };
    const first = await stores.podEvictions.add(cluster, work);
    if (first.kind === 'skipped') throw new Error('unexpected');
    expect(await stores.podEvictions.startFiring(cluster, 'ns/p', first.eviction.token)).toBe(true);
    // Cancelled while running, then replaced: the old worker's completion must not remove the new entry.
    expect(await stores.podEvictions.cancel(cluster, 'ns/p')).toMatchObject({
      cancelled: true,
      removed: { firing: true },
    });
    const second = await stores.podEvictions.add(cluster, { ...work, now: t0 + 1_000 });
    if (second.kind === 'skipped') throw new Error('unexpected');
    expect(second.eviction.token).toBeGreaterThan(first.eviction.token);
    expect(await stores.podEvictions.complete(cluster, 'ns/p', first.eviction.token)).toBe(false);
    expect(await stores.podEvictions.get(cluster, 'ns/p')).toEqual(second.eviction);
    expect(await stores.podEvictions.complete(cluster, 'ns/p', second.eviction.token)).toBe(true);
    expect(await stores.podEvictions.get(cluster, 'ns/p')).toBeUndefined();
    expect(await stores.podEvictions.cancel(cluster, 'ns/p')).toEqual({ cancelled: false });
    // Immediate work is removed but not reported as cancelled (timedWorkerQueue.cancelWork).
    await stores.podEvictions.add(cluster, { ...work, key: 'ns/q', fireAt: t0 });
    expect(await stores.podEvictions.cancel(cluster, 'ns/q')).toMatchObject({
      cancelled: false,
      removed: { key: 'ns/q' },
    });
  });
});
