// The relay through a stalled lease watch (the API simulator's stallWatches fault), in process on
// virtual time: the watchdog relists, renewals the stall hid become probes at the relist, a lease that
// did not advance keeps its probe, and no digest is sent while the relay cannot vouch for the silence
// it would report (lease watch interrupted, suspected stalled, or a digest timer fired late).
import { afterEach, describe, expect, it } from 'vitest';
import { WatchStalledMessage } from '../../../relay/reflector.js';
import type { EpochMillis } from '../../../shared/domain/types.js';
import type { Scheduler } from '../../../shared/ports/scheduler.js';
import {
  counterValue,
  createNode,
  renewLease,
  startCluster,
  startInProcessRelay,
  t0,
  type InProcessCluster,
  type InProcessRelay,
} from '../../helpers/inProcessRelay.js';

let cluster: InProcessCluster | undefined;
let running: InProcessRelay | undefined;

afterEach(async () => {
  await running?.relay.stop({ flushTimeoutMs: 0 });
  await cluster?.server.close();
  running = cluster = undefined;
});

const s = (seconds: number): EpochMillis => t0 + seconds * 1000;
const at = (c: InProcessCluster, seconds: number) => c.scheduler.runUntil(s(seconds));

/** Each digest as `observedAt: node=probe, …`, in seconds since t0. */
function digestsOf(r: InProcessRelay): string[] {
  return r.sink
    .digests()
    .map(
      (d) =>
        `${(d.observedAt - t0) / 1000}: ${[...d.probes]
          .map(([node, probe]) => `${node}=${(probe - t0) / 1000}`)
          .join(', ')}`,
    );
}

describe('a stalled lease watch', () => {
  it('is relisted after 20 s of silence: a renewal it hid is a probe at the relist, a lease that did not advance keeps its probe', async () => {
    const c = (cluster = startCluster());
    createNode(c, 'n-1');
    createNode(c, 'n-2');
    const r = (running = await startInProcessRelay(c));

    await at(c, 5);
    renewLease(c, 'n-1');
    renewLease(c, 'n-2'); // both probed at 5 s; the watch's last delivery
    await at(c, 6);
    const endStall = c.faults.stallWatches({ resource: 'leases' });
    await at(c, 10);
    renewLease(c, 'n-1'); // hidden by the stall; n-2 renews no more
    await at(c, 29);
    endStall();
    await at(c, 33);
    renewLease(c, 'n-1'); // delivered again by the watch the relist opened
    await at(c, 40);

    // The watch was silent from 5 s: stalled at 25 s, relisted before the 25 s digest.
    expect(digestsOf(r).slice(4)).toEqual([
      '20: n-1=5, n-2=5',
      '25: n-1=25, n-2=5',
      '30: n-1=25, n-2=5',
      '35: n-1=33, n-2=5',
      '40: n-1=33, n-2=5',
    ]);
    expect(await counterValue(r.metrics, 'watchStalls', { resource: 'leases' })).toBe(1);
    expect(await counterValue(r.metrics, 'relists', { resource: 'leases' })).toBe(1);
    expect(await counterValue(r.metrics, 'digestsSkipped', {})).toBe(0);
    expect(r.logger.lines.filter((l) => l.level === 'warn')).toEqual([
      {
        level: 'warn',
        message: WatchStalledMessage,
        fields: { resource: 'leases', silentSeconds: 20, resourceVersion: expect.any(String) as string },
      },
    ]);
  });

  it('sends no digest while its relist fails; digests resume once it watches again', async () => {
    const c = (cluster = startCluster());
    createNode(c, 'n-1');
    const r = (running = await startInProcessRelay(c));
    c.faults.stallWatches({ resource: 'leases' });
    const removeFault = c.faults.inject({ kind: 'conflict', match: { verb: 'list', resource: 'leases' } });

    // Silent since the watch opened at 0 s: stalled at 20 s; the relist fails and is retried with
    // client-go's backoff (1.2 s, 2.4 s, 4.8 s, 9.6 s with this jitter: 21.2, 23.6, 28.4, 38 s).
    await at(c, 30);
    removeFault();
    await at(c, 45);

    expect(r.sink.digests().map((d) => (d.observedAt - t0) / 1000)).toEqual([0, 5, 10, 15, 40, 45]);
    expect(await counterValue(r.metrics, 'digestsSkipped', { reason: 'lease_watch_interrupted' })).toBe(4);
    expect(r.logger.lines.filter((l) => l.message.startsWith('digest skipped'))).toHaveLength(1);
    expect(r.logger.lines.find((l) => l.message === 'digests resumed')?.fields).toMatchObject({
      skipped: 4,
      firstReason: 'lease_watch_interrupted',
      skippedSeconds: 20,
    });
  });

  it('sends no digest once it has been silent for its stall timeout, even before the watchdog acts', async () => {
    const c = (cluster = startCluster());
    createNode(c, 'n-1');
    // The lease watchdog's timer (due at 20 s) fires 3 s late, as in a busy process.
    const late = (virtual: Scheduler): Scheduler => ({
      now: () => virtual.now(),
      at: (time, priority, fn) => virtual.at(time === s(20) ? time + 3_000 : time, priority, fn),
      after: (delay, priority, fn) => virtual.after(delay, priority, fn),
      every: (period, firstAt, priority, fn) => virtual.every(period, firstAt, priority, fn),
      cancel: (handle) => {
        virtual.cancel(handle);
      },
    });
    const r = (running = await startInProcessRelay(c, { scheduler: late(c.scheduler) }));
    c.faults.stallWatches({ resource: 'leases' });
    await at(c, 30);

    // 20 s: silent for 20 s, suspected; 23 s: the late watchdog looks again a second later; 24 s: stall.
    expect(r.sink.digests().map((d) => (d.observedAt - t0) / 1000)).toEqual([0, 5, 10, 15, 25, 30]);
    expect(await counterValue(r.metrics, 'digestsSkipped', { reason: 'lease_watch_stalled' })).toBe(1);
    expect(await counterValue(r.metrics, 'watchStalls', { resource: 'leases' })).toBe(1);
  });
});

describe('a digest timer that fires late', () => {
  it('is skipped once when more than two periods passed since the previous tick; the next is sent', async () => {
    const c = (cluster = startCluster());
    createNode(c, 'n-1');
    // The relay's clock jumps 6 s ahead of its timers, as when its process was paused for 6 s.
    let paused = 0;
    const pausable: Scheduler = {
      now: () => c.scheduler.now() + paused,
      at: (time, priority, fn) => c.scheduler.at(time - paused, priority, fn),
      after: (delay, priority, fn) => c.scheduler.after(delay, priority, fn),
      every: (period, firstAt, priority, fn) => c.scheduler.every(period, firstAt - paused, priority, fn),
      cancel: (handle) => {
        c.scheduler.cancel(handle);
      },
    };
    const r = (running = await startInProcessRelay(c, {
      scheduler: pausable,
      leaseWatchStallTimeoutMs: 60_000,
    }));
    await at(c, 12);
    paused = 6_000;
    await at(c, 25);

    // Ticks at 0, 5, 10 s; the 15 s tick reads 21 s, 11 s after the previous one: skipped.
    expect(r.sink.digests().map((d) => (d.observedAt - t0) / 1000)).toEqual([0, 5, 10, 26, 31]);
    expect(await counterValue(r.metrics, 'digestsSkipped', { reason: 'late_timer' })).toBe(1);
  });
});
