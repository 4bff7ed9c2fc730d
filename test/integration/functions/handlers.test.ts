// The two handlers through middy, each with full EventBridge event JSON (or the monitor's invoke
// payload), wired by loadRuntime from the environment exactly as in Lambda: tables on dynalite
// (NLC_DYNAMODB_ENDPOINT), the API simulator through a kubeconfig file (NLC_KUBECONFIG), and the drainer
// invoked through the Lambda API (NLC_LAMBDA_ENDPOINT, a local stand-in).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeDetail, HeartbeatDigestDetailType, type HeartbeatDigest } from '../../../shared/events.js';
import { logger } from '../../../shared/observability.js';
import { TaintNodeUnreachable } from '../../../shared/domain/taints.js';
import { add, newRateLimitedTimedQueue } from '../../../shared/domain/rateLimitedTimedQueue.js';
import { newTokenBucketRateLimiter } from '../../../shared/domain/tokenBucket.js';
import { startFakeLambda, type FakeLambda } from './fakeLambda.js';
import { lambdaContext, stubHandlerEnv } from './handlerEnv.js';
import { startWorld, t0, zoneKey, ZoneA, type World } from './world.js';

let world: World;
let lambda: FakeLambda;
let dir: string;
let monitor: typeof import('../../../functions/monitorNodeHealth.js').handler;
let drainer: typeof import('../../../functions/evictionDrainer.js').handler;
const errors: unknown[][] = [];

const context = lambdaContext();

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
const scheduledEvent = () => eventBridge('Scheduled Event', 'aws.events', {});

/** The handlers' parsed-event types differ from the raw JSON Lambda hands them (docs/contributing.md#toolchain). */
const invoke = (handler: (event: never, context: Context) => Promise<unknown>, event: unknown) =>
  handler(event as never, context);

