// Fault: a stale Pod Changed deletes a healthy pod re-created under the same name.
//
// A StatefulSet pod db-0 runs on a node tainted NoExecute; it is deleted and the StatefulSet controller
// re-creates it, under the same name, on a healthy node. The old pod's ADDED arrives late (a Lambda
// retry after two failed deliveries, a duplicate, a DLQ redrive), after the new pod's. Scheduled pod
// evictions are keyed by namespace/name; before, the late event scheduled an eviction that deleted the
// NEW db-0 on the healthy node 300 s later. Now every eviction is bound to the UID of the pod it was
// decided for, and the DELETE carries it as a precondition.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDrainer } from '../../shared/app/drainer.js';
import {
  handleNodeChanged,
  handlePodChanged,
  type TaintEvictionDeps,
} from '../../shared/app/taintEviction.js';
import { TaintNodeUnreachable } from '../../shared/domain/taints.js';
import {
  createNode,
  createPod,
  nodeChanged,
  nodeOf,
  podChanged,
  podOf,
  updateNode,
} from '../helpers/functionsFixture.js';
import { startWorld, t0, testConfig, type World } from '../integration/functions/world.js';

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

const dbPod = () => world.api.store.pods.get('db-0', { namespace: 'default' });

describe('a pod re-created under the same name on a healthy node', () => {
  it('is never deleted by an eviction decided for the pod it replaced, however late its events come', async () => {
    createNode(world.api, 'dead');
    createNode(world.api, 'healthy');
    createPod(world.api, 'db-0', { nodeName: 'dead', ownerKind: 'StatefulSet' }); // 300 s default toleration
    const oldAdded = podChanged('test', podOf(world.api, 'db-0'), 'ADDED');
    updateNode(world.api, 'dead', { taints: [{ key: TaintNodeUnreachable, effect: 'NoExecute' }] });
    await handleNodeChanged(taintEvictionDeps(), nodeChanged('test', nodeOf(world.api, 'dead')));

    // The old db-0 goes (its eviction fired, or someone deleted it) and comes back on a healthy node.
    world.now = t0 + 300 * S;
    await runDrainer(world.drainerDeps(), world.now);
    world.api.store.pods.delete('db-0', { namespace: 'default', gracePeriodSeconds: 0 });
    createPod(world.api, 'db-0', { nodeName: 'healthy', ownerKind: 'StatefulSet' });
    const newUid = dbPod().metadata?.uid;
    await handlePodChanged(taintEvictionDeps(), podChanged('test', podOf(world.api, 'db-0'), 'ADDED'));

    // The old pod's ADDED, late and twice.
    world.now = t0 + 400 * S;
    await handlePodChanged(taintEvictionDeps(), oldAdded);
    await handlePodChanged(taintEvictionDeps(), oldAdded);

    // Whatever it scheduled is bound to the old pod: when it fires, the new db-0 stays.
    world.now = t0 + 800 * S;
    const drained = await runDrainer(world.drainerDeps(), world.now);
    expect(dbPod().metadata?.uid).toBe(newUid);
    expect(dbPod().metadata?.deletionTimestamp).toBeUndefined();
    expect(drained.pods.deleted).toBe(0);
    expect(await world.stores.podEvictions.get('test', 'default/db-0')).toBeUndefined();
  });

  it('a late DELETED of the old pod does not cancel the new pod’s own eviction', async () => {
    createNode(world.api, 'dead-a');
    createNode(world.api, 'dead-b');
    for (const node of ['dead-a', 'dead-b']) {
      updateNode(world.api, node, { taints: [{ key: TaintNodeUnreachable, effect: 'NoExecute' }] });
      await handleNodeChanged(taintEvictionDeps(), nodeChanged('test', nodeOf(world.api, node)));
    }
    createPod(world.api, 'db-0', { nodeName: 'dead-a', ownerKind: 'StatefulSet' });
    const oldDeleted = podChanged('test', podOf(world.api, 'db-0'), 'DELETED');
    world.api.store.pods.delete('db-0', { namespace: 'default', gracePeriodSeconds: 0 });
    // The new pod lands on another tainted node: it gets its own 300 s eviction.
    createPod(world.api, 'db-0', { nodeName: 'dead-b', ownerKind: 'StatefulSet' });
    await handlePodChanged(taintEvictionDeps(), podChanged('test', podOf(world.api, 'db-0'), 'ADDED'));
    const entry = await world.stores.podEvictions.get('test', 'default/db-0');
    expect(entry?.uid).toBe(dbPod().metadata?.uid);

    await handlePodChanged(taintEvictionDeps(), oldDeleted);
    expect(await world.stores.podEvictions.get('test', 'default/db-0')).toEqual(entry);
  });
});
