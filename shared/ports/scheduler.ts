// The Scheduler port: timers on a Clock. The local stack runs it on the system clock
// (shared/adapters/realScheduler.ts); `nlc simulate` and tests run it in virtual time
// (local/virtualScheduler.ts), where it is also what makes time pass.
//
// Order within one instant is part of the contract (docs/simulate.md): the scenario's actions
// at time t happen first, then the kubelets' own ticks at t, then the relay and the controller. Timers
// therefore fire in (time, priority, insertion) order: an earlier time first; at equal times a lower
// priority number first; at equal priorities the timer scheduled first.
import type { EpochMillis, Millis } from '../domain/types.js';
import type { Clock } from './clock.js';

/**
 * Priorities of timers due at the same instant: lower fires first. The gaps leave room for
 * participants in between (any number works; these name the ones docs/simulate.md orders).
 */
export const Priority = Object.freeze({
  /** A scenario's timeline actions (stopKubelet, addNode, …) and test set-up steps. */
  ScenarioAction: 0,
  /** Simulated kubelets: lease renewals, node status, pod status and deletion confirmations. */
  Kubelet: 100,
  /** The watch relay: digests and forwarded changes. */
  Relay: 200,
  /** The controller's handlers (monitor pass, taint eviction, drainer) as the bus delivers to them. */
  Controller: 300,
  /** Housekeeping that must see everything else that happened at the instant. */
  Background: 1000,
});

/** A timer callback. An async one is awaited by the virtual scheduler before the next timer fires. */
export type TimerCallback = () => void | Promise<void>;

/** Identifies a scheduled timer (one-shot or periodic) for `cancel`. */
export interface TimerHandle {
  readonly id: number;
}

/**
 * Timers on a clock.
 *
 * - `at(time, …)` with a time already past fires as soon as possible (as if due now).
 * - `every(period, firstAt, …)` fires at firstAt, firstAt + period, firstAt + 2·period, … computed
 *   from firstAt, so a slow callback never makes the period drift. A firstAt already past is moved
 *   forward on that grid to the first instant not in the past. Every occurrence keeps the periodic
 *   timer's original place in the insertion order.
 * - `cancel` is idempotent; cancelling a periodic timer from its own callback stops it.
 *
 * @example
 * const handle = scheduler.every(10_000, scheduler.now(), Priority.Kubelet, () => kubelet.tick());
 * scheduler.after(30_000, Priority.ScenarioAction, () => scheduler.cancel(handle));
 */
export interface Scheduler extends Clock {
  at(time: EpochMillis, priority: number, fn: TimerCallback): TimerHandle;
  after(delay: Millis, priority: number, fn: TimerCallback): TimerHandle;
  every(period: Millis, firstAt: EpochMillis, priority: number, fn: TimerCallback): TimerHandle;
  cancel(handle: TimerHandle): void;
}
