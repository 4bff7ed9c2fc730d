// The monitor service (shared/app/monitor.ts) against the API simulator and dynalite: the story of a
// silent node from probe to NoExecute taint, delivery faults (duplicates, reordering, lost races),
// the observation gap, multi-part digests, shadow mode and the legacy path. The relay and node-taints
// are stood in for by world.digest and world.syncNodeCache.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDrainer } from '../../../shared/app/drainer.js';
import { runMonitorPass, type MonitorCache, type MonitorOutcome } from '../../../shared/app/monitor.js';
import { runScheduledCheck } from '../../../shared/app/scheduledCheck.js';
import type { EpochMillis } from '../../../shared/domain/types.js';
import { TaintNodeUnreachable } from '../../../shared/domain/taints.js';
import { VersionConflictError } from '../../../shared/errors.js';
import { splitDigest } from '../../../shared/heartbeatDigest.js';
import { heartbeatDigestBytes } from '../../../shared/heartbeatDigest.js';
import type { LoadedState, StateStores } from '../../../shared/ports/stores.js';
import type { HeartbeatDigest } from '../../../shared/events.js';
import { startWorld, t0, testConfig, zoneKey, ZoneA, ZoneB, type World } from './world.js';

const S = 1_000;
let world: World;
let cache: MonitorCache;
let sequence: number;
/** DynamoDB write requests and API write requests of the last `pass` (without the cache sync). */
let lastPass = { dynamoWrites: 0, updateItems: 0, batchWrites: 0, apiWrites: 0 };

beforeEach(async () => {
  world = await startWorld(testConfig());
  cache = new Map<string, LoadedState>();
  sequence = 0;
});
afterEach(async () => {
  await world.close();
});

/** Three nodes in one zone, registered by a first pass at t0. */
async function threeNodes(): Promise<void> {
  for (const name of ['node-a', 'node-b', 'node-c']) world.addNode(name);
  await world.syncNodeCache();
  await pass(t0);
}

/**
 * One digest at `observedAt`: every node probed a second ago except the `silent` ones, whose last
 * probe stays at t0. Then node-taints catches up with what the pass wrote (syncNodeCache).
 */
async function pass(
  observedAt: EpochMillis,
  silent: readonly string[] = [],
  options: {
    cache?: MonitorCache | undefined;
    sequence?: number;
    /** The relay's lease cache, as the digest carries it (leaseVersions, leaseResourceVersion). */
    leases?: Pick<HeartbeatDigest, 'leaseVersions' | 'leaseResourceVersion'>;
  } = {},
): Promise<MonitorOutcome> {
  world.now = observedAt;
  const names = world.api.store.nodes.list().items.map((n) => n.metadata?.name ?? '');
  const probes = Object.fromEntries(names.map((n) => [n, silent.includes(n) ? t0 : observedAt - S]));
  const digest = { ...world.digest(options.sequence ?? ++sequence, observedAt, probes), ...options.leases };
  world.db.commands.reset();
  const mark = world.api.requests.length;
  const outcome = await runMonitorPass(world.monitorDeps(), digest, {
    ...('cache' in options ? (options.cache === undefined ? {} : { cache: options.cache }) : { cache }),
  });
  lastPass = {
    dynamoWrites: world.db.commands.writes(),
    updateItems: world.db.commands.get('UpdateItem'),
    batchWrites: world.db.commands.get('BatchWriteItem'),
    apiWrites: world.writesSince(mark).length,
  };
  await world.syncNodeCache();
  return outcome;
}

const readyOf = (name: string) =>
  world.api.store.nodes.get(name).status?.conditions?.find((c) => c.type === 'Ready')?.status;

async function trail(node: string) {
  return world.stores.decisions.query(world.config.cluster, node, { newestFirst: false, limit: 100 });
}

