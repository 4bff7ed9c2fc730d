// Clients of the in-memory DynamoDB (engine.ts), both in process:
//
// - memoryDynamoDbClient: a DynamoDBClient whose request handler answers DynamoDB's JSON protocol from
//   the engine. Every SDK step runs (serialization, errors parsed from `__type`), so any command and
//   any caller works as against DynamoDB's endpoint.
// - memoryDocumentClient: a DynamoDBDocumentClient over such a client that hands its own commands
//   (Get, Put, Update, Delete, Query, Scan, BatchGet, BatchWrite) to the engine directly: their values
//   are marshalled and unmarshalled with @aws-sdk/util-dynamodb as lib-dynamodb does, and nothing else
//   runs (no JSON, no HTTP, no retries: an in-memory table never throttles). This is what makes
//   `nlc simulate` fast; the engine and its answers are the same on both paths.
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  DynamoDBServiceException,
  ResourceInUseException,
  ResourceNotFoundException,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
  type TranslateConfig,
} from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall, type marshallOptions, type unmarshallOptions } from '@aws-sdk/util-dynamodb';
import { deepFreeze } from '../../shared/deepFreeze.js';
import { MemoryDynamoDb, MemoryDynamoDbError, validated } from './engine.js';

type Operation = (db: MemoryDynamoDb, input: never) => object;

/** The operations served, by DynamoDB's operation name. */
const OPERATIONS: Readonly<Record<string, Operation>> = {
  CreateTable: (db, input) => db.createTable(input),
  DescribeTable: (db, input) => db.describeTable(input),
  DeleteTable: (db, input) => db.deleteTable(input),
  ListTables: (db, input) => db.listTables(input),
  GetItem: (db, input) => db.getItem(input),
  PutItem: (db, input) => db.putItem(input),
  UpdateItem: (db, input) => db.updateItem(input),
  DeleteItem: (db, input) => db.deleteItem(input),
  BatchGetItem: (db, input) => db.batchGetItem(input),
  BatchWriteItem: (db, input) => db.batchWriteItem(input),
  Query: (db, input) => db.query(input),
  Scan: (db, input) => db.scan(input),
};

function unknownOperation(name: string): MemoryDynamoDbError {
  return new MemoryDynamoDbError(
    'UnknownOperationException',
    `The in-memory DynamoDB serves ${Object.keys(OPERATIONS).join(', ')}; not ${name}`,
  );
}

const engines = new WeakMap<object, MemoryDynamoDb>();

// ---------------------------------------------------------------------------------------------------
// DynamoDB's JSON protocol, in process

interface SdkRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
}

// Binary values travel as base64 in JSON; the engine holds bytes.
const reviveBinary = (key: string, value: unknown): unknown => {
  if (key === 'B' && typeof value === 'string') return new Uint8Array(Buffer.from(value, 'base64'));
  if (key === 'BS' && Array.isArray(value) && value.every((v) => typeof v === 'string'))
    return value.map((v: string) => new Uint8Array(Buffer.from(v, 'base64')));
  return value;
};
// Timestamps travel as epoch seconds (Date's own JSON is an ISO string).
const encodeBinary = (key: string, value: unknown): unknown =>
  value instanceof Uint8Array
    ? Buffer.from(value).toString('base64')
    : key === 'CreationDateTime' && typeof value === 'string'
      ? Date.parse(value) / 1000
      : value;

function answer(status: number, body: object): { response: object } {
  return {
    response: {
      statusCode: status,
      headers: { 'content-type': 'application/x-amz-json-1.0' },
      body: new Uint8Array(Buffer.from(JSON.stringify(body, encodeBinary))),
    },
  };
}

function handleJson(db: MemoryDynamoDb, request: SdkRequest): { response: object } {
  const target = Object.entries(request.headers).find(([k]) => k.toLowerCase() === 'x-amz-target')?.[1] ?? '';
  const name = target.slice(target.indexOf('.') + 1);
  try {
    const operation = OPERATIONS[name];
    if (operation === undefined) throw unknownOperation(name);
    const { body } = request;
    // The SDK's JSON body is a Uint8Array that warns when read as a string: take its bytes.
    const text =
      typeof body === 'string'
        ? body
        : body instanceof Uint8Array
          ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
          : '{}';
    return answer(
      200,
      validated(() => operation(db, JSON.parse(text, reviveBinary) as never)),
    );
  } catch (error) {
    if (!(error instanceof MemoryDynamoDbError)) throw error;
    return answer(error.name === 'InternalServerError' ? 500 : 400, {
      __type: `com.amazonaws.dynamodb.v20120810#${error.name}`,
      message: error.message,
      ...(error.item !== undefined && { Item: error.item }),
    });
  }
}

