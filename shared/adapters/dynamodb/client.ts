// The boundary to DynamoDB shared by every store: one DocumentClient, the consumed-capacity counter
// (capacity.ts),
// SDK errors mapped to ours (ConditionalCheckFailedException → VersionConflictError, anything else →
// StoreError naming table and key), paginated queries, bounded parallel writes and backoff.
// Throttling is retried by the SDK's standard retry strategy (maxAttempts); what still fails after it
// surfaces as StoreError with reason 'throttled'.
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
  type TranslateConfig,
} from '@aws-sdk/lib-dynamodb';
import { NlcError, StoreError, VersionConflictError, type StoreItemRef } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { CapacityCounter } from './capacity.js';
import type { ZoneQueueSnapshot } from './queueState.js';
import type { TableNames } from './tables.js';

/** Tunables of the DynamoDB stores; every one has a default (DEFAULT_STORE_SETTINGS). */
export interface StoreSettings {
  /** Decisions expire this long after they were written (seconds). */
  readonly decisionTtlSeconds: number;
  /**
   * How long tombstones (deleted nodes, removed queue entries) are kept (seconds). Longer than
   * EventBridge's 24 h of delivery retries, so a late stale event cannot resurrect a deleted node.
   */
  readonly tombstoneTtlSeconds: number;
  /** Limit per Query page; undefined = DynamoDB's 1 MB pages. */
  readonly queryPageLimit?: number;
  /** Conditional writes in flight at once during a commit. */
  readonly writeConcurrency: number;
  /** refresh reads node changes since the last read minus this much (GSI propagation, writer clocks). */
  readonly refreshOverlapMs: number;
  /** refresh does a full load when the last one is older than this. */
  readonly fullReloadEveryMs: number;
  /**
   * A pod eviction marked firing (startFiring, or an immediate deletion) becomes due again after this
   * long without `complete`: the function running it died mid-way, and another run reclaims it.
   * Longer than any function's timeout, so a live run is never doubled.
   */
  readonly firingLeaseMs: number;
  /** Attempts of a read-modify-write lost to concurrent writers before VersionConflictError. */
  readonly conflictAttempts: number;
  /** Attempts of a BatchWrite/BatchGet while items stay unprocessed. */
  readonly batchAttempts: number;
  /** Exponential backoff with full jitter: base and cap (ms). */
  readonly backoffBaseMs: number;
  readonly backoffCapMs: number;
  /** Queue entry changes per conditional zone commit; more are split into several commits. */
  readonly maxQueueOpsPerCommit: number;
  /**
   * Health rows a monitor commit writes for health-only changes (a node's Ready condition or its
   * transition time); more wait for the next commits, oldest first (commitPlan.ts). Every row of a
   * cluster shares one partition (1,000 WCU/s), and a zone coming back changes every node's row in one
   * pass: 33,000 rows of about 3 WRU each would be throttled, and the retried pass would start over.
   */
  readonly healthWritesPerCommit: number;
  /**
   * Queue entry rows a monitor commit writes per zone; more wait for the next commits, the queue's head
   * first (zoneQueues.ts). A zone's entries share one partition, and a zone coming back forgets every
   * node of its queue in one pass: 33,000 rows in one pass would be throttled.
   */
  readonly queueEntriesPerCommit: number;
}

export const DEFAULT_STORE_SETTINGS: StoreSettings = Object.freeze({
  decisionTtlSeconds: 14 * 24 * 3600,
  tombstoneTtlSeconds: 2 * 24 * 3600,
  writeConcurrency: 16,
  refreshOverlapMs: 60_000,
  fullReloadEveryMs: 3_600_000,
  firingLeaseMs: 5 * 60_000,
  conflictAttempts: 8,
  batchAttempts: 8,
  backoffBaseMs: 25,
  backoffCapMs: 2_000,
  maxQueueOpsPerCommit: 400,
  // About 600 WRU a commit, 120 WCU/s over a 5 s period: the partition's 1,000 WCU/s stays for
  // node-taints' node copies (up to 750 WCU/s at the relay's 250 events/s) and bursts.
  healthWritesPerCommit: 200,
  // About 800 WRU in the zone's EvictionQueue partition and 250 in the Zones one (two claims of 400
  // and their clears), 160 and 50 WCU/s over a 5 s period. Markings add at most a pass's API budget.
  queueEntriesPerCommit: 800,
});

// ---------------------------------------------------------------------------------------------------
// The context every store works through

export interface DynamoContext {
  readonly doc: DynamoDBDocumentClient;
  readonly tables: TableNames;
  readonly clock: Clock;
  readonly capacity: CapacityCounter;
  readonly settings: StoreSettings;
  /**
   * The last zone queue snapshot this instance read or wrote, by `cluster#zone` (zoneQueues.ts): a
   * queue version's entries never change, so a reader that finds the zone row still at that version
   * needs no Query of its entry rows. Per instance (a warm Lambda keeps it), never shared state.
   */
  readonly queueSnapshots: Map<string, ZoneQueueSnapshot>;
}

