// Faults: time and order taken on the relay's word.
//
// Before, digests were ordered by (leaderSince, relayId, sequence) with leaderSince read from the relay's
// own clock, and their instants were used as they came. A short relay term on a host 60 s ahead made
// every later digest "stale": a node that died afterwards was never marked Unknown. A digest dated year
// 9999 disabled monitoring for good. A clock stepped +10 min stored every probe 10 minutes in the future,
// so a dead node was marked at 670 s instead of 75 s. Now a new term counts only when the leader Lease
// says its relay holds it, every instant is moved onto the functions' clock by the term's offset and
// never lies after it, and a digest beyond the tolerance is refused without fencing later ones
// (docs/architecture.md#digest-time).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMonitorPass, type MonitorCache, type MonitorOutcome } from '../../shared/app/monitor.js';
import type { EpochMillis } from '../../shared/domain/types.js';
import type { HeartbeatDigest } from '../../shared/events.js';
import { nodeFingerprint } from '../../shared/nodeFingerprint.js';
import { startWorld, t0, testConfig, type World } from '../integration/functions/world.js';

const S = 1_000;
const P = 5 * S;
const grace = 50 * S;
let world: World;
let cache: MonitorCache;
/** When each node last renewed, on the true (functions') clock; node-c stops at `diesAt`. */
let lastRenewal: (name: string, at: EpochMillis) => EpochMillis;

beforeEach(async () => {
  world = await startWorld(testConfig());
  cache = new Map();
  for (const name of ['node-a', 'node-b', 'node-c']) world.addNode(name);
  await world.syncNodeCache();
  lastRenewal = (_name, at) => at - S;
});
afterEach(async () => {
  await world.close();
});

interface Relay {
  readonly relayId: string;
  readonly leaderSince: EpochMillis;
  /** Its clock minus the true one. */
  skew: number;
}

/** The relay's leader-election Lease as the API server holds it: `relay` holds it. */
function holdLease(relay: Relay): void {
  const spec = {
    holderIdentity: relay.relayId,
    leaseDurationSeconds: 15,
    acquireTime: new Date(relay.leaderSince).toISOString().replace('Z', '000Z'),
    renewTime: new Date(relay.leaderSince).toISOString().replace('Z', '000Z'),
    leaseTransitions: 0,
  };
  try {
    world.api.store.namespaces.get('nlc-system');
  } catch {
    world.api.store.namespaces.create({ metadata: { name: 'nlc-system' } });
  }
  try {
    world.api.store.leases.get('nlc-relay', { namespace: 'nlc-system' });
    world.api.store.leases.patch('nlc-relay', { spec }, { type: 'merge', namespace: 'nlc-system' });
  } catch {
    world.api.store.leases.create(
      { metadata: { name: 'nlc-relay', namespace: 'nlc-system' }, spec },
      { namespace: 'nlc-system' },
    );
  }
}

let sequence = 0;
/** A digest `relay` builds at true time `at` (its clock reads `at + skew`), delivered at once. */
async function pass(
  relay: Relay,
  at: EpochMillis,
  extra: Partial<HeartbeatDigest> = {},
): Promise<MonitorOutcome> {
  world.now = at;
  const listed = await world.cluster.listNodes();
  if (!listed.ok) throw new Error(listed.message);
  const probes = Object.fromEntries(listed.value.map((n) => [n.name, lastRenewal(n.name, at) + relay.skew]));
  const digest: HeartbeatDigest = {
    ...world.digest(sequence++, at + relay.skew, probes),
    relayId: relay.relayId,
    leaderSince: relay.leaderSince,
    observingSince: relay.leaderSince,
    fingerprints: new Map(listed.value.map((n) => [n.name, nodeFingerprint(n)])),
    ...extra,
  };
  const outcome = await runMonitorPass(world.monitorDeps(), digest, { cache });
  await world.syncNodeCache();
  return outcome;
}

const readyOf = (name: string) =>
  world.api.store.nodes.get(name).status?.conditions?.find((c) => c.type === 'Ready')?.status;

/** Passes every 5 s from `from` to `to` by `relay`; the instant node-c was marked Unknown, if it was. */
async function passes(relay: Relay, from: EpochMillis, to: EpochMillis): Promise<EpochMillis | undefined> {
  for (let t = from; t <= to; t += P) {
    await pass(relay, t);
    if (readyOf('node-c') === 'Unknown') return t;
  }
  return undefined;
}