beforeAll(async () => {
  world = await startWorld();
  lambda = await startFakeLambda();
  dir = await mkdtemp(join(tmpdir(), 'nlc-handlers-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await world.api.writeKubeconfig(kubeconfig);
  stubHandlerEnv(world, lambda, kubeconfig);
  // Keep the test output readable; errors are kept for assertions.
  vi.spyOn(logger, 'info').mockImplementation(() => undefined);
  vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
  vi.spyOn(logger, 'debug').mockImplementation(() => undefined);
  vi.spyOn(logger, 'error').mockImplementation((...args: unknown[]) => {
    errors.push(args);
  });
  vi.spyOn(console, 'log').mockImplementation(() => undefined);
  vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  ({ handler: monitor } = await import('../../../functions/monitorNodeHealth.js'));
  ({ handler: drainer } = await import('../../../functions/evictionDrainer.js'));
  for (const name of ['node-a', 'node-b', 'node-c']) world.addNode(name);
  await world.syncNodeCache();
});

afterAll(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await world.close();
  await lambda.close();
  await rm(dir, { recursive: true, force: true });
});

const probes = (at: number) => ({ 'node-a': at - 1_000, 'node-b': at - 1_000, 'node-c': at - 1_000 });

describe('monitorNodeHealth handler', () => {
  it('runs one pass per Heartbeat Digest event; a redelivery is a no-op', async () => {
    const before = Date.now();
    await invoke(monitor, digestEvent(world.digest(1, t0, probes(t0))));
    const after = Date.now();
    const meta = await world.stores.controllerState.loadMeta('test');
    expect(meta).toMatchObject({ lastSequence: 1, lastRelayId: 'relay-0' });
    // The handler runs on the real clock, the digest is from t0: a relay term's first digest is taken as
    // built when received, on the functions' clock, and its offset keeps the relay's clock apart.
    expect(meta.lastObservedAt).toBeGreaterThanOrEqual(before);
    expect(meta.lastObservedAt).toBeLessThanOrEqual(after);
    expect((meta.lastObservedAt ?? 0) + (meta.clockOffset ?? 0)).toBe(t0);
    const loaded = await world.stores.controllerState.load('test');
    expect([...loaded.state.knownNodes.keys()]).toEqual(['node-a', 'node-b', 'node-c']);

    const mark = world.api.requests.length;
    await invoke(monitor, digestEvent(world.digest(1, t0, probes(t0))));
    expect(world.requestsSince(mark)).toEqual([]);
    expect((await world.stores.controllerState.loadMeta('test')).lastSequence).toBe(1);
  });

  it('rejects a malformed digest with a log line naming the field, and writes nothing', async () => {
    const before = await world.stores.controllerState.loadMeta('test');
    const mark = world.api.requests.length;
    const event = digestEvent(world.digest(7, t0 + 30_000, probes(t0 + 30_000)));
    const bad = { ...event, detail: { ...(event.detail as object), sequence: -1 } };
    await expect(invoke(monitor, bad)).rejects.toThrow(
      'Invalid Heartbeat Digest (1 problem):\n- detail.sequence: expected an integer >= 0, got -1',
    );
    expect(errors.at(-1)).toEqual([
      'malformed event rejected: nothing written',
      expect.objectContaining({
        problems: ['detail.sequence: expected an integer >= 0, got -1'],
        detailType: 'Heartbeat Digest',
      }),
    ]);
    expect(world.requestsSince(mark)).toEqual([]);
    expect(await world.stores.controllerState.loadMeta('test')).toEqual(before);
  });

  it('on its schedule, checks for a silent relay and invokes the drainer asynchronously', async () => {
    const before = lambda.invokes.length;
    await invoke(monitor, scheduledEvent());
    expect(lambda.invokes.slice(before)).toEqual([
      {
        functionName: 'nlc-test-evictionDrainer',
        invocationType: 'Event',
        payload: { source: 'nlc.monitor', cluster: 'test', reason: 'scheduledCheck' },
      },
    ]);
  });
});

describe('evictionDrainer handler', () => {
  it('drains on its schedule and on the monitor’s invoke; an invoke for another cluster is rejected', async () => {
    // node-c is Unknown and queued (as the monitor would have left it).
    const status = world.api.store.nodes.get('node-c').status;
    world.api.store.nodes.patch(
      'node-c',
      {
        status: {
          conditions: (status?.conditions ?? []).map((c) =>
            c.type === 'Ready' ? { ...c, status: 'Unknown' } : c,
          ),
        },
      },
      { type: 'merge', subresource: 'status' },
    );
    await world.syncNodeCache();
    await world.stores.zoneQueues.updateZoneQueue('test', zoneKey(ZoneA), (current) => ({
      queue: add(
        current ?? newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, t0)),
        'node-c',
        'uid-c',
        t0,
      ).queue,
      result: undefined,
    }));

    const invoked = lambda.invokes.at(-1)?.payload;
    expect(invoked).toEqual({ source: 'nlc.monitor', cluster: 'test', reason: 'scheduledCheck' });
    await invoke(drainer, invoked);
    expect(world.taintsOf('node-c')).toContainEqual({ key: TaintNodeUnreachable, effect: 'NoExecute' });

    // The schedule: nothing left to do, and nothing written.
    const mark = world.api.requests.length;
    await invoke(drainer, scheduledEvent());
    expect(world.writesSince(mark)).toEqual([]);

    await expect(
      invoke(drainer, { source: 'nlc.monitor', cluster: 'other', reason: 'monitorPass' }),
    ).rejects.toThrow(/cluster: this deployment serves cluster "test", got "other"/);
    // Neither shape: rejected naming what each alternative expected (the union's issues, joined).
    await expect(invoke(drainer, { source: 'somewhere', cluster: 'test' })).rejects.toThrow(
      /^Invalid eviction drainer event \(1 problem\):\n- \(root\): expected .*"aws\.events".*"nlc\.monitor"/,
    );
  });
});
