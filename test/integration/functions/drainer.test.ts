// The drainer service (shared/app/drainer.ts) against the API simulator and dynalite: the token bucket
// held across concurrent drainers (conditional writes on the zone queue, each token bound to its item;
// slow and crashed writes are in test/faults/slowTaintWriteSpendsOneToken.test.ts), API faults on the
// taint write (409 retried by the adapter, 500 kept in the queue for the next run), and the taint
// eviction controller's due pod deletions, also in shadow mode.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDrainer, TokenClaimTtl } from '../../../shared/app/drainer.js';
import { drainerSteps, drainerWaitBudget } from '../../../shared/app/drainerScheduling.js';
import type { DrainerResult } from '../../../shared/app/drainer.js';
import { runSteps } from '../../../shared/app/steps.js';
import {
  add,
  newRateLimitedTimedQueue,
  type RateLimitedTimedQueue,
  tryNext,
} from '../../../shared/domain/rateLimitedTimedQueue.js';
import { TaintNodeUnreachable } from '../../../shared/domain/taints.js';
import { newTokenBucketRateLimiter } from '../../../shared/domain/tokenBucket.js';
import { deletePodRetries, deletePodRetryInterval } from '../../../shared/domain/taintEviction.js';
import { startWorld, t0, testConfig, zoneKey, ZoneA, type World } from './world.js';

const S = 1_000;
const zone = zoneKey(ZoneA);
let world: World;

beforeEach(async () => {
  world = await startWorld(testConfig());
});
afterEach(async () => {
  await world.close();
});

/** Nodes the monitor has marked Unknown and queued in zone A (a token bucket of `qps`, burst 1, full at t0). */
async function queued(names: readonly string[], qps = 0.1): Promise<void> {
  for (const name of names) {
    world.addNode(name);
    const status = world.api.store.nodes.get(name).status;
    world.api.store.nodes.patch(
      name,
      {
        status: {
          conditions: (status?.conditions ?? []).map((c) =>
            c.type === 'Ready' ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown' } : c,
          ),
        },
      },
      { type: 'merge', subresource: 'status' },
    );
  }
  await world.syncNodeCache();
  await world.stores.zoneQueues.updateZoneQueue('test', zone, () => ({
    queue: names.reduce<RateLimitedTimedQueue>(
      (q, name) => add(q, name, `uid-${name}`, t0).queue,
      newRateLimitedTimedQueue(newTokenBucketRateLimiter(qps, 1, t0)),
    ),
    result: undefined,
  }));
}

const unreachable = (name: string) =>
  world.taintsOf(name).some((t) => t.key === TaintNodeUnreachable && t.effect === 'NoExecute');
const taintTimes = (names: readonly string[]) =>
  names.flatMap((name) =>
    (world.api.store.nodes.get(name).spec?.taints ?? [])
      .filter((t) => t.key === TaintNodeUnreachable)
      .map((t) => Date.parse(String(t.timeAdded))),
  );
const nodePatches = (mark: number, name?: string) =>
  world
    .requestsSince(mark)
    .filter((r) => r.verb === 'patch' && r.resource === 'nodes' && (name === undefined || r.name === name));
const queueOf = async () => (await world.stores.zoneQueues.loadZoneQueues('test')).queues.get(zone);

/** The node tainted unreachable:NoExecute in the API (by an earlier run, or another controller). */
function taintUnreachableInTheApi(name: string): void {
  world.api.store.nodes.patch(
    name,
    {
      spec: {
        taints: [
          { key: TaintNodeUnreachable, effect: 'NoExecute', timeAdded: new Date(t0 - S).toISOString() },
        ],
      },
    },
    { type: 'merge' },
  );
}

