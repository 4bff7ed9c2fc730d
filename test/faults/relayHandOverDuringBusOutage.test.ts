// Fault: a relay leader hand-over during a bus outage loses changes.
//
// Two relay replicas elect a leader. The bus rejects every event for minutes; meanwhile a node goes
// NotReady, a pod is bound to it and another node is deleted. The leader queues those events and cannot
// publish them. Minutes later (far more than the 29 s a new leader used to replay) the leader stops,
// gracefully with its events unpublished, or abruptly, and the standby takes over while the bus is back.
// Before, the standby replayed only the changes of the last 29 s, so the functions never heard of the
// NotReady, the binding or the deletion. Now every replica that starts leading republishes its current
// view and the node deletions it observed (relay/recentChanges.ts).
//
// In process on virtual time: the API simulator's request handler and watches, no socket.
import { afterEach, describe, expect, it } from 'vitest';
import { makeKubeConfig } from '../../local/apiserver/index.js';
import { formatTime } from '../../local/apiserver/timestamps.js';
import { inProcessHttpLibrary, inProcessWatch } from '../../local/simulate/transport.js';
import { RelayMetrics } from '../../relay/metrics.js';
import {
  createRelay,
  DefaultRepublishDamping,
  RepublishResumeAnnotation,
  type Relay,
  type RelayOptions,
} from '../../relay/relay.js';
import type { EpochMillis, Millis } from '../../shared/domain/types.js';
import type { OutgoingEvent } from '../../shared/events.js';
import type { EventSink, PublishOptions, PublishResult } from '../../shared/ports/eventSink.js';
import {
  Priority,
  type Scheduler,
  type TimerCallback,
  type TimerHandle,
} from '../../shared/ports/scheduler.js';
import {
  createNode,
  renewLease,
  startCluster,
  t0,
  type InProcessCluster,
} from '../helpers/inProcessRelay.js';
import { MemoryLogger, RecordingSink } from '../integration/relay/helpers.js';

const S = 1_000;
const RelayUser = 'system:serviceaccount:nlc-system:nlc-relay';
const RelayNamespace = 'nlc-system';

/** A replica's clock: after `kill()` none of its timers fires again (a process killed without notice). */
class KillableScheduler implements Scheduler {
  private dead = false;
  constructor(private readonly base: Scheduler) {}
  kill(): void {
    this.dead = true;
  }
  now(): EpochMillis {
    return this.base.now();
  }
  at(time: EpochMillis, priority: number, fn: TimerCallback): TimerHandle {
    return this.base.at(time, priority, this.unlessDead(fn));
  }
  after(delay: Millis, priority: number, fn: TimerCallback): TimerHandle {
    return this.base.after(delay, priority, this.unlessDead(fn));
  }
  every(period: Millis, firstAt: EpochMillis, priority: number, fn: TimerCallback): TimerHandle {
    return this.base.every(period, firstAt, priority, this.unlessDead(fn));
  }
  cancel(handle: TimerHandle): void {
    this.base.cancel(handle);
  }
  private unlessDead(fn: TimerCallback): TimerCallback {
    return () => (this.dead ? undefined : fn());
  }
}

/** A replica's connection to the one bus: once its process is killed, nothing it sends arrives. */
class ReplicaSink implements EventSink {
  dead = false;
  constructor(private readonly bus: RecordingSink) {}
  publish(events: readonly OutgoingEvent[], options?: PublishOptions): Promise<PublishResult> {
    if (!this.dead) return this.bus.publish(events, options);
    const failed = events.map((event, index) => ({
      index,
      event,
      code: 'ProcessKilled',
      message: 'the process is gone',
      permanent: false,
    }));
    return Promise.resolve({ sent: 0, failed, retried: 0, requests: 0 });
  }
}

interface Replica {
  readonly relay: Relay;
  readonly logger: MemoryLogger;
  readonly metrics: RelayMetrics;
  /** Kills the process: no timer fires, nothing it publishes arrives, its Lease is not released. */
  kill(): void;
}

const replicas: Replica[] = [];

afterEach(async () => {
  for (const r of replicas.splice(0)) await r.relay.stop({ flushTimeoutMs: 100 });
});