/**
 * How the stores' values are marshalled: undefined values (optional fields) are dropped when writing.
 * A new object each time: lib-dynamodb writes its defaults into the one it is given.
 */
export function documentTranslateConfig(): TranslateConfig {
  return { marshallOptions: { removeUndefinedValues: true } };
}

/** Builds the DocumentClient the stores send through, from a client and documentTranslateConfig(). */
export type DocumentClientFactory = (
  client: DynamoDBClient,
  config: TranslateConfig,
) => DynamoDBDocumentClient;

/** A DocumentClient over `client` with the stores' marshalling (documentTranslateConfig). */
export function documentClient(
  client: DynamoDBClient,
  factory: DocumentClientFactory = (c, config) => DynamoDBDocumentClient.from(c, config),
): DynamoDBDocumentClient {
  return factory(client, documentTranslateConfig());
}

/** A DynamoDBClient with the standard retry strategy (throttling and transient errors retried with backoff). */
export function dynamoDbClient(options: {
  readonly endpoint?: string;
  readonly region?: string;
  readonly maxAttempts?: number;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}): DynamoDBClient {
  return new DynamoDBClient({
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    ...(options.region !== undefined && { region: options.region }),
    ...(options.credentials !== undefined && { credentials: { ...options.credentials } }),
    retryMode: 'standard',
    maxAttempts: options.maxAttempts ?? 5,
  });
}

/** The shape of every DynamoDB output we read the consumed capacity from. */
interface WithCapacity {
  readonly ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[];
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const THROTTLING = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
]);

function isThrottling(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (THROTTLING.has(error.name)) return true;
  const retryable: unknown = Reflect.get(error, '$retryable');
  return typeof retryable === 'object' && retryable !== null && Reflect.get(retryable, 'throttling') === true;
}

/** Maps an error thrown by the SDK to ours. */
export function mapStoreError(error: unknown, ref: StoreItemRef, signal: AbortSignal | undefined): NlcError {
  if (error instanceof NlcError) return error;
  if (signal?.aborted === true || errorName(error) === 'AbortError') {
    return new StoreError(ref, 'aborted', 'aborted by the caller', { cause: error });
  }
  if (errorName(error) === 'ConditionalCheckFailedException')
    return new VersionConflictError(ref, { cause: error });
  if (isThrottling(error)) {
    return new StoreError(ref, 'throttled', `${errorName(error)}: ${errorMessage(error)}`, { cause: error });
  }
  return new StoreError(ref, 'failed', `${errorName(error)}: ${errorMessage(error)}`, { cause: error });
}

/**
 * Sends one request: refuses to start when `signal` is aborted, records the consumed capacity, and
 * maps errors (mapStoreError). `call` receives the signal to pass as the SDK's abortSignal.
 */
export async function request<O extends WithCapacity>(
  ctx: DynamoContext,
  operation: string,
  ref: StoreItemRef,
  call: (abortSignal: AbortSignal | undefined) => Promise<O>,
  signal: AbortSignal | undefined,
): Promise<O> {
  if (signal?.aborted === true)
    throw new StoreError(ref, 'aborted', 'aborted by the caller', { cause: signal.reason });
  try {
    const output = await call(signal);
    ctx.capacity.record(operation, ref.table, output.ConsumedCapacity);
    return output;
  } catch (error) {
    ctx.capacity.record(operation, ref.table, undefined);
    const mapped = mapStoreError(error, ref, signal);
    if (mapped instanceof VersionConflictError) ctx.capacity.recordConditionalCheckFailure();
    throw mapped;
  }
}

export type StoredItem = Readonly<Record<string, unknown>>;