describe('the token bucket across concurrent drainers', () => {
  it('a drainer that loses the conditional write on the zone queue rereads and takes nothing more', async () => {
    await queued(['node-a', 'node-b', 'node-c']);
    // Drainer A is held just before its claim of the zone row, while drainer B runs to the end.
    const clientA = world.db.newClient();
    let release: () => void = () => undefined;
    let hold: Promise<void> | undefined = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reached: () => void = () => undefined;
    const atGate = new Promise<void>((resolve) => {
      reached = resolve;
    });
    clientA.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand' && hold !== undefined) {
          const gate = hold;
          hold = undefined;
          reached();
          await gate;
        }
        return next(args);
      },
      { step: 'initialize', name: 'gate' },
    );
    const storesA = world.db.stores({
      client: clientA,
      clock: { now: () => world.now },
      settings: { backoffBaseMs: 1, backoffCapMs: 5 },
    });
    world.now = t0 + S;
    const a = runDrainer(world.drainerDeps({ stores: storesA }), world.now);
    await atGate;
    const b = await runDrainer(world.drainerDeps(), world.now);
    release();
    const resultA = await a;

    expect(b.zones).toEqual([{ zone, processed: 1, evicted: 1, retried: 0 }]);
    expect(resultA.zones).toEqual([{ zone, processed: 0, evicted: 0, retried: 0 }]);
    expect(storesA.capacity.snapshot().conditionalCheckFailures).toBeGreaterThanOrEqual(1);
    expect(['node-a', 'node-b', 'node-c'].filter(unreachable)).toEqual(['node-a']);
  });

  it('a run with nothing due and nothing pending is a debug line; a run that tainted is an info line', async () => {
    const lines = () => world.observer.logs.filter((l) => l.message === 'drainer run').map((l) => l.level);
    await runDrainer(world.drainerDeps(), t0);
    expect(lines()).toEqual(['debug']);
    await queued(['node-a']);
    await runDrainer(world.drainerDeps(), t0 + 10 * S);
    expect(unreachable('node-a')).toBe(true);
    expect(lines()).toEqual(['debug', 'info']);
  });

  it('a run leaves an item another run holds the token of, taints the next one with its own token, and wakes when the claim runs out', async () => {
    await queued(['node-a', 'node-b', 'node-c']);
    // Another run took node-a's token at t0 and is still writing its taint.
    await world.stores.zoneQueues.updateZoneQueue('test', zone, (q) => ({
      queue: tryNext(q!, t0, { by: 'other-run', ttl: TokenClaimTtl }).queue,
      result: undefined,
    }));
    const mark = world.api.requests.length;
    const result = await runDrainer(world.drainerDeps(), t0 + 10 * S);
    expect(result.zones).toEqual([{ zone, processed: 1, evicted: 1, retried: 0 }]);
    expect(nodePatches(mark, 'node-a')).toEqual([]);
    expect(unreachable('node-b')).toBe(true);
    // node-c's token comes at +20 s; node-a's claim runs out at +15 s: it is taken over then.
    expect(result.nextDueInMs).toBe(TokenClaimTtl - 10 * S);
    const queue = await queueOf();
    expect(queue?.queue.map((v) => [v.value, v.claim?.by])).toEqual([
      ['node-a', 'other-run'],
      ['node-c', undefined],
    ]);
  });

  it('8 concurrent drainers at every instant of a long window never taint more than burst + qps × window', async () => {
    const names = Array.from({ length: 15 }, (_, i) => `node-${String(i).padStart(2, '0')}`);
    await queued(names);
    const mark = world.api.requests.length;
    // 100 s of virtual time, eight drainers started together every 2.5 s (the schedule's, the
    // monitor's, their retries and duplicates at once).
    for (let t = t0; t <= t0 + 100 * S; t += 2.5 * S) {
      world.now = t;
      await Promise.all(Array.from({ length: 8 }, () => runDrainer(world.drainerDeps(), t)));
    }
    const times = taintTimes(names).sort((x, y) => x - y);
    // Burst 1 at t0, then one every 10 s: exactly 1 + 0.1 × 100.
    expect(times).toHaveLength(11);
    expect(nodePatches(mark)).toHaveLength(11);
    for (const window of [10 * S, 30 * S, 100 * S]) {
      for (const start of times) {
        const inWindow = times.filter((at) => at >= start && at < start + window).length;
        expect(inWindow, `window of ${window / S}s from ${start - t0}`).toBeLessThanOrEqual(
          1 + (0.1 * window) / S,
        );
      }
    }
    expect(world.observer.metricValues('node_collector_evictions_total')).toHaveLength(11);
    expect((await queueOf())?.queue).toHaveLength(4);
  }, 30_000);
});

