// The simulator's state store: the real DynamoDB adapter (shared/adapters/dynamodb) over the in-memory
// DynamoDB (local/memoryDynamoDb), with the five tables created from the adapter's own definitions.
// Every request is awaited by the service that makes it, so the simulation is deterministic.
//
// The adapter's commands reach the engine directly (memoryDocumentClient): no JSON, no HTTP, no
// second process. A large run makes about a million requests; through the SDK's protocol and dynalite
// they were three quarters of its time. The engine is held to DynamoDB's rules by the adapter's own
// integration tests, which run against it as well as against dynalite (the `dynamodb-in-memory` test
// project), and `nlc simulate`'s outputs were byte-identical when it replaced dynalite.
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import {
  createDynamoDbStores,
  tableDefinitions,
  tableNamesWithPrefix,
  type DynamoDbStores,
  type TableNames,
} from '../../shared/adapters/dynamodb/index.js';
import type { Clock } from '../../shared/ports/clock.js';
import { memoryDocumentClient, memoryDynamoDbClient } from '../memoryDynamoDb/client.js';

export interface SimulatedStateStore {
  readonly stores: DynamoDbStores;
  readonly tables: TableNames;
  close(): Promise<void>;
}

/**
 * Creates the tables in a new in-memory DynamoDB and returns the state stores over it, on `clock`
 * (the stores stamp update times and TTLs with it: the virtual clock keeps them in scenario time).
 *
 * @example
 * const state = await startStateStore(scheduler);
 * await state.stores.controllerState.load('default');
 * await state.close();
 */
export async function startStateStore(clock: Clock, prefix = 'nlc-simulate'): Promise<SimulatedStateStore> {
  const client = memoryDynamoDbClient();
  const tables = tableNamesWithPrefix(prefix);
  for (const table of Object.values(tableDefinitions(tables)))
    await client.send(new CreateTableCommand(table.create));
  return {
    stores: createDynamoDbStores({ tables, client, clock, documentClient: memoryDocumentClient }),
    tables,
    close: () => {
      client.destroy();
      return Promise.resolve();
    },
  };
}