/**
 * A DynamoDBClient over `db` (a new empty one by default); requests never leave the process.
 *
 * @example
 * const client = memoryDynamoDbClient();
 * await client.send(new CreateTableCommand(definition));
 */
export function memoryDynamoDbClient(db: MemoryDynamoDb = new MemoryDynamoDb()): DynamoDBClient {
  const client = new DynamoDBClient({
    region: 'local',
    endpoint: 'http://memory.invalid',
    // Nothing is signed for real; fixed credentials keep the SDK from searching the environment.
    credentials: { accessKeyId: 'memory', secretAccessKey: 'memory' },
    requestHandler: { handle: (request: SdkRequest) => Promise.resolve(handleJson(db, request)) },
  });
  engines.set(client, db);
  return client;
}

// ---------------------------------------------------------------------------------------------------
// The DocumentClient's commands, straight to the engine

type Native = Record<string, unknown>;
type Wire = Record<string, AttributeValue>;

const metadata = { attempts: 1, totalRetryDelay: 0 };

function sdkError(error: MemoryDynamoDbError): Error {
  const options = { message: error.message, $metadata: { ...metadata, httpStatusCode: 400 } };
  switch (error.name) {
    case 'ConditionalCheckFailedException':
      // lib-dynamodb does not unmarshall errors: the item stays in wire form, as from DynamoDB.
      return new ConditionalCheckFailedException({
        ...options,
        ...(error.item !== undefined && { Item: error.item }),
      });
    case 'ResourceNotFoundException':
      return new ResourceNotFoundException(options);
    case 'ResourceInUseException':
      return new ResourceInUseException(options);
    default:
      return new DynamoDBServiceException({ ...options, name: error.name, $fault: 'client' });
  }
}

interface Translate {
  readonly m: (value: Native | undefined) => Wire | undefined;
  readonly u: (value: Wire | undefined) => Native | undefined;
}

function translator(config: TranslateConfig | undefined): Translate {
  // Whole records (lib-dynamodb marshalls them value by value; the result is the same).
  const mo: marshallOptions = { ...config?.marshallOptions, convertTopLevelContainer: false };
  const uo: unmarshallOptions = { ...config?.unmarshallOptions };
  // The engine answers reads with the items it keeps, which never change in place (tables.ts): the
  // native form of each is made once and shared, frozen, as DynamoDB's answers are never written to.
  // A refresh re-reads a minute of changed Nodes rows on every pass.
  const natives = new WeakMap<Wire, Native>();
  return {
    m: (value) => (value === undefined ? undefined : marshall(value, mo)),
    u: (value) => {
      if (value === undefined) return undefined;
      let native = natives.get(value);
      if (native === undefined) {
        native = deepFreeze(unmarshall(value, uo));
        natives.set(value, native);
      }
      return native;
    },
  };
}

/** `input` with its native values replaced by their wire form (the engine's input types). */
function withWire(input: object, fields: Readonly<Record<string, unknown>>): never {
  const out: Native = { ...input };
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) Reflect.deleteProperty(out, k);
    else out[k] = v;
  }
  return out as never;
}

