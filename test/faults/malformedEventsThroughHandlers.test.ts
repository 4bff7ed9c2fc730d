// Fault: malformed events (a bug in a relay, a wrong-version event, a hand-made redrive, garbage) reach
// the functions. Through the five real handlers (middy, Powertools parser, loadRuntime wired from the
// environment as in Lambda), every malformed event is rejected, so Lambda retries it and its
// dead-letter queue keeps it, and nothing is written: no Kubernetes request, no DynamoDB write.
// A well-formed copy of each event goes through, so the rejections are the parser's, not the wiring's.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  encodeDetail,
  HeartbeatDigestDetailType,
  NodeChangedDetailType,
  PodChangedDetailType,
} from '../../shared/events.js';
import { logger } from '../../shared/observability.js';
import { nodeOf, podOf, createPod } from '../helpers/functionsFixture.js';
import { startFakeLambda, type FakeLambda } from '../integration/functions/fakeLambda.js';
import { lambdaContext, stubHandlerEnv } from '../integration/functions/handlerEnv.js';
import { startWorld, t0, type World } from '../integration/functions/world.js';

type Handler = (event: never, context: Context) => Promise<unknown>;
let world: World;
let lambda: FakeLambda;
let dir: string;
const handlers: Record<string, Handler> = {};

const context = lambdaContext('nlc-test');

function envelope(detailType: string, source: string, detail: unknown): Record<string, unknown> {
  return {
    version: '0',
    id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
    'detail-type': detailType,
    source,
    account: '123456789012',
    time: '2026-03-02T09:00:00Z',
    region: 'us-east-1',
    resources: [],
    detail,
  };
}

beforeAll(async () => {
  world = await startWorld();
  lambda = await startFakeLambda();
  dir = await mkdtemp(join(tmpdir(), 'nlc-malformed-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await world.api.writeKubeconfig(kubeconfig);
  stubHandlerEnv(world, lambda, kubeconfig);
  for (const level of ['info', 'warn', 'debug', 'error'] as const) {
    vi.spyOn(logger, level).mockImplementation(() => undefined);
  }
  vi.spyOn(console, 'log').mockImplementation(() => undefined);
  // After the environment is set: each handler reads it once, at its cold start.
  const modules = await Promise.all([
    import('../../functions/monitorNodeHealth.js'),
    import('../../functions/evictionDrainer.js'),
    import('../../functions/nodeTaints.js'),
    import('../../functions/taintEviction.js'),
    import('../../functions/podProcessing.js'),
  ]);
  const names = ['monitorNodeHealth', 'evictionDrainer', 'nodeTaints', 'taintEviction', 'podProcessing'];
  modules.forEach((mod, i) => {
    handlers[names[i] ?? ''] = mod.handler;
  });
  world.addNode('node-a');
  createPod(world.api, 'web-1', { nodeName: 'node-a' });
  await world.syncNodeCache();
});

afterAll(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await world.close();
  await lambda.close();
  await rm(dir, { recursive: true, force: true });
});

/** The well-formed events each handler takes, as they arrive. */
function validEvents(): Record<string, Record<string, unknown>> {
  const digest = world.digest(1, t0, { 'node-a': t0 });
  const node = nodeOf(world.api, 'node-a');
  const pod = podOf(world.api, 'web-1');
  return {
    monitorNodeHealth: envelope(
      HeartbeatDigestDetailType,
      'nlc.relay',
      encodeDetail({ detailType: HeartbeatDigestDetailType, detail: digest }),
    ),
    nodeTaints: envelope(
      NodeChangedDetailType,
      'nlc.relay',
      encodeDetail({
        detailType: NodeChangedDetailType,
        detail: { schemaVersion: 1, cluster: 'test', type: 'MODIFIED', node },
      }),
    ),
    taintEviction: envelope(
      PodChangedDetailType,
      'nlc.relay',
      encodeDetail({
        detailType: PodChangedDetailType,
        detail: { schemaVersion: 1, cluster: 'test', type: 'ADDED', pod },
      }),
    ),
    podProcessing: envelope(
      PodChangedDetailType,
      'nlc.relay',
      encodeDetail({
        detailType: PodChangedDetailType,
        detail: { schemaVersion: 1, cluster: 'test', type: 'ADDED', pod },
      }),
    ),
    evictionDrainer: { source: 'nlc.monitor', cluster: 'test', reason: 'monitorPass' },
  };
}

/** Replaces the value at a random path of `value` with `replacement` (or deletes it). */
function mutate(value: unknown, path: readonly number[], replacement: unknown): unknown {
  if (typeof value !== 'object' || value === null) return replacement;
  const keys = Object.keys(value);
  if (keys.length === 0 || path.length === 0) return replacement;
  const key = keys[(path[0] ?? 0) % keys.length] ?? '';
  const entries = Object.entries(value as Record<string, unknown>);
  // A missing field (replacement undefined at the end of the path) is dropped; anything else replaced.
  const kept = replacement === undefined && path.length === 1 ? entries.filter(([k]) => k !== key) : entries;
  const copy = kept.map(([k, v]): [string, unknown] => [
    k,
    k === key ? mutate(v, path.slice(1), replacement) : v,
  ]);
  return Array.isArray(value) ? copy.map(([, v]) => v) : Object.fromEntries(copy);
}

const garbage = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant({}),
  fc.constant([]),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.constant('1970-01-01T00:00:00Z'),
  fc.constant(-1),
  fc.constant(2),
);

describe('malformed events through the real handlers', () => {
  it('valid events go through (the wiring works)', async () => {
    const events = validEvents();
    for (const [fn, event] of Object.entries(events)) {
      await expect(handlers[fn]?.(event as never, context)).resolves.not.toThrow();
    }
  }, 60_000);

  it('any mutated event is rejected before a single write, or accepted as a valid one', async () => {
    const events = validEvents();
    let rejections = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(events)),
        fc.array(fc.nat(50), { minLength: 1, maxLength: 6 }),
        garbage,
        async (fn, path, replacement) => {
          const event = mutate(events[fn], path, replacement);
          const requests = world.api.requests.length;
          world.db.commands.reset();
          let rejected = false;
          runs++;
          try {
            await handlers[fn]?.(event as never, context);
          } catch {
            rejected = true;
          }
          if (rejected) {
            rejections++;
            expect(
              world.api.requests.slice(requests).filter((r) => r.verb !== 'get' && r.verb !== 'list'),
            ).toEqual([]);
            expect(world.db.commands.writes()).toBe(0);
          }
        },
      ),
      { numRuns: 150, seed: 20261125 },
    );
    // Most mutations break the contract: the property is about them, not the few that stay valid.
    expect(rejections).toBeGreaterThan(runs / 2);
  }, 300_000);
});
