// One clock per comparison: the relay's clock may differ from the functions' by minutes. The monitor
// moves every digest instant onto the functions' clock by the relay term's offset
// (shared/digestClock.ts), and stamps the zone queues on it; the drainer and the schedule compare them
// with their own clock, so a skew changes no timeline. Once, a relay 1 s to 2 min ahead stopped all
// NoExecute tainting (the queue head was never due on the Lambda's clock) and the silence check
// compared the two clocks.
//
// The world (world.ts): the API simulator and dynalite on the functions' clock (`world.now`); each
// digest is stamped `world.now + skew`. Passes every 5 s; node-c is silent from 0 s on.
// Expected from upstream semantics, in the functions' time: Unknown at the first pass strictly after
// 0 + 50 s grace (55 s); queued in that pass (v1.34+, PR #120816) and tainted at once (full bucket);
// node-d, silent from 10 s, Unknown and queued at 65 s, tainted when the zone's next token comes: 10 s
// after node-c's (0.1/s), at 65 s.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { drainerSteps, drainerWaitBudget } from '../../../shared/app/drainerScheduling.js';
import type { DrainerResult } from '../../../shared/app/drainer.js';
import { runSteps } from '../../../shared/app/steps.js';
import { runMonitorPass, type MonitorCache } from '../../../shared/app/monitor.js';
import { runScheduledCheck } from '../../../shared/app/scheduledCheck.js';
import { TaintNodeUnreachable } from '../../../shared/domain/taints.js';
import type { EpochMillis } from '../../../shared/domain/types.js';
import type { LoadedState } from '../../../shared/ports/stores.js';
import { startWorld, t0, testConfig, type World } from './world.js';

const S = 1_000;
let world: World;

beforeEach(async () => {
  world = await startWorld(testConfig());
});
afterEach(async () => {
  await world.close();
});

/** Runs passes every 5 s up to `until` (functions' time) with the relay `skew` ahead; returns taint times. */
async function run(skew: number, until: EpochMillis): Promise<Record<string, number>> {
  for (const name of ['node-a', 'node-b', 'node-c', 'node-d']) world.addNode(name);
  await world.syncNodeCache();
  const cache: MonitorCache = new Map<string, LoadedState>();
  const lastProbe: Record<string, EpochMillis> = { 'node-c': t0, 'node-d': t0 + 10 * S };
  const tainted: Record<string, number> = {};
  let sequence = 0;
  let lastTaintRun = 0;
  for (let t = t0; t <= until; t += 5 * S) {
    world.now = t;
    const relayNow = t + skew;
    const probes = Object.fromEntries(
      ['node-a', 'node-b', 'node-c', 'node-d'].map((n) => [n, Math.min(lastProbe[n] ?? t, t) + skew]),
    );
    const triggers = world.triggers.length;
    await runMonitorPass(world.monitorDeps(), world.digest(sequence++, relayNow, probes), { cache });
    await world.syncNodeCache();
    // The monitor started the drainer: it runs now and waits (here: advances the clock) within its budget.
    if (world.triggers.length > triggers) {
      const runs: DrainerResult[] = [];
      const first = await drainerSteps(world.drainerDeps(), {
        now: () => world.now,
        budgetMs: drainerWaitBudget('monitorPass', world.config, 60 * S),
        onRun: (r) => runs.push(r),
      });
      await runSteps(first, (ms) => {
        world.now += ms;
        return Promise.resolve();
      });
      for (const r of runs) {
        if (r.zones.some((z) => z.evicted > 0)) lastTaintRun = (r.now - t0) / S;
      }
      world.now = t;
      await world.syncNodeCache(); // node-taints stores the tainted node (Node Changed)
    }
    for (const name of ['node-c', 'node-d']) {
      const has = world
        .taintsOf(name)
        .some((x) => x.key === TaintNodeUnreachable && x.effect === 'NoExecute');
      if (has && tainted[name] === undefined) tainted[name] = lastTaintRun;
    }
  }
  return tainted;
}

describe('relay clock skew against the functions’ clock', () => {
  it.each([-120 * S, -60 * S, -S, 0, S, 60 * S, 120 * S])(
    'a skew of %i ms taints node-c at 55 s and node-d at 65 s',
    async (skew) => {
      const tainted = await run(skew, t0 + 75 * S);
      expect(tainted).toEqual({ 'node-c': 55, 'node-d': 65 });
      const trail = await world.stores.decisions.query('test', 'node-d', { newestFirst: false, limit: 50 });
      expect(trail.map((d) => [d.source, d.what, d.result ?? ''])).toContainEqual([
        'drainer',
        'swapNodeTaints',
        'ok',
      ]);
    },
    60_000,
  );

  it.each([-120 * S, 0, 120 * S])(
    'the scheduled check measures silence on the functions’ clock (skew %i ms)',
    async (skew) => {
      world.addNode('node-a');
      await world.syncNodeCache();
      world.now = t0;
      await runMonitorPass(world.monitorDeps(), world.digest(0, t0 + skew, { 'node-a': t0 + skew }), {});
      const quiet = await runScheduledCheck(world.monitorDeps(), t0 + 30 * S);
      expect(quiet).toMatchObject({ silentMs: 30 * S, observationGap: false });
      const silent = await runScheduledCheck(world.monitorDeps(), t0 + 90 * S);
      expect(silent).toMatchObject({ silentMs: 90 * S, observationGap: true });
    },
  );
});
