// relay/publisher.ts: the republish lane is paced (a token bucket of republishRate events a second,
// one second's worth at once), while digests and live changes never wait behind it; the shutdown drain
// leaves the republish lane to the successor.
import { describe, expect, it } from 'vitest';
import { VirtualScheduler } from '../../../local/virtualScheduler.js';
import { silentLogger } from '../../../relay/logger.js';
import { RelayMetrics } from '../../../relay/metrics.js';
import type { ChangeEvent } from '../../../relay/publishQueue.js';
import { Publisher } from '../../../relay/publisher.js';
import type { Node } from '../../../shared/domain/types.js';
import type { HeartbeatDigest } from '../../../shared/events.js';
import { RecordingSink } from '../../integration/relay/helpers.js';

const t0 = Date.parse('2026-01-29T09:00:00Z');

const node = (name: string): Node => ({
  name,
  uid: `${name}-uid`,
  creationTimestamp: t0,
  labels: {},
  conditions: [],
  taints: [],
  unschedulable: false,
});
const nodeChange = (type: 'ADDED' | 'MODIFIED', name: string): ChangeEvent => ({
  detailType: 'Node Changed',
  detail: { schemaVersion: 1, cluster: 'prod', type, node: node(name) },
});
const digest = (sequence: number): HeartbeatDigest => ({
  schemaVersion: 1,
  cluster: 'prod',
  relayId: 'relay-0',
  leaderSince: t0,
  observingSince: t0,
  sequence,
  observedAt: t0 + sequence * 5_000,
  part: { index: 0, count: 1 },
  probes: new Map(),
});

function setUp(republishRate: number) {
  const scheduler = new VirtualScheduler(t0);
  const sink = new RecordingSink(scheduler);
  const publisher = new Publisher({
    sink,
    scheduler,
    metrics: new RelayMetrics(),
    logger: silentLogger,
    random: () => 0.5,
    maxPendingChanges: 100_000,
    batchSize: 500,
    republishRate,
    backoff: { initialMs: 500, maxMs: 30_000 },
    canPublish: () => true,
  });
  publisher.startTerm();
  const republishedAccepted = () => sink.nodeChanges().filter((c) => c.node.name.startsWith('view-')).length;
  return { scheduler, sink, publisher, republishedAccepted };
}

describe('Publisher, republish lane', () => {
  it('sends a second of republished events at once, then republishRate a second', async () => {
    const { scheduler, publisher, republishedAccepted } = setUp(100);
    for (let i = 0; i < 1_000; i++) publisher.addRepublished(nodeChange('ADDED', `view-${i}`), t0);
    publisher.scheduleFlush();
    await scheduler.advance(0);
    expect(republishedAccepted()).toBe(100);

    const seen: number[] = [];
    for (let second = 1; second <= 10; second++) {
      await scheduler.advance(1_000);
      seen.push(republishedAccepted());
    }
    // Never more than the allowance: 100 at once plus 100 for each second since.
    seen.forEach((accepted, i) => {
      expect(accepted).toBeLessThanOrEqual(100 + 100 * (i + 1));
      expect(accepted).toBeGreaterThanOrEqual(Math.min(1_000, 100 * (i + 1)));
    });
    expect(seen.at(-1)).toBe(1_000);
    expect(publisher.pendingRepublished).toBe(0);
  });

  it('never makes a digest or a live change wait behind it', async () => {
    const { scheduler, sink, publisher } = setUp(100);
    for (let i = 0; i < 1_000; i++) publisher.addRepublished(nodeChange('ADDED', `view-${i}`), t0);
    publisher.scheduleFlush();
    await scheduler.advance(2_500);

    publisher.addChange(nodeChange('MODIFIED', 'live'), scheduler.now());
    const digestSent = publisher.setDigest([digest(1)], scheduler.now());
    await scheduler.advance(0);
    await digestSent;
    const at = (name: string) =>
      sink.accepted.find(
        (a) =>
          (a.event.detailType === 'Node Changed' && a.event.detail.node.name === name) ||
          (a.event.detailType === 'Heartbeat Digest' && name === 'digest'),
      )?.at;
    expect(at('live')).toBe(t0 + 2_500);
    expect(at('digest')).toBe(t0 + 2_500);
    expect(publisher.pendingRepublished).toBeGreaterThan(500);
  });

  it('publishes it all at once when unpaced (Infinity)', async () => {
    const { scheduler, publisher, republishedAccepted } = setUp(Number.POSITIVE_INFINITY);
    for (let i = 0; i < 1_200; i++) publisher.addRepublished(nodeChange('ADDED', `view-${i}`), t0);
    publisher.scheduleFlush();
    await scheduler.advance(0);
    expect(republishedAccepted()).toBe(1_200);
  });

  it('is left to the successor by the shutdown drain, which sends the digest and the live changes', async () => {
    const { scheduler, sink, publisher } = setUp(100);
    sink.down = true; // so far nothing went out
    for (let i = 0; i < 300; i++) publisher.addRepublished(nodeChange('ADDED', `view-${i}`), t0);
    publisher.addChange(nodeChange('MODIFIED', 'live'), t0);
    void publisher.setDigest([digest(0)], t0);
    await scheduler.advance(0);
    sink.down = false;

    const unsent = await publisher.drainBeforeExit(AbortSignal.timeout(5_000), () => true);
    expect(unsent).toBe(300);
    expect(sink.nodeChanges().map((c) => c.node.name)).toEqual(['live']);
    expect(sink.digests()).toHaveLength(1);
  });
});
