// ZoneQueueStore against dynalite: queue order across load/commit, concurrent drainers, merging the
// monitor's changes onto the drainer's, the drainer's token claims, the redo log, and split commits.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  add,
  completeTry,
  newRateLimitedTimedQueue,
  remove,
  removeFromQueue,
  replace,
  swapLimiter,
  tryNext,
  type RateLimitedTimedQueue,
} from '../../../shared/domain/rateLimitedTimedQueue.js';
import { newTokenBucketRateLimiter } from '../../../shared/domain/tokenBucket.js';
import { createZoneID } from '../../../shared/domain/zones.js';
import { StoreError, VersionConflictError } from '../../../shared/errors.js';
import type { LoadedZoneQueues } from '../../../shared/ports/stores.js';
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
const zone = createZoneID('eu-west-1', 'eu-west-1a');

/**
 * Stores of a new instance (a cold function): nothing cached, so a load reads the rows back from the
 * table. An instance that wrote a queue version answers a later read of it from memory.
 */
function coldStores(): ReturnType<DynamoFixture['stores']> {
  return db.stores();
}

function nothingLoaded(cluster: string): LoadedZoneQueues {
  return { cluster, queues: new Map(), versions: new Map() };
}

function queueOf(loaded: LoadedZoneQueues): RateLimitedTimedQueue | undefined {
  return loaded.queues.get(zone);
}

function addAll(q: RateLimitedTimedQueue, values: readonly string[], now: number): RateLimitedTimedQueue {
  return values.reduce((acc, v) => add(acc, v, `uid-${v}`, now).queue, q);
}

