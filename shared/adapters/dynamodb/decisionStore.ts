// The Decisions audit trail: one row per decision, partitioned by `cluster#subject`, sorted by
// `<ISO time>#<source>#<index>`, so `nlc explain NODE` is one Query, newest first. Rows expire through
// the table's TTL (`expiresAt`, default 14 days after they were written). Keys are deterministic, so a
// retried invocation rewrites the same rows instead of duplicating them.
import { z } from 'zod';
import { BatchWriteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { StoreError } from '../../errors.js';
import type {
  DecisionQuery,
  DecisionRecord,
  DecisionStore,
  StoreCallOptions,
  StoredDecision,
} from '../../ports/stores.js';
import { backoffMs, pause, request, type DynamoContext } from './client.js';
import { checkClusterName, encodeInstant, InstantSchema, isoString } from './codec.js';
import { expiresAt, parseItem } from './items.js';

/** BatchWriteItem takes at most 25 requests. */
const BATCH_SIZE = 25;

const DecisionItemSchema = z.object({
  cluster: z.string(),
  node: z.string(),
  timeSeq: z.string(),
  at: InstantSchema,
  source: z.string(),
  what: z.string(),
  why: z.string(),
  inputs: z.record(z.string(), z.json()).optional(),
  result: z.string().optional(),
  dryRun: z.boolean().optional(),
  expiresAt: z.number(),
});

export function decisionPartitionKey(cluster: string, subject: string): string {
  return `${checkClusterName(cluster)}#${subject}`;
}

export class DynamoDbDecisionStore implements DecisionStore {
  constructor(private readonly ctx: DynamoContext) {}

  async append(
    cluster: string,
    records: readonly DecisionRecord[],
    opts: StoreCallOptions = {},
  ): Promise<void> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const ttl = expiresAt(now, ctx.settings.decisionTtlSeconds);
    const items = records.map((r, index) => ({
      clusterNode: decisionPartitionKey(cluster, r.node),
      timeSeq: `${isoString(r.at)}#${r.source}#${String(r.seq ?? index).padStart(6, '0')}`,
      cluster,
      node: r.node,
      at: encodeInstant(r.at),
      source: r.source,
      what: r.what,
      why: r.why,
      ...(r.inputs !== undefined && { inputs: r.inputs }),
      ...(r.result !== undefined && { result: r.result }),
      ...(r.dryRun !== undefined && { dryRun: r.dryRun }),
      expiresAt: ttl,
    }));
    for (let i = 0; i < items.length; i += BATCH_SIZE) {
      await this.writeBatch(items.slice(i, i + BATCH_SIZE), opts.signal);
    }
  }

  async query(
    cluster: string,
    node: string,
    query: DecisionQuery = {},
    opts: StoreCallOptions = {},
  ): Promise<readonly StoredDecision[]> {
    const { ctx } = this;
    const limit = query.limit ?? 50;
    const pk = decisionPartitionKey(cluster, node);
    const ref = { table: ctx.tables.decisions, key: { clusterNode: pk } };
    const found: StoredDecision[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await request(
        ctx,
        'Query',
        ref,
        (abortSignal) =>
          ctx.doc.send(
            new QueryCommand({
              TableName: ctx.tables.decisions,
              KeyConditionExpression: '#pk = :pk',
              ExpressionAttributeNames: { '#pk': 'clusterNode' },
              ExpressionAttributeValues: { ':pk': pk },
              ScanIndexForward: query.newestFirst === false,
              Limit: limit - found.length,
              ...(startKey !== undefined && { ExclusiveStartKey: startKey }),
              ReturnConsumedCapacity: 'TOTAL',
            }),
            { abortSignal },
          ),
        opts.signal,
      );
      for (const raw of page.Items ?? []) {
        const item = parseItem(DecisionItemSchema, raw, {
          table: ctx.tables.decisions,
          key: { clusterNode: pk, timeSeq: String(raw.timeSeq) },
        });
        found.push({
          cluster: item.cluster,
          node: item.node,
          id: item.timeSeq,
          at: item.at,
          source: item.source,
          what: item.what,
          why: item.why,
          ...(item.inputs !== undefined && { inputs: item.inputs }),
          ...(item.result !== undefined && { result: item.result }),
          ...(item.dryRun !== undefined && { dryRun: item.dryRun }),
          expiresAt: item.expiresAt,
        });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined && found.length < limit);
    return found;
  }

  /** One BatchWriteItem, re-sending UnprocessedItems with backoff until none are left. */
  private async writeBatch(
    items: readonly Record<string, unknown>[],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const { ctx } = this;
    const table = ctx.tables.decisions;
    const ref = { table };
    let pending: NonNullable<ConstructorParameters<typeof BatchWriteCommand>[0]['RequestItems']>[string] =
      items.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= ctx.settings.batchAttempts) {
        throw new StoreError(
          ref,
          'throttled',
          `${pending.length} decisions still unprocessed after ${attempt} BatchWriteItem attempts`,
        );
      }
      if (attempt > 0) await pause(backoffMs(ctx.settings, attempt - 1), ref, signal);
      const requestItems = pending;
      const output = await request(
        ctx,
        'BatchWriteItem',
        ref,
        (abortSignal) =>
          ctx.doc.send(
            new BatchWriteCommand({
              RequestItems: { [table]: requestItems },
              ReturnConsumedCapacity: 'TOTAL',
            }),
            { abortSignal },
          ),
        signal,
      );
      pending = output.UnprocessedItems?.[table] ?? [];
    }
  }
}
