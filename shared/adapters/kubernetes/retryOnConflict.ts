// Port of client-go's retry.RetryOnConflict (k8s.io/client-go/util/retry/util.go OnError) over
// wait.ExponentialBackoff and wait.Backoff.Step (k8s.io/apimachinery/pkg/util/wait), with the backoff the
// node controller's taint writes use: UpdateTaintBackoff of pkg/controller/controller_utils.go (not
// retry.DefaultRetry, which has 10ms steps and is what other controllers use).
// What differs: the sleep and the jitter source are injected, so tests do not wait.
import type { Millis } from '../../domain/types.js';

/** wait.Backoff. */
export interface Backoff {
  /** Attempts in all. */
  readonly steps: number;
  /** The first wait. */
  readonly duration: Millis;
  /** Multiplies the wait after each step; 0 or 1 keeps it constant. */
  readonly factor: number;
  /** Each wait is duration + random·jitter·duration (wait.Jitter). */
  readonly jitter: number;
}

/**
 * upstream UpdateTaintBackoff: 5 attempts, waits of 100–200 ms between them (Factor is unset upstream,
 * which like 1.0 keeps the duration constant).
 */
export const UpdateTaintBackoff: Backoff = Object.freeze({
  steps: 5,
  duration: 100,
  factor: 1.0,
  jitter: 1.0,
});

/**
 * The waits wait.ExponentialBackoff makes between `steps` attempts (steps - 1 of them), per
 * Backoff.Step: the current duration jittered, then the duration times factor for the next one.
 */
export function backoffWaits(backoff: Backoff, random: () => number): Millis[] {
  const waits: Millis[] = [];
  let duration = backoff.duration;
  for (let step = 1; step < backoff.steps; step++) {
    waits.push(backoff.jitter > 0 ? duration + random() * backoff.jitter * duration : duration);
    if (backoff.factor !== 0) duration *= backoff.factor;
  }
  return waits;
}

export interface RetryOnConflictDeps {
  readonly sleep: (ms: Millis, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
  readonly signal?: AbortSignal;
}

/**
 * retry.RetryOnConflict: runs `attempt` until its result is not a conflict, at most `backoff.steps`
 * times, sleeping between tries; returns the last result (a conflict when every attempt conflicted).
 * Results are values here (the adapter never throws for API errors), so `isConflict` inspects them.
 */
export async function retryOnConflict<R>(
  backoff: Backoff,
  attempt: () => Promise<R>,
  isConflict: (result: R) => boolean,
  deps: RetryOnConflictDeps,
): Promise<R> {
  const waits = backoffWaits(backoff, deps.random);
  for (let i = 0; ; i++) {
    const result = await attempt();
    const wait = waits[i];
    if (!isConflict(result) || wait === undefined) return result;
    await deps.sleep(wait, deps.signal);
  }
}
