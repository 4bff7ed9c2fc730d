// Fault: the functions' copy of a node stays wrong for good.
//
// Before, the node cache was whatever the last Node Changed said: a change dead-lettered (every delivery
// and Lambda's retries failed), a forged event whose resourceVersion jumped far ahead (every later real
// change was then "stale"), an etcd restore that moved resourceVersions back, a DELETED never delivered:
// each left a belief wrong until some later event happened to fix it, and a real NotReady was never
// tainted. Now every Heartbeat Digest carries the fingerprint of the relay's copy of each node, and the
// monitor reads a node whose copy differs, stores the API's copy whatever resourceVersion was stored,
// and runs the node-change path on it, within the pass that sees the difference
// (docs/architecture.md#level-triggered).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMonitorPass, type MonitorCache } from '../../shared/app/monitor.js';
import { FailedRepairRetry, type NodeReadMemo } from '../../shared/app/reconcileNodes.js';
import { TaintNodeNotReady } from '../../shared/domain/taints.js';
import type { EpochMillis } from '../../shared/domain/types.js';
import type { LoadedState } from '../../shared/ports/stores.js';
import { nodeFingerprint } from '../../shared/nodeFingerprint.js';
import type { HeartbeatDigest } from '../../shared/events.js';
import { startWorld, t0, testConfig, type World } from '../integration/functions/world.js';

const S = 1_000;
let world: World;
let sequence = 0;
let cache: MonitorCache;
let readMemo: NodeReadMemo;

beforeEach(async () => {
  world = await startWorld(testConfig());
  sequence = 0;
  cache = new Map();
  readMemo = new Map();
  for (const name of ['node-a', 'node-b']) world.addNode(name);
  await world.syncNodeCache();
  await pass(t0);
});
afterEach(async () => {
  await world.close();
});

/** The fingerprints of the relay's copies: the nodes as the API has them now (or as given). */
async function relayFingerprints(override: Record<string, string> = {}): Promise<Map<string, string>> {
  const listed = await world.cluster.listNodes();
  if (!listed.ok) throw new Error(listed.message);
  return new Map([
    ...listed.value.map((n) => [n.name, nodeFingerprint(n)] as const),
    ...Object.entries(override),
  ]);
}

/** A digest at `observedAt` with every node probed a second ago and the relay's fingerprints. */
async function pass(observedAt: EpochMillis, fingerprints?: Map<string, string>) {
  world.now = observedAt;
  const names = world.api.store.nodes.list().items.map((n) => n.metadata?.name ?? '');
  const digest: HeartbeatDigest = {
    ...world.digest(++sequence, observedAt, Object.fromEntries(names.map((n) => [n, observedAt - S]))),
    fingerprints: fingerprints ?? (await relayFingerprints()),
  };
  const mark = world.api.requests.length;
  const outcome = await runMonitorPass(world.monitorDeps(), digest, { cache, readMemo });
  return { outcome, requests: world.api.requests.slice(mark) };
}

const stored = (name: string) => world.stores.nodes.getNode('test', name);
const nodeReads = (requests: { verb?: string; resource?: string; name?: string }[], name: string) =>
  requests.filter((r) => r.verb === 'get' && r.resource === 'nodes' && r.name === name).length;

function reportNotReady(name: string): void {
  const status = world.api.store.nodes.get(name).status;
  world.api.store.nodes.patch(
    name,
    {
      status: {
        conditions: (status?.conditions ?? []).map((c) =>
          c.type === 'Ready' ? { ...c, status: 'False', reason: 'KubeletNotReady' } : c,
        ),
      },
    },
    { type: 'merge', subresource: 'status' },
  );
}

