// A cluster's first monitor passes against DynamoDB's per-partition limit:
//   npx tsx bench/partitionThrottle.ts [nodes] [registrationsPerPass ...]   (default 20000, 1000 20000)
//
// Every Nodes item of a cluster has the partition key `cluster`, and DynamoDB serves one partition at
// most 1,000 WCU/s: beyond it a write is throttled (ProvisionedThroughputExceededException, not billed),
// and the SDK retries it after a backoff. dynalite does not throttle, so a proxy in front of it does:
// each write to the Nodes table draws the units it consumed from a bucket refilled at PARTITION_WCU a
// second (holding at most BURST), and a write that finds the bucket empty is throttled. The stores are
// built as the functions build them (createDynamoDbStores' defaults: the SDK's standard retry mode, 5
// attempts, 16 writes in flight), so what this measures is the SDK's own backoff against the limit. The
// node cache is seeded directly, unthrottled (node-taints' writes to the same partition are not modelled).
//
// For each registrationsPerPass (the number of nodes: all at once, as upstream), the first pass and the
// passes after it until every node is registered, each with its wall time, write units and throttled
// writes.
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createDynamoDbStores } from '../shared/adapters/dynamodb/index.js';
import { CapacityCounter } from '../shared/adapters/dynamodb/index.js';
import { runMonitorPass, type MonitorDeps, type MonitorOutcome } from '../shared/app/monitor.js';
import { UPSTREAM_DEFAULTS, type ControllerConfig } from '../shared/config.js';
import type { Effect, ResultOf } from '../shared/domain/effects.js';
import type { LoadedState } from '../shared/ports/stores.js';
import { startDynamoDb } from '../test/helpers/dynamodb.js';
import { FakeCluster } from '../test/helpers/fakeCluster.js';
import { benchClusterPort, eksNode, seedNodeCache, steadyDigests, t0 } from './eksNodes.js';

/** DynamoDB's limit for one partition. */
const PARTITION_WCU = 1_000;
/** What the bucket holds when idle: a tenth of a second of units (DynamoDB does not say). */
const BURST = 100;

const config: ControllerConfig = { ...UPSTREAM_DEFAULTS, cluster: 'bench' };

interface ThrottlingProxy {
  readonly url: string;
  /** Writes to the throttled table admitted and refused so far. */
  readonly counts: { admitted: number; throttled: number };
  close(): Promise<void>;
}

async function body(message: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of message) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

/** A proxy to `target` that throttles writes to `table` beyond `wcu` write units a second. */
async function startThrottlingProxy(target: string, table: string, wcu: number): Promise<ThrottlingProxy> {
  const counts = { admitted: 0, throttled: 0 };
  let tokens = BURST;
  let last = performance.now();
  const refill = (): void => {
    const now = performance.now();
    tokens = Math.min(BURST, tokens + ((now - last) / 1000) * wcu);
    last = now;
  };
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    void (async () => {
      const payload = await body(req);
      const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      const throttled = WRITES.has(operation) && payload.includes(`"TableName":"${table}"`);
      if (throttled) {
        refill();
        // DynamoDB admits a write while the partition has capacity left and charges what it consumed.
        if (tokens <= 0) {
          counts.throttled++;
          res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
          res.end(
            JSON.stringify({
              __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
              message: 'The level of configured provisioned throughput for the table was exceeded.',
            }),
          );
          return;
        }
        counts.admitted++;
      }
      const forwarded = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          void (async () => {
            const answered = await body(answer);
            if (throttled && answer.statusCode === 200) {
              const consumed = (
                JSON.parse(answered.toString('utf8')) as { ConsumedCapacity?: { CapacityUnits?: number } }
              ).ConsumedCapacity?.CapacityUnits;
              refill();
              tokens -= consumed ?? 1;
            }
            res.writeHead(answer.statusCode ?? 500, answer.headers);
            res.end(answered);
          })();
        },
      );
      forwarded.end(payload);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => {
          if (error) reject(error);
          else resolve();
        });
      }),
  };
}

