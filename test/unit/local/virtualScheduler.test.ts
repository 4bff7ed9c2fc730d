// The virtual-time scheduler: (time, priority, insertion) order, cancellation, drift-free periods,
// async callbacks finishing before the next timer, determinism.
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { VirtualScheduler } from '../../../local/virtualScheduler.js';
import { Priority } from '../../../shared/ports/scheduler.js';

const t0 = Date.parse('2026-01-01T00:00:00Z');

/** Records "label@offset" for each callback. */
function recorder(scheduler: VirtualScheduler) {
  const log: string[] = [];
  const mark = (label: string) => () => {
    log.push(`${label}@${scheduler.now() - t0}`);
  };
  return { log, mark };
}

describe('VirtualScheduler', () => {
  it('fires timers by time, then priority, then insertion order', async () => {
    const scheduler = new VirtualScheduler(t0);
    const { log, mark } = recorder(scheduler);
    scheduler.at(t0 + 10, Priority.Controller, mark('controller'));
    scheduler.at(t0 + 10, Priority.Relay, mark('relay'));
    scheduler.at(t0 + 10, Priority.Kubelet, mark('kubelet-1'));
    scheduler.at(t0 + 10, Priority.Kubelet, mark('kubelet-2'));
    scheduler.at(t0 + 10, Priority.ScenarioAction, mark('action'));
    scheduler.at(t0 + 5, Priority.Background, mark('early'));
    await scheduler.runUntil(t0 + 10);
    expect(log).toEqual([
      'early@5',
      'action@10',
      'kubelet-1@10',
      'kubelet-2@10',
      'relay@10',
      'controller@10',
    ]);
  });

  it('stands still until run, and runUntil leaves the clock at its bound', async () => {
    const scheduler = new VirtualScheduler(t0);
    const { log, mark } = recorder(scheduler);
    scheduler.after(1_000, Priority.Kubelet, mark('a'));
    expect(scheduler.now()).toBe(t0);
    expect(scheduler.nextTimerAt()).toBe(t0 + 1_000);
    await scheduler.runUntil(t0 + 999);
    expect(log).toEqual([]);
    expect(scheduler.now()).toBe(t0 + 999);
    await scheduler.advance(5_000);
    expect(log).toEqual(['a@1000']);
    expect(scheduler.now()).toBe(t0 + 5_999);
    expect(scheduler.nextTimerAt()).toBeUndefined();
  });

  it('runs a timer a callback schedules for the same instant at a lower priority before the rest', async () => {
    const scheduler = new VirtualScheduler(t0);
    const { log, mark } = recorder(scheduler);
    scheduler.at(t0 + 10, Priority.Controller, () => {
      log.push('controller-1@10');
      scheduler.after(0, Priority.Kubelet, mark('kubelet-reaction'));
    });
    scheduler.at(t0 + 10, Priority.Controller, mark('controller-2'));
    await scheduler.runUntil(t0 + 10);
    expect(log).toEqual(['controller-1@10', 'kubelet-reaction@10', 'controller-2@10']);
  });

  it('treats a time already past as due now: the clock never goes back', async () => {
    const scheduler = new VirtualScheduler(t0);
    await scheduler.advance(100);
    const { log, mark } = recorder(scheduler);
    scheduler.at(t0, Priority.Kubelet, mark('late'));
    expect(scheduler.nextTimerAt()).toBe(t0 + 100);
    await scheduler.runUntil(t0 + 100);
    expect(log).toEqual(['late@100']);
  });

  it('cancels one-shot and periodic timers, also from inside a callback', async () => {
    const scheduler = new VirtualScheduler(t0);
    const { log, mark } = recorder(scheduler);
    const gone = scheduler.at(t0 + 1, Priority.Kubelet, mark('cancelled'));
    scheduler.cancel(gone);
    scheduler.cancel(gone); // idempotent
    let ticks = 0;
    const periodic = scheduler.every(10, t0, Priority.Kubelet, () => {
      ticks += 1;
      log.push(`tick@${scheduler.now() - t0}`);
      if (ticks === 3) scheduler.cancel(periodic);
    });
    const later = scheduler.at(t0 + 15, Priority.Relay, mark('never'));
    scheduler.at(t0 + 12, Priority.ScenarioAction, () => {
      scheduler.cancel(later);
    });
    await scheduler.runUntil(t0 + 100);
    expect(log).toEqual(['tick@0', 'tick@10', 'tick@20']);
    expect(scheduler.pending).toBe(0);
  });

  it('keeps periods on their grid: k·period from firstAt, a past firstAt moved forward on it', async () => {
    const scheduler = new VirtualScheduler(t0);
    await scheduler.advance(25_000);
    const times: number[] = [];
    scheduler.every(10_000, t0, Priority.Kubelet, async () => {
      times.push(scheduler.now() - t0);
      await nextMacrotask(); // slow callbacks do not shift later occurrences
    });
    await scheduler.runUntil(t0 + 75_000);
    expect(times).toEqual([30_000, 40_000, 50_000, 60_000, 70_000]);
  });

  it('keeps a periodic timer in its original insertion place at every occurrence', async () => {
    const scheduler = new VirtualScheduler(t0);
    const { log, mark } = recorder(scheduler);
    scheduler.every(10, t0 + 10, Priority.Kubelet, mark('first'));
    scheduler.every(10, t0 + 10, Priority.Kubelet, mark('second'));
    await scheduler.runUntil(t0 + 30);
    expect(log).toEqual(['first@10', 'second@10', 'first@20', 'second@20', 'first@30', 'second@30']);
  });

  it('awaits an async callback, real I/O turns included, before the next timer fires', async () => {
    const scheduler = new VirtualScheduler(t0);
    const log: string[] = [];
    scheduler.at(t0 + 1, Priority.Kubelet, async () => {
      log.push('write started');
      await nextMacrotask();
      await new Promise((resolve) => setTimeout(resolve, 1));
      log.push('write done');
    });
    scheduler.at(t0 + 1, Priority.Relay, () => {
      log.push('relay observes');
    });
    await scheduler.runUntil(t0 + 1);
    expect(log).toEqual(['write started', 'write done', 'relay observes']);
  });

  it('rejects with a callback error, keeping the remaining timers', async () => {
    const scheduler = new VirtualScheduler(t0);
    const { log, mark } = recorder(scheduler);
    scheduler.at(t0 + 1, Priority.Kubelet, () => {
      throw new Error('boom');
    });
    scheduler.at(t0 + 2, Priority.Kubelet, mark('after'));
    await expect(scheduler.runUntil(t0 + 10)).rejects.toThrow('boom');
    expect(scheduler.now()).toBe(t0 + 1);
    await scheduler.runUntil(t0 + 10);
    expect(log).toEqual(['after@2']);
  });

  it('refuses a run started from inside a callback', async () => {
    const scheduler = new VirtualScheduler(t0);
    scheduler.at(t0 + 1, Priority.Kubelet, () => scheduler.runUntil(t0 + 2));
    await expect(scheduler.runUntil(t0 + 5)).rejects.toThrow(/already running/);
  });

  it('runUntilIdle drains one-shot timers and bounds a periodic one', async () => {
    const scheduler = new VirtualScheduler(t0);
    const { log, mark } = recorder(scheduler);
    scheduler.after(50, Priority.Kubelet, () => {
      log.push(`a@${scheduler.now() - t0}`);
      scheduler.after(50, Priority.Kubelet, mark('b'));
    });
    await scheduler.runUntilIdle();
    expect(log).toEqual(['a@50', 'b@100']);
    scheduler.every(1, scheduler.now(), Priority.Kubelet, () => undefined);
    await expect(scheduler.runUntilIdle(20)).rejects.toThrow(RangeError);
  });

  it('rejects arguments that are not finite, and periods that are not positive', () => {
    const scheduler = new VirtualScheduler(t0);
    expect(() => scheduler.at(Number.NaN, Priority.Kubelet, () => undefined)).toThrow(RangeError);
    expect(() => scheduler.every(0, t0, Priority.Kubelet, () => undefined)).toThrow(RangeError);
    expect(() => scheduler.every(10, t0, Number.POSITIVE_INFINITY, () => undefined)).toThrow(RangeError);
  });

  it('is deterministic: the same timers give the same sequence', async () => {
    const run = async () => {
      const scheduler = new VirtualScheduler(t0);
      const log: string[] = [];
      for (let i = 0; i < 20; i++) {
        const priority =
          [Priority.ScenarioAction, Priority.Kubelet, Priority.Relay, Priority.Controller][i % 4] ?? 0;
        scheduler.every(7 + (i % 3), t0 + (i % 5), priority, async () => {
          log.push(`${i}@${scheduler.now() - t0}`);
          await Promise.resolve();
          if (i % 6 === 0)
            scheduler.after(i % 4, Priority.Relay, () => void log.push(`echo-${i}@${scheduler.now() - t0}`));
        });
      }
      await scheduler.runUntil(t0 + 500);
      return log;
    };
    const first = await run();
    expect(first.length).toBeGreaterThan(1000);
    expect(await run()).toEqual(first);
  });
});
