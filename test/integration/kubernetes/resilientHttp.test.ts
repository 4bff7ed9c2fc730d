// The cluster adapter's HTTP behaviour (timeouts, retries, aborts) against a scripted HTTP server on
// 127.0.0.1: the failure modes a Kubernetes API simulator does not produce on purpose (a server that
// never answers, a refused connection). Waits between retries are recorded, not slept.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKubernetesCluster } from '../../../shared/adapters/kubernetes/cluster.js';
import type { RetryNotice } from '../../../shared/adapters/kubernetes/resilientHttp.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const nodeJson = JSON.stringify({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'node-a', uid: 'u', resourceVersion: '1', creationTimestamp: '2024-01-01T00:00:00Z' },
});

function status(res: ServerResponse, code: number, headers: Record<string, string> = {}): ServerResponse {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  return res.end(
    JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code,
      message: `scripted ${code}`,
    }),
  );
}

let server: Server;
let port: number;
let script: Handler[] = [];
let requests = 0;
let connections = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    const handler = script.shift();
    if (handler === undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(nodeJson);
      return;
    }
    handler(req, res);
  });
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterEach(() => {
  script = [];
  requests = 0;
  connections = 0;
  // Hanging requests of a test must not outlive it.
  server.closeAllConnections();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => {
    server.close((e) => {
      if (e) reject(e);
      else resolve();
    });
  });
});

function cluster(
  serverPort: number,
  maxAttempts = 3,
  throttle?: { readonly qps: number; readonly burst: number },
) {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${serverPort}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const waits: number[] = [];
  const retries: RetryNotice[] = [];
  const port = createKubernetesCluster(kc, {
    requestTimeoutMs: 300,
    retry: { maxAttempts, baseDelayMs: 200, maxDelayMs: 1000, maxRetryAfterMs: 5000 },
    clock: { now: () => Date.parse('2024-05-01T10:00:00Z') },
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
    random: () => 0,
    onRetry: (notice) => retries.push(notice),
    // A frozen clock: every wait the throttle asks for is its own, not eaten by real time passing.
    ...(throttle !== undefined && { throttle: { ...throttle, now: () => 0 } }),
  });
  return { port, waits, retries };
}

describe('timeouts', () => {
  it('gives up on a server that never answers after the retry budget, naming the node', async () => {
    script = [() => undefined, () => undefined, () => undefined];
    const { port: c, retries } = cluster(port, 3);
    const result = await c.getNode('node-a');
    expect(result).toEqual({
      ok: false,
      reason: 'Failed',
      message: 'get node "node-a": GET /api/v1/nodes/node-a: no response within 300 ms (3 attempts)',
    });
    expect(requests).toBe(3);
    expect(retries.map((r) => r.cause)).toEqual(['timeout', 'timeout']);
  });

  it('recovers when a later attempt answers', async () => {
    script = [() => undefined];
    const { port: c } = cluster(port);
    const result = await c.getNode('node-a');
    expect(result.ok).toBe(true);
    expect(requests).toBe(2);
  });
});

describe('retries', () => {
  it('retries 5xx with capped exponential backoff, then succeeds', async () => {
    script = [(_, res) => status(res, 503), (_, res) => status(res, 500)];
    const { port: c, waits, retries } = cluster(port);
    expect((await c.getNode('node-a')).ok).toBe(true);
    expect(retries.map((r) => r.cause)).toEqual([503, 500]);
    expect(waits).toEqual([100, 200]);
  });

  it('honours Retry-After on 429', async () => {
    script = [(_, res) => status(res, 429, { 'retry-after': '2' })];
    const { port: c, waits } = cluster(port);
    expect((await c.getNode('node-a')).ok).toBe(true);
    expect(waits).toEqual([2000]);
  });

  it('does not wait for a Retry-After beyond the cap: the call fails at once', async () => {
    script = [(_, res) => status(res, 429, { 'retry-after': '60' })];
    const { port: c, waits } = cluster(port);
    expect(await c.getNode('node-a')).toEqual({
      ok: false,
      reason: 'Failed',
      message: 'get node "node-a": HTTP 429: scripted 429',
    });
    expect(waits).toEqual([]);
  });

  it('never retries other 4xx', async () => {
    script = [(_, res) => status(res, 403)];
    const { port: c } = cluster(port);
    expect(await c.getNode('node-a')).toEqual({
      ok: false,
      reason: 'Failed',
      message: 'get node "node-a": HTTP 403: scripted 403',
    });
    expect(requests).toBe(1);
  });

  it('fails after the budget on a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => {
      closed.close(() => {
        resolve();
      });
    });
    const { port: c, retries } = cluster(closedPort, 2);
    const result = await c.getNode('node-a');
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(
      /^get node "node-a": GET \/api\/v1\/nodes\/node-a: .*ECONNREFUSED.* \(2 attempts\)$/,
    );
    expect(retries.map((r) => r.cause)).toEqual(['network']);
  });
});

describe('the client-side rate limit (kubeApiQps, kubeApiBurst)', () => {
  it('sends the burst at once, then one request per 1/qps, each retry waiting its turn too', async () => {
    script = [(_, res) => status(res, 503)];
    const { port: c, waits, retries } = cluster(port, 3, { qps: 10, burst: 2 });
    for (let i = 0; i < 3; i++) expect((await c.getNode('node-a')).ok).toBe(true);
    // Attempts: #1 (503) and its retry are the burst; the retry's backoff (100 ms) is not a token.
    // Then calls 2 and 3, 100 ms and 200 ms of debt on a frozen clock.
    expect(retries.map((r) => r.cause)).toEqual([503]);
    expect(waits.map((w) => Math.round(w))).toEqual([100, 100, 200]);
    expect(requests).toBe(4);
  });

  it('is not there unless configured: no waits without retries', async () => {
    const { port: c, waits } = cluster(port);
    for (let i = 0; i < 40; i++) expect((await c.getNode('node-a')).ok).toBe(true);
    expect(waits).toEqual([]);
  });
});

describe('connections', () => {
  it('reuses one keep-alive connection across calls (client-node alone opens one per request)', async () => {
    const { port: c } = cluster(port);
    for (let i = 0; i < 3; i++) expect((await c.getNode('node-a')).ok).toBe(true);
    expect(requests).toBe(3);
    expect(connections).toBe(1);
  });
});

describe('the caller signal', () => {
  it('aborts a hanging request at once, without retrying', async () => {
    script = [() => undefined];
    const { port: c, retries } = cluster(port);
    const controller = new AbortController();
    const pending = c.getNode('node-a', { signal: controller.signal });
    // Abort once the server has the request.
    await expect.poll(() => requests, { timeout: 5000 }).toBe(1);
    controller.abort();
    expect(await pending).toEqual({
      ok: false,
      reason: 'Failed',
      message: 'get node "node-a": GET /api/v1/nodes/node-a: aborted by the caller (1 attempt)',
    });
    expect(retries).toEqual([]);
  });

  it('sends nothing when already aborted', async () => {
    const { port: c } = cluster(port);
    const result = await c.getNode('node-a', { signal: AbortSignal.abort() });
    expect(result.ok).toBe(false);
    expect(requests).toBe(0);
  });
});