describe('a stale node copy is repaired within the pass that sees it', () => {
  it('a dead-lettered Node Changed: the API copy is stored, and node-taints taints the NotReady node', async () => {
    reportNotReady('node-b'); // its Node Changed never reaches the functions
    expect((await stored('node-b'))?.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');

    const { requests } = await pass(t0 + 5 * S);

    expect(nodeReads(requests, 'node-b')).toBeGreaterThanOrEqual(1);
    expect((await stored('node-b'))?.conditions.find((c) => c.type === 'Ready')?.status).toBe('False');
    expect(world.taintsOf('node-b')).toContainEqual({ key: TaintNodeNotReady, effect: 'NoSchedule' });
    const trail = await world.stores.decisions.query('test', 'node-b', { newestFirst: false });
    expect(trail.map((d) => [d.source, d.what])).toContainEqual(['monitor', 'reconcileNode']);
    expect(trail.map((d) => [d.source, d.what, d.result])).toContainEqual([
      'node-taints',
      'swapNodeTaints',
      'ok',
    ]);
    // node-a's copy matched: not read.
    expect(nodeReads(requests, 'node-a')).toBe(0);
  });

  it('a resourceVersion that jumped ahead (a forged event) no longer freezes the copy', async () => {
    const real = await stored('node-b');
    if (real === undefined) throw new Error('fixture');
    await world.stores.nodes.putNode('test', { ...real, resourceVersion: '999999999', unschedulable: true });
    reportNotReady('node-b');
    // Every later real change was "stale" for the node cache.
    const listed = await world.cluster.getNode('node-b');
    if (!listed.ok) throw new Error(listed.message);
    expect(await world.stores.nodes.putNode('test', listed.value)).toEqual({ applied: false });

    await pass(t0 + 5 * S);

    const healed = await stored('node-b');
    expect(healed?.resourceVersion).toBe(listed.value.resourceVersion);
    expect(healed?.unschedulable).toBe(false);
    expect(world.taintsOf('node-b')).toContainEqual({ key: TaintNodeNotReady, effect: 'NoSchedule' });
    // And a real change after it (a cordon) applies again.
    world.api.store.nodes.patch('node-b', { spec: { unschedulable: true } }, { type: 'merge' });
    const cordoned = await world.cluster.getNode('node-b');
    if (!cordoned.ok) throw new Error(cordoned.message);
    expect(await world.stores.nodes.putNode('test', cordoned.value)).toEqual({ applied: true });
  });

  it('an etcd restore moved resourceVersions back: the API copy replaces the newer-looking stored one', async () => {
    const real = await stored('node-a');
    if (real === undefined) throw new Error('fixture');
    // The stored copy came from before the restore: a later resourceVersion, a taint since undone.
    await world.stores.nodes.putNode('test', {
      ...real,
      resourceVersion: String(Number(real.resourceVersion) + 10_000),
      taints: [{ key: TaintNodeNotReady, effect: 'NoSchedule' }],
    });

    await pass(t0 + 5 * S);

    const healed = await stored('node-a');
    expect(healed?.resourceVersion).toBe(real.resourceVersion);
    expect(healed?.taints).toEqual([]);
  });

  it('a node whose DELETED was never delivered becomes a tombstone, and the pass forgets it', async () => {
    world.api.store.nodes.delete('node-b');
    await pass(t0 + 5 * S, await relayFingerprints());
    expect(await stored('node-b')).toBeUndefined();
    const loaded = (cache as Map<string, LoadedState>).get('test');
    expect(loaded?.state.knownNodes.has('node-b')).toBe(false);
    const events = world.api.store.events.list({ namespace: 'default' }).items;
    expect(events.map((e) => [e.reason, e.involvedObject.name])).toContainEqual(['RemovingNode', 'node-b']);
  });

  it('a difference the API cannot settle (the relay lags) is read once per relay fingerprint, not every pass', async () => {
    const lagging = await relayFingerprints({ 'node-a': 'AAAAAA' });
    const first = await pass(t0 + 5 * S, lagging);
    expect(nodeReads(first.requests, 'node-a')).toBe(1);
    const second = await pass(t0 + 10 * S, lagging);
    expect(nodeReads(second.requests, 'node-a')).toBe(0);
    // The relay's fingerprint changes: read again.
    const third = await pass(t0 + 15 * S, await relayFingerprints({ 'node-a': 'BBBBBB' }));
    expect(nodeReads(third.requests, 'node-a')).toBe(1);
  });
});

describe('a repair that fails', () => {
  it('is tried again FailedRepairRetry later, not every pass, and lands once the API answers', async () => {
    reportNotReady('node-b'); // its Node Changed never reaches the functions
    const stop = world.api.faults.inject({
      kind: 'internalError',
      match: { verb: 'patch', resource: 'nodes', name: 'node-b' },
    });
    const failed = await pass(t0 + 5 * S);
    expect(nodeReads(failed.requests, 'node-b')).toBeGreaterThanOrEqual(1);
    expect(world.observer.warnings()).toContain(
      'repairing node copies failed for some nodes; they are tried again in 30 s',
    );
    // The copy is kept as it was, so the difference stays for the retry to find.
    expect((await stored('node-b'))?.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    stop();
    // Within FailedRepairRetry of the failed read: not read again.
    const waiting = await pass(t0 + 5 * S + FailedRepairRetry - S);
    expect(nodeReads(waiting.requests, 'node-b')).toBe(0);
    // Past it: read, repaired, tainted.
    const retried = await pass(t0 + 5 * S + FailedRepairRetry);
    expect(nodeReads(retried.requests, 'node-b')).toBeGreaterThanOrEqual(1);
    expect((await stored('node-b'))?.conditions.find((c) => c.type === 'Ready')?.status).toBe('False');
    expect(world.taintsOf('node-b')).toContainEqual({ key: TaintNodeNotReady, effect: 'NoSchedule' });
  });
});

describe('a write node-taints never made', () => {
  it('is made by the monitor once the copy has called for it for 15 s, on the API node', async () => {
    // node-taints' only delivery failed for good: the cache has the NotReady copy, the taint never came.
    reportNotReady('node-b');
    await world.syncNodeCache();
    const early = await pass(t0 + 5 * S);
    expect(world.taintsOf('node-b')).not.toContainEqual({ key: TaintNodeNotReady, effect: 'NoSchedule' });
    expect(nodeReads(early.requests, 'node-b')).toBe(0);

    await pass(t0 + 20 * S);

    expect(world.taintsOf('node-b')).toContainEqual({ key: TaintNodeNotReady, effect: 'NoSchedule' });
    const trail = await world.stores.decisions.query('test', 'node-b', { newestFirst: false });
    expect(trail.map((d) => [d.source, d.what, d.result])).toContainEqual([
      'node-taints',
      'swapNodeTaints',
      'ok',
    ]);
  });
});
