// The relay's publish queue against a failing event sink: a partial failure is re-sent once and only
// for the failed events; an outage keeps the latest digest and every pending change (coalesced per
// object), within a cap that is counted and logged when reached; a permanent failure is reported, not
// retried.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NodeChangedDetailType, type OutgoingEvent } from '../../../shared/events.js';
import type { RelayOptions } from '../../../relay/relay.js';
import {
  advance,
  createNode,
  createTestRelay,
  type Sim,
  startSim,
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
  if (test !== undefined) test.sink.down = false;
  await test?.relay.stop({ flushTimeoutMs: 1_000 });
  test = undefined;
  await sim.api.close();
});

function startRelay(overrides: Partial<RelayOptions> = {}): TestRelay {
  test = createTestRelay(sim, overrides);
  return test;
}

const nodeNamed =
  (name: string) =>
  (event: OutgoingEvent): boolean =>
    event.detailType === NodeChangedDetailType && event.detail.node.name === name;

async function metric(
  t: TestRelay,
  name: 'eventsFailed' | 'eventsDropped' | 'digestsSuperseded',
  labels = {},
) {
  const got = await t.relay.metrics[name].get();
  return got.values
    .filter((v) =>
      Object.entries(labels).every(([k, value]) => (v.labels as Record<string, unknown>)[k] === value),
    )
    .reduce((sum, v) => sum + v.value, 0);
}

describe('a partial failure', () => {
  it('re-sends only the failed event, exactly once, after a backoff', async () => {
    createNode(sim, 'node-a');
    createNode(sim, 'node-b');
    createNode(sim, 'node-c');
    const t = startRelay();
    t.sink.failNext((event) => (nodeNamed('node-b')(event) ? { code: 'InternalFailure' } : undefined));
    await t.relay.start();
    await waitForSync(t.relay);
    await waitFor(sim, () => t.sink.nodeChanges().length === 2, 'node-a and node-c accepted');
    await waitForCatchUp(sim, t.relay);
    expect(t.sink.nodeChanges().map((c) => c.node.name)).toEqual(['node-a', 'node-c']);

    await advance(sim, 1_000); // the publish backoff: 0.25-0.5 s
    await waitFor(sim, () => t.sink.nodeChanges().length === 3, 'node-b re-sent');
    await advance(sim, 10_000);

    const sentTimes = (name: string) => t.sink.calls.flat().filter(nodeNamed(name)).length;
    expect([sentTimes('node-a'), sentTimes('node-b'), sentTimes('node-c')]).toEqual([1, 2, 1]);
    expect(t.sink.nodeChanges().map((c) => c.node.name)).toEqual(['node-a', 'node-c', 'node-b']);
    expect(await metric(t, 'eventsFailed', { detail_type: 'Node Changed', permanent: 'false' })).toBe(1);
  });

  it('is not retried when it can never succeed (an oversized entry): reported and counted instead', async () => {
    createNode(sim, 'node-a');
    createNode(sim, 'node-b');
    const t = startRelay();
    t.sink.failNext((event) =>
      nodeNamed('node-a')(event) ? { code: 'EntryTooLarge', permanent: true } : undefined,
    );
    await t.relay.start();
    await waitForSync(t.relay);
    await waitFor(sim, () => t.sink.nodeChanges().length === 1, 'node-b accepted');
    await advance(sim, 10_000);

    expect(t.sink.calls.flat().filter(nodeNamed('node-a'))).toHaveLength(1);
    expect(await metric(t, 'eventsDropped', { reason: 'permanent_failure' })).toBe(1);
    expect(t.logger.lines).toContainEqual(
      expect.objectContaining({ level: 'error', message: 'event cannot be published; giving up on it' }),
    );
  });
});

describe('a bus outage', () => {
  it('keeps only the latest digest and every pending change, coalesced, and sends them when the bus is back', async () => {
    createNode(sim, 'node-a');
    createNode(sim, 'node-b');
    const t = startRelay();
    await t.relay.start();
    await waitForSync(t.relay);
    await waitFor(
      sim,
      () => t.sink.nodeChanges().length === 2 && t.sink.digests().length === 1,
      'the first events',
    );

    t.sink.down = true;
    await advance(sim, 2_000);
    sim.api.store.nodes.patch('node-a', { spec: { unschedulable: true } }, { type: 'merge' });
    await waitForCatchUp(sim, t.relay);
    await advance(sim, 6_000);
    sim.api.store.nodes.patch('node-a', { spec: { unschedulable: false } }, { type: 'merge' });
    createNode(sim, 'node-c');
    await waitForCatchUp(sim, t.relay);
    await advance(sim, 6_000);
    sim.api.store.nodes.patch(
      'node-b',
      { spec: { taints: [{ key: 'example.com/maintenance', effect: 'NoSchedule' }] } },
      { type: 'merge' },
    );
    await waitForCatchUp(sim, t.relay);
    await advance(sim, 20_000);
    expect(await metric(t, 'digestsSuperseded')).toBeGreaterThanOrEqual(4);

    const before = t.sink.accepted.length;
    t.sink.down = false;
    for (let i = 0; i < 60 && t.sink.accepted.length === before; i++) await advance(sim, 1_000);
    const firstBatch = t.sink.accepted.slice(before).map((a) => a.event);

    const digests = firstBatch.flatMap((e) => (e.detailType === 'Heartbeat Digest' ? [e.detail] : []));
    expect(digests).toHaveLength(1);
    expect(digests[0]?.sequence).toBe(t.relay.status().nextSequence - 1);
    const changes = firstBatch.flatMap((e) => (e.detailType === 'Node Changed' ? [e.detail] : []));
    const taintKeys = (c: (typeof changes)[number]) => c.node.taints.map((taint) => taint.key).join(',');
    expect(changes.map((c) => [c.type, c.node.name, c.node.unschedulable, taintKeys(c)]).sort()).toEqual(
      [
        // Cordoned and uncordoned: one event, the latest state (the not-ready taint is admission's).
        ['MODIFIED', 'node-a', false, 'node.kubernetes.io/not-ready'],
        ['MODIFIED', 'node-b', false, 'example.com/maintenance'],
        // Added and made Ready during the outage: one ADDED with its latest state.
        ['ADDED', 'node-c', false, 'node.kubernetes.io/not-ready'],
      ].sort(),
    );
  });

  it('drops the oldest pending change beyond the cap, counts it and logs it loudly once', async () => {
    const t = startRelay({ maxPendingChanges: 3 });
    await t.relay.start();
    await waitForSync(t.relay);
    t.sink.down = true;
    for (const name of ['node-1', 'node-2', 'node-3', 'node-4', 'node-5']) createNode(sim, name);
    await waitForCatchUp(sim, t.relay);
    await sim.scheduler.advance(0);

    expect(await metric(t, 'eventsDropped', { reason: 'queue_full' })).toBe(2);
    expect(
      t.logger.lines.filter((l) => l.level === 'error' && l.message.startsWith('publish queue full')),
    ).toHaveLength(1);

    t.sink.down = false;
    for (let i = 0; i < 60 && t.sink.nodeChanges().length < 3; i++) await advance(sim, 1_000);
    expect(t.sink.nodeChanges().map((c) => c.node.name)).toEqual(['node-3', 'node-4', 'node-5']);
  });
});
