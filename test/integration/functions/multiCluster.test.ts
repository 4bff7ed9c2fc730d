// One deployment serving two clusters, through the real handlers (functions/shell.ts, the dispatch and
// the services): NLC_CLUSTERS names both, each with its own kubeconfig (two API simulators) and its own
// settings, over one set of tables. Digests of the two clusters pass concurrently; a digest of a cluster
// whose pass lease is held is a no-op until the lease expires; a schedule's tick covers every cluster,
// one whose credentials cannot be read failing alone (and built again at the next tick); an unserved
// cluster is refused before any I/O.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeDetail, HeartbeatDigestDetailType, type HeartbeatDigest } from '../../../shared/events.js';
import { heartbeatDigestBytes, splitDigest } from '../../../shared/heartbeatDigest.js';
import { logger } from '../../../shared/observability.js';
import { startFakeLambda, type FakeLambda } from './fakeLambda.js';
import { lambdaContext, stubHandlerEnv } from './handlerEnv.js';
import { startWorld, t0, testConfig, type World } from './world.js';

let alpha: World;
let beta: World;
let gamma: World;
let lambda: FakeLambda;
let dir: string;
let monitor: typeof import('../../../functions/monitorNodeHealth.js').handler;
const errors: unknown[][] = [];
const infos: unknown[][] = [];

function eventBridge(detailType: string, source: string, detail: unknown) {
  return {
    version: '0',
    id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
    'detail-type': detailType,
    source,
    account: '123456789012',
    time: '2026-03-02T09:00:00Z',
    region: 'us-east-1',
    resources:
      source === 'aws.events' ? ['arn:aws:events:us-east-1:123456789012:rule/nlc-test-schedule'] : [],
    detail,
  };
}
const digestEvent = (digest: HeartbeatDigest) =>
  eventBridge(
    HeartbeatDigestDetailType,
    'nlc.relay',
    encodeDetail({ detailType: HeartbeatDigestDetailType, detail: digest }),
  );

/** One Lambda invocation: its own request id (the pass lease's holder). */
let invocations = 0;
const invoke = (event: unknown) => {
  const context: Context = { ...lambdaContext(), awsRequestId: `request-${++invocations}` };
  return monitor(event as never, context);
};

const probesOf = (world: World, at: number) =>
  Object.fromEntries(world.api.store.nodes.list().items.map((n) => [n.metadata?.name ?? '', at - 1_000]));
const digestOf = (world: World, sequence: number, at = t0) => world.digest(sequence, at, probesOf(world, at));

beforeAll(async () => {
  alpha = await startWorld(testConfig({ cluster: 'alpha' }));
  beta = await startWorld(testConfig({ cluster: 'beta' }));
  gamma = await startWorld(testConfig({ cluster: 'gamma' }));
  lambda = await startFakeLambda();
  dir = await mkdtemp(join(tmpdir(), 'nlc-multi-'));
  await alpha.api.writeKubeconfig(join(dir, 'alpha'));
  await beta.api.writeKubeconfig(join(dir, 'beta'));
  // One deployment: alpha's tables serve both clusters.
  stubHandlerEnv(alpha, lambda, join(dir, 'alpha'));
  vi.stubEnv('NLC_KUBECONFIG', '');
  vi.stubEnv(
    'NLC_CLUSTERS',
    JSON.stringify({
      alpha: { credentials: { kind: 'kubeconfigFile', path: join(dir, 'alpha') }, mode: 'active' },
      beta: {
        credentials: { kind: 'kubeconfigFile', path: join(dir, 'beta') },
        mode: 'shadow',
        settings: { nodeMonitorGracePeriod: '60s' },
      },
      // Its kubeconfig is written only later: its runtime fails to build until then.
      gamma: { credentials: { kind: 'kubeconfigFile', path: join(dir, 'gamma') } },
    }),
  );
  vi.spyOn(logger, 'info').mockImplementation((...args: unknown[]) => {
    infos.push(args);
  });
  vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
  vi.spyOn(logger, 'debug').mockImplementation(() => undefined);
  vi.spyOn(logger, 'error').mockImplementation((...args: unknown[]) => {
    errors.push(args);
  });
  vi.spyOn(console, 'log').mockImplementation(() => undefined);
  vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  ({ handler: monitor } = await import('../../../functions/monitorNodeHealth.js'));
  for (const name of ['a-1', 'a-2', 'a-3']) alpha.addNode(name);
  for (const name of ['b-1', 'b-2']) beta.addNode(name);
  await alpha.syncNodeCache();
  // What node-taints does for beta's Node Changed: beta's nodes in the shared tables, under beta.
  const listed = await beta.cluster.listNodes();
  if (!listed.ok) throw new Error(listed.message);
  for (const node of listed.value) await alpha.stores.nodes.putNode('beta', node);
});

afterAll(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await alpha.close();
  await beta.close();
  await gamma.close();
  await lambda.close();
  await rm(dir, { recursive: true, force: true });
});

