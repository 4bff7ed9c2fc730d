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
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tableNamesWithPrefix } from '../../../shared/adapters/dynamodb/tables.js';
import { createDynamoDbStores } from '../../../shared/adapters/dynamodb/index.js';
import { PortInUseError } from '../../../shared/errors.js';
import { startDynamoDb } from '../../../local/stack/dynamo.js';
import { dynaliteAbstractLevels } from '../../../local/stack/levelIterators.js';

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

  // dynalite ends its iterators with return(), which abstract-level's lack: each Query left one open,
  // holding what it read (levelIterators.ts). The local stack's view queries ~35 times a second.
  it.each([
    ['in memory', false],
    ['persisted', true],
  ])('closes the iterator of every Query and ListTables (%s)', async (_, persisted) => {
    const prototypes = dynaliteAbstractLevels().map(({ AbstractLevel }) => AbstractLevel.prototype);
    // Iterators attach themselves to their database when made and detach when closed.
    const attached = prototypes.map((p) => vi.spyOn(p, 'attachResource'));
    const detached = prototypes.map((p) => vi.spyOn(p, 'detachResource'));
    const resources = (spies: typeof attached): Set<unknown> =>
      new Set(spies.flatMap((spy) => spy.mock.calls.map(([resource]) => resource)));
    const db = await startDynamoDb({
      port: 0,
      tables: [tables],
      ...(persisted && { path: join(dir, 'iterators') }),
    });
    const stores = createDynamoDbStores({
      tables,
      endpoint: db.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
    });
    try {
      for (const spy of [...attached, ...detached]) spy.mockClear();
      await stores.decisions.append(
        'default',
        Array.from({ length: 30 }, (_, i) => ({
          node: 'a-1',
          at: i + 1,
          source: 'monitor' as const,
          what: 'register',
          why: 'first seen',
        })),
      );
      const reads = 100;
      for (let i = 0; i < reads; i++) {
        // As the view reads: the newest few of a subject (a Query stopped by its Limit), and a whole one.
        expect(await stores.decisions.query('default', 'a-1', { limit: 3, newestFirst: true })).toHaveLength(
          3,
        );
        expect(await stores.decisions.query('default', 'a-1')).toHaveLength(30);
      }
      const c = client(db.endpoint);
      await c.send(new ListTablesCommand({}));
      c.destroy();
      const opened = resources(attached);
      expect(opened.size).toBeGreaterThanOrEqual(2 * reads);
      // Closing completes after the response is sent.
      await vi.waitFor(() => {
        const closed = resources(detached);
        expect([...opened].filter((resource) => !closed.has(resource))).toHaveLength(0);
      });
    } finally {
      stores.client.destroy();
      await db.close();
      for (const spy of [...attached, ...detached]) spy.mockRestore();
    }
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
