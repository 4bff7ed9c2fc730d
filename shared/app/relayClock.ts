// One clock per comparison. The monitor decides on the relay's clock (a digest's observedAt) and stamps
// the zone queues with it: queue items' processAt, token-bucket refills. The drainer and the schedule
// run on their own (Lambda) clock, which may differ from the relay's by minutes. So they never compare
// their clock with a relay-clock instant: they carry the relay's clock forward from the last committed
// digest, by the time elapsed on their own clock since that commit (the cluster row's committedAt, on
// the clock of the function that committed it: the same kind of host as theirs).
//
// The estimate lags the relay by the delivery delay of that digest (typically well under a second), so
// a due item is taken that much late, never early. A skew between relay and functions cancels out.
import type { EpochMillis } from '../domain/types.js';
import type { ClusterMeta } from '../ports/stores.js';

/**
 * The relay's clock at `now` (the caller's clock), from the last committed digest: its observedAt plus
 * the time elapsed on the caller's clock since it was committed (never negative). `now` itself when no
 * digest was ever committed (then nothing is queued on the relay's clock either).
 *
 * @example relayClockNow({ lastObservedAt: 1_000_000, committedAt: 5_000, masterDisruption: false }, 7_500) // 1_002_500
 */
export function relayClockNow(
  meta: Pick<ClusterMeta, 'lastObservedAt' | 'committedAt'>,
  now: EpochMillis,
): EpochMillis {
  if (meta.lastObservedAt === undefined || meta.committedAt === undefined) return now;
  return meta.lastObservedAt + Math.max(0, now - meta.committedAt);
}