describe('ZoneQueueStore', () => {
  it('keeps queue order, ties in insertion order, and set order across commit and load', async () => {
    const stores = db.stores();
    const cluster = 'order';
    let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0));
    q = addAll(q, ['c', 'a', 'b'], t0);
    q = add(q, 'd', 'uid-d', t0 + 5).queue;
    q = add(q, 'e', 'uid-e', t0).queue;
    // Replace counts as a new insertion: 'a' moves behind 'e'.
    q = replace(q, { value: 'a', uid: 'uid-a', addedAt: t0, processAt: t0 }).queue;
    expect(q.queue.map((v) => v.value)).toEqual(['c', 'b', 'e', 'a', 'd']);

    let loaded = await stores.zoneQueues.commitZoneQueues(nothingLoaded(cluster), new Map([[zone, q]]));
    let read = await coldStores().zoneQueues.loadZoneQueues(cluster);
    expect(queueOf(read)).toEqual(q);

    // The drainer processes the head; 'b' is forgotten and queued again (to the end of its tie group).
    const step = tryNext(q, t0 + 10_000);
    q = completeTry(step.queue, step.item!, { done: true }, t0 + 10_000);
    q = remove(q, 'b').queue;
    q = add(q, 'b', 'uid-b', t0).queue;
    expect(q.queue.map((v) => v.value)).toEqual(['e', 'a', 'b', 'd']);
    expect(q.set).toEqual(['c', 'a', 'd', 'e', 'b']);
    db.commands.reset();
    loaded = await stores.zoneQueues.commitZoneQueues(loaded, new Map([[zone, q]]));
    // Only the rows that changed: 'c' (processed) and 'b' (re-added); 'e', 'a', 'd' keep their numbers.
    expect(db.commands.get('PutItem')).toBe(2);
    read = await coldStores().zoneQueues.loadZoneQueues(cluster);
    expect(queueOf(read)).toEqual(q);
    expect(read.versions).toEqual(loaded.versions);
  });

  it('round-trips a long run of queue operations, checking after every commit', async () => {
    const stores = db.stores();
    const cluster = 'random-walk';
    let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(1_000, 1, t0));
    let loaded = nothingLoaded(cluster);
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const values = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    for (let step = 0; step < 30; step++) {
      const now = t0 + random(4) * 1_000; // few distinct instants: many ties
      const value = values[random(values.length)]!;
      switch (random(5)) {
        case 0:
          q = add(q, value, `uid-${value}`, now).queue;
          break;
        case 1:
          q = remove(q, value).queue;
          break;
        case 2:
          q = removeFromQueue(q, value).queue;
          break;
        case 3: {
          const next = tryNext(q, now + 10_000);
          q =
            next.item === undefined
              ? next.queue
              : completeTry(next.queue, next.item, { done: false, wait: random(2) * 50 }, now);
          break;
        }
        default:
          q = addAll(q, values.slice(0, 1 + random(values.length)), now);
      }
      loaded = await stores.zoneQueues.commitZoneQueues(loaded, new Map([[zone, q]]));
      expect(queueOf(await coldStores().zoneQueues.loadZoneQueues(cluster))).toEqual(q);
    }
  });

  it('concurrent drainers never spend more tokens than the bucket holds', async () => {
    const cluster = 'tokens';
    const setup = db.stores();
    // burst 3, no refill: three takes, ever.
    const q = addAll(
      newRateLimitedTimedQueue(newTokenBucketRateLimiter(0, 3, t0)),
      ['a', 'b', 'c', 'd', 'e'],
      t0,
    );
    await setup.zoneQueues.commitZoneQueues(nothingLoaded(cluster), new Map([[zone, q]]));
    const drainers = Array.from({ length: 8 }, () =>
      db.stores({
        client: db.newClient(),
        settings: { conflictAttempts: 50, backoffBaseMs: 2, backoffCapMs: 20 },
      }),
    );
    const taken = await Promise.all(
      drainers.map((s) =>
        s.zoneQueues.updateZoneQueue(cluster, zone, (current) => {
          if (current === undefined) return { queue: undefined, result: undefined };
          const step = tryNext(current, t0 + 1_000);
          if (step.item === undefined) return { queue: step.queue, result: undefined };
          return {
            queue: completeTry(step.queue, step.item, { done: true }, t0 + 1_000),
            result: step.item.value,
          };
        }),
      ),
    );
    const values = taken.flatMap((r) => (r.result === undefined ? [] : [r.result]));
    expect(values.sort()).toEqual(['a', 'b', 'c']);
    const stored = queueOf(await coldStores().zoneQueues.loadZoneQueues(cluster));
    expect(stored?.queue.map((v) => v.value)).toEqual(['d', 'e']);
    expect(stored?.limiter).toMatchObject({ kind: 'tokenBucket', tokens: 0 });
  });

  it("merges the monitor's per-node changes and limiter swap onto the drainer's concurrent commit", async () => {
    const cluster = 'merge';
    const stores = db.stores();
    const initial = addAll(newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0)), ['a', 'b'], t0);
    const loaded = await stores.zoneQueues.commitZoneQueues(
      nothingLoaded(cluster),
      new Map([[zone, initial]]),
    );

    // The drainer takes the token and processes 'a'.
    const now = t0 + 1_000;
    const drained = await db
      .stores({ client: db.newClient() })
      .zoneQueues.updateZoneQueue(cluster, zone, (current) => {
        const step = tryNext(current!, now);
        return { queue: completeTry(step.queue, step.item!, { done: true }, now), result: step.queue };
      });
    // Meanwhile the monitor, from the older read: 'b' is Ready again, 'c' went Unknown, the zone went
    // PartialDisruption (a swap to the secondary rate).
    let monitor = remove(initial, 'b').queue;
    monitor = add(monitor, 'c', 'uid-c', now).queue;
    monitor = swapLimiter(monitor, 0.01, now);

    await expect(
      stores.zoneQueues.commitZoneQueues(loaded, new Map([[zone, monitor]])),
    ).rejects.toBeInstanceOf(VersionConflictError);
    const merged = await stores.zoneQueues.commitZoneQueues(loaded, new Map([[zone, monitor]]), {
      merge: true,
    });

    // As if the monitor's operations ran right after the drainer's.
    let expected = remove(drained.queue!, 'b').queue;
    expected = add(expected, 'c', 'uid-c', now).queue;
    expected = swapLimiter(expected, 0.01, now);
    expect(queueOf(merged)).toEqual(expected);
    expect(queueOf(await coldStores().zoneQueues.loadZoneQueues(cluster))).toEqual(expected);
    // The drainer spent the only token, so the swapped-in bucket starts empty (upstream SwapLimiter).
    expect(expected.limiter).toMatchObject({ qps: 0.01, tokens: 0 });
  });

  it('two token withdrawals from the same bucket cannot be merged', async () => {
    const cluster = 'no-merge';
    const stores = db.stores();
    const initial = addAll(newRateLimitedTimedQueue(newTokenBucketRateLimiter(1, 1, t0)), ['a', 'b'], t0);
    const loaded = await stores.zoneQueues.commitZoneQueues(
      nothingLoaded(cluster),
      new Map([[zone, initial]]),
    );
    const take = (q: RateLimitedTimedQueue, now: number): RateLimitedTimedQueue => {
      const step = tryNext(q, now);
      return completeTry(step.queue, step.item!, { done: true }, now);
    };
    await stores.zoneQueues.commitZoneQueues(loaded, new Map([[zone, take(initial, t0 + 1_000)]]));
    await expect(
      stores.zoneQueues.commitZoneQueues(loaded, new Map([[zone, take(initial, t0 + 1_000)]]), {
        merge: true,
      }),
    ).rejects.toBeInstanceOf(VersionConflictError);
  });

  it("binds a drainer's token to its entry row in the token's own commit, reads it back cold, and drops it on completion", async () => {
    const cluster = 'claims';
    const stores = db.stores();
    const initial = addAll(newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0)), ['a', 'b'], t0);
    const loaded = await stores.zoneQueues.commitZoneQueues(
      nothingLoaded(cluster),
      new Map([[zone, initial]]),
    );
    const doc = DynamoDBDocumentClient.from(db.client);
    const row = async (node: string) =>
      (
        await doc.send(
          new GetCommand({
            TableName: db.tables.evictionQueue,
            Key: { clusterZone: `${cluster}#eu-west-1:eu-west-1a`, node },
            ConsistentRead: true,
          }),
        )
      ).Item;

    const now = t0 + 1_000;
    const { result: item } = await db
      .stores({ client: db.newClient() })
      .zoneQueues.updateZoneQueue(cluster, zone, (current) => {
        const step = tryNext(current!, now, { by: 'run-1', ttl: 15_000 });
        return { queue: step.queue, result: step.item };
      });
    expect(await row('a')).toMatchObject({
      inQueue: true,
      claim: { by: 'run-1', at: '2026-01-29T09:00:01.000Z', until: '2026-01-29T09:00:16.000Z' },
    });
    expect(await row('b')).not.toHaveProperty('claim');
    const read = await coldStores().zoneQueues.loadZoneQueues(cluster);
    // One queue version for both: the token withdrawal and the claim are one conditional commit.
    expect(read.versions.get(zone)?.version).toBe((loaded.versions.get(zone)?.version ?? 0) + 1);
    expect(queueOf(read)?.limiter).toMatchObject({ tokens: 0, last: now });
    expect(queueOf(read)?.queue.map((v) => [v.value, v.claim])).toEqual([
      ['a', { by: 'run-1', at: now, until: now + 15_000 }],
      ['b', undefined],
    ]);

    await stores.zoneQueues.updateZoneQueue(cluster, zone, (current) => ({
      queue: completeTry(current!, item!, { done: true }, now),
      result: undefined,
    }));
    const done = await row('a');
    expect(done).toMatchObject({ inQueue: false, inSet: true });
    expect(done).not.toHaveProperty('claim');
  });

  it("a monitor commit merged onto a drainer's claim keeps it, and its re-queue of the held node queues it once", async () => {
    const cluster = 'claim-merge';
    const stores = db.stores();
    const initial = addAll(newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0)), ['a', 'b'], t0);
    const loaded = await stores.zoneQueues.commitZoneQueues(
      nothingLoaded(cluster),
      new Map([[zone, initial]]),
    );

    // A drainer takes a's token and is writing its taint when the monitor commits from its older read:
    // a was re-created (a new UID), c went Unknown.
    const now = t0 + 1_000;
    const drained = await db
      .stores({ client: db.newClient() })
      .zoneQueues.updateZoneQueue(cluster, zone, (current) => {
        const step = tryNext(current!, now, { by: 'run-1', ttl: 15_000 });
        return { queue: step.queue, result: step.queue };
      });
    let monitor = add(remove(initial, 'a').queue, 'a', 'uid-a-2', now).queue;
    monitor = add(monitor, 'c', 'uid-c', now).queue;
    const merged = await stores.zoneQueues.commitZoneQueues(loaded, new Map([[zone, monitor]]), {
      merge: true,
    });

    const expected = add(drained.result, 'c', 'uid-c', now).queue;
    expect(queueOf(merged)).toEqual(expected);
    const read = queueOf(await coldStores().zoneQueues.loadZoneQueues(cluster));
    expect(read).toEqual(expected);
    expect(read?.queue.map((v) => [v.value, v.uid, v.claim?.by])).toEqual([
      ['a', 'uid-a', 'run-1'],
      ['b', 'uid-b', undefined],
      ['c', 'uid-c', undefined],
    ]);
  });

  it('rolls forward a commit whose writer died after claiming the zone', async () => {
    const cluster = 'crash';
    const setup = db.stores();
    const initial = addAll(newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0)), ['a'], t0);
    const loaded = await setup.zoneQueues.commitZoneQueues(
      nothingLoaded(cluster),
      new Map([[zone, initial]]),
    );

    // A writer whose second entry write never happens (the function was killed mid-commit).
    const dying = db.newClient({ maxAttempts: 1 });
    let puts = 0;
    dying.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutItemCommand' && ++puts === 2) throw new Error('simulated crash');
        return next(args);
      },
      { step: 'initialize', name: 'crashOnSecondPut' },
    );
    const after = addAll(initial, ['b', 'c'], t0 + 1);
    await expect(
      db.stores({ client: dying }).zoneQueues.commitZoneQueues(loaded, new Map([[zone, after]])),
    ).rejects.toBeInstanceOf(StoreError);

    const doc = DynamoDBDocumentClient.from(db.client);
    const row = await doc.send(
      new GetCommand({ TableName: db.tables.zones, Key: { cluster, zone: 'eu-west-1:eu-west-1a' } }),
    );
    expect(row.Item?.pendingOps).toHaveLength(2);

    const read = await coldStores().zoneQueues.loadZoneQueues(cluster);
    expect(queueOf(read)).toEqual(after);
    const cleared = await doc.send(
      new GetCommand({ TableName: db.tables.zones, Key: { cluster, zone: 'eu-west-1:eu-west-1a' } }),
    );
    expect(cleared.Item).not.toHaveProperty('pendingOps');
    expect(cleared.Item).toMatchObject({ queueVersion: 2, queueLength: 3, setSize: 3 });
  });

  it('an entry write refused on its condition while the row is still older fails the commit, and the next reader rolls it forward', async () => {
    const cluster = 'lost-condition';
    const setup = db.stores();
    const initial = addAll(newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0)), ['a'], t0);
    const loaded = await setup.zoneQueues.commitZoneQueues(
      nothingLoaded(cluster),
      new Map([[zone, initial]]),
    );

    // The entry write answers ConditionalCheckFailed without having been applied: no newer version wrote
    // the row, so taking the answer at its word would leave the row behind its version for good.
    const refusing = db.newClient({ maxAttempts: 1 });
    let refused = false;
    refusing.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutItemCommand' && !refused) {
          refused = true;
          throw new ConditionalCheckFailedException({
            message: 'injected',
            $metadata: { httpStatusCode: 400 },
          });
        }
        return next(args);
      },
      { step: 'initialize', name: 'refuseFirstPut' },
    );
    const after = addAll(initial, ['b'], t0 + 1);
    await expect(
      db.stores({ client: refusing }).zoneQueues.commitZoneQueues(loaded, new Map([[zone, after]])),
    ).rejects.toBeInstanceOf(VersionConflictError);

    expect(queueOf(await coldStores().zoneQueues.loadZoneQueues(cluster))).toEqual(after);
  });

  it('splits a large change into several commits, each a whole queue state', async () => {
    const stores = db.stores({ settings: { maxQueueOpsPerCommit: 3 } });
    const cluster = 'split';
    const values = Array.from({ length: 10 }, (_, i) => `n${i}`);
    const q = addAll(newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0)), values, t0);
    const loaded = await stores.zoneQueues.commitZoneQueues(nothingLoaded(cluster), new Map([[zone, q]]));
    expect(loaded.versions.get(zone)?.version).toBe(4);
    expect(queueOf(await coldStores().zoneQueues.loadZoneQueues(cluster))).toEqual(q);
  });

  it("an instance reads no entry rows of a queue version it already holds, and reads another writer's version in full", async () => {
    const cluster = 'snapshots';
    const warm = db.stores();
    const other = db.stores();
    const q = addAll(newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0)), ['a', 'b', 'c'], t0);
    const loaded = await warm.zoneQueues.commitZoneQueues(nothingLoaded(cluster), new Map([[zone, q]]));

    db.commands.reset();
    expect(queueOf(await warm.zoneQueues.loadZoneQueues(cluster))).toEqual(q);
    expect(db.commands.get('Query')).toBe(1); // the Zones partition only
    db.commands.reset();
    expect(queueOf(await other.zoneQueues.loadZoneQueues(cluster))).toEqual(q);
    expect(db.commands.get('Query')).toBe(2); // the Zones partition and the entry rows

    // Another instance commits the next version: the warm instance's copy is now stale.
    const fromOther = await other.zoneQueues.loadZoneQueues(cluster);
    const after = remove(add(q, 'd', 'uid-d', t0 + 1).queue, 'a').queue;
    await other.zoneQueues.commitZoneQueues(fromOther, new Map([[zone, after]]));
    db.commands.reset();
    expect(queueOf(await warm.zoneQueues.loadZoneQueues(cluster))).toEqual(after);
    expect(db.commands.get('Query')).toBe(2);
    // And a commit from the stale load loses the race instead of overwriting the newer version.
    await expect(
      warm.zoneQueues.commitZoneQueues(loaded, new Map([[zone, addAll(q, ['e'], t0 + 2)]])),
    ).rejects.toBeInstanceOf(VersionConflictError);
  });

  it('hands updateZoneQueue an undefined queue for a zone that has none, and writes nothing', async () => {
    const stores = db.stores();
    db.commands.reset();
    const outcome = await stores.zoneQueues.updateZoneQueue('none', zone, (current) => ({
      queue: undefined,
      result: current,
    }));
    expect(outcome.result).toBeUndefined();
    expect(db.commands.writes()).toBe(0);
  });
});
