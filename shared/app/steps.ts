// Where a function's run stands between its steps. A run that must wait (the drainer, for its next due
// item) returns the wait instead of sleeping: a Lambda sleeps through it (runSteps), `nlc simulate`
// schedules the next step in virtual time. Both run the same steps.
import { setTimeout as sleepTimer } from 'node:timers/promises';
import type { Millis } from '../domain/types.js';

/** Where a run stands: done, or a wait before its next step. */
export type Step =
  | { readonly kind: 'done' }
  | { readonly kind: 'wait'; readonly ms: Millis; readonly next: () => Promise<Step> };

export const done: Step = { kind: 'done' };

export type Sleep = (ms: Millis, signal?: AbortSignal) => Promise<void>;

const realSleep: Sleep = (ms, signal) => sleepTimer(ms, undefined, signal === undefined ? {} : { signal });

/**
 * Runs a run's steps to the end, sleeping through its waits (a Lambda's way).
 *
 * @example
 * await runSteps(await Dispatch.evictionDrainer(ctx, { kind: 'schedule' }));
 */
export async function runSteps(first: Step, sleep: Sleep = realSleep, signal?: AbortSignal): Promise<void> {
  let step = first;
  while (step.kind === 'wait') {
    await sleep(step.ms, signal);
    step = await step.next();
  }
}
