// The Clock port: the one way code outside the pure domain reads the time. The local stack passes the
// system clock; `nlc simulate` and tests pass a virtual one, so everything that stamps times (the API
// simulator's creationTimestamp, the relay's observedAt) runs on the scenario's time.
import type { EpochMillis } from '../domain/types.js';

/**
 * A source of the current time.
 *
 * @example
 * const fixed: Clock = { now: () => Date.parse('2025-01-01T00:00:00Z') };
 */
export interface Clock {
  now(): EpochMillis;
}
