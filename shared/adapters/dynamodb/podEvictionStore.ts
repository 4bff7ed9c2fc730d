// The taint eviction controller's TimedWorkerQueue in the PodEvictions table: one row per pod key
// (`namespace/name`). Entry ownership is the token (timedWorkerQueue.ts): tokens come from a per-cluster
// counter row, so a token is never reused even after its entry is gone, and every state change is
// conditional on the token the caller holds. Waiting timers carry `firesAtMs`, the sort key of the
// byFiresAt index (a sparse index: running and immediate work are not in it), which dueEvictions reads.
import { z } from 'zod';
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { VersionConflictError } from '../../errors.js';
import { addWork, createWorkerQueue } from '../../domain/timedWorkerQueue.js';
import { parsePodKey, type EpochMillis, type PodKey } from '../../domain/types.js';
import type {
  AddPodEvictionResult,
  PodEviction,
  PodEvictionStore,
  StoreCallOptions,
} from '../../ports/stores.js';
import { Expression, queryAll, request, type DynamoContext, type StoredItem } from './client.js';
import { checkClusterName, encodeInstant, InstantSchema, isoString } from './codec.js';
import { parseItem } from './items.js';
import { PodEvictionsByFiresAtIndex } from './tables.js';

/** Sort key of the per-cluster token counter (pod keys never start with '#'). */
const TokenCounterKey = '#tokens';

const PodEvictionItemSchema = z.object({
  pod: z.string(),
  node: z.string(),
  createdAt: InstantSchema,
  fireAt: InstantSchema,
  firesAt: InstantSchema,
  token: z.number(),
  timerBacked: z.boolean(),
  firing: z.boolean(),
  firesAtMs: z.number().optional(),
  uid: z.string().optional(),
});

function encodeEviction(
  cluster: string,
  e: PodEviction,
  now: EpochMillis,
  firingLeaseMs: number,
): Record<string, unknown> {
  const { namespace, name } = parsePodKey(e.key);
  const waiting = e.timerBacked && !e.firing;
  // A running entry stays in the due index until its lease runs out, so a run that died is reclaimed.
  const dueAt = waiting ? e.firesAt : now + firingLeaseMs;
  return {
    cluster,
    pod: e.key,
    namespace,
    name,
    node: e.nodeName,
    ...(e.uid !== undefined && { uid: e.uid }),
    createdAt: encodeInstant(e.createdAt),
    fireAt: encodeInstant(e.fireAt),
    firesAt: encodeInstant(e.firesAt),
    firesAtMs: dueAt,
    token: e.token,
    timerBacked: e.timerBacked,
    firing: e.firing,
    updatedAt: isoString(now),
  };
}

function decodeEviction(item: z.output<typeof PodEvictionItemSchema>): PodEviction {
  return {
    key: item.pod,
    nodeName: item.node,
    createdAt: item.createdAt,
    fireAt: item.fireAt,
    firesAt: item.firesAt,
    token: item.token,
    timerBacked: item.timerBacked,
    firing: item.firing,
    ...(item.uid !== undefined && { uid: item.uid }),
  };
}

