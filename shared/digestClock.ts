// Time and order of Heartbeat Digests, not taken on the relay's word (docs/architecture.md#digest-time).
//
// Pure: what the monitor does with a digest, given what it accepted before and the functions' clock at
// receipt. Three rules:
// - Terms: the digests of one relay term (relayId, leaderSince) are accepted at a time; a digest of any
//   other term is checked against the leader Lease first (the caller reads it): only the term the API
//   server says holds the Lease now is accepted, which then replaces the previous one. So no relay clock
//   orders terms, and a deposed leader's late digests, or forged ones, are refused.
// - Clock: every instant a digest carries is moved onto the functions' clock by its term's offset
//   (relay clock minus functions' clock, taken from the term's first digest and moved up, never down,
//   when a digest arrives faster). `now` for the pass is the digest's observedAt on that clock, never
//   after the functions' own now; its probes never after `now`. A digest implying an instant more than
//   DigestClockTolerance after the functions' clock is refused, unless the next digest of the term
//   confirms the jump (a relay whose clock stepped): then the offset is re-based. One far behind is
//   taken (a late delivery), and re-bases the offset when the next confirms it (a clock stepped back).
// - Order within a term is by that time: a digest whose observedAt, on the functions' clock, is not
//   after the accepted one's is stale (duplicates, retries, reordering). Not by `sequence`, which a
//   forger could set far ahead: a forged digest moves the accepted time at most to when it was received.
// Nothing refused is stored as accepted, so no refused digest can fence later ones; recovery never
// waits for a new relay term.
import type { EpochMillis, Millis } from './domain/types.js';
import type { HeartbeatDigest } from './events.js';

/**
 * How far a digest's instants may lie beyond the functions' clock, once its term's offset is applied,
 * before it is refused (unless the next digest confirms the jump). It covers delivery delays: a term's
 * offset is taken from its first digest, which may itself have been late.
 */
export const DigestClockTolerance: Millis = 30_000;

/** What the monitor accepted last (the cluster row). */
export interface DigestClockState {
  /** The accepted term. */
  readonly relayId?: string;
  readonly leaderSince?: EpochMillis;
  /**
   * The accepted digest's sequence: not an order (time orders a term), only what tells a digest the
   * relay built later but that arrives far behind in time (a clock stepped back) from a retry.
   */
  readonly sequence?: number;
  /** The accepted digest's observedAt on the functions' clock. */
  readonly observedAt?: EpochMillis;
  /** The term's offset: relay clock minus functions' clock. Absent on rows from before it was kept. */
  readonly offset?: number;
  /** A jump of the offset seen once, not yet confirmed by the next digest. */
  readonly candidate?: number;
}

export type DigestVerdict =
  /** Not after the accepted digest: a duplicate, a retry, a reordered delivery. A no-op. */
  | { readonly kind: 'stale' }
  /** Another term than the accepted one: read the leader Lease, then judge again with the answer. */
  | { readonly kind: 'verifyTerm' }
  | {
      readonly kind: 'refuse';
      readonly reason:
        'aheadOfClock' | 'behindClock' | 'implausibleSequence' | 'notTheLeader' | 'leaseUnreadable';
      readonly detail: string;
      /** The offset jump to confirm with the next digest (aheadOfClock, behindClock). */
      readonly candidate?: number;
    }
  | {
      readonly kind: 'accept';
      /** The pass's `now`: the digest's observedAt on the functions' clock. */
      readonly now: EpochMillis;
      /** The offset to keep for the term. */
      readonly offset: number;
      /** An offset jump still to confirm, kept with the accepted digest. */
      readonly candidate?: number;
      readonly newTerm: boolean;
      /** A new term the leader Lease vouched for (false: no Lease exists to check it against). */
      readonly verified?: boolean;
      /** The offset was re-based on a confirmed jump of the relay's clock. */
      readonly rebased?: 'ahead' | 'behind';
    };

/** What the leader Lease says about a digest's term (the caller's read). */
export type TermCheck = 'current' | 'noLease' | 'notCurrent' | 'unreadable';

export interface DigestClockSettings {
  readonly tolerance?: Millis;
}

