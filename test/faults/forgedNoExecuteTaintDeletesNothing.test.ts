// Fault: a forged (or stale) Node Changed carrying a NoExecute taint deletes pods on a healthy node.
//
// Whoever holds the relay's AWS role can put any event on the bus. Before, the taint eviction controller
// decided on the taints the event carried and never read the node: an event with any NoExecute taint
// deleted every intolerant pod of a healthy node at once, past the zone's rate limit and the disruption
// brakes, and node-taints wrote the NoSchedule taints its conditions called for. Now an event is a hint:
// both decide on the node as the API has it (docs/architecture.md#events-are-hints), and a timer that
// fires is decided again on the API's node and pod.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDrainer } from '../../shared/app/drainer.js';
import { runNodeTaints } from '../../shared/app/nodeTaints.js';
import {
  handleNodeChanged,
  handlePodChanged,
  type TaintEvictionDeps,
} from '../../shared/app/taintEviction.js';
import { TaintNodeNotReady, TaintNodeUnreachable } from '../../shared/domain/taints.js';
import type { Node } from '../../shared/domain/types.js';
import type { NodeChanged } from '../../shared/events.js';
import {
  createNode,
  createPod,
  nodeChanged,
  nodeOf,
  podChanged,
  podOf,
} from '../helpers/functionsFixture.js';
import { startWorld, testConfig, type World } from '../integration/functions/world.js';

const S = 1_000;
let world: World;

beforeEach(async () => {
  world = await startWorld(testConfig());
});
afterEach(async () => {
  await world.close();
});

function taintEvictionDeps(): TaintEvictionDeps {
  return {
    config: world.config,
    stores: world.stores,
    cluster: world.cluster,
    observer: world.observer,
    clock: { now: () => world.now },
    sleep: () => Promise.resolve(),
  };
}

/** The healthy node as the relay would send it, with a NoExecute taint and Ready=False forged in. */
function forged(name: string): NodeChanged {
  const real = nodeOf(world.api, name);
  const node: Node = {
    ...real,
    // A resourceVersion far ahead, as a forger would pick to win every ordering check.
    resourceVersion: '999999999',
    conditions: real.conditions.map((c) => (c.type === 'Ready' ? { ...c, status: 'False' as const } : c)),
    taints: [...real.taints, { key: TaintNodeUnreachable, effect: 'NoExecute', timeAdded: world.now }],
  };
  return nodeChanged('test', node);
}

const pods = ['web-1', 'batch-1', 'tolerant-1'];
const terminating = () =>
  pods.filter(
    (p) => world.api.store.pods.get(p, { namespace: 'default' }).metadata?.deletionTimestamp !== undefined,
  );

describe('a forged Node Changed with a NoExecute taint, for a healthy node', () => {
  beforeEach(() => {
    createNode(world.api, 'healthy', { taints: [], conditions: [{ type: 'Ready', status: 'True' }] });
    createPod(world.api, 'web-1', { nodeName: 'healthy' }); // 300 s default tolerations
    // Tolerates unreachable for 0 s: deleted at once if the node were tainted.
    createPod(world.api, 'batch-1', {
      nodeName: 'healthy',
      tolerations: [
        { key: TaintNodeUnreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 },
      ],
    }); // none: deleted at once if tainted
    createPod(world.api, 'tolerant-1', {
      nodeName: 'healthy',
      tolerations: [
        { key: TaintNodeUnreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
      ],
    });
  });

  it('deletes no pod and schedules no eviction, however often it is delivered', async () => {
    for (let copy = 0; copy < 3; copy++) {
      expect(await handleNodeChanged(taintEvictionDeps(), forged('healthy'))).toMatchObject({
        kind: 'skipped',
      });
    }
    expect(terminating()).toEqual([]);
    expect(await world.stores.podEvictions.list('test')).toEqual([]);
    expect(world.api.store.events.list({ namespace: 'default' }).items).toEqual([]);
  });

  it("writes no taint: node-taints decides on the API's node", async () => {
    await runNodeTaints(
      {
        config: world.config,
        stores: world.stores,
        cluster: world.cluster,
        observer: world.observer,
        clock: { now: () => world.now },
      },
      forged('healthy'),
    );
    const taints = (world.api.store.nodes.get('healthy').spec?.taints ?? []).map(
      (t) => `${t.key}:${t.effect}`,
    );
    expect(taints).not.toContain(`${TaintNodeNotReady}:NoSchedule`);
    expect(taints).not.toContain(`${TaintNodeUnreachable}:NoExecute`);
  });

  it('a Pod Changed decided against the forged copy in the node cache deletes nothing either', async () => {
    // The forged copy reached the node cache (a putNode with its far-ahead resourceVersion).
    await world.stores.nodes.putNode('test', forged('healthy').node);
    expect(
      await handlePodChanged(taintEvictionDeps(), podChanged('test', podOf(world.api, 'batch-1'), 'ADDED')),
    ).toEqual({
      kind: 'skipped',
      reason: 'nodeNotTainted',
    });
    expect(terminating()).toEqual([]);
  });

  it("a timer scheduled on a forged taint is cancelled when it fires: the API's node has no taint", async () => {
    await world.stores.podEvictions.add('test', {
      key: 'default/web-1',
      uid: podOf(world.api, 'web-1').uid,
      nodeName: 'healthy',
      createdAt: world.now,
      fireAt: world.now + 300 * S,
      now: world.now,
    });
    const result = await runDrainer(world.drainerDeps(), world.now + 300 * S);
    expect(result.pods).toMatchObject({ deleted: 0, revoked: 1 });
    expect(terminating()).toEqual([]);
  });
});
