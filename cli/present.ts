// How the CLI shows domain values: zones, limiters, taints. Shared by status and queue, so both print
// the same thing the same way. Nothing here decides anything: it only names what the tables hold.
import type { RateLimitedTimedQueue } from '../shared/domain/rateLimitedTimedQueue.js';
import type { RateLimiter } from '../shared/domain/tokenBucket.js';
import type { EpochMillis, Taint } from '../shared/domain/types.js';
import { formatZoneKey } from '../shared/domain/zones.js';
import { decimal, isoTime } from './output.js';

/** A zone as printed: `region:zone`, `""` for a node without zone labels (SCENARIOS.md's form). */
export function zoneName(zoneKey: string): string {
  return formatZoneKey(zoneKey);
}

/** A zone in a table cell: `-` stands for "no zone labels". */
export function zoneCell(zone: string): string {
  return zone === '' ? '-' : zone;
}

/**
 * A zone's token bucket as stored. `never` is upstream's fakeNeverRateLimiter (QPS 0: no NoExecute
 * taint in this zone); its qps is shown as 0, not the 1 upstream's QPS() reports (tokenBucket.ts).
 */
export type LimiterView =
  | {
      readonly kind: 'tokenBucket';
      readonly qps: number;
      readonly burst: number;
      /** Tokens when last computed (`last`); the bucket refills at qps from then on. */
      readonly tokens: number;
      readonly last: string | null;
    }
  | { readonly kind: 'never'; readonly qps: 0 };

export function limiterView(limiter: RateLimiter): LimiterView {
  return limiter.kind === 'never'
    ? { kind: 'never', qps: 0 }
    : {
        kind: 'tokenBucket',
        qps: limiter.qps,
        burst: limiter.burst,
        tokens: Number(limiter.tokens.toFixed(6)),
        last: isoTime(limiter.last),
      };
}

/** The limiter's QPS in a table cell: `0.1`, or `never`. */
export function qpsCell(limiter: LimiterView | null): string {
  if (limiter === null) return '-';
  return limiter.kind === 'never' ? 'never' : decimal(limiter.qps);
}

const WELL_KNOWN_PREFIX = 'node.kubernetes.io/';

/**
 * A taint the way people write them, the well-known prefix dropped:
 * `node.kubernetes.io/unreachable:NoExecute` → `unreachable:NoExecute`.
 */
export function abbreviateTaint(taint: Pick<Taint, 'key' | 'value' | 'effect'>): string {
  const key = taint.key.startsWith(WELL_KNOWN_PREFIX) ? taint.key.slice(WELL_KNOWN_PREFIX.length) : taint.key;
  return `${key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
}

/** Where a node stands in its zone's queue. */
export interface QueuePlace {
  readonly zone: string;
  /** 1-based position in processing order; null when only in the processed-once set. */
  readonly position: number | null;
  readonly processAt: EpochMillis | null;
}

/**
 * Every node in a zone queue or its processed-once set (upstream UniqueQueue.set), by name. The queue
 * is kept in processing order (rateLimitedTimedQueue.ts), so the index is the position.
 */
export function queuePlaces(queues: ReadonlyMap<string, RateLimitedTimedQueue>): Map<string, QueuePlace> {
  const places = new Map<string, QueuePlace>();
  for (const [zone, queue] of queues) {
    for (const name of queue.set) places.set(name, { zone, position: null, processAt: null });
    queue.queue.forEach((entry, index) => {
      places.set(entry.value, { zone, position: index + 1, processAt: entry.processAt });
    });
  }
  return places;
}
