// The local stack's DynamoDB-compatible server: dynalite with the tables of tables.ts, in memory or
// persisted, refusing a stale persisted schema, and a taken port named.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DeleteTableCommand,
  waitUntilTableNotExists,
  DynamoDBClient,
  ListTablesCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableNamesWithPrefix } from '../../../shared/adapters/dynamodb/tables.js';
import { createDynamoDbStores } from '../../../shared/adapters/dynamodb/index.js';
import { PortInUseError } from '../../../shared/errors.js';
import { startDynamoDb } from '../../../local/stack/dynamo.js';

const tables = tableNamesWithPrefix('nlc-dev');
let dir: string;

function client(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nlc-dynamo-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('startDynamoDb', () => {
  it('creates the five tables in memory', async () => {
    const db = await startDynamoDb({ port: 0, tables: [tables] });
    try {
      expect([...db.created].sort()).toEqual(Object.values(tables).sort());
      const c = client(db.endpoint);
      expect((await c.send(new ListTablesCommand({}))).TableNames?.sort()).toEqual(
        Object.values(tables).sort(),
      );
      c.destroy();
    } finally {
      await db.close();
    }
  });

  it('keeps persisted tables and their items across a restart', async () => {
    const path = join(dir, 'persisted');
    const first = await startDynamoDb({ port: 0, tables: [tables], path });
    const stores = createDynamoDbStores({
      tables,
      endpoint: first.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
    });
    await stores.decisions.append('default', [
      { node: 'a-1', at: 1, source: 'monitor', what: 'register', why: 'first seen' },
    ]);
    stores.client.destroy();
    await first.close();

    const second = await startDynamoDb({ port: 0, tables: [tables], path });
    try {
      expect(second.created).toEqual([]);
      const again = createDynamoDbStores({
        tables,
        endpoint: second.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
      });
      expect((await again.decisions.query('default', 'a-1')).map((d) => d.what)).toEqual(['register']);
      again.client.destroy();
    } finally {
      await second.close();
    }
  });

  it('refuses a persisted table whose keys differ from the definitions, naming what to do', async () => {
    const path = join(dir, 'stale');
    const first = await startDynamoDb({ port: 0, tables: [tables], path });
    const c = client(first.endpoint);
    await c.send(new DeleteTableCommand({ TableName: tables.zones }));
    // dynalite deletes in the background: a create before it is gone is ResourceInUse (seen under load).
    await waitUntilTableNotExists(
      { client: c, maxWaitTime: 30, minDelay: 1, maxDelay: 1 },
      { TableName: tables.zones },
    );
    await c.send(
      new CreateTableCommand({
        TableName: tables.zones,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
    c.destroy();
    await first.close();
    await expect(startDynamoDb({ port: 0, tables: [tables], path })).rejects.toThrow(
      /table nlc-dev-zones in the data directory has keys or indexes that differ .*--ephemeral/,
    );
  });

  it('names a taken port', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as AddressInfo;
    try {
      await expect(startDynamoDb({ port, tables: [tables] })).rejects.toBeInstanceOf(PortInUseError);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
