// The operations of the in-memory DynamoDB, on wire-form inputs and outputs (what the SDK's commands
// carry before serialization). Each runs to completion synchronously, so every single-item write is
// atomic as in DynamoDB, and conditions, updates, key conditions and projections follow DynamoDB's
// rules (expressions.ts). What DynamoDB refuses throws MemoryDynamoDbError with DynamoDB's error name.
// One class of about 700 lines on purpose: each method is one DynamoDB operation, read against
// DynamoDB's reference page for it, and they share the same checks (keys, items, placeholders).
import type {
  BatchGetItemInput,
  BatchGetItemOutput,
  BatchWriteItemInput,
  BatchWriteItemOutput,
  ConsumedCapacity,
  CreateTableInput,
  CreateTableOutput,
  DeleteItemInput,
  DeleteItemOutput,
  DeleteTableInput,
  DeleteTableOutput,
  DescribeTableInput,
  DescribeTableOutput,
  GetItemInput,
  GetItemOutput,
  ListTablesInput,
  ListTablesOutput,
  PutItemInput,
  PutItemOutput,
  QueryInput,
  QueryOutput,
  ScanInput,
  ScanOutput,
  UpdateItemInput,
  UpdateItemOutput,
} from '@aws-sdk/client-dynamodb';
import {
  applyUpdate,
  evaluate,
  ExpressionError,
  parseCondition,
  parseProjection,
  parseUpdate,
  pathValue,
  Placeholders,
  project,
  topAttribute,
  type Condition,
  type Path,
} from './expressions.js';
import { Index, keyString, Table, type Entry, type KeyDef } from './tables.js';
import { checkedCopy, compareValues, itemSize, ValueError, type Item, type Value } from './values.js';

/** An error DynamoDB would answer with: `name` is DynamoDB's (ValidationException, …). */
export class MemoryDynamoDbError extends Error {
  constructor(
    override readonly name: string,
    message: string,
    /** The item a failed condition found (ReturnValuesOnConditionCheckFailure ALL_OLD). */
    readonly item?: Item,
  ) {
    super(message);
  }
}

/** Runs an operation; what DynamoDB would refuse as invalid surfaces as its ValidationException. */
export function validated<T>(operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    if (error instanceof ExpressionError || error instanceof ValueError) throw validation(error.message);
    throw error;
  }
}

const MAX_ITEM_BYTES = 400 * 1024;
const MAX_PAGE_BYTES = 1024 * 1024;

function validation(message: string): MemoryDynamoDbError {
  return new MemoryDynamoDbError('ValidationException', message);
}

type ReturnCapacity = 'TOTAL' | 'INDEXES' | 'NONE' | undefined;

function capacity(
  table: string,
  mode: ReturnCapacity,
  units: number,
): { ConsumedCapacity?: ConsumedCapacity } {
  return mode === 'TOTAL' || mode === 'INDEXES'
    ? { ConsumedCapacity: { TableName: table, CapacityUnits: units } }
    : {};
}

const readUnits = (bytes: number, consistent: boolean | undefined): number =>
  Math.max(1, Math.ceil(bytes / 4096)) / (consistent === true ? 1 : 2);
/** Write units of a write that replaces an item of `before` bytes with one of `after` bytes. */
const writeUnits = (before: number, after = 0): number =>
  Math.max(1, Math.ceil(before / 1024), Math.ceil(after / 1024));

export class MemoryDynamoDb {
  private readonly tables = new Map<string, Table>();

  // -------------------------------------------------------------------------------------------------
  // Tables

  createTable(input: CreateTableInput): CreateTableOutput {
    const name = input.TableName;
    if (name === undefined || name === '') throw validation('TableName is required');
    if (this.tables.has(name))
      throw new MemoryDynamoDbError('ResourceInUseException', `Table already exists: ${name}`);
    let table: Table;
    try {
      table = new Table({ ...input, TableName: name });
    } catch (error) {
      throw validation(error instanceof Error ? error.message : String(error));
    }
    this.tables.set(name, table);
    return { TableDescription: table.describe() };
  }

  describeTable(input: DescribeTableInput): DescribeTableOutput {
    return { Table: this.table(input.TableName).describe() };
  }

