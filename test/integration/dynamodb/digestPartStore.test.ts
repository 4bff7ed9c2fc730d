// DigestPartStore on dynalite: parts of one digest come back together, parts made useless are dropped
// (by sequence within a term, by the functions' clock across terms, never by a relay's clock), and the
// parts' partition stays out of the cluster's own Zones partition.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HeartbeatDigest } from '../../../shared/events.js';
import { splitDigest, heartbeatDigestBytes } from '../../../shared/heartbeatDigest.js';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  digestPartsPartition,
  PartAssemblyWindow,
} from '../../../shared/adapters/dynamodb/digestPartStore.js';

const t0 = Date.parse('2026-03-02T09:00:00.000Z');
let db: DynamoFixture;
beforeAll(async () => {
  db = await startDynamoDb('nlc-parts');
});
afterAll(async () => {
  await db.stop();
});

function digest(sequence: number, relayId = 'relay-0', leaderSince = t0 - 3_600_000): HeartbeatDigest {
  const probes = new Map(
    Array.from({ length: 300 }, (_, i) => [
      `ip-10-0-${i >> 8}-${i & 255}.eu-west-1.compute.internal`,
      t0 - i * 7,
    ]),
  );
  return {
    schemaVersion: 1,
    cluster: 'prod',
    relayId,
    leaderSince,
    observingSince: leaderSince,
    sequence,
    observedAt: t0,
    part: { index: 0, count: 1 },
    probes,
  };
}
/** The stored parts, as `relayId#sequence`, in key order. */
async function positions(): Promise<string[]> {
  const out = await DynamoDBDocumentClient.from(db.client).send(
    new QueryCommand({
      TableName: db.tables.zones,
      KeyConditionExpression: '#c = :c',
      ExpressionAttributeNames: { '#c': 'cluster' },
      ExpressionAttributeValues: { ':c': digestPartsPartition('prod') },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []).map((item) => `${String(item.relayId)}#${String(item.sequence)}`).sort();
}
const split = (d: HeartbeatDigest) => splitDigest(d, Math.ceil(heartbeatDigestBytes(d) / 2));
const indexes = (parts: readonly HeartbeatDigest[]) => parts.map((p) => p.part.index).sort();

describe('DigestPartStore', () => {
  it('returns the stored parts of the same digest, decoded exactly', async () => {
    const stores = db.stores();
    const [a, b] = split(digest(1));
    if (a === undefined || b === undefined) throw new Error('expected two parts');
    expect(await stores.digestParts.addPart('prod', a)).toEqual([a]);
    expect(await stores.digestParts.addPart('prod', a)).toEqual([a]); // a redelivery
    const both = await stores.digestParts.addPart('prod', b);
    expect(indexes(both)).toEqual([0, 1]);
    expect(both.find((p) => p.part.index === 1)).toEqual(b);
    await stores.digestParts.clearParts('prod', b);
    expect(await stores.digestParts.addPart('prod', a)).toEqual([a]);
    await stores.digestParts.clearParts('prod', a);
  });

  it('within a term, a later digest drops the earlier ones; clearParts drops up to its sequence', async () => {
    const stores = db.stores();
    const [old0] = split(digest(5));
    const [mid0] = split(digest(6));
    const [next0] = split(digest(7));
    if (old0 === undefined || mid0 === undefined || next0 === undefined) throw new Error('no parts');
    await stores.digestParts.addPart('prod', old0);
    await stores.digestParts.addPart('prod', next0);
    expect(await stores.digestParts.addPart('prod', mid0)).toEqual([mid0]);
    // 5 went with 6's arrival; 7 is later, and stays.
    expect(await stores.digestParts.addPart('prod', old0)).toEqual([old0]);
    expect(await stores.digestParts.addPart('prod', next0)).toEqual([next0]);
    await stores.digestParts.clearParts('prod', mid0);
    expect(await positions()).toEqual(['relay-0#7']);
    await stores.digestParts.clearParts('prod', next0);
    expect(await positions()).toEqual([]);
  });

  it('across terms no relay clock decides: another term’s part waits PartAssemblyWindow on the functions’ clock, then goes', async () => {
    let now = t0;
    const stores = db.stores({ clock: { now: () => now } });
    // A term whose relay clock ran a year ahead, then the real one: before, the first stayed for good
    // ("newer" than everything after it) and was read with every later part.
    const [ahead0] = split(digest(3, 'relay-fast', t0 + 365 * 86_400_000));
    const [behind0, behind1] = split(digest(0, 'relay-1', t0 - 7_200_000));
    if (ahead0 === undefined || behind0 === undefined || behind1 === undefined) throw new Error('no parts');
    await stores.digestParts.addPart('prod', ahead0);
    now += 10_000;
    expect(await stores.digestParts.addPart('prod', behind0)).toEqual([behind0]);
    expect(await positions()).toEqual(['relay-1#0', 'relay-fast#3']);
    now += PartAssemblyWindow;
    expect(indexes(await stores.digestParts.addPart('prod', behind1))).toEqual([0, 1]);
    expect(await positions()).toEqual(['relay-1#0', 'relay-1#0']);
    await stores.digestParts.clearParts('prod', behind1);
    expect(await positions()).toEqual([]);
  });

  it('a part of another term within the window is kept through clearParts: a hand-over loses neither digest', async () => {
    let now = t0;
    const stores = db.stores({ clock: { now: () => now } });
    const [a0, a1] = split(digest(10, 'relay-a'));
    const [b0] = split(digest(0, 'relay-b', t0 - 60_000)); // a later term, from a clock behind
    if (a0 === undefined || a1 === undefined || b0 === undefined) throw new Error('no parts');
    await stores.digestParts.addPart('prod', a0);
    await stores.digestParts.addPart('prod', b0);
    now += 1_000;
    expect(indexes(await stores.digestParts.addPart('prod', a1))).toEqual([0, 1]);
    await stores.digestParts.clearParts('prod', a1);
    expect(await positions()).toEqual(['relay-b#0']);
    now += PartAssemblyWindow;
    await stores.digestParts.clearParts('prod', a1);
    expect(await positions()).toEqual([]);
  });

  it('lives outside the cluster’s Zones partition: loads and the drainer never read it', async () => {
    const stores = db.stores();
    const [part] = split(digest(9));
    if (part === undefined) throw new Error('no part');
    await stores.digestParts.addPart('prod', part);
    const loaded = await stores.controllerState.load('prod');
    expect(loaded.zones.size).toBe(0);
    expect((await stores.zoneQueues.loadZoneQueues('prod')).queues.size).toBe(0);
    expect(await stores.controllerState.loadMeta('prod')).toEqual({ masterDisruption: false });
    await stores.digestParts.clearParts('prod', part);
  });
});