/** Runs one DocumentClient command on the engine; undefined when `command` is not one of them. */
function runDocumentCommand(db: MemoryDynamoDb, command: unknown, t: Translate): object | undefined {
  const values = (input: { ExpressionAttributeValues?: Native }): Wire | undefined =>
    t.m(input.ExpressionAttributeValues);
  const fixItems = (items: readonly Wire[] | undefined): Native[] | undefined =>
    items?.map((i) => t.u(i) ?? {});
  if (command instanceof GetCommand) {
    const { input } = command;
    const out = db.getItem(withWire(input, { Key: t.m(input.Key) }));
    return { ...out, Item: t.u(out.Item) };
  }
  if (command instanceof PutCommand) {
    const { input } = command;
    const out = db.putItem(
      withWire(input, { Item: t.m(input.Item), ExpressionAttributeValues: values(input) }),
    );
    return { ...out, Attributes: t.u(out.Attributes) };
  }
  if (command instanceof UpdateCommand) {
    const { input } = command;
    const out = db.updateItem(
      withWire(input, { Key: t.m(input.Key), ExpressionAttributeValues: values(input) }),
    );
    return { ...out, Attributes: t.u(out.Attributes) };
  }
  if (command instanceof DeleteCommand) {
    const { input } = command;
    const out = db.deleteItem(
      withWire(input, { Key: t.m(input.Key), ExpressionAttributeValues: values(input) }),
    );
    return { ...out, Attributes: t.u(out.Attributes) };
  }
  if (command instanceof QueryCommand || command instanceof ScanCommand) {
    const input = command.input as { ExclusiveStartKey?: Native; ExpressionAttributeValues?: Native };
    const wire = withWire(input, {
      ExclusiveStartKey: t.m(input.ExclusiveStartKey),
      ExpressionAttributeValues: values(input),
    });
    const out = command instanceof QueryCommand ? db.query(wire) : db.scan(wire);
    return { ...out, Items: fixItems(out.Items), LastEvaluatedKey: t.u(out.LastEvaluatedKey) };
  }
  if (command instanceof BatchGetCommand) {
    const { input } = command;
    const RequestItems = Object.fromEntries(
      Object.entries(input.RequestItems ?? {}).map(([table, r]) => [
        table,
        { ...r, Keys: r.Keys?.map((k) => t.m(k) ?? {}) },
      ]),
    );
    const out = db.batchGetItem({ ...input, RequestItems });
    return {
      ...out,
      Responses: Object.fromEntries(
        Object.entries(out.Responses ?? {}).map(([table, items]) => [table, fixItems(items)]),
      ),
      UnprocessedKeys: {},
    };
  }
  if (command instanceof BatchWriteCommand) {
    const { input } = command;
    const RequestItems = Object.fromEntries(
      Object.entries(input.RequestItems ?? {}).map(([table, list]) => [
        table,
        list.map((r) => ({
          ...(r.PutRequest !== undefined && { PutRequest: { Item: t.m(r.PutRequest.Item) ?? {} } }),
          ...(r.DeleteRequest !== undefined && { DeleteRequest: { Key: t.m(r.DeleteRequest.Key) ?? {} } }),
        })),
      ]),
    );
    return { ...db.batchWriteItem({ ...input, RequestItems }), UnprocessedItems: {} };
  }
  return undefined;
}

/**
 * A DocumentClient over a memoryDynamoDbClient: its own commands go to the engine directly; any other
 * command (a low-level one) takes the client's usual path.
 *
 * @example
 * const doc = memoryDocumentClient(memoryDynamoDbClient(), { marshallOptions: { removeUndefinedValues: true } });
 * await doc.send(new PutCommand({ TableName: 't', Item: { k: 'a' } }));
 */
export function memoryDocumentClient(
  client: DynamoDBClient,
  config?: TranslateConfig,
): DynamoDBDocumentClient {
  const db = engines.get(client);
  if (db === undefined) throw new TypeError('memoryDocumentClient: the client is not a memoryDynamoDbClient');
  const doc = DynamoDBDocumentClient.from(client, config);
  const t = translator(config);
  const send = doc.send.bind(doc) as (command: unknown, options?: unknown) => Promise<unknown>;
  const direct = (command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown> => {
    if (options?.abortSignal?.aborted === true) {
      const aborted = new Error('Request aborted');
      aborted.name = 'AbortError';
      return Promise.reject(aborted);
    }
    let output: object | undefined;
    try {
      output = validated(() => runDocumentCommand(db, command, t));
    } catch (error) {
      return Promise.reject(error instanceof MemoryDynamoDbError ? sdkError(error) : (error as Error));
    }
    if (output === undefined) return send(command, options);
    const clean = Object.fromEntries(Object.entries(output).filter(([, v]) => v !== undefined));
    return Promise.resolve({ ...clean, $metadata: { ...metadata, httpStatusCode: 200 } });
  };
  Object.defineProperty(doc, 'send', { value: direct, writable: true, configurable: true });
  return doc;
}

/** The engine behind a memoryDynamoDbClient (undefined for any other client). */
export function engineOf(client: DynamoDBClient): MemoryDynamoDb | undefined {
  return engines.get(client);
}

export { MemoryDynamoDb } from './engine.js';
