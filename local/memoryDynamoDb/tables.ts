// Tables of the in-memory DynamoDB: items by partition, each partition's sort keys in DynamoDB's
// order, and global secondary indexes kept in step with every write.
import type {
  AttributeDefinition,
  CreateTableInput,
  GlobalSecondaryIndex,
  KeySchemaElement,
  TableDescription,
} from '@aws-sdk/client-dynamodb';
import {
  canonicalNumber,
  compareValues,
  itemSize,
  smallIntegerValue,
  type Item,
  type Value,
} from './values.js';

export type KeyType = 'S' | 'N' | 'B';

export interface KeyDef {
  readonly name: string;
  readonly type: KeyType;
}

/** A key value as a Map key: numbers canonical, so 1.0 and 1 are one key as in DynamoDB. */
export function keyString(value: Value): string {
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) return canonicalNumber(value.N);
  if (value.B !== undefined) return Buffer.from(value.B).toString('base64');
  return '';
}

/** Orders two optional values (absent first); values of one key attribute share a type. */
function compareOptional(x: Value | undefined, y: Value | undefined): number {
  if (x === undefined || y === undefined) return x === y ? 0 : x === undefined ? -1 : 1;
  return compareValues(x, y) ?? 0;
}

/**
 * A sorted list of entries: by sort key, then (index entries sharing a sort key) by the table's
 * partition and sort key, as dynalite orders them. An entry's table key is unique.
 */
class SortedEntries {
  readonly entries: Entry[] = [];

  compare(a: Entry, b: Entry): number {
    const x = a.sortNumber;
    const y = b.sortNumber;
    return (
      (x !== undefined && y !== undefined ? (x < y ? -1 : x > y ? 1 : 0) : compareOptional(a.sort, b.sort)) ||
      compareOptional(a.tableHash, b.tableHash) ||
      compareOptional(a.tableRange, b.tableRange)
    );
  }

  /** The first position whose entry is not before `probe`. */
  lowerBound(probe: Entry): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(this.entries[mid] as Entry, probe) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The first position where `before` is false (entries where it holds come first). */
  partitionPoint(before: (entry: Entry) => boolean): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(this.entries[mid] as Entry)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  insert(entry: Entry): void {
    this.entries.splice(this.lowerBound(entry), 0, entry);
  }

  remove(entry: Entry): void {
    const at = this.lowerBound(entry);
    if (at < this.entries.length && this.compare(this.entries[at] as Entry, entry) === 0)
      this.entries.splice(at, 1);
  }
}

/** What a sorted list holds for one item: its sort key value and the item's primary key. */
export interface Entry {
  readonly sort: Value | undefined;
  /**
   * A numeric sort key that is a small integer, as a number: a write compares its entry with a dozen
   * others (a table's change-time index holds every node), each by the number's text otherwise.
   */
  readonly sortNumber: number | undefined;
  /** The item's primary key as Map keys (keyString) and as values (for ordering). */
  readonly hash: string;
  readonly range: string;
  readonly tableHash: Value | undefined;
  readonly tableRange: Value | undefined;
}

/**
 * An item as stored: its size, and its JSON text once it has left the table's decoded items. Text, not
 * objects, as a database keeps encoded rows: a table of 5,000 nodes is about 16 MB of text but several
 * times that as attribute-value objects, all of which the garbage collector would walk on every major
 * collection. A write keeps the item it built among the decoded items (the next write of a row reads
 * it), so its text is made only when it leaves them still current: a row rewritten first (a Nodes row,
 * a dozen times in a run) is never encoded, and a row never holds both forms for long.
 */
interface Stored {
  /** The item, until encoded. */
  item: Item | undefined;
  /** The text, once encoded. */
  json: string | undefined;
  /** Holds B or BS values (bytes travel as base64 in the text). */
  binary: boolean;
  /** A later write replaced or deleted it: never to be encoded. */
  replaced: boolean;
  readonly size: number;
}

function hasBinary(value: Value): boolean {
  if (value.B !== undefined || value.BS !== undefined) return true;
  if (value.M !== undefined) return Object.values(value.M).some(hasBinary);
  if (value.L !== undefined) return value.L.some(hasBinary);
  return false;
}

const toText = (_key: string, value: unknown): unknown =>
  value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value;
const fromText = (key: string, value: unknown): unknown => {
  if (key === 'B' && typeof value === 'string') return new Uint8Array(Buffer.from(value, 'base64'));
  if (key === 'BS' && Array.isArray(value))
    return value.map((v: string) => new Uint8Array(Buffer.from(v, 'base64')));
  return value;
};

/** Makes the text of a stored item that is still an object, and lets the object go. */
function encode(stored: Stored): void {
  const { item } = stored;
  if (item === undefined) return;
  stored.binary = Object.values(item).some(hasBinary);
  stored.json = JSON.stringify(item, stored.binary ? toText : undefined);
  stored.item = undefined;
}

function decode(stored: Stored): Item {
  if (stored.item !== undefined) return stored.item;
  const { json } = stored;
  // A current item is an object or text; only a replaced one, which no read reaches, is neither.
  if (json === undefined) throw new Error('in-memory DynamoDB: a stored item has neither object nor text');
  return (stored.binary ? JSON.parse(json, fromText) : JSON.parse(json)) as Item;
}

