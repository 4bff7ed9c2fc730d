// The relay end to end against the API simulator (HTTPS, through @kubernetes/client-node), with a
// recording event sink: which Node Changed and Pod Changed events it publishes, and what its Heartbeat
// Digests say.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { encodeDetail, HeartbeatDigestDetailType, parseHeartbeatDigest } from '../../../shared/events.js';
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

/** Lets every watch event so far reach the relay, and every due flush publish. */
async function settle(t: TestRelay): Promise<void> {
  await waitForCatchUp(sim, t.relay);
  await sim.scheduler.advance(0);
}

describe('Node Changed', () => {
  it('is published for a node added, changed in a field the controller reads, and deleted', async () => {
    createNode(sim, 'node-a');
    const t = await startRelay();
    const { sink } = t;
    await waitFor(sim, () => sink.nodeChanges().length === 1, 'node-a ADDED');
    expect(sink.nodeChanges()[0]).toMatchObject({
      schemaVersion: 1,
      cluster: 'test',
      type: 'ADDED',
      node: {
        name: 'node-a',
        labels: { 'topology.kubernetes.io/zone': 'zone-a' },
        conditions: [{ type: 'Ready', status: 'True' }],
        unschedulable: false,
      },
    });

    sim.api.store.nodes.patch('node-a', { spec: { unschedulable: true } }, { type: 'merge' });
    await waitFor(sim, () => sink.nodeChanges().length === 2, 'node-a cordoned');
    expect(sink.nodeChanges()[1]).toMatchObject({
      type: 'MODIFIED',
      node: { name: 'node-a', unschedulable: true },
    });

    setReady(sim, 'node-a', 'False', t0 + 20_000);
    await waitFor(sim, () => sink.nodeChanges().length === 3, 'node-a NotReady');
    expect(sink.nodeChanges()[2]?.node.conditions).toMatchObject([{ type: 'Ready', status: 'False' }]);

    sim.api.store.nodes.delete('node-a');
    await waitFor(sim, () => sink.nodeChanges().length === 4, 'node-a DELETED');
    expect(sink.nodeChanges()[3]).toMatchObject({ type: 'DELETED', node: { name: 'node-a' } });
    await settle(t);
    expect(sink.nodeChanges()).toHaveLength(4);
  });

  it('is not published for changes the controller does not read: images, other labels, heartbeats, leases', async () => {
    createNode(sim, 'node-a');
    const t = await startRelay();
    await waitFor(sim, () => t.sink.nodeChanges().length === 1, 'node-a ADDED');

    setReady(sim, 'node-a', 'True', t0 + 10_000, ['registry.example/app:2']); // heartbeat + images list
    sim.api.store.nodes.patch(
      'node-a',
      { metadata: { labels: { 'example.com/team': 'x' } } },
      { type: 'merge' },
    );
    sim.api.store.nodes.patch('node-a', { metadata: { annotations: { note: 'y' } } }, { type: 'merge' });
    renewLease(sim, 'node-a', t0 + 10_000);
    await settle(t);

    expect(t.sink.nodeChanges()).toHaveLength(1);
    expect(t.sink.podChanges()).toHaveLength(0);
  });
});