  deleteTable(input: DeleteTableInput): DeleteTableOutput {
    const table = this.table(input.TableName);
    this.tables.delete(table.name);
    return { TableDescription: { ...table.describe(), TableStatus: 'DELETING' } };
  }

  listTables(input: ListTablesInput): ListTablesOutput {
    const names = [...this.tables.keys()].sort();
    const from =
      input.ExclusiveStartTableName === undefined
        ? 0
        : names.findIndex((n) => n > (input.ExclusiveStartTableName ?? ''));
    const page = names.slice(
      from < 0 ? names.length : from,
      (from < 0 ? names.length : from) + (input.Limit ?? 100),
    );
    const more = (from < 0 ? names.length : from) + page.length < names.length;
    return { TableNames: page, ...(more && { LastEvaluatedTableName: page[page.length - 1] }) };
  }

  private table(name: string | undefined): Table {
    const table = name === undefined ? undefined : this.tables.get(name);
    if (table === undefined)
      throw new MemoryDynamoDbError(
        'ResourceNotFoundException',
        `Requested resource not found: Table: ${name ?? '(none)'} not found`,
      );
    return table;
  }

  // -------------------------------------------------------------------------------------------------
  // Single items

  getItem(input: GetItemInput): GetItemOutput {
    const table = this.table(input.TableName);
    const key = this.checkKey(table, input.Key);
    const p = new Placeholders(input.ExpressionAttributeNames, undefined);
    const projection = this.projection(input.ProjectionExpression, p);
    p.checkAllUsed();
    const item = table.get(key);
    return {
      ...(item !== undefined && { Item: projection === undefined ? item : project(item, projection, p) }),
      ...capacity(
        table.name,
        input.ReturnConsumedCapacity,
        readUnits(table.sizeOf(key), input.ConsistentRead),
      ),
    };
  }

  putItem(input: PutItemInput): PutItemOutput {
    const table = this.table(input.TableName);
    const item = this.checkItem(table, input.Item);
    const { p, condition } = this.plainWrite(input);
    const before = table.get(item);
    this.check(condition, before, p, input.ReturnValuesOnConditionCheckFailure);
    const units = writeUnits(table.sizeOf(item), itemSize(item));
    table.write(item, before, item);
    return {
      ...(input.ReturnValues === 'ALL_OLD' && before !== undefined && { Attributes: before }),
      ...capacity(table.name, input.ReturnConsumedCapacity, units),
    };
  }

  updateItem(input: UpdateItemInput): UpdateItemOutput {
    const table = this.table(input.TableName);
    const key = this.checkKey(table, input.Key);
    const p = new Placeholders(input.ExpressionAttributeNames, input.ExpressionAttributeValues);
    const condition = this.condition(input.ConditionExpression, p);
    if (input.UpdateExpression === undefined) throw validation('UpdateExpression is required');
    const update = this.parse(() => parseUpdate(input.UpdateExpression ?? '', 'Invalid UpdateExpression'));
    p.use(update);
    p.checkAllUsed();
    const keyNames = new Set([table.hash.name, ...(table.range ? [table.range.name] : [])]);
    for (const path of [
      ...update.tree.set.map((a) => a.path),
      ...update.tree.remove,
      ...update.tree.add.map((a) => a.path),
      ...update.tree.delete.map((a) => a.path),
    ]) {
      const top = topAttribute(path, p);
      if (keyNames.has(top))
        throw validation(`Cannot update attribute ${top}. This attribute is part of the key`);
    }
    const before = table.get(key);
    this.check(condition, before, p, input.ReturnValuesOnConditionCheckFailure);
    const after = this.parse(() => applyUpdate(before ?? key, update.tree, p, 'Invalid UpdateExpression'));
    this.checkSize(after);
    this.checkIndexKeys(table, after);
    const units = writeUnits(table.sizeOf(key), itemSize(after));
    table.write(key, before, after);
    return {
      ...this.returnValues(input.ReturnValues, before, after, update.tree, p),
      ...capacity(table.name, input.ReturnConsumedCapacity, units),
    };
  }

