// Bearer-token authentication, per-identity rules (RBAC mistakes surface as 403), and each kind of
// injected fault, seen through @kubernetes/client-node.
import { CoreV1Api, Watch } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Sim, rawRequest, startSim, statusOf, waitFor } from './helpers.js';

let sim: Sim;

beforeEach(async () => {
  sim = await startSim({
    identities: [
      {
        name: 'system:serviceaccount:nlc:relay',
        token: 'relay-token',
        rules: [
          { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['nodes', 'pods'] },
          {
            verbs: ['get', 'list', 'watch'],
            apiGroups: ['coordination.k8s.io'],
            resources: ['leases'],
            namespaces: ['kube-node-lease'],
          },
        ],
      },
      {
        name: 'system:serviceaccount:nlc:controller',
        token: 'controller-token',
        rules: [{ verbs: ['get', 'patch', 'update'], apiGroups: [''], resources: ['nodes/status'] }],
      },
    ],
  });
  sim.api.store.nodes.create({ metadata: { name: 'node-a' } });
});

afterEach(async () => {
  await sim.api.close();
});

const as = (token: string) => sim.api.kubeConfig(token).makeApiClient(CoreV1Api);

describe('authentication', () => {
  it('answers 401 with an Unauthorized Status without a token', async () => {
    const response = await rawRequest(sim.api, '/api/v1/nodes');
    expect(response.code).toBe(401);
    expect(JSON.parse(response.body)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    });
  });

  it('answers 401 for an unknown token, through client-node too', async () => {
    expect((await rawRequest(sim.api, '/api/v1/nodes', { token: 'wrong' })).code).toBe(401);
    expect(await statusOf(as('wrong').listNode())).toMatchObject({ code: 401 });
  });

  it('serves /version without credentials, as system:public-info-viewer allows', async () => {
    const kc = sim.api.kubeConfig('wrong');
    const { VersionApi } = await import('@kubernetes/client-node');
    expect(await kc.makeApiClient(VersionApi).getCode()).toMatchObject({ gitVersion: 'v1.33.0' });
  });
});

describe('per-identity rules', () => {
  it('allows what the rules grant', async () => {
    expect((await as('relay-token').listNode()).items).toHaveLength(1);
  });

  it('answers 403 with the RBAC message for a verb the identity lacks', async () => {
    const status = await statusOf(
      as('relay-token').patchNode({
        name: 'node-a',
        body: [{ op: 'add', path: '/metadata/labels', value: {} }],
      }),
    );
    expect(status).toMatchObject({
      reason: 'Forbidden',
      code: 403,
      message:
        'nodes "node-a" is forbidden: User "system:serviceaccount:nlc:relay" cannot patch resource "nodes" in API group "" at the cluster scope',
      details: { name: 'node-a', kind: 'nodes' },
    });
  });

  it('treats a subresource as its own resource', async () => {
    const controller = as('controller-token');
    await controller.patchNodeStatus({
      name: 'node-a',
      body: [{ op: 'add', path: '/status', value: { phase: 'Running' } }],
    });
    const status = await statusOf(
      controller.patchNode({
        name: 'node-a',
        body: [{ op: 'add', path: '/spec/unschedulable', value: true }],
      }),
    );
    expect(status.message).toContain('cannot patch resource "nodes" in API group ""');
  });

  it('limits a rule to its namespaces', async () => {
    const { CoordinationV1Api } = await import('@kubernetes/client-node');
    const leases = sim.api.kubeConfig('relay-token').makeApiClient(CoordinationV1Api);
    expect((await leases.listNamespacedLease({ namespace: 'kube-node-lease' })).items).toEqual([]);
    const status = await statusOf(leases.listNamespacedLease({ namespace: 'default' }));
    expect(status.message).toBe(
      'leases.coordination.k8s.io is forbidden: User "system:serviceaccount:nlc:relay" cannot list resource "leases" in API group "coordination.k8s.io" in the namespace "default"',
    );
  });
});

