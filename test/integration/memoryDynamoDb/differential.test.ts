// The in-memory DynamoDB against dynalite, operation by operation: a seeded random run of conditional
// puts, updates and deletes, gets, table and index queries (paged) and batch reads goes to both, and
// every answer (items, returned attributes, the error's name) must be the same. The in-memory side
// alternates between its two paths (the DocumentClient's direct one and the SDK's JSON protocol).
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryDocumentClient, memoryDynamoDbClient } from '../../../local/memoryDynamoDb/client.js';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';

const TABLE = 'differential';
const definition = {
  TableName: TABLE,
  BillingMode: 'PAY_PER_REQUEST' as const,
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' as const },
    { AttributeName: 'sk', AttributeType: 'N' as const },
    { AttributeName: 'g', AttributeType: 'S' as const },
    { AttributeName: 'r', AttributeType: 'S' as const },
  ],
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' as const },
    { AttributeName: 'sk', KeyType: 'RANGE' as const },
  ],
  GlobalSecondaryIndexes: [
    {
      IndexName: 'byG',
      KeySchema: [
        { AttributeName: 'g', KeyType: 'HASH' as const },
        { AttributeName: 'r', KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: ['n'] },
    },
  ],
};

/** mulberry32: small, seeded, the same sequence everywhere. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Send = (command: object) => Promise<Record<string, unknown>>;

/** What is compared of an answer: the output without metadata and capacity, or the error's name. */
async function outcome(send: Send, command: object): Promise<unknown> {
  try {
    const { $metadata: _m, ConsumedCapacity: _c, ...rest } = await send(command);
    // DynamoDB does not order BatchGetItem's responses.
    const responses = rest.Responses as Record<string, Record<string, unknown>[]> | undefined;
    if (responses !== undefined) {
      for (const items of Object.values(responses))
        items.sort((a, b) => (canonical(a) < canonical(b) ? -1 : 1));
    }
    return rest;
  } catch (error) {
    return { error: error instanceof Error ? error.name : String(error) };
  }
}

/** Every page of a query, followed through LastEvaluatedKey. */
async function allPages(send: Send, input: Record<string, unknown>): Promise<unknown> {
  const pages: unknown[] = [];
  let start: unknown;
  for (let i = 0; i < 50; i++) {
    const page = await outcome(
      send,
      new QueryCommand({ ...input, ...(start !== undefined && { ExclusiveStartKey: start }) } as never),
    );
    pages.push(page);
    start = (page as { LastEvaluatedKey?: unknown }).LastEvaluatedKey;
    if (start === undefined) break;
  }
  return pages;
}

/** JSON with object keys sorted (attribute order is not part of an answer). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/**
 * An index query's items over all pages, as a sorted list: DynamoDB does not order items that share
 * the index's sort key (dynalite orders them by a hash of the table key). With `input`, also checks
 * that the pages' items come in the index's sort key order.
 */
function indexItems(pages: unknown, input?: Record<string, unknown>): unknown {
  const items = (pages as { Items?: Record<string, unknown>[] }[]).flatMap((page) => page.Items ?? []);
  if (input !== undefined) {
    const keys = items.map((item) => String(item.r));
    // DynamoDB orders strings by their UTF-8 bytes.
    const ordered = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(keys).toEqual(input.ScanIndexForward === false ? ordered.reverse() : ordered);
  }
  return items.map(canonical).sort();
}

/** A whole-table Scan's items, sorted: a scan's order follows the hash of the partition key. */
async function scanned(send: Send): Promise<unknown> {
  const { Items } = (await send(new ScanCommand({ TableName: TABLE }))) as { Items?: unknown[] };
  return (Items ?? []).map(canonical).sort();
}