describe('one deployment, two clusters', () => {
  it('passes digests of both clusters concurrently, each against its own API server and settings', async () => {
    const [alphaMark, betaMark] = [alpha.api.requests.length, beta.api.requests.length];
    await Promise.all([invoke(digestEvent(digestOf(alpha, 1))), invoke(digestEvent(digestOf(beta, 1)))]);
    const stores = alpha.stores;
    expect(await stores.controllerState.loadMeta('alpha')).toMatchObject({ lastSequence: 1, dryRun: false });
    expect(await stores.controllerState.loadMeta('beta')).toMatchObject({
      lastSequence: 1,
      dryRun: true,
      nodeMonitorGracePeriodMs: 60_000,
    });
    expect([...(await stores.controllerState.load('alpha')).state.knownNodes.keys()]).toEqual([
      'a-1',
      'a-2',
      'a-3',
    ]);
    expect([...(await stores.controllerState.load('beta')).state.knownNodes.keys()]).toEqual(['b-1', 'b-2']);
    // Each cluster's reads went to its own API server (the Lease of its relay, the nodes it registered).
    expect(alpha.requestsSince(alphaMark).length).toBeGreaterThan(0);
    expect(beta.requestsSince(betaMark).length).toBeGreaterThan(0);
    expect(beta.writesSince(betaMark)).toEqual([]); // shadow: nothing written to beta
  });

  it('a digest of a cluster whose pass is running is a no-op; the other cluster passes; an expired lease is taken over', async () => {
    const stores = alpha.stores;
    const now = Date.now();
    await stores.passLease.acquire('alpha', { holder: 'running-pass', until: now + 60_000, now });
    const mark = alpha.api.requests.length;
    await Promise.all([
      invoke(digestEvent(digestOf(alpha, 2, t0 + 5_000))),
      invoke(digestEvent(digestOf(beta, 2, t0 + 5_000))),
    ]);
    expect((await stores.controllerState.loadMeta('alpha')).lastSequence).toBe(1);
    expect((await stores.controllerState.loadMeta('beta')).lastSequence).toBe(2);
    expect(alpha.requestsSince(mark)).toEqual([]);
    expect(infos).toContainEqual([
      'a pass of this cluster is running: digest skipped, the next one follows',
      expect.objectContaining({ cluster: 'alpha', holder: 'running-pass' }),
    ]);

    // The next holder died: its lease ran out at its deadline, and the next digest takes it over.
    await stores.passLease.release('alpha', 'running-pass');
    const earlier = Date.now() - 60_000;
    await stores.passLease.acquire('alpha', { holder: 'dead-pass', until: Date.now() - 1, now: earlier });
    await invoke(digestEvent(digestOf(alpha, 3, t0 + 10_000)));
    expect((await stores.controllerState.loadMeta('alpha')).lastSequence).toBe(3);
  });

  it('the parts of a split digest, delivered at once, wait for each other’s lease instead of being dropped', async () => {
    const whole = digestOf(beta, 4, t0 + 15_000);
    // Two parts: the whole less a little (beta has two nodes, so a part holds one probe).
    const parts = splitDigest(whole, heartbeatDigestBytes(whole) - 1);
    expect(parts.length).toBeGreaterThan(1);
    await Promise.all(parts.map((part) => invoke(digestEvent(part))));
    expect((await alpha.stores.controllerState.loadMeta('beta')).lastSequence).toBe(4);
  });

  it('the schedule’s tick checks every cluster and starts each one’s drainer; one failing stops no other', async () => {
    const tick = () => invoke(eventBridge('Scheduled Event', 'aws.events', {}));
    const drained = (from: number) =>
      lambda.invokes
        .slice(from)
        .map((i) => (i.payload as { cluster: string }).cluster)
        .sort();
    let before = lambda.invokes.length;
    // gamma's credentials cannot be read yet: the tick fails for it, after the others ran.
    await expect(tick()).rejects.toThrow(/gamma|kubeconfig/);
    expect(drained(before)).toEqual(['alpha', 'beta']);
    expect(errors).toContainEqual([
      'scheduled run failed for a cluster',
      expect.objectContaining({ cluster: 'gamma' }),
    ]);
    // A failed build is not kept: once the kubeconfig exists, the next tick serves gamma too.
    await gamma.api.writeKubeconfig(join(dir, 'gamma'));
    before = lambda.invokes.length;
    await tick();
    expect(drained(before)).toEqual(['alpha', 'beta', 'gamma']);
  });

  it('refuses a cluster it does not serve before any I/O, naming the served ones', async () => {
    const digest = { ...digestOf(alpha, 9), cluster: 'delta' };
    const mark = alpha.db.commands.total();
    await expect(invoke(digestEvent(digest))).rejects.toThrow(
      'detail.cluster: this deployment serves clusters "alpha", "beta", "gamma", got "delta"',
    );
    expect(alpha.db.commands.total()).toBe(mark);
    expect(errors.at(-1)?.[0]).toBe('event rejected: nothing written');
  });
});
