// The relay's informers through watch failures (issue #3 §4: "resync after watch errors and 410 Gone"):
// a broken watch resumes from its resourceVersion with backoff, an expired one relists, and a relist
// publishes only the real changes it finds, never the whole cluster again.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  advance,
  createNode,
  createPod,
  createTestRelay,
  renewLease,
  setReady,
  type Sim,
  startSim,
  t0,
  type TestRelay,
  waitFor,
  waitForCatchUp,
  waitForSync,
} from './helpers.js';

// Watch events travel over real sockets; each wait is bounded (helpers.waitFor), the test more loosely.
vi.setConfig({ testTimeout: 30_000 });

let sim: Sim;
let test: TestRelay | undefined;

beforeEach(async () => {
  sim = await startSim();
});

afterEach(async () => {
  await test?.relay.stop({ flushTimeoutMs: 1_000 });
  test = undefined;
  await sim.api.close();
});

async function startRelay(): Promise<TestRelay> {
  test = createTestRelay(sim);
  await test.relay.start();
  await waitForSync(test.relay);
  return test;
}

async function counter(t: TestRelay, name: 'watchRestarts' | 'relists', labels: Record<string, string>) {
  const metric = await t.relay.metrics[name].get();
  return metric.values
    .filter((v) =>
      Object.entries(labels).every(([k, value]) => (v.labels as Record<string, unknown>)[k] === value),
    )
    .reduce((sum, v) => sum + v.value, 0);
}

/** The relay noticed a watch of `resource` end (it logs every end, before resuming). */
function watchEnded(t: TestRelay, resource: string): boolean {
  return t.logger.lines.some((l) => l.message.startsWith('watch ') && l.fields.resource === resource);
}

describe('a broken watch', () => {
  it('resumes from its resourceVersion after a backoff: what changed meanwhile is published once, nothing repeated', async () => {
    createNode(sim, 'node-a');
    createNode(sim, 'node-b');
    const t = await startRelay();
    await waitFor(sim, () => t.sink.nodeChanges().length === 2, 'both nodes ADDED');

    const removeFault = sim.api.faults.inject({
      kind: 'internalError',
      match: { verb: 'watch', resource: 'nodes' },
    });
    expect(sim.api.faults.dropWatches({ resource: 'nodes' })).toBe(1);
    await waitFor(sim, () => watchEnded(t, 'nodes'), 'the drop');
    sim.api.store.nodes.patch('node-a', { spec: { unschedulable: true } }, { type: 'merge' });
    setReady(sim, 'node-b', 'True', t0 + 1_000, ['registry.example/app:2']); // not relevant
    removeFault();

    await advance(sim, 3_000); // client-go backoff: 0.8-1.6 s, then again while the fault held
    await waitForCatchUp(sim, t.relay);
    await sim.scheduler.advance(0);

    expect(t.sink.nodeChanges().map((c) => [c.type, c.node.name, c.node.unschedulable])).toEqual([
      ['ADDED', 'node-a', false],
      ['ADDED', 'node-b', false],
      ['MODIFIED', 'node-a', true],
    ]);
    expect(await counter(t, 'watchRestarts', { resource: 'nodes', reason: 'error' })).toBeGreaterThanOrEqual(
      1,
    );
    expect(await counter(t, 'relists', { resource: 'nodes' })).toBe(0);
  });

  it('ended by the server (its timeout) is resumed without a relist', async () => {
    createNode(sim, 'node-a');
    const t = await startRelay();
    await waitFor(sim, () => t.sink.nodeChanges().length === 1, 'node-a ADDED');

    sim.api.faults.dropWatches({ resource: 'nodes' }, 'end');
    await waitFor(sim, () => watchEnded(t, 'nodes'), 'the end');
    // A watch that ends at once with nothing delivered counts as failed (client-go's rule), so the
    // resume may wait out one backoff.
    await advance(sim, 3_000);
    sim.api.store.nodes.patch('node-a', { spec: { unschedulable: true } }, { type: 'merge' });
    await waitFor(sim, () => t.sink.nodeChanges().length === 2, 'node-a cordoned');

    expect(await counter(t, 'relists', { resource: 'nodes' })).toBe(0);
  });
});

describe('410 Gone', () => {
  it('relists, and publishes only the changes the relist finds (a relist does not flood)', async () => {
    for (let i = 0; i < 20; i++) createNode(sim, `node-${i}`);
    for (let i = 0; i < 100; i++) createPod(sim, `pod-${i}`, `node-${i % 20}`);
    const t = await startRelay();
    // The first list is published as the relay's view: every node, no pod of a Ready, untainted node.
    await waitFor(sim, () => t.sink.nodeChanges().length === 20, 'the first list published');
    expect(t.sink.podChanges()).toHaveLength(0);
    const nodesBefore = t.sink.nodeChanges().length;
    const podsBefore = t.sink.podChanges().length;

    // Every watch breaks and cannot come back while the cluster changes; then history is compacted.
    const removeFault = sim.api.faults.inject({ kind: 'internalError', match: { verb: 'watch' } });
    expect(sim.api.faults.dropWatches()).toBe(3);
    await waitFor(
      sim,
      () => ['nodes', 'leases', 'pods'].every((r) => watchEnded(t, r)),
      'every watch to break',
    );
    sim.api.store.nodes.patch('node-0', { spec: { unschedulable: true } }, { type: 'merge' });
    setReady(sim, 'node-1', 'True', t0, ['registry.example/app:2']); // images only: not relevant
    sim.api.store.nodes.delete('node-2');
    createPod(sim, 'pod-new', 'node-3');
    sim.api.store.pods.delete('pod-5', { namespace: 'default', gracePeriodSeconds: 0 });
    renewLease(sim, 'node-4', t0 + 2_000);
    sim.api.store.compact();
    removeFault();

    await advance(sim, 5_000); // backoff, resume from the old resourceVersion: 410, relist
    await waitForCatchUp(sim, t.relay);
    await sim.scheduler.advance(0);

    expect(
      t.sink
        .nodeChanges()
        .slice(nodesBefore)
        .map((c) => [c.type, c.node.name]),
    ).toEqual([
      ['MODIFIED', 'node-0'],
      ['DELETED', 'node-2'],
    ]);
    expect(
      t.sink
        .podChanges()
        .slice(podsBefore)
        .map((c) => [c.type, c.pod.name])
        .sort(),
    ).toEqual([
      ['ADDED', 'pod-new'],
      ['DELETED', 'pod-5'],
    ]);
    for (const resource of ['nodes', 'leases', 'pods']) {
      expect(await counter(t, 'watchRestarts', { resource, reason: 'expired' })).toBeGreaterThanOrEqual(1);
      expect(await counter(t, 'relists', { resource })).toBe(1);
    }

    // The lease renewal found by the relist is a probe like any other.
    await advance(sim, 5_000);
    expect(t.sink.digests().at(-1)?.probes.has('node-4')).toBe(true);
    expect(t.sink.digests().at(-1)?.probes.has('node-2')).toBe(false);
  });
});
