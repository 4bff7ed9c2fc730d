// DecisionStore against dynalite: append-only conditional puts, idempotent re-appends, a different
// decision under a taken key kept beside the first, query newest first, TTL attribute.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { massDecisionInputs, massDecisionNodes } from '../../../shared/decisionContract.js';
import type { DecisionRecord } from '../../../shared/ports/stores.js';
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
const wallClock = t('2026-01-29T09:10:00Z');

function decision(node: string, i: number): DecisionRecord {
  return {
    node,
    at: t0 + i * 5_000,
    source: 'monitor',
    what: 'updateNodeStatus',
    why: 'tryUpdateNodeHealth: no heartbeat within the grace period (50s)',
    inputs: {
      probeTimestamp: '2026-01-29T08:59:00.000Z',
      gracePeriodSeconds: 50,
      conditions: [{ type: 'Ready', status: 'Unknown' }],
      zone: null,
    },
    result: i % 2 === 0 ? 'ok' : 'Conflict: the object has been modified',
    dryRun: false,
  };
}

describe('DecisionStore', () => {
  it('appends each record with one conditional PutItem and queries a node newest first, with the TTL set', async () => {
    const stores = db.stores({ clock: { now: () => wallClock } });
    const records = [...Array.from({ length: 30 }, (_, i) => decision('n1', i)), decision('n2', 0)];
    db.commands.reset();
    await stores.decisions.append('prod', records);
    expect(db.commands.get('PutItem')).toBe(31);
    expect(
      db.commands.get('BatchWriteItem') + db.commands.get('UpdateItem') + db.commands.get('DeleteItem'),
    ).toBe(0);

    const newest = await stores.decisions.query('prod', 'n1', { limit: 3 });
    expect(newest.map((d) => d.at)).toEqual([t0 + 29 * 5_000, t0 + 28 * 5_000, t0 + 27 * 5_000]);
    expect(newest[0]).toEqual({
      ...decision('n1', 29),
      cluster: 'prod',
      id: '2026-01-29T09:02:25.000Z#monitor#000029',
      expiresAt: wallClock / 1000 + 14 * 24 * 3600,
    });
    const oldest = await stores.decisions.query('prod', 'n1', { limit: 2, newestFirst: false });
    expect(oldest.map((d) => d.at)).toEqual([t0, t0 + 5_000]);
    expect(await stores.decisions.query('prod', 'n1', { limit: 100 })).toHaveLength(30);
    expect(await stores.decisions.query('prod', 'n2')).toHaveLength(1);
    expect(await stores.decisions.query('other', 'n1')).toEqual([]);
  });

  it('appending the same records twice stores them once, later and with a new expiry (a retried invocation)', async () => {
    const records = [decision('n3', 0), decision('n3', 1)];
    await db.stores({ clock: { now: () => wallClock } }).decisions.append('retry', records);
    const first = await db.stores().decisions.query('retry', 'n3');
    // The retry runs a minute later: its rows would expire later, yet they are the same decisions.
    await db.stores({ clock: { now: () => wallClock + 60_000 } }).decisions.append('retry', records);
    expect(await db.stores().decisions.query('retry', 'n3')).toEqual(first);
  });

  it('keeps a different decision under a taken key beside the first, never overwriting it', async () => {
    const stores = db.stores({ clock: { now: () => wallClock } });
    const original = decision('n4', 0);
    // A retry that decided otherwise at the same instant and sequence number.
    const other = { ...original, result: 'NotFound: pods "p" not found' };
    await stores.decisions.append('differ', [original]);
    await stores.decisions.append('differ', [other]);
    await stores.decisions.append('differ', [other]); // and its own retry: still appended once
    const rows = await stores.decisions.query('differ', 'n4', { newestFirst: false });
    expect(rows.map((r) => r.result)).toEqual([original.result, other.result]);
    expect(rows[0]?.id).toBe('2026-01-29T09:00:00.000Z#monitor#000000');
    expect(rows[1]?.id).toMatch(/^2026-01-29T09:00:00\.000Z#monitor#000000#[0-9a-f]{12}$/);
  });

  it('takes a configurable TTL and cluster-wide subjects', async () => {
    const stores = db.stores({ clock: { now: () => wallClock }, settings: { decisionTtlSeconds: 3600 } });
    await stores.decisions.append('ttl', [
      {
        node: '#cluster',
        at: t0,
        source: 'monitor',
        what: 'masterDisruption',
        why: 'every zone is FullDisruption',
      },
    ]);
    const [stored] = await stores.decisions.query('ttl', '#cluster');
    expect(stored).toMatchObject({ node: '#cluster', expiresAt: wallClock / 1000 + 3600 });
    expect(stored).not.toHaveProperty('inputs');
  });

  it('since: only the decisions at or after the instant, newest first and oldest first', async () => {
    const stores = db.stores({ clock: { now: () => wallClock } });
    await stores.decisions.append(
      'since',
      Array.from({ length: 10 }, (_, i) => decision('n1', i)),
    );
    const since = t0 + 6 * 5_000;
    const newest = await stores.decisions.query('since', 'n1', { since, limit: 50 });
    expect(newest.map((d) => d.at)).toEqual([9, 8, 7, 6].map((i) => t0 + i * 5_000));
    const oldest = await stores.decisions.query('since', 'n1', { since, limit: 2, newestFirst: false });
    expect(oldest.map((d) => d.at)).toEqual([t0 + 6 * 5_000, t0 + 7 * 5_000]);
    // A millisecond after the last one: none; one before the first: all ten.
    expect(await stores.decisions.query('since', 'n1', { since: t0 + 45_001 })).toEqual([]);
    expect(await stores.decisions.query('since', 'n1', { since: t0 - 1 })).toHaveLength(10);
  });

  it('massOnly: only the mass decisions, the limit counting them, not the rows read', async () => {
    const stores = db.stores({ clock: { now: () => wallClock } });
    const zone = '#zone:eu-west-1:eu-west-1a';
    const row = (i: number, inputs?: DecisionRecord['inputs']): DecisionRecord => ({
      node: zone,
      at: t0 + i * 5_000,
      source: 'monitor',
      what: inputs === undefined ? 'zoneState' : 'dequeue',
      why: 'w',
      ...(inputs !== undefined && { inputs }),
    });
    const [mass] = massDecisionInputs(['n-1', 'n-2']);
    await stores.decisions.append('mass', [
      row(0, mass),
      ...Array.from({ length: 10 }, (_, i) => row(1 + i, { from: 'Normal', to: 'PartialDisruption' })),
      row(11, mass),
      row(12),
      row(13, mass),
      row(14, { nodes: ['n-1'] }),
    ]);
    const all = await stores.decisions.query('mass', zone, { massOnly: true, limit: 50 });
    expect(all.map((d) => d.at)).toEqual([13, 11, 0].map((i) => t0 + i * 5_000));
    expect(all.map((d) => massDecisionNodes(d))).toEqual([0, 1, 2].map(() => ['n-1', 'n-2']));
    // The limit counts mass decisions: the two newest, past the rows that are not.
    const two = await stores.decisions.query('mass', zone, { massOnly: true, limit: 2 });
    expect(two.map((d) => d.at)).toEqual([t0 + 13 * 5_000, t0 + 11 * 5_000]);
    const oldest = await stores.decisions.query('mass', zone, {
      massOnly: true,
      limit: 1,
      newestFirst: false,
    });
    expect(oldest.map((d) => d.at)).toEqual([t0]);
    const since = await stores.decisions.query('mass', zone, { massOnly: true, since: t0 + 1 });
    expect(since.map((d) => d.at)).toEqual([t0 + 13 * 5_000, t0 + 11 * 5_000]);
    expect(await stores.decisions.query('mass', zone, { massOnly: false })).toHaveLength(15);
  });
});
