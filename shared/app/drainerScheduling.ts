// When the drainer runs and how long a run waits: what starts it (DrainerTrigger), the wait budget of a
// run (drainerWaitBudget), and its steps (drainerSteps): drain, then wait for the next due item and
// drain again. A Lambda sleeps through the waits (steps.ts runSteps); `nlc simulate` schedules them in
// virtual time. One drain is drainer.ts runDrainer.
import type { ControllerConfig } from '../config.js';
import type { EpochMillis, Millis } from '../domain/types.js';
import { maxQuietDigestPeriod } from '../heartbeatDigest.js';
import { runDrainer, type DrainerDeps, type DrainerInvocation, type DrainerResult } from './drainer.js';
import { done, type Step } from './steps.js';

/** What starts a drainer run: its own schedule, or the monitor (after a pass, or its scheduled check). */
export type DrainerTrigger = 'schedule' | DrainerInvocation['reason'];

/**
 * How long a run may wait for the next due item before it returns. A run the monitor started waits
 * until the monitor's next pass at most (`nextPassWithin`: nodeMonitorPeriod, or the relay's quiet
 * period when the digest said so, capped at a third of the grace period): that pass starts another
 * when something is due within its own period. A
 * run of the drainer's own schedule may wait until shortly before its deadline, so that a drainer is
 * waiting while the digests (and so the monitor's runs) are missing. `remainingMs`: the invocation's
 * remaining time; a run keeps `DrainerSafetyMarginMs` of it for its last pass.
 *
 * @example drainerWaitBudget('monitorPass', config, 60_000) // config.nodeMonitorPeriod
 */
export function drainerWaitBudget(
  trigger: DrainerTrigger,
  config: Pick<ControllerConfig, 'nodeMonitorPeriod' | 'nodeMonitorGracePeriod'>,
  remainingMs: Millis,
  nextPassWithin?: Millis,
): Millis {
  const available = Math.max(0, remainingMs - DrainerSafetyMarginMs);
  if (trigger === 'schedule') return available;
  return Math.min(clampNextPassWithin(nextPassWithin, config), available);
}

/**
 * When the monitor's next pass is due as a digest says (its quietPeriodMs) or a drainer invocation
 * passes it on: never sooner than nodeMonitorPeriod, never later than a third of the grace period (what
 * a relay may claim: relay.md, "Quiet digests"), whatever the event says.
 *
 * @example clampNextPassWithin(15_000, { nodeMonitorPeriod: 5_000, nodeMonitorGracePeriod: 50_000 }) // 15000
 */
export function clampNextPassWithin(
  claimed: Millis | undefined,
  config: Pick<ControllerConfig, 'nodeMonitorPeriod' | 'nodeMonitorGracePeriod'>,
): Millis {
  const period = config.nodeMonitorPeriod;
  const most = Math.max(period, maxQuietDigestPeriod(config));
  return Math.min(most, Math.max(period, claimed ?? period));
}

/** Time a run keeps for its last pass after a wait (a drain of a zone and some pod deletions). */
export const DrainerSafetyMarginMs = 10_000;

/** The evictionDrainer function's timeout in serverless.yml (a test keeps them equal). */
export const EvictionDrainerTimeoutMs = 60_000;

export interface DrainerStepsOptions {
  /** The caller's clock (the functions' clock). */
  readonly now: () => EpochMillis;
  /** Longest total wait (drainerWaitBudget), from the first drain. */
  readonly budgetMs: Millis;
  /** Told each drain's result (tests and reports; the functions log their own). */
  readonly onRun?: (result: DrainerResult) => void;
}

/**
 * The drainer's run as steps: drain, then while the next due item falls within the budget, a wait for
 * it and another drain. The one loop of the Lambda (runSteps sleeps through the waits) and of
 * `nlc simulate` (which schedules them in virtual time).
 *
 * @example
 * await runSteps(await drainerSteps(deps, { now: () => clock.now(), budgetMs: drainerWaitBudget('monitorPass', config, 60_000) }));
 */
export async function drainerSteps(deps: DrainerDeps, options: DrainerStepsOptions): Promise<Step> {
  const deadline = options.now() + options.budgetMs;
  const step = async (): Promise<Step> => {
    const result = await runDrainer(deps, options.now());
    options.onRun?.(result);
    const wait = nextWait(result, deadline);
    return wait === undefined ? done : { kind: 'wait', ms: wait, next: step };
  };
  return step();
}

/** How long to wait before the next run, or undefined when the next due item is past the deadline. */
export function nextWait(result: DrainerResult, deadline: EpochMillis): Millis | undefined {
  const wait = result.nextDueInMs;
  if (wait === undefined || result.now + wait > deadline) return undefined;
  return wait;
}
