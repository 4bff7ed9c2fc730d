// Two relay replicas against one API simulator: leader election on a coordination.k8s.io/v1 Lease in
// the relay's namespace, only the leader publishing, hand-over without a double digest (graceful and
// after a leader that can no longer renew), and the relay working with exactly the RBAC of
// infra/relay/rbac.yaml.
import { readFile } from 'node:fs/promises';
import type { V1Lease } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Wire } from '../../../local/apiserver/index.js';
import { RelayUser, subjectRules } from '../../../local/simulate/identities.js';
import type { HeartbeatDigest } from '../../../shared/events.js';
import type { RelayOptions } from '../../../relay/relay.js';
import {
  createNode,
  createTestRelay,
  identity,
  RelayNamespace,
  relayLease,
  runRenewing,
  type Sim,
  startReplica,
  startSim,
  type TestRelay,
} from './helpers.js';

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

function replica(s: Sim, name: string, overrides: Partial<RelayOptions> = {}): TestRelay {
  const t = createTestRelay(s, {
    relayId: name,
    token: identity(name).token,
    leaderElection: { namespace: RelayNamespace, name: leaseName },
    // What a full republish carries is tested here; its damping in test/faults/relayFlapping.test.ts.
    republishDamping: 0,
    ...overrides,
  });
  relays.push(t);
  return t;
}

const lease = (s: Sim): Wire<V1Lease> => relayLease(s, leaseName);

function byPosition(digests: readonly HeartbeatDigest[]): HeartbeatDigest[] {
  // Each replica's term in the order it began (one virtual clock here), then by sequence.
  return [...digests].sort((a, b) => a.leaderSince - b.leaderSince || a.sequence - b.sequence);
}

