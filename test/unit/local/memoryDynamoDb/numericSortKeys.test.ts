// The in-memory DynamoDB orders entries whose numeric sort keys are small integers by their numbers,
// and the others (decimals, integers beyond 15 digits, exponents) by their decimal value. A list that
// mixes both must still be in DynamoDB's numeric order, in the table and in an index, after updates
// that move entries around.
import { describe, expect, it } from 'vitest';
import { MemoryDynamoDb } from '../../../../local/memoryDynamoDb/engine.js';

const keys = [
  '10',
  '9',
  '1.5',
  '-3',
  '2.0',
  '0',
  '-0.5',
  '123456789012345678901234',
  '999999999999999',
  '1000000000000000',
  '1E2',
  '99.99',
  '-1000000000000000000',
];
const ascending = [...keys].sort((a, b) => Number(a) - Number(b));

function table(): MemoryDynamoDb {
  const db = new MemoryDynamoDb();
  db.createTable({
    TableName: 't',
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: 'p', AttributeType: 'S' },
      { AttributeName: 'n', AttributeType: 'N' },
      { AttributeName: 'at', AttributeType: 'N' },
    ],
    KeySchema: [
      { AttributeName: 'p', KeyType: 'HASH' },
      { AttributeName: 'n', KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: 'byAt',
        KeySchema: [
          { AttributeName: 'p', KeyType: 'HASH' },
          { AttributeName: 'at', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
  });
  return db;
}

function query(db: MemoryDynamoDb, index?: string, forward = true): number[] {
  const items =
    db.query({
      TableName: 't',
      ...(index !== undefined && { IndexName: index }),
      KeyConditionExpression: 'p = :p',
      ExpressionAttributeValues: { ':p': { S: 'x' } },
      ScanIndexForward: forward,
    }).Items ?? [];
  return items.map((item) => Number(item.n?.N));
}

describe('numeric sort keys, small integers and others mixed', () => {
  it('orders the table by the numbers, both ways', () => {
    const db = table();
    for (const n of keys)
      db.putItem({ TableName: 't', Item: { p: { S: 'x' }, n: { N: n }, at: { N: '0' } } });
    const expected = ascending.map(Number);
    expect(query(db)).toEqual(expected);
    expect(query(db, undefined, false)).toEqual([...expected].reverse());
  });

  it('keeps an index in order as updates move its entries', () => {
    const db = table();
    // Each item's index key starts as its own number; then every other one gets a new one, alternately a
    // small integer and a decimal of 25 digits, which moves it among the others.
    for (const n of keys) db.putItem({ TableName: 't', Item: { p: { S: 'x' }, n: { N: n }, at: { N: n } } });
    expect(query(db, 'byAt')).toEqual(ascending.map(Number));
    const at = new Map(keys.map((n) => [n, n]));
    keys
      .filter((_, i) => i % 2 === 0)
      .forEach((n, i) => {
        const moved = i % 2 === 0 ? String(100_000_000_000_000 + i) : `${String(i + 1)}${'0'.repeat(24)}.5`;
        at.set(n, moved);
        db.updateItem({
          TableName: 't',
          Key: { p: { S: 'x' }, n: { N: n } },
          UpdateExpression: 'SET #at = :at',
          ExpressionAttributeNames: { '#at': 'at' },
          ExpressionAttributeValues: { ':at': { N: moved } },
        });
      });
    const byAt = [...keys].sort((a, b) => Number(at.get(a)) - Number(at.get(b)));
    expect(query(db, 'byAt')).toEqual(byAt.map(Number));
    expect(query(db, 'byAt', false)).toEqual(byAt.map(Number).reverse());
  });
});