describe('a silent node', () => {
  it('goes Unknown after the grace period, is queued in the same pass (v1.34+), and the drainer taints it', async () => {
    await threeNodes();
    for (let t = t0 + 5 * S; t <= t0 + 50 * S; t += 5 * S) await pass(t, ['node-c']);
    expect(readyOf('node-c')).toBe('True');

    // 55 s after its last probe: more than nodeMonitorGracePeriod (50 s). From v1.34 (PR #120816) the
    // pass decides the taint on the condition it leaves: queued now, and the drainer is started.
    const marked = await pass(t0 + 55 * S, ['node-c']);
    expect(readyOf('node-c')).toBe('Unknown');
    expect(marked.kind === 'processed' && marked.summary.drainerTriggered).toBe(true);
    expect(world.triggers).toEqual([{ source: 'nlc.monitor', cluster: 'test', reason: 'monitorPass' }]);
    const queues = await world.stores.zoneQueues.loadZoneQueues('test');
    expect(queues.queues.get(zoneKey(ZoneA))?.queue.map((v) => v.value)).toEqual(['node-c']);

    world.now = t0 + 55 * S + 300;
    const drained = await runDrainer(world.drainerDeps(), world.now);
    expect(drained.zones).toEqual([{ zone: zoneKey(ZoneA), processed: 1, evicted: 1, retried: 0 }]);
    expect(world.taintsOf('node-c')).toContainEqual({ key: TaintNodeUnreachable, effect: 'NoExecute' });
    expect(world.taintsOf('node-a')).not.toContainEqual(expect.objectContaining({ effect: 'NoExecute' }));
    expect(world.observer.metrics).toContainEqual({
      name: 'node_collector_evictions_total',
      unit: 'Count',
      value: 1,
      zone: zoneKey(ZoneA),
    });

    const decisions = await trail('node-c');
    expect(decisions.map((d) => [d.source, d.what, d.result ?? ''])).toEqual([
      ['monitor', 'register', ''],
      ['monitor', 'updateNodeStatus', 'intended'],
      ['monitor', 'updateNodeStatus', 'ok'],
      ['monitor', 'enqueue', ''],
      ['drainer', 'swapNodeTaints', 'intended'],
      ['drainer', 'swapNodeTaints', 'ok'],
    ]);
    const [, unknown, , enqueue, taint] = decisions;
    expect(unknown?.why).toBe('tryUpdateNodeHealth: no heartbeat within the grace period (50s)');
    expect(unknown?.inputs).toMatchObject({
      observedReady: 'True',
      probeAgeSeconds: 55,
      zone: 'eu-west-1:eu-west-1a',
    });
    expect(enqueue?.why).toMatch(
      /^processTaintBaseEviction: current Ready=Unknown: queued for NoExecute tainting/,
    );
    expect(enqueue?.inputs).toMatchObject({ zoneState: 'Normal', currentReady: 'Unknown' });
    expect(taint?.why).toBe('doNoExecuteTaintingPass: Ready=Unknown');
    expect(taint?.inputs).toMatchObject({ add: [`${TaintNodeUnreachable}:NoExecute`], ready: 'Unknown' });

    // Tainted (node-taints has the taint in the cache) and still silent: nothing more to decide.
    await world.syncNodeCache();
    await pass(t0 + 60 * S, ['node-c']);
    expect((await trail('node-c')).slice(decisions.length).map((d) => [d.what, d.why])).toEqual([]);
  });

  it('at emulationVersion 1.33 is queued one pass after the Unknown mark (before PR #120816)', async () => {
    world.config = testConfig({ emulationVersion: '1.33' });
    await threeNodes();
    for (let t = t0 + 5 * S; t <= t0 + 50 * S; t += 5 * S) await pass(t, ['node-c']);

    // Grace 50 s is set by testConfig, so both minors mark at 55 s; only the queueing differs.
    const marked = await pass(t0 + 55 * S, ['node-c']);
    expect(readyOf('node-c')).toBe('Unknown');
    expect(marked.kind === 'processed' && marked.summary.drainerTriggered).toBe(false);
    let queues = await world.stores.zoneQueues.loadZoneQueues('test');
    expect(queues.queues.get(zoneKey(ZoneA))?.queue.map((v) => v.value)).toEqual([]);

    // The next pass sees Ready=Unknown as observed and queues the node (upstream #120815).
    const queued = await pass(t0 + 60 * S, ['node-c']);
    expect(queued.kind === 'processed' && queued.summary.drainerTriggered).toBe(true);
    queues = await world.stores.zoneQueues.loadZoneQueues('test');
    expect(queues.queues.get(zoneKey(ZoneA))?.queue.map((v) => v.value)).toEqual(['node-c']);
    const enqueue = (await trail('node-c')).find((d) => d.what === 'enqueue');
    expect(enqueue?.why).toMatch(/^processTaintBaseEviction: observed Ready=Unknown: queued/);
    expect(enqueue?.at).toBe(t0 + 60 * S);
  });

  it('logs a steady pass at debug level, the first of each minute and any that changed something at info, with the metrics', async () => {
    await threeNodes();
    world.observer.metrics.length = 0;
    world.observer.logs.length = 0;
    const summaries = () => world.observer.logs.filter((l) => l.message === 'monitor pass');
    await pass(t0 + 5 * S);
    // Steady state: no write at all (the position waits: see 'the position of quiet passes').
    expect(lastPass).toEqual({ dynamoWrites: 0, updateItems: 0, batchWrites: 0, apiWrites: 0 });
    expect(summaries().map((l) => l.level)).toEqual(['debug']);
    expect(summaries().at(-1)?.fields).toMatchObject({
      cluster: 'test',
      sequence: 2,
      nodes: 3,
      changes: 0,
      zones: { 'eu-west-1:eu-west-1a': 'Normal' },
      attempts: 1,
      drainerTriggered: false,
      observationGapMs: 5_000,
    });
    // No EMF document for a quiet pass.
    expect(world.observer.metrics).toEqual([]);
    for (let t = t0 + 10 * S; t < t0 + 60 * S; t += 5 * S) await pass(t);
    expect(summaries().every((l) => l.level === 'debug')).toBe(true);
    expect(world.observer.metrics).toEqual([]);

    // The first pass of the next minute: one info line, the pass's metrics and the zone gauges.
    await pass(t0 + 60 * S);
    expect(summaries().at(-1)).toMatchObject({ level: 'info', fields: { sequence: 13, logged: 'minute' } });
    expect(world.observer.metricValues('nlc_observation_gap_seconds')).toEqual([5]);
    expect(
      world.observer.metricValues('node_collector_update_all_nodes_health_duration_seconds'),
    ).toHaveLength(1);
    expect(world.observer.metricValues('node_collector_zone_size')).toEqual([3]);

    // A digest missing (one lost on the bus): the next pass is an info line, its gap sent.
    await pass(t0 + 75 * S);
    expect(summaries().at(-1)).toMatchObject({
      level: 'info',
      fields: { logged: 'changed', observationGapMs: 15_000 },
    });
    expect(world.observer.metricValues('nlc_observation_gap_seconds')).toEqual([5, 15]);
  });
  it('a drainer that cannot be started is logged, not thrown: the pass is committed', async () => {
    await threeNodes();
    for (let t = t0 + 5 * S; t <= t0 + 55 * S; t += 5 * S) await pass(t, ['node-c']);
    world.now = t0 + 60 * S;
    const digest = world.digest(++sequence, world.now, {
      'node-a': world.now - S,
      'node-b': world.now - S,
      'node-c': t0,
    });
    const failing = world.monitorDeps({ triggerDrainer: () => Promise.reject(new Error('throttled')) });
    const outcome = await runMonitorPass(failing, digest, { cache });
    expect(outcome.kind === 'processed' && outcome.summary.drainerTriggered).toBe(false);
    expect(world.observer.logs).toContainEqual({
      level: 'warn',
      message: 'could not start the eviction drainer; its schedule will run it',
      fields: { cluster: 'test', error: 'throttled' },
    });
    // Processed: its position kept by the warm function (a quiet pass writes it within 25 s).
    expect(cache.get('test')?.meta.lastSequence).toBe(sequence);
    expect((await world.stores.controllerState.loadMeta('test')).lastSequence).toBe(sequence - 1);
  });
});

