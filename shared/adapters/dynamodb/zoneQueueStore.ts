// The drainer's view of the zone eviction queues (ZoneQueueStore): load every zone's queue, commit
// changes conditionally, and read-modify-write one zone with retries from a fresh read. The storage
// protocol itself (redo log, tombstones, merging) is in zoneQueues.ts.
import type { RateLimitedTimedQueue } from '../../domain/rateLimitedTimedQueue.js';
import { VersionConflictError } from '../../errors.js';
import type {
  CommitZoneQueuesOptions,
  LoadedZoneQueues,
  StoreCallOptions,
  ZoneQueueChange,
  ZoneQueueStore,
  ZoneQueueVersion,
} from '../../ports/stores.js';
import { backoffMs, pause, queryAll, type DynamoContext } from './client.js';
import { checkClusterName, ClusterRowKey, decodeZone } from './codec.js';
import { toDomainQueue } from './queueState.js';
import {
  commitZoneQueueMerging,
  readZoneQueue,
  snapshotOf,
  versionOf,
  writeZoneQueue,
} from './zoneQueues.js';

/** The drainer's view of the queues: DynamoDB implementation of ZoneQueueStore. */
export class DynamoDbZoneQueueStore implements ZoneQueueStore {
  constructor(private readonly ctx: DynamoContext) {}

  async loadZoneQueues(cluster: string, opts: StoreCallOptions = {}): Promise<LoadedZoneQueues> {
    const { ctx } = this;
    const rows = await queryAll(
      ctx,
      {
        TableName: ctx.tables.zones,
        KeyConditionExpression: '#c = :c',
        ExpressionAttributeNames: { '#c': 'cluster' },
        ExpressionAttributeValues: { ':c': checkClusterName(cluster) },
        ConsistentRead: true,
      },
      opts.signal,
    );
    const queues = new Map<string, RateLimitedTimedQueue>();
    const versions = new Map<string, ZoneQueueVersion>();
    for (const row of rows) {
      if (row.zone === ClusterRowKey || row.queueVersion === undefined) continue;
      const zone = decodeZone(String(row.zone));
      const snapshot = await readZoneQueue(ctx, cluster, zone, row, opts.signal);
      const queue = toDomainQueue(snapshot);
      if (queue === undefined) continue;
      queues.set(zone, queue);
      versions.set(zone, versionOf(snapshot));
    }
    return { cluster, queues, versions };
  }

  async commitZoneQueues(
    loaded: LoadedZoneQueues,
    after: ReadonlyMap<string, RateLimitedTimedQueue>,
    opts: CommitZoneQueuesOptions = {},
  ): Promise<LoadedZoneQueues> {
    const queues = new Map(loaded.queues);
    const versions = new Map(loaded.versions);
    for (const [zone, queue] of after) {
      const before = loaded.queues.get(zone);
      if (queue === before) continue;
      const snapshot = snapshotOf(zone, loaded.versions.get(zone), before);
      const written =
        opts.merge === true
          ? await commitZoneQueueMerging(this.ctx, loaded.cluster, snapshot, before, queue, opts.signal)
          : { snapshot: await writeZoneQueue(this.ctx, loaded.cluster, snapshot, queue, opts.signal), queue };
      queues.set(zone, written.queue);
      versions.set(zone, versionOf(written.snapshot));
    }
    return { cluster: loaded.cluster, queues, versions };
  }

  async updateZoneQueue<T>(
    cluster: string,
    zone: string,
    change: (queue: RateLimitedTimedQueue | undefined) => ZoneQueueChange<T>,
    opts: StoreCallOptions = {},
  ): Promise<ZoneQueueChange<T>> {
    const { ctx } = this;
    for (let attempt = 0; ; attempt++) {
      const snapshot = await readZoneQueue(ctx, checkClusterName(cluster), zone, undefined, opts.signal);
      const outcome = change(toDomainQueue(snapshot));
      if (outcome.queue === undefined) return outcome;
      try {
        await writeZoneQueue(ctx, cluster, snapshot, outcome.queue, opts.signal);
        return outcome;
      } catch (error) {
        if (!(error instanceof VersionConflictError) || attempt + 1 >= ctx.settings.conflictAttempts)
          throw error;
        await pause(backoffMs(ctx.settings, attempt), { table: error.table }, opts.signal);
      }
    }
  }
}