describe('API faults on the taint write', () => {
  it('409 then success: the adapter rereads and writes again (UpdateTaintBackoff)', async () => {
    await queued(['node-a']);
    world.api.faults.inject({
      kind: 'conflict',
      match: { verb: 'patch', resource: 'nodes', name: 'node-a' },
      times: 1,
    });
    const mark = world.api.requests.length;
    world.now = t0 + S;
    const result = await runDrainer(world.drainerDeps(), world.now);
    expect(result.zones).toEqual([{ zone, processed: 1, evicted: 1, retried: 0 }]);
    expect(unreachable('node-a')).toBe(true);
    expect(nodePatches(mark, 'node-a').map((r) => r.code)).toEqual([409, 200]);
    expect(world.waits.some((ms) => ms >= 100 && ms <= 200)).toBe(true);
    const decisions = await world.stores.decisions.query('test', 'node-a', { newestFirst: false });
    expect(decisions.map((d) => [d.what, d.result])).toEqual([
      ['swapNodeTaints', 'intended'],
      ['swapNodeTaints', 'ok'],
    ]);
  });

  it('500: the queue entry is kept and the next run retries it', async () => {
    await queued(['node-a']);
    const stop = world.api.faults.inject({
      kind: 'internalError',
      match: { verb: 'patch', resource: 'nodes', name: 'node-a' },
    });
    world.now = t0 + S;
    const failed = await runDrainer(world.drainerDeps(), world.now);
    expect(failed.zones).toEqual([{ zone, processed: 1, evicted: 0, retried: 1 }]);
    expect(unreachable('node-a')).toBe(false);
    const kept = await queueOf();
    expect(kept?.queue.map((v) => v.value)).toEqual(['node-a']);
    expect(kept?.queue[0]?.processAt).toBeGreaterThan(t0 + S);
    const [, outcome] = await world.stores.decisions.query('test', 'node-a', { newestFirst: false });
    expect(outcome?.result).toMatch(/^Failed: update taints of node "node-a": HTTP 500/);
    expect(world.observer.metricValues('node_collector_evictions_total')).toEqual([]);

    // The API recovers; the next run (a token has refilled: 0.1/s) taints the node.
    stop();
    world.now = t0 + 11 * S;
    const retried = await runDrainer(world.drainerDeps(), world.now);
    expect(retried.zones).toEqual([{ zone, processed: 1, evicted: 1, retried: 0 }]);
    expect(unreachable('node-a')).toBe(true);
    expect((await queueOf())?.queue).toEqual([]);
  });

  it('a node that has its NoExecute taint already is dequeued without spending the zone’s token', async () => {
    // A monitor pass that still had node-a's copy from before its taint re-queued it (upstream #89012
    // handling). Spending the token on it would delay node-b's taint by a whole token period (10 s).
    await queued(['node-a', 'node-b']);
    taintUnreachableInTheApi('node-a');
    const mark = world.api.requests.length;
    const result = await runDrainer(world.drainerDeps(), t0);
    expect(result.zones).toEqual([{ zone, processed: 2, evicted: 1, retried: 0 }]);
    expect(nodePatches(mark, 'node-a')).toEqual([]);
    expect(unreachable('node-b')).toBe(true);
    expect((await queueOf())?.queue).toEqual([]);
    const [dequeue] = await world.stores.decisions.query('test', 'node-a');
    expect(dequeue).toMatchObject({
      source: 'drainer',
      what: 'dequeue',
      why: 'doNoExecuteTaintingPass: the node has its NoExecute taint already; done without a token',
    });
  });

  it("in shadow mode a taint in place is the other controller's: the shadow spends the token and records the swap it would make", async () => {
    // The cluster's own controller tainted node-a first; the shadow (dryRun) writes nothing, so it
    // decides as if the taint were not there, at its own rate: node-a takes the token, node-b waits.
    await queued(['node-a', 'node-b']);
    taintUnreachableInTheApi('node-a');
    const mark = world.api.requests.length;
    const deps = world.drainerDeps({ config: { ...world.config, dryRun: true } });
    const result = await runDrainer(deps, t0);
    expect(result.zones).toEqual([{ zone, processed: 1, evicted: 1, retried: 0 }]);
    expect(world.writesSince(mark)).toEqual([]);
    expect((await queueOf())?.queue.map((v) => v.value)).toEqual(['node-b']);
    const trail = await world.stores.decisions.query('test', 'node-a', { newestFirst: false });
    expect(trail.find((d) => d.what === 'swapNodeTaints')).toMatchObject({
      source: 'drainer',
      result: 'dryRun',
      inputs: { add: [`${TaintNodeUnreachable}:NoExecute`] },
    });
  });

  it('a node that is Ready again by the time its token comes is dequeued without a write', async () => {
    await queued(['node-a']);
    const status = world.api.store.nodes.get('node-a').status;
    world.api.store.nodes.patch(
      'node-a',
      { status: { conditions: (status?.conditions ?? []).map((c) => ({ ...c, status: 'True' })) } },
      { type: 'merge', subresource: 'status' },
    );
    await world.syncNodeCache();
    const mark = world.api.requests.length;
    await runDrainer(world.drainerDeps(), t0 + S);
    expect(nodePatches(mark)).toEqual([]);
    const [dequeue] = await world.stores.decisions.query('test', 'node-a');
    expect(dequeue).toMatchObject({
      source: 'drainer',
      what: 'dequeue',
      why: 'doNoExecuteTaintingPass: node is ready now, ignoring taint request',
    });
  });
});