describe('a status write that keeps failing', () => {
  it('skips the node for the pass (upstream: no pods will be evicted) and says so at warning level', async () => {
    await threeNodes();
    for (let t = t0 + 5 * S; t <= t0 + 50 * S; t += 5 * S) await pass(t, ['node-c']);
    world.api.faults.inject({
      kind: 'internalError',
      message: 'etcd is sad',
      match: { resource: 'nodes', subresource: 'status' },
    });
    await pass(t0 + 55 * S, ['node-c']);
    expect(readyOf('node-c')).toBe('True');
    expect(world.observer.logs).toContainEqual({
      level: 'warn',
      message: 'node health could not be updated: the nodes are skipped in this pass',
      fields: {
        cluster: 'test',
        count: 1,
        nodes: ['node-c'],
        observedAt: new Date(t0 + 55 * S).toISOString(),
      },
    });
    // Upstream's NodeHealthUpdateRetry: 5 writes, each after a fresh read but the first.
    const writes = (await trail('node-c')).filter(
      (d) => d.what === 'updateNodeStatus' && d.result !== 'intended',
    );
    expect(writes).toHaveLength(5);
    expect(writes[0]?.result).toMatch(/^Failed: update status of node "node-c": HTTP 500/);
  });
});

describe('a node whose Node Changed is late or lost', () => {
  it('is read from the API when a digest names it, counted in its zone, and kept in the node cache', async () => {
    await threeNodes();
    // node-d registers; its Node Changed ADDED is late (or was dead-lettered): the cache lacks it.
    world.addNode('node-d');
    world.now = t0 + 5 * S;
    const digest = world.digest(++sequence, world.now, {
      'node-a': world.now - S,
      'node-b': world.now - S,
      'node-c': world.now - S,
      'node-d': world.now - S,
    });
    const outcome = await runMonitorPass(world.monitorDeps(), digest, { cache });
    expect(outcome).toMatchObject({ kind: 'processed', summary: { nodes: 4 } });
    const loaded = await world.stores.controllerState.load('test');
    expect(loaded.state.knownNodes.has('node-d')).toBe(true);
    expect(loaded.zones.get(zoneKey(ZoneA))?.zoneSize).toBe(4);
    expect(await world.stores.nodes.getNode('test', 'node-d')).toMatchObject({ name: 'node-d' });
    expect(world.observer.logs).toContainEqual(
      expect.objectContaining({ message: 'nodes missing from the node cache read from the API' }),
    );
  });
});

