// The failure paths of the taint-based eviction passes: upstream's control flow after a failed API
// call (retry after a fresh GET, queue entries kept when a taint write fails) and the per-item
// decision of doNoExecuteTaintingPass.
import { describe, expect, it } from 'vitest';
import {
  addPodEvictorForNewZone,
  emptyControllerState,
  workingCopy,
  zoneQueue,
} from '../../../shared/domain/controllerState.js';
import { drive, driveAsync, type Effect } from '../../../shared/domain/effects.js';
import { monitorNodeHealth, NodeHealthUpdateRetry } from '../../../shared/domain/monitorNodeHealth.js';
import {
  decideNoExecuteTaint,
  doNoExecuteTaintingPass,
  processNoExecuteTaintItem,
  processTaintBaseEviction,
  processTaintBaseEvictionWithoutWrites,
} from '../../../shared/domain/taintBasedEviction.js';
import { tryNext } from '../../../shared/domain/rateLimitedTimedQueue.js';
import { NotReadyTaintTemplate, UnreachableTaintTemplate } from '../../../shared/domain/taints.js';
import { createZoneID } from '../../../shared/domain/zones.js';
import type { Node } from '../../../shared/domain/types.js';
import { Harness, testConfig } from '../../helpers/controllerHarness.js';
import { FakeCluster, newNode, ready, t, zoneLabels } from '../../helpers/fakeCluster.js';

const fakeNow = t('2017-01-01T12:00:00Z');
const created = t('2012-01-01T00:00:00Z');
const y2015 = t('2015-01-01T12:00:00Z');
const z1 = zoneLabels('region1', 'zone1');
const z1id = createZoneID('region1', 'zone1');

describe('decideNoExecuteTaint', () => {
  it.each([
    { name: 'node gone: done', node: undefined, kind: 'done' },
    { name: 'no Ready condition: retry in 50ms', node: newNode('n', { created }), kind: 'retry' },
    {
      name: 'Ready=False: not-ready taint, unreachable opposite',
      node: newNode('n', { created, conditions: [ready('False', y2015, y2015)] }),
      kind: 'taint',
      add: NotReadyTaintTemplate,
      opposite: UnreachableTaintTemplate,
    },
    {
      name: 'Ready=Unknown: unreachable taint, not-ready opposite',
      node: newNode('n', { created, conditions: [ready('Unknown', y2015, y2015)] }),
      kind: 'taint',
      add: UnreachableTaintTemplate,
      opposite: NotReadyTaintTemplate,
    },
    {
      name: 'Ready=True by now: done, no taint',
      node: newNode('n', { created, conditions: [ready('True', y2015, y2015)] }),
      kind: 'done',
    },
  ])('$name', ({ node, kind, add, opposite }) => {
    const decision = decideNoExecuteTaint(node);
    expect(decision.kind).toBe(kind);
    if (decision.kind === 'taint') expect([decision.add, decision.opposite]).toEqual([add, opposite]);
    if (decision.kind === 'retry') expect(decision.wait).toBe(50);
  });
});

