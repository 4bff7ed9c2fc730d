// NodeStore against dynalite: resourceVersion ordering, tombstones, batch reads.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node } from '../../../shared/domain/types.js';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';
import { newNode, ready, t, zoneLabels } from '../../helpers/fakeCluster.js';

let db: DynamoFixture;
beforeAll(async () => {
  db = await startDynamoDb();
});
afterAll(async () => {
  await db.stop();
});

const created = t('2026-01-29T09:00:00Z');
const fixedNow = t('2026-02-01T12:00:00Z');

function node(name: string, resourceVersion: string | undefined, extra: Partial<Node> = {}): Node {
  return {
    ...newNode(name, {
      created,
      labels: zoneLabels('eu-west-1', 'eu-west-1a'),
      conditions: [ready('True', created, created)],
    }),
    ...(resourceVersion !== undefined && { resourceVersion }),
    ...extra,
  };
}

async function rawItem(cluster: string, name: string): Promise<Record<string, unknown> | undefined> {
  const doc = DynamoDBDocumentClient.from(db.client);
  return (await doc.send(new GetCommand({ TableName: db.tables.nodes, Key: { cluster, node: name } }))).Item;
}

describe('NodeStore.putNode: never overwrites a newer resourceVersion', () => {
  it.each([
    { name: 'integers compare numerically (9 < 10)', stored: '10', incoming: '9', applied: false },
    { name: 'a newer integer applies', stored: '10', incoming: '11', applied: true },
    { name: 'the same resourceVersion is a duplicate', stored: '10', incoming: '10', applied: false },
    {
      name: 'beyond 2^53 still exact',
      stored: '90071992547409930',
      incoming: '90071992547409929',
      applied: false,
    },
    { name: 'beyond 2^53, newer', stored: '90071992547409930', incoming: '90071992547409931', applied: true },
    { name: 'non-integers compare as strings', stored: 'abc', incoming: 'abd', applied: true },
    { name: 'non-integers, older string', stored: 'abd', incoming: 'abc', applied: false },
    { name: 'mixed: compared as strings ("10" < "9a")', stored: '10', incoming: '9a', applied: true },
    { name: 'mixed: compared as strings ("9a" > "10")', stored: '9a', incoming: '10', applied: false },
  ])('$name', async ({ stored, incoming, applied }) => {
    const stores = db.stores();
    const cluster = `rv-${stored}-${incoming}`;
    expect(await stores.nodes.putNode(cluster, node('n1', stored))).toEqual({ applied: true });
    const result = await stores.nodes.putNode(cluster, node('n1', incoming, { unschedulable: true }));
    expect(result).toEqual({ applied });
    const current = await stores.nodes.getNode(cluster, 'n1');
    expect(current?.resourceVersion).toBe(applied ? incoming : stored);
    expect(current?.unschedulable).toBe(applied);
  });

  it('stores the trimmed node, its zone and exclusion for the console, and reads it back exactly', async () => {
    const stores = db.stores({ clock: { now: () => fixedNow } });
    const n = node('n2', '7', {
      labels: { ...zoneLabels('eu-west-1', 'eu-west-1a'), 'node.kubernetes.io/exclude-disruption': '' },
      taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: created + 1_000 }],
    });
    await stores.nodes.putNode('console', n);
    expect(await stores.nodes.getNode('console', 'n2')).toEqual(n);
    const item = await rawItem('console', 'n2');
    expect(item).toMatchObject({
      zone: 'eu-west-1:eu-west-1a',
      excluded: true,
      resourceVersion: '7',
      nodeVersion: 1,
      nodeUpdatedAt: '2026-02-01T12:00:00.000Z',
      nodeUpdatedAtMs: fixedNow,
      object: { creationTimestamp: '2026-01-29T09:00:00.000Z' },
    });
  });

  it('a deletion leaves a tombstone that stops a late, older event and expires after the tombstone TTL', async () => {
    const stores = db.stores({ clock: { now: () => fixedNow }, settings: { tombstoneTtlSeconds: 3600 } });
    const cluster = 'tombstone';
    await stores.nodes.putNode(cluster, node('n3', '20'));
    // An informer's DeletedFinalStateUnknown carries the last known resourceVersion: it still applies.
    expect(await stores.nodes.deleteNode(cluster, 'n3', '20')).toEqual({ applied: true });
    expect(await stores.nodes.getNode(cluster, 'n3')).toBeUndefined();
    const item = await rawItem(cluster, 'n3');
    expect(item).toMatchObject({ deleted: true, resourceVersion: '20', expiresAt: fixedNow / 1000 + 3600 });
    expect(item).not.toHaveProperty('object');
    // EventBridge retries the old MODIFIED late: ignored.
    expect(await stores.nodes.putNode(cluster, node('n3', '19'))).toEqual({ applied: false });
    expect(await stores.nodes.getNode(cluster, 'n3')).toBeUndefined();
    // A new node with the same name: a newer resourceVersion, alive again, no TTL.
    expect(await stores.nodes.putNode(cluster, node('n3', '25'))).toEqual({ applied: true });
    expect((await stores.nodes.getNode(cluster, 'n3'))?.resourceVersion).toBe('25');
    expect(await rawItem(cluster, 'n3')).not.toHaveProperty('expiresAt');
    // A stale deletion does not remove the new node.
    expect(await stores.nodes.deleteNode(cluster, 'n3', '21')).toEqual({ applied: false });
    expect(await stores.nodes.getNode(cluster, 'n3')).toBeDefined();
  });

  it('without a resourceVersion there is nothing to order by: the write applies', async () => {
    const stores = db.stores();
    await stores.nodes.putNode('no-rv', node('n4', '5'));
    expect(await stores.nodes.putNode('no-rv', node('n4', undefined, { unschedulable: true }))).toEqual({
      applied: true,
    });
    expect((await stores.nodes.getNode('no-rv', 'n4'))?.unschedulable).toBe(true);
  });

  it('getNodes reads many nodes at once and leaves out absent and deleted ones', async () => {
    const stores = db.stores();
    const names = Array.from({ length: 130 }, (_, i) => `m${i}`);
    for (const name of names) await stores.nodes.putNode('batch', node(name, '1'));
    await stores.nodes.deleteNode('batch', 'm5', '2');
    db.commands.reset();
    const found = await stores.nodes.getNodes('batch', [...names, 'absent', 'm1']);
    expect(found.size).toBe(129);
    expect(found.has('m5')).toBe(false);
    expect(found.get('m129')).toEqual(node('m129', '1'));
    expect(db.commands.get('BatchGetItem')).toBe(2); // 100 keys per request
  });
});

