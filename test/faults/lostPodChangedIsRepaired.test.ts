// Fault: a Pod Changed never reaches the functions (every delivery and Lambda's retries failed, or it
// was dead-lettered outright).
//
// Before, what the functions decide from pods was decided only on Pod Changed events: a pod bound to a
// NoExecute-tainted node whose event was lost was never evicted, and a pod bound to an unreachable node
// was never marked Ready=False. Now, for every node where pods matter, the monitor decides them again
// from the API every PodSweepPeriod (4 minutes, staggered), so a lost Pod Changed is repaired within 5
// minutes (docs/architecture.md#level-triggered).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDrainer } from '../../shared/app/drainer.js';
import { runMonitorPass, type MonitorCache } from '../../shared/app/monitor.js';
import type { NodeReadMemo } from '../../shared/app/reconcileNodes.js';
import { PodSweepPeriod, type PodSweepMemo } from '../../shared/app/reconcilePods.js';
import { TaintNodeUnreachable } from '../../shared/domain/taints.js';
import type { EpochMillis } from '../../shared/domain/types.js';
import type { HeartbeatDigest } from '../../shared/events.js';
import { nodeFingerprint } from '../../shared/nodeFingerprint.js';
import { createPod } from '../helpers/functionsFixture.js';
import { startWorld, t0, testConfig, type World } from '../integration/functions/world.js';

const S = 1_000;
let world: World;
let sequence = 0;
let cache: MonitorCache;
let readMemo: NodeReadMemo;
let podSweepMemo: PodSweepMemo;

beforeEach(async () => {
  world = await startWorld(testConfig());
  sequence = 0;
  cache = new Map();
  readMemo = new Map();
  podSweepMemo = new Map();
  for (const name of ['node-a', 'node-b', 'node-c']) world.addNode(name);
  await world.syncNodeCache();
});
afterEach(async () => {
  await world.close();
});

/** A digest at `observedAt`: node-c silent since t0, the others probed a second ago. */
async function pass(observedAt: EpochMillis): Promise<void> {
  world.now = observedAt;
  const listed = await world.cluster.listNodes();
  if (!listed.ok) throw new Error(listed.message);
  const probes = Object.fromEntries(
    listed.value.map((n) => [n.name, n.name === 'node-c' ? t0 : observedAt - S]),
  );
  const digest: HeartbeatDigest = {
    ...world.digest(++sequence, observedAt, probes),
    fingerprints: new Map(listed.value.map((n) => [n.name, nodeFingerprint(n)])),
  };
  await runMonitorPass(world.monitorDeps(), digest, { cache, readMemo, podSweepMemo });
  await world.syncNodeCache(); // node-taints keeps up with what the pass wrote
}

/** Passes every 5 s from `from` to `to`, the drainer after each (as the monitor starts it). */
async function passes(from: EpochMillis, to: EpochMillis): Promise<void> {
  for (let t = from; t <= to; t += 5 * S) {
    await pass(t);
    await runDrainer(world.drainerDeps(), t + 100);
  }
}

const pod = (name: string) => world.api.store.pods.get(name, { namespace: 'default' });
const readyOf = (name: string) => pod(name).status?.conditions?.find((c) => c.type === 'Ready')?.status;

describe('a lost Pod Changed', () => {
  it('for a pod bound to a tainted node: evicted within 5 minutes', async () => {
    await passes(t0, t0 + 70 * S); // node-c Unknown at 55 s, tainted NoExecute at 60 s
    expect(world.taintsOf('node-c')).toContainEqual({ key: TaintNodeUnreachable, effect: 'NoExecute' });
    // Tolerates unreachable for 0 s: it goes at once, once the controller knows of it. Its event is lost.
    createPod(world.api, 'late-1', {
      nodeName: 'node-c',
      tolerations: [
        { key: TaintNodeUnreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 },
      ],
    });
    const boundAt = world.now;
    let evictedAt: EpochMillis | undefined;
    for (let t = boundAt + 5 * S; t <= boundAt + 5 * 60 * S && evictedAt === undefined; t += 5 * S) {
      await passes(t, t);
      if (pod('late-1').metadata?.deletionTimestamp !== undefined) evictedAt = t;
    }
    expect(evictedAt).toBeDefined();
    expect((evictedAt ?? Infinity) - boundAt).toBeLessThanOrEqual(PodSweepPeriod + 60 * S);
    const events = world.api.store.events.list({ namespace: 'default' }).items;
    expect(events.filter((e) => e.involvedObject.name === 'late-1').map((e) => e.message)).toEqual([
      'Marking for deletion Pod default/late-1',
    ]);
  });

  it('for a pod bound to an unreachable node: marked Ready=False within 5 minutes; pods there before are left', async () => {
    createPod(world.api, 'before-1', { nodeName: 'node-c' });
    await passes(t0, t0 + 70 * S);
    // MarkPodsNotReady at the transition marked before-1; the kubelet is gone, so it stays False.
    expect(readyOf('before-1')).toBe('False');
    createPod(world.api, 'late-2', { nodeName: 'node-c' }); // Ready=True, its event lost
    const boundAt = world.now;
    await passes(boundAt + 5 * S, boundAt + PodSweepPeriod + 60 * S);
    expect(readyOf('late-2')).toBe('False');
    const events = world.api.store.events.list({ namespace: 'default' }).items;
    expect(events.filter((e) => e.involvedObject.name === 'late-2').map((e) => e.reason)).toEqual([
      'NodeNotReady',
    ]);
  });
});