const strings = ['a', 'ab', 'b', 'é', 'z', '\u{1F600}', '\uFF5E', ''];
const pick = <T>(r: () => number, list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;

function operation(
  r: () => number,
): { kind: 'one'; command: object } | { kind: 'query'; input: Record<string, unknown> } | { kind: 'scan' } {
  const pk = pick(r, ['a', 'b', 'c']);
  const sk = Math.floor(r() * 8) - 2;
  const key = { pk, sk };
  const roll = r();
  if (roll < 0.3) {
    const conditions: [string | undefined, Record<string, string>, Record<string, unknown>][] = [
      [undefined, {}, {}],
      ['attribute_not_exists(#pk)', { '#pk': 'pk' }, {}],
      ['#n < :v', { '#n': 'n' }, { ':v': Math.floor(r() * 10) - 5 }],
      ['#s = :v OR begins_with(#s, :p)', { '#s': 's' }, { ':v': pick(r, strings), ':p': 'a' }],
      ['NOT (#s <> :v) AND attribute_exists(#a)', { '#s': 's', '#a': 'a' }, { ':v': pick(r, strings) }],
      ['#n BETWEEN :lo AND :hi', { '#n': 'n' }, { ':lo': -2, ':hi': 3 }],
      ['#s IN (:x, :y)', { '#s': 's' }, { ':x': 'a', ':y': 'z' }],
      ['size(#s) > :v', { '#s': 's' }, { ':v': 1 }],
      ['#missing <> :v', { '#missing': 'missing' }, { ':v': 1 }],
    ];
    const [condition, names, values] = pick(r, conditions);
    const item: Record<string, unknown> = { ...key, n: Math.floor(r() * 12) - 6, s: pick(r, strings) };
    if (item.s === '') delete item.s;
    if (r() < 0.6) item.g = pick(r, ['x', 'y']);
    if (r() < 0.6)
      item.r = pick(
        r,
        strings.filter((s) => s !== ''),
      );
    if (r() < 0.4) item.a = [1, { m: pick(r, strings) }];
    if (r() < 0.2) item.big = 2 ** 53 + Math.floor(r() * 10);
    if (r() < 0.2) item.bin = new Uint8Array([Math.floor(r() * 256), 0, 255]);
    return {
      kind: 'one',
      command: new PutCommand({
        TableName: TABLE,
        Item: item,
        ...(condition !== undefined && {
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ...(Object.keys(values).length > 0 && { ExpressionAttributeValues: values }),
        }),
        ReturnValues: pick(r, ['NONE', 'ALL_OLD'] as const),
      }),
    };
  }
  if (roll < 0.55) {
    const updates: [string, Record<string, string>, Record<string, unknown>][] = [
      ['SET #n = #n + :v', { '#n': 'n' }, { ':v': 2 }],
      ['SET #n = if_not_exists(#n, :z) - :v', { '#n': 'n' }, { ':z': 0, ':v': 1 }],
      ['REMOVE #a, #g', { '#a': 'a', '#g': 'g' }, {}],
      ['ADD #c :one', { '#c': 'c' }, { ':one': 1 }],
      ['ADD #ss :set', { '#ss': 'ss' }, { ':set': new Set(['p', 'q']) }],
      ['DELETE #ss :set', { '#ss': 'ss' }, { ':set': new Set(['p']) }],
      ['SET #a = list_append(if_not_exists(#a, :empty), :l)', { '#a': 'a' }, { ':empty': [], ':l': [7] }],
      ['SET #a[0] = :v', { '#a': 'a' }, { ':v': 'first' }],
      [
        'SET #g = :g, #r = :r REMOVE #s',
        { '#g': 'g', '#r': 'r', '#s': 's' },
        { ':g': 'y', ':r': pick(r, ['a', 'é']) },
      ],
      ['SET #pk = :v', { '#pk': 'pk' }, { ':v': 'nope' }],
      ['SET #n = :v', { '#n': 'n' }, { ':v': 1, ':unused': 2 }],
    ];
    const [update, names, values] = pick(r, updates);
    const conditional = r() < 0.3;
    return {
      kind: 'one',
      command: new UpdateCommand({
        TableName: TABLE,
        Key: key,
        UpdateExpression: update,
        ...(conditional && { ConditionExpression: 'attribute_exists(#k)' }),
        ExpressionAttributeNames: { ...names, ...(conditional && { '#k': 'pk' }) },
        ...(Object.keys(values).length > 0 && { ExpressionAttributeValues: values }),
        ReturnValues: pick(r, ['NONE', 'ALL_NEW', 'ALL_OLD', 'UPDATED_OLD', 'UPDATED_NEW'] as const),
      }),
    };
  }
  if (roll < 0.65) {
    return {
      kind: 'one',
      command: new DeleteCommand({
        TableName: TABLE,
        Key: key,
        ...(r() < 0.5 && {
          ConditionExpression: '#n >= :v',
          ExpressionAttributeNames: { '#n': 'n' },
          ExpressionAttributeValues: { ':v': 0 },
        }),
        ReturnValues: 'ALL_OLD',
      }),
    };
  }
  if (roll < 0.75) {
    return {
      kind: 'one',
      command: new GetCommand({
        TableName: TABLE,
        Key: key,
        ConsistentRead: true,
        ...(r() < 0.5 && {
          ProjectionExpression: '#n, #a[0], #s',
          ExpressionAttributeNames: { '#n': 'n', '#a': 'a', '#s': 's' },
        }),
      }),
    };
  }
  if (roll < 0.8) {
    const keys = [
      ...new Set(Array.from({ length: 4 }, () => `${pick(r, ['a', 'b', 'c'])}|${Math.floor(r() * 8) - 2}`)),
    ];
    return {
      kind: 'one',
      command: new BatchGetCommand({
        RequestItems: {
          [TABLE]: {
            Keys: keys.map((k) => ({ pk: k.split('|')[0], sk: Number(k.split('|')[1]) })),
            ConsistentRead: true,
          },
        },
      }),
    };
  }
  if (roll < 0.82) {
    return { kind: 'scan' };
  }
  if (roll < 0.92) {
    const ranges: [string, Record<string, unknown>][] = [
      ['', {}],
      [' AND #sk < :v', { ':v': 2 }],
      [' AND #sk <= :v', { ':v': 2 }],
      [' AND #sk > :v', { ':v': 0 }],
      [' AND #sk >= :v', { ':v': 0 }],
      [' AND #sk = :v', { ':v': 1 }],
      [' AND #sk BETWEEN :lo AND :hi', { ':lo': -1, ':hi': 3 }],
    ];
    const [range, values] = pick(r, ranges);
    return {
      kind: 'query',
      input: {
        TableName: TABLE,
        KeyConditionExpression: `#pk = :pk${range}`,
        ExpressionAttributeNames: { '#pk': 'pk', ...(range !== '' && { '#sk': 'sk' }) },
        ExpressionAttributeValues: { ':pk': pk, ...values },
        ScanIndexForward: r() < 0.5,
        ConsistentRead: true,
        ...(r() < 0.5 && { Limit: 1 + Math.floor(r() * 3) }),
        ...(r() < 0.3 && {
          FilterExpression: '#n > :f',
          ExpressionAttributeNames: { '#pk': 'pk', '#n': 'n', ...(range !== '' && { '#sk': 'sk' }) },
          ExpressionAttributeValues: { ':pk': pk, ':f': 0, ...values },
        }),
      },
    };
  }
  const prefix = r() < 0.5;
  return {
    kind: 'query',
    input: {
      TableName: TABLE,
      IndexName: 'byG',
      KeyConditionExpression: prefix ? '#g = :g AND begins_with(#r, :p)' : '#g = :g',
      ExpressionAttributeNames: { '#g': 'g', ...(prefix && { '#r': 'r' }) },
      ExpressionAttributeValues: { ':g': pick(r, ['x', 'y']), ...(prefix && { ':p': 'a' }) },
      ScanIndexForward: r() < 0.5,
      ...(r() < 0.5 && { Limit: 1 + Math.floor(r() * 3) }),
    },
  };
}

describe('the in-memory DynamoDB answers as dynalite does', () => {
  let dynalite: DynamoFixture;
  let reference: Send;
  let direct: Send;
  let protocol: Send;

  beforeAll(async () => {
    dynalite = await startDynamoDb('nlc-differential');
    await dynalite.client.send(new CreateTableCommand(definition));
    for (let i = 0; i < 1000; i++) {
      const described = await dynalite.client.send(new DescribeTableCommand({ TableName: TABLE }));
      if (described.Table?.TableStatus === 'ACTIVE') break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const memory = memoryDynamoDbClient();
    await memory.send(new CreateTableCommand(definition));
    const referenceDoc = DynamoDBDocumentClient.from(dynalite.client);
    const directDoc = memoryDocumentClient(memory);
    const protocolDoc = DynamoDBDocumentClient.from(memory);
    reference = (command) => referenceDoc.send(command as never) as Promise<Record<string, unknown>>;
    direct = (command) => directDoc.send(command as never) as Promise<Record<string, unknown>>;
    protocol = (command) => protocolDoc.send(command as never) as Promise<Record<string, unknown>>;
  });
  afterAll(async () => {
    await dynalite.stop();
  });

  it.each([1, 2, 3])('600 random operations, seed %i', async (seed) => {
    const r = random(seed);
    let failures = 0;
    for (let i = 0; i < 600; i++) {
      const op = operation(r);
      const memory = i % 2 === 0 ? direct : protocol;
      const [expected, actual] =
        op.kind === 'one'
          ? [await outcome(reference, op.command), await outcome(memory, op.command)]
          : op.kind === 'scan'
            ? [await scanned(reference), await scanned(memory)]
            : op.input.IndexName === undefined
              ? [await allPages(reference, op.input), await allPages(memory, op.input)]
              : [
                  indexItems(await allPages(reference, op.input)),
                  indexItems(await allPages(memory, op.input), op.input),
                ];
      if ((expected as { error?: string }).error !== undefined) failures++;
      expect({ i, op: op.kind, result: actual }).toEqual({ i, op: op.kind, result: expected });
    }
    // The run exercises refusals (failed conditions, invalid updates), not only successes.
    expect(failures).toBeGreaterThan(20);
  });
});
