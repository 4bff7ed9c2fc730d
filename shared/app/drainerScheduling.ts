// When the drainer runs and how long a run waits: what starts it (DrainerTrigger), the wait budget of a
// run (drainerWaitBudget), and the Lambda handler's loop that waits in process for the next due item
// and runs again (drainUntilIdle; `nlc simulate` schedules the same waits in virtual time with
// nextWait). One run is drainer.ts runDrainer.
import { setTimeout as sleepTimer } from 'node:timers/promises';
import type { ControllerConfig } from '../config.js';
import type { EpochMillis, Millis } from '../domain/types.js';
import { runDrainer, type DrainerDeps, type DrainerInvocation, type DrainerResult } from './drainer.js';

const realSleep = (ms: Millis, signal?: AbortSignal): Promise<void> =>
  sleepTimer(ms, undefined, signal === undefined ? {} : { signal });

/** What starts a drainer run: its own schedule, or the monitor (after a pass, or its scheduled check). */
export type DrainerTrigger = 'schedule' | DrainerInvocation['reason'];

/**
 * How long a run may wait for the next due item before it returns. A run the monitor started waits at
 * most one nodeMonitorPeriod: the next pass starts another when something is due within its period. A
 * run of the drainer's own schedule may wait until shortly before its deadline, so that a drainer is
 * waiting while the digests (and so the monitor's runs) are missing. `remainingMs`: the invocation's
 * remaining time; a run keeps `DrainerSafetyMarginMs` of it for its last pass.
 *
 * @example drainerWaitBudget('monitorPass', config, 60_000) // config.nodeMonitorPeriod
 */
export function drainerWaitBudget(
  trigger: DrainerTrigger,
  config: Pick<ControllerConfig, 'nodeMonitorPeriod'>,
  remainingMs: Millis,
): Millis {
  const available = Math.max(0, remainingMs - DrainerSafetyMarginMs);
  return trigger === 'schedule' ? available : Math.min(config.nodeMonitorPeriod, available);
}

/** Time a run keeps for its last pass after a wait (a drain of a zone and some pod deletions). */
export const DrainerSafetyMarginMs = 10_000;

/** The evictionDrainer function's timeout in serverless.yml (a test keeps them equal). */
export const EvictionDrainerTimeoutMs = 60_000;

export interface DrainUntilIdleOptions {
  /** The caller's clock. */
  readonly now: () => EpochMillis;
  /** Longest total wait (drainerWaitBudget). */
  readonly budgetMs: Millis;
  /** Waits; aborted by `deps.signal`. */
  readonly sleep?: (ms: Millis, signal?: AbortSignal) => Promise<void>;
}

/**
 * Runs the drainer, then, while the next item is due within the budget, waits for it and runs again.
 * Returns every run's result. The Lambda handler's loop; `nlc simulate` schedules the same waits in
 * virtual time (nextWait).
 *
 * @example await drainUntilIdle(deps, { now: () => clock.now(), budgetMs: drainerWaitBudget('monitorPass', config, 60_000) });
 */
export async function drainUntilIdle(
  deps: DrainerDeps,
  options: DrainUntilIdleOptions,
): Promise<readonly DrainerResult[]> {
  const sleep = options.sleep ?? realSleep;
  const deadline = options.now() + options.budgetMs;
  const results: DrainerResult[] = [];
  for (;;) {
    const result = await runDrainer(deps, options.now());
    results.push(result);
    const wait = nextWait(result, deadline);
    if (wait === undefined) return results;
    await sleep(wait, deps.signal);
  }
}

/** How long to wait before the next run, or undefined when the next due item is past the deadline. */
export function nextWait(result: DrainerResult, deadline: EpochMillis): Millis | undefined {
  const wait = result.nextDueInMs;
  if (wait === undefined || result.now + wait > deadline) return undefined;
  return wait;
}
