// A deterministic discrete-event Scheduler (shared/ports/scheduler.ts) for `nlc simulate` and tests.
// Time stands still until the driver moves it: `runUntil(t)` fires every timer due by t in
// (time, priority, insertion) order, setting the clock to each timer's time before its callback, and
// awaits an async callback before the next timer fires. So a handler that awaits its store writes is
// done before anything later happens, and two runs of the same timers give the same sequence.
//
// Nothing here reads the system clock or yields to real timers: a callback that starts work without
// returning its promise is not waited for (return it, or the run is not deterministic).
import { TimerQueue, checkTimerArguments, firstOnGrid } from '../shared/adapters/timerQueue.js';
import type { EpochMillis, Millis } from '../shared/domain/types.js';
import type { Scheduler, TimerCallback, TimerHandle } from '../shared/ports/scheduler.js';

/**
 * Virtual time with timers.
 *
 * @example
 * const scheduler = new VirtualScheduler(Date.parse('2026-01-01T00:00:00Z'));
 * scheduler.every(10_000, scheduler.now(), Priority.Kubelet, renewLease);
 * await scheduler.runUntil(scheduler.now() + 60_000); // renewals at 0, 10, …, 60 s
 */
export class VirtualScheduler implements Scheduler {
  private readonly queue = new TimerQueue();
  private time: EpochMillis;
  private running = false;

  constructor(start: EpochMillis) {
    checkTimerArguments(start, 0);
    this.time = start;
  }

  now(): EpochMillis {
    return this.time;
  }

  /** A time already past is due now (the clock never goes back). */
  at(time: EpochMillis, priority: number, fn: TimerCallback): TimerHandle {
    checkTimerArguments(time, priority);
    return { id: this.queue.add(Math.max(time, this.time), priority, fn).id };
  }

  after(delay: Millis, priority: number, fn: TimerCallback): TimerHandle {
    return this.at(this.time + Math.max(0, delay), priority, fn);
  }

  every(period: Millis, firstAt: EpochMillis, priority: number, fn: TimerCallback): TimerHandle {
    checkTimerArguments(firstAt, priority, period);
    return { id: this.queue.add(firstOnGrid(firstAt, period, this.time), priority, fn, period).id };
  }

  cancel(handle: TimerHandle): void {
    this.queue.cancel(handle);
  }

  /** When the next live timer is due (undefined when none is scheduled). */
  nextTimerAt(): EpochMillis | undefined {
    return this.queue.peek()?.time;
  }

  /** Timers scheduled and not yet fired (periodic ones until cancelled). */
  get pending(): number {
    return this.queue.size;
  }

  /**
   * Fires every timer due at or before `until`, one at a time, awaiting each, including timers that
   * callbacks schedule within the window; then sets the clock to `until` (if it is later). Rejects
   * with the first callback error, leaving the clock at that timer's time and the rest queued.
   */
  async runUntil(until: EpochMillis): Promise<void> {
    checkTimerArguments(until, 0);
    await this.run((next) => next.time <= until, Number.POSITIVE_INFINITY);
    if (until > this.time) this.time = until;
  }

  /** runUntil(now + duration). */
  async advance(duration: Millis): Promise<void> {
    await this.runUntil(this.time + Math.max(0, duration));
  }

  /**
   * Fires timers until none is left, moving the clock to each. Periodic timers never run out, so
   * `maxTimers` bounds the run: reaching it rejects with a RangeError (the clock stays where it got).
   */
  async runUntilIdle(maxTimers = 100_000): Promise<void> {
    await this.run(() => true, maxTimers);
  }

  private async run(
    due: (next: { readonly time: EpochMillis }) => boolean,
    maxTimers: number,
  ): Promise<void> {
    if (this.running) throw new Error('VirtualScheduler is already running (a callback called runUntil)');
    this.running = true;
    try {
      let fired = 0;
      for (let next = this.queue.peek(); next !== undefined && due(next); next = this.queue.peek()) {
        if (fired >= maxTimers)
          throw new RangeError(`VirtualScheduler: still busy after ${maxTimers} timers (a periodic timer?)`);
        const entry = this.queue.pop();
        if (entry === undefined) break;
        this.time = Math.max(this.time, entry.time);
        fired += 1;
        await entry.fn();
      }
    } finally {
      this.running = false;
    }
  }
}