describe('delivery', () => {
  it('a duplicate digest is a no-op: no API request writes, no DynamoDB write', async () => {
    await threeNodes();
    await pass(t0 + 5 * S);
    const duplicate = await pass(t0 + 5 * S, [], { sequence });
    expect(duplicate).toEqual({
      kind: 'stale',
      last: { leaderSince: t0 - 3_600_000, relayId: 'relay-0', sequence: 2 },
    });
    expect(lastPass).toEqual({ dynamoWrites: 0, updateItems: 0, batchWrites: 0, apiWrites: 0 });
    expect(world.observer.metricValues('nlc_stale_digests_total')).toEqual([1]);
  });

  it('an out-of-order digest is a no-op, also after a cold start; a new relay leader restarting at 0 is newer', async () => {
    await threeNodes();
    await pass(t0 + 30 * S, [], { sequence: 3 });
    expect((await pass(t0 + 25 * S, [], { sequence: 2 })).kind).toBe('stale');
    expect(lastPass.dynamoWrites + lastPass.apiWrites).toBe(0);
    expect((await pass(t0 + 25 * S, [], { sequence: 2, cache: undefined })).kind).toBe('stale');
    expect(lastPass.dynamoWrites + lastPass.apiWrites).toBe(0);

    world.now = t0 + 35 * S;
    const newLeader = {
      ...world.digest(0, t0 + 35 * S, {
        'node-a': t0 + 34 * S,
        'node-b': t0 + 34 * S,
        'node-c': t0 + 34 * S,
      }),
      relayId: 'relay-1',
      leaderSince: t0 + 32 * S,
    };
    const outcome = await runMonitorPass(world.monitorDeps(), newLeader, { cache });
    expect(outcome.kind).toBe('processed');
    const meta = await world.stores.controllerState.loadMeta('test');
    expect(meta).toMatchObject({ lastSequence: 0, lastRelayId: 'relay-1', lastLeaderSince: t0 + 32 * S });
  });

  it('a commit that loses to another monitor reruns once from a fresh load', async () => {
    await threeNodes();
    // Another instance (its own cache) commits between this pass's load and its commit.
    let interleave: (() => Promise<unknown>) | undefined;
    const stores: StateStores = {
      ...world.stores,
      controllerState: {
        load: (c, o) => world.stores.controllerState.load(c, o),
        loadMeta: (c, o) => world.stores.controllerState.loadMeta(c, o),
        refresh: (p, o) => world.stores.controllerState.refresh(p, o),
        getNodeHealth: (c, n, o) => world.stores.controllerState.getNodeHealth(c, n, o),
        recordRefusedDigest: (c, r, o) => world.stores.controllerState.recordRefusedDigest(c, r, o),
        commit: async (loaded, after, o) => {
          const other = interleave;
          interleave = undefined;
          if (other !== undefined) await other();
          return world.stores.controllerState.commit(loaded, after, o);
        },
      },
    };
    const digestAt = (seq: number, at: number) =>
      world.digest(seq, at, { 'node-a': at - S, 'node-b': at - S, 'node-c': at - S });

    // The same digest delivered twice, to two instances: the rerun finds it processed. (30 s after the
    // stored position: both write it. A quiet digest within 25 s of it is written by neither, and
    // processed by both to the same effect: none.)
    interleave = () => runMonitorPass(world.monitorDeps(), digestAt(2, t0 + 30 * S), {});
    world.now = t0 + 30 * S;
    const same = await runMonitorPass(world.monitorDeps({ stores }), digestAt(2, t0 + 30 * S), { cache });
    expect(same.kind).toBe('stale');
    expect(world.observer.warnings()).toContain('monitor commit lost a race: rerunning from a fresh load');

    // A newer digest: the rerun processes it.
    interleave = () => runMonitorPass(world.monitorDeps(), digestAt(3, t0 + 60 * S), {});
    world.now = t0 + 65 * S;
    const newer = await runMonitorPass(world.monitorDeps({ stores }), digestAt(4, t0 + 65 * S), { cache });
    expect(newer.kind === 'processed' && newer.summary.attempts).toBe(2);
    expect(cache.get('test')?.meta.lastSequence).toBe(4);

    // Losing twice throws, and the kept state is dropped. (Another monitor commits before each of our
    // commits: it records the cluster's version.)
    let commits = 0;
    const always: StateStores = {
      ...stores,
      controllerState: {
        ...stores.controllerState,
        commit: async (loaded, after, o) => {
          const other = await world.stores.controllerState.load('test');
          await world.stores.controllerState.commit(other, {
            state: other.state,
            meta: { ...other.meta, clusterVersion: `v1.37.${++commits}` },
          });
          return world.stores.controllerState.commit(loaded, after, o);
        },
      },
    };
    world.now = t0 + 120 * S;
    await expect(
      runMonitorPass(world.monitorDeps({ stores: always }), digestAt(6, t0 + 120 * S), { cache }),
    ).rejects.toBeInstanceOf(VersionConflictError);
    expect(cache.get('test')).toBeUndefined();
  });
});

