// The whole relay against the API simulator (test/integration/relay/helpers.ts): its digests carry the
// resourceVersion of each silent node's Lease as the API server wrote it, and the lease informer's
// synced resourceVersion; the Lease reaches the probe tracker through either of relay.ts's paths (a
// lease event for a known node, or a new node whose Lease is cached already).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { formatMicroTime } from '../../../local/apiserver/timestamps.js';
import type { HeartbeatDigest } from '../../../shared/events.js';
import {
  advance,
  createNode,
  createTestRelay,
  NodeLeaseNamespace,
  renewLease,
  setReady,
  startSim,
  t0,
  waitFor,
  waitForCatchUp,
  waitForSync,
  type Sim,
  type TestRelay,
} from './helpers.js';

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

const leaseVersion = (name: string): string =>
  String(sim.api.store.leases.get(name, { namespace: NodeLeaseNamespace }).metadata?.resourceVersion);

/** The digest the relay sends once the watches have caught up at the current instant. */
async function digestNow(t: TestRelay): Promise<HeartbeatDigest> {
  await waitForCatchUp(sim, t.relay);
  const before = t.sink.digests().length;
  await advance(sim, 5_000);
  await waitFor(sim, () => t.sink.digests().length > before, 'a digest');
  const digest = t.sink.digests().at(-1);
  if (digest === undefined) throw new Error('no digest');
  return digest;
}

describe('the relay’s digests for the lease circuit breaker', () => {
  it('name each silent node’s Lease resourceVersion and the lease informer’s synced one', async () => {
    createNode(sim, 'healthy');
    createNode(sim, 'silent');
    test = createTestRelay(sim);
    await test.relay.start();
    await waitForSync(test.relay);

    // 'healthy' renews every 10 s; 'silent' renews once (a probe), then stops.
    renewLease(sim, 'silent', t0 + 1_000);
    renewLease(sim, 'healthy', t0 + 1_000);
    const silentVersion = leaseVersion('silent');
    await waitForCatchUp(sim, test.relay);
    for (let at = 10_000; at <= 20_000; at += 10_000) {
      await advance(sim, 10_000);
      renewLease(sim, 'healthy', t0 + at);
    }
    // A node whose Lease exists before it: the relay takes the cached Lease as the node's baseline, and
    // a node with a baseline only counts as probed at observingSince (the relay's sync, at t0).
    sim.api.store.leases.create(
      {
        metadata: { name: 'late', namespace: NodeLeaseNamespace },
        spec: { holderIdentity: 'late', renewTime: formatMicroTime(sim.scheduler.now()) },
      },
      { namespace: NodeLeaseNamespace },
    );
    const lateVersion = leaseVersion('late');
    await waitForCatchUp(sim, test.relay);
    sim.api.store.nodes.create({ metadata: { name: 'late' } }); // no Ready posted: a heartbeat would be a probe

    const digest = await digestNow(test);
    expect(digest.leaseVersions).toEqual(
      new Map([
        ['silent', silentVersion],
        ['late', lateVersion],
      ]),
    );
    const synced = test.relay.status().informers.find((i) => i.resource === 'leases')?.resourceVersion;
    expect(digest.leaseResourceVersion).toBe(synced);
    expect(Number(digest.leaseResourceVersion)).toBeGreaterThanOrEqual(Number(lateVersion));

    // 'late' renews: not silent any more. 15 s later it is named again, with the new version.
    renewLease(sim, 'late', sim.scheduler.now());
    const renewedVersion = leaseVersion('late');
    expect((await digestNow(test)).leaseVersions).toEqual(new Map([['silent', silentVersion]]));
    renewLease(sim, 'healthy', sim.scheduler.now());
    await advance(sim, 10_000);
    renewLease(sim, 'healthy', sim.scheduler.now());
    expect((await digestNow(test)).leaseVersions).toEqual(
      new Map([
        ['silent', silentVersion],
        ['late', renewedVersion],
      ]),
    );
  });

  it('stop naming a node once its Ready is seen Unknown', async () => {
    createNode(sim, 'silent');
    test = createTestRelay(sim);
    await test.relay.start();
    await waitForSync(test.relay);
    renewLease(sim, 'silent', t0 + 1_000);
    await waitForCatchUp(sim, test.relay);
    await advance(sim, 20_000);
    expect((await digestNow(test)).leaseVersions?.has('silent')).toBe(true);

    // The controller marks it (its write keeps the heartbeat).
    setReady(sim, 'silent', 'Unknown', t0);
    expect((await digestNow(test)).leaseVersions).toBeUndefined();
  });
});
