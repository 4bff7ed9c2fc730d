// The local stack's DynamoDB-compatible server: dynalite on loopback, in memory or persisted in a LevelDB
// directory, with the five state tables created from tableDefinitions (shared/adapters/dynamodb/tables.ts)
// — the same definitions serverless.yml renders into CloudFormation. Tables that already exist (a
// persisted data directory) are kept when their keys and indexes still match the definitions; otherwise
// the start fails with what to do, rather than run the functions against a stale schema.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import {
  tableDefinitions,
  type TableDefinition,
  type TableNames,
} from '../../shared/adapters/dynamodb/tables.js';
import { LocalStackStartError } from '../../shared/errors.js';
import { closeLevelIteratorsOnReturn } from './levelIterators.js';
import { explainListenError, LocalHost } from './ports.js';

// dynalite ships no types; this is the part of its API used here.
type Dynalite = (options: {
  readonly path?: string;
  readonly createTableMs?: number;
  readonly deleteTableMs?: number;
  readonly updateTableMs?: number;
}) => Server;
const dynalite = createRequire(import.meta.url)('dynalite') as Dynalite;

export interface LocalDynamoDb {
  /** http://127.0.0.1:PORT */
  readonly endpoint: string;
  readonly port: number;
  /** Tables created by this start (the rest existed). */
  readonly created: readonly string[];
  close(): Promise<void>;
}

export interface StartDynamoDbOptions {
  readonly port: number;
  /** The tables of each stage the stack runs (one; two beside a managed controller). */
  readonly tables: readonly TableNames[];
  /** LevelDB directory; in memory when absent. */
  readonly path?: string;
}

/** Key schema and index names: what must match for the adapter to read an existing table. */
function shapeOf(table: {
  readonly KeySchema?: readonly { AttributeName?: string; KeyType?: string }[];
  readonly GlobalSecondaryIndexes?: readonly {
    IndexName?: string;
    KeySchema?: readonly { AttributeName?: string; KeyType?: string }[];
  }[];
}): string {
  const keys = (schema: readonly { AttributeName?: string; KeyType?: string }[] | undefined): string =>
    (schema ?? []).map((k) => `${k.AttributeName ?? ''}:${k.KeyType ?? ''}`).join(',');
  const indexes = (table.GlobalSecondaryIndexes ?? [])
    .map((index) => `${index.IndexName ?? ''}(${keys(index.KeySchema)})`)
    .sort();
  return `${keys(table.KeySchema)} ${indexes.join(' ')}`;
}

async function describe(client: DynamoDBClient, name: string): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}

async function ensureTable(client: DynamoDBClient, definition: TableDefinition): Promise<boolean> {
  const name = definition.create.TableName;
  const existing = await describe(client, name);
  if (existing !== undefined) {
    if (shapeOf(existing) !== shapeOf(definition.create)) {
      throw new LocalStackStartError(
        'the DynamoDB-compatible server',
        `table ${name} in the data directory has keys or indexes that differ from shared/adapters/dynamodb/tables.ts; ` +
          'delete the data directory (or its dynamodb/ folder), or start with --ephemeral',
      );
    }
    return false;
  }
  await client.send(new CreateTableCommand(definition.create));
  // dynalite makes a table ACTIVE right after creation with createTableMs 0; poll, no fixed wait.
  for (let i = 0; i < 1000; i++) {
    if ((await describe(client, name))?.TableStatus === 'ACTIVE') return true;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new LocalStackStartError('the DynamoDB-compatible server', `table ${name} never became ACTIVE`);
}

/**
 * Starts dynalite on 127.0.0.1 and makes sure the tables exist.
 *
 * @example
 * const db = await startDynamoDb({ port: 0, tables: [tableNamesWithPrefix('nlc-dev')] });
 * // … NLC_DYNAMODB_ENDPOINT=db.endpoint …
 * await db.close();
 */
export async function startDynamoDb(options: StartDynamoDbOptions): Promise<LocalDynamoDb> {
  // Else every Query and Scan leaves its iterator open, and what it read in memory (levelIterators.ts).
  closeLevelIteratorsOnReturn();
  const server = dynalite({
    ...(options.path !== undefined && { path: options.path }),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => {
      const explained = explainListenError(error, 'dynamodb', options.port);
      reject(explained instanceof Error ? explained : error);
    });
    server.listen(options.port, LocalHost, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://${LocalHost}:${port}`;
  const close = async (): Promise<void> => {
    // Keep-alive connections would hold dynalite's graceful close for its 30 s timeout.
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => {
      // dynalite's close calls back with null on success.
      server.close((error?: Error | null) => {
        if (error) reject(error);
        else resolve();
      });
    });
  };
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const created: string[] = [];
  try {
    for (const names of options.tables) {
      for (const definition of Object.values(tableDefinitions(names))) {
        if (await ensureTable(client, definition)) created.push(definition.create.TableName);
      }
    }
  } catch (error) {
    client.destroy();
    await close();
    if (error instanceof LocalStackStartError) throw error;
    throw new LocalStackStartError(
      'the DynamoDB-compatible server',
      `could not create the tables: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  client.destroy();
  return { endpoint, port, created, close };
}
