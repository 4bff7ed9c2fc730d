// The parts of a multi-part Heartbeat Digest while the monitor waits for the rest (DigestPartStore). A
// digest is split only above ~24,000 nodes (docs/events.md, "Size"), and each part is its own event and
// invocation, so all parts but the last must be kept somewhere durable.
//
// Where: the Zones table, in a partition of its own per cluster, `<cluster>#digest-parts` (cluster names
// cannot contain '#', so it never collides with a cluster's own partition, and the monitor's and the
// drainer's Queries of the Zones partition never read these rows). One item per part:
//
//   cluster = prod#digest-parts   zone = <ISO leaderSince>#<sequence, 16 digits>#<index, 6 digits>#<relayId>
//   leaderSince, relayId, sequence, partIndex, partCount, observedAt, receivedAtMs,
//   detail (gzip of the wire detail JSON)
//
// A part is at most ~255 KB of JSON; gzip keeps the item well under DynamoDB's 400 KB and the write units
// low (probe ages and shared name prefixes compress about fourfold). No TTL is needed: every part that
// arrives drops the parts it makes useless, and a processed digest drops its own (clearParts).
//
// Which parts are useless is never decided on a relay's clock (docs/architecture.md#digest-time): a
// leaderSince from a clock ahead or behind would keep a part forever, read with every later part.
// Within one relay term the sequence orders digests; across terms nothing the relay says does, so a part
// of another digest goes once it has waited PartAssemblyWindow on the functions' own clock (the relay
// publishes a digest's parts together: they arrive within seconds, or the digest is superseded).
import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { StoreError } from '../../errors.js';
import {
  encodeDetail,
  HeartbeatDigestDetailType,
  parseHeartbeatDigest,
  type HeartbeatDigest,
} from '../../events.js';
import type { DigestPosition } from '../../heartbeatDigest.js';
import type { EpochMillis, Millis } from '../../domain/types.js';
import type { DigestPartStore, StoreCallOptions } from '../../ports/stores.js';
import { queryAll, request, type DynamoContext, type StoredItem } from './client.js';
import { checkClusterName, encodeInstant, InstantSchema, isoString } from './codec.js';
import { parseItem } from './items.js';

/** The Zones partition holding a cluster's digest parts. */
export function digestPartsPartition(cluster: string): string {
  return `${checkClusterName(cluster)}#digest-parts`;
}

/** How long a part of a digest waits for the others, on the functions' clock, before it is dropped. */
export const PartAssemblyWindow: Millis = 60_000;

function sortKey(part: DigestPosition & { readonly index: number }): string {
  return [
    isoString(part.leaderSince),
    String(part.sequence).padStart(16, '0'),
    String(part.index).padStart(6, '0'),
    part.relayId,
  ].join('#');
}

const PartPositionSchema = z.object({
  zone: z.string(),
  leaderSince: InstantSchema,
  relayId: z.string(),
  sequence: z.number(),
  // Absent on parts stored before it was kept: taken as long past.
  receivedAtMs: z.number().optional(),
});
type StoredPart = z.infer<typeof PartPositionSchema>;

const sameTerm = (a: DigestPosition, b: DigestPosition): boolean =>
  a.relayId === b.relayId && a.leaderSince === b.leaderSince;

/**
 * Whether a stored part is no longer needed once `than` is (arrived, or processed with `inclusive`): an
 * earlier digest of the same term, or any other digest's part that has waited past PartAssemblyWindow.
 */
function superseded(item: StoredPart, than: DigestPosition, now: EpochMillis, inclusive: boolean): boolean {
  if (sameTerm(item, than) && (inclusive ? item.sequence <= than.sequence : item.sequence < than.sequence)) {
    return true;
  }
  return !(now - (item.receivedAtMs ?? Number.NEGATIVE_INFINITY) < PartAssemblyWindow);
}
const PartItemSchema = PartPositionSchema.extend({ detail: z.instanceof(Uint8Array) });

export class DynamoDbDigestPartStore implements DigestPartStore {
  constructor(private readonly ctx: DynamoContext) {}

