// shared/domain/tokenBucket.ts: port of client-go's flowcontrol rate limiters
// (staging/src/k8s.io/client-go/util/flowcontrol/throttle.go: NewTokenBucketRateLimiter,
// NewFakeNeverRateLimiter), which wrap golang.org/x/time/rate's Limiter (rate/rate.go:
// NewLimiter, AllowN → reserveN → advance).
//
// What differs: the limiter is plain serializable data (it is stored between passes, in DynamoDB
// later) and every operation is a pure function of the limiter and `now`; upstream reads the clock
// inside TryAccept. TryAccept and QPS serve the eviction limiters; `reserve` is the client's Wait
// (client-go's request throttle, rest.Config QPS/Burst), which the Kubernetes adapter paces its
// requests with.
//
// Where we mirror x/time/rate exactly:
// - `tokens` is a float (x/time keeps `tokens float64`), not an integer count.
// - Refill is elapsed seconds × qps (x/time's tokensFromDuration), with our epoch milliseconds
//   converted to seconds (`/ 1000`); a limit <= 0 refills nothing, as in x/time.
// - The bucket is capped at `burst`; a request needs `n <= burst`.
// - A request is accepted when the deficit it leaves would be refilled in under one nanosecond:
//   x/time truncates durationFromTokens to whole nanoseconds and accepts a zero wait, so `tokens`
//   may end a hair below 0.
// - A rejected request leaves the state untouched (x/time updates state only when ok).
// Where we mirror one x/time version among several, see tryAccept (clock going backwards).
import type { EpochMillis } from './types.js';

/**
 * A rate limiter as data. `tokenBucket` is client-go's tokenBucketRateLimiter over x/time's
 * Limiter (`qps` is its configured QPS, `tokens`/`last` the Limiter's lazily advanced state);
 * `never` is client-go's fakeNeverRateLimiter, which SwapLimiter installs for a QPS of 0.
 */
export type RateLimiter =
  | {
      readonly kind: 'tokenBucket';
      readonly qps: number;
      readonly burst: number;
      readonly tokens: number;
      readonly last: EpochMillis;
    }
  | { readonly kind: 'never' };

const MILLIS_PER_SECOND = 1000;
const NANOS_PER_SECOND = 1e9;

/**
 * Upstream flowcontrol.NewTokenBucketRateLimiter(qps, burst): "The bucket is initially filled with
 * 'burst' tokens, and refills at a rate of 'qps'." x/time fills the bucket lazily on first use (its
 * `last` starts at the zero time); we fill it at `now`, which is the same for every later call.
 * A qps of 0 allows `burst` events and then none (x/time with limit 0).
 */
export function newTokenBucketRateLimiter(qps: number, burst: number, now: EpochMillis): RateLimiter {
  return { kind: 'tokenBucket', qps, burst, tokens: burst, last: now };
}

/**
 * Upstream flowcontrol.NewFakeNeverRateLimiter(): TryAccept is always false.
 * Upstream quirk: its QPS() reports 1, not 0 (see limiterQPS and swapLimiter).
 */
export const fakeNeverRateLimiter: RateLimiter = Object.freeze({ kind: 'never' });

/**
 * Upstream RateLimiter.TryAccept() = x/time `limiter.AllowN(now, 1)`: takes one token if one is
 * available at `now`. The returned limiter is the input object itself when the request is rejected
 * (nothing changes), and a new object when a token was taken.
 */
export function tryAccept(
  limiter: RateLimiter,
  now: EpochMillis,
): { accepted: boolean; limiter: RateLimiter } {
  if (limiter.kind === 'never') return { accepted: false, limiter };

  // x/time advance(): if the clock went backwards, no time has elapsed.
  // Deviation: when `now` is before `last` we keep `last` (x/time at golang/time 0bae942c: "return
  // last, last, tokens"); later x/time versions move `last` back to `now` on success, which grants
  // the same interval twice once the clock catches up. Upstream can't observe the difference (Go's
  // monotonic clock never goes backwards in-process); our `now`s come from several Lambdas, so we
  // keep the version that never grants extra tokens (see docs/upstream-deviations.md).
  const at = Math.max(now, limiter.last);
  const available = tokensAt(limiter, at);

  const remaining = available - 1;
  const accepted = 1 <= limiter.burst && waitIsZero(remaining, limiter.qps);
  if (!accepted) return { accepted: false, limiter };
  return { accepted: true, limiter: { ...limiter, tokens: remaining, last: at } };
}

/**
 * Upstream tokenBucketRateLimiter.Wait = x/time `limiter.Wait` → reserveN(now, 1, wait budget): takes a
 * token now, going into debt when there is none, and says how long the caller must wait before acting
 * (0 with a token in hand). Callers one after another each wait one more 1/qps. A qps of 0 (or the never
 * limiter) is an infinite wait once the burst is spent, which callers treat as "not within budget".
 *
 * @example
 * reserve(newTokenBucketRateLimiter(20, 1, 0), 0).waitMs; // 0
 * reserve(reserve(newTokenBucketRateLimiter(20, 1, 0), 0).limiter, 0).waitMs; // 50
 */
export function reserve(limiter: RateLimiter, now: EpochMillis): { limiter: RateLimiter; waitMs: number } {
  if (limiter.kind === 'never' || limiter.burst < 1) return { limiter, waitMs: Infinity };
  const at = Math.max(now, limiter.last);
  const remaining = tokensAt(limiter, at) - 1;
  if (remaining >= 0) return { limiter: { ...limiter, tokens: remaining, last: at }, waitMs: 0 };
  if (limiter.qps <= 0) return { limiter, waitMs: Infinity };
  return {
    limiter: { ...limiter, tokens: remaining, last: at },
    waitMs: (-remaining / limiter.qps) * MILLIS_PER_SECOND,
  };
}

/**
 * The tokens a token bucket holds at `now`: x/time's advance() (stored tokens plus elapsed seconds ×
 * qps, capped at burst), without taking any. A `now` before `last` refills nothing. What `nlc status`
 * and the live view show, so a bucket drained minutes ago reads as full again.
 *
 * @example tokensAt({ kind: 'tokenBucket', qps: 0.1, burst: 1, tokens: 0, last: 0 }, 5_000) // 0.5
 */
export function tokensAt(limiter: Extract<RateLimiter, { kind: 'tokenBucket' }>, now: EpochMillis): number {
  const elapsedSeconds = (now - limiter.last) / MILLIS_PER_SECOND;
  // elapsedSeconds > 0 also keeps 0 × Infinity (NaN) out of the state.
  const refill = limiter.qps > 0 && elapsedSeconds > 0 ? elapsedSeconds * limiter.qps : 0;
  return Math.min(limiter.burst, limiter.tokens + refill);
}

/**
 * x/time reserveN with maxFutureReserve 0: the wait for a deficit is durationFromTokens(-remaining),
 * truncated to whole nanoseconds, and only a zero wait is accepted. With a limit <= 0 any deficit
 * waits forever (InfDuration).
 */
function waitIsZero(remaining: number, qps: number): boolean {
  if (remaining >= 0) return true;
  if (qps <= 0) return false;
  return Math.trunc((-remaining / qps) * NANOS_PER_SECOND) <= 0;
}

/** Upstream RateLimiter.QPS(): the configured QPS; Upstream quirk: 1 for the never-limiter. */
export function limiterQPS(limiter: RateLimiter): number {
  return limiter.kind === 'never' ? 1 : limiter.qps;
}
