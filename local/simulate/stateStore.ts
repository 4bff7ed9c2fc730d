// The simulator's state store: the real DynamoDB adapter (shared/adapters/dynamodb) against dynalite, a
// DynamoDB-compatible server kept in memory, with the five tables created from the adapter's own
// definitions. Every request is awaited by the service that makes it, so the simulation is
// deterministic.
//
// The SDK client hands each request to dynalite's own request handler in process (inProcessDynalite)
// instead of a loopback socket: the requests, their JSON and dynalite's answers are the same, without a
// socket, an HTTP parser and the TCP round trip on both sides, which were a third of a large run's time
// (5,000 nodes make about a million requests in 15 minutes). The server still listens on 127.0.0.1
// (`endpoint`), so a person can look at the tables while a run is paused in a debugger.
//
// dynalite is a development dependency: `nlc simulate` runs from a checkout (`npm run simulate`).
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import {
  createDynamoDbStores,
  tableDefinitions,
  tableNamesWithPrefix,
  type DynamoDbStores,
  type TableNames,
} from '../../shared/adapters/dynamodb/index.js';
import type { Clock } from '../../shared/ports/clock.js';

// dynalite ships no types; this is the part of its API used here.
type Dynalite = (options: {
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
}) => Server;

type RequestHandler = Extract<NonNullable<DynamoDBClientConfig['requestHandler']>, { handle: unknown }>;
/** The parts of the SDK's HttpRequest read here (a JSON POST: DynamoDB's protocol). */
interface SdkRequest {
  readonly method: string;
  readonly path: string;
  readonly query?: Readonly<Record<string, string | readonly string[] | null>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
}

/** The shape of a SigV4 Authorization header: what dynalite checks for. */
const UnsignedAuthorization =
  'AWS4-HMAC-SHA256 Credential=simulate/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0';

/** What dynalite's request listener reads from a request and writes to a response. */
type Listener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * The SDK's HTTP handler for `server`: each request goes to dynalite's request listener as a request
 * object that emits its body, and its answer comes back from a response object that collects it.
 */
function inProcessDynalite(server: Server): RequestHandler {
  const [first] = server.listeners('request');
  const listener = first as Listener | undefined;
  if (listener === undefined) throw new TypeError('dynalite: the server has no request listener');
  const handle = (request: SdkRequest): Promise<{ response: unknown }> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = {
        authorization: UnsignedAuthorization,
        'x-amz-date': '20260101T000000Z',
      };
      for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
      const query = new URLSearchParams(
        Object.entries(request.query ?? {}).flatMap(([k, v]) =>
          v === null ? [] : (typeof v === 'string' ? [v] : v).map((x): [string, string] => [k, x]),
        ),
      ).toString();
      const body: unknown = request.body;
      // The SDK's JSON body is a Uint8Array that warns when read as a string: take its bytes.
      const bytes =
        typeof body === 'string'
          ? Buffer.from(body)
          : body instanceof Uint8Array
            ? Buffer.from(body.buffer, body.byteOffset, body.byteLength)
            : undefined;
      if (body !== undefined && body !== null && bytes === undefined) {
        reject(new TypeError('in-process DynamoDB: a streamed request body is not supported'));
        return;
      }
      const incoming = Object.assign(new EventEmitter(), {
        method: request.method,
        url: `${request.path}${query === '' ? '' : `?${query}`}`,
        headers,
      });
      const responseHeaders: Record<string, string> = {};
      const outgoing = {
        statusCode: 200,
        contentType: '',
        setHeader(name: string, value: string | number): void {
          responseHeaders[name.toLowerCase()] = String(value);
        },
        end(data?: string | Buffer): void {
          resolve({
            response: {
              statusCode: outgoing.statusCode,
              headers: responseHeaders,
              // Bytes, not a stream: the SDK reads a Uint8Array body as it is (no stream to drain).
              body: data === undefined ? new Uint8Array() : Buffer.from(data),
            },
          });
        },
      };
      listener(incoming as unknown as IncomingMessage, outgoing as unknown as ServerResponse);
      if (bytes !== undefined) incoming.emit('data', bytes);
      incoming.emit('end');
    });
  return { handle };
}

// dynalite's value and key streams close their level iterator on destroy through `iterator.return()`,
// which abstract-level's iterators do not have (they have `close()`): every Query's iterator stayed
// open, and an open memory-level iterator pins the tree as it was, so every superseded item stayed in
// memory (about 100 MB at 1,000 nodes in 15 minutes). Giving the iterators `return` lets the streams
// close them as dynalite meant.
interface LevelIteratorClass {
  readonly prototype: { close(): Promise<void>; return?: () => Promise<void> };
}
function closeDynaliteIterators(): void {
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  const fromMemoryLevel = createRequire(fromDynalite.resolve('memory-level'));
  const level = fromMemoryLevel('abstract-level') as Record<string, LevelIteratorClass | undefined>;
  for (const name of ['AbstractIterator', 'AbstractKeyIterator', 'AbstractValueIterator']) {
    const iterator = level[name];
    if (iterator === undefined) throw new TypeError(`in-process DynamoDB: abstract-level has no ${name}`);
    iterator.prototype.return ??= function (this: { close(): Promise<void> }) {
      return this.close();
    };
  }
}