/** The node carries the unreachable NoExecute taint the timers were scheduled for (the API's word). */
function taintUnreachable(node: string): void {
  const taints = world.api.store.nodes.get(node).spec?.taints ?? [];
  world.api.store.nodes.patch(
    node,
    {
      spec: {
        taints: [
          ...taints,
          { key: TaintNodeUnreachable, effect: 'NoExecute', timeAdded: new Date(t0).toISOString() },
        ],
      },
    },
    { type: 'merge' },
  );
}

describe('pod evictions (the taint eviction controller’s timers)', () => {
  async function scheduled(pod: string, node = 'node-a'): Promise<void> {
    if (!world.api.store.nodes.list().items.some((n) => n.metadata?.name === node)) {
      world.addNode(node);
      taintUnreachable(node);
    }
    world.api.store.pods.create(
      {
        metadata: { name: pod, namespace: 'default' },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'x' }] },
      },
      { namespace: 'default' },
    );
    await world.stores.podEvictions.add('test', {
      key: `default/${pod}`,
      nodeName: node,
      createdAt: t0,
      fireAt: t0 + 30 * S,
      now: t0,
    });
  }
  const deleting = (pod: string) =>
    world.api.store.pods.get(pod, { namespace: 'default' }).metadata?.deletionTimestamp !== undefined;

  it('fires a due timer: TaintManagerEviction event, DisruptionTarget, delete, entry completed', async () => {
    await scheduled('web-1');
    await scheduled('later');
    await world.stores.podEvictions.add('test', {
      key: 'default/later-still',
      nodeName: 'node-a',
      createdAt: t0,
      fireAt: t0 + 300 * S,
      now: t0,
    });
    const result = await runDrainer(world.drainerDeps(), t0 + 30 * S);
    expect(result.pods).toEqual({
      deleted: 2,
      alreadyGone: 0,
      failed: 0,
      skipped: 0,
      shadowed: 0,
      revoked: 0,
    });
    expect(deleting('web-1')).toBe(true);
    const conditions = world.api.store.pods.get('web-1', { namespace: 'default' }).status?.conditions ?? [];
    expect(conditions).toContainEqual(expect.objectContaining({ type: 'DisruptionTarget', status: 'True' }));
    const events = world.api.store.events.list({ namespace: 'default' }).items;
    expect(events.map((e) => [e.reason, e.message])).toContainEqual([
      'TaintManagerEviction',
      'Marking for deletion Pod default/web-1',
    ]);
    expect(await world.stores.podEvictions.get('test', 'default/web-1')).toBeUndefined();
    expect(await world.stores.podEvictions.get('test', 'default/later-still')).toBeDefined();
    expect(world.observer.metricValues('taint_eviction_controller_pod_deletions_total')).toEqual([1, 1]);
    const decisions = await world.stores.decisions.query('test', 'node-a', { newestFirst: false });
    expect(decisions.map((d) => [d.what, d.result, d.inputs?.pod])).toEqual([
      ['deletePodForTaintEviction', 'intended', 'default/later'],
      ['deletePodForTaintEviction', 'ok', 'default/later'],
      ['deletePodForTaintEviction', 'intended', 'default/web-1'],
      ['deletePodForTaintEviction', 'ok', 'default/web-1'],
    ]);
  });

  it("a timer whose node lost its taint (the Node Changed that cancels it was lost) is cancelled with upstream's Event", async () => {
    await scheduled('web-1');
    // The kubelet came back and the taint was removed; the event that would have cancelled the timer never came.
    world.api.store.nodes.patch('node-a', { spec: { taints: [] } }, { type: 'merge' });
    const result = await runDrainer(world.drainerDeps(), t0 + 30 * S);
    expect(result.pods).toMatchObject({ deleted: 0, revoked: 1 });
    expect(deleting('web-1')).toBe(false);
    expect(await world.stores.podEvictions.get('test', 'default/web-1')).toBeUndefined();
    const events = world.api.store.events.list({ namespace: 'default' }).items;
    expect(events.map((e) => [e.reason, e.message])).toEqual([
      ['TaintManagerEviction', 'Cancelling deletion of Pod default/web-1'],
    ]);
    const [decision] = await world.stores.decisions.query('test', 'node-a');
    expect(decision).toMatchObject({ what: 'cancelPodEviction', result: 'cancelled' });
    expect(decision?.why).toMatch(/the node has no NoExecute taint any more/);
  });

  it('a timer whose pod is terminating already is dropped: no second deletion, no second "Marking for deletion"', async () => {
    await scheduled('web-1');
    world.api.store.pods.delete('web-1', { namespace: 'default', gracePeriodSeconds: 30 });
    const mark = world.api.requests.length;
    const result = await runDrainer(world.drainerDeps(), t0 + 30 * S);
    expect(result.pods).toMatchObject({ deleted: 0, alreadyGone: 0, revoked: 1 });
    expect(world.writesSince(mark)).toEqual([]);
    expect(world.api.store.events.list({ namespace: 'default' }).items).toEqual([]);
    expect(await world.stores.podEvictions.get('test', 'default/web-1')).toBeUndefined();
  });

  it("a timer whose node cannot be read stays due: nothing is decided without the API's word", async () => {
    await scheduled('web-1');
    world.api.faults.inject({
      kind: 'internalError',
      match: { verb: 'get', resource: 'nodes', name: 'node-a' },
    });
    const result = await runDrainer(world.drainerDeps(), t0 + 30 * S);
    expect(result.pods).toMatchObject({ deleted: 0, skipped: 1 });
    expect(deleting('web-1')).toBe(false);
    expect(await world.stores.podEvictions.get('test', 'default/web-1')).toMatchObject({ firing: false });
    world.api.faults.clear();
    const retried = await runDrainer(world.drainerDeps(), t0 + 31 * S);
    expect(retried.pods).toMatchObject({ deleted: 1 });
    expect(deleting('web-1')).toBe(true);
  });

  it('a delete that keeps failing is tried deletePodRetries times, 10 ms apart, and the entry is completed', async () => {
    await scheduled('stuck');
    world.api.faults.inject({
      kind: 'internalError',
      match: { verb: 'delete', resource: 'pods', name: 'stuck' },
    });
    const mark = world.api.requests.length;
    const result = await runDrainer(world.drainerDeps(), t0 + 30 * S);
    expect(result.pods).toMatchObject({ deleted: 0, failed: 1 });
    const deletes = world.requestsSince(mark).filter((r) => r.verb === 'delete');
    // Each attempt is one DELETE plus the adapter's own retry of the 500 (maxAttempts 2 in this world).
    expect(deletes).toHaveLength(deletePodRetries * 2);
    expect(world.waits.filter((ms) => ms === deletePodRetryInterval)).toHaveLength(deletePodRetries - 1);
    expect(deleting('stuck')).toBe(false);
    expect(await world.stores.podEvictions.get('test', 'default/stuck')).toBeUndefined();
  });

  it('shadow mode: the decision is recorded, the timer consumed, the pod left alone', async () => {
    world.config = testConfig({ dryRun: true });
    await scheduled('web-1');
    const mark = world.api.requests.length;
    const result = await runDrainer(world.drainerDeps(), t0 + 30 * S);
    expect(result.pods).toMatchObject({ deleted: 0, shadowed: 1 });
    expect(world.writesSince(mark)).toEqual([]);
    expect(deleting('web-1')).toBe(false);
    expect(await world.stores.podEvictions.get('test', 'default/web-1')).toBeUndefined();
    const [decision] = await world.stores.decisions.query('test', 'node-a');
    expect(decision).toMatchObject({ what: 'deletePodForTaintEviction', result: 'dryRun', dryRun: true });
  });
});