describe('the position of quiet passes (docs/state.md#the-position-of-quiet-passes)', () => {
  it('is kept by the warm function and written once half the grace period old; a cold start still refuses what came before it', async () => {
    await threeNodes(); // t0, sequence 1: registrations, written
    const stored = async () => (await world.stores.controllerState.loadMeta('test')).lastSequence;
    for (let t = t0 + 5 * S; t <= t0 + 20 * S; t += 5 * S) {
      await pass(t);
      expect(lastPass).toEqual({ dynamoWrites: 0, updateItems: 0, batchWrites: 0, apiWrites: 0 });
    }
    expect(await stored()).toBe(1);
    expect(cache.get('test')?.meta.lastSequence).toBe(5);
    // 25 s after the stored position: written (one UpdateItem, the cluster row).
    await pass(t0 + 25 * S);
    expect(lastPass).toEqual({ dynamoWrites: 1, updateItems: 1, batchWrites: 0, apiWrites: 0 });
    expect(await stored()).toBe(6);
    await pass(t0 + 30 * S);
    await pass(t0 + 35 * S);
    expect(await stored()).toBe(6);

    // A duplicate of an unwritten digest, on the warm function: stale, as before.
    expect((await pass(t0 + 30 * S, [], { sequence: 7 })).kind).toBe('stale');

    // The schedule's check on the warm function counts silence from the last digest it processed.
    const deps = world.monitorDeps();
    expect((await runScheduledCheck(deps, t0 + 36 * S, cache)).silentMs).toBe(S);
    expect((await runScheduledCheck(deps, t0 + 36 * S)).silentMs).toBe(11 * S);

    // Cold start. A digest from before the stored position: stale, nothing written.
    expect((await pass(t0 + 20 * S, [], { sequence: 5, cache: undefined })).kind).toBe('stale');
    expect(lastPass).toEqual({ dynamoWrites: 0, updateItems: 0, batchWrites: 0, apiWrites: 0 });
    // One of the unwritten window (at most 25 s after the stored position) is processed again from
    // the same stored state: a quiet pass, so again no write and no API request.
    const replay = await pass(t0 + 35 * S, [], { sequence: 8, cache: undefined });
    expect(replay.kind).toBe('processed');
    expect(lastPass).toEqual({ dynamoWrites: 0, updateItems: 0, batchWrites: 0, apiWrites: 0 });
    // The next digest after a cold start: its gap is counted from the stored position (15 s), well
    // under the grace period: no observation gap.
    const next = await pass(t0 + 40 * S, [], { sequence: 9, cache: undefined });
    expect(next).toMatchObject({
      kind: 'processed',
      summary: { observationGapMs: 15 * S, observationGapReset: false, changes: 0 },
    });

    // A digest re-delivered an hour late to a cold function: before the stored position, stale.
    world.now = t0 + 3_640 * S;
    const late = world.digest(3, t0 + 10 * S, {
      'node-a': t0 + 9 * S,
      'node-b': t0 + 9 * S,
      'node-c': t0 + 9 * S,
    });
    expect(await runMonitorPass(world.monitorDeps(), late, {})).toMatchObject({ kind: 'stale' });
  });

  it('a node marked Unknown in the unwritten window is written at once, position and all', async () => {
    await threeNodes();
    for (let t = t0 + 5 * S; t <= t0 + 50 * S; t += 5 * S) await pass(t, ['node-c']);
    expect(await world.stores.controllerState.loadMeta('test')).toMatchObject({ lastSequence: 11 });
    await pass(t0 + 55 * S, ['node-c']);
    expect(readyOf('node-c')).toBe('Unknown');
    expect(await world.stores.controllerState.loadMeta('test')).toMatchObject({ lastSequence: 12 });
  });
});

describe('observation gap', () => {
  it('after digests stop for longer than the grace period, every node gets a fresh probe and nobody is marked', async () => {
    await threeNodes();
    await pass(t0 + 5 * S);
    // The relay is down for two minutes; node-c went silent at t0 too (its probe is old).
    const resumed = t0 + 125 * S;
    const outcome = await pass(resumed, ['node-c']);
    expect(outcome.kind === 'processed' && outcome.summary.observationGapReset).toBe(true);
    expect(lastPass.apiWrites).toBe(0);
    expect(readyOf('node-c')).toBe('True');
    expect(world.observer.warnings()).toContain(
      'observation gap: digests resumed after more than the grace period; every node gets a fresh probe',
    );
    expect(world.observer.metricValues('nlc_observation_gap_seconds').at(-1)).toBe(120);
    const gap = (await trail('#cluster')).find((d) => d.what === 'observationGap');
    expect(gap).toMatchObject({ what: 'observationGap', inputs: { gapSeconds: 120 } });
    expect(gap?.why).toMatch(/nobody is marked Unknown/);

    // The fresh probe counts from the resumption: still Ready 50 s later, Unknown after 55 s.
    for (let t = resumed + 5 * S; t <= resumed + 50 * S; t += 5 * S) await pass(t, ['node-c']);
    expect(readyOf('node-c')).toBe('True');
    await pass(resumed + 55 * S, ['node-c']);
    expect(readyOf('node-c')).toBe('Unknown');
  });

  it('the scheduled check reports a silent relay and starts the drainer, writing nothing', async () => {
    const deps = world.monitorDeps();
    const first = await runScheduledCheck(deps, t0);
    expect(first).toEqual({ observationGap: true, drainerTriggered: true });
    expect(world.observer.warnings()).toContain('no Heartbeat Digest processed yet: is the relay running?');

    await threeNodes();
    world.db.commands.reset();
    const mark = world.api.requests.length;
    const silent = await runScheduledCheck(deps, t0 + 90 * S);
    expect(silent).toEqual({ silentMs: 90 * S, observationGap: true, drainerTriggered: true });
    expect(world.observer.metricValues('nlc_observation_gap_seconds').at(-1)).toBe(90);
    expect(world.observer.warnings()).toContain(
      'observation gap: the relay has been silent for longer than the grace period; nothing is marked Unknown',
    );
    expect(world.triggers.at(-1)).toEqual({
      source: 'nlc.monitor',
      cluster: 'test',
      reason: 'scheduledCheck',
    });
    expect(world.db.commands.writes()).toBe(0);
    expect(world.requestsSince(mark)).toEqual([]);

    const fine = await runScheduledCheck(deps, t0 + 20 * S);
    expect(fine).toMatchObject({ silentMs: 20 * S, observationGap: false });
  });
});

