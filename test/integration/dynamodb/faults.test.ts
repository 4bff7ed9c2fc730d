// Faults at the DynamoDB boundary. aws-sdk-client-mock only injects what a local server cannot produce
// (throttling, ProvisionedThroughputExceeded, a failed condition that returns the stored row, as
// DynamoDB does and dynalite does not); the SDK's own retry is shown
// against dynalite with a fault-injecting middleware below the retry strategy.
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DECISION_APPEND_CONCURRENCY } from '../../../shared/adapters/dynamodb/decisionStore.js';
import { createDynamoDbStores } from '../../../shared/adapters/dynamodb/index.js';
import { tableNamesWithPrefix } from '../../../shared/adapters/dynamodb/tables.js';
import type { DecisionRecord } from '../../../shared/ports/stores.js';
import { StoreError } from '../../../shared/errors.js';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';
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

  const decisionRecords = (n: number): DecisionRecord[] =>
    Array.from({ length: n }, (_, i) => ({
      node: 'n1',
      at: t0 + i,
      source: 'monitor',
      what: 'swapNodeTaints',
      why: 'doNoExecuteTaintingPass: Ready=Unknown',
      inputs: { zone: 'region1:\u0000:zone-a', ready: 'Unknown', attempt: 1, tainted: false, note: null },
      result: 'ok',
    }));

  /** A row as DynamoDB returns it with a failed condition (attribute values, not plain ones). */
  function attributeValue(value: unknown): unknown {
    if (value === null) return { NULL: true };
    if (typeof value === 'string') return { S: value };
    if (typeof value === 'number') return { N: String(value) };
    if (typeof value === 'boolean') return { BOOL: value };
    if (Array.isArray(value)) return { L: value.map(attributeValue) };
    return {
      M: Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, attributeValue(v)])),
    };
  }
  const storedRow = (item: Record<string, unknown>) =>
    new ConditionalCheckFailedException({
      message: 'The conditional request failed',
      $metadata: {},
      Item: Object.fromEntries(Object.entries(item).map(([k, v]) => [k, attributeValue(v)])) as never,
    });

  it('every append is one PutItem conditional on its key being absent, at most 8 in flight', async () => {
    let inFlight = 0;
    let most = 0;
    documentMock.on(PutCommand).callsFake(async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 2));
      inFlight--;
      return {};
    });
    await mockedStores().decisions.append('prod', decisionRecords(30));
    const calls = documentMock.commandCalls(PutCommand);
    expect(calls).toHaveLength(30);
    for (const call of calls) {
      expect(call.args[0].input).toMatchObject({
        TableName: tables.decisions,
        ConditionExpression: 'attribute_not_exists(#key)',
        ExpressionAttributeNames: { '#key': 'clusterNode' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
    }
    expect(most).toBe(DECISION_APPEND_CONCURRENCY);
    expect(documentMock.commandCalls(BatchWriteCommand)).toHaveLength(0);
  });

  it('a re-append of the same decision, with a later expiry, is success: no second write, no read', async () => {
    const [record] = decisionRecords(1);
    documentMock.on(PutCommand).resolvesOnce({});
    await mockedStores().decisions.append('prod', [record!]);
    const written = documentMock.commandCalls(PutCommand)[0]!.args[0].input.Item as Record<string, unknown>;
    documentMock.reset();
    documentMock.on(PutCommand).rejects(storedRow({ ...written, expiresAt: 1 }));
    await mockedStores().decisions.append('prod', [record!]);
    expect(documentMock.commandCalls(PutCommand)).toHaveLength(1);
    expect(documentMock.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('a different decision under a taken key is appended under the key plus its digest, no read', async () => {
    const [record] = decisionRecords(1);
    documentMock.on(PutCommand).resolvesOnce({});
    await mockedStores().decisions.append('prod', [record!]);
    const first = documentMock.commandCalls(PutCommand)[0]!.args[0].input.Item as Record<string, unknown>;
    documentMock.reset();
    documentMock.on(PutCommand).rejectsOnce(storedRow(first)).resolvesOnce({});
    await mockedStores().decisions.append('prod', [
      { ...record!, result: 'Conflict: the object has been modified' },
    ]);
    const calls = documentMock.commandCalls(PutCommand).map((c) => c.args[0].input);
    expect(calls).toHaveLength(2);
    expect(calls[1]).toMatchObject({
      ConditionExpression: 'attribute_not_exists(#key)',
      Item: { clusterNode: first.clusterNode, result: 'Conflict: the object has been modified' },
    });
    const key = String(calls[1]?.Item?.timeSeq);
    expect(key.startsWith(`${String(first.timeSeq)}#`)).toBe(true);
    expect(key.slice(String(first.timeSeq).length)).toMatch(/^#[0-9a-f]{12}$/);
    expect(documentMock.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('throttling of an append that outlasts the SDK retries is a StoreError naming the table and key', async () => {
    documentMock.on(PutCommand).rejects(
      new ThrottlingException({
        message: 'Rate of requests exceeds the allowed throughput.',
        $metadata: {},
      }),
    );
    const append = mockedStores().decisions.append('prod', decisionRecords(1));
    await expect(append).rejects.toMatchObject({
      name: 'StoreError',
      reason: 'throttled',
      table: tables.decisions,
      key: { clusterNode: 'prod#n1', timeSeq: '2026-01-29T09:00:00.000Z#monitor#000000' },
    });
  });
});

describe('faults against dynalite', () => {
  let db: DynamoFixture;
  beforeAll(async () => {
    documentMock.restore(); // these go to the real server
    db = await startDynamoDb();
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