// Upstream's doNoExecuteTaintingPass polls every 100 ms; the drainer instead returns when the next item
// is due (nextDueInMs) and waits for it within its budget, so tokens are used when they come.
describe('waiting for the next due item (drainerSteps)', () => {
  /** One drainer run through its steps, as a Lambda runs them: each wait advances the clock. */
  async function drainThroughSteps(budgetMs: number, slept: number[]): Promise<DrainerResult[]> {
    const runs: DrainerResult[] = [];
    const first = await drainerSteps(world.drainerDeps(), {
      now: () => world.now,
      budgetMs,
      onRun: (r) => runs.push(r),
    });
    await runSteps(first, (ms) => {
      slept.push(ms);
      world.now += ms;
      return Promise.resolve();
    });
    return runs;
  }

  it('one run of the schedule taints a zone at its rate, one node every 10 s, waiting in between', async () => {
    await queued(['node-a', 'node-b', 'node-c']);
    world.now = t0;
    const slept: number[] = [];
    const runs = await drainThroughSteps(drainerWaitBudget('schedule', world.config, 60 * S), slept);
    expect(slept).toEqual([10 * S, 10 * S]);
    expect(runs.map((r) => [r.now - t0, r.zones[0]?.evicted ?? 0, r.nextDueInMs])).toEqual([
      [0, 1, 10 * S],
      [10 * S, 1, 10 * S],
      [20 * S, 1, undefined],
    ]);
    expect(taintTimes(['node-a', 'node-b', 'node-c']).map((t) => t - t0)).toEqual([0, 10 * S, 20 * S]);
  });

  it('a run the monitor started waits at most one nodeMonitorPeriod: the next pass starts another', async () => {
    await queued(['node-a', 'node-b']);
    world.now = t0;
    const slept: number[] = [];
    const runs = await drainThroughSteps(drainerWaitBudget('monitorPass', world.config, 60 * S), slept);
    expect(drainerWaitBudget('monitorPass', world.config, 60 * S)).toBe(world.config.nodeMonitorPeriod);
    expect(slept).toEqual([]);
    expect(runs.map((r) => r.nextDueInMs)).toEqual([10 * S]);
    expect(unreachable('node-b')).toBe(false);
  });

  it('waits for a pod eviction timer and fires it at its instant', async () => {
    world.addNode('node-a');
    taintUnreachable('node-a');
    world.api.store.pods.create(
      {
        metadata: { name: 'web-1', namespace: 'default' },
        spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }] },
      },
      { namespace: 'default' },
    );
    await world.stores.podEvictions.add('test', {
      key: 'default/web-1',
      nodeName: 'node-a',
      createdAt: t0,
      fireAt: t0 + 3_250,
      now: t0,
    });
    world.now = t0;
    const slept: number[] = [];
    const runs = await drainThroughSteps(drainerWaitBudget('monitorPass', world.config, 60 * S), slept);
    expect(slept).toEqual([3_250]);
    expect(runs.map((r) => r.pods.deleted)).toEqual([0, 1]);
  });

  it('keeps a safety margin of the invocation’s remaining time for its last run', () => {
    expect(drainerWaitBudget('schedule', world.config, 60 * S)).toBe(50 * S);
    expect(drainerWaitBudget('schedule', world.config, 8 * S)).toBe(0);
    expect(drainerWaitBudget('scheduledCheck', world.config, 60 * S)).toBe(world.config.nodeMonitorPeriod);
  });
});