  async addPart(
    cluster: string,
    part: HeartbeatDigest,
    opts: StoreCallOptions = {},
  ): Promise<readonly HeartbeatDigest[]> {
    const { ctx } = this;
    const partition = digestPartsPartition(cluster);
    const key = { cluster: partition, zone: sortKey({ ...part, index: part.part.index }) };
    const now = ctx.clock.now();
    const detail = gzipSync(
      JSON.stringify(encodeDetail({ detailType: HeartbeatDigestDetailType, detail: part })),
    );
    // Unconditional: a duplicate delivery writes the same bytes again.
    await request(
      ctx,
      'PutItem',
      { table: ctx.tables.zones, key },
      (abortSignal) =>
        ctx.doc.send(
          new PutCommand({
            TableName: ctx.tables.zones,
            Item: {
              ...key,
              leaderSince: encodeInstant(part.leaderSince),
              relayId: part.relayId,
              sequence: part.sequence,
              partIndex: part.part.index,
              partCount: part.part.count,
              observedAt: encodeInstant(part.observedAt),
              receivedAtMs: now,
              detail,
              updatedAt: isoString(now),
            },
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      opts.signal,
    );

    const siblings: HeartbeatDigest[] = [];
    const older: StoredItem[] = [];
    for (const raw of await this.readPartition(partition, true, opts.signal)) {
      const ref = { table: ctx.tables.zones, key: { cluster: partition, zone: String(raw.zone) } };
      const item = parseItem(PartItemSchema, raw, ref);
      if (sameTerm(item, part) && item.sequence === part.sequence)
        siblings.push(decodePart(item.detail, ref));
      else if (superseded(item, part, now, false)) older.push(raw);
    }
    await this.deleteAll(partition, older, opts.signal);
    return siblings;
  }

  async clearParts(cluster: string, upTo: DigestPosition, opts: StoreCallOptions = {}): Promise<void> {
    const { ctx } = this;
    const partition = digestPartsPartition(cluster);
    const now = ctx.clock.now();
    const done = (await this.readPartition(partition, false, opts.signal)).filter((raw) => {
      const ref = { table: ctx.tables.zones, key: { cluster: partition, zone: String(raw.zone) } };
      return superseded(parseItem(PartPositionSchema, raw, ref), upTo, now, true);
    });
    await this.deleteAll(partition, done, opts.signal);
  }

  /** Every part item of the partition; without `withDetail`, only keys and positions (cheap). */
  private readPartition(
    partition: string,
    withDetail: boolean,
    signal: AbortSignal | undefined,
  ): Promise<StoredItem[]> {
    const { ctx } = this;
    return queryAll(
      ctx,
      {
        TableName: ctx.tables.zones,
        KeyConditionExpression: '#c = :c',
        ExpressionAttributeNames: {
          '#c': 'cluster',
          ...(!withDetail && {
            '#z': 'zone',
            '#l': 'leaderSince',
            '#r': 'relayId',
            '#s': 'sequence',
            '#t': 'receivedAtMs',
          }),
        },
        ...(!withDetail && { ProjectionExpression: '#z, #l, #r, #s, #t' }),
        ExpressionAttributeValues: { ':c': partition },
        ConsistentRead: true,
      },
      signal,
    );
  }

  private async deleteAll(
    partition: string,
    items: readonly StoredItem[],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const { ctx } = this;
    for (const raw of items) {
      const key = { cluster: partition, zone: String(raw.zone) };
      await request(
        ctx,
        'DeleteItem',
        { table: ctx.tables.zones, key },
        (abortSignal) =>
          ctx.doc.send(
            new DeleteCommand({ TableName: ctx.tables.zones, Key: key, ReturnConsumedCapacity: 'TOTAL' }),
            { abortSignal },
          ),
        signal,
      );
    }
  }
}

function decodePart(
  detail: Uint8Array,
  ref: { table: string; key: Record<string, string> },
): HeartbeatDigest {
  try {
    return parseHeartbeatDigest(JSON.parse(gunzipSync(detail).toString('utf8')));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new StoreError(ref, 'failed', `malformed digest part: ${message}`, { cause: error });
  }
}
