// Fault: a relay that crash-loops or flaps republishes its whole view on every term.
//
// Each replica that starts leading republished every node, the pods that matter and the node deletions
// of the last 24 h: at 250 events a second a flapping relay sent about 21.6 million events a day, two
// orders of magnitude over the cost budget, and nothing said it was flapping. Now the full republish is
// made at most once per republishDamping (30 min) across every replica and restart, recorded on the
// leader Lease; later terms replay only their recent changes; the Lease also records the terms of the
// last hour, and more than six is a warning (relay/relay.ts, docs/relay.md "Damped").
//
// Replicas against the API simulator over HTTPS on a virtual clock (test/integration/relay/helpers.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ViewRepublishedAnnotation, type RelayOptions } from '../../relay/relay.js';
import {
  createNode,
  createTestRelay,
  identity,
  relayLease,
  RelayNamespace,
  runRenewing,
  type Sim,
  startReplica,
  startSim,
  type TestRelay,
} from '../integration/relay/helpers.js';

// Watch events travel over real sockets; each wait is bounded (helpers.waitFor), the test more loosely.
vi.setConfig({ testTimeout: 40_000 });

const leaseName = 'nlc-relay';
let sim: Sim | undefined;
const relays: TestRelay[] = [];

afterEach(async () => {
  for (const t of relays.splice(0)) await t.relay.stop({ flushTimeoutMs: 1_000 });
  await sim?.api.close();
  sim = undefined;
});

function replica(s: Sim, name: string, overrides: Partial<RelayOptions>): TestRelay {
  const t = createTestRelay(s, {
    relayId: name,
    token: identity(name).token,
    leaderElection: { namespace: RelayNamespace, name: leaseName },
    ...overrides,
  });
  relays.push(t);
  return t;
}

describe('the republish, damped', () => {
  it('a relay that takes over again and again within the window republishes its whole view once; the Lease records it', async () => {
    const names = ['relay-a', 'relay-b', 'relay-c', 'relay-d'];
    const s = (sim = await startSim({ identities: names.map(identity) }));
    for (const node of ['node-a', 'node-b']) createNode(s, node);
    const started: TestRelay[] = [];
    // A rolling update gone wrong: four replicas in turn, each stopped a minute after it took over.
    for (const name of names) {
      const t = replica(s, name, { republishDamping: 30 * 60_000 });
      started.push(t);
      await startReplica(t);
      await runRenewing(s, 5_000);
      expect(t.relay.isLeader(), name).toBe(true);
      await runRenewing(s, 55_000);
      await t.relay.stop();
    }
    // The first took over with no record: its whole view (two nodes). The others, within 30 minutes
    // of it, replayed their recent changes only (none here).
    expect(started.map((t) => t.sink.nodeChanges().length)).toEqual([2, 0, 0, 0]);
    const annotation = relayLease(s).metadata?.annotations?.[ViewRepublishedAnnotation];
    expect(Date.parse(annotation ?? '')).toBeLessThan(s.scheduler.now() - 3 * 60_000);
    for (const t of started.slice(1)) {
      expect(t.logger.lines.filter((l) => l.level === 'info').map((l) => l.message)).toContain(
        'republishing only the recent changes as the new leader: a full republish is recent',
      );
    }
  });

  it('a full republish again once the window has passed; more than six takeovers in an hour is a warning', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `relay-${i}`);
    const s = (sim = await startSim({ identities: names.map(identity) }));
    createNode(s, 'node-a');
    createNode(s, 'node-b');
    const started: TestRelay[] = [];
    for (const name of names) {
      const t = replica(s, name, { republishDamping: 4 * 60_000 });
      started.push(t);
      await startReplica(t);
      await runRenewing(s, 5_000);
      await runRenewing(s, 55_000);
      await t.relay.stop();
    }
    // One a minute, 4 minutes of damping: full, damped × 3, full, damped × 3.
    expect(started.map((t) => t.sink.nodeChanges().length)).toEqual([2, 0, 0, 0, 2, 0, 0, 0]);
    const last = started.at(-1);
    expect(last?.logger.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toContain(
      'the relay leader changed more often than expected: is a replica crash-looping?',
    );
  });
});

describe('the republish, damped, on a clock it cannot verify', () => {
  it('a record in the future (a replica whose clock was an hour ahead) damps nothing: the next leader republishes in full', async () => {
    const names = ['relay-a', 'relay-b'];
    const s = (sim = await startSim({ identities: names.map(identity) }));
    createNode(s, 'node-a');
    createNode(s, 'node-b');
    const first = replica(s, 'relay-a', { republishDamping: 30 * 60_000 });
    await startReplica(first);
    await runRenewing(s, 10_000);
    await first.relay.stop();
    // What relay-a would have written had its clock been an hour ahead.
    const ahead = new Date(s.scheduler.now() + 3_600_000).toISOString();
    s.api.store.leases.patch(
      leaseName,
      { metadata: { annotations: { [ViewRepublishedAnnotation]: ahead } } },
      { type: 'merge', namespace: RelayNamespace },
    );
    const second = replica(s, 'relay-b', { republishDamping: 30 * 60_000 });
    await startReplica(second);
    await runRenewing(s, 10_000);
    expect(second.relay.isLeader()).toBe(true);
    expect([first, second].map((t) => t.sink.nodeChanges().length)).toEqual([2, 2]);
    // relay-b's own record replaces the one from the future.
    const recorded = Date.parse(relayLease(s).metadata?.annotations?.[ViewRepublishedAnnotation] ?? '');
    expect(recorded).toBeLessThanOrEqual(s.scheduler.now());
  });
});