function byFiresAtThenKey(a: PodEviction, b: PodEviction): number {
  return a.firesAt - b.firesAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

export class DynamoDbPodEvictionStore implements PodEvictionStore {
  constructor(private readonly ctx: DynamoContext) {}

  async list(cluster: string, opts: StoreCallOptions = {}): Promise<readonly PodEviction[]> {
    const { ctx } = this;
    const items = await queryAll(
      ctx,
      {
        TableName: ctx.tables.podEvictions,
        KeyConditionExpression: '#c = :c',
        ExpressionAttributeNames: { '#c': 'cluster' },
        ExpressionAttributeValues: { ':c': checkClusterName(cluster) },
        ConsistentRead: true,
      },
      opts.signal,
    );
    return items.filter((item) => item.pod !== TokenCounterKey).map((item) => this.decode(cluster, item));
  }

  async get(cluster: string, key: PodKey, opts: StoreCallOptions = {}): Promise<PodEviction | undefined> {
    const { ctx } = this;
    const itemKey = { cluster: checkClusterName(cluster), pod: key };
    const output = await request(
      ctx,
      'GetItem',
      { table: ctx.tables.podEvictions, key: itemKey },
      (abortSignal) =>
        ctx.doc.send(
          new GetCommand({
            TableName: ctx.tables.podEvictions,
            Key: itemKey,
            ConsistentRead: true,
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      opts.signal,
    );
    return output.Item === undefined ? undefined : this.decode(cluster, output.Item);
  }

  async add(
    cluster: string,
    work: {
      readonly key: PodKey;
      readonly uid?: string;
      readonly nodeName: string;
      readonly createdAt: EpochMillis;
      readonly fireAt: EpochMillis;
      readonly now: EpochMillis;
    },
    opts: StoreCallOptions = {},
  ): Promise<AddPodEvictionResult> {
    const { ctx } = this;
    checkClusterName(cluster);
    for (let attempt = 0; ; attempt++) {
      const token = await this.allocateToken(cluster, opts.signal);
      // The domain decides scheduled vs immediate and firesAt (timedWorkerQueue.ts addWork).
      const added = addWork(createWorkerQueue(), work.key, work.createdAt, work.fireAt, work.now, token);
      if (added.kind === 'skipped') throw new Error('invariant: addWork skipped on an empty queue');
      const eviction: PodEviction = {
        ...added.entry,
        nodeName: work.nodeName,
        ...(work.uid !== undefined && { uid: work.uid }),
      };
      const e = new Expression();
      const noEntryForPod = `attribute_not_exists(${e.n('pod')})`;
      const itemKey = { cluster, pod: work.key };
      try {
        await request(
          ctx,
          'PutItem',
          { table: ctx.tables.podEvictions, key: itemKey },
          (abortSignal) =>
            ctx.doc.send(
              new PutCommand({
                TableName: ctx.tables.podEvictions,
                Item: encodeEviction(cluster, eviction, ctx.clock.now(), ctx.settings.firingLeaseMs),
                ConditionExpression: noEntryForPod,
                ...e.params,
                ReturnConsumedCapacity: 'TOTAL',
              }),
              { abortSignal },
            ),
          opts.signal,
        );
        return { kind: added.kind, eviction };
      } catch (error) {
        if (!(error instanceof VersionConflictError)) throw error;
        // upstream AddWork: the existing entry wins ("Trying to add already existing work, skipping").
        const existing = await this.get(cluster, work.key, opts);
        if (existing !== undefined) return { kind: 'skipped', existing };
        // It was removed between our put and our read: try again.
        if (attempt + 1 >= ctx.settings.conflictAttempts) throw error;
      }
    }
  }

  async startFiring(
    cluster: string,
    key: PodKey,
    token: number,
    opts: StoreCallOptions = {},
  ): Promise<boolean> {
    const { ctx } = this;
    const itemKey = { cluster: checkClusterName(cluster), pod: key };
    const e = new Expression();
    const now = ctx.clock.now();
    // Waiting, or running with an expired lease (the run that started it died before `complete`).
    const heldAndStartable = `${e.n('token')} = ${e.v(token)} AND (${e.n('firing')} = ${e.v(false)} OR ${e.n('firesAtMs')} <= ${e.v(now)})`;
    const update = e.update({
      firing: true,
      firesAtMs: now + ctx.settings.firingLeaseMs,
      updatedAt: isoString(now),
    });
    return this.conditional(
      'UpdateItem',
      itemKey,
      (abortSignal) =>
        ctx.doc.send(
          new UpdateCommand({
            TableName: ctx.tables.podEvictions,
            Key: itemKey,
            UpdateExpression: update,
            ConditionExpression: heldAndStartable,
            ...e.params,
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      opts.signal,
    );
  }

  async complete(cluster: string, key: PodKey, token: number, opts: StoreCallOptions = {}): Promise<boolean> {
    const { ctx } = this;
    const itemKey = { cluster: checkClusterName(cluster), pod: key };
    const e = new Expression();
    const stillHeld = `${e.n('token')} = ${e.v(token)}`;
    return this.conditional(
      'DeleteItem',
      itemKey,
      (abortSignal) =>
        ctx.doc.send(
          new DeleteCommand({
            TableName: ctx.tables.podEvictions,
            Key: itemKey,
            ConditionExpression: stillHeld,
            ...e.params,
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      opts.signal,
    );
  }

  async cancel(
    cluster: string,
    key: PodKey,
    opts: StoreCallOptions & { readonly uid?: string; readonly token?: number } = {},
  ): Promise<{ readonly cancelled: boolean; readonly removed?: PodEviction }> {
    const { ctx } = this;
    const itemKey = { cluster: checkClusterName(cluster), pod: key };
    const e = new Expression();
    const conditions = [
      ...(opts.uid === undefined
        ? []
        : [`(attribute_not_exists(${e.n('uid')}) OR ${e.n('uid')} = ${e.v(opts.uid)})`]),
      // Only the entry that holds this token: one that replaced it since stays.
      ...(opts.token === undefined ? [] : [`${e.n('token')} = ${e.v(opts.token)}`]),
    ];
    const entryIsForThisPod = conditions.length === 0 ? undefined : conditions.join(' AND ');
    let output;
    try {
      output = await request(
        ctx,
        'DeleteItem',
        { table: ctx.tables.podEvictions, key: itemKey },
        (abortSignal) =>
          ctx.doc.send(
            new DeleteCommand({
              TableName: ctx.tables.podEvictions,
              Key: itemKey,
              ...(entryIsForThisPod !== undefined && { ConditionExpression: entryIsForThisPod, ...e.params }),
              ReturnValues: 'ALL_OLD',
              ReturnConsumedCapacity: 'TOTAL',
            }),
            { abortSignal },
          ),
        opts.signal,
      );
    } catch (error) {
      // The entry is another pod's (re-created under the name), or replaced since: it stays.
      if (error instanceof VersionConflictError) return { cancelled: false };
      throw error;
    }
    if (output.Attributes === undefined) return { cancelled: false };
    const removed = this.decode(cluster, output.Attributes);
    return { cancelled: removed.timerBacked, removed };
  }

  async dueEvictions(
    cluster: string,
    now: EpochMillis,
    opts: StoreCallOptions = {},
  ): Promise<readonly PodEviction[]> {
    const { ctx } = this;
    // The index is eventually consistent: an entry just scheduled may show up one drain later, and one
    // just started or cancelled may still show; startFiring's condition settles those.
    const items = await queryAll(
      ctx,
      {
        TableName: ctx.tables.podEvictions,
        IndexName: PodEvictionsByFiresAtIndex,
        KeyConditionExpression: '#c = :c AND #f <= :now',
        ExpressionAttributeNames: { '#c': 'cluster', '#f': 'firesAtMs' },
        ExpressionAttributeValues: { ':c': checkClusterName(cluster), ':now': now },
      },
      opts.signal,
    );
    return items
      .map((item) => ({ eviction: this.decode(cluster, item), dueAt: this.dueAt(item) }))
      .filter(({ eviction: e, dueAt }) => (e.firing ? dueAt <= now : e.timerBacked && e.firesAt <= now))
      .map(({ eviction }) => eviction)
      .sort(byFiresAtThenKey);
  }

  async nextDueAt(
    cluster: string,
    after: EpochMillis,
    opts: StoreCallOptions = {},
  ): Promise<EpochMillis | undefined> {
    const { ctx } = this;
    // firesAtMs is the instant an entry becomes due whatever its state; one item of the index does.
    const output = await request(
      ctx,
      'Query',
      { table: ctx.tables.podEvictions, key: { cluster } },
      (abortSignal) =>
        ctx.doc.send(
          new QueryCommand({
            TableName: ctx.tables.podEvictions,
            IndexName: PodEvictionsByFiresAtIndex,
            KeyConditionExpression: '#c = :c AND #f > :after',
            ExpressionAttributeNames: { '#c': 'cluster', '#f': 'firesAtMs' },
            ExpressionAttributeValues: { ':c': checkClusterName(cluster), ':after': after },
            ScanIndexForward: true,
            Limit: 1,
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      opts.signal,
    );
    const first = output.Items?.[0];
    return first === undefined ? undefined : this.dueAt(first);
  }

  private async allocateToken(cluster: string, signal: AbortSignal | undefined): Promise<number> {
    const { ctx } = this;
    const itemKey = { cluster, pod: TokenCounterKey };
    const e = new Expression();
    const output = await request(
      ctx,
      'UpdateItem',
      { table: ctx.tables.podEvictions, key: itemKey },
      (abortSignal) =>
        ctx.doc.send(
          new UpdateCommand({
            TableName: ctx.tables.podEvictions,
            Key: itemKey,
            UpdateExpression: `ADD ${e.n('nextToken')} ${e.v(1)}`,
            ...e.params,
            ReturnValues: 'UPDATED_NEW',
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      signal,
    );
    return parseItem(z.object({ nextToken: z.number() }), output.Attributes, {
      table: ctx.tables.podEvictions,
      key: itemKey,
    }).nextToken;
  }

  /** A conditional write whose lost condition is an answer (false), not an error. */
  private async conditional(
    operation: string,
    key: Record<string, string>,
    call: (abortSignal: AbortSignal | undefined) => Promise<{ ConsumedCapacity?: ConsumedCapacity }>,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    try {
      await request(this.ctx, operation, { table: this.ctx.tables.podEvictions, key }, call, signal);
      return true;
    } catch (error) {
      if (error instanceof VersionConflictError) return false;
      throw error;
    }
  }

  /** When the entry is due: its timer (waiting) or the end of its firing lease (running). */
  private dueAt(item: StoredItem): EpochMillis {
    const parsed = PodEvictionItemSchema.safeParse(item);
    return parsed.success && parsed.data.firesAtMs !== undefined
      ? parsed.data.firesAtMs
      : Number.POSITIVE_INFINITY;
  }

  private decode(cluster: string, item: StoredItem): PodEviction {
    return decodeEviction(
      parseItem(PodEvictionItemSchema, item, {
        table: this.ctx.tables.podEvictions,
        key: { cluster, pod: String(item.pod) },
      }),
    );
  }
}
