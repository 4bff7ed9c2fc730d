// Faults at the DynamoDB boundary. aws-sdk-client-mock only injects the faults a local server cannot
// produce (throttling, ProvisionedThroughputExceeded, UnprocessedItems); the SDK's own retry is shown
// against dynalite with a fault-injecting middleware below the retry strategy.
import {
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DynamoDBDocumentClient,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoDbStores } from '../../../shared/adapters/dynamodb/index.js';
import { tableNamesWithPrefix } from '../../../shared/adapters/dynamodb/tables.js';
import type { DecisionRecord } from '../../../shared/ports/stores.js';
import { StoreError } from '../../../shared/errors.js';
import { startDynalite, type DynamoFixture } from '../../helpers/dynalite.js';
import { newNode, t } from '../../helpers/fakeCluster.js';

const t0 = t('2026-01-29T09:00:00Z');
const tables = tableNamesWithPrefix('nlc-faults');

/** Stores over a client that never reaches the network: every send is answered by the mock. */
function mockedStores(settings = {}) {
  const client = new DynamoDBClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  return createDynamoDbStores({
    tables,
    client,
    settings: { backoffBaseMs: 1, backoffCapMs: 5, ...settings },
  });
}

const documentMock = mockClient(DynamoDBDocumentClient);
afterEach(() => {
  documentMock.reset();
});
afterAll(() => {
  documentMock.restore();
});

describe('faults injected with aws-sdk-client-mock', () => {
  it('throttling that outlasts the SDK retries is a StoreError naming the table, not a conflict', async () => {
    documentMock.on(QueryCommand).rejects(
      new ThrottlingException({
        message: 'Rate of requests exceeds the allowed throughput.',
        $metadata: {},
      }),
    );
    const load = mockedStores().controllerState.load('prod');
    await expect(load).rejects.toBeInstanceOf(StoreError);
    await expect(load).rejects.toMatchObject({ reason: 'throttled', table: tables.zones });
  });

  it('ProvisionedThroughputExceeded on a conditional write is a StoreError naming table and key', async () => {
    documentMock.on(UpdateCommand).rejects(
      new ProvisionedThroughputExceededException({
        message: 'The level of configured provisioned throughput for the table was exceeded.',
        $metadata: {},
      }),
    );
    const put = mockedStores().nodes.putNode('prod', {
      ...newNode('n1', { created: t0 }),
      resourceVersion: '3',
    });
    await expect(put).rejects.toMatchObject({
      name: 'StoreError',
      reason: 'throttled',
      table: tables.nodes,
      key: { cluster: 'prod', node: 'n1' },
    });
  });

  it('UnprocessedItems are sent again with backoff until none are left', async () => {
    const records: DecisionRecord[] = Array.from({ length: 3 }, (_, i) => ({
      node: 'n1',
      at: t0 + i,
      source: 'monitor',
      what: 'swapNodeTaints',
      why: 'doNoExecuteTaintingPass: Ready=Unknown',
    }));
    let sent: unknown[] = [];
    documentMock.on(BatchWriteCommand).callsFake((input: { RequestItems: Record<string, unknown[]> }) => {
      sent = input.RequestItems[tables.decisions] ?? [];
      const calls = documentMock.commandCalls(BatchWriteCommand).length;
      // First call: two of three unprocessed; second: one; third: all written.
      const unprocessed = calls === 1 ? sent.slice(1) : calls === 2 ? sent.slice(1) : [];
      return Promise.resolve({
        UnprocessedItems: unprocessed.length === 0 ? {} : { [tables.decisions]: unprocessed },
      });
    });
    await mockedStores().decisions.append('prod', records);
    const calls = documentMock.commandCalls(BatchWriteCommand);
    expect(calls).toHaveLength(3);
    const items = (n: number) => calls[n]!.args[0].input.RequestItems?.[tables.decisions]?.length;
    expect([items(0), items(1), items(2)]).toEqual([3, 2, 1]);
    expect(sent).toHaveLength(1);
  });

  it('gives up with a StoreError when items stay unprocessed', async () => {
    documentMock
      .on(BatchWriteCommand)
      .callsFake((input: { RequestItems: Record<string, unknown[]> }) =>
        Promise.resolve({ UnprocessedItems: input.RequestItems }),
      );
    const append = mockedStores({ batchAttempts: 4 }).decisions.append('prod', [
      { node: 'n1', at: t0, source: 'monitor', what: 'x', why: 'y' },
    ]);
    await expect(append).rejects.toMatchObject({
      name: 'StoreError',
      reason: 'throttled',
      table: tables.decisions,
    });
    expect(documentMock.commandCalls(BatchWriteCommand)).toHaveLength(4);
  });
});

describe('faults against dynalite', () => {
  let db: DynamoFixture;
  beforeAll(async () => {
    documentMock.restore(); // these go to the real server
    db = await startDynalite();
  });
  afterAll(async () => {
    await db.stop();
  });

  it("a throttled request is retried by the SDK's standard retry and succeeds", async () => {
    const client = db.newClient({ maxAttempts: 3 });
    let throttled = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand' && throttled === 0) {
          throttled++;
          throw new ThrottlingException({ message: 'Rate exceeded', $metadata: { httpStatusCode: 400 } });
        }
        return next(args);
      },
      // Below the retry strategy (finalizeRequest), like a throttled response from the service.
      { step: 'deserialize', name: 'throttleOnce', priority: 'low' },
    );
    const stores = db.stores({ client });
    db.commands.reset();
    await expect(stores.nodes.putNode('retry', newNode('n1', { created: t0 }))).resolves.toEqual({
      applied: true,
    });
    expect(throttled).toBe(1);
    expect(db.commands.get('UpdateItem')).toBe(2);
    expect(await stores.nodes.getNode('retry', 'n1')).toBeDefined();
  });

  it('an aborted signal stops before any request', async () => {
    const stores = db.stores();
    const controller = new AbortController();
    controller.abort();
    db.commands.reset();
    await expect(stores.controllerState.load('aborted', { signal: controller.signal })).rejects.toMatchObject(
      {
        name: 'StoreError',
        reason: 'aborted',
      },
    );
    expect(db.commands.total()).toBe(0);
  });
});