/** Every item of a Query, following LastEvaluatedKey page after page. */
export async function queryAll(
  ctx: DynamoContext,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'ReturnConsumedCapacity'>,
  signal: AbortSignal | undefined,
): Promise<StoredItem[]> {
  const table = input.TableName ?? '';
  const items: StoredItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await request(
      ctx,
      'Query',
      { table },
      (abortSignal) =>
        ctx.doc.send(
          new QueryCommand({
            ...input,
            ...(ctx.settings.queryPageLimit !== undefined && { Limit: ctx.settings.queryPageLimit }),
            ...(startKey !== undefined && { ExclusiveStartKey: startKey }),
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      signal,
    );
    if (input.ConsistentRead !== true) ctx.capacity.recordEventuallyConsistentRead();
    for (const item of page.Items ?? []) items.push(item);
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

// ---------------------------------------------------------------------------------------------------
// Expressions

/**
 * Builds expressions with every attribute name aliased (many of ours, `cluster` and `zone` among
 * them, are DynamoDB reserved words) and every value a placeholder.
 */
export class Expression {
  private readonly names = new Map<string, string>();
  private readonly values = new Map<unknown, string>();
  private readonly valueList: [string, unknown][] = [];

  /** The alias of an attribute name. */
  n(attribute: string): string {
    let alias = this.names.get(attribute);
    if (alias === undefined) {
      alias = `#a${this.names.size}`;
      this.names.set(attribute, alias);
    }
    return alias;
  }

  /** A placeholder for a value (primitives are shared between uses). */
  v(value: unknown): string {
    const shareable = value === null || typeof value !== 'object';
    const known = shareable ? this.values.get(value) : undefined;
    if (known !== undefined) return known;
    const placeholder = `:v${this.valueList.length}`;
    this.valueList.push([placeholder, value]);
    if (shareable) this.values.set(value, placeholder);
    return placeholder;
  }

  /**
   * An UpdateExpression that SETs the defined entries of `set` and REMOVEs the undefined ones,
   * plus `extraSet` clauses written with n()/v().
   */
  update(set: Readonly<Record<string, unknown>>, extraSet: readonly string[] = []): string {
    const sets = [...extraSet];
    const removes: string[] = [];
    for (const [attribute, value] of Object.entries(set)) {
      if (value === undefined) removes.push(this.n(attribute));
      else sets.push(`${this.n(attribute)} = ${this.v(value)}`);
    }
    return [
      sets.length > 0 ? `SET ${sets.join(', ')}` : '',
      removes.length > 0 ? `REMOVE ${removes.join(', ')}` : '',
    ]
      .filter((part) => part !== '')
      .join(' ');
  }

  get attributeNames(): Record<string, string> | undefined {
    return this.names.size === 0
      ? undefined
      : Object.fromEntries([...this.names].map(([a, alias]) => [alias, a]));
  }

  get attributeValues(): Record<string, unknown> | undefined {
    return this.valueList.length === 0 ? undefined : Object.fromEntries(this.valueList);
  }

  /** ExpressionAttributeNames/Values, ready to spread into a command input. */
  get params(): {
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, unknown>;
  } {
    const names = this.attributeNames;
    const values = this.attributeValues;
    return {
      ...(names !== undefined && { ExpressionAttributeNames: names }),
      ...(values !== undefined && { ExpressionAttributeValues: values }),
    };
  }
}

// ---------------------------------------------------------------------------------------------------
// Concurrency and retries

/**
 * Runs `fn` over `items` with at most `limit` in flight. After a failure no new item starts; the
 * ones in flight finish, then the first error is thrown.
 */
export async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next++] as T;
      try {
        await fn(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure !== undefined) throw failure.error;
}

/** Exponential backoff with full jitter (attempt 0 is the first retry). */
export function backoffMs(
  settings: Pick<StoreSettings, 'backoffBaseMs' | 'backoffCapMs'>,
  attempt: number,
): number {
  return Math.random() * Math.min(settings.backoffCapMs, settings.backoffBaseMs * 2 ** attempt);
}

/** Waits, unless the signal aborts first (then throws StoreError 'aborted' naming `ref`). */
export async function pause(ms: number, ref: StoreItemRef, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, signal === undefined ? {} : { signal });
  } catch (error) {
    throw new StoreError(ref, 'aborted', 'aborted by the caller', { cause: error });
  }
}

export interface RetryOnConflictOptions {
  readonly attempts?: number;
  readonly signal?: AbortSignal;
  readonly backoffBaseMs?: number;
  readonly backoffCapMs?: number;
}

/**
 * Runs `attempt` (which must read afresh, decide, and write conditionally) until it does not lose a
 * race, with jittered backoff in between; the last VersionConflictError is thrown after `attempts`.
 *
 * @example
 * await retryOnVersionConflict(async () => {
 *   const loaded = await stores.controllerState.load(cluster, { signal });
 *   await stores.controllerState.commit(loaded, runPass(loaded), { signal });
 * }, { signal });
 */
export async function retryOnVersionConflict<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  options: RetryOnConflictOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? DEFAULT_STORE_SETTINGS.conflictAttempts;
  const backoff = {
    backoffBaseMs: options.backoffBaseMs ?? DEFAULT_STORE_SETTINGS.backoffBaseMs,
    backoffCapMs: options.backoffCapMs ?? DEFAULT_STORE_SETTINGS.backoffCapMs,
  };
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof VersionConflictError) || n + 1 >= attempts) throw error;
      await pause(backoffMs(backoff, n), { table: error.table }, options.signal);
    }
  }
}
