// Fault: a drainer's NoExecute taint write is slow, or the drainer dies between taking a node's token and
// recording the outcome; meanwhile other drainers run (the monitor starts one after each pass, the
// schedule one a minute, Lambda retries a failed run).
//
// The item stays queued until its outcome is recorded (as upstream's head does while Try's callback runs,
// under evictorLock). Before, a second drainer peeked the same head, read the node from the API (no taint
// yet: the first write was in flight) and spent a second token on it, and the zone's next node waited a
// whole token period more; a retried run did the same to the node its first attempt held. Now the token
// is bound to its item (a claim, rateLimitedTimedQueue.ts TokenClaim) in the write that takes it: other
// drainers skip the item while the claim lasts and taint the next node with a token of its own, and a
// claim that ran out is taken over without a token.
//
// The world: the API simulator and dynalite, the real monitor passes on digests every 5 s, and zone A
// with six nodes of which a-1 and a-2 go silent (a third of the zone: Normal, 0.1 taints a second).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DrainerSource, runDrainer, TokenClaimTtl, type DrainerDeps } from '../../shared/app/drainer.js';
import { runMonitorPass, type MonitorCache } from '../../shared/app/monitor.js';
import type { Effect, ResultOf } from '../../shared/domain/effects.js';
import type { RateLimitedTimedQueue } from '../../shared/domain/rateLimitedTimedQueue.js';
import { TaintNodeUnreachable } from '../../shared/domain/taints.js';
import type { LoadedState, ZoneQueueStore } from '../../shared/ports/stores.js';
import { startWorld, t0, testConfig, zoneKey, ZoneA, type World } from '../integration/functions/world.js';

const S = 1_000;
const zone = zoneKey(ZoneA);
const nodes = ['a-1', 'a-2', 'a-3', 'a-4', 'a-5', 'a-6'];
const silent = new Set(['a-1', 'a-2']);

let world: World;
let cache: MonitorCache;
let sequence: number;
/** The node each token of zone A was spent on, in order, by every drainer of the test. */
let ledger: string[];

beforeEach(async () => {
  world = await startWorld(testConfig());
  cache = new Map<string, LoadedState>();
  sequence = 0;
  ledger = [];
  drainerTaintWrites.length = 0;
  for (const name of nodes) world.addNode(name);
  await world.syncNodeCache();
});
afterEach(async () => {
  await world.close();
});

/** One monitor pass at `t` (a digest from the relay; the silent nodes last renewed at t0). */
async function monitorPass(t: number): Promise<void> {
  world.now = t;
  const probes = Object.fromEntries(nodes.map((n) => [n, silent.has(n) ? t0 : t - S]));
  await runMonitorPass(world.monitorDeps(), world.digest(++sequence, t, probes), { cache });
}

/** Passes every 5 s from t0 until the monitor has queued a-1 and a-2; returns that pass's instant. */
async function untilQueued(): Promise<number> {
  for (let t = t0; t <= t0 + 120 * S; t += 5 * S) {
    await monitorPass(t);
    const queued = (await world.stores.zoneQueues.loadZoneQueues('test')).queues.get(zone)?.queue ?? [];
    if (queued.length === 2) {
      expect(queued.map((v) => v.value)).toEqual(['a-1', 'a-2']);
      return t;
    }
  }
  throw new Error('the monitor never queued a-1 and a-2');
}

/**
 * The zone queues as the drainer uses them, recording in `ledger` the node each token withdrawal was
 * for: the item that the write withdrawing it newly claimed (the first unclaimed item, for a write
 * without one).
 */
function ledgered(queues: ZoneQueueStore): ZoneQueueStore {
  return {
    loadZoneQueues: (cluster, opts) => queues.loadZoneQueues(cluster, opts),
    commitZoneQueues: (loaded, after, opts) => queues.commitZoneQueues(loaded, after, opts),
    updateZoneQueue: async (cluster, z, change, opts) => {
      let written: { before: RateLimitedTimedQueue; after: RateLimitedTimedQueue } | undefined;
      const outcome = await queues.updateZoneQueue(
        cluster,
        z,
        (before) => {
          const out = change(before);
          // The last call's outcome is the one written (a lost race calls `change` again).
          written =
            before !== undefined && out.queue !== undefined ? { before, after: out.queue } : undefined;
          return out;
        },
        opts,
      );
      if (written !== undefined && written.after.limiter !== written.before.limiter) {
        const { before, after } = written;
        const claimed = after.queue.find(
          (v) => v.claim !== undefined && before.queue.find((b) => b.value === v.value)?.claim === undefined,
        );
        ledger.push(claimed?.value ?? before.queue.find((v) => v.claim === undefined)?.value ?? '-');
      }
      return outcome;
    },
  };
}