interface PassRow {
  readonly registered: number;
  readonly writeUnits: number;
  readonly requests: number;
  readonly throttled: number;
  readonly wallMs: number;
  readonly outcome: string;
}

async function run(nodeCount: number, registrationsPerPass: number): Promise<PassRow[]> {
  const db = await startDynamoDb(`nlc-throttle-${registrationsPerPass}`);
  let wall = t0;
  const clock = { now: () => wall };
  const nodes = Array.from({ length: nodeCount }, (_, i) => eksNode(i));
  await seedNodeCache(db.stores({ clock }), config.cluster, nodes);
  const proxy = await startThrottlingProxy(db.endpoint, db.tables.nodes, PARTITION_WCU);
  const stores = createDynamoDbStores({
    tables: db.tables,
    endpoint: proxy.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    clock,
  });
  const fake = new FakeCluster(nodes);
  const execute = <E extends Effect>(effect: E): Promise<ResultOf<E>> =>
    Promise.resolve(fake.execute(effect) as ResultOf<E>);
  const deps: MonitorDeps = {
    config,
    stores,
    cluster: benchClusterPort(execute, 'in a healthy cluster'),
    observer: { debug() {}, info() {}, warn() {}, error() {}, metric() {} },
    clock,
    registrationsPerPass,
  };
  const cache = new Map<string, LoadedState>();
  const digestAt = steadyDigests(config.cluster, nodes);

  const rows: PassRow[] = [];
  let registered = 0;
  for (
    let now = t0;
    registered < nodeCount && rows.length < 2 * Math.ceil(nodeCount / registrationsPerPass);
    now += 5_000
  ) {
    wall = now;
    const before = stores.capacity.snapshot();
    const throttledBefore = proxy.counts.throttled;
    const started = performance.now();
    let outcome: MonitorOutcome | undefined;
    let failure: string | undefined;
    try {
      outcome = await runMonitorPass(deps, digestAt(now), { cache });
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    const waiting = outcome?.kind === 'processed' ? (outcome.summary.waitingToRegister ?? 0) : undefined;
    const loaded = waiting === undefined ? await stores.controllerState.load(config.cluster) : undefined;
    const nowRegistered = loaded === undefined ? nodeCount - (waiting ?? 0) : loaded.state.knownNodes.size;
    const used = CapacityCounter.difference(stores.capacity.snapshot(), before);
    rows.push({
      registered: nowRegistered - registered,
      writeUnits: used.writeUnits,
      requests: used.requests,
      throttled: proxy.counts.throttled - throttledBefore,
      wallMs: performance.now() - started,
      outcome: failure ?? outcome?.kind ?? 'none',
    });
    registered = nowRegistered;
  }
  await proxy.close();
  stores.client.destroy();
  await db.stop();
  return rows;
}

const [nodesArg, ...limitArgs] = process.argv.slice(2);
const nodeCount = Number(nodesArg ?? 20_000);
const limits = limitArgs.length > 0 ? limitArgs.map(Number) : [1_000, nodeCount];
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
console.log(
  `Nodes partition: ${fmt(PARTITION_WCU)} WCU/s, bucket of ${fmt(BURST)} units; ${fmt(nodeCount)} nodes`,
);
for (const limit of limits) {
  const rows = await run(nodeCount, limit);
  console.log(`\n## registrationsPerPass ${fmt(limit)}`);
  console.log('| pass | registered | WRU | requests | throttled writes | wall ms | outcome |');
  console.log('|---|---|---|---|---|---|---|');
  rows.forEach((row, i) => {
    console.log(
      `| ${i + 1} | ${fmt(row.registered)} | ${fmt(row.writeUnits)} | ${fmt(row.requests)} | ${fmt(row.throttled)} | ${fmt(row.wallMs)} | ${row.outcome} |`,
    );
  });
  const total = rows.reduce((a, r) => a + r.wallMs, 0);
  const slowest = rows.reduce((a, r) => Math.max(a, r.wallMs), 0);
  console.log(`${rows.length} passes, slowest ${fmt(slowest)} ms, ${fmt(total)} ms in all`);
}
