// The system-clock scheduler. No timing assertions: only order, counts reached, and cancellation.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RealScheduler } from '../../../shared/adapters/realScheduler.js';
import { Priority } from '../../../shared/ports/scheduler.js';

/** Polls `condition` until it holds (generous bound; no timing assertion). */
async function eventually(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('RealScheduler', () => {
  const schedulers: RealScheduler[] = [];
  const make = (options?: ConstructorParameters<typeof RealScheduler>[0]) => {
    const scheduler = new RealScheduler(options);
    schedulers.push(scheduler);
    return scheduler;
  };
  afterEach(() => {
    for (const scheduler of schedulers.splice(0)) scheduler.close();
  });

  it('fires timers due at the same time in priority, then insertion order', async () => {
    const scheduler = make();
    const log: string[] = [];
    const at = scheduler.now() + 20;
    scheduler.at(at, Priority.Controller, () => void log.push('controller'));
    scheduler.at(at, Priority.Kubelet, () => void log.push('kubelet-1'));
    scheduler.at(at, Priority.Kubelet, () => void log.push('kubelet-2'));
    scheduler.at(at, Priority.ScenarioAction, () => void log.push('action'));
    await eventually(() => log.length === 4);
    expect(log).toEqual(['action', 'kubelet-1', 'kubelet-2', 'controller']);
    expect(scheduler.pending).toBe(0);
  });

  it('never steps: a jump of the system clock does not reach a running scheduler', () => {
    const scheduler = make();
    const before = scheduler.now();
    const stepped = vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 10 * 60_000);
    try {
      const after = scheduler.now();
      expect(after - before).toBeGreaterThanOrEqual(0);
      expect(after - before).toBeLessThan(60_000);
      // A scheduler made after the step reads the stepped clock.
      expect(make().now() - before).toBeGreaterThanOrEqual(10 * 60_000);
    } finally {
      stepped.mockRestore();
    }
  });

  it('repeats a periodic timer until cancelled', async () => {
    const scheduler = make();
    let ticks = 0;
    const handle = scheduler.every(5, scheduler.now(), Priority.Kubelet, () => {
      ticks += 1;
    });
    await eventually(() => ticks >= 3);
    scheduler.cancel(handle);
    expect(scheduler.pending).toBe(0);
  });

  it('sends thrown errors and rejections to onError and keeps going', async () => {
    const errors: unknown[] = [];
    const scheduler = make({ onError: (error) => errors.push(error), unref: true });
    let later = false;
    scheduler.after(0, Priority.Kubelet, () => {
      throw new Error('sync');
    });
    scheduler.after(0, Priority.Kubelet, () => Promise.reject(new Error('async')));
    scheduler.after(1, Priority.Kubelet, () => {
      later = true;
    });
    await eventually(() => later && errors.length === 2);
    expect(errors.map((e) => (e as Error).message).sort()).toEqual(['async', 'sync']);
  });

  it('close() cancels everything and later timers never fire', async () => {
    const scheduler = make();
    let fired = false;
    scheduler.after(10, Priority.Kubelet, () => {
      fired = true;
    });
    scheduler.close();
    scheduler.after(0, Priority.Kubelet, () => {
      fired = true;
    });
    expect(scheduler.pending).toBe(0);
    // A later timer on another scheduler fires after the cancelled ones would have.
    const witness = make();
    let witnessed = false;
    witness.after(30, Priority.Kubelet, () => {
      witnessed = true;
    });
    await eventually(() => witnessed);
    expect(fired).toBe(false);
  });
});
