// When the monitor's next pass is due, as a digest's quiet period says, and how long a drainer the
// monitor started waits for it (relay.md, "Quiet digests").
import { describe, expect, it } from 'vitest';
import { DrainerInvocation } from '../../../shared/app/drainer.js';
import { clampNextPassWithin, drainerWaitBudget } from '../../../shared/app/drainerScheduling.js';

const S = 1_000;
const config = { nodeMonitorPeriod: 5 * S, nodeMonitorGracePeriod: 50 * S };

describe('clampNextPassWithin', () => {
  it.each<[string, number | undefined, number]>([
    ['no quiet period: the monitor period', undefined, 5 * S],
    ['the relay quiet period, 15 s', 15 * S, 15 * S],
    ['never sooner than the monitor period', 1 * S, 5 * S],
    ['never later than a third of the grace period, whatever the digest claims', 3_600 * S, 16_666],
  ])('%s', (_name, claimed, want) => {
    expect(clampNextPassWithin(claimed, config)).toBe(want);
  });
});

describe('drainerWaitBudget', () => {
  it('a run the monitor started waits until its next pass, as the digest said', () => {
    expect(drainerWaitBudget('monitorPass', config, 60 * S)).toBe(5 * S);
    expect(drainerWaitBudget('monitorPass', config, 60 * S, 15 * S)).toBe(15 * S);
    expect(drainerWaitBudget('monitorPass', config, 60 * S, 600 * S)).toBe(16_666);
  });

  it('never past the invocation time kept for its last pass; the schedule waits all it may', () => {
    expect(drainerWaitBudget('monitorPass', config, 20 * S, 15 * S)).toBe(10 * S);
    expect(drainerWaitBudget('schedule', config, 60 * S, 15 * S)).toBe(50 * S);
  });
});

describe('DrainerInvocation', () => {
  it('carries nextPassWithinMs when the monitor has a quiet period, and refuses a bad one', () => {
    const base = { source: 'nlc.monitor', cluster: 'prod', reason: 'monitorPass' } as const;
    expect(DrainerInvocation.parse({ ...base, nextPassWithinMs: 15 * S })).toEqual({
      ...base,
      nextPassWithinMs: 15 * S,
    });
    expect(DrainerInvocation.parse(base)).toEqual(base);
    const bad = DrainerInvocation.safeParse({ ...base, nextPassWithinMs: 1.5 });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['nextPassWithinMs']);
  });
});
