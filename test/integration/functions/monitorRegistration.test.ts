// The monitor service registers at most registrationsPerPass new nodes a pass (MaxRegistrationsPerPass
// in production, docs/monitor.md#registration), against the API simulator and dynalite: the first pass
// of a large cluster is split over the next digests, warm or after a cold start, each node registered
// once (one RegisteredNode Event, one `register` decision, one health row), and the zone rows count the
// whole cluster from the first pass on.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMonitorPass, type MonitorDeps, type MonitorOutcome } from '../../../shared/app/monitor.js';
import type { EpochMillis } from '../../../shared/domain/types.js';
import type { LoadedState } from '../../../shared/ports/stores.js';
import { startWorld, t0, testConfig, zoneKey, ZoneA, ZoneB, type World } from './world.js';

let world: World;
let sequence: number;

beforeEach(async () => {
  world = await startWorld(testConfig());
  sequence = 0;
});
afterEach(async () => {
  await world.close();
});

const names = ['a-1', 'a-2', 'a-3', 'b-1', 'b-2'];

async function pass(
  observedAt: EpochMillis,
  cache?: Map<string, LoadedState>,
  stores?: MonitorDeps['stores'],
): Promise<MonitorOutcome> {
  world.now = observedAt;
  const probes = Object.fromEntries(names.map((n) => [n, observedAt - 1_000]));
  return runMonitorPass(
    world.monitorDeps({ registrationsPerPass: 2, ...(stores !== undefined && { stores }) }),
    world.digest(++sequence, observedAt, probes),
    cache === undefined ? {} : { cache },
  );
}

function waiting(outcome: MonitorOutcome): number | undefined {
  if (outcome.kind !== 'processed') throw new Error(`not processed: ${outcome.kind}`);
  return outcome.summary.waitingToRegister;
}

/** Stores whose next health row write on the Nodes table fails its condition (another writer's). */
function storesLosingOneHealthWrite(): MonitorDeps['stores'] {
  const client = world.db.newClient();
  let armed = 1;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { TableName?: string; ExpressionAttributeNames?: Record<string, string> };
      const healthWrite =
        context.commandName === 'UpdateItemCommand' &&
        input.TableName === world.db.tables.nodes &&
        Object.values(input.ExpressionAttributeNames ?? {}).includes('healthVersion');
      if (healthWrite && armed > 0) {
        armed--;
        throw new ConditionalCheckFailedException({ message: 'injected', $metadata: {} });
      }
      return next(args);
    },
    { step: 'finalizeRequest', name: 'injectFaults', priority: 'low' },
  );
  return world.db.stores({ clock: { now: () => world.now }, client });
}

const registeredEvents = (): string[] =>
  world.api.store.events
    .list({ namespace: 'default' })
    .items.filter((e) => e.reason === 'RegisteredNode')
    .map((e) => e.involvedObject.name ?? '')
    .sort();

async function registerDecisions(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const name of names) {
    const trail = await world.stores.decisions.query(world.config.cluster, name, { limit: 100 });
    counts[name] = trail.filter((d) => d.what === 'register').length;
  }
  return counts;
}

describe('registration split over passes', () => {
  beforeEach(async () => {
    for (const name of ['a-1', 'a-2', 'a-3']) world.addNode(name, ZoneA);
    for (const name of ['b-1', 'b-2']) world.addNode(name, ZoneB);
    await world.syncNodeCache();
  });

  it('registers two nodes a pass in name order, warm or cold, each once, with whole-cluster zone rows', async () => {
    const cache = new Map<string, LoadedState>();
    expect(waiting(await pass(t0, cache))).toBe(3);
    let loaded = await world.stores.controllerState.load(world.config.cluster);
    expect([...loaded.state.knownNodes.keys()].sort()).toEqual(['a-1', 'a-2']);
    expect([...loaded.state.nodeHealth.keys()].sort()).toEqual(['a-1', 'a-2']);
    // The zone rows count every node from the first pass: zone B has none registered yet.
    expect(loaded.zones.get(zoneKey(ZoneA))).toMatchObject({ zoneSize: 3, unhealthyNodes: 0 });
    expect(loaded.zones.get(zoneKey(ZoneB))).toMatchObject({ zoneSize: 2, unhealthyNodes: 0 });
    expect(loaded.state.zoneQueues.has(zoneKey(ZoneB))).toBe(true);
    expect(world.observer.logs.find((l) => l.message === 'monitor pass')?.fields).toMatchObject({
      waitingToRegister: 3,
    });

    // A cold start goes on from the stored rows.
    expect(waiting(await pass(t0 + 5_000))).toBe(1);
    loaded = await world.stores.controllerState.load(world.config.cluster);
    expect([...loaded.state.knownNodes.keys()].sort()).toEqual(['a-1', 'a-2', 'a-3', 'b-1']);

    expect(waiting(await pass(t0 + 10_000, cache))).toBeUndefined();
    expect(waiting(await pass(t0 + 15_000, cache))).toBeUndefined();
    loaded = await world.stores.controllerState.load(world.config.cluster);
    expect([...loaded.state.knownNodes.keys()].sort()).toEqual(names);
    expect(registeredEvents()).toEqual(names);
    expect(await registerDecisions()).toEqual(Object.fromEntries(names.map((n) => [n, 1])));
    expect(Object.fromEntries(loaded.state.zoneStates)).toEqual({
      [zoneKey(ZoneA)]: 'Normal',
      [zoneKey(ZoneB)]: 'Normal',
    });
  });

  it('a registering pass whose commit loses one health row reruns and registers it, the rest as before', async () => {
    // One of the two rows fails its condition, the other lands: the rerun from a fresh load registers
    // the one that failed and a-3.
    expect(waiting(await pass(t0, undefined, storesLosingOneHealthWrite()))).toBe(2);
    const loaded = await world.stores.controllerState.load(world.config.cluster);
    expect([...loaded.state.knownNodes.keys()].sort()).toEqual(['a-1', 'a-2', 'a-3']);
    expect(world.observer.warnings()).toContain('monitor commit lost a race: rerunning from a fresh load');
    expect(new Set(registeredEvents())).toEqual(new Set(['a-1', 'a-2', 'a-3']));

    expect(waiting(await pass(t0 + 5_000))).toBeUndefined();
    const after = await world.stores.controllerState.load(world.config.cluster);
    expect([...after.state.knownNodes.keys()].sort()).toEqual(names);
  });
});