// memory-level keeps each item as the Buffer abstract-level encoded it into, a slice of Node's shared
// 8 KiB allocation pool: one live item pins its whole pool slab, so a table of small items held about
// 8 KiB per item. Stored items get a buffer of their own (same bytes, same order).
interface MemoryLevelClass {
  readonly prototype: {
    _put: (this: unknown, key: unknown, value: unknown, options: unknown) => Promise<void>;
    _batch: (
      this: unknown,
      operations: readonly { key: unknown; value?: unknown }[],
      options: unknown,
    ) => Promise<void>;
  };
}
const unpooled = (value: unknown): unknown => {
  if (!Buffer.isBuffer(value) || value.byteLength === value.buffer.byteLength) return value;
  const own = Buffer.allocUnsafeSlow(value.byteLength);
  value.copy(own);
  return own;
};
const ownBuffersPatched = new WeakSet<object>();
function storeOwnBuffers(): void {
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  const { MemoryLevel } = fromDynalite('memory-level') as { MemoryLevel: MemoryLevelClass };
  const proto = MemoryLevel.prototype;
  if (ownBuffersPatched.has(proto)) return;
  ownBuffersPatched.add(proto);
  const { _put: put, _batch: batch } = proto;
  proto._put = function (key, value, options) {
    return put.call(this, unpooled(key), unpooled(value), options);
  };
  proto._batch = function (operations, options) {
    const own = operations.map((op) =>
      op.value === undefined
        ? { ...op, key: unpooled(op.key) }
        : { ...op, key: unpooled(op.key), value: unpooled(op.value) },
    );
    return batch.call(this, own, options);
  };
}

export interface SimulatedStateStore {
  readonly stores: DynamoDbStores;
  readonly tables: TableNames;
  readonly endpoint: string;
  close(): Promise<void>;
}

/**
 * Starts dynalite and returns the state stores over it, on `clock` (the stores stamp update times and
 * TTLs with it: the virtual clock keeps them in scenario time).
 *
 * @example
 * const state = await startStateStore(scheduler);
 * await state.stores.controllerState.load('default');
 * await state.close();
 */
export async function startStateStore(clock: Clock, prefix = 'nlc-simulate'): Promise<SimulatedStateStore> {
  const dynalite = createRequire(import.meta.url)('dynalite') as Dynalite;
  closeDynaliteIterators();
  storeOwnBuffers();
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  // A local server takes any credentials; fixed ones keep the SDK from searching the environment.
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'simulate', secretAccessKey: 'simulate' },
    requestHandler: inProcessDynalite(server),
    // dynalite checks that a request carries a signature, not the signature itself: a fixed one
    // (inProcessDynalite) saves the HMACs of every request.
    httpAuthSchemes: [
      {
        schemeId: 'aws.auth#sigv4',
        identityProvider: () => () =>
          Promise.resolve({
            accessKeyId: 'simulate',
            secretAccessKey: 'simulate',
            expiration: new Date(8.64e15),
          }),
        signer: { sign: (request) => Promise.resolve(request) },
      },
    ],
  });
  // What the in-process server has no use for, each paid on every request (about a million in a large
  // run): the logger's redaction of every input and output (computed even for the no-op logger), the
  // user agent, host, length and trace-id headers, and the retry strategy's per-request token and
  // invocation id (dynalite in process neither throttles nor fails transiently; its answers are the same).
  for (const name of [
    'loggerMiddleware',
    'getUserAgentMiddleware',
    'hostHeaderMiddleware',
    'contentLengthMiddleware',
    'recursionDetectionMiddleware',
    'retryMiddleware',
    // The signer is the fixed no-op above; inProcessDynalite adds the Authorization header.
    'httpSigningMiddleware',
  ]) {
    if (!client.middlewareStack.remove(name))
      throw new TypeError(`in-process DynamoDB: no SDK middleware ${name}`);
  }
  const close = async (): Promise<void> => {
    client.destroy();
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  };
  try {
    const tables = tableNamesWithPrefix(prefix);
    const definitions = Object.values(tableDefinitions(tables));
    for (const table of definitions) await client.send(new CreateTableCommand(table.create));
    for (const table of definitions) {
      // dynalite makes a table ACTIVE on a later tick even with createTableMs 0.
      for (let i = 0; i < 1000; i++) {
        const described = await client.send(new DescribeTableCommand({ TableName: table.create.TableName }));
        if (described.Table?.TableStatus === 'ACTIVE') break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return { stores: createDynamoDbStores({ tables, client, clock }), tables, endpoint, close };
  } catch (error) {
    await close();
    throw error;
  }
}