  deleteItem(input: DeleteItemInput): DeleteItemOutput {
    const table = this.table(input.TableName);
    const key = this.checkKey(table, input.Key);
    const { p, condition } = this.plainWrite(input);
    const before = table.get(key);
    this.check(condition, before, p, input.ReturnValuesOnConditionCheckFailure);
    const units = writeUnits(table.sizeOf(key));
    if (before !== undefined) table.write(key, before, undefined);
    return {
      ...(input.ReturnValues === 'ALL_OLD' && before !== undefined && { Attributes: before }),
      ...capacity(table.name, input.ReturnConsumedCapacity, units),
    };
  }

  // -------------------------------------------------------------------------------------------------
  // Batches

  batchGetItem(input: BatchGetItemInput): BatchGetItemOutput {
    const requests = Object.entries(input.RequestItems ?? {});
    const keys = requests.reduce((n, [, r]) => n + (r.Keys?.length ?? 0), 0);
    if (keys === 0 || keys > 100)
      throw validation(`Too many items requested for the BatchGetItem call: ${keys} (1 to 100)`);
    const Responses: Record<string, Item[]> = {};
    const consumed: ConsumedCapacity[] = [];
    for (const [name, request] of requests) {
      const seen = new Set<string>();
      let units = 0;
      for (const key of request.Keys ?? []) {
        const output = this.getItem({
          TableName: name,
          Key: key,
          ...(request.ProjectionExpression !== undefined && {
            ProjectionExpression: request.ProjectionExpression,
          }),
          ...(request.ExpressionAttributeNames !== undefined && {
            ExpressionAttributeNames: request.ExpressionAttributeNames,
          }),
          ...(request.ConsistentRead !== undefined && { ConsistentRead: request.ConsistentRead }),
          ReturnConsumedCapacity: 'TOTAL',
        });
        const id = JSON.stringify(
          Object.entries(key)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([k, v]) => [k, keyString(v)]),
        );
        if (seen.has(id)) throw validation('Provided list of item keys contains duplicates');
        seen.add(id);
        units += output.ConsumedCapacity?.CapacityUnits ?? 0;
        if (output.Item !== undefined) (Responses[name] ??= []).push(output.Item);
      }
      Responses[name] ??= [];
      consumed.push({ TableName: name, CapacityUnits: units });
    }
    return {
      Responses,
      UnprocessedKeys: {},
      ...(input.ReturnConsumedCapacity === 'TOTAL' || input.ReturnConsumedCapacity === 'INDEXES'
        ? { ConsumedCapacity: consumed }
        : {}),
    };
  }

  batchWriteItem(input: BatchWriteItemInput): BatchWriteItemOutput {
    const requests = Object.entries(input.RequestItems ?? {});
    const count = requests.reduce((n, [, r]) => n + r.length, 0);
    if (count === 0 || count > 25)
      throw validation(`Too many items requested for the BatchWriteItem call: ${count} (1 to 25)`);
    // Every request is checked before any is applied: a refused batch writes nothing.
    const writes = requests.flatMap(([name, list]) => {
      const table = this.table(name);
      return list.map((request) => {
        if (request.PutRequest !== undefined)
          return {
            table,
            key: this.checkItem(table, request.PutRequest.Item),
            item: this.checkItem(table, request.PutRequest.Item),
          };
        if (request.DeleteRequest !== undefined)
          return { table, key: this.checkKey(table, request.DeleteRequest.Key), item: undefined };
        throw validation('A WriteRequest must have a PutRequest or a DeleteRequest');
      });
    });
    const ids = writes.map((w) => `${w.table.name}\u0000${JSON.stringify(w.table.primaryKey(w.key))}`);
    if (new Set(ids).size !== ids.length) throw validation('Provided list of item keys contains duplicates');
    const units = new Map<string, number>();
    for (const { table, key, item } of writes) {
      const before = table.get(key);
      const used = writeUnits(table.sizeOf(key), item === undefined ? 0 : itemSize(item));
      table.write(key, before, item);
      units.set(table.name, (units.get(table.name) ?? 0) + used);
    }
    return {
      UnprocessedItems: {},
      ...(input.ReturnConsumedCapacity === 'TOTAL' || input.ReturnConsumedCapacity === 'INDEXES'
        ? { ConsumedCapacity: [...units].map(([TableName, CapacityUnits]) => ({ TableName, CapacityUnits })) }
        : {}),
    };
  }

  // -------------------------------------------------------------------------------------------------
  // Queries

  query(input: QueryInput): QueryOutput {
    const table = this.table(input.TableName);
    const index = input.IndexName === undefined ? undefined : table.indexes.get(input.IndexName);
    if (input.IndexName !== undefined && index === undefined)
      throw validation(`The table does not have the specified index: ${input.IndexName}`);
    if (index !== undefined && input.ConsistentRead === true)
      throw validation('Consistent reads are not supported on global secondary indexes');
    const p = new Placeholders(input.ExpressionAttributeNames, input.ExpressionAttributeValues);
    if (input.KeyConditionExpression === undefined) throw validation('KeyConditionExpression is required');
    const keyCondition = this.parse(() =>
      parseCondition(input.KeyConditionExpression ?? '', 'Invalid KeyConditionExpression'),
    );
    p.use(keyCondition);
    const filter = this.condition(input.FilterExpression, p);
    const projection = this.projection(input.ProjectionExpression, p);
    p.checkAllUsed();
    const hashDef = index?.def.hash ?? table.hash;
    const rangeDef = index === undefined ? table.range : index.def.range;
    const { hash, range } = keyConditions(keyCondition.tree, hashDef, rangeDef, p);
    const sorted =
      index === undefined
        ? table.partitions.get(keyString(hash))?.order
        : index.partitions.get(keyString(hash));
    const entries = sorted?.entries ?? [];
    const forward = input.ScanIndexForward !== false;
    // The matching entries are contiguous: find the first, walk while they match.
    const below = range === undefined ? () => false : range.below;
    let start =
      sorted === undefined ? 0 : sorted.partitionPoint((e) => e.sort !== undefined && below(e.sort));
    let end = start;
    while (
      end < entries.length &&
      (range === undefined || range.matches((entries[end] as Entry).sort as Value))
    )
      end++;
    if (input.ExclusiveStartKey !== undefined && sorted !== undefined) {
      const startKey = this.startEntry(table, index, input.ExclusiveStartKey);
      const at = sorted.lowerBound(startKey);
      const exact = at < entries.length && sorted.compare(entries[at] as Entry, startKey) === 0;
      if (forward) start = Math.max(start, exact ? at + 1 : at);
      else end = Math.min(end, at);
    }
    if (input.Limit !== undefined && input.Limit < 1) throw validation('Limit must be at least 1');
    const Items: Item[] = [];
    let scanned = 0;
    let bytes = 0;
    let last: Item | undefined;
    for (let i = forward ? start : end - 1; forward ? i < end : i >= start; i += forward ? 1 : -1) {
      const entry = entries[i] as Entry;
      const item = table.at(entry.hash, entry.range);
      if (item === undefined) continue;
      const size = table.sizeAt(entry.hash, entry.range);
      if (bytes + size > MAX_PAGE_BYTES && scanned > 0) break;
      scanned++;
      bytes += size;
      last = item;
      const visible = index === undefined ? item : index.projectItem(item, table);
      if (filter === undefined || evaluate(visible, filter.tree, p)) {
        Items.push(projection === undefined ? visible : projectChecked(visible, projection, table, index, p));
      }
      if (scanned === input.Limit) break;
    }
    // DynamoDB returns a LastEvaluatedKey whenever Limit or the 1 MB page size ended the page, even
    // when nothing follows.
    const stopped = last !== undefined && (scanned === input.Limit || scanned < end - start);
    return {
      Items: input.Select === 'COUNT' ? undefined : Items,
      Count: Items.length,
      ScannedCount: scanned,
      ...(stopped && last !== undefined && { LastEvaluatedKey: this.keyOf(table, index, last) }),
      ...capacity(table.name, input.ReturnConsumedCapacity, readUnits(bytes, input.ConsistentRead)),
    };
  }

  scan(input: ScanInput): ScanOutput {
    const table = this.table(input.TableName);
    const index = input.IndexName === undefined ? undefined : table.indexes.get(input.IndexName);
    if (input.IndexName !== undefined && index === undefined)
      throw validation(`The table does not have the specified index: ${input.IndexName}`);
    const p = new Placeholders(input.ExpressionAttributeNames, input.ExpressionAttributeValues);
    const filter = this.condition(input.FilterExpression, p);
    const projection = this.projection(input.ProjectionExpression, p);
    p.checkAllUsed();
    // The order of a scan: partitions by key, then sort order within each.
    const partitions =
      index === undefined
        ? [...table.partitions]
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([, part]) => part.order.entries)
        : [...index.partitions]
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([, part]) => part.entries);
    let all = partitions.flat();
    if (input.ExclusiveStartKey !== undefined) {
      const { hash, range } = table.primaryKey(input.ExclusiveStartKey);
      const at = all.findIndex((e) => e.hash === hash && e.range === range);
      all = at < 0 ? all : all.slice(at + 1);
    }
    const Items: Item[] = [];
    let scanned = 0;
    let bytes = 0;
    let last: Item | undefined;
    for (const entry of all) {
      const item = table.at(entry.hash, entry.range);
      if (item === undefined) continue;
      const size = table.sizeAt(entry.hash, entry.range);
      if (bytes + size > MAX_PAGE_BYTES && scanned > 0) break;
      scanned++;
      bytes += size;
      last = item;
      const visible = index === undefined ? item : index.projectItem(item, table);
      if (filter === undefined || evaluate(visible, filter.tree, p))
        Items.push(projection === undefined ? visible : project(visible, projection, p));
      if (scanned === input.Limit) break;
    }
    return {
      Items,
      Count: Items.length,
      ScannedCount: scanned,
      ...(last !== undefined && scanned < all.length && { LastEvaluatedKey: this.keyOf(table, index, last) }),
      ...capacity(table.name, input.ReturnConsumedCapacity, readUnits(bytes, input.ConsistentRead)),
    };
  }

  // -------------------------------------------------------------------------------------------------
  // Checks

  private parse<T>(parse: () => T): T {
    try {
      return parse();
    } catch (error) {
      if (error instanceof ExpressionError || error instanceof ValueError) throw validation(error.message);
      throw error;
    }
  }

  private condition(text: string | undefined, p: Placeholders): { tree: Condition } | undefined {
    if (text === undefined) return undefined;
    const parsed = this.parse(() => parseCondition(text, 'Invalid ConditionExpression'));
    this.parse(() => {
      p.use(parsed);
    });
    return parsed;
  }

  private projection(text: string | undefined, p: Placeholders): Path[] | undefined {
    if (text === undefined) return undefined;
    const parsed = this.parse(() => parseProjection(text, 'Invalid ProjectionExpression'));
    this.parse(() => {
      p.use(parsed);
    });
    return parsed.tree;
  }

  /** A PutItem's or DeleteItem's placeholders and condition, checked as DynamoDB checks them. */
  private plainWrite(input: PutItemInput | DeleteItemInput): {
    p: Placeholders;
    condition: { tree: Condition } | undefined;
  } {
    const p = new Placeholders(input.ExpressionAttributeNames, input.ExpressionAttributeValues);
    const condition = this.condition(input.ConditionExpression, p);
    p.checkAllUsed();
    if (input.ReturnValues !== undefined && input.ReturnValues !== 'NONE' && input.ReturnValues !== 'ALL_OLD')
      throw validation('ReturnValues can only be ALL_OLD or NONE');
    return { p, condition };
  }

  private check(
    condition: { tree: Condition } | undefined,
    before: Item | undefined,
    p: Placeholders,
    returnOnFailure: string | undefined,
  ): void {
    if (condition === undefined || evaluate(before, condition.tree, p)) return;
    throw new MemoryDynamoDbError(
      'ConditionalCheckFailedException',
      'The conditional request failed',
      returnOnFailure === 'ALL_OLD' ? before : undefined,
    );
  }

  private checkKeyValue(def: KeyDef, value: Value | undefined, where: string): void {
    if (value === undefined)
      throw validation(
        `One or more parameter values were invalid: Missing the key ${def.name} in the ${where}`,
      );
    if (value[def.type] === undefined)
      throw validation(
        `One or more parameter values were invalid: Type mismatch for key ${def.name} expected: ${def.type}`,
      );
    if (def.type === 'S' && value.S === '')
      throw validation(
        `One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: ${def.name}`,
      );
  }

  private checkKey(table: Table, key: Record<string, Value> | undefined): Item {
    if (key === undefined) throw validation('Key is required');
    const names = [table.hash.name, ...(table.range ? [table.range.name] : [])];
    if (Object.keys(key).length !== names.length || names.some((n) => key[n] === undefined))
      throw validation('The provided key element does not match the schema');
    this.checkKeyValue(table.hash, key[table.hash.name], 'key');
    if (table.range) this.checkKeyValue(table.range, key[table.range.name], 'key');
    return this.copy(key);
  }

  private checkItem(table: Table, item: Record<string, Value> | undefined): Item {
    if (item === undefined) throw validation('Item is required');
    this.checkKeyValue(table.hash, item[table.hash.name], 'item');
    if (table.range) this.checkKeyValue(table.range, item[table.range.name], 'item');
    const copy = this.copy(item);
    this.checkSize(copy);
    this.checkIndexKeys(table, copy);
    return copy;
  }

  private copy(item: Readonly<Record<string, Value | undefined>>): Item {
    try {
      const out: Item = {};
      for (const [name, value] of Object.entries(item))
        if (value !== undefined) out[name] = checkedCopy(value, name);
      return out;
    } catch (error) {
      if (error instanceof ValueError)
        throw validation(`One or more parameter values were invalid: ${error.message}`);
      throw error;
    }
  }

  private checkSize(item: Item): void {
    if (itemSize(item) > MAX_ITEM_BYTES) throw validation('Item size has exceeded the maximum allowed size');
  }

  private checkIndexKeys(table: Table, item: Item): void {
    for (const index of table.indexes.values()) {
      for (const def of [index.def.hash, ...(index.def.range ? [index.def.range] : [])]) {
        const value = item[def.name];
        if (value !== undefined && value[def.type] === undefined)
          throw validation(
            `One or more parameter values were invalid: Type mismatch for Index Key ${def.name} Expected: ${def.type} IndexName: ${index.def.name}`,
          );
      }
    }
  }

  private returnValues(
    mode: string | undefined,
    before: Item | undefined,
    after: Item,
    update: ReturnType<typeof parseUpdate>['tree'],
    p: Placeholders,
  ): { Attributes?: Item } {
    if (mode === undefined || mode === 'NONE') return {};
    if (mode === 'ALL_OLD') return before === undefined ? {} : { Attributes: before };
    if (mode === 'ALL_NEW') return { Attributes: after };
    const paths = [
      ...update.set.map((a) => a.path),
      ...update.remove,
      ...update.add.map((a) => a.path),
      ...update.delete.map((a) => a.path),
    ];
    const from = mode === 'UPDATED_OLD' ? before : after;
    if (from === undefined) return {};
    const attributes = project(
      from,
      paths.filter((path) => pathValue(from, path, p) !== undefined),
      p,
    );
    // As dynalite: an existing item gives Attributes, empty when none of the paths was there.
    return { Attributes: attributes };
  }

  private keyOf(table: Table, index: Index | undefined, item: Item): Item {
    const names = [table.hash.name, ...(table.range ? [table.range.name] : [])];
    if (index !== undefined)
      names.push(index.def.hash.name, ...(index.def.range ? [index.def.range.name] : []));
    const key: Item = {};
    for (const n of names) {
      const v = item[n];
      if (v !== undefined) key[n] = v;
    }
    return key;
  }

  private startEntry(table: Table, index: Index | undefined, startKey: Record<string, Value>): Entry {
    const sortDef = index === undefined ? table.range : index.def.range;
    return table.entryOf(startKey, sortDef === undefined ? undefined : startKey[sortDef.name]);
  }
}

