// ApiHttpServer.dispatch: a request served in process exactly as over HTTP (authentication, RBAC rules,
// routing, the request log), and client-node running over it through the simulator's in-process
// HttpLibrary (local/simulate/transport.ts), with no socket.
import { ApiException, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiStore, makeKubeConfig } from '../../../local/apiserver/index.js';
import { defaultVersion } from '../../../local/apiserver/discovery.js';
import { Faults } from '../../../local/apiserver/faults.js';
import { ApiHttpServer } from '../../../local/apiserver/server.js';
import { inProcessHttpLibrary } from '../../../local/simulate/transport.js';
import { VirtualClock } from './helpers.js';

const servers: ApiHttpServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function setup() {
  const store = createApiStore({ clock: new VirtualClock() });
  const server = new ApiHttpServer({
    registry: store.registry,
    identities: [
      { name: 'admin', token: 'admin-token' },
      { name: 'reader', token: 'reader-token', rules: [{ verbs: ['get', 'list'], resources: ['nodes'] }] },
    ],
    faults: new Faults(),
    version: defaultVersion,
    defaultWatchTimeoutSeconds: 1800,
    bookmarkIntervalMs: 60_000,
    now: () => store.registry.now(),
  });
  servers.push(server);
  store.nodes.create({ metadata: { name: 'node-a' } });
  return { store, server };
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

describe('ApiHttpServer.dispatch', () => {
  it('serves a request in process and logs it under its identity', async () => {
    const { server } = setup();
    const response = await server.dispatch({
      method: 'GET',
      url: '/api/v1/nodes/node-a',
      headers: auth('admin-token'),
    });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(JSON.parse(response.body)).toMatchObject({ kind: 'Node', metadata: { name: 'node-a' } });
    expect(server.requests.at(-1)).toMatchObject({
      verb: 'get',
      resource: 'nodes',
      user: 'admin',
      code: 200,
    });
  });

  it('keeps the newest 10,000 to 20,000 requests in its log, oldest first', async () => {
    const { server } = setup();
    const get = (n: number) =>
      server.dispatch({ method: 'GET', url: `/api/v1/nodes/n-${String(n)}`, headers: auth('admin-token') });
    for (let n = 0; n < 19_999; n++) await get(n);
    expect(server.requests).toHaveLength(19_999);
    await get(19_999);
    expect(server.requests).toHaveLength(10_000);
    expect(server.requests[0]).toMatchObject({ name: 'n-10000', code: 404 });
    expect(server.requests.at(-1)).toMatchObject({ name: 'n-19999', code: 404 });
  });

  it('authenticates and authorizes as over HTTP', async () => {
    const { server } = setup();
    expect((await server.dispatch({ method: 'GET', url: '/api/v1/nodes', headers: {} })).status).toBe(401);
    const forbidden = await server.dispatch({
      method: 'DELETE',
      url: '/api/v1/nodes/node-a',
      headers: auth('reader-token'),
    });
    expect(forbidden.status).toBe(403);
    expect(JSON.parse(forbidden.body)).toMatchObject({ reason: 'Forbidden' });
  });

  it('refuses watches (in-process watchers use the registry)', async () => {
    const { server } = setup();
    const response = await server.dispatch({
      method: 'GET',
      url: '/api/v1/nodes?watch=true',
      headers: auth('admin-token'),
    });
    expect(response.status).toBe(400);
  });

  it('carries client-node calls with bodies, patches and API errors', async () => {
    const { store, server } = setup();
    const core = makeKubeConfig({ server: 'https://in-process.invalid', token: 'admin-token' }).makeApiClient(
      CoreV1Api,
    );
    const options = { httpApi: inProcessHttpLibrary(server) };
    await core.patchNode(
      { name: 'node-a', body: { metadata: { labels: { team: 'web' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch, options),
    );
    expect(store.nodes.get('node-a').metadata?.labels).toEqual({ team: 'web' });
    const list = await core.listNode({}, options);
    expect(list.items.map((n) => n.metadata?.name)).toEqual(['node-a']);
    const missing = await core.readNode({ name: 'node-b' }, options).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(ApiException);
    expect((missing as ApiException<unknown>).code).toBe(404);
  });
});