describe('multi-part digests', () => {
  it('waits for every part, runs one pass on the whole, and drops the stored parts', async () => {
    for (let i = 0; i < 40; i++) world.addNode(`node-${i}`, i % 2 === 0 ? ZoneA : ZoneB);
    await world.syncNodeCache();
    const probes = Object.fromEntries(
      world.api.store.nodes.list().items.map((n) => [n.metadata?.name ?? '', t0 - S]),
    );
    const whole = world.digest(1, t0, probes);
    const maxBytes = Math.ceil(heartbeatDigestBytes(whole) / 2);
    const parts = splitDigest(whole, maxBytes);
    expect(parts.length).toBeGreaterThanOrEqual(3);
    const [first, middle, ...rest] = parts as [HeartbeatDigest, HeartbeatDigest, ...HeartbeatDigest[]];
    const missing = (...indexes: number[]) => ({ kind: 'waitingForParts', missing: indexes });

    // An older digest's lone part is dropped when a newer digest's part arrives.
    const olderProbes = Object.fromEntries(Object.keys(probes).map((n) => [n, t0 - 6 * S]));
    const [olderPart] = splitDigest(world.digest(0, t0 - 5 * S, olderProbes), maxBytes);
    expect((await runMonitorPass(world.monitorDeps(), olderPart ?? first, { cache })).kind).toBe(
      'waitingForParts',
    );
    const all = parts.map((_, i) => i);
    expect(await runMonitorPass(world.monitorDeps(), first, { cache })).toEqual(missing(...all.slice(1)));
    for (const part of rest) await runMonitorPass(world.monitorDeps(), part, { cache });
    // A duplicate delivery of a stored part changes nothing.
    expect(await runMonitorPass(world.monitorDeps(), first, { cache })).toEqual(missing(1));
    const done = await runMonitorPass(world.monitorDeps(), middle, { cache });
    expect(done.kind === 'processed' && done.summary.nodes).toBe(40);
    const loaded = await world.stores.controllerState.load('test');
    expect(loaded.state.knownNodes.size).toBe(40);
    // Every stored part was dropped (the older digest's with the first new part, the rest after the pass).
    expect(await world.stores.digestParts.addPart('test', first)).toHaveLength(1);
    await world.stores.digestParts.clearParts('test', first);
    const p2 = rest[0] ?? first;
    // A late part of the processed digest is stale.
    expect((await runMonitorPass(world.monitorDeps(), p2, { cache })).kind).toBe('stale');
  });
});

describe('the cluster row: what `nlc agreement` compares', () => {
  const versionReads = (mark: number) => world.requestsSince(mark).filter((r) => r.path === '/version');

  it("records this controller's minor and mode, and the cluster's /version, read again hourly", async () => {
    world.config = testConfig({ dryRun: true, emulationVersion: '1.34' });
    const mark = world.api.requests.length;
    await threeNodes();
    expect(versionReads(mark)).toHaveLength(1);
    const meta = await world.stores.controllerState.loadMeta(world.config.cluster);
    expect(meta).toMatchObject({
      emulationVersion: '1.34',
      dryRun: true,
      // The API simulator's version.
      clusterVersion: 'v1.33.0',
      clusterVersionReadAt: t0,
    });
    // Within the hour the recorded version stands: no read.
    const quiet = world.api.requests.length;
    for (let t = t0 + 5 * S; t <= t0 + 20 * S; t += 5 * S) await pass(t);
    expect(versionReads(quiet)).toHaveLength(0);
    // An hour on, it is read again.
    const later = world.api.requests.length;
    await pass(t0 + 3_600 * S);
    expect(versionReads(later)).toHaveLength(1);
    expect(await world.stores.controllerState.loadMeta(world.config.cluster)).toMatchObject({
      clusterVersionReadAt: t0 + 3_600 * S,
    });
  });

  it('a failed /version read keeps what was recorded, and the pass goes on', async () => {
    await threeNodes();
    world.now = t0 + 7_200 * S;
    const failing = world.monitorDeps({
      cluster: {
        ...world.cluster,
        getServerVersion: () =>
          Promise.resolve({ ok: false, reason: 'Failed', message: 'get /version: connection refused' }),
      },
    });
    const outcome = await runMonitorPass(failing, world.digest(++sequence, t0 + 7_200 * S, {}), { cache });
    expect(outcome.kind).toBe('processed');
    expect(await world.stores.controllerState.loadMeta(world.config.cluster)).toMatchObject({
      clusterVersion: 'v1.33.0',
      clusterVersionReadAt: t0,
      emulationVersion: '1.37',
      dryRun: false,
    });
  });
});

