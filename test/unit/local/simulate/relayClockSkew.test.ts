// `relayClockSkew`: the simulated relay runs on the shared virtual time (its timers fire at the same
// instants) but reads its clock that much off, so every instant it stamps (digests' observedAt,
// observingSince and leaderSince, and probes) carries the skew.
import { afterEach, describe, expect, it } from 'vitest';
import { relayHostClock, skewedScheduler } from '../../../../local/simulate/simulation.js';
import { Priority } from '../../../../shared/ports/scheduler.js';
import {
  createNode,
  renewLease,
  startCluster,
  startInProcessRelay,
  t0,
  type InProcessCluster,
  type InProcessRelay,
} from '../../../helpers/inProcessRelay.js';

let cluster: InProcessCluster | undefined;
let running: InProcessRelay | undefined;

afterEach(async () => {
  await running?.relay.stop({ flushTimeoutMs: 0 });
  await cluster?.server.close();
  running = cluster = undefined;
});

describe('a relay whose clock is skewed', () => {
  it.each([
    { skew: -120_000, as: '-2m' },
    { skew: 90_000, as: '+90s' },
  ])('stamps its digests and probes with its own clock ($as), on the shared timers', async ({ skew }) => {
    const c = (cluster = startCluster());
    createNode(c, 'n-1');
    const r = (running = await startInProcessRelay(c, { scheduler: skewedScheduler(c.scheduler, skew) }));
    await c.scheduler.runUntil(t0 + 7_000);
    renewLease(c, 'n-1'); // at 7 s of shared time: a probe at 7 s + skew on the relay's clock
    await c.scheduler.runUntil(t0 + 10_000);

    // Sent at 0, 5 and 10 s of shared time, every instant in them on the relay's clock.
    expect(r.sink.accepted.map((a) => a.at - t0)).toEqual([0, 0, 5_000, 10_000]); // Node Changed, 3 digests
    expect(
      r.sink.digests().map((d) => ({
        observedAt: d.observedAt - t0,
        observingSince: d.observingSince - t0,
        leaderSince: d.leaderSince - t0,
        probe: (d.probes.get('n-1') ?? 0) - t0,
      })),
    ).toEqual([
      { observedAt: skew, observingSince: skew, leaderSince: skew, probe: skew },
      { observedAt: 5_000 + skew, observingSince: skew, leaderSince: skew, probe: skew },
      { observedAt: 10_000 + skew, observingSince: skew, leaderSince: skew, probe: 7_000 + skew },
    ]);
  });

  it('is the scheduler itself without a skew', () => {
    const c = (cluster = startCluster());
    expect(skewedScheduler(c.scheduler, 0)).toBe(c.scheduler);
  });
});

describe('a relay host clock that steps (relayClockStep)', () => {
  it('reads the new offset from the step on; timers set before keep their instants of shared time', async () => {
    const c = (cluster = startCluster());
    const host = relayHostClock(c.scheduler, 10_000);
    const fired: string[] = [];
    const at = (label: string) => () => {
      fired.push(`${label} ${(c.scheduler.now() - t0) / 1000} reads ${(host.scheduler.now() - t0) / 1000}`);
    };
    // Set in the host's own time (10 s ahead): due at 20 s of shared time, and every 5 s from 0.
    host.scheduler.at(t0 + 30_000, Priority.Relay, at('at'));
    host.scheduler.every(5_000, t0 + 10_000, Priority.Relay, at('every'));
    await c.scheduler.runUntil(t0 + 7_000);
    host.step(-60_000);
    expect(host.offset()).toBe(-50_000);
    host.scheduler.after(1_000, Priority.Relay, at('after'));
    // Set after the step, in the stepped time: 30 s of host time is 80 s of shared time, whatever
    // the later step makes it read then.
    host.scheduler.at(t0 + 30_000, Priority.Relay, at('late'));
    await c.scheduler.runUntil(t0 + 20_000);
    host.step(5_000);
    await c.scheduler.runUntil(t0 + 25_000);
    expect(fired).toEqual([
      'every 0 reads 10',
      'every 5 reads 15',
      'after 8 reads -42',
      'every 10 reads -40',
      'every 15 reads -35',
      'at 20 reads -30',
      'every 20 reads -30',
      'every 25 reads -20',
    ]);
    await c.scheduler.runUntil(t0 + 80_000);
    expect(fired.filter((f) => f.startsWith('late'))).toEqual(['late 80 reads 35']);
  });
});
