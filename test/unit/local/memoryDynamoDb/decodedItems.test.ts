// The in-memory DynamoDB keeps the items it last wrote or read decoded (16,384 per table) and drops the
// oldest quarter when full. Whatever it dropped or kept, every read answers the item as written.
import { describe, expect, it } from 'vitest';
import { keyedTable } from './keyedTable.js';

describe('a table past its decoded items', () => {
  it('answers every item as written, the oldest (dropped) and the newest (kept)', () => {
    const db = keyedTable();
    const count = 16_384 * 2 + 100;
    for (let i = 0; i < count; i++) {
      db.putItem({ TableName: 't', Item: { k: { S: `item-${String(i)}` }, n: { N: String(i) } } });
    }
    // Rewrites of early items after the cache turned over several times.
    for (let i = 0; i < 50; i++) {
      db.putItem({ TableName: 't', Item: { k: { S: `item-${String(i)}` }, n: { N: String(-i) } } });
    }
    const read = (i: number) => db.getItem({ TableName: 't', Key: { k: { S: `item-${String(i)}` } } }).Item;
    for (const i of [0, 49, 50, 1000, 16_383, 16_384, 20_000, count - 1]) {
      expect(read(i)).toEqual({ k: { S: `item-${String(i)}` }, n: { N: String(i < 50 ? -i : i) } });
    }
    expect(db.scan({ TableName: 't', Select: 'COUNT' }).Count).toBe(count);
  });

  it('reads back bytes, nested or not, of items that left the decoded items as text', () => {
    const db = keyedTable();
    const bytes = (i: number) => new Uint8Array([i % 256, 0, 255]);
    const item = (i: number, version = 1) => ({
      k: { S: `item-${String(i)}` },
      v: { N: String(version) },
      b: { B: bytes(i) },
      bs: { BS: [bytes(i), bytes(i + 1)] },
      m: { M: { inner: { L: [{ B: bytes(i + 2) }, { S: 'text' }] } } },
    });
    // The first hundred are rewritten while still decoded: their first versions are replaced, never
    // encoded; the second versions leave as text once the items after them fill the table's share.
    for (let i = 0; i < 100; i++) db.putItem({ TableName: 't', Item: item(i) });
    for (let i = 0; i < 100; i++) db.putItem({ TableName: 't', Item: item(i, 2) });
    const count = 16_384 + 100;
    for (let i = 100; i < count; i++) db.putItem({ TableName: 't', Item: item(i) });
    const read = (i: number) => db.getItem({ TableName: 't', Key: { k: { S: `item-${String(i)}` } } }).Item;
    for (const i of [0, 1, 99]) expect(read(i)).toEqual(item(i, 2));
    for (const i of [100, 4095, 4096, count - 1]) expect(read(i)).toEqual(item(i));
    expect(db.scan({ TableName: 't', Select: 'COUNT' }).Count).toBe(count);
  });
});
