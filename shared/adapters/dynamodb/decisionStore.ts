// The Decisions audit trail: one row per decision, partitioned by `cluster#subject`, sorted by
// `<ISO time>#<source>#<index>`, so `nlc explain NODE` is one Query, newest first. Rows expire through
// the table's TTL (`expiresAt`, default 14 days after they were written).
//
// Append-only: each row is one PutItem conditional on its key not existing, and the functions' roles
// may call nothing else on the table (serverless.yml; no UpdateItem, DeleteItem or BatchWriteItem,
// which takes no condition). Keys are deterministic, so a retried invocation appends the same rows
// again: a row that already holds the same decision is success (appends are idempotent). A different
// decision under an existing key (a retry that decided otherwise) is kept too, under its key plus a
// digest of its content, instead of overwriting the first.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { VersionConflictError, type StoreItemRef } from '../../errors.js';
import type {
  DecisionQuery,
  DecisionRecord,
  DecisionStore,
  StoreCallOptions,
  StoredDecision,
} from '../../ports/stores.js';
import { forEachLimit, request, type DynamoContext } from './client.js';
import { checkClusterName, encodeInstant, InstantSchema, isoString } from './codec.js';
import { expiresAt, parseItem } from './items.js';

/**
 * Conditional puts in flight at once. A pass appends a handful of rows per decision; a large pass
 * (hundreds of rows) costs ceil(n / 8) round trips, and the same write units as a batch would.
 */
export const DECISION_APPEND_CONCURRENCY = 8;
/** The attribute appends hold absent: the partition key, present in every stored row. */
const KEY_ATTRIBUTE = 'clusterNode';

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
    await forEachLimit(items, DECISION_APPEND_CONCURRENCY, (item) => this.appendOne(item, opts.signal));
  }

  async query(
    cluster: string,
    node: string,
    query: DecisionQuery = {},
    opts: StoreCallOptions = {},
  ): Promise<readonly StoredDecision[]> {
    const { ctx } = this;
    const limit = query.limit ?? 50;
    const since = query.since === undefined ? undefined : isoString(query.since);
    const filter = query.massOnly === true;
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
              // Sort keys start with the ISO instant, so they sort as the instants do.
              KeyConditionExpression: since === undefined ? '#pk = :pk' : '#pk = :pk AND #sk >= :since',
              ...(filter && { FilterExpression: 'attribute_exists(#inputs.#nodesGzip)' }),
              ExpressionAttributeNames: {
                '#pk': 'clusterNode',
                ...(since !== undefined && { '#sk': 'timeSeq' }),
                ...(filter && { '#inputs': 'inputs', '#nodesGzip': 'nodesGzip' }),
              },
              ExpressionAttributeValues: {
                ':pk': pk,
                ...(since !== undefined && { ':since': since }),
              },
              ScanIndexForward: query.newestFirst === false,
              // Limit counts the rows read before a filter: with one, pages of 1 MB until enough match.
              ...(!filter && { Limit: limit - found.length }),
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
    return found.slice(0, limit);
  }

  /**
   * Appends one row. An existing row under its key is the same decision appended again (success), or
   * a different one: then this one is appended under the key plus a digest of its content.
   */
  private async appendOne(item: DecisionItem, signal: AbortSignal | undefined): Promise<void> {
    const existing = await this.putIfAbsent(item, signal);
    if (existing === undefined || sameDecision(existing, item)) return;
    // A row under the digest key can only hold this very decision: a conflict there is a re-append.
    await this.putIfAbsent({ ...item, timeSeq: `${item.timeSeq}#${contentDigest(item)}` }, signal);
  }

  /** Puts `item` unless its key exists; returns the existing row then (undefined once written). */
  private async putIfAbsent(
    item: DecisionItem,
    signal: AbortSignal | undefined,
  ): Promise<Record<string, unknown> | undefined> {
    const { ctx } = this;
    const table = ctx.tables.decisions;
    const ref: StoreItemRef = { table, key: { clusterNode: item.clusterNode, timeSeq: item.timeSeq } };
    try {
      await request(
        ctx,
        'PutItem',
        ref,
        (abortSignal) =>
          ctx.doc.send(
            new PutCommand({
              TableName: table,
              Item: item,
              ConditionExpression: 'attribute_not_exists(#key)',
              ExpressionAttributeNames: { '#key': KEY_ATTRIBUTE },
              // DynamoDB returns the existing row with the failure: no read, and no GetItem permission.
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              ReturnConsumedCapacity: 'TOTAL',
            }),
            { abortSignal },
          ),
        signal,
      );
      return undefined;
    } catch (error) {
      if (!(error instanceof VersionConflictError)) throw error;
      return returnedItem(error.cause) ?? (await this.read(ref, signal));
    }
  }

  /**
   * The row under `ref`, for DynamoDB emulators that return no item with a failed condition
   * (dynalite). DynamoDB itself always does, so this read never runs against AWS, where the functions'
   * roles have no GetItem on the table.
   */
  private async read(ref: StoreItemRef, signal: AbortSignal | undefined): Promise<Record<string, unknown>> {
    const { ctx } = this;
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
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      signal,
    );
    // Rows are never deleted by the functions; TTL may have removed it since: nothing to compare.
    return output.Item ?? {};
  }
}

type DecisionItem = Readonly<Record<string, unknown>> & {
  readonly clusterNode: string;
  readonly timeSeq: string;
};

/** The same decision: every attribute equal except `expiresAt`, which a later append computes afresh. */
function sameDecision(stored: Readonly<Record<string, unknown>>, item: DecisionItem): boolean {
  return canonicalJson(withoutExpiry(stored)) === canonicalJson(withoutExpiry(item));
}

function withoutExpiry(row: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { expiresAt: _expiresAt, ...rest } = row;
  return rest;
}

/** A short digest of a decision's content (without its expiry): the suffix of a second key. */
function contentDigest(item: DecisionItem): string {
  return createHash('sha256')
    .update(canonicalJson(withoutExpiry(item)))
    .digest('hex')
    .slice(0, 12);
}

/** JSON with object keys sorted at every depth. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The row a ConditionalCheckFailedException carries (ReturnValuesOnConditionCheckFailure ALL_OLD), as
 * plain values. The DocumentClient converts outputs, not errors, so the item is still in DynamoDB's
 * attribute-value form; decision rows hold only S, N, BOOL, NULL, M and L values.
 */
function returnedItem(cause: unknown): Record<string, unknown> | undefined {
  if (typeof cause !== 'object' || cause === null) return undefined;
  const item: unknown = Reflect.get(cause, 'Item');
  if (typeof item !== 'object' || item === null) return undefined;
  return Object.fromEntries(
    Object.entries(item as Record<string, unknown>).map(([k, v]) => [k, fromAttributeValue(v)]),
  );
}

function fromAttributeValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const av = value as { S?: string; N?: string; BOOL?: boolean; NULL?: boolean; M?: unknown; L?: unknown };
  if (av.S !== undefined) return av.S;
  if (av.N !== undefined) return Number(av.N);
  if (av.BOOL !== undefined) return av.BOOL;
  if (av.NULL !== undefined) return null;
  if (Array.isArray(av.L)) return av.L.map(fromAttributeValue);
  if (typeof av.M === 'object' && av.M !== null) {
    return Object.fromEntries(
      Object.entries(av.M as Record<string, unknown>).map(([k, v]) => [k, fromAttributeValue(v)]),
    );
  }
  // A type decision rows never hold (sets, binary): kept as is, so it compares unequal.
  return value;
}