async function startReplica(
  c: InProcessCluster,
  bus: RecordingSink,
  relayId: string,
  overrides: Partial<RelayOptions> = {},
): Promise<Replica> {
  const scheduler = new KillableScheduler(c.scheduler);
  const sink = new ReplicaSink(bus);
  const logger = new MemoryLogger();
  const metrics = new RelayMetrics();
  const relay = createRelay({
    kubeConfig: makeKubeConfig({ server: 'https://nlc-test.invalid', token: 'relay-token' }),
    cluster: 'test',
    sink,
    scheduler,
    nodeMonitorPeriod: 5 * S,
    relayId,
    leaderElection: { namespace: RelayNamespace, name: 'nlc-relay' },
    // These hand-overs come minutes apart: what a full republish carries is what is tested here. The
    // damping of repeated ones is relay.test.ts's (the functions converge without it anyway).
    republishDamping: 0,
    logger,
    metrics,
    random: () => 0.5,
    transport: inProcessHttpLibrary(c.server),
    watch: inProcessWatch(c.store.registry, { faults: c.faults, user: RelayUser }),
    ...overrides,
  });
  const replica: Replica = {
    relay,
    logger,
    metrics,
    kill: () => {
      scheduler.kill();
      sink.dead = true;
    },
  };
  replicas.push(replica);
  await relay.start();
  for (let turn = 0; !(relay.synced() && relay.status().informers.every((i) => i.watching)); turn++) {
    if (turn > 10_000) throw new Error(`${relayId} did not list and watch`);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await c.scheduler.advance(0); // its first election try
  return replica;
}

function setReady(c: InProcessCluster, name: string, status: 'True' | 'False'): void {
  c.store.nodes.patch(
    name,
    {
      status: {
        conditions: [
          {
            type: 'Ready',
            status,
            reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady',
            lastHeartbeatTime: formatTime(c.scheduler.now()),
            lastTransitionTime: formatTime(c.scheduler.now()),
          },
        ],
      },
    },
    { type: 'strategic', subresource: 'status' },
  );
}

function createPod(c: InProcessCluster, name: string, nodeName?: string): void {
  c.store.pods.create({
    metadata: { name, namespace: 'default' },
    spec: {
      ...(nodeName !== undefined && { nodeName }),
      containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
    },
  });
}

/**
 * The cluster before the outage: three Ready nodes whose kubelets renew their Leases every 10 s, one
 * pod. Replica A leads, B is a warm standby.
 */
async function setUp(): Promise<{ c: InProcessCluster; bus: RecordingSink; a: Replica; b: Replica }> {
  const c = startCluster();
  c.store.namespaces.create({ metadata: { name: RelayNamespace } });
  for (const name of ['node-a', 'node-b', 'node-c']) createNode(c, name);
  createPod(c, 'web-0', 'node-a');
  c.scheduler.every(10 * S, t0 + 10 * S, Priority.Kubelet, () => {
    for (const name of ['node-a', 'node-b']) renewLease(c, name);
  });
  const bus = new RecordingSink(c.scheduler);
  const a = await startReplica(c, bus, 'relay-a');
  const b = await startReplica(c, bus, 'relay-b');
  await c.scheduler.advance(20 * S);
  expect(a.relay.isLeader()).toBe(true);
  expect(b.relay.isLeader()).toBe(false);
  return { c, bus, a, b };
}

/**
 * The bus rejects everything from 20 s; at 30 s node-b goes NotReady, web-1 is bound to it and node-c
 * is deleted. The leader keeps them pending; at 3 min (150 s later) they are still unpublished.
 */
async function outageWithChanges(c: InProcessCluster, bus: RecordingSink): Promise<void> {
  bus.down = true;
  await c.scheduler.advance(10 * S);
  setReady(c, 'node-b', 'False');
  createPod(c, 'web-1');
  c.store.bindPod('default', 'web-1', 'node-b');
  c.store.nodes.delete('node-c');
  await c.scheduler.advance(150 * S);
}

/**
 * What the functions received after `since`: node-b NotReady, web-1 on node-b, and unless the new leader
 * never observed it (a process started after it), node-c's deletion.
 */
function expectConverged(
  c: InProcessCluster,
  bus: RecordingSink,
  since: EpochMillis,
  deletionObserved = true,
): void {
  const after = bus.accepted.filter((a) => a.at >= since).map((a) => a.event);
  const nodeB = after.flatMap((e) =>
    e.detailType === 'Node Changed' && e.detail.node.name === 'node-b' ? [e.detail] : [],
  );
  expect(nodeB.at(-1)?.node.conditions.find((cond) => cond.type === 'Ready')?.status).toBe('False');
  // The current resourceVersion: node-taints stores it unless a newer one is stored already.
  expect(nodeB.at(-1)?.node.resourceVersion).toBe(c.store.nodes.get('node-b').metadata?.resourceVersion);
  expect(
    after.some(
      (e) =>
        e.detailType === 'Pod Changed' &&
        e.detail.type !== 'DELETED' &&
        e.detail.pod.name === 'web-1' &&
        e.detail.pod.nodeName === 'node-b',
    ),
  ).toBe(true);
  expect(
    after.some(
      (e) =>
        e.detailType === 'Node Changed' && e.detail.type === 'DELETED' && e.detail.node.name === 'node-c',
    ),
  ).toBe(deletionObserved);
}

/** The new leader's digests, one every 5 s from its takeover, in order, none from the old leader after. */
function expectDigestsFrom(bus: RecordingSink, relayId: string, from: EpochMillis, until: EpochMillis): void {
  const digests = bus.digests().filter((d) => d.observedAt >= from);
  expect(digests.every((d) => d.relayId === relayId)).toBe(true);
  expect(digests.map((d) => d.sequence)).toEqual(digests.map((_, i) => i));
  expect(digests.length).toBeGreaterThanOrEqual(Math.floor((until - from) / (5 * S)));
}

async function republished(metrics: RelayMetrics): Promise<Record<string, number>> {
  const metric = await metrics.republishedEvents.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.kind), v.value]));
}

