// How the CLI shows domain values: zones, limiters, taints, probe ages, decision results. Shared by
// status, queue, explain and the live view, so all of them print the same thing the same way. Nothing
// here decides anything: it only names what the tables hold, at the instant asked.
import type { RateLimitedTimedQueue } from '../domain/rateLimitedTimedQueue.js';
import { tokensAt, type RateLimiter } from '../domain/tokenBucket.js';
import type { EpochMillis, Taint } from '../domain/types.js';
import { formatZoneKey } from '../domain/zones.js';
import { decimal, isoTime, span } from './output.js';

/** A zone as printed: `region:zone`, `""` for a node without zone labels (the scenario format's form). */
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
      /** Tokens as stored, when last computed (`last`); the bucket refills at qps from then on. */
      readonly tokens: number;
      readonly last: string | null;
      /** Tokens at `at` (stored tokens plus the refill since `last`, capped at burst): what is shown. */
      readonly tokensNow: number;
      /** The instant tokensNow is for, on the functions' clock (the clock the zone queues run on). */
      readonly at: string | null;
    }
  | { readonly kind: 'never'; readonly qps: 0 };

/**
 * A zone's limiter as stored, with its tokens at `now`. `now` must be on the functions' clock, as the
 * stored `last` is (docs/architecture.md#digest-time).
 *
 * @example limiterView(queue.limiter, Date.now()).tokensNow // 1 for a bucket drained long ago
 */
export function limiterView(limiter: RateLimiter, now: EpochMillis): LimiterView {
  return limiter.kind === 'never'
    ? { kind: 'never', qps: 0 }
    : {
        kind: 'tokenBucket',
        qps: limiter.qps,
        burst: limiter.burst,
        tokens: Number(limiter.tokens.toFixed(6)),
        last: isoTime(limiter.last),
        tokensNow: Number(tokensAt(limiter, Math.max(now, limiter.last)).toFixed(6)),
        at: isoTime(Math.max(now, limiter.last)),
      };
}

/** The tokens in a table cell: `0.50/1` (tokens at now, of burst), `-` for the never-limiter. */
export function tokensCell(limiter: LimiterView | null): string {
  return limiter?.kind === 'tokenBucket' ? `${limiter.tokensNow.toFixed(2)}/${limiter.burst}` : '-';
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

// ---------------------------------------------------------------------------------------------------
// Probe age

/**
 * How long a node has been silent as far as the controller knows, one definition for `nlc status` and
 * the live view. Both instants are the relay's moved onto the functions' clock by its term's offset: the
 * probe time the controller stored, and the last digest's observedAt (the pass that last judged the
 * node). So neither the reader's clock nor bus delays skew it.
 *
 * The controller stores a probe only when it decides something (docs/state.md, "Write on change"):
 * for a node it holds silent (Ready=Unknown, which it wrote) the stored probe is the last one it saw,
 * and the age is exact. A node it holds alive was heard from within the grace period at its last pass;
 * the newer probe was not stored, so the age is not known and is reported as `live` rather than as the
 * age of an old stored probe (which made healthy nodes look staler than dead ones).
 */
export type ProbeAge =
  | { readonly kind: 'silent'; readonly seconds: number }
  | { readonly kind: 'live' }
  | { readonly kind: 'unknown' };

/**
 * @example probeAge({ probeTime: t, ready: 'Unknown' }, t + 70_000) // { kind: 'silent', seconds: 70 }
 * @example probeAge({ probeTime: t, ready: 'True' }, t + 70_000) // { kind: 'live' }
 */
export function probeAge(
  node: { readonly probeTime: EpochMillis | undefined; readonly ready: string | null },
  observedAt: EpochMillis | undefined,
): ProbeAge {
  if (node.probeTime === undefined || observedAt === undefined || node.ready === null)
    return { kind: 'unknown' };
  if (node.ready !== 'Unknown') return { kind: 'live' };
  return { kind: 'silent', seconds: Math.max(0, Math.round((observedAt - node.probeTime) / 1000)) };
}

/** A probe age as reports carry it: the kind, and the seconds of a silent node (null otherwise). */
export interface ProbeAgeFields {
  readonly probe: ProbeAge['kind'];
  readonly probeAgeSeconds: number | null;
}

export function probeAgeFields(age: ProbeAge): ProbeAgeFields {
  return { probe: age.kind, probeAgeSeconds: age.kind === 'silent' ? age.seconds : null };
}

/** A probe age in a table cell: `1m10s`, `live`, `-`. */
export function probeAgeCell(age: ProbeAgeFields): string {
  if (age.probe === 'live') return 'live';
  return age.probeAgeSeconds === null ? '-' : span(age.probeAgeSeconds * 1000);
}

// ---------------------------------------------------------------------------------------------------
// Decision results

/**
 * What a Decisions row's `result` says. `intended`: recorded before its write (the outcome row
 * follows); `ok` (also `ok (already so)`, `ok (pod already gone)`); `dryRun`: decided, not written;
 * `failed`: the write failed, `<Reason>: <message>` as shared/app/decisions.ts describeResult writes it;
 * `note`: any other result of a decision that is not a write (`fires at …`, `cancelled`); `none`.
 */
export type ResultKind = 'intended' | 'ok' | 'dryRun' | 'failed' | 'note' | 'none';

// describeResult's failure form: a FailureReason (shared/domain/effects.ts: NotFound, Conflict, Failed)
// then a colon; any reason added later has the same shape.
const FAILURE = /^[A-Z][A-Za-z]*: /;

export function resultKind(result: string | null | undefined): ResultKind {
  if (result === undefined || result === null) return 'none';
  if (result === 'intended') return 'intended';
  if (result === 'dryRun') return 'dryRun';
  if (result === 'ok' || result.startsWith('ok (')) return 'ok';
  return FAILURE.test(result) ? 'failed' : 'note';
}