/**
 * How many decoded items a table keeps (each a few KB of objects at most). More than a failing zone
 * changes in a minute (a refresh re-reads a minute of changed Nodes rows every pass): with 4,096, a
 * 1,000-node zone going Unknown (health, status and taint writes of every node) pushed each row out
 * before its next read, and a 5,000-node run spent twice as long in its Queries.
 */
const DECODED_ITEMS = 16_384;

export class Partition {
  readonly items = new Map<string, Stored>();
  readonly order = new SortedEntries();
}

export interface IndexDef {
  readonly name: string;
  readonly hash: KeyDef;
  readonly range: KeyDef | undefined;
  readonly projection: 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
  readonly include: ReadonlySet<string>;
}

export class Index {
  readonly partitions = new Map<string, SortedEntries>();
  /** Projections already made, by stored item (items never change in place: see Table.decoded). */
  private readonly projected = new WeakMap<Item, Item>();

  constructor(readonly def: IndexDef) {}

  entryOf(item: Item | undefined, table: Table): { hash: string; entry: Entry } | undefined {
    if (item === undefined) return undefined;
    const hash = item[this.def.hash.name];
    const range = this.def.range === undefined ? undefined : item[this.def.range.name];
    // A sparse index: items without its key attributes are not in it.
    if (hash === undefined || (this.def.range !== undefined && range === undefined)) return undefined;
    return { hash: keyString(hash), entry: table.entryOf(item, range) };
  }

  update(before: Item | undefined, after: Item | undefined, table: Table): void {
    const old = this.entryOf(before, table);
    const now = this.entryOf(after, table);
    if (old !== undefined && now !== undefined && old.hash === now.hash) {
      const same =
        old.entry.sort === now.entry.sort ||
        (old.entry.sort !== undefined &&
          now.entry.sort !== undefined &&
          compareValues(old.entry.sort, now.entry.sort) === 0);
      if (same) return;
    }
    if (old !== undefined) this.partitions.get(old.hash)?.remove(old.entry);
    if (now !== undefined) {
      let partition = this.partitions.get(now.hash);
      if (partition === undefined) {
        partition = new SortedEntries();
        this.partitions.set(now.hash, partition);
      }
      partition.insert(now.entry);
    }
    if (old !== undefined && this.partitions.get(old.hash)?.entries.length === 0)
      this.partitions.delete(old.hash);
  }

  /** The attributes an index read returns: its projection of the item. */
  projectItem(item: Item, table: Table): Item {
    if (this.def.projection === 'ALL') return item;
    const known = this.projected.get(item);
    if (known !== undefined) return known;
    const keep = new Set([table.hash.name, ...(table.range ? [table.range.name] : []), this.def.hash.name]);
    if (this.def.range !== undefined) keep.add(this.def.range.name);
    if (this.def.projection === 'INCLUDE') for (const a of this.def.include) keep.add(a);
    const out: Item = {};
    for (const name of keep) {
      const v = item[name];
      if (v !== undefined) out[name] = v;
    }
    this.projected.set(item, out);
    return out;
  }
}

export class Table {
  readonly hash: KeyDef;
  readonly range: KeyDef | undefined;
  readonly indexes = new Map<string, Index>();
  readonly partitions = new Map<string, Partition>();
  readonly createdAt = new Date();
  /**
   * The items last read or written, decoded (first in, first out): a written one as the object it was
   * built as, encoded when it leaves if still current (Stored). Items are never changed in place (an
   * update builds a new one), so one stays right while its `Stored` is current; a rewritten item has a
   * new `Stored` and misses.
   */
  private readonly decoded = new Map<Stored, Item>();
  itemCount = 0;

  constructor(readonly input: CreateTableInput & { readonly TableName: string }) {
    const types = new Map(
      (input.AttributeDefinitions ?? []).map((d: AttributeDefinition) => [d.AttributeName, d.AttributeType]),
    );
    const keyDefs = (
      schema: readonly KeySchemaElement[] | undefined,
      where: string,
    ): [KeyDef, KeyDef | undefined] => {
      const def = (role: 'HASH' | 'RANGE'): KeyDef | undefined => {
        const element = (schema ?? []).find((k) => k.KeyType === role);
        if (element?.AttributeName === undefined) return undefined;
        const type = types.get(element.AttributeName);
        if (type !== 'S' && type !== 'N' && type !== 'B')
          throw new TypeError(
            `${where}: key attribute ${element.AttributeName} has no S, N or B AttributeDefinition`,
          );
        return { name: element.AttributeName, type };
      };
      const hash = def('HASH');
      if (hash === undefined) throw new TypeError(`${where}: the KeySchema has no HASH key`);
      return [hash, def('RANGE')];
    };
    [this.hash, this.range] = keyDefs(input.KeySchema, input.TableName);
    for (const gsi of input.GlobalSecondaryIndexes ?? ([] as GlobalSecondaryIndex[])) {
      const name = gsi.IndexName ?? '';
      const [hash, range] = keyDefs(gsi.KeySchema, `${input.TableName} index ${name}`);
      this.indexes.set(
        name,
        new Index({
          name,
          hash,
          range,
          projection: gsi.Projection?.ProjectionType ?? 'ALL',
          include: new Set(gsi.Projection?.NonKeyAttributes ?? []),
        }),
      );
    }
  }

