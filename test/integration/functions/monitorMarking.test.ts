// The monitor service starts at most so many markings a pass (passApiBudget in production,
// docs/monitor.md#marking), against the API simulator and dynalite: a zone going silent at once is
// marked over the next digests, warm or after a cold start, each node's status written once, and the
// zone rows count every due node as Unknown from the first marking pass on.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { passApiBudget, runMonitorPass, type MonitorOutcome } from '../../../shared/app/monitor.js';
import type { EpochMillis } from '../../../shared/domain/types.js';
import type { LoadedState } from '../../../shared/ports/stores.js';
import { startWorld, t0, testConfig, zoneKey, ZoneA, ZoneB, type World } from './world.js';

let world: World;
let sequence: number;

beforeEach(async () => {
  world = await startWorld(testConfig());
  sequence = 0;
  for (const name of ['a-1', 'a-2', 'a-3']) world.addNode(name, ZoneA);
  for (const name of ['b-1', 'b-2']) world.addNode(name, ZoneB);
  await world.syncNodeCache();
});
afterEach(async () => {
  await world.close();
});

/** Zone B renews before every digest; zone A renewed last just before t0. */
const probesAt = (observedAt: EpochMillis): Record<string, EpochMillis> => ({
  'a-1': t0 - 1_000,
  'a-2': t0 - 1_000,
  'a-3': t0 - 1_000,
  'b-1': observedAt - 1_000,
  'b-2': observedAt - 1_000,
});

async function pass(observedAt: EpochMillis, cache?: Map<string, LoadedState>): Promise<MonitorOutcome> {
  world.now = observedAt;
  return runMonitorPass(
    world.monitorDeps({ markingLimit: { nodes: 2, requests: 1_000 } }),
    world.digest(++sequence, observedAt, probesAt(observedAt)),
    cache === undefined ? {} : { cache },
  );
}

function summary(outcome: MonitorOutcome) {
  if (outcome.kind !== 'processed') throw new Error(`not processed: ${outcome.kind}`);
  return outcome.summary;
}

const readyOf = (name: string): string | undefined =>
  world.api.store.nodes.get(name).status?.conditions?.find((c) => c.type === 'Ready')?.status;

const statusWrites = (mark: number): string[] =>
  world
    .writesSince(mark)
    .filter((r) => r.resource === 'nodes' && r.subresource === 'status')
    .map((r) => r.name ?? '');

