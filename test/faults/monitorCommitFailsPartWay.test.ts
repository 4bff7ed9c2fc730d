// Fault: a monitor commit that fails part-way leaves a permanent half-write.
//
// Before, the cluster row (lastSequence: "this digest is processed") was written first, then the node
// health rows, zone rows and queues. A DynamoDB 500 or a ConditionalCheckFailed on a health row after
// that left the saved Ready=True while the cluster said Unknown, for good: the retry of the digest was
// a stale no-op (and with the ConditionalCheckFailed, no error at all). Now the cluster row is only
// fenced first, and "processed" is recorded after every row of the pass: a pass either commits whole or
// is retried whole.
//
// The DynamoDB server is real (dynalite); the faults are injected in the client's middleware, below
// the SDK's retries, on the writes of the Nodes table's health rows.
import { ConditionalCheckFailedException, InternalServerError } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMonitorPass, type MonitorCache } from '../../shared/app/monitor.js';
import { StoreError } from '../../shared/errors.js';
import type { LoadedState } from '../../shared/ports/stores.js';
import { startWorld, t0, testConfig, type World } from '../integration/functions/world.js';

const S = 1_000;
let world: World;
let sequence = 0;

beforeEach(async () => {
  world = await startWorld(testConfig());
  sequence = 0;
});
afterEach(async () => {
  await world.close();
});

/** Stores over a client whose next `times` UpdateItems on the Nodes table fail with `error()`. */
function faultyStores(error: () => Error) {
  const client = world.db.newClient({ maxAttempts: 3 });
  const armed = { times: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as {
        TableName?: string;
        ExpressionAttributeNames?: Record<string, string>;
      };
      const healthWrite =
        context.commandName === 'UpdateItemCommand' &&
        input.TableName === world.db.tables.nodes &&
        Object.values(input.ExpressionAttributeNames ?? {}).includes('healthVersion');
      if (healthWrite && armed.times > 0) {
        armed.times--;
        throw error();
      }
      return next(args);
    },
    { step: 'finalizeRequest', name: 'injectFaults', priority: 'low' },
  );
  return { stores: world.db.stores({ clock: { now: () => world.now }, client }), armed };
}

function digestAt(observedAt: number, silent: readonly string[]) {
  const probes = Object.fromEntries(
    ['node-a', 'node-b', 'node-c'].map((n) => [n, silent.includes(n) ? t0 : observedAt - S]),
  );
  return world.digest(++sequence, observedAt, probes);
}

const readyOf = (name: string) =>
  world.api.store.nodes.get(name).status?.conditions?.find((c) => c.type === 'Ready')?.status;

async function upToTheMarkingPass(cache: MonitorCache): Promise<void> {
  for (const name of ['node-a', 'node-b', 'node-c']) world.addNode(name);
  await world.syncNodeCache();
  for (let t = t0; t <= t0 + 50 * S; t += 5 * S) {
    world.now = t;
    await runMonitorPass(world.monitorDeps(), digestAt(t, ['node-c']), { cache });
    await world.syncNodeCache();
  }
  world.now = t0 + 55 * S; // node-c's grace period is over: this pass marks it Unknown
}

describe('a monitor commit that fails part-way', () => {
  it('after a DynamoDB 500 on a health row: nothing is recorded processed, and the retry redoes the pass whole', async () => {
    const cache: MonitorCache = new Map<string, LoadedState>();
    await upToTheMarkingPass(cache);
    const { stores, armed } = faultyStores(
      () => new InternalServerError({ message: 'injected', $metadata: { httpStatusCode: 500 } }),
    );
    armed.times = 3; // every attempt of the SDK's retries
    const digest = digestAt(world.now, ['node-c']);
    await expect(runMonitorPass(world.monitorDeps({ stores }), digest, { cache })).rejects.toBeInstanceOf(
      StoreError,
    );
    expect(readyOf('node-c')).toBe('Unknown'); // the cluster write was made
    expect((await world.stores.controllerState.loadMeta('test')).lastSequence).toBe(sequence - 1);

    // Lambda retries the same event: it is still newer, so the pass runs again and commits whole.
    const retried = await runMonitorPass(world.monitorDeps({ stores }), digest, { cache });
    expect(retried.kind).toBe('processed');
    const loaded = await world.stores.controllerState.load('test');
    expect(loaded.meta.lastSequence).toBe(sequence);
    const saved = loaded.state.nodeHealth.get('node-c')?.status.find((c) => c.type === 'Ready');
    expect(saved?.status).toBe('Unknown');

    // And the next pass queues node-c for NoExecute tainting, as without the fault.
    await world.syncNodeCache();
    world.now += 5 * S;
    await runMonitorPass(world.monitorDeps(), digestAt(world.now, ['node-c']), { cache });
    const queues = await world.stores.zoneQueues.loadZoneQueues('test');
    expect([...queues.queues.values()].flatMap((q) => q.queue.map((v) => v.value))).toEqual(['node-c']);
  });

  it('after a ConditionalCheckFailed on a health row: the pass reruns from a fresh load in the same invocation', async () => {
    const cache: MonitorCache = new Map<string, LoadedState>();
    await upToTheMarkingPass(cache);
    const { stores, armed } = faultyStores(
      () => new ConditionalCheckFailedException({ message: 'injected', $metadata: { httpStatusCode: 400 } }),
    );
    armed.times = 1;
    const outcome = await runMonitorPass(world.monitorDeps({ stores }), digestAt(world.now, ['node-c']), {
      cache,
    });
    expect(outcome).toMatchObject({ kind: 'processed', summary: { attempts: 2 } });
    const loaded = await world.stores.controllerState.load('test');
    expect(loaded.meta.lastSequence).toBe(sequence);
    expect(loaded.state.nodeHealth.get('node-c')?.status.find((c) => c.type === 'Ready')?.status).toBe(
      'Unknown',
    );
    expect(world.observer.warnings()).toContain('monitor commit lost a race: rerunning from a fresh load');
  });
});
