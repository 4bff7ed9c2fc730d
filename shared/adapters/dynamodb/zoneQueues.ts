// Zone eviction queues in DynamoDB: the limiter and bookkeeping on the zone's Zones row, one
// EvictionQueue row per node. A queue change touches several items and dynalite (like older DynamoDB
// setups) has no transactions, so a commit is made atomic with a redo log on the zone row:
//
//   1. claim   UpdateItem zone row: queueVersion V → V+1 (condition queueVersionUnchanged), new limiter
//              and counts, and `pendingOps` = the entry rows to write. Losing here writes nothing.
//   2. apply   PutItem each entry row, stamped queueVersion V+1, unless a newer version wrote it
//              (condition entryNotNewer); removed entries become tombstones, never deleted, so a
//              late writer of an older version cannot resurrect them.
//   3. clear   REMOVE pendingOps while queueVersion is still V+1.
//
// A reader that finds `pendingOps` (a writer died between 1 and 3) applies them itself first
// (roll forward). So readers see version V or V+1 entirely, and every writer is conditional on the
// version it read: no token is spent twice and no entry is lost
// (docs/state.md#concurrency-every-racing-write-is-conditional).
import { z } from 'zod';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { VersionConflictError, type StoreItemRef } from '../../errors.js';
import type { RateLimitedTimedQueue } from '../../domain/rateLimitedTimedQueue.js';
import type { StoredQueueEntry, ZoneQueueVersion } from '../../ports/stores.js';
import {
  backoffMs,
  Expression,
  forEachLimit,
  pause,
  queryAll,
  request,
  type DynamoContext,
  type StoredItem,
} from './client.js';
import {
  checkClusterName,
  encodeInstant,
  encodeLimiter,
  encodeZone,
  InstantSchema,
  isoString,
  LimiterSchema,
} from './codec.js';
import { expiresAt, parseItem } from './items.js';
import {
  diffQueue,
  emptySnapshot,
  mergeQueueChanges,
  queueCounts,
  toDomainQueue,
  type QueueOp,
  type ZoneQueueSnapshot,
} from './queueState.js';

/** A queued entry's TokenClaim (rateLimitedTimedQueue.ts): the token a drainer spent on it, not yet completed. */
const ClaimSchema = z.object({ by: z.string(), at: InstantSchema, until: InstantSchema });

const EntryFields = {
  inQueue: z.boolean(),
  inSet: z.boolean(),
  uid: z.string().optional(),
  addedAt: InstantSchema.optional(),
  processAt: InstantSchema.optional(),
  seq: z.number(),
  setSeq: z.number(),
  claim: ClaimSchema.optional(),
};
const EntryItemSchema = z.object({ node: z.string(), ...EntryFields });
const PendingOpSchema = z.object({ node: z.string(), ...EntryFields });

const QueueGroupSchema = z.object({
  queueVersion: z.number(),
  nextSeq: z.number(),
  limiter: LimiterSchema,
  queueLength: z.number(),
  setSize: z.number(),
  pendingOps: z.array(PendingOpSchema).optional(),
});

function toEntry(e: z.output<typeof EntryItemSchema>): StoredQueueEntry {
  return {
    inQueue: e.inQueue,
    inSet: e.inSet,
    ...(e.uid !== undefined && { uid: e.uid }),
    ...(e.addedAt !== undefined && { addedAt: e.addedAt }),
    ...(e.processAt !== undefined && { processAt: e.processAt }),
    seq: e.seq,
    setSeq: e.setSeq,
    ...(e.claim !== undefined && { claim: e.claim }),
  };
}

function encodeEntry(value: string, e: StoredQueueEntry): Record<string, unknown> {
  return {
    node: value,
    inQueue: e.inQueue,
    inSet: e.inSet,
    ...(e.uid !== undefined && { uid: e.uid }),
    ...(e.addedAt !== undefined && { addedAt: encodeInstant(e.addedAt) }),
    ...(e.processAt !== undefined && { processAt: encodeInstant(e.processAt) }),
    seq: e.seq,
    setSeq: e.setSeq,
    ...(e.claim !== undefined && {
      claim: { by: e.claim.by, at: encodeInstant(e.claim.at), until: encodeInstant(e.claim.until) },
    }),
  };
}

export function queuePartitionKey(cluster: string, zone: string): string {
  return `${checkClusterName(cluster)}#${encodeZone(zone)}`;
}

function zoneRowRef(ctx: DynamoContext, cluster: string, zone: string): StoreItemRef {
  return { table: ctx.tables.zones, key: { cluster, zone: encodeZone(zone) } };
}

