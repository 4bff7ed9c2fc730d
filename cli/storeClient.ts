// The DynamoDB client and the state stores over it, for cli/stores.ts withStores. A module of its own so
// the AWS SDK is loaded only by the commands that read the tables, when they read them (a dynamic
// import of this module; a package imported dynamically straight from a bundle would lose its named
// exports, see scripts/build-cli.ts).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  createDynamoDbStores,
  type DynamoDbStores,
  type TableNames,
} from '../shared/adapters/dynamodb/index.js';

// A CLI waits for an answer, not for five retries against a server that is down.
const MAX_ATTEMPTS = 2;
const CONNECTION_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 20_000;

export interface StoreClientOptions {
  readonly tables: TableNames;
  readonly endpoint?: string;
  readonly region?: string;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/** The stores over a new client; `stores.client.destroy()` releases it. */
export function openStores(options: StoreClientOptions): DynamoDbStores {
  const client = new DynamoDBClient({
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    ...(options.region !== undefined && { region: options.region }),
    ...(options.credentials !== undefined && { credentials: options.credentials }),
    retryMode: 'standard',
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
  });
  return createDynamoDbStores({ tables: options.tables, client });
}