describe("NodeStore.replaceNode: the API's copy replaces the stored one, whatever its resourceVersion", () => {
  it('heals a resourceVersion that jumped ahead (a forged event): later real versions apply again', async () => {
    const stores = db.stores();
    const cluster = 'replace-ahead';
    await stores.nodes.putNode(cluster, node('n1', '999999999', { unschedulable: true }));
    // Every real change after the forged one was "stale".
    expect(await stores.nodes.putNode(cluster, node('n1', '120'))).toEqual({ applied: false });
    expect(
      await stores.nodes.replaceNode(cluster, 'n1', node('n1', '121'), { resourceVersion: '999999999' }),
    ).toEqual({ applied: true });
    expect(await stores.nodes.getNode(cluster, 'n1')).toEqual(node('n1', '121'));
    expect(await stores.nodes.putNode(cluster, node('n1', '122', { unschedulable: true }))).toEqual({
      applied: true,
    });
  });

  it('takes a resourceVersion that went back (an etcd restore)', async () => {
    const stores = db.stores();
    const cluster = 'replace-back';
    await stores.nodes.putNode(cluster, node('n1', '5000'));
    expect(
      await stores.nodes.replaceNode(cluster, 'n1', node('n1', '300'), { resourceVersion: '5000' }),
    ).toEqual({
      applied: true,
    });
    expect((await stores.nodes.getNode(cluster, 'n1'))?.resourceVersion).toBe('300');
  });

  it('loses to a writer that replaced the compared copy meanwhile, and changes nothing', async () => {
    const stores = db.stores();
    const cluster = 'replace-race';
    await stores.nodes.putNode(cluster, node('n1', '10'));
    await stores.nodes.putNode(cluster, node('n1', '11', { unschedulable: true })); // a Node Changed landed
    expect(
      await stores.nodes.replaceNode(cluster, 'n1', node('n1', '10'), { resourceVersion: '10' }),
    ).toEqual({
      applied: false,
    });
    expect((await stores.nodes.getNode(cluster, 'n1'))?.resourceVersion).toBe('11');
  });

  it('stores a node the cache never had only while it still has none', async () => {
    const stores = db.stores();
    const cluster = 'replace-new';
    expect(
      await stores.nodes.replaceNode(cluster, 'n1', node('n1', '7'), { resourceVersion: undefined }),
    ).toEqual({
      applied: true,
    });
    expect(
      await stores.nodes.replaceNode(cluster, 'n1', node('n1', '8'), { resourceVersion: undefined }),
    ).toEqual({
      applied: false,
    });
  });

  it('a node the API no longer has becomes a tombstone that keeps the replaced resourceVersion', async () => {
    const stores = db.stores();
    const cluster = 'replace-gone';
    await stores.nodes.putNode(cluster, node('n1', '40'));
    expect(await stores.nodes.replaceNode(cluster, 'n1', undefined, { resourceVersion: '40' })).toEqual({
      applied: true,
    });
    expect(await stores.nodes.getNode(cluster, 'n1')).toBeUndefined();
    expect(await rawItem(cluster, 'n1')).toMatchObject({ deleted: true, resourceVersion: '40' });
    expect(await stores.nodes.putNode(cluster, node('n1', '39'))).toEqual({ applied: false });
  });
});