describe('relay terms ordered by the leader Lease, not a relay clock', () => {
  it('a short term on a host 60 s ahead fences nothing: a node dying after it is marked within grace + 2 periods', async () => {
    const fast: Relay = { relayId: 'relay-fast', leaderSince: t0 + 60 * S, skew: 60 * S };
    holdLease(fast);
    expect(await passes(fast, t0, t0 + 30 * S)).toBeUndefined();
    // A rolling update: the next relay's host has a good clock, so its leaderSince is EARLIER than the
    // fast one's. It holds the Lease now.
    const good: Relay = { relayId: 'relay-good', leaderSince: t0 + 35 * S, skew: 0 };
    holdLease(good);
    const diesAt = t0 + 40 * S;
    lastRenewal = (name, at) => (name === 'node-c' ? Math.min(at - S, diesAt) : at - S);
    const markedAt = await passes(good, t0 + 35 * S, t0 + 180 * S);
    expect(markedAt).toBeDefined();
    expect((markedAt ?? Infinity) - diesAt).toBeLessThanOrEqual(grace + 2 * P);
  });

  it("a deposed leader's late digest is refused, and counted; the holder's go on", async () => {
    const old: Relay = { relayId: 'relay-old', leaderSince: t0 - 600 * S, skew: 0 };
    holdLease(old);
    await pass(old, t0);
    const next: Relay = { relayId: 'relay-new', leaderSince: t0 + 2 * S, skew: 0 };
    holdLease(next);
    expect((await pass(next, t0 + P)).kind).toBe('processed');
    const late = await pass(old, t0 + 2 * P);
    expect(late).toMatchObject({ kind: 'refused', reason: 'notTheLeader' });
    expect((await pass(next, t0 + 3 * P)).kind).toBe('processed');
    const meta = await world.stores.controllerState.loadMeta('test');
    expect(meta).toMatchObject({ lastRelayId: 'relay-new', termVerified: true, refusedDigests: 1 });
    expect(meta.lastRefusal).toMatch(/^notTheLeader: relay relay-old/);
  });
});

describe('digest instants on the functions clock', () => {
  const relay: Relay = { relayId: 'relay-a', leaderSince: t0 - 600 * S, skew: 0 };

  it('a digest dated year 9999 is refused and changes nothing: a dead node is still marked on time', async () => {
    holdLease(relay);
    const diesAt = t0 + 10 * S;
    lastRenewal = (name, at) => (name === 'node-c' ? Math.min(at - S, diesAt) : at - S);
    await passes(relay, t0, t0 + 20 * S);
    world.now = t0 + 22 * S;
    const forged = await pass(relay, t0 + 22 * S, { observedAt: Date.parse('9999-01-01T00:00:00Z') });
    expect(forged).toMatchObject({ kind: 'refused', reason: 'aheadOfClock' });
    const markedAt = await passes(relay, t0 + 25 * S, t0 + 180 * S);
    expect((markedAt ?? Infinity) - diesAt).toBeLessThanOrEqual(grace + 2 * P);
  });

  it('a relay clock stepped +10 min and back (a relay without a steady clock) leaves no probe in the future', async () => {
    holdLease(relay);
    await passes(relay, t0, t0 + 20 * S);
    relay.skew = 600 * S; // the step: every instant 10 minutes ahead for a minute
    expect(await passes(relay, t0 + 25 * S, t0 + 85 * S)).toBeUndefined();
    relay.skew = 0; // NTP steps it back
    // node-c dies after the correction: its last probe must not be stored 10 minutes ahead.
    const diesAt = t0 + 100 * S;
    lastRenewal = (name, at) => (name === 'node-c' ? Math.min(at - S, diesAt) : at - S);
    const markedAt = await passes(relay, t0 + 90 * S, t0 + 300 * S);
    expect(markedAt).toBeDefined();
    expect((markedAt ?? Infinity) - diesAt).toBeLessThanOrEqual(grace + 2 * P);
    expect(readyOf('node-a')).toBe('True');
    expect(readyOf('node-b')).toBe('True');
  });

  it('a relay clock stepped back 10 min: a dead node is still marked within grace + 2 periods', async () => {
    holdLease(relay);
    await passes(relay, t0, t0 + 20 * S);
    relay.skew = -600 * S;
    const diesAt = t0 + 30 * S;
    lastRenewal = (name, at) => (name === 'node-c' ? Math.min(at - S, diesAt) : at - S);
    const markedAt = await passes(relay, t0 + 25 * S, t0 + 240 * S);
    expect(markedAt).toBeDefined();
    expect((markedAt ?? Infinity) - diesAt).toBeLessThanOrEqual(grace + 2 * P);
    expect(readyOf('node-a')).toBe('True');
  });
});
