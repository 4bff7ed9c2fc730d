// DigestPartStore on dynalite: parts of one digest come back together, older digests' parts are dropped,
// and the parts' partition stays out of the cluster's own Zones partition.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HeartbeatDigest } from '../../../shared/events.js';
import { splitDigest, heartbeatDigestBytes } from '../../../shared/heartbeatDigest.js';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';

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

  it('a part of a newer digest drops older digests, keeps newer ones; clearParts drops up to its position', async () => {
    const stores = db.stores();
    const [old0] = split(digest(5));
    const [mid0] = split(digest(6));
    const [newLeader0] = split(digest(0, 'relay-1', t0));
    if (old0 === undefined || mid0 === undefined || newLeader0 === undefined) throw new Error('no parts');
    await stores.digestParts.addPart('prod', old0);
    await stores.digestParts.addPart('prod', newLeader0); // newer than both (a later leadership)
    expect(await stores.digestParts.addPart('prod', mid0)).toEqual([mid0]);
    // The old digest's part is gone; the new leader's part stays until its own digest is cleared.
    expect(await stores.digestParts.addPart('prod', old0)).toEqual([old0]);
    expect(await stores.digestParts.addPart('prod', newLeader0)).toEqual([newLeader0]);
    await stores.digestParts.clearParts('prod', newLeader0);
    expect(await stores.digestParts.addPart('prod', mid0)).toEqual([mid0]);
    await stores.digestParts.clearParts('prod', mid0);
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