const iso = (ms: EpochMillis): string => new Date(ms).toISOString();

/**
 * Judges a digest received at `receivedAt` (the functions' clock). Without `termCheck`, a digest of
 * another term than the accepted one gets `verifyTerm`; judge it again with the Lease's answer.
 *
 * @example
 * let verdict = judgeDigest(state, digest, clock.now());
 * if (verdict.kind === 'verifyTerm') verdict = judgeDigest(state, digest, clock.now(), await checkTerm(digest));
 */
export function judgeDigest(
  state: DigestClockState,
  digest: Pick<HeartbeatDigest, 'relayId' | 'leaderSince' | 'observedAt' | 'sequence'>,
  receivedAt: EpochMillis,
  termCheck?: TermCheck,
  settings: DigestClockSettings = {},
): DigestVerdict {
  const tolerance = settings.tolerance ?? DigestClockTolerance;
  const x = digest.observedAt - receivedAt;
  const sameTerm = state.relayId === digest.relayId && state.leaderSince === digest.leaderSince;
  if (!sameTerm) {
    if (termCheck === undefined) return { kind: 'verifyTerm' };
    if (termCheck === 'notCurrent') {
      return {
        kind: 'refuse',
        reason: 'notTheLeader',
        detail: `relay ${digest.relayId} (leader since ${iso(digest.leaderSince)}) does not hold the leader Lease`,
      };
    }
    if (termCheck === 'unreadable') {
      return { kind: 'refuse', reason: 'leaseUnreadable', detail: 'the leader Lease could not be read' };
    }
    // A new term: its offset is taken from this digest, which is therefore `now` on our clock.
    return { kind: 'accept', now: receivedAt, offset: x, newTerm: true, verified: termCheck === 'current' };
  }

  // A row from before offsets were kept: this digest's offset, and no order against its relay-clock
  // observedAt.
  if (state.offset === undefined) return { kind: 'accept', now: receivedAt, offset: x, newTerm: false };

  const confirmed = state.candidate !== undefined && Math.abs(x - state.candidate) <= tolerance;
  const e = x - state.offset;
  let offset = state.offset;
  let candidate: number | undefined;
  let rebased: 'ahead' | 'behind' | undefined;
  if (e > tolerance) {
    if (!confirmed) {
      return {
        kind: 'refuse',
        reason: 'aheadOfClock',
        detail: `observedAt ${iso(digest.observedAt)} is ${Math.round(e / 1000)}s ahead of the functions' clock for this relay term`,
        candidate: x,
      };
    }
    offset = x;
    rebased = 'ahead';
  } else if (e < -tolerance) {
    // Far behind. A digest the relay built before the accepted one (a lower sequence: a retry, a
    // duplicate, a reordered delivery) is only late. One it built after, yet far behind in time, is a
    // clock stepped back, or a long delivery backlog: the next digest tells.
    const newer = state.sequence === undefined || digest.sequence > state.sequence;
    if (!newer) return { kind: 'stale' };
    if (confirmed) {
      offset = x;
      rebased = 'behind';
    } else {
      candidate = x;
    }
  } else {
    offset = Math.max(offset, x); // a faster delivery than any before: a truer offset
  }
  const now = Math.min(digest.observedAt - offset, receivedAt);
  if (rebased === undefined && state.observedAt !== undefined && now <= state.observedAt) {
    return candidate === undefined
      ? { kind: 'stale' }
      : {
          kind: 'refuse',
          reason: 'behindClock',
          detail: `observedAt ${iso(digest.observedAt)} is ${Math.round(-e / 1000)}s behind the functions' clock for this relay term`,
          candidate,
        };
  }
  return {
    kind: 'accept',
    now,
    offset,
    ...(candidate !== undefined && { candidate }),
    newTerm: false,
    ...(rebased !== undefined && { rebased }),
  };
}

/** A relay-clock instant of an accepted digest on the functions' clock, never after `now`. */
export function onFunctionsClock(relayInstant: EpochMillis, offset: number, now: EpochMillis): EpochMillis {
  return Math.min(relayInstant - offset, now);
}
