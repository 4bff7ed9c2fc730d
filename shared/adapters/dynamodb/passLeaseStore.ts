// The monitor's per-cluster pass lease (PassLeaseStore): one conditional PutItem to take it, one
// conditional DeleteItem to give it back. Two passes of one cluster never overlap; passes of different
// clusters never wait for each other (docs/deploy.md, "Serializing the monitor: a pass lease per
// cluster").
//
// Where: the Zones table, in a partition of its own per cluster, `<cluster>#pass-lease` (cluster names
// cannot contain '#', so the monitor's and the drainer's Queries of the cluster's partition never read
// it), one item:
//
//   cluster = prod#pass-lease   zone = monitor   holder, untilMs, until (ISO), acquiredAtMs, updatedAt
//
// `untilMs` is the holder's invocation deadline on the functions' clock plus a margin: a holder cannot
// run past its deadline (Lambda stops it), so a lease found expired belongs to a pass that is over.
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { VersionConflictError } from '../../errors.js';
import type { EpochMillis } from '../../domain/types.js';
import type {
  PassLeaseHolder,
  PassLeaseResult,
  PassLeaseStore,
  StoreCallOptions,
} from '../../ports/stores.js';
import { request, type DynamoContext } from './client.js';
import { checkClusterName, isoString } from './codec.js';

/** The Zones partition holding a cluster's pass lease. */
export function passLeasePartition(cluster: string): string {
  return `${checkClusterName(cluster)}#pass-lease`;
}

const LeaseSortKey = 'monitor';

const LeaseItem = z.object({ holder: z.string(), untilMs: z.number() });

export class DynamoDbPassLeaseStore implements PassLeaseStore {
  constructor(private readonly ctx: DynamoContext) {}

  async acquire(
    cluster: string,
    lease: PassLeaseHolder & { readonly now: EpochMillis },
    opts: StoreCallOptions = {},
  ): Promise<PassLeaseResult> {
    const { ctx } = this;
    const key = { cluster: passLeasePartition(cluster), zone: LeaseSortKey };
    const ref = { table: ctx.tables.zones, key };
    try {
      await request(
        ctx,
        'PutItem',
        ref,
        (abortSignal) =>
          ctx.doc.send(
            new PutCommand({
              TableName: ctx.tables.zones,
              Item: {
                ...key,
                holder: lease.holder,
                untilMs: lease.until,
                until: isoString(lease.until),
                acquiredAtMs: lease.now,
                updatedAt: isoString(lease.now),
              },
              // Free, expired, or already ours (a retried request whose first attempt succeeded).
              ConditionExpression: 'attribute_not_exists(#z) OR #u < :now OR #h = :holder',
              ExpressionAttributeNames: { '#z': 'zone', '#u': 'untilMs', '#h': 'holder' },
              ExpressionAttributeValues: { ':now': lease.now, ':holder': lease.holder },
              ReturnConsumedCapacity: 'TOTAL',
            }),
            { abortSignal },
          ),
        opts.signal,
      );
      return { acquired: true };
    } catch (error) {
      if (!(error instanceof VersionConflictError)) throw error;
      return { acquired: false, held: await this.read(key, opts.signal) };
    }
  }

  async release(cluster: string, holder: string, opts: StoreCallOptions = {}): Promise<void> {
    const { ctx } = this;
    const key = { cluster: passLeasePartition(cluster), zone: LeaseSortKey };
    try {
      await request(
        ctx,
        'DeleteItem',
        { table: ctx.tables.zones, key },
        (abortSignal) =>
          ctx.doc.send(
            new DeleteCommand({
              TableName: ctx.tables.zones,
              Key: key,
              ConditionExpression: '#h = :holder',
              ExpressionAttributeNames: { '#h': 'holder' },
              ExpressionAttributeValues: { ':holder': holder },
              ReturnConsumedCapacity: 'TOTAL',
            }),
            { abortSignal },
          ),
        opts.signal,
      );
    } catch (error) {
      // Taken over after it expired (or already released): the lease is not ours to delete.
      if (!(error instanceof VersionConflictError)) throw error;
    }
  }

  /** The current holder, for the log line of a refused pass (only then: one GetItem). */
  private async read(
    key: { readonly cluster: string; readonly zone: string },
    signal: AbortSignal | undefined,
  ): Promise<PassLeaseHolder | undefined> {
    const { ctx } = this;
    const out = await request(
      ctx,
      'GetItem',
      { table: ctx.tables.zones, key },
      (abortSignal) =>
        ctx.doc.send(
          new GetCommand({
            TableName: ctx.tables.zones,
            Key: key,
            ConsistentRead: true,
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      signal,
    );
    const item = LeaseItem.safeParse(out.Item);
    return item.success ? { holder: item.data.holder, until: item.data.untilMs } : undefined;
  }
}
