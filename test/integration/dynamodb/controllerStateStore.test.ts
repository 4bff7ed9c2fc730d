// ControllerStateStore against dynalite: round trip of states made by real passes, the diff commit,
// the cluster-row fence, a queue commit merged onto a drainer's token claim, warm refresh vs cold load,
// and pagination.
import { DeleteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryOnVersionConflict } from '../../../shared/adapters/dynamodb/index.js';
import { emptyControllerState, type ControllerState } from '../../../shared/domain/controllerState.js';
import { add, remove, tryNext } from '../../../shared/domain/rateLimitedTimedQueue.js';
import { VersionConflictError } from '../../../shared/errors.js';
import type { ClusterMeta } from '../../../shared/ports/stores.js';
import { testConfig } from '../../helpers/controllerHarness.js';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';
import { FakeCluster, newNode, ready } from '../../helpers/fakeCluster.js';
import { allNodes, clusterNodes, leasesAt, passFrom, runScenario, t0 } from './scenario.js';

let db: DynamoFixture;
beforeAll(async () => {
  db = await startDynamoDb();
});
afterAll(async () => {
  await db.stop();
});

const meta = (sequence: number, observedAt: number): ClusterMeta => ({
  lastSequence: sequence,
  lastObservedAt: observedAt,
  masterDisruption: false,
  relayLastSeen: observedAt,
});

/** Stores the scenario's nodes (as node-taints would) and its controller state; returns the store. */
async function seed(cluster: string, mode: 'taint' | 'legacy', drain = false) {
  const scenario = runScenario(mode, drain);
  const stores = db.stores();
  for (const node of clusterNodes(scenario.cluster)) await stores.nodes.putNode(cluster, node);
  const empty = await stores.controllerState.load(cluster);
  const committed = await stores.controllerState.commit(empty, {
    state: scenario.harness.state,
    meta: meta(1, scenario.now),
    gauges: scenario.harness.last?.disruption.gauges ?? [],
  });
  return { scenario, stores, committed };
}

/** The state without the probe times a steady pass does not write (a digest rebuilds them). */
function decisionRelevant(state: ControllerState): unknown {
  return {
    ...state,
    nodeHealth: new Map(
      [...state.nodeHealth].map(([name, h]) => [
        name,
        { status: h.status, transition: h.readyTransitionTimestamp },
      ]),
    ),
  };
}

