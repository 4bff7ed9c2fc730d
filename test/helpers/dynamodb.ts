// A real DynamoDB-compatible server (dynalite, in memory) on 127.0.0.1, port 0, with the state tables
// created from tableDefinitions, and a client whose requests are counted by a middleware (no mocks).
// With NLC_TEST_DYNAMODB=memory (the `dynamodb-in-memory` test project) the same fixture is the
// simulator's in-memory DynamoDB instead, so the adapter's tests prove that backend too.
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  createDynamoDbStores,
  type DocumentClientFactory,
  type DynamoDbStores,
} from '../../shared/adapters/dynamodb/index.js';
import type { StoreSettings } from '../../shared/adapters/dynamodb/client.js';
import {
  tableDefinitions,
  tableNamesWithPrefix,
  type TableNames,
} from '../../shared/adapters/dynamodb/tables.js';
import type { Clock } from '../../shared/ports/clock.js';
import { closeLevelIteratorsOnReturn } from '../../local/stack/levelIterators.js';
import {
  MemoryDynamoDb,
  memoryDocumentClient,
  memoryDynamoDbClient,
} from '../../local/memoryDynamoDb/client.js';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';

// dynalite ships no types; this is the part of its API we use.
type Dynalite = (options: {
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
}) => Server;
const dynalite = createRequire(import.meta.url)('dynalite') as Dynalite;

/** Requests per operation name as the client sent them (SDK retries included). */
export class CommandCounter {
  readonly counts = new Map<string, number>();

  get(operation: string): number {
    return this.counts.get(operation) ?? 0;
  }

  total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }

  writes(): number {
    return ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem'].reduce((n, op) => n + this.get(op), 0);
  }

  reset(): void {
    this.counts.clear();
  }
}

export interface DynamoFixture {
  readonly endpoint: string;
  readonly tables: TableNames;
  /** A client with the counting middleware; build stores over it with `stores()`. */
  readonly client: DynamoDBClient;
  readonly commands: CommandCounter;
  stores(options?: {
    clock?: Clock;
    settings?: Partial<StoreSettings>;
    client?: DynamoDBClient;
  }): DynamoDbStores;
  /** A second client on the same server (another function instance), counted in the same counter. */
  newClient(options?: { maxAttempts?: number }): DynamoDBClient;
  stop(): Promise<void>;
}

function countingClient(endpoint: string, commands: CommandCounter, maxAttempts = 3): DynamoDBClient {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts,
  });
  // Below the retry middleware (finalizeRequest), so every attempt on the wire is counted.
  countCommands(client, commands);
  return client;
}

function countCommands(client: DynamoDBClient, commands: CommandCounter): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = (context.commandName ?? 'Unknown').replace(/Command$/, '');
      commands.counts.set(name, (commands.counts.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: 'deserialize', name: 'countCommands' },
  );
}

/** Stores over `options.client` (else `client`), with the test's clock and settings. */
function storesOver(
  tables: TableNames,
  client: DynamoDBClient,
  options: Parameters<DynamoFixture['stores']>[0] = {},
  documentClient?: DocumentClientFactory,
): DynamoDbStores {
  return createDynamoDbStores({
    tables,
    client: options.client ?? client,
    ...(documentClient !== undefined && { documentClient }),
    ...(options.clock !== undefined && { clock: options.clock }),
    ...(options.settings !== undefined && { settings: options.settings }),
  });
}

/** DynamoDB's operation name of each DocumentClient command the stores send. */
const DOCUMENT_OPERATIONS = new Map<unknown, string>([
  [GetCommand, 'GetItem'],
  [PutCommand, 'PutItem'],
  [UpdateCommand, 'UpdateItem'],
  [DeleteCommand, 'DeleteItem'],
  [QueryCommand, 'Query'],
  [BatchGetCommand, 'BatchGetItem'],
  [BatchWriteCommand, 'BatchWriteItem'],
]);

/**
 * The in-memory DynamoDB with the five tables. The stores use its direct DocumentClient (as
 * `nlc simulate` does), whose requests are counted as they are sent; low-level commands on `client`
 * take the JSON path and are counted there.
 */
async function startMemory(prefix: string): Promise<DynamoFixture> {
  const db = new MemoryDynamoDb();
  const commands = new CommandCounter();
  const newClient = (): DynamoDBClient => {
    const client = memoryDynamoDbClient(db);
    countCommands(client, commands);
    return client;
  };
  const countingDocumentClient: DocumentClientFactory = (client, config) => {
    const doc = memoryDocumentClient(client, config);
    const send = doc.send.bind(doc) as (command: object, options?: object) => Promise<unknown>;
    Object.defineProperty(doc, 'send', {
      value: (command: object, options?: object) => {
        const name = DOCUMENT_OPERATIONS.get(command.constructor) ?? command.constructor.name;
        commands.counts.set(name, (commands.counts.get(name) ?? 0) + 1);
        return send(command, options);
      },
    });
    return doc;
  };
  const client = newClient();
  const tables = tableNamesWithPrefix(prefix);
  for (const table of Object.values(tableDefinitions(tables))) {
    await client.send(new CreateTableCommand(table.create));
  }
  commands.reset();
  return {
    endpoint: 'memory:',
    tables,
    client,
    commands,
    // A client of the test's own may carry fault-injecting middleware: it takes the SDK's whole path.
    stores: (options = {}) =>
      storesOver(tables, client, options, options.client === undefined ? countingDocumentClient : undefined),
    newClient,
    stop: () => Promise.resolve(),
  };
}

/** Starts dynalite (or the in-memory DynamoDB, see above) and creates the five tables (prefix default `nlc-test`). */
export async function startDynamoDb(prefix = 'nlc-test'): Promise<DynamoFixture> {
  if (process.env.NLC_TEST_DYNAMODB === 'memory') return startMemory(prefix);
  // As the local stack does: dynalite never closes its iterators otherwise (levelIterators.ts).
  closeLevelIteratorsOnReturn();
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const commands = new CommandCounter();
  const client = countingClient(endpoint, commands);
  const tables = tableNamesWithPrefix(prefix);
  for (const table of Object.values(tableDefinitions(tables))) {
    await client.send(new CreateTableCommand(table.create));
  }
  for (const table of Object.values(tableDefinitions(tables))) {
    // dynalite makes a table ACTIVE on the next tick with createTableMs 0; poll, no fixed sleep.
    for (let i = 0; i < 1000; i++) {
      const described = await client.send(new DescribeTableCommand({ TableName: table.create.TableName }));
      if (described.Table?.TableStatus === 'ACTIVE') break;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  commands.reset();
  const clients: DynamoDBClient[] = [client];
  return {
    endpoint,
    tables,
    client,
    commands,
    stores: (options = {}) => storesOver(tables, client, options),
    newClient: (options = {}) => {
      const another = countingClient(endpoint, commands, options.maxAttempts);
      clients.push(another);
      return another;
    },
    stop: async () => {
      for (const c of clients) c.destroy();
      await new Promise<void>((resolve, reject) => {
        server.close((error) => {
          if (error) reject(error);
          else resolve();
        });
      });
    },
  };
}