/** A drainer whose taint writes go through `write` (the real cluster adapter by default). */
function drainer(
  write?: (effect: Effect, real: () => Promise<ResultOf<Effect>>) => Promise<ResultOf<Effect>>,
): DrainerDeps {
  const deps = world.drainerDeps();
  const real = world.cluster;
  return {
    ...deps,
    stores: { ...world.stores, zoneQueues: ledgered(world.stores.zoneQueues) },
    cluster: {
      execute: <E extends Effect>(effect: E, opts?: { signal?: AbortSignal }): Promise<ResultOf<E>> => {
        const run = () => {
          if (effect.kind === 'swapNodeTaints') drainerTaintWrites.push(effect.node);
          return real.execute(effect, opts);
        };
        if (write === undefined || effect.kind !== 'swapNodeTaints') return run();
        return write(effect, run) as Promise<ResultOf<E>>;
      },
      deletePodForTaintEviction: (...args) => real.deletePodForTaintEviction(...args),
      listPodsOnNode: (...args) => real.listPodsOnNode(...args),
    },
  };
}

/** A gate: `hold` blocks until `release`; `reached` resolves when something waits at it. */
function gate() {
  let release: () => void = () => undefined;
  let arrive: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const reached = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  return {
    release,
    reached,
    hold: async <T>(run: () => Promise<T>): Promise<T> => {
      arrive();
      await released;
      return run();
    },
  };
}

/**
 * The drainers' taint writes that reached the API, by node. (The monitor writes taints too: in this
 * world nobody runs node-taints, so it makes the unreachable NoSchedule taint node-taints never made.)
 */
const drainerTaintWrites: string[] = [];
const taintPatches = (name: string) => drainerTaintWrites.filter((node) => node === name);
const unreachableSince = (name: string) =>
  (world.api.store.nodes.get(name).spec?.taints ?? [])
    .filter((t) => t.key === TaintNodeUnreachable && t.effect === 'NoExecute')
    .map((t) => Date.parse(String(t.timeAdded)));
const decisionsOn = async (name: string) =>
  (await world.stores.decisions.query('test', name, { newestFirst: false }))
    .filter((d) => d.source === DrainerSource)
    .map((d) => [d.what, d.result ?? '-']);

describe('a slow taint write', () => {
  it('another drainer spends no token on its node and taints the zone’s next node when its token comes', async () => {
    const queuedAt = await untilQueued();

    // Drainer A takes a-1's token (the bucket's burst) and its taint write hangs.
    const slow = gate();
    world.now = queuedAt;
    const a = runDrainer(
      drainer((_effect, write) => slow.hold(write)),
      queuedAt,
    );
    await slow.reached;
    expect(ledger).toEqual(['a-1']);

    // Meanwhile the monitor passes (its copy of a-1 has no taint: it keeps a-1's entry, claim and all),
    // and starts drainers; the zone's next token comes 10 s after the first.
    await monitorPass(queuedAt + 5 * S);
    const early = await runDrainer(drainer(), queuedAt + 5 * S);
    expect(early.zones).toEqual([{ zone, processed: 0, evicted: 0, retried: 0 }]);
    await monitorPass(queuedAt + 10 * S);
    const b = await runDrainer(drainer(), queuedAt + 10 * S);
    expect(b.zones).toEqual([{ zone, processed: 1, evicted: 1, retried: 0 }]);
    expect(unreachableSince('a-2')).toEqual([queuedAt + 10 * S]);
    expect(taintPatches('a-1')).toEqual([]);
    expect(ledger).toEqual(['a-1', 'a-2']);

    // A's write goes through at last: one taint and one token for a-1, and both nodes done.
    slow.release();
    const resultA = await a;
    expect(resultA.zones).toEqual([{ zone, processed: 1, evicted: 1, retried: 0 }]);
    expect(unreachableSince('a-1')).toEqual([queuedAt]);
    expect(taintPatches('a-1')).toHaveLength(1);
    expect(ledger).toEqual(['a-1', 'a-2']);
    const queue = (await world.stores.zoneQueues.loadZoneQueues('test')).queues.get(zone);
    expect(queue?.queue).toEqual([]);
    expect(queue?.set).toEqual(['a-1', 'a-2']);
    expect(await decisionsOn('a-1')).toEqual([
      ['swapNodeTaints', 'intended'],
      ['swapNodeTaints', 'ok'],
    ]);
    expect(world.observer.metricValues('node_collector_evictions_total')).toEqual([1, 1]);
  });

  it('still writing when its claim runs out: the next drainer takes the node over without a token', async () => {
    const queuedAt = await untilQueued();
    const slow = gate();
    world.now = queuedAt;
    const a = runDrainer(
      drainer((_effect, write) => slow.hold(write)),
      queuedAt,
    );
    await slow.reached;

    const at = queuedAt + TokenClaimTtl;
    const b = await runDrainer(drainer(), at);
    // a-1 taken over (no token) and tainted; a-2 with the token that came at +10 s.
    expect(b.zones).toEqual([{ zone, processed: 2, evicted: 2, retried: 0 }]);
    expect(ledger).toEqual(['a-1', 'a-2']);
    expect((await decisionsOn('a-1')).map(([what]) => what)).toContain('takeOver');
    expect((await world.stores.zoneQueues.loadZoneQueues('test')).queues.get(zone)?.queue).toEqual([]);

    // The price of a holder slower than its claim: its write still lands, a second write of the same
    // taint (upstream's AddOrUpdateTaint puts back its own timeAdded). Never a second token, and its
    // late completion changes nothing.
    slow.release();
    const resultA = await a;
    expect(resultA.zones).toEqual([{ zone, processed: 1, evicted: 1, retried: 0 }]);
    expect(taintPatches('a-1')).toHaveLength(2);
    expect(unreachableSince('a-1')).toHaveLength(1);
    expect(ledger).toEqual(['a-1', 'a-2']);
    const queue = (await world.stores.zoneQueues.loadZoneQueues('test')).queues.get(zone);
    expect(queue?.queue).toEqual([]);
    expect(queue?.set).toEqual(['a-1', 'a-2']);
  });
});

