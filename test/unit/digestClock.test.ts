// judgeDigest (shared/digestClock.ts): terms checked against the Lease, instants moved onto the
// functions' clock, a tolerance, and nothing refused that could fence later digests.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DigestClockTolerance,
  judgeDigest,
  onFunctionsClock,
  type DigestClockState,
  type DigestVerdict,
} from '../../shared/digestClock.js';

const S = 1_000;
const P = 5 * S;
const t0 = Date.parse('2026-03-02T09:00:00Z');
const term = { relayId: 'relay-a', leaderSince: t0 - 3_600_000 };
/** The accepted state after a digest of `term` at t0, relay clock `skew` ahead, committed at once. */
const accepted = (skew = 0, extra: Partial<DigestClockState> = {}): DigestClockState => ({
  ...term,
  sequence: 10,
  observedAt: t0,
  offset: skew,
  ...extra,
});
const digest = (sequence: number, observedAt: number, t = term) => ({ ...t, sequence, observedAt });

describe('judgeDigest', () => {
  it.each<{
    name: string;
    state: DigestClockState;
    d: ReturnType<typeof digest>;
    at: number;
    want: Partial<DigestVerdict>;
  }>([
    {
      name: 'the next digest of the term, on time',
      state: accepted(),
      d: digest(11, t0 + P),
      at: t0 + P,
      want: { kind: 'accept', now: t0 + P, offset: 0, newTerm: false },
    },
    {
      name: 'delivered 2 s late: its instants stay where the relay saw them',
      state: accepted(),
      d: digest(11, t0 + P),
      at: t0 + P + 2 * S,
      want: { kind: 'accept', now: t0 + P },
    },
    {
      name: 'a relay 2 minutes ahead: moved onto our clock by the term offset',
      state: accepted(120 * S),
      d: digest(11, t0 + P + 120 * S),
      at: t0 + P,
      want: { kind: 'accept', now: t0 + P, offset: 120 * S },
    },
    {
      name: 'faster than any before: the offset moves up, now never after ours',
      state: accepted(-3 * S),
      d: digest(11, t0 + P),
      at: t0 + P,
      want: { kind: 'accept', now: t0 + P, offset: 0 },
    },
    { name: 'a duplicate', state: accepted(), d: digest(10, t0), at: t0 + P, want: { kind: 'stale' } },
    {
      name: 'an older one, late',
      state: accepted(),
      d: digest(9, t0 - P),
      at: t0 + P,
      want: { kind: 'stale' },
    },
    {
      name: 'dated year 9999',
      state: accepted(),
      d: digest(11, Date.parse('9999-01-01T00:00:00Z')),
      at: t0 + P,
      want: { kind: 'refuse', reason: 'aheadOfClock' },
    },
    {
      name: 'a sequence far ahead is no reason to accept or refuse: time orders a term',
      state: accepted(),
      d: digest(1_000_000_000, t0 + P),
      at: t0 + P,
      want: { kind: 'accept', now: t0 + P },
    },
    {
      name: 'a lower sequence at a later time (a relay restarted in the same term cannot, but time decides)',
      state: accepted(),
      d: digest(3, t0 + P),
      at: t0 + P,
      want: { kind: 'accept', now: t0 + P },
    },
    {
      name: 'another term: read the Lease first',
      state: accepted(),
      d: digest(0, t0 + P, { relayId: 'relay-b', leaderSince: t0 }),
      at: t0 + P,
      want: { kind: 'verifyTerm' },
    },
    {
      name: 'a row from before offsets were kept: this digest sets the offset',
      state: { ...term, observedAt: t0 + 3_600_000 },
      d: digest(11, t0 + 60 * S),
      at: t0 + P,
      want: { kind: 'accept', now: t0 + P, offset: 55 * S, newTerm: false },
    },
  ])('$name', ({ state, d, at, want }) => {
    expect(judgeDigest(state, d, at)).toMatchObject(want);
  });

  it.each([
    { check: 'current' as const, want: { kind: 'accept', newTerm: true, verified: true, now: t0 + P } },
    { check: 'noLease' as const, want: { kind: 'accept', newTerm: true, verified: false, now: t0 + P } },
    { check: 'notCurrent' as const, want: { kind: 'refuse', reason: 'notTheLeader' } },
    { check: 'unreadable' as const, want: { kind: 'refuse', reason: 'leaseUnreadable' } },
  ])('a new term the Lease says is $check', ({ check, want }) => {
    // Its relay's clock is 90 s behind: the term's offset comes from this digest.
    const d = digest(0, t0 + P - 90 * S, { relayId: 'relay-b', leaderSince: t0 - 90 * S });
    const verdict = judgeDigest(accepted(), d, t0 + P, check);
    expect(verdict).toMatchObject(want);
    if (verdict.kind === 'accept') expect(verdict.offset).toBe(-90 * S);
  });

  it('a jump ahead is refused once, and re-bases the offset when the next digest confirms it', () => {
    const jumped = judgeDigest(accepted(), digest(11, t0 + P + 600 * S), t0 + P);
    expect(jumped).toMatchObject({ kind: 'refuse', reason: 'aheadOfClock', candidate: 600 * S });
    const state = { ...accepted(), candidate: 600 * S };
    expect(judgeDigest(state, digest(12, t0 + 2 * P + 600 * S), t0 + 2 * P)).toMatchObject({
      kind: 'accept',
      now: t0 + 2 * P,
      offset: 600 * S,
      rebased: 'ahead',
    });
    // An unconfirmed candidate (the next digest is back on the term's clock) is forgotten.
    const back = judgeDigest(state, digest(12, t0 + 2 * P), t0 + 2 * P);
    expect(back).toEqual({ kind: 'accept', now: t0 + 2 * P, offset: 0, newTerm: false });
  });

  it('a jump back is taken as a late delivery, and re-bases the offset when the next confirms it', () => {
    const first = judgeDigest(accepted(), digest(11, t0 + P - 600 * S), t0 + P);
    // Its instant lies before the last accepted one: not a pass, but a candidate.
    expect(first).toMatchObject({ kind: 'refuse', reason: 'behindClock', candidate: -600 * S });
    const state = { ...accepted(), candidate: -600 * S };
    expect(judgeDigest(state, digest(12, t0 + 2 * P - 600 * S), t0 + 2 * P)).toMatchObject({
      kind: 'accept',
      now: t0 + 2 * P,
      offset: -600 * S,
      rebased: 'behind',
    });
  });

  it("a retry of an older digest a minute late is only stale: not a sign of the relay's clock", () => {
    // Lambda retries a failed delivery a minute later: the relay built it before the accepted one.
    const retried = judgeDigest(accepted(), digest(9, t0 - P), t0 + 60 * S);
    expect(retried).toEqual({ kind: 'stale' });
    // Two of them in a row re-base nothing: the next on-time digest is accepted as usual.
    expect(judgeDigest(accepted(), digest(11, t0 + 65 * S), t0 + 65 * S)).toMatchObject({
      kind: 'accept',
      offset: 0,
    });
  });

  it('onFunctionsClock never puts an instant after now', () => {
    expect(onFunctionsClock(t0 + 10 * S, 0, t0)).toBe(t0);
    expect(onFunctionsClock(t0 + 10 * S, 15 * S, t0)).toBe(t0 - 5 * S);
  });

  it('no single forged digest, accepted or refused, makes the real relay lose more than one digest', () => {
    // The real relay: a digest every 5 s of our clock, clock `skew` off, delivered within 3 s. One
    // forged digest of the same term lands among them, with any sequence and any observedAt.
    fc.assert(
      fc.property(
        fc.integer({ min: -600, max: 600 }),
        fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 30, maxLength: 30 }),
        fc.integer({ min: 1, max: 25 }),
        fc.integer({ min: -5, max: 1_000_000 }),
        fc.integer({ min: -3_600_000, max: 10 ** 12 }),
        (skewSeconds, delays, forgedAfter, forgedSeqDelta, forgedShift) => {
          const skew = skewSeconds * S;
          let state: DigestClockState = accepted(skew);
          const apply = (verdict: DigestVerdict, sequence: number): void => {
            if (verdict.kind === 'accept') {
              const { candidate: _dropped, ...kept } = state;
              state = {
                ...kept,
                sequence,
                observedAt: verdict.now,
                offset: verdict.offset,
                ...(verdict.candidate !== undefined && { candidate: verdict.candidate }),
              };
            } else if (verdict.kind === 'refuse' && verdict.candidate !== undefined) {
              state = { ...state, candidate: verdict.candidate };
            }
          };
          let lost = 0;
          for (let i = 1; i <= 30; i++) {
            const builtAt = t0 + i * P;
            const at = builtAt + (delays[i - 1] ?? 0);
            if (i === forgedAfter) {
              const sequence = 10 + i + forgedSeqDelta;
              apply(judgeDigest(state, digest(sequence, builtAt + skew + forgedShift), at), sequence);
            }
            const verdict = judgeDigest(state, digest(10 + i, builtAt + skew), at);
            if (verdict.kind !== 'accept') lost++;
            else expect(verdict.now).toBeLessThanOrEqual(at);
            apply(verdict, 10 + i);
          }
          expect(lost).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('the tolerance is stated: 30 s', () => {
    expect(DigestClockTolerance).toBe(30 * S);
  });
});
