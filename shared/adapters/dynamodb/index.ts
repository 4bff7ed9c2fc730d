// The DynamoDB adapter: one factory for every state store, sharing one client and one
// consumed-capacity counter. Module scope holds nothing; the caller keeps the stores (clients only,
// never per-invocation state: docs/contributing.md#module-scope).
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../ports/clock.js';
import type { StateStores } from '../../ports/stores.js';
import { systemClock } from '../clock.js';
import { CapacityCounter } from './capacity.js';
import {
  DEFAULT_STORE_SETTINGS,
  documentClient,
  dynamoDbClient,
  type DocumentClientFactory,
  type DynamoContext,
  type StoreSettings,
} from './client.js';
import { DynamoDbControllerStateStore } from './controllerStateStore.js';
import { DynamoDbDecisionStore } from './decisionStore.js';
import { DynamoDbDigestPartStore } from './digestPartStore.js';
import { DynamoDbNodeStore } from './nodeStore.js';
import { DynamoDbPassLeaseStore } from './passLeaseStore.js';
import { DynamoDbPodEvictionStore } from './podEvictionStore.js';
import type { TableNames } from './tables.js';
import { DynamoDbZoneQueueStore } from './zoneQueueStore.js';

export interface DynamoDbStoresOptions {
  readonly tables: TableNames;
  /** A client to use (tests add middleware to it); else one is built from the fields below. */
  readonly client?: DynamoDBClient;
  /** e.g. `http://127.0.0.1:8000` for a local DynamoDB-compatible server. */
  readonly endpoint?: string;
  readonly region?: string;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** SDK attempts per request, throttling retries included (standard retry mode). Default 5. */
  readonly maxAttempts?: number;
  /** Wall clock for updatedAt stamps, TTLs and refresh windows. Default: the system clock. */
  readonly clock?: Clock;
  readonly settings?: Partial<StoreSettings>;
  /**
   * Builds the DocumentClient over `client` (default: DynamoDBDocumentClient.from). The simulator's
   * in-memory DynamoDB passes one that serves the DocumentClient's commands without the protocol.
   */
  readonly documentClient?: DocumentClientFactory;
}

export interface DynamoDbStores extends StateStores {
  readonly client: DynamoDBClient;
  /** Read and write units consumed so far (every request asks DynamoDB to report them). */
  readonly capacity: CapacityCounter;
}

/**
 * Every state store over one DynamoDB client.
 *
 * @example
 * const stores = createDynamoDbStores({ tables: tableNamesWithPrefix('nlc-prod'), region: 'eu-west-1' });
 * const loaded = await stores.controllerState.load('prod', { signal });
 */
export function createDynamoDbStores(options: DynamoDbStoresOptions): DynamoDbStores {
  const client =
    options.client ??
    dynamoDbClient({
      ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
      ...(options.region !== undefined && { region: options.region }),
      ...(options.credentials !== undefined && { credentials: options.credentials }),
      ...(options.maxAttempts !== undefined && { maxAttempts: options.maxAttempts }),
    });
  const ctx: DynamoContext = {
    doc: documentClient(client, options.documentClient),
    tables: options.tables,
    clock: options.clock ?? systemClock,
    capacity: new CapacityCounter(),
    queueSnapshots: new Map(),
    settings: { ...DEFAULT_STORE_SETTINGS, ...options.settings },
  };
  return {
    client,
    capacity: ctx.capacity,
    controllerState: new DynamoDbControllerStateStore(ctx),
    nodes: new DynamoDbNodeStore(ctx),
    zoneQueues: new DynamoDbZoneQueueStore(ctx),
    podEvictions: new DynamoDbPodEvictionStore(ctx),
    decisions: new DynamoDbDecisionStore(ctx),
    digestParts: new DynamoDbDigestPartStore(ctx),
    passLease: new DynamoDbPassLeaseStore(ctx),
  };
}

export { CapacityCounter } from './capacity.js';
export type { CapacitySnapshot, TableCapacity } from './capacity.js';
export { DEFAULT_STORE_SETTINGS, retryOnVersionConflict } from './client.js';
export type { DocumentClientFactory, StoreSettings } from './client.js';
export {
  cloudFormationResources,
  tableDefinitions,
  tableNamesWithPrefix,
  NodesByChangeIndex,
  PodEvictionsByFiresAtIndex,
} from './tables.js';
export type { CloudFormationOptions, CloudFormationTable, TableDefinition, TableNames } from './tables.js';