describe('shadow mode (dryRun)', () => {
  it('records every decision and writes nothing to the cluster', async () => {
    world.config = testConfig({ dryRun: true });
    for (const name of ['node-a', 'node-b', 'node-c']) world.addNode(name);
    await world.syncNodeCache();
    const mark = world.api.requests.length;
    await pass(t0);
    for (let t = t0 + 5 * S; t <= t0 + 55 * S; t += 5 * S) await pass(t, ['node-c']);
    // The shadow decided Ready=Unknown and did not write it; it queued the node on its own decision.
    expect(readyOf('node-c')).toBe('True');
    expect((await trail('node-c')).map((d) => [d.what, d.result ?? '', d.dryRun])).toEqual([
      ['register', '', true],
      ['updateNodeStatus', 'dryRun', true],
      ['enqueue', '', true],
    ]);

    // Beside a live control plane, its own controller marks the node; the shadow follows the cluster.
    const status = world.api.store.nodes.get('node-c').status;
    world.api.store.nodes.patch(
      'node-c',
      {
        status: {
          conditions: (status?.conditions ?? []).map((c) =>
            c.type === 'Ready' ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown' } : c,
          ),
        },
      },
      { type: 'merge', subresource: 'status' },
    );
    await world.syncNodeCache();
    await pass(t0 + 60 * S, ['node-c']);
    world.now = t0 + 60 * S + 300;
    const drained = await runDrainer(world.drainerDeps(), world.now);
    expect(drained.zones).toEqual([{ zone: zoneKey(ZoneA), processed: 1, evicted: 1, retried: 0 }]);

    // Not one write request from the functions; the trail says what the controller would have done.
    expect(world.writesSince(mark)).toEqual([]);
    expect(world.taintsOf('node-c').filter((t) => t.effect === 'NoExecute')).toEqual([]);
    expect(world.observer.metricValues('node_collector_evictions_total')).toEqual([]);
    const decisions = await trail('node-c');
    expect(decisions.every((d) => d.dryRun === true)).toBe(true);
    expect(decisions.slice(3).map((d) => [d.source, d.what, d.result ?? ''])).toEqual([
      ['drainer', 'swapNodeTaints', 'dryRun'],
    ]);
    // The shadow advanced its own state: the item is processed (it stays in the set, out of the queue).
    const queue = (await world.stores.zoneQueues.loadZoneQueues('test')).queues.get(zoneKey(ZoneA));
    expect(queue?.queue).toEqual([]);
    expect(queue?.set).toEqual(['node-c']);
  });
});

describe('lease confirmation (emulationVersion 1.37, PR #138698)', () => {
  /** node-c, silent since t0, with a Lease in kube-node-lease; passes up to 50 s. Its version. */
  async function silentNodeWithLease(version: '1.36' | '1.37'): Promise<string> {
    world.config = testConfig({ emulationVersion: version });
    await threeNodes();
    const lease = world.api.store.leases.create({
      metadata: { name: 'node-c', namespace: 'kube-node-lease' },
      spec: { holderIdentity: 'node-c', leaseDurationSeconds: 40 },
    });
    for (let t = t0 + 5 * S; t <= t0 + 50 * S; t += 5 * S) await pass(t, ['node-c']);
    return lease.metadata?.resourceVersion ?? '';
  }
  /** A renewal the relay has not seen: the API's Lease moves on. Its new version. */
  function renewBehindTheRelay(): string {
    const lease = world.api.store.leases.get('node-c', { namespace: 'kube-node-lease' });
    const renewed = world.api.store.leases.update({
      ...lease,
      // A MicroTime: six fractional digits.
      spec: { ...lease.spec, renewTime: new Date(world.now).toISOString().replace('.000Z', '.000000Z') },
    });
    return renewed.metadata?.resourceVersion ?? '';
  }
  const leaseReads = (mark: number) =>
    world.requestsSince(mark).filter((r) => r.resource === 'leases' && r.verb === 'get').length;
  const heldBy = (outcome: MonitorOutcome) =>
    outcome.kind === 'processed' ? (outcome.summary.heldBy ?? 'none') : outcome.kind;

  it("marks the node Unknown when the API's Lease is the relay's copy, after one read", async () => {
    const rv = await silentNodeWithLease('1.37');
    const mark = world.api.requests.length;
    const leases = { leaseVersions: new Map([['node-c', rv]]), leaseResourceVersion: rv };
    const outcome = await pass(t0 + 55 * S, ['node-c'], { leases });
    expect(heldBy(outcome)).toBe('none');
    expect(readyOf('node-c')).toBe('Unknown');
    expect(leaseReads(mark)).toBe(1);
  });

  it("holds every pass while the relay's copy is behind, until its lease informer has synced the API's version", async () => {
    const rv = await silentNodeWithLease('1.37');
    const live = renewBehindTheRelay();
    const behind = { leaseVersions: new Map([['node-c', rv]]), leaseResourceVersion: rv };

    let mark = world.api.requests.length;
    expect(heldBy(await pass(t0 + 55 * S, ['node-c'], { leases: behind }))).toBe('stale');
    expect(readyOf('node-c')).toBe('True');
    expect(leaseReads(mark)).toBe(1);
    expect(world.writesSince(mark)).toEqual([]);
    expect((await world.stores.controllerState.loadMeta('test')).leaseWrittenVersion).toBe(live);
    const [held] = (await trail('node-c')).filter((d) => d.what === 'leaseConfirmation');
    expect(held?.inputs).toMatchObject({ result: 'stale', cachedVersion: rv, liveVersion: live });
    expect(world.observer.metricValues('nlc_lease_confirmation_holds_total')).toEqual([1]);

    // Upstream's EnsureReady: held without another read while the relay has not synced `live`.
    mark = world.api.requests.length;
    expect(heldBy(await pass(t0 + 60 * S, ['node-c'], { leases: behind }))).toBe('waiting');
    expect(leaseReads(mark)).toBe(0);
    expect(readyOf('node-c')).toBe('True');

    // The relay catches up: it saw the renewal (a probe) and has synced `live`. The record is cleared.
    const caughtUp = { leaseVersions: new Map<string, string>(), leaseResourceVersion: live };
    expect(heldBy(await pass(t0 + 65 * S, [], { leases: caughtUp }))).toBe('none');
    expect(readyOf('node-c')).toBe('True');
    expect((await world.stores.controllerState.loadMeta('test')).leaseWrittenVersion).toBeUndefined();
  });

  it('a forged digest naming a Lease version the relay never saw costs one pass: the next genuine digest marks', async () => {
    // Whoever holds the relay's role sends one digest claiming node-c's Lease is at a version behind the
    // API's. The API is the truth: the pass is held and the API's version recorded, which a relay that
    // is synced (as the genuine one is) passes at once.
    const rv = await silentNodeWithLease('1.37');
    const forged = { leaseVersions: new Map([['node-c', '1']]), leaseResourceVersion: '1' };
    expect(heldBy(await pass(t0 + 55 * S, ['node-c'], { leases: forged }))).toBe('stale');
    expect(readyOf('node-c')).toBe('True');
    expect((await world.stores.controllerState.loadMeta('test')).leaseWrittenVersion).toBe(rv);
    const genuine = { leaseVersions: new Map([['node-c', rv]]), leaseResourceVersion: rv };
    expect(heldBy(await pass(t0 + 60 * S, ['node-c'], { leases: genuine }))).toBe('none');
    expect(readyOf('node-c')).toBe('Unknown');
  });

  it('a forged digest claiming a synced version far ahead clears the record, but each node is still read against the API', async () => {
    const rv = await silentNodeWithLease('1.37');
    const live = renewBehindTheRelay();
    const behind = { leaseVersions: new Map([['node-c', rv]]), leaseResourceVersion: rv };
    expect(heldBy(await pass(t0 + 55 * S, ['node-c'], { leases: behind }))).toBe('stale');
    // The forger's "synced far ahead" lets the pass proceed past the record, and its stale copy of
    // node-c's Lease is caught by the read all the same: node-c is not marked.
    const forged = { leaseVersions: new Map([['node-c', rv]]), leaseResourceVersion: '999999999999' };
    const mark = world.api.requests.length;
    expect(heldBy(await pass(t0 + 60 * S, ['node-c'], { leases: forged }))).toBe('stale');
    expect(leaseReads(mark)).toBe(1);
    expect(readyOf('node-c')).toBe('True');
    expect((await world.stores.controllerState.loadMeta('test')).leaseWrittenVersion).toBe(live);
  });

  it('at emulationVersion 1.36 reads no Lease and marks on the digest alone', async () => {
    const rv = await silentNodeWithLease('1.36');
    renewBehindTheRelay();
    const mark = world.api.requests.length;
    const behind = { leaseVersions: new Map([['node-c', rv]]), leaseResourceVersion: rv };
    expect(heldBy(await pass(t0 + 55 * S, ['node-c'], { leases: behind }))).toBe('none');
    expect(readyOf('node-c')).toBe('Unknown');
    expect(leaseReads(mark)).toBe(0);
  });
});

