// The simulator's state store: the real DynamoDB adapter (shared/adapters/dynamodb) against dynalite, a
// DynamoDB-compatible server kept in memory, on 127.0.0.1 and a free port, with the five tables created
// from the adapter's own definitions. Every request is awaited by the service that makes it, so the
// simulation stays deterministic although the bytes cross a loopback socket.
//
// dynalite is a development dependency: `nlc simulate` runs from a checkout (`npm run simulate`).
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  createDynamoDbStores,
  tableDefinitions,
  tableNamesWithPrefix,
  type DynamoDbStores,
  type TableNames,
} from '../../shared/adapters/dynamodb/index.js';
import type { Clock } from '../../shared/ports/clock.js';

// dynalite ships no types; this is the part of its API used here.
type Dynalite = (options: {
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
}) => Server;

export interface SimulatedStateStore {
  readonly stores: DynamoDbStores;
  readonly tables: TableNames;
  readonly endpoint: string;
  close(): Promise<void>;
}

/**
 * Starts dynalite and returns the state stores over it, on `clock` (the stores stamp update times and
 * TTLs with it: the virtual clock keeps them in scenario time).
 *
 * @example
 * const state = await startStateStore(scheduler);
 * await state.stores.controllerState.load('default');
 * await state.close();
 */
export async function startStateStore(clock: Clock, prefix = 'nlc-simulate'): Promise<SimulatedStateStore> {
  const dynalite = createRequire(import.meta.url)('dynalite') as Dynalite;
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  // A local server takes any credentials; fixed ones keep the SDK from searching the environment.
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'simulate', secretAccessKey: 'simulate' },
    maxAttempts: 3,
  });
  const close = async (): Promise<void> => {
    client.destroy();
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  };
  try {
    const tables = tableNamesWithPrefix(prefix);
    const definitions = Object.values(tableDefinitions(tables));
    for (const table of definitions) await client.send(new CreateTableCommand(table.create));
    for (const table of definitions) {
      // dynalite makes a table ACTIVE on a later tick even with createTableMs 0.
      for (let i = 0; i < 1000; i++) {
        const described = await client.send(new DescribeTableCommand({ TableName: table.create.TableName }));
        if (described.Table?.TableStatus === 'ACTIVE') break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return { stores: createDynamoDbStores({ tables, client, clock }), tables, endpoint, close };
  } catch (error) {
    await close();
    throw error;
  }
}