describe('ControllerStateStore', () => {
  it.each(['taint', 'legacy'] as const)(
    'round-trips a ControllerState built by real passes (%s mode)',
    async (mode) => {
      const cluster = `roundtrip-${mode}`;
      const { scenario, stores, committed } = await seed(cluster, mode);
      const state = scenario.harness.state;
      // The scenario reaches every part of the state.
      expect(state.knownNodes.size).toBe(allNodes.length);
      expect([...state.zoneQueues.values()].some((q) => q.queue.length > 0 || q.set.length > 0)).toBe(true);
      if (mode === 'taint') {
        expect(state.nodesToRetry.size).toBeGreaterThan(0);
        const processAts = [...state.zoneQueues.values()].flatMap((q) => q.queue.map((v) => v.processAt));
        expect(processAts.some((at) => !Number.isInteger(at))).toBe(true);
        expect([...state.zoneQueues.values()].some((q) => q.set.length > q.queue.length)).toBe(true);
      } else {
        expect([...state.nodeEvictionStatus.values()]).toContain('evicted');
      }

      const loaded = await stores.controllerState.load(cluster);
      expect(loaded.state).toEqual(state);
      expect([...loaded.state.zoneQueues]).toEqual([...state.zoneQueues]); // order inside each queue too
      expect(loaded.nodes).toEqual(new Map(clusterNodes(scenario.cluster).map((n) => [n.name, n])));
      // committedAt: the store's clock when the cluster row was written.
      const { committedAt, ...stored } = loaded.meta;
      expect(stored).toEqual(meta(1, scenario.now));
      expect(committedAt).toBeTypeOf('number');
      // A commit with rows fences the cluster row first, then records the digest processed last.
      expect(loaded.versions).toMatchObject({ meta: 2 });
      expect(committed.versions.health).toEqual(loaded.versions.health);
      const gauges = scenario.harness.last?.disruption.gauges ?? [];
      expect(loaded.zones).toEqual(new Map(gauges.map(({ zone, ...g }) => [zone, g])));
    },
  );

  it('a quiet pass that may wait writes nothing; refresh and the hourly full load keep its position ahead of the row', async () => {
    const cluster = 'quiet';
    const { scenario, stores, committed } = await seed(cluster, 'taint', true);
    const fake = scenario.cluster;
    const now = scenario.now + 5_000;
    const pass = passFrom(committed, fake, leasesAt(now), now);
    db.commands.reset();
    const kept = await stores.controllerState.commit(committed, {
      state: pass.state,
      meta: meta(2, now),
      positionMayWait: true,
    });
    expect(db.commands.writes()).toBe(0);
    expect(kept.meta).toMatchObject({ lastSequence: 2, lastObservedAt: now });
    expect(kept.versions.storedMeta).toMatchObject({ lastSequence: 1 });
    const refreshed = await stores.controllerState.refresh(kept);
    expect(refreshed.meta).toMatchObject({ lastSequence: 2, lastObservedAt: now });
    expect(refreshed.versions.storedMeta).toMatchObject({ lastSequence: 1 });
    // The hourly safety net reloads every row, and keeps the position (no monitor committed since).
    const hourly = db.stores({ settings: { fullReloadEveryMs: 0 } });
    const reloaded = await hourly.controllerState.refresh(refreshed);
    expect(reloaded.meta).toMatchObject({ lastSequence: 2, lastObservedAt: now });
    // Without positionMayWait, the next pass writes its position (and clears storedMeta).
    db.commands.reset();
    const written = await stores.controllerState.commit(reloaded, {
      state: reloaded.state,
      meta: meta(3, now + 5_000),
    });
    expect(Object.fromEntries(db.commands.counts)).toEqual({ UpdateItem: 1 });
    expect(written.versions.storedMeta).toBeUndefined();
    expect((await stores.controllerState.loadMeta(cluster)).lastSequence).toBe(3);
  });

  it('writes only the cluster row for a steady pass (lease renewals only)', async () => {
    const cluster = 'steady';
    const { scenario, stores, committed } = await seed(cluster, 'taint', true);
    const fake = scenario.cluster;
    let loaded = committed;
    const now = scenario.now + 5_000;
    const pass = passFrom(loaded, fake, leasesAt(now), now);
    db.commands.reset();
    loaded = await stores.controllerState.commit(loaded, { state: pass.state, meta: meta(2, now) });
    expect(Object.fromEntries(db.commands.counts)).toEqual({ UpdateItem: 1 });
    expect(loaded.versions.meta).toBe(3); // the seed's commit took 2 (its fence, then processed)

    // One node reports Ready=False: its health row and its zone queue change, nothing else.
    const later = now + 5_000;
    fake.setConditions('n2b', [ready('False', later, later)]);
    await stores.nodes.putNode(cluster, fake.node('n2b'));
    loaded = await stores.controllerState.refresh(loaded);
    const second = passFrom(loaded, fake, leasesAt(later), later);
    db.commands.reset();
    const before = stores.capacity.snapshot();
    loaded = await stores.controllerState.commit(loaded, { state: second.state, meta: meta(3, later) });
    // The meta fence, n2b's health row, the queue (claim + entry row + clear of the redo log), then the
    // meta recording the digest processed.
    expect(db.commands.get('UpdateItem')).toBe(5);
    expect(db.commands.get('PutItem')).toBe(1);
    expect(db.commands.writes()).toBe(6);
    const used = stores.capacity.snapshot();
    expect(used.writeUnits - before.writeUnits).toBeGreaterThanOrEqual(6);
    expect(loaded.state.zoneQueues.get('region1:\x00:zone2')?.queue.map((v) => v.value)).toContain('n2b');
  });

  it('a cold load plus the next digest decides exactly as the warm state (skipped probe writes are rebuilt)', async () => {
    const cluster = 'warm-vs-cold';
    const { scenario, stores, committed } = await seed(cluster, 'taint');
    const fake = scenario.cluster;
    fake.fail('markPodsNotReady', 0); // the cold path's fresh fake cluster injects no failures either
    // A node goes silent mid-way: it is marked Unknown, then queued, within the loop.
    const silent = new Map([['n2b', scenario.now + 5_000]]);
    let warm = committed;
    let wrote = 0;
    for (let i = 1; i <= 16; i++) {
      const now = scenario.now + i * 5_000;
      const leases = leasesAt(now, silent);
      const cold = await db.stores().controllerState.load(cluster);
      const fromCold = passFrom(cold, new FakeCluster(clusterNodes(fake), fake.pods), leases, now);
      const fromWarm = passFrom(warm, fake, leases, now);
      expect(fromCold.effects).toEqual(fromWarm.effects);
      expect(fromCold.state).toEqual(fromWarm.state);
      const before = db.commands.writes();
      warm = await stores.controllerState.commit(warm, { state: fromWarm.state, meta: meta(1 + i, now) });
      wrote += db.commands.writes() - before - 1;
      // node-taints stores what the pass wrote to the cluster (Node Changed); the warm monitor refreshes.
      for (const node of clusterNodes(fake)) await stores.nodes.putNode(cluster, node);
      warm = await stores.controllerState.refresh(warm);
    }
    expect(warm.state.zoneQueues.get('region1:\x00:zone2')?.queue.map((v) => v.value)).toContain('n2b');
    expect(wrote).toBeGreaterThan(0); // n2b's rows were written when it went Unknown, and not before
  });

  it('health-only changes of many nodes are written healthWritesPerCommit a commit; the rows catch up and a cold load then decides as the warm state', async () => {
    const cluster = 'paced-health';
    const { scenario, committed } = await seed(cluster, 'taint', true);
    const stores = db.stores({ settings: { healthWritesPerCommit: 1 } });
    const fake = scenario.cluster;
    fake.fail('markPodsNotReady', 0);
    // Three renewing nodes' kubelets post Ready=False at once: three health-only changes.
    const now = scenario.now + 5_000;
    const changed = ['n2b', 'n2c', 'n3a'];
    for (const name of changed) {
      fake.setConditions(name, [ready('False', now, now)]);
      await stores.nodes.putNode(cluster, fake.node(name));
    }
    let warm = await stores.controllerState.refresh(committed);
    const pass = passFrom(warm, fake, leasesAt(now), now);
    const versionsBefore = warm.versions.health;
    warm = await stores.controllerState.commit(warm, { state: pass.state, meta: meta(2, now) });
    const written = changed.filter((n) => warm.versions.health.get(n) !== versionsBefore.get(n));
    expect(written).toEqual(['n2b']);
    expect(warm.versions.pendingHealth).toEqual(['n2c', 'n3a']);
    // What another instance loads: the rows left behind still say Ready=True.
    const storedReady = async (name: string) =>
      (await db.stores().controllerState.load(cluster)).state.nodeHealth
        .get(name)
        ?.status.find((c) => c.type === 'Ready')?.status;
    expect(await storedReady('n2b')).toBe('False');
    expect(await storedReady('n3a')).toBe('True');
    // The cluster row says rows lag (a cold load cannot tell which); the warm state knows them.
    expect((await db.stores().controllerState.load(cluster)).meta.healthRowsBehind).toBe(2);
    expect(warm.meta.healthRowsBehind).toBe(2);
    // The hourly full reload, no other monitor having committed: the lagging rows' entries are kept.
    const reloaded = await db.stores({ settings: { fullReloadEveryMs: 0 } }).controllerState.refresh(warm);
    expect(reloaded.versions.pendingHealth).toEqual(['n2c', 'n3a']);
    expect(decisionRelevant(reloaded.state)).toEqual(decisionRelevant(warm.state));

    // Passes that change nothing more write one row each, oldest first, until none is left behind.
    for (const [i, expected] of [
      [1, ['n3a']],
      [2, []],
    ] as const) {
      const at = now + i * 5_000;
      const next = passFrom(warm, fake, leasesAt(at), at);
      warm = await stores.controllerState.commit(warm, { state: next.state, meta: meta(2 + i, at) });
      expect(warm.versions.pendingHealth).toEqual(expected);
    }
    expect(await storedReady('n3a')).toBe('False');
    const cold = await db.stores().controllerState.load(cluster);
    expect(decisionRelevant(cold.state)).toEqual(decisionRelevant(warm.state));
    expect(cold.meta.healthRowsBehind).toBeUndefined();
    expect(warm.meta.healthRowsBehind).toBeUndefined();
  });

  it("a zone queue's entry changes are written queueEntriesPerCommit a commit, the queue's head first; the stored queue catches up on passes that change nothing", async () => {
    const cluster = 'paced-queue';
    const { scenario, committed } = await seed(cluster, 'taint');
    const stores = db.stores({ settings: { queueEntriesPerCommit: 4, maxQueueOpsPerCommit: 3 } });
    const [zone, queue] = [...committed.state.zoneQueues][0]!;
    const added = ['x0', 'x1', 'x2', 'x3', 'x4', 'x5'];
    const withQueue = (q: typeof queue): ControllerState => ({
      ...committed.state,
      zoneQueues: new Map([...committed.state.zoneQueues, [zone, q]]),
    });
    const storedValues = async () =>
      (await db.stores().controllerState.load(cluster)).state.zoneQueues
        .get(zone)
        ?.queue.map((v) => v.value) ?? [];
    const before = await storedValues();
    // Six nodes queued at once, the later ones due later: the four due first are stored now.
    const grown = added.reduce((q, v, i) => add(q, v, `uid-${v}`, scenario.now + i).queue, queue);
    let warm = await stores.controllerState.commit(committed, {
      state: withQueue(grown),
      meta: meta(2, scenario.now),
    });
    expect(warm.versions.zoneQueues.get(zone)?.behind).toBe(2);
    expect(warm.state.zoneQueues.get(zone)).toBe(grown); // the warm state is the whole queue
    expect(await storedValues()).toEqual([...before, 'x0', 'x1', 'x2', 'x3']);
    // A pass that changes nothing writes the rest.
    warm = await stores.controllerState.commit(warm, {
      state: warm.state,
      meta: meta(3, scenario.now + 5_000),
    });
    expect(warm.versions.zoneQueues.get(zone)?.behind).toBeUndefined();
    expect(await storedValues()).toEqual(grown.queue.map((v) => v.value));

    // The zone comes back: all six leave the queue in one pass; the head's go first.
    const shrunk = added.reduce((q, v) => remove(q, v).queue, grown);
    warm = await stores.controllerState.commit(warm, {
      state: withQueue(shrunk),
      meta: meta(4, scenario.now + 10_000),
    });
    expect(warm.versions.zoneQueues.get(zone)?.behind).toBe(2);
    expect(await storedValues()).toEqual([...before, 'x4', 'x5']);
    // What another instance loads meanwhile: a whole queue, the tail still in it.
    const other = db.stores();
    const cold = await other.controllerState.load(cluster);
    expect(cold.state.zoneQueues.get(zone)?.queue.map((v) => v.value)).toEqual([...before, 'x4', 'x5']);
    // A drainer takes the stored head's token: the warm monitor's next refresh reads the queue again,
    // and keeps the drainer's change without taking back the nodes it forgot.
    const drainAt = scenario.now + 12_000;
    let token: unknown;
    await db.stores({ client: db.newClient() }).zoneQueues.updateZoneQueue(cluster, zone, (q) => {
      const step = tryNext(q!, drainAt, { by: 'run-1', ttl: 15_000 });
      expect(step.item).toBeDefined();
      token = step.queue.limiter;
      return { queue: step.queue, result: undefined };
    });
    warm = await stores.controllerState.refresh(warm);
    const refreshed = warm.state.zoneQueues.get(zone)!;
    expect(refreshed.queue.map((v) => v.value)).toEqual(before);
    expect(refreshed.limiter).toEqual(token);
    expect(warm.versions.zoneQueues.get(zone)?.behind).toBe(2);
    // So does the hourly full reload, no other monitor having committed.
    const hourly = db.stores({ settings: { fullReloadEveryMs: 0 } });
    warm = await hourly.controllerState.refresh(warm);
    expect(warm.state.zoneQueues.get(zone)).toEqual(refreshed);
    expect(warm.versions.zoneQueues.get(zone)?.behind).toBe(2);
    // The next commit writes the rest over the drainer's version.
    warm = await stores.controllerState.commit(warm, {
      state: warm.state,
      meta: meta(5, scenario.now + 15_000),
    });
    expect(warm.versions.zoneQueues.get(zone)?.behind).toBeUndefined();
    expect(await storedValues()).toEqual(before);
    const reloaded = await db.stores().controllerState.load(cluster);
    expect(reloaded.state.zoneQueues.get(zone)).toEqual(refreshed);
  });

  it('of two commits from the same load, one gets VersionConflictError; retrying from a fresh read converges', async () => {
    const cluster = 'race';
    const { scenario, stores } = await seed(cluster, 'taint');
    const other = db.stores({ client: db.newClient() });
    const a = await stores.controllerState.load(cluster);
    const b = await other.controllerState.load(cluster);
    const now = scenario.now + 5_000;
    const fake = scenario.cluster;
    fake.setConditions('n1c', [ready('False', now, now)]);
    await stores.nodes.putNode(cluster, fake.node('n1c'));
    const passA = passFrom(await stores.controllerState.refresh(a), fake, leasesAt(now), now);
    await stores.controllerState.commit(a, { state: passA.state, meta: meta(2, now) });
    const afterA = await stores.controllerState.load(cluster);

    const later = now + 5_000;
    const passB = passFrom(b, fake, leasesAt(later), later);
    const lost = other.controllerState.commit(b, { state: passB.state, meta: meta(3, later) });
    await expect(lost).rejects.toBeInstanceOf(VersionConflictError);
    await expect(lost).rejects.toMatchObject({ table: db.tables.zones, key: { cluster, zone: '#cluster' } });
    // The cluster row is claimed first: the loser wrote nothing.
    expect((await stores.controllerState.load(cluster)).state).toEqual(afterA.state);

    let attempts = 0;
    const final = await retryOnVersionConflict(async () => {
      attempts++;
      const fresh = await other.controllerState.load(cluster);
      const pass = passFrom(fresh, fake, leasesAt(later), later);
      return other.controllerState.commit(fresh, { state: pass.state, meta: meta(3, later) });
    });
    expect(attempts).toBe(1);
    const stored = await stores.controllerState.load(cluster);
    expect(stored.meta.lastSequence).toBe(3);
    expect(decisionRelevant(stored.state)).toEqual(decisionRelevant(final.state));
  });

  it("a monitor commit that loses to a drainer's token claim keeps the claim, and queues the held node once", async () => {
    const cluster = 'claim-race';
    const { scenario, stores, committed } = await seed(cluster, 'taint');
    const [zone, queue] = [...committed.state.zoneQueues].find(([, q]) => q.queue.length > 0)!;
    const held = queue.queue[0]!;
    const now = scenario.now + 60_000;
    // A drainer takes the head's token and is writing its taint...
    await db.stores({ client: db.newClient() }).zoneQueues.updateZoneQueue(cluster, zone, (q) => {
      const step = tryNext(q!, now, { by: 'run-1', ttl: 15_000 });
      expect(step.item?.value).toBe(held.value);
      return { queue: step.queue, result: undefined };
    });
    // ...when the monitor commits from its older read: the held node was re-created (a new UID, queued
    // again by its pass) and n1d went Unknown.
    let after = remove(queue, held.value).queue;
    after = add(after, held.value, 'uid-recreated', now).queue;
    after = add(after, 'n1d', 'uid-n1d', now).queue;
    await stores.controllerState.commit(committed, {
      state: { ...committed.state, zoneQueues: new Map([...committed.state.zoneQueues, [zone, after]]) },
      meta: meta(2, now),
    });

    const stored = (await db.stores().controllerState.load(cluster)).state.zoneQueues.get(zone)!;
    const entries = stored.queue.filter((v) => v.value === held.value);
    expect(entries).toEqual([{ ...held, claim: { by: 'run-1', at: now, until: now + 15_000 } }]);
    expect(stored.queue.map((v) => v.value)).toContain('n1d');
  });

  it('node-taints and the monitor write the same items without ever conflicting', async () => {
    const cluster = 'two-writers';
    const { scenario, stores, committed } = await seed(cluster, 'taint');
    const nodeTaints = db.stores({ client: db.newClient() });
    const fake = scenario.cluster;
    const now = scenario.now + 5_000;
    // The monitor's pass changes every node's health row (a master-disruption exit would; here each
    // node's saved status changes because the kubelet posted a fresh heartbeat).
    for (const name of allNodes) {
      fake.setConditions(name, [ready('True', now, t0 - 3_600_000)]);
    }
    const refreshed = { ...committed, nodes: new Map(clusterNodes(fake).map((n) => [n.name, n])) };
    const pass = passFrom(refreshed, fake, leasesAt(now), now);
    // Meanwhile node-taints stores newer copies of the same nodes (a label change).
    const newer = clusterNodes(fake).map((n) => ({ ...n, labels: { ...n.labels, team: 'blue' } }));
    for (const n of newer) fake.put(n);
    const writes = clusterNodes(fake).map((n) => nodeTaints.nodes.putNode(cluster, n));
    const commit = stores.controllerState.commit(committed, { state: pass.state, meta: meta(2, now) });
    const results = await Promise.all(writes);
    const after = await commit;
    expect(results.every((r) => r.applied)).toBe(true);
    expect(after.versions.health.size).toBe(allNodes.length);

    const loaded = await stores.controllerState.load(cluster);
    expect(loaded.state.nodeHealth).toEqual(pass.state.nodeHealth);
    expect([...loaded.nodes.values()].every((n) => n.labels.team === 'blue')).toBe(true);
  });

  it('refresh reads only the cluster row, the zone rows and the nodes changed since the last read', async () => {
    const cluster = 'refresh';
    const { scenario, stores, committed } = await seed(cluster, 'taint');
    db.commands.reset();
    const beforeRefresh = stores.capacity.snapshot();
    const unchanged = await stores.controllerState.refresh(committed);
    expect(Object.fromEntries(db.commands.counts)).toEqual({ Query: 2 }); // Zones partition + byNodeChange index
    // The index is read eventually consistent (billed at least 0.5 RRU), the Zones partition strongly.
    expect(
      stores.capacity.snapshot().eventuallyConsistentReads - beforeRefresh.eventuallyConsistentReads,
    ).toBe(1);
    expect(unchanged.state).toEqual(committed.state);

    const fake = scenario.cluster;
    fake.put(newNode('n9', { created: scenario.now, labels: { 'kubernetes.io/hostname': 'n9' } }));
    await stores.nodes.putNode(cluster, fake.node('n9'));
    await stores.nodes.deleteNode(cluster, 'n3x', fake.node('n3x').resourceVersion);
    const refreshed = await stores.controllerState.refresh(unchanged);
    expect(refreshed.nodes.get('n9')).toEqual(fake.node('n9'));
    expect(refreshed.nodes.has('n3x')).toBe(false);
    expect([...refreshed.nodes.keys()]).toEqual([...refreshed.nodes.keys()].sort());
    const cold = await db.stores().controllerState.load(cluster);
    expect(refreshed.nodes).toEqual(cold.nodes);
    expect(refreshed.state).toEqual(cold.state);

    // Another monitor committed: refresh falls back to a full load.
    const other = db.stores({ client: db.newClient() });
    await other.controllerState.commit(cold, { state: cold.state, meta: meta(9, scenario.now) });
    const reloaded = await stores.controllerState.refresh(refreshed);
    expect(reloaded.meta.lastSequence).toBe(9);
    expect(reloaded.versions.fullLoadAt).toBeGreaterThanOrEqual(refreshed.versions.fullLoadAt);
  });

  it('refresh picks up a node re-created after its tombstone expired (its version restarted)', async () => {
    const cluster = 'recreated';
    let wall = t0;
    const stores = db.stores({
      clock: { now: () => wall },
      settings: { fullReloadEveryMs: 30 * 86_400_000 },
    });
    await stores.nodes.putNode(cluster, { ...newNode('n1', { created: t0 }), resourceVersion: '40' });
    await stores.nodes.putNode(cluster, { ...newNode('n1', { created: t0 }), resourceVersion: '41' });
    let warm = await stores.controllerState.load(cluster);
    wall += 5_000;
    await stores.nodes.deleteNode(cluster, 'n1', '42');
    warm = await stores.controllerState.refresh(warm);
    expect(warm.nodes.has('n1')).toBe(false);
    // Three days later DynamoDB's TTL has removed the tombstone, and a node with the same name joins.
    wall += 3 * 86_400_000;
    await DynamoDBDocumentClient.from(db.client).send(
      new DeleteCommand({ TableName: db.tables.nodes, Key: { cluster, node: 'n1' } }),
    );
    await stores.nodes.putNode(cluster, {
      ...newNode('n1', { created: wall, uid: 'uid-new' }),
      resourceVersion: '7',
    });
    warm = await stores.controllerState.refresh(warm);
    expect(warm.nodes.get('n1')?.uid).toBe('uid-new');
    expect(warm.versions.fullLoadAt).toBe(t0);
  });

  it('a node deleted from the cache is forgotten by the next pass and its health row emptied', async () => {
    const cluster = 'forget';
    const { scenario, stores, committed } = await seed(cluster, 'taint');
    await stores.nodes.deleteNode(cluster, 'n1d', scenario.cluster.node('n1d').resourceVersion);
    const loaded = await stores.controllerState.refresh(committed);
    const now = scenario.now + 5_000;
    const pass = passFrom(loaded, scenario.cluster, leasesAt(now), now);
    expect(pass.state.knownNodes.has('n1d')).toBe(false);
    await stores.controllerState.commit(loaded, { state: pass.state, meta: meta(2, now) });
    const cold = await db.stores().controllerState.load(cluster);
    expect(cold.state.knownNodes.has('n1d')).toBe(false);
    expect(cold.state.nodeHealth.has('n1d')).toBe(false);
    expect(cold.versions.health.get('n1d')).toBe(2);
  });

  it('loads every page: a small page limit, and more than 1 MB of nodes', async () => {
    const paged = db.stores({ settings: { queryPageLimit: 7 } });
    const cluster = 'pages';
    const names = Array.from({ length: 50 }, (_, i) => `node-${String(i).padStart(3, '0')}`);
    for (const name of names) await paged.nodes.putNode(cluster, newNode(name, { created: t0 }));
    db.commands.reset();
    const loaded = await paged.controllerState.load(cluster);
    expect([...loaded.nodes.keys()]).toEqual(names);
    expect(db.commands.get('Query')).toBeGreaterThanOrEqual(1 + Math.ceil(names.length / 7));

    // ~1.7 MB of nodes, read at DynamoDB's own 1 MB pages.
    const big = db.stores();
    const bigCluster = 'one-megabyte';
    const labels = Object.fromEntries(
      Array.from({ length: 48 }, (_, i) => [`example.com/label-${i}`, `value-${'x'.repeat(50)}-${i}`]),
    );
    const many = Array.from({ length: 400 }, (_, i) =>
      newNode(`big-${String(i).padStart(4, '0')}`, { created: t0, labels }),
    );
    await Promise.all(
      Array.from({ length: 16 }, async (_, worker) => {
        for (let i = worker; i < many.length; i += 16) await big.nodes.putNode(bigCluster, many[i]!);
      }),
    );
    db.commands.reset();
    const before = big.capacity.snapshot();
    const all = await big.controllerState.load(bigCluster);
    expect(all.nodes.size).toBe(many.length);
    expect(db.commands.get('Query')).toBeGreaterThanOrEqual(3); // Zones + at least two Nodes pages
    expect(big.capacity.snapshot().readUnits - before.readUnits).toBeGreaterThan(256); // > 1 MB strongly consistent
  });

  it('commits nothing when nothing changed', async () => {
    const cluster = 'noop';
    const { stores, committed } = await seed(cluster, 'taint');
    db.commands.reset();
    const same = await stores.controllerState.commit(committed, {
      state: committed.state,
      meta: committed.meta,
    });
    expect(db.commands.total()).toBe(0);
    expect(same.versions).toEqual(committed.versions);
  });

  it('stores a fresh cluster from an empty state', async () => {
    const stores = db.stores();
    const loaded = await stores.controllerState.load('empty');
    expect(loaded.state).toEqual(emptyControllerState());
    expect(loaded.meta).toEqual({ masterDisruption: false });
    const committed = await stores.controllerState.commit(loaded, { state: loaded.state, meta: meta(1, t0) });
    expect(committed.versions.meta).toBe(1);
    expect(testConfig.cluster).toBe('test');
  });
});