describe('fault injection', () => {
  it('holds matching requests until released, serving the others meanwhile', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    sim.api.faults.inject({ kind: 'delay', until: gate, match: { verb: 'get', name: 'node-a' }, times: 1 });
    let delayedDone = false;
    const delayed = sim.core.readNode({ name: 'node-a' }).then((node) => {
      delayedDone = true;
      return node;
    });
    await waitFor(() => sim.api.faults.pending() === 1, 'the get to be held');
    expect((await sim.core.listNode()).items).toHaveLength(1);
    expect(delayedDone).toBe(false);
    release();
    expect((await delayed).metadata?.name).toBe('node-a');
  });

  it('delays matching requests by a real-time duration', async () => {
    sim.api.faults.inject({ kind: 'delay', ms: 20, match: { verb: 'get' }, times: 1 });
    expect((await sim.core.readNode({ name: 'node-a' })).metadata?.name).toBe('node-a');
    expect(sim.api.requests.map((r) => r.verb)).toEqual(['get']);
  });

  it('answers 409 Conflict', async () => {
    sim.api.faults.inject({ kind: 'conflict', match: { verb: 'patch', resource: 'nodes' }, times: 1 });
    const patch = () =>
      sim.core.patchNode({
        name: 'node-a',
        body: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }],
      });
    expect(await statusOf(patch())).toMatchObject({
      reason: 'Conflict',
      code: 409,
      details: { name: 'node-a', kind: 'nodes' },
    });
    expect((await patch()).metadata?.labels).toEqual({ a: 'b' }); // `times: 1` used up
  });

  it('answers 429 with Retry-After', async () => {
    sim.api.faults.inject({ kind: 'tooManyRequests', retryAfterSeconds: 7, match: { verb: 'list' } });
    const status = await statusOf(sim.core.listNode());
    expect(status).toMatchObject({
      reason: 'TooManyRequests',
      code: 429,
      message: 'Too many requests, please try again later.',
      details: { retryAfterSeconds: 7 },
    });
    expect(status.headers['retry-after']).toBe('7');
  });

  it('answers 500 until cleared', async () => {
    sim.api.faults.inject({ kind: 'internalError', message: 'etcdserver: request timed out' });
    expect(await statusOf(sim.core.readNode({ name: 'node-a' }))).toMatchObject({
      reason: 'InternalError',
      code: 500,
      message: 'Internal error occurred: etcdserver: request timed out',
    });
    sim.api.faults.clear();
    expect((await sim.core.readNode({ name: 'node-a' })).metadata?.name).toBe('node-a');
  });

  it('a removed rule stops applying', async () => {
    const remove = sim.api.faults.inject({ kind: 'internalError', match: { user: 'kubernetes-admin' } });
    expect((await statusOf(sim.core.listNode())).code).toBe(500);
    remove();
    expect((await sim.core.listNode()).items).toHaveLength(1);
  });

  it('drops a watch stream after the given number of events', async () => {
    sim.api.faults.inject({ kind: 'dropWatch', afterEvents: 1, mode: 'reset', match: { resource: 'nodes' } });
    const seen: string[] = [];
    const done: unknown[] = [];
    await new Watch(sim.api.kubeConfig()).watch(
      '/api/v1/nodes',
      {},
      (type) => seen.push(type),
      (err) => done.push(err),
    );
    await waitFor(() => done.length === 1, 'the cut');
    expect(seen).toEqual(['ADDED']);
    expect(done[0]).toBeInstanceOf(Error);
  });

  it('records every request for counting', async () => {
    await sim.core.listNode();
    await sim.core.readNode({ name: 'node-a' });
    expect(sim.api.requests.map((r) => [r.verb, r.resource, r.code])).toEqual([
      ['list', 'nodes', 200],
      ['get', 'nodes', 200],
    ]);
  });
});