describe('leader election', () => {
  it('lets only the leader publish; the standby stays warm and takes over at once when the leader releases', async () => {
    const s = (sim = await startSim({ identities: [identity('relay-a'), identity('relay-b')] }));
    createNode(s, 'node-a');
    createNode(s, 'node-b');
    const a = replica(s, 'relay-a');
    await startReplica(a);
    await s.scheduler.advance(0); // A's first try: the Lease does not exist, A creates it
    expect(a.relay.isLeader()).toBe(true);
    const b = replica(s, 'relay-b');
    await startReplica(b);
    await runRenewing(s, 20_000);

    expect(b.relay.isLeader()).toBe(false);
    expect(b.sink.calls).toHaveLength(0);
    expect(b.relay.status()).toMatchObject({ synced: true, trackedNodes: 2 });
    expect(a.sink.digests().length).toBeGreaterThanOrEqual(4);
    expect(lease(s).spec).toMatchObject({
      holderIdentity: 'relay-a',
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
    });

    await a.relay.stop(); // SIGTERM: publish what is pending, then release
    expect(lease(s).spec?.holderIdentity).toBe('');
    const released = s.scheduler.now();
    await runRenewing(s, 6_000);

    expect(b.relay.isLeader()).toBe(true);
    // Acquired at its next try (at most 2 s × 2.2 with client-go's jitter), not a lease duration later.
    expect((b.relay.status().leaderSince ?? Infinity) - released).toBeLessThanOrEqual(4_400);
    expect(lease(s).spec).toMatchObject({ holderIdentity: 'relay-b', leaseTransitions: 1 });
    const all = byPosition([...a.sink.digests(), ...b.sink.digests()]);
    const fromA = a.sink.digests().length;
    // Every digest of A comes before every digest of B, by the consumers' order and by time.
    expect(all.slice(0, fromA).every((d) => d.relayId === 'relay-a')).toBe(true);
    expect(all.slice(fromA).every((d) => d.relayId === 'relay-b')).toBe(true);
    expect(all[fromA]?.sequence).toBe(0);
    expect((all[fromA]?.observedAt ?? 0) > (all[fromA - 1]?.observedAt ?? Infinity)).toBe(true);
    // B cannot know what A left unpublished: it republishes its view, every node with its current
    // state, and no pod (both nodes are Ready and untainted: no function acts on their pods).
    expect(b.sink.nodeChanges().map((c) => [c.type, c.node.name])).toEqual([
      ['ADDED', 'node-a'],
      ['ADDED', 'node-b'],
    ]);
    expect(b.sink.podChanges()).toHaveLength(0);
  });

  it('makes a leader that cannot renew stop publishing before the lease can expire; the standby takes over after', async () => {
    const s = (sim = await startSim({ identities: [identity('relay-a'), identity('relay-b')] }));
    createNode(s, 'node-a');
    createNode(s, 'node-b');
    const a = replica(s, 'relay-a');
    await startReplica(a);
    await s.scheduler.advance(0);
    const b = replica(s, 'relay-b');
    await startReplica(b);
    await runRenewing(s, 6_000);
    expect(a.relay.isLeader()).toBe(true);

    // A's requests to its Lease fail from now on (an API server partition on A's side).
    s.api.faults.inject({
      kind: 'internalError',
      match: { user: 'relay-a', resource: 'leases', namespace: RelayNamespace },
    });
    const lastRenewal = Date.parse(lease(s).spec?.renewTime ?? '');
    let aStopped: number | undefined;
    let bStarted: number | undefined;
    let bothLeading = false;
    await runRenewing(s, 30_000, () => {
      const now = s.scheduler.now();
      if (aStopped === undefined && !a.relay.isLeader()) aStopped = now;
      if (bStarted === undefined && b.relay.isLeader()) bStarted = now;
      if (a.relay.isLeader() && b.relay.isLeader()) bothLeading = true;
    });

    expect(bothLeading).toBe(false);
    expect(aStopped).toBeDefined();
    expect(bStarted).toBeDefined();
    expect((aStopped ?? Infinity) - lastRenewal).toBeLessThanOrEqual(10_000); // renewDeadline
    const bSince = b.relay.status().leaderSince ?? 0;
    expect(bSince - lastRenewal).toBeGreaterThanOrEqual(15_000); // leaseDuration, as B observed it
    expect(bSince).toBeGreaterThan(aStopped ?? Infinity);
    expect(a.sink.digests().every((d) => d.observedAt < (aStopped ?? 0))).toBe(true);
    const firstOfB = byPosition(b.sink.digests())[0];
    expect(firstOfB).toMatchObject({ sequence: 0, leaderSince: bSince, observedAt: bSince });
    expect(byPosition([...a.sink.digests(), ...b.sink.digests()]).at(-1)?.relayId).toBe('relay-b');
    expect(lease(s).spec).toMatchObject({ holderIdentity: 'relay-b', leaseTransitions: 1 });
  });
});

describe('infra/relay/rbac.yaml', () => {
  it('grants exactly what the relay needs: informers cluster-wide, node Leases in kube-node-lease, its Lease in its namespace', async () => {
    const text = await readFile(new URL('../../../infra/relay/rbac.yaml', import.meta.url), 'utf8');
    // What the manifest's bindings grant the relay's service account, each Role in its own namespace.
    const serviceAccount = {
      name: RelayUser,
      token: 'token-relay-sa',
      rules: subjectRules(text, RelayUser),
    };
    const s = (sim = await startSim({ identities: [serviceAccount] }));
    createNode(s, 'node-a');
    createNode(s, 'node-b');
    const t = createTestRelay(s, {
      relayId: 'nlc-relay-0',
      token: serviceAccount.token,
      leaderElection: { namespace: RelayNamespace, name: leaseName },
    });
    relays.push(t);
    await startReplica(t);
    await runRenewing(s, 6_000);

    expect(t.relay.isLeader()).toBe(true);
    expect(t.sink.nodeChanges().map((c) => c.node.name)).toEqual(['node-a', 'node-b']);
    expect(t.sink.digests().length).toBeGreaterThanOrEqual(1);
    expect(t.logger.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
  });
});