describe('a drainer that dies between taking a node’s token and recording the outcome', () => {
  it.each([
    { name: 'before its taint write', landed: false },
    { name: 'after its taint write landed', landed: true },
  ])(
    '$name: Lambda’s retry spends no second token, and the node is done once its claim runs out',
    async ({ landed }) => {
      const queuedAt = await untilQueued();
      world.now = queuedAt;
      const crashed = runDrainer(
        drainer(async (_effect, write) => {
          if (landed) await write();
          throw new Error('Task timed out after 60.00 seconds');
        }),
        queuedAt,
      );
      await expect(crashed).rejects.toThrow('Task timed out');
      expect(ledger).toEqual(['a-1']);

      // The retry, at once: a-1 is held, a-2's token comes at +10 s; nothing spent, nothing written.
      const retry = await runDrainer(drainer(), queuedAt + S);
      expect(retry.zones).toEqual([{ zone, processed: 0, evicted: 0, retried: 0 }]);
      expect(retry.nextDueInMs).toBe(9 * S);
      expect(ledger).toEqual(['a-1']);

      // a-2 gets the next token; the run then wakes when a-1's claim runs out.
      const next = await runDrainer(drainer(), queuedAt + 10 * S);
      expect(next.zones).toEqual([{ zone, processed: 1, evicted: 1, retried: 0 }]);
      expect(next.nextDueInMs).toBe(TokenClaimTtl - 10 * S);
      const takeOver = await runDrainer(drainer(), queuedAt + TokenClaimTtl);
      expect(takeOver.zones).toEqual([{ zone, processed: 1, evicted: landed ? 0 : 1, retried: 0 }]);

      expect(ledger).toEqual(['a-1', 'a-2']);
      expect(taintPatches('a-1')).toHaveLength(1);
      expect(unreachableSince('a-1')).toEqual([landed ? queuedAt : queuedAt + TokenClaimTtl]);
      expect(await decisionsOn('a-1')).toEqual(
        landed
          ? [
              ['swapNodeTaints', 'intended'],
              ['dequeue', '-'],
            ]
          : [
              ['swapNodeTaints', 'intended'],
              ['takeOver', '-'],
              ['swapNodeTaints', 'intended'],
              ['swapNodeTaints', 'ok'],
            ],
      );
      const queue = (await world.stores.zoneQueues.loadZoneQueues('test')).queues.get(zone);
      expect(queue?.queue).toEqual([]);
      expect(queue?.set).toEqual(['a-1', 'a-2']);
    },
  );
});