describe('marking split over passes', () => {
  it('marks two nodes a pass in name order, warm then cold, each once, with whole-zone rows', async () => {
    const cache = new Map<string, LoadedState>();
    for (let at = t0; at < t0 + 55_000; at += 5_000)
      expect(summary(await pass(at, cache)).waitingToMark).toBeUndefined();
    const mark = world.api.requests.length;

    const first = summary(await pass(t0 + 55_000, cache));
    expect(first.waitingToMark).toBe(1);
    expect(statusWrites(mark)).toEqual(['a-1', 'a-2']);
    expect(['a-1', 'a-2', 'a-3'].map(readyOf)).toEqual(['Unknown', 'Unknown', 'True']);
    // Zone A counts a-3 as the write will leave it: all three Unknown, FullDisruption from this pass.
    let loaded = await world.stores.controllerState.load(world.config.cluster);
    expect(loaded.zones.get(zoneKey(ZoneA))).toMatchObject({ zoneSize: 3, unhealthyNodes: 3 });
    expect(loaded.state.zoneStates.get(zoneKey(ZoneA))).toBe('FullDisruption');
    expect(loaded.state.nodeHealth.get('a-3')?.status.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(world.observer.logs.filter((l) => l.message === 'monitor pass').at(-1)?.fields).toMatchObject({
      waitingToMark: 1,
    });

    // A cold start goes on from the stored rows.
    const second = summary(await pass(t0 + 60_000));
    expect(second.waitingToMark).toBeUndefined();
    expect(statusWrites(mark)).toEqual(['a-1', 'a-2', 'a-3']);
    expect(readyOf('a-3')).toBe('Unknown');
    loaded = await world.stores.controllerState.load(world.config.cluster);
    expect(loaded.zones.get(zoneKey(ZoneA))).toMatchObject({ zoneSize: 3, unhealthyNodes: 3 });
    expect(loaded.zones.get(zoneKey(ZoneB))).toMatchObject({ zoneSize: 2, unhealthyNodes: 0 });

    expect(summary(await pass(t0 + 65_000)).waitingToMark).toBeUndefined();
    expect(statusWrites(mark)).toEqual(['a-1', 'a-2', 'a-3']);
  });

  it('reports the API requests a pass stood for: registrations, then markings', async () => {
    expect(summary(await pass(t0)).apiRequests).toBe(5); // five RegisteredNode Events
    for (let at = t0 + 5_000; at < t0 + 55_000; at += 5_000)
      expect(summary(await pass(at)).apiRequests).toBeUndefined();
    // Two markings: status, pod list, NodeNotReady each (no pods).
    expect(summary(await pass(t0 + 55_000)).apiRequests).toBe(6);
  });
});

describe('registrations from the same budget', () => {
  it('take at most half of it, so that silent nodes are still marked while a backlog registers', async () => {
    // Budget: burst 5 + 20 s × 0.05 = 6 requests; registrations at most 3 a pass.
    world.config = testConfig({ kubeApiQps: 0.05, kubeApiBurst: 5 });
    world.now = t0;
    const probes = Object.fromEntries(['a-1', 'a-2', 'a-3', 'b-1', 'b-2'].map((n) => [n, t0 - 1_000]));
    const outcome = await runMonitorPass(world.monitorDeps(), world.digest(++sequence, t0, probes), {});
    expect(summary(outcome)).toMatchObject({ waitingToRegister: 2, apiRequests: 3 });
  });
});

describe('a pass whose load took long takes on less', () => {
  /** A cold pass at `observedAt` whose full load takes `loadMs` of the functions' clock. */
  async function coldPass(observedAt: EpochMillis, loadMs: number): Promise<MonitorOutcome> {
    world.now = observedAt;
    const stores = world.monitorDeps().stores;
    const slowLoad = Object.create(stores.controllerState) as typeof stores.controllerState;
    slowLoad.load = async (...args) => {
      const loaded = await stores.controllerState.load(...args);
      world.now += loadMs;
      return loaded;
    };
    return runMonitorPass(
      world.monitorDeps({ stores: { ...stores, controllerState: slowLoad } }),
      world.digest(++sequence, observedAt, probesAt(observedAt)),
      {},
    );
  }

  it.each([
    // Budget: burst 4 + 20 s × 0.2 = 8 requests, 2 markings; after a 38 s load, 4 + 2 s × 0.2: 1.
    { loadMs: 0, marked: 2 },
    { loadMs: 38_000, marked: 1 },
  ])('a $loadMs ms load: $marked of the 3 due nodes marked in the pass', async ({ loadMs, marked }) => {
    world.config = testConfig({ kubeApiQps: 0.2, kubeApiBurst: 4 });
    for (let at = t0; at < t0 + 55_000; at += 5_000)
      expect(summary(await coldPass(at, 0)).waitingToMark).toBeUndefined();
    const outcome = await coldPass(t0 + 55_000, loadMs);
    expect(summary(outcome).waitingToMark).toBe(3 - marked);
    expect(['a-1', 'a-2', 'a-3'].filter((n) => readyOf(n) === 'Unknown')).toHaveLength(marked);
  });
});

describe('passApiBudget', () => {
  it.each([
    { qps: 20, burst: 30, budget: 430 },
    // A pass longer than the grace period would be an observation gap: 40% of it at most (8 s here).
    { qps: 20, burst: 30, grace: 20_000, budget: 190 },
    { qps: 50, burst: 100, budget: 1_100 },
    // One request after another: 20 s hold about 1,500 whatever the rate.
    { qps: 100, burst: 200, budget: 1_500 },
    { qps: 500, burst: 750, budget: 1_500 },
    { qps: 0.01, burst: 1, budget: 1 },
  ])('is burst + 20 s at qps, at most 1,500: $qps / $burst → $budget', ({ qps, burst, grace, budget }) => {
    expect(
      passApiBudget({ kubeApiQps: qps, kubeApiBurst: burst, nodeMonitorGracePeriod: grace ?? 50_000 }),
    ).toBe(budget);
  });

  it.each([
    // A whole pass is 40 s at most (80% of the grace period): a long load leaves fewer seconds.
    { elapsedMs: 3_000, budget: 430 },
    { elapsedMs: 25_000, budget: 330 },
    { elapsedMs: 30_000, budget: 230 },
    // Nothing left: the burst alone.
    { elapsedMs: 45_000, budget: 30 },
    // A 20 s grace period: 16 s a pass, 8 of them requests.
    { elapsedMs: 10_000, grace: 20_000, budget: 150 },
  ])('less what the pass took so far: $elapsedMs ms → $budget', ({ elapsedMs, grace, budget }) => {
    expect(
      passApiBudget({ kubeApiQps: 20, kubeApiBurst: 30, nodeMonitorGracePeriod: grace ?? 50_000 }, elapsedMs),
    ).toBe(budget);
  });
});