/** The hash value and the sort key's condition of a KeyConditionExpression. */
function keyConditions(
  tree: Condition,
  hashDef: KeyDef,
  rangeDef: KeyDef | undefined,
  p: Placeholders,
): { hash: Value; range?: { below: (v: Value) => boolean; matches: (v: Value) => boolean } } {
  const parts = tree.kind === 'and' ? [tree.left, tree.right] : [tree];
  let hash: Value | undefined;
  let range: { below: (v: Value) => boolean; matches: (v: Value) => boolean } | undefined;
  const invalid = (why: string): never => {
    throw validation(`Query key condition not supported: ${why}`);
  };
  const attributeOf = (operand: { kind: string }): string | undefined =>
    operand.kind === 'path' && (operand as Path).steps.length === 1
      ? topAttribute(operand as Path, p)
      : undefined;
  const valueOf = (operand: { kind: string; placeholder?: string }): Value =>
    operand.kind === 'value' ? p.value(operand.placeholder ?? '') : invalid('the right side must be a value');
  for (const part of parts) {
    if (part.kind === 'compare' && part.op === '=' && attributeOf(part.left) === hashDef.name) {
      if (hash !== undefined) invalid('the partition key appears twice');
      hash = valueOf(part.right);
      if (hash[hashDef.type] === undefined)
        invalid(`the partition key ${hashDef.name} must be of type ${hashDef.type}`);
      continue;
    }
    if (rangeDef === undefined) return invalid('the table has no sort key');
    if (range !== undefined) invalid('the sort key appears twice');
    if (part.kind === 'compare' && part.op !== '<>' && attributeOf(part.left) === rangeDef.name) {
      const v = valueOf(part.right);
      const cmp = (x: Value): number =>
        compareValues(x, v) ?? invalid(`the sort key ${rangeDef.name} must be of type ${rangeDef.type}`);
      const op = part.op;
      range = {
        below: (x) => (op === '>' ? cmp(x) <= 0 : op === '>=' || op === '=' ? cmp(x) < 0 : false),
        matches: (x) => {
          const c = cmp(x);
          return op === '='
            ? c === 0
            : op === '<'
              ? c < 0
              : op === '<='
                ? c <= 0
                : op === '>'
                  ? c > 0
                  : c >= 0;
        },
      };
    } else if (part.kind === 'between' && attributeOf(part.operand) === rangeDef.name) {
      const low = valueOf(part.low);
      const high = valueOf(part.high);
      range = {
        below: (x) => (compareValues(x, low) ?? -1) < 0,
        matches: (x) => (compareValues(x, low) ?? -1) >= 0 && (compareValues(x, high) ?? 1) <= 0,
      };
    } else if (
      part.kind === 'function' &&
      part.name === 'begins_with' &&
      part.args[0] !== undefined &&
      attributeOf(part.args[0]) === rangeDef.name
    ) {
      const prefix = valueOf(part.args[1] ?? { kind: 'none' });
      if (prefix.S === undefined) invalid('begins_with takes a string');
      const text = prefix.S ?? '';
      range = {
        below: (x) => (compareValues(x, { S: text }) ?? -1) < 0,
        matches: (x) => x.S !== undefined && x.S.startsWith(text),
      };
    } else invalid('only partition key equality and one sort key condition are allowed');
  }
  if (hash === undefined) return invalid(`the partition key ${hashDef.name} needs an equality condition`);
  return range === undefined ? { hash } : { hash, range };
}

/** A projection of an index read: DynamoDB refuses attributes the index does not project. */
function projectChecked(
  item: Item,
  paths: readonly Path[],
  table: Table,
  index: Index | undefined,
  p: Placeholders,
): Item {
  if (index !== undefined && index.def.projection !== 'ALL') {
    const visible = new Set([
      table.hash.name,
      ...(table.range ? [table.range.name] : []),
      index.def.hash.name,
    ]);
    if (index.def.range !== undefined) visible.add(index.def.range.name);
    if (index.def.projection === 'INCLUDE') for (const a of index.def.include) visible.add(a);
    for (const path of paths) {
      const top = topAttribute(path, p);
      if (!visible.has(top))
        throw validation(
          `One or more parameter values were invalid: ${top} is not projected into index ${index.def.name}`,
        );
    }
  }
  return project(item, paths, p);
}