describe('a relay leader hand-over during a bus outage', () => {
  it('loses nothing when the leader stops gracefully with unpublished events: the successor republishes them', async () => {
    const { c, bus, a, b } = await setUp();
    await outageWithChanges(c, bus);

    await a.relay.stop({ flushTimeoutMs: 1_000 }); // SIGTERM while the bus still rejects
    const stopped = a.logger.lines.find((l) => l.message === 'stopping with unpublished events');
    expect(stopped?.fields.unpublished).toBeGreaterThanOrEqual(3);
    bus.down = false;
    const back = c.scheduler.now();
    await c.scheduler.advance(30 * S);

    expect(b.relay.isLeader()).toBe(true);
    const since = b.relay.status().leaderSince ?? Infinity;
    expect(since - back).toBeLessThanOrEqual(4_400); // the released Lease, at B's next try
    expectConverged(c, bus, back);
    expectDigestsFrom(bus, 'relay-b', since, c.scheduler.now());
    expect(await republished(b.metrics)).toMatchObject({ node: 2, pod: 1, node_deletion: 1 });
    expect(b.relay.status().pendingEvents).toBe(0);
  });

  it('loses nothing when the leader is killed with unpublished events: the successor republishes them', async () => {
    const { c, bus, a, b } = await setUp();
    await outageWithChanges(c, bus);

    a.kill(); // no flush, no release: B waits for the Lease to expire
    bus.down = false;
    const killed = c.scheduler.now();
    await c.scheduler.advance(45 * S);

    expect(b.relay.isLeader()).toBe(true);
    const since = b.relay.status().leaderSince ?? Infinity;
    expect(since - killed).toBeGreaterThanOrEqual(15 * S - 2 * S); // the lease duration, give or take a try
    expectConverged(c, bus, since);
    expectDigestsFrom(bus, 'relay-b', since, c.scheduler.now());
    expect(b.relay.status().pendingEvents).toBe(0);
  });

  it('logs no error when a leader stops with only its republished view unsent (a rolling update)', async () => {
    const { c, bus, a, b } = await setUp();
    await a.relay.stop({ flushTimeoutMs: 1_000 });
    await b.relay.stop();
    // A new replica paced at one event a second: two of its three nodes wait when it is stopped.
    const slow = await startReplica(c, bus, 'relay-c', { republishRate: 1 });
    await c.scheduler.advance(S / 2);
    expect(slow.relay.isLeader()).toBe(true);
    expect(slow.relay.status().pendingRepublished).toBeGreaterThan(0);

    await slow.relay.stop({ flushTimeoutMs: 1_000 });
    expect(slow.logger.lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(slow.logger.lines.map((l) => l.message)).toContain(
      'stopping before the republished view was all sent; the next leader republishes its own',
    );
  });

  // The deletion is the documented limit (docs/relay.md, "Guarantees"): no process that saw it remains.
  it('republishes the current state when the only replica restarts after the outage, not a deletion it never saw', async () => {
    const { c, bus, a, b } = await setUp();
    await b.relay.stop(); // a single replica from here on
    await outageWithChanges(c, bus);

    await a.relay.stop({ flushTimeoutMs: 1_000 });
    bus.down = false;
    await c.scheduler.advance(60 * S);
    const restarted = await startReplica(c, bus, 'relay-a2');
    const back = c.scheduler.now();
    await c.scheduler.advance(30 * S);

    expect(restarted.relay.isLeader()).toBe(true);
    expectConverged(c, bus, back, false);
    expectDigestsFrom(bus, 'relay-a2', back, c.scheduler.now());
  });
});

// At 100,000 nodes a full republish lasts minutes; a rolling update can end its term seconds in. Before,
// the successor found the full republish recorded, was damped, and the nodes not sent yet went unsent
// for the whole damping window. Now the leader records on its Lease how far it got (by node name), and
// a successor resumes from there.
describe('a full republish cut short by a hand-over', () => {
  it('is resumed by the successor from the first node the bus had not accepted, not started over nor dropped', async () => {
    const c = startCluster();
    c.store.namespaces.create({ metadata: { name: RelayNamespace } });
    const names = Array.from({ length: 10 }, (_, i) => `node-${i}`);
    for (const name of [...names].reverse()) createNode(c, name); // created out of name order
    const bus = new RecordingSink(c.scheduler);
    const damped = { republishDamping: DefaultRepublishDamping };
    // One republished event a second: the leader stops with some of the ten nodes sent, not all.
    const a = await startReplica(c, bus, 'relay-a', { ...damped, republishRate: 1 });
    for (let i = 0; i < 20 && bus.nodeChanges().length < 3; i++) await c.scheduler.advance(S);
    expect(a.relay.isLeader()).toBe(true);
    const sentByA = bus.nodeChanges().map((n) => n.node.name);
    expect(sentByA.length).toBeLessThan(10);
    expect(sentByA).toEqual(names.slice(0, sentByA.length)); // by name
    await a.relay.stop({ flushTimeoutMs: 1_000 });
    const lease = c.store.leases.get('nlc-relay', { namespace: RelayNamespace });
    expect(lease.metadata?.annotations?.[RepublishResumeAnnotation]).toBe(
      `${lease.metadata?.annotations?.['nlc.io/view-republished-at'] ?? '?'} ${names[sentByA.length] ?? ''}`,
    );

    const b = await startReplica(c, bus, 'relay-b', damped);
    await c.scheduler.advance(10 * S);
    expect(b.relay.isLeader()).toBe(true);
    const sentByB = bus
      .nodeChanges()
      .slice(sentByA.length)
      .map((n) => n.node.name);
    expect(sentByB).toEqual(names.slice(sentByA.length));
    const republishes = await b.metrics.republishes.get();
    expect(republishes.values).toEqual([expect.objectContaining({ labels: { kind: 'resumed' }, value: 1 })]);
    // Done: the record says so, and a third leader within the window is damped.
    await b.relay.stop({ flushTimeoutMs: 1_000 });
    expect(
      c.store.leases.get('nlc-relay', { namespace: RelayNamespace }).metadata?.annotations?.[
        RepublishResumeAnnotation
      ],
    ).toBe('');
    const d = await startReplica(c, bus, 'relay-d', damped);
    await c.scheduler.advance(10 * S);
    expect(d.relay.isLeader()).toBe(true);
    expect(bus.nodeChanges()).toHaveLength(10);
  });
});