/** The queue group of a zone row, if it has one. */
export function decodeQueueGroup(
  ctx: DynamoContext,
  cluster: string,
  zone: string,
  item: StoredItem | undefined,
): z.output<typeof QueueGroupSchema> | undefined {
  if (item?.queueVersion === undefined) return undefined;
  return parseItem(QueueGroupSchema, item, zoneRowRef(ctx, cluster, zone));
}

async function getZoneRow(
  ctx: DynamoContext,
  cluster: string,
  zone: string,
  signal: AbortSignal | undefined,
): Promise<StoredItem | undefined> {
  const ref = zoneRowRef(ctx, cluster, zone);
  const output = await request(
    ctx,
    'GetItem',
    ref,
    (abortSignal) =>
      ctx.doc.send(
        new GetCommand({
          TableName: ctx.tables.zones,
          Key: { cluster, zone: encodeZone(zone) },
          ConsistentRead: true,
          ReturnConsumedCapacity: 'TOTAL',
        }),
        { abortSignal },
      ),
    signal,
  );
  return output.Item;
}

/** Writes one entry row at `version`, unless a newer version already wrote it. */
async function putEntry(
  ctx: DynamoContext,
  cluster: string,
  zone: string,
  op: QueueOp,
  version: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  const now = ctx.clock.now();
  const e = new Expression();
  const entryNotNewer = `attribute_not_exists(${e.n('queueVersion')}) OR ${e.n('queueVersion')} < ${e.v(version)}`;
  const item = {
    clusterZone: queuePartitionKey(cluster, zone),
    cluster,
    zone: encodeZone(zone),
    ...encodeEntry(op.value, op.entry),
    queueVersion: version,
    updatedAt: isoString(now),
    ...(!op.entry.inSet && { expiresAt: expiresAt(now, ctx.settings.tombstoneTtlSeconds) }),
  };
  const ref = { table: ctx.tables.evictionQueue, key: { clusterZone: item.clusterZone, node: op.value } };
  try {
    await request(
      ctx,
      'PutItem',
      ref,
      (abortSignal) =>
        ctx.doc.send(
          new PutCommand({
            TableName: ctx.tables.evictionQueue,
            Item: item,
            ConditionExpression: entryNotNewer,
            ...e.params,
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      signal,
    );
  } catch (error) {
    if (!(error instanceof VersionConflictError)) throw error;
    // A newer version already wrote this row (it supersedes ours), or this version did and only the
    // answer was lost (a retried request). A row still older than ours means the condition was not what
    // failed: fail the commit, whose redo log then stays on the zone row for the next reader to roll
    // forward, rather than leave the row behind its version for good.
    if ((await storedEntryVersion(ctx, ref, signal)) < version) throw error;
  }
}

/** The queueVersion that last wrote an entry row (0 when there is none), read consistently. */
async function storedEntryVersion(
  ctx: DynamoContext,
  ref: { readonly table: string; readonly key: Readonly<Record<string, string>> },
  signal: AbortSignal | undefined,
): Promise<number> {
  const output = await request(
    ctx,
    'GetItem',
    ref,
    (abortSignal) =>
      ctx.doc.send(
        new GetCommand({
          TableName: ref.table,
          Key: ref.key,
          ConsistentRead: true,
          ProjectionExpression: '#v',
          ExpressionAttributeNames: { '#v': 'queueVersion' },
          ReturnConsumedCapacity: 'TOTAL',
        }),
        { abortSignal },
      ),
    signal,
  );
  const stored: unknown = output.Item?.queueVersion;
  return typeof stored === 'number' ? stored : 0;
}

async function applyOps(
  ctx: DynamoContext,
  cluster: string,
  zone: string,
  ops: readonly QueueOp[],
  version: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  await forEachLimit(ops, ctx.settings.writeConcurrency, (op) =>
    putEntry(ctx, cluster, zone, op, version, signal),
  );
  if (ops.length === 0) return;
  const e = new Expression();
  try {
    await request(
      ctx,
      'UpdateItem',
      zoneRowRef(ctx, cluster, zone),
      (abortSignal) =>
        ctx.doc.send(
          new UpdateCommand({
            TableName: ctx.tables.zones,
            Key: { cluster, zone: encodeZone(zone) },
            UpdateExpression: `REMOVE ${e.n('pendingOps')}`,
            ConditionExpression: `${e.n('queueVersion')} = ${e.v(version)}`,
            ...e.params,
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      signal,
    );
  } catch (error) {
    // Someone committed a newer version meanwhile; its claim replaced pendingOps.
    if (!(error instanceof VersionConflictError)) throw error;
  }
}

function snapshotKey(cluster: string, zone: string): string {
  return `${cluster}#${zone}`;
}

/** Keeps `snapshot` as this instance's newest sight of its zone queue (ctx.queueSnapshots). */
function remember(ctx: DynamoContext, cluster: string, snapshot: ZoneQueueSnapshot): ZoneQueueSnapshot {
  const key = snapshotKey(cluster, snapshot.zone);
  const known = ctx.queueSnapshots.get(key);
  // A slower concurrent reader of an older version must not replace a newer one.
  if (known === undefined || known.version <= snapshot.version) ctx.queueSnapshots.set(key, snapshot);
  return snapshot;
}

/**
 * One zone's stored queue, consistent: the entry rows are read between two reads of the zone row
 * that must agree on its version, and pending ops of a writer that died are rolled forward.
 * `zoneRow` is the zone row when the caller has just read it.
 */
export async function readZoneQueue(
  ctx: DynamoContext,
  cluster: string,
  zone: string,
  zoneRow: StoredItem | undefined,
  signal: AbortSignal | undefined,
): Promise<ZoneQueueSnapshot> {
  let row = zoneRow ?? (await getZoneRow(ctx, cluster, zone, signal));
  for (let attempt = 0; ; attempt++) {
    const group = decodeQueueGroup(ctx, cluster, zone, row);
    if (group === undefined) return emptySnapshot(zone);
    const known = ctx.queueSnapshots.get(snapshotKey(cluster, zone));
    if (group.pendingOps === undefined && known?.version === group.queueVersion) {
      // The entry rows of a committed version are what this instance last saw of it.
      return { ...known, nextSeq: group.nextSeq, limiter: group.limiter };
    }
    const pending = group.pendingOps ?? [];
    const entries = new Map<string, StoredQueueEntry>();
    if (group.queueLength + group.setSize > 0 || pending.length > 0) {
      const items = await queryAll(
        ctx,
        {
          TableName: ctx.tables.evictionQueue,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': 'clusterZone' },
          ExpressionAttributeValues: { ':pk': queuePartitionKey(cluster, zone) },
          ConsistentRead: true,
        },
        signal,
      );
      for (const item of items) {
        const entry = parseItem(EntryItemSchema, item, {
          table: ctx.tables.evictionQueue,
          key: { clusterZone: queuePartitionKey(cluster, zone), node: String(item.node) },
        });
        entries.set(entry.node, toEntry(entry));
      }
      const again = await getZoneRow(ctx, cluster, zone, signal);
      const confirmed = decodeQueueGroup(ctx, cluster, zone, again);
      if (confirmed?.queueVersion !== group.queueVersion && attempt + 1 < ctx.settings.conflictAttempts) {
        row = again; // a writer committed while we read the entries: read again
        continue;
      }
    }
    const ops = pending.map((op): QueueOp => ({ value: op.node, entry: toEntry(op) }));
    for (const op of ops) entries.set(op.value, op.entry);
    if (ops.length > 0) await applyOps(ctx, cluster, zone, ops, group.queueVersion, signal);
    return remember(ctx, cluster, {
      zone,
      version: group.queueVersion,
      nextSeq: group.nextSeq,
      limiter: group.limiter,
      entries,
    });
  }
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  if (items.length === 0) return [[]];
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The entry changes in the order they are written when not all fit in one commit: live entries before
 * tombstones, each by their place in the queue (processAt, then seq). What waits is then mostly a
 * recovered zone's forgotten nodes at the queue's tail, and a drainer that reads the stored queue meets
 * the nodes still due first.
 */
function headFirst(ops: readonly QueueOp[]): QueueOp[] {
  const rank = ({ entry }: QueueOp): [number, number, number] => [
    entry.inSet ? 0 : 1,
    entry.processAt ?? Number.POSITIVE_INFINITY,
    entry.seq,
  ];
  return ops
    .map((op) => ({ op, key: rank(op) }))
    .sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || a.key[2] - b.key[2])
    .map(({ op }) => op);
}

/**
 * Writes `after` over `snapshot` if the zone's queue version is still the snapshot's (else
 * VersionConflictError, nothing written). Returns the new snapshot. More entry changes than
 * maxQueueOpsPerCommit are split over several versions, each a valid queue state. At most `limit` of
 * them are written now (headFirst): the snapshot returned is what is stored, with `behind` the changes
 * left, which the next write over it (diffQueue against that snapshot) picks up.
 */
export async function writeZoneQueue(
  ctx: DynamoContext,
  cluster: string,
  snapshot: ZoneQueueSnapshot,
  after: RateLimitedTimedQueue,
  signal: AbortSignal | undefined,
  limit: number = Number.POSITIVE_INFINITY,
): Promise<ZoneQueueSnapshot> {
  const diff = diffQueue(snapshot, after);
  if (diff.ops.length === 0 && !diff.limiterChanged && snapshot.version > 0) {
    const { behind: _none, ...stored } = snapshot;
    return stored;
  }
  const { zone } = snapshot;
  const ref = zoneRowRef(ctx, cluster, zone);
  let version = snapshot.version;
  const entries = new Map(snapshot.entries);
  const ops = diff.ops.length > limit ? headFirst(diff.ops).slice(0, Math.max(0, limit)) : diff.ops;
  for (const chunk of chunks(ops, ctx.settings.maxQueueOpsPerCommit)) {
    for (const op of chunk) entries.set(op.value, op.entry);
    const counts = queueCounts(entries);
    const now = ctx.clock.now();
    const e = new Expression();
    const queueVersionUnchanged =
      version === 0
        ? `attribute_not_exists(${e.n('queueVersion')})`
        : `${e.n('queueVersion')} = ${e.v(version)}`;
    const update = e.update({
      queueVersion: version + 1,
      limiter: encodeLimiter(after.limiter),
      nextSeq: diff.next.nextSeq,
      queueLength: counts.queued,
      setSize: counts.inSet,
      pendingOps: chunk.length > 0 ? chunk.map((op) => encodeEntry(op.value, op.entry)) : undefined,
      queueUpdatedAt: isoString(now),
    });
    await request(
      ctx,
      'UpdateItem',
      ref,
      (abortSignal) =>
        ctx.doc.send(
          new UpdateCommand({
            TableName: ctx.tables.zones,
            Key: { cluster, zone: encodeZone(zone) },
            UpdateExpression: update,
            ConditionExpression: queueVersionUnchanged,
            ...e.params,
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      signal,
    );
    version++;
    await applyOps(ctx, cluster, zone, chunk, version, signal);
  }
  if (ops.length === diff.ops.length) return remember(ctx, cluster, { ...diff.next, version });
  const stored = { zone, version, nextSeq: diff.next.nextSeq, limiter: after.limiter, entries };
  remember(ctx, cluster, stored);
  return { ...stored, behind: diff.ops.length - ops.length };
}

/**
 * Commits the change `loadedQueue` → `after` of one zone. On a lost race, re-reads the zone and
 * re-applies the change onto it (mergeQueueChanges), until it sticks or cannot be merged.
 */
export async function commitZoneQueueMerging(
  ctx: DynamoContext,
  cluster: string,
  snapshot: ZoneQueueSnapshot,
  loadedQueue: RateLimitedTimedQueue | undefined,
  after: RateLimitedTimedQueue,
  signal: AbortSignal | undefined,
  /** Entry changes written now at most (writeZoneQueue): the snapshot says how many are left. */
  limit: number = Number.POSITIVE_INFINITY,
): Promise<{ snapshot: ZoneQueueSnapshot; queue: RateLimitedTimedQueue }> {
  let current = snapshot;
  let target = after;
  for (let attempt = 0; ; attempt++) {
    try {
      return {
        snapshot: await writeZoneQueue(ctx, cluster, current, target, signal, limit),
        queue: target,
      };
    } catch (error) {
      if (!(error instanceof VersionConflictError) || attempt + 1 >= ctx.settings.conflictAttempts)
        throw error;
      await pause(backoffMs(ctx.settings, attempt), { table: error.table }, signal);
      current = await readZoneQueue(ctx, cluster, snapshot.zone, undefined, signal);
      const merged = mergeQueueChanges(loadedQueue, after, toDomainQueue(current));
      if (merged === undefined) throw error;
      target = merged;
    }
  }
}

/** The snapshot a LoadedState's versions and queue stand for. */
export function snapshotOf(
  zone: string,
  version: ZoneQueueVersion | undefined,
  queue: RateLimitedTimedQueue | undefined,
): ZoneQueueSnapshot {
  if (version === undefined) return { ...emptySnapshot(zone), limiter: queue?.limiter };
  return {
    zone,
    version: version.version,
    nextSeq: version.nextSeq,
    entries: version.entries,
    limiter: queue?.limiter,
  };
}

export function versionOf(snapshot: ZoneQueueSnapshot): ZoneQueueVersion {
  const { version, nextSeq, entries, behind } = snapshot;
  return { version, nextSeq, entries, ...(behind !== undefined && behind > 0 && { behind }) };
}
