// The real-time Scheduler (shared/ports/scheduler.ts) for the relay and the local stack: one Node.js
// timeout armed for the earliest timer; when it fires, every due timer runs in (time, priority,
// insertion) order. Its clock never steps (see now()).
//
// Unlike the virtual scheduler, callbacks are not awaited: in real time a handler waiting on I/O must
// not hold back a kubelet's lease renewal. A rejected promise or a thrown error goes to `onError`.
// A periodic timer that falls behind (a stalled event loop) skips the occurrences it missed, as Go's
// time.Ticker drops ticks, instead of firing a burst to catch up.
import type { EpochMillis, Millis } from '../domain/types.js';
import type { Scheduler, TimerCallback, TimerHandle } from '../ports/scheduler.js';
import { TimerQueue, checkTimerArguments, firstOnGrid } from './timerQueue.js';

/** setTimeout's longest delay (2^31 - 1 ms); longer waits re-arm. */
const maxTimeoutDelay = 2_147_483_647;

export interface RealSchedulerOptions {
  /** Receives what a callback threw or rejected with. By default it is written to stderr. */
  readonly onError?: (error: unknown) => void;
  /** Let the process exit while timers are pending (Node's `timeout.unref()`). False by default. */
  readonly unref?: boolean;
}

/**
 * Timers on the system clock.
 *
 * @example
 * const scheduler = new RealScheduler();
 * scheduler.every(10_000, scheduler.now(), Priority.Kubelet, () => fleet.tick());
 * // …
 * scheduler.close(); // cancels every timer
 */
export class RealScheduler implements Scheduler {
  private readonly queue = new TimerQueue();
  private readonly onError: (error: unknown) => void;
  private readonly unref: boolean;
  private timeout: NodeJS.Timeout | undefined;
  private armedFor: EpochMillis | undefined;
  private closed = false;
  private readonly wallAtStart = Date.now();
  private readonly monotonicAtStart = performance.now();

  constructor(options: RealSchedulerOptions = {}) {
    this.onError =
      options.onError ??
      ((error) => {
        process.stderr.write(`scheduler: timer callback failed: ${String(error)}\n`);
      });
    this.unref = options.unref ?? false;
  }

  /**
   * The wall clock as it read when this scheduler was made, moved on by the monotonic clock: a step of
   * the system clock (an NTP step, a host moved to a fixed clock) never reaches a running process, as
   * Go's time.Now() carries a monotonic reading that every duration is measured on. NTP's rate
   * corrections still apply (the monotonic clock is slewed with the wall clock); a step shows at the
   * next start. The relay's probes, digests and leadership terms are measured on it
   * (docs/architecture.md#one-clock-per-comparison).
   */
  now(): EpochMillis {
    return Math.floor(this.wallAtStart + (performance.now() - this.monotonicAtStart));
  }

  at(time: EpochMillis, priority: number, fn: TimerCallback): TimerHandle {
    checkTimerArguments(time, priority);
    return this.add(time, priority, fn);
  }

  after(delay: Millis, priority: number, fn: TimerCallback): TimerHandle {
    return this.at(this.now() + Math.max(0, delay), priority, fn);
  }

  every(period: Millis, firstAt: EpochMillis, priority: number, fn: TimerCallback): TimerHandle {
    checkTimerArguments(firstAt, priority, period);
    return this.add(firstOnGrid(firstAt, period, this.now()), priority, fn, period);
  }

  cancel(handle: TimerHandle): void {
    if (this.queue.cancel(handle)) this.arm();
  }

  /** Timers scheduled and not yet fired (periodic ones until cancelled). */
  get pending(): number {
    return this.queue.size;
  }

  /** Cancels every timer; later calls schedule nothing (their handles never fire). */
  close(): void {
    this.closed = true;
    this.queue.clear();
    this.disarm();
  }

  private add(time: EpochMillis, priority: number, fn: TimerCallback, period?: Millis): TimerHandle {
    if (this.closed) return { id: 0 };
    const entry = this.queue.add(time, priority, fn, period);
    this.arm();
    return { id: entry.id };
  }

  private disarm(): void {
    if (this.timeout !== undefined) clearTimeout(this.timeout);
    this.timeout = undefined;
    this.armedFor = undefined;
  }

  /** Keeps one timeout armed for the earliest live timer. */
  private arm(): void {
    const next = this.queue.peek();
    if (next === undefined) {
      this.disarm();
      return;
    }
    if (this.armedFor === next.time && this.timeout !== undefined) return;
    this.disarm();
    const delay = Math.min(Math.max(0, next.time - this.now()), maxTimeoutDelay);
    this.armedFor = next.time;
    this.timeout = setTimeout(() => {
      this.timeout = undefined;
      this.armedFor = undefined;
      this.fireDue();
    }, delay);
    if (this.unref) this.timeout.unref();
  }

  private fireDue(): void {
    const now = this.now();
    // Only timers due by the time this batch started: a callback that keeps scheduling itself for "now"
    // ends the batch as soon as the clock moves on, so it cannot starve I/O.
    for (let next = this.queue.peek(); next !== undefined && next.time <= now; next = this.queue.peek()) {
      const entry = this.queue.pop((e) => firstOnGrid(e.time, e.period ?? 1, now + 1));
      if (entry === undefined) break;
      this.invoke(entry.fn);
    }
    if (!this.closed) this.arm();
  }

  private invoke(fn: TimerCallback): void {
    try {
      const result = fn();
      if (result instanceof Promise) result.catch(this.onError);
    } catch (error) {
      this.onError(error);
    }
  }
}