describe('doNoExecuteTaintingPass', () => {
  const unhealthy = () =>
    new FakeCluster([
      newNode('node0', { created, labels: z1, conditions: [ready('Unknown', y2015, y2015)] }),
      newNode('node1', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
    ]);

  it('keeps a node queued when its taint write fails, and taints it on the next pass', () => {
    const cluster = unhealthy();
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    cluster.fail('swapNodeTaints', 1);
    // A constant clock: within one instant the bucket's single token is spent on the failed write.
    const nodes = new Map(cluster.list().map((n) => [n.name, n]));
    const result = drive(
      doNoExecuteTaintingPass(h.state.zoneQueues, nodes, () => fakeNow),
      cluster.execute,
    );
    h.state = { ...h.state, zoneQueues: result.zoneQueues };
    expect(cluster.taints('node0')).toEqual([]);
    expect(h.queued(z1id)).toEqual(['node0']);
    expect(h.state.zoneQueues.get(z1id)?.queue[0]?.processAt).toBeGreaterThan(fakeNow);
    h.taintingPass(fakeNow + 1000);
    expect(cluster.taints('node0').map((x) => x.key)).toEqual(['node.kubernetes.io/unreachable']);
    expect(h.queued(z1id)).toEqual([]);
  });

  it('counts successful taints per zone (node_collector_evictions_total)', () => {
    const cluster = unhealthy();
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    const nodes = new Map(cluster.list().map((n) => [n.name, n]));
    const result = drive(
      doNoExecuteTaintingPass(h.state.zoneQueues, nodes, () => fakeNow),
      cluster.execute,
    );
    expect(Object.fromEntries(result.evictions)).toEqual({ [z1id]: 1 });
  });

  it('at the default rate (0.1/s, burst 1) taints one node per zone now and the next one 10s later', () => {
    const cluster = new FakeCluster([
      newNode('a', { created, labels: z1, conditions: [ready('Unknown', y2015, y2015)] }),
      newNode('b', { created, labels: z1, conditions: [ready('Unknown', y2015, y2015)] }),
      newNode('c', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
      newNode('d', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
      newNode('e', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
    ]);
    const h = new Harness(cluster, { ...testConfig, nodeEvictionRate: 0.1 });
    h.monitor(fakeNow);
    const pass = (now: number) => {
      const nodes = new Map(cluster.list().map((n) => [n.name, n]));
      const result = drive(
        doNoExecuteTaintingPass(h.state.zoneQueues, nodes, () => now),
        cluster.execute,
      );
      h.state = { ...h.state, zoneQueues: result.zoneQueues };
    };
    pass(fakeNow);
    expect(cluster.taints('a')).toHaveLength(1);
    expect(cluster.taints('b')).toHaveLength(0);
    pass(fakeNow + 9_999);
    expect(cluster.taints('b')).toHaveLength(0);
    pass(fakeNow + 10_000);
    expect(cluster.taints('b')).toHaveLength(1);
  });
});

describe('markNodeForTainting: a waiting node keeps its place (deviation)', () => {
  const unknownNode = (name: string, uid = `uid-${name}`) =>
    newNode(name, { created, uid, labels: z1, conditions: [ready('Unknown', y2015, y2015)] });
  // A healthy node in another zone keeps the cluster out of master disruption (which clears the queues).
  const healthy = newNode('z2', {
    created,
    labels: zoneLabels('region1', 'zone2'),
    conditions: [ready('True', fakeNow, fakeNow)],
  });
  const clusterOf = (...nodes: Node[]) => new FakeCluster([...nodes, healthy]);
  const entries = (h: Harness) =>
    (h.state.zoneQueues.get(z1id)?.queue ?? []).map((v) => [v.value, v.uid, v.addedAt, v.processAt]);

  it('keeps the first-queued order and times over later passes (upstream re-stamps every pass)', () => {
    // b fails first, a one pass later; a comes first in the node list.
    const cluster = clusterOf(
      newNode('a', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
      unknownNode('b'),
    );
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    cluster.put(unknownNode('a'));
    h.monitor(fakeNow + 5_000);
    for (let pass = 2; pass <= 6; pass++) h.monitor(fakeNow + pass * 5_000);
    expect(entries(h)).toEqual([
      ['b', 'uid-b', fakeNow, fakeNow],
      ['a', 'uid-a', fakeNow + 5_000, fakeNow + 5_000],
    ]);
  });

  it('queues a tainted node again at the pass instant when its taint was removed by hand (#89012)', () => {
    const cluster = clusterOf(unknownNode('b'));
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    h.taintingPass(fakeNow);
    expect(cluster.taints('b').map((x) => x.key)).toEqual(['node.kubernetes.io/unreachable']);
    expect(entries(h)).toEqual([]);
    cluster.put({ ...cluster.node('b'), taints: [] });
    h.monitor(fakeNow + 5_000);
    expect(entries(h)).toEqual([['b', 'uid-b', fakeNow + 5_000, fakeNow + 5_000]]);
  });

  it('queues a node re-created under the same name afresh, with its new UID', () => {
    const cluster = clusterOf(unknownNode('b'));
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    cluster.put(unknownNode('b', 'uid-b-2'));
    h.monitor(fakeNow + 5_000);
    expect(entries(h)).toEqual([['b', 'uid-b-2', fakeNow + 5_000, fakeNow + 5_000]]);
  });

  it('keeps the entry of a node a drainer holds a token for, even re-created under a new UID: no second token', () => {
    const cluster = clusterOf(unknownNode('b'));
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    const queue = h.state.zoneQueues.get(z1id)!;
    // A drainer took b's token and is writing its taint.
    const held = tryNext(queue, fakeNow, { by: 'run-1', ttl: 15_000 }).queue;
    h.state = { ...h.state, zoneQueues: new Map([...h.state.zoneQueues, [z1id, held]]) };
    cluster.put(unknownNode('b', 'uid-b-2'));
    h.monitor(fakeNow + 5_000);
    expect(h.state.zoneQueues.get(z1id)?.queue).toEqual(held.queue);
  });

  it('leaves the stored queue unchanged (the same object) on a pass that only re-marks waiting nodes', () => {
    const cluster = clusterOf(unknownNode('a'), unknownNode('b'));
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    const before = h.state.zoneQueues.get(z1id);
    h.monitor(fakeNow + 5_000);
    expect(h.state.zoneQueues.get(z1id)?.queue).toBe(before?.queue);
  });
});

describe('processTaintBaseEviction: the cases without a taint write, done without the generator', () => {
  const unreachable = { ...UnreachableTaintTemplate, timeAdded: y2015 };
  const notReady = { ...NotReadyTaintTemplate, timeAdded: y2015 };
  it.each([
    { observed: 'Unknown', taints: [], queued: true, swap: undefined },
    { observed: 'False', taints: [], queued: true, swap: undefined },
    { observed: 'True', taints: [], queued: false, swap: undefined },
    { observed: 'Unknown', taints: [notReady], queued: false, swap: 'add unreachable, remove not-ready' },
    { observed: 'False', taints: [unreachable], queued: false, swap: 'add not-ready, remove unreachable' },
    { observed: 'True', taints: [unreachable], queued: false, swap: 'remove unreachable' },
  ] as const)('Ready=$observed with $taints.length taint(s): $swap', ({ observed, taints, queued, swap }) => {
    const node = newNode('node0', {
      created,
      labels: z1,
      taints,
      conditions: [ready(observed, y2015, y2015)],
    });
    const condition = ready(observed, y2015, y2015);
    const fresh = () => {
      const s = workingCopy(emptyControllerState());
      addPodEvictorForNewZone(s, node, fakeNow, testConfig);
      // Queued on an earlier pass: a Ready=True pass forgets it.
      if (observed === 'True')
        processTaintBaseEvictionWithoutWrites(
          s,
          { ...node, taints: [] },
          ready('Unknown', y2015, y2015),
          y2015,
        );
      return s;
    };
    const before = zoneQueue(fresh(), z1id).set;

    // Without writes: done in place, or nothing changed when a taint write is needed.
    const s = fresh();
    const done = processTaintBaseEvictionWithoutWrites(s, node, condition, fakeNow);
    expect(done).toBe(swap === undefined);
    expect(zoneQueue(s, z1id).set).toEqual(done ? (queued ? ['node0'] : []) : before);

    // The generator does the same, plus the taint write.
    const g = fresh();
    const effects: Effect[] = [];
    drive(processTaintBaseEviction(g, node, condition, fakeNow), (effect) => {
      effects.push(effect);
      return { ok: true };
    });
    const described = effects.map((e) =>
      e.kind === 'swapNodeTaints'
        ? [
            ...e.toAdd.map((t) => `add ${t.key.split('/')[1] ?? ''}`),
            ...e.toRemove.map((t) => `remove ${t.key.split('/')[1] ?? ''}`),
          ].join(', ')
        : e.kind,
    );
    expect(described).toEqual(swap === undefined ? [] : [swap]);
    if (swap === undefined) expect(zoneQueue(g, z1id)).toEqual(zoneQueue(s, z1id));
  });
});

describe('monitorNodeHealth failure paths', () => {
  it('retries a failed status update after a fresh GET of the node', () => {
    const cluster = new FakeCluster([
      newNode('node0', { created, labels: z1, conditions: [ready('True', y2015, y2015)] }),
    ]);
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    cluster.fail('updateNodeStatus', 1);
    const result = h.monitor(fakeNow + 60_000);
    expect(cluster.effects.filter((e) => e.kind === 'getNode')).toHaveLength(1);
    expect(cluster.effects.filter((e) => e.kind === 'updateNodeStatus')).toHaveLength(2);
    expect(cluster.node('node0').conditions[0]?.status).toBe('Unknown');
    expect(result.healthUpdateFailures).toEqual([]);
  });

  it(`gives up after ${NodeHealthUpdateRetry} failed attempts: the node is left out of its zone`, () => {
    const cluster = new FakeCluster([
      newNode('node0', { created, labels: z1, conditions: [ready('True', y2015, y2015)] }),
      newNode('node1', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
    ]);
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    cluster.setConditions('node1', [ready('True', fakeNow + 60_000, fakeNow)]);
    cluster.fail('updateNodeStatus', NodeHealthUpdateRetry);
    const result = h.monitor(fakeNow + 60_000);
    expect(result.healthUpdateFailures).toEqual(['node0']);
    expect(cluster.effects.filter((e) => e.kind === 'updateNodeStatus')).toHaveLength(NodeHealthUpdateRetry);
    // Only node1 counted: one ready node, Normal.
    expect(result.disruption.gauges.find((g) => g.zone === z1id)?.zoneSize).toBe(1);
    expect(h.state.zoneStates.get(z1id)).toBe('Normal');
  });

  it('stops retrying when the fresh GET fails', () => {
    const cluster = new FakeCluster([
      newNode('node0', { created, labels: z1, conditions: [ready('True', y2015, y2015)] }),
    ]);
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    cluster.fail('updateNodeStatus', 1);
    cluster.fail('getNode', 1);
    const result = h.monitor(fakeNow + 60_000);
    expect(result.healthUpdateFailures).toEqual(['node0']);
    expect(cluster.effects.filter((e) => e.kind === 'updateNodeStatus')).toHaveLength(1);
  });

  it('keeps the queue entry when lifting the NoExecute taint fails (markNodeAsReachable)', () => {
    const cluster = new FakeCluster([
      newNode('node0', { created, labels: z1, conditions: [ready('Unknown', y2015, y2015)] }),
      newNode('node1', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
    ]);
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    h.taintingPass(fakeNow);
    expect(cluster.taints('node0')).toHaveLength(1);
    cluster.setConditions('node0', [ready('True', fakeNow + 10_000, fakeNow + 10_000)]);
    cluster.fail('swapNodeTaints', 1);
    h.monitor(fakeNow + 10_000);
    expect(cluster.taints('node0')).toHaveLength(1);
    expect(zoneQueue(workingCopy(h.state), z1id).set).toEqual(['node0']);
    h.monitor(fakeNow + 15_000);
    expect(cluster.taints('node0')).toEqual([]);
    expect(zoneQueue(workingCopy(h.state), z1id).set).toEqual([]);
  });

  it('enters master disruption by lifting every NoExecute taint, and exits with fresh probes', () => {
    const cluster = new FakeCluster([
      newNode('node0', { created, labels: z1, conditions: [ready('Unknown', y2015, y2015)] }),
      newNode('node1', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
    ]);
    const h = new Harness(cluster);
    h.monitor(fakeNow);
    h.taintingPass(fakeNow);
    expect(cluster.taints('node0')).toHaveLength(1);
    // node1 goes silent too: the only zone is fully disrupted, which is the whole cluster.
    const entered = h.monitor(fakeNow + 60_000);
    expect(entered.disruption.masterDisruption).toBe('enter');
    expect(cluster.taints('node0')).toEqual([]);
    expect(h.state.zoneQueues.get(z1id)?.limiter).toEqual({ kind: 'never' });
    // node1 comes back: exit, and node0's probe restarts from now.
    cluster.setConditions('node1', [ready('True', fakeNow + 120_000, fakeNow + 120_000)]);
    const exited = h.monitor(fakeNow + 120_000);
    expect(exited.disruption.masterDisruption).toBe('exit');
    expect(h.state.nodeHealth.get('node0')?.probeTimestamp).toBe(fakeNow + 120_000);
    expect(h.state.zoneQueues.get(z1id)?.limiter.kind).toBe('tokenBucket');
  });
});

describe('driveAsync', () => {
  it('runs a pass with an asynchronous executor exactly as drive does', async () => {
    const nodes = [
      newNode('node0', { created, labels: z1, conditions: [ready('Unknown', y2015, y2015)] }),
      newNode('node1', { created, labels: z1, conditions: [ready('True', fakeNow, fakeNow)] }),
    ];
    const syncCluster = new FakeCluster(nodes);
    const asyncCluster = new FakeCluster(nodes);
    const input = { nodes, leases: new Map() };
    const sync = drive(
      monitorNodeHealth(emptyControllerState(), input, fakeNow, testConfig),
      syncCluster.execute,
    );
    const async = await driveAsync(
      monitorNodeHealth(emptyControllerState(), input, fakeNow, testConfig),
      (effect: Effect) => Promise.resolve(asyncCluster.execute(effect)),
    );
    expect(async.state).toEqual(sync.state);
    expect(asyncCluster.effects).toEqual(syncCluster.effects);
  });
});

describe('zoneQueue', () => {
  it('names the zone when a queue is missing (an invariant, not an expected outcome)', () => {
    expect(() => zoneQueue(workingCopy(emptyControllerState()), 'r:\x00:z')).toThrow(
      /no eviction queue for zone/,
    );
  });
});

describe('processNoExecuteTaintItem: counting only what was written', () => {
  const now = t('2017-01-01T12:00:00Z');
  const node = newNode('node0', {
    created: now - 60_000,
    labels: zoneLabels('region1', 'zone1'),
    conditions: [ready('Unknown', now - 60_000, now - 1_000)],
  });
  const item = { value: 'node0', uid: node.uid, addedAt: now, processAt: now };

  it.each([
    { name: 'written: one eviction counted', answer: { ok: true as const }, tainted: true },
    {
      name: 'already so (another drainer tainted it meanwhile): done, not counted again',
      answer: { ok: true as const, unchanged: true as const },
      tainted: false,
    },
    {
      name: 'failed: retried, not counted',
      answer: { ok: false as const, reason: 'Failed' as const, message: 'x' },
      tainted: false,
    },
  ])('$name', ({ answer, tainted }) => {
    const result = drive(processNoExecuteTaintItem(item, node, now), () => answer);
    expect(result.tainted).toBe(tainted);
    expect(result.result.done).toBe(answer.ok);
  });
});
