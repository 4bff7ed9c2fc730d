import { describe, expect, it } from 'vitest';
import { healthNeedsWrite, type HealthRow } from '../../../../shared/adapters/dynamodb/healthRows.js';

const T0 = Date.parse('2026-01-29T09:00:00Z');
const ready = {
  type: 'Ready',
  status: 'True',
  lastHeartbeatTime: T0 - 60_000,
  lastTransitionTime: T0 - 3_600_000,
} as const;
const saved: HealthRow = {
  registeredUid: 'uid-1',
  health: {
    probeTimestamp: T0,
    readyTransitionTimestamp: T0 - 3_600_000,
    status: [ready],
    lease: { renewTime: T0 },
  },
  retry: false,
};

describe('healthNeedsWrite: the write-on-change rule', () => {
  it.each<{ name: string; after: HealthRow; want: boolean }>([
    { name: 'nothing changed', after: saved, want: false },
    {
      name: 'a lease renewal moved the probe to the renewal instant (the next digest rebuilds it)',
      after: {
        ...saved,
        health: { ...saved.health!, probeTimestamp: T0 + 10_000, lease: { renewTime: T0 + 10_000 } },
      },
      want: false,
    },
    {
      name: 'the probe moved to an instant no digest carries (leaving master disruption)',
      after: { ...saved, health: { ...saved.health!, probeTimestamp: T0 + 12_345 } },
      want: true,
    },
    {
      name: 'readyTransitionTimestamp changed',
      after: { ...saved, health: { ...saved.health!, readyTransitionTimestamp: T0 } },
      want: true,
    },
    {
      name: 'the saved conditions changed',
      after: { ...saved, health: { ...saved.health!, status: [{ ...ready, status: 'Unknown' }] } },
      want: true,
    },
    { name: 'registered with another uid', after: { ...saved, registeredUid: 'uid-2' }, want: true },
    { name: 'entered nodesToRetry', after: { ...saved, retry: true }, want: true },
    { name: 'legacy eviction status set', after: { ...saved, evictionStatus: 'toBeEvicted' }, want: true },
    { name: 'health forgotten', after: { retry: false }, want: true },
  ])('$name', ({ after, want }) => {
    expect(healthNeedsWrite(saved, after)).toBe(want);
  });
});