  get name(): string {
    return this.input.TableName;
  }

  primaryKey(item: Item): { hash: string; range: string } {
    const hash = item[this.hash.name];
    const range = this.range === undefined ? undefined : item[this.range.name];
    return {
      hash: hash === undefined ? '' : keyString(hash),
      range: range === undefined ? '' : keyString(range),
    };
  }

  /** The sorted-list entry of `item`, under sort key value `sort`. */
  entryOf(item: Item, sort: Value | undefined): Entry {
    const { hash, range } = this.primaryKey(item);
    const tableHash = item[this.hash.name];
    const tableRange = this.range === undefined ? undefined : item[this.range.name];
    const sortNumber = sort?.N === undefined ? undefined : smallIntegerValue(sort.N);
    return { sort, sortNumber, hash, range, tableHash, tableRange };
  }

  get(key: Item): Item | undefined {
    const { hash, range } = this.primaryKey(key);
    return this.at(hash, range);
  }

  /** The stored size of the item under `key` (0 when there is none), without decoding it. */
  sizeOf(key: Item): number {
    const { hash, range } = this.primaryKey(key);
    return this.sizeAt(hash, range);
  }

  sizeAt(hash: string, range: string): number {
    return this.partitions.get(hash)?.items.get(range)?.size ?? 0;
  }

  /** The item under a primary key given as Map keys (an Entry's `hash` and `range`). */
  at(hash: string, range: string): Item | undefined {
    const stored = this.partitions.get(hash)?.items.get(range);
    if (stored === undefined) return undefined;
    const known = this.decoded.get(stored);
    if (known !== undefined) return known;
    // Not among the decoded items, so encoded (an item leaves them as text).
    const item = decode(stored);
    // The recently read items stay decoded (a refresh reads the last minute's changes on every pass).
    this.remember(stored, item);
    return item;
  }

  private remember(stored: Stored, item: Item): void {
    if (this.decoded.size >= DECODED_ITEMS) {
      // The oldest quarter at once: a Map keeps a deleted entry's slot until it is rebuilt, so taking
      // the first key after each single delete walks every slot freed before it (5.8 µs a write once
      // full, against well under one for a quarter at a time).
      let drop = DECODED_ITEMS / 4;
      for (const oldest of this.decoded.keys()) {
        if (drop-- === 0) break;
        this.decoded.delete(oldest);
        if (oldest.replaced) oldest.item = undefined;
        else encode(oldest);
      }
    }
    this.decoded.set(stored, item);
  }

  /** Stores `item` in place of `before` (undefined: deletes), keeping the indexes in step. */
  write(key: Item, before: Item | undefined, item: Item | undefined): void {
    const { hash, range } = this.primaryKey(key);
    let partition = this.partitions.get(hash);
    if (item !== undefined) {
      if (partition === undefined) {
        partition = new Partition();
        this.partitions.set(hash, partition);
      }
      if (before === undefined) {
        partition.order.insert(
          this.entryOf(item, this.range === undefined ? undefined : item[this.range.name]),
        );
        this.itemCount++;
      }
      const stored: Stored = {
        item,
        json: undefined,
        binary: false,
        replaced: false,
        size: itemSize(item),
      };
      const previous = partition.items.get(range);
      if (previous !== undefined) previous.replaced = true;
      partition.items.set(range, stored);
      // The next conditional write of this item (a queue row every pass) reads it without parsing.
      this.remember(stored, item);
    } else if (before !== undefined && partition !== undefined) {
      const previous = partition.items.get(range);
      if (previous !== undefined) previous.replaced = true;
      partition.items.delete(range);
      partition.order.remove(
        this.entryOf(before, this.range === undefined ? undefined : before[this.range.name]),
      );
      this.itemCount--;
      if (partition.items.size === 0) this.partitions.delete(hash);
    }
    for (const index of this.indexes.values()) index.update(before, item, this);
  }

  describe(): TableDescription {
    const { input } = this;
    return {
      TableName: input.TableName,
      TableStatus: 'ACTIVE',
      CreationDateTime: this.createdAt,
      KeySchema: input.KeySchema,
      AttributeDefinitions: input.AttributeDefinitions,
      BillingModeSummary: { BillingMode: input.BillingMode ?? 'PROVISIONED' },
      ItemCount: this.itemCount,
      TableSizeBytes: 0,
      TableArn: `arn:aws:dynamodb:local:000000000000:table/${input.TableName}`,
      ...(input.GlobalSecondaryIndexes !== undefined && {
        GlobalSecondaryIndexes: input.GlobalSecondaryIndexes.map((gsi) => ({
          IndexName: gsi.IndexName,
          KeySchema: gsi.KeySchema,
          Projection: gsi.Projection,
          IndexStatus: 'ACTIVE',
        })),
      }),
    };
  }
}

export { SortedEntries };