describe('legacy mode (--enable-taint-manager=false)', () => {
  it('queues the node after podEvictionTimeout, the drainer deletes its pods, the next pass marks it evicted', async () => {
    world.config = testConfig({ evictionMode: 'legacy', podEvictionTimeout: 30 * S });
    await threeNodes();
    world.api.store.pods.create(
      {
        metadata: { name: 'web-1', namespace: 'default' },
        spec: { nodeName: 'node-c', containers: [{ name: 'c', image: 'x' }] },
      },
      { namespace: 'default' },
    );
    let t = t0;
    while (readyOf('node-c') === 'True') await pass((t += 5 * S), ['node-c']);
    // Unknown since t0 + 55 s; after podEvictionTimeout (30 s) of silence past the probe it is queued.
    for (let i = 0; i < 8; i++) await pass((t += 5 * S), ['node-c']);
    const queues = await world.stores.zoneQueues.loadZoneQueues('test');
    expect(queues.queues.get(zoneKey(ZoneA))?.queue.map((v) => v.value)).toEqual(['node-c']);

    world.now = t + 100;
    await runDrainer(world.drainerDeps(), world.now);
    const pod = world.api.store.pods.get('web-1', { namespace: 'default' });
    expect(pod.metadata?.deletionTimestamp).toBeDefined();
    expect(pod.status?.reason).toBe('NodeLost');

    await pass(t + 5 * S, ['node-c']);
    const loaded = await world.stores.controllerState.load('test');
    expect(loaded.state.nodeEvictionStatus.get('node-c')).toBe('evicted');
    expect((await trail('node-c')).map((d) => d.what)).toEqual(
      expect.arrayContaining(['enqueue', 'setPodTerminationReason', 'deletePod', 'evicted']),
    );
  });
});

describe('the cluster it serves', () => {
  it('rejects a digest for another cluster before any read, naming the field', async () => {
    world.db.commands.reset();
    const digest = { ...world.digest(1, t0, {}), cluster: 'other' };
    await expect(runMonitorPass(world.monitorDeps(), digest, { cache })).rejects.toThrow(
      /detail\.cluster: this deployment serves cluster "test", got "other"/,
    );
    expect(world.db.commands.total()).toBe(0);
  });
});