describe('Pod Changed', () => {
  it('is published for bound pods added, bound, starting to terminate and deleted; not for unbound pods or status', async () => {
    createNode(sim, 'node-a');
    const t = await startRelay();
    createPod(sim, 'web-0', 'node-a');
    await waitFor(sim, () => t.sink.podChanges().length === 1, 'web-0 ADDED');
    expect(t.sink.podChanges()[0]).toMatchObject({
      type: 'ADDED',
      pod: { namespace: 'default', name: 'web-0', nodeName: 'node-a' },
    });

    createPod(sim, 'pending-0', undefined); // not bound: the informer's field selector never shows it
    sim.api.store.pods.patch(
      'web-0',
      { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      { type: 'strategic', subresource: 'status', namespace: 'default' },
    );
    await settle(t);
    expect(t.sink.podChanges()).toHaveLength(1);

    sim.api.store.bindPod('default', 'pending-0', 'node-a'); // the scheduler binds it: ADDED
    await waitFor(sim, () => t.sink.podChanges().length === 2, 'pending-0 bound');
    expect(t.sink.podChanges()[1]).toMatchObject({
      type: 'ADDED',
      pod: { name: 'pending-0', nodeName: 'node-a' },
    });

    sim.api.store.pods.delete('web-0', { namespace: 'default' }); // graceful: Terminating first
    await waitFor(sim, () => t.sink.podChanges().length === 3, 'web-0 terminating');
    expect(t.sink.podChanges()[2]).toMatchObject({ type: 'MODIFIED', pod: { name: 'web-0' } });
    expect(t.sink.podChanges()[2]?.pod.deletionTimestamp).toBeDefined();

    sim.api.store.pods.delete('web-0', { namespace: 'default', gracePeriodSeconds: 0 }); // the kubelet confirms
    await waitFor(sim, () => t.sink.podChanges().length === 4, 'web-0 DELETED');
    expect(t.sink.podChanges()[3]).toMatchObject({ type: 'DELETED', pod: { name: 'web-0' } });
  });
});

describe("Pod Changed for a pod marked NotReady (what a shadow records of the cluster's controller)", () => {
  const setPodReady = (name: string, status: 'True' | 'False'): void => {
    sim.api.store.pods.patch(
      name,
      { status: { conditions: [{ type: 'Ready', status }] } },
      { type: 'strategic', subresource: 'status', namespace: 'default' },
    );
  };

  it('is published on a node known not Ready, or held until its node turns out not Ready; not on a Ready node', async () => {
    createNode(sim, 'node-a');
    createNode(sim, 'node-b');
    createNode(sim, 'node-c');
    for (const [pod, node] of [
      ['web-a', 'node-a'],
      ['web-b', 'node-b'],
      ['web-c', 'node-c'],
    ] as const) {
      createPod(sim, pod, node);
      setPodReady(pod, 'True');
    }
    const t = await startRelay();
    await settle(t);
    const before = t.sink.podChanges().length;

    // node-a marked Unknown, then its pod marked NotReady: published at once.
    setReady(sim, 'node-a', 'Unknown', t0);
    await settle(t);
    setPodReady('web-a', 'False');
    await waitFor(sim, () => t.sink.podChanges().length === before + 1, 'web-a NotReady');
    expect(t.sink.podChanges()[before]).toMatchObject({
      type: 'MODIFIED',
      pod: { name: 'web-a', ready: 'False' },
      oldReady: 'True',
    });

    // web-b's NotReady seen before node-b's mark (two watches, no order between them): held, then
    // published when node-b is seen not Ready.
    setPodReady('web-b', 'False');
    await settle(t);
    expect(t.sink.podChanges()).toHaveLength(before + 1);
    setReady(sim, 'node-b', 'Unknown', t0);
    await waitFor(sim, () => t.sink.podChanges().length === before + 2, 'web-b NotReady, released');
    expect(t.sink.podChanges()[before + 1]).toMatchObject({
      pod: { name: 'web-b', ready: 'False' },
      oldReady: 'True',
    });

    // web-c on a node that stays Ready (its kubelet's own readiness probe): never published.
    setPodReady('web-c', 'False');
    await settle(t);
    setReady(sim, 'node-c', 'True', t0 + 10_000);
    await settle(t);
    expect(t.sink.podChanges().map((c) => c.pod.name)).not.toContain('web-c');
  });
});

describe('the first list', () => {
  it('is published as the relay view: every node, those the functions act on first, and only their pods', async () => {
    createNode(sim, 'healthy');
    createNode(sim, 'not-ready', { ready: 'False' });
    createNode(sim, 'tainted');
    sim.api.store.nodes.patch(
      'tainted',
      { spec: { taints: [{ key: 'example.com/drain', effect: 'NoExecute' }] } },
      { type: 'merge' },
    );
    createPod(sim, 'on-healthy', 'healthy');
    createPod(sim, 'on-not-ready', 'not-ready');
    createPod(sim, 'on-tainted', 'tainted');
    const t = await startRelay();
    await waitFor(sim, () => t.sink.nodeChanges().length === 3, 'every node');
    await settle(t);

    expect(t.sink.nodeChanges().map((c) => [c.type, c.node.name])).toEqual([
      ['ADDED', 'not-ready'],
      ['ADDED', 'tainted'],
      ['ADDED', 'healthy'],
    ]);
    expect(t.sink.podChanges().map((c) => [c.type, c.pod.name])).toEqual([
      ['ADDED', 'on-not-ready'],
      ['ADDED', 'on-tainted'],
    ]);
    // Each with the resourceVersion the cluster has now, so a newer stored copy wins over it.
    for (const c of t.sink.nodeChanges()) {
      expect(c.node.resourceVersion).toBe(sim.api.store.nodes.get(c.node.name).metadata?.resourceVersion);
    }
    await expect(t.relay.metrics.republishedEvents.get()).resolves.toMatchObject({
      values: expect.arrayContaining([
        expect.objectContaining({ labels: { kind: 'node' }, value: 3 }),
        expect.objectContaining({ labels: { kind: 'pod' }, value: 2 }),
      ]) as unknown,
    });
  });
});

describe('Heartbeat Digest', () => {
  it('carries, for every node, the relay-clock time it last observed a probe, with a monotonic sequence', async () => {
    createNode(sim, 'node-a');
    createNode(sim, 'node-b');
    createNode(sim, 'node-c');
    const t = await startRelay();
    // The digest timer starts with the leadership term, at t0: the first sightings are baselines only,
    // sent as probed when the relay started observing (observingSince, t0 here).
    await waitFor(sim, () => t.sink.digests().length === 1, 'the first digest');
    expect(t.sink.digests()[0]?.observingSince).toBe(t0);
    expect(t.sink.digests()[0]?.probes).toEqual(
      new Map([
        ['node-a', t0],
        ['node-b', t0],
        ['node-c', t0],
      ]),
    );

    await advance(sim, 1_000);
    renewLease(sim, 'node-a', t0 + 1_000); // renewTime advanced: a probe, observed at t0 + 1 s
    await settle(t);
    await advance(sim, 1_000);
    setReady(sim, 'node-b', 'True', t0 + 2_000); // Ready heartbeat changed: a probe at t0 + 2 s
    await settle(t);
    await advance(sim, 1_000);
    renewLease(sim, 'node-c', t0 - 60_000); // an older renewTime: not a probe
    await settle(t);
    await advance(sim, 2_000); // t0 + 5 s: the next digest

    await advance(sim, 2_000);
    renewLease(sim, 'node-a', t0 + 7_000);
    await settle(t);
    sim.api.store.nodes.delete('node-b');
    await settle(t);
    await advance(sim, 3_000); // t0 + 10 s

    const digests = t.sink.digests();
    expect(digests.map((d) => [d.sequence, d.observedAt - t0, d.leaderSince - t0, d.relayId])).toEqual([
      [0, 0, 0, 'relay-0'],
      [1, 5_000, 0, 'relay-0'],
      [2, 10_000, 0, 'relay-0'],
    ]);
    expect(digests[1]?.probes).toEqual(
      new Map([
        ['node-a', t0 + 1_000],
        ['node-b', t0 + 2_000],
        ['node-c', t0],
      ]),
    );
    // node-a renewed again; node-b deleted, so it is no longer in the snapshot.
    expect(digests[2]?.probes).toEqual(
      new Map([
        ['node-a', t0 + 7_000],
        ['node-c', t0],
      ]),
    );
    // What the sink was given encodes to the contract and parses back.
    for (const digest of digests) {
      const wire = encodeDetail({ detailType: HeartbeatDigestDetailType, detail: digest });
      expect(parseHeartbeatDigest(JSON.parse(JSON.stringify(wire)))).toEqual(digest);
    }
    await expect(t.relay.metrics.digestNodes.get()).resolves.toMatchObject({ values: [{ value: 2 }] });
  });
});
