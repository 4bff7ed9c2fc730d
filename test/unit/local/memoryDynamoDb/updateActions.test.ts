// UpdateItem in the in-memory DynamoDB: top-level actions change one copy of the item, nested ones copy
// along their path; every action reads the item as it was; paths that overlap are refused, naming the
// first overlapping pair as DynamoDB's document-path check finds it.
import { describe, expect, it } from 'vitest';
import { MemoryDynamoDb } from '../../../../local/memoryDynamoDb/engine.js';
import type { Item } from '../../../../local/memoryDynamoDb/values.js';
import { keyedTable } from './keyedTable.js';

function table(item: Item): MemoryDynamoDb {
  const db = keyedTable();
  db.putItem({ TableName: 't', Item: { k: { S: 'x' }, ...item } });
  return db;
}

function update(
  db: MemoryDynamoDb,
  expression: string,
  names: Record<string, string>,
  values?: Record<string, Item[string]>,
): void {
  db.updateItem({
    TableName: 't',
    Key: { k: { S: 'x' } },
    UpdateExpression: expression,
    ExpressionAttributeNames: names,
    ...(values !== undefined && { ExpressionAttributeValues: values }),
  });
}

const read = (db: MemoryDynamoDb) => db.getItem({ TableName: 't', Key: { k: { S: 'x' } } }).Item;

describe('UpdateItem actions', () => {
  it('sets, removes and adds top-level attributes from the item as it was, keeping the order of the others', () => {
    const db = table({ a: { N: '1' }, b: { S: 'two' }, c: { N: '3' }, m: { M: { x: { N: '1' } } } });
    update(
      db,
      'SET #a = #c, #d = :d, #c = #a REMOVE #b ADD #n :one',
      {
        '#a': 'a',
        '#b': 'b',
        '#c': 'c',
        '#d': 'd',
        '#n': 'n',
      },
      { ':d': { S: 'new' }, ':one': { N: '1' } },
    );
    const item = read(db);
    // a and c swapped: each SET read the item before the update.
    expect(item).toEqual({
      k: { S: 'x' },
      a: { N: '3' },
      c: { N: '1' },
      m: { M: { x: { N: '1' } } },
      d: { S: 'new' },
      n: { N: '1' },
    });
    expect(Object.keys(item ?? {})).toEqual(['k', 'a', 'c', 'm', 'd', 'n']);
  });

  it('mixes nested and top-level paths in one update', () => {
    const db = table({ m: { M: { x: { N: '1' }, y: { N: '2' } } }, l: { L: [{ S: 'p' }, { S: 'q' }] } });
    update(
      db,
      'SET #m.#x = :ten, #t = :t REMOVE #l[0], #m.#y',
      { '#m': 'm', '#x': 'x', '#y': 'y', '#t': 't', '#l': 'l' },
      {
        ':ten': { N: '10' },
        ':t': { BOOL: true },
      },
    );
    expect(read(db)).toEqual({
      k: { S: 'x' },
      m: { M: { x: { N: '10' } } },
      l: { L: [{ S: 'q' }] },
      t: { BOOL: true },
    });
  });

  it('refuses the same top-level attribute twice', () => {
    const db = table({ a: { N: '1' } });
    expect(() => {
      update(db, 'SET #a = :v REMOVE #a', { '#a': 'a' }, { ':v': { N: '2' } });
    }).toThrow('Two document paths overlap with each other: [a, a]');
    expect(read(db)).toEqual({ k: { S: 'x' }, a: { N: '1' } });
  });

  it('names the first overlapping pair in path order', () => {
    const db = table({});
    // x (first) and x (last) are found before y and y.
    expect(() => {
      update(
        db,
        'SET #x = :v, #y = :v, #y2 = :v, #x2 = :v',
        { '#x': 'x', '#y': 'y', '#y2': 'y', '#x2': 'x' },
        {
          ':v': { N: '1' },
        },
      );
    }).toThrow('[x, x]');
  });

  it('refuses a top-level attribute and a path inside it', () => {
    const db = table({ m: { M: {} } });
    expect(() => {
      update(db, 'SET #m = :v, #m.#a = :v', { '#m': 'm', '#a': 'a' }, { ':v': { N: '1' } });
    }).toThrow('[m, m.a]');
  });

  it('compares names holding a dot by their text, as before', () => {
    const db = table({});
    // The attribute "a.b" and the attribute "a" are distinct, but their texts overlap: refused.
    expect(() => {
      update(db, 'SET #ab = :v, #a = :v', { '#ab': 'a.b', '#a': 'a' }, { ':v': { N: '1' } });
    }).toThrow('[a.b, a]');
  });
});
