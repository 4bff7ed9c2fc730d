// shared/app/monitorSteps.ts: the pure steps of a monitor pass, case by case. The whole pass (the I/O steps,
// their order, the Decisions rows and log lines end to end) is tested in
// test/integration/functions/monitor.test.ts and clockSkew.test.ts.
import { describe, expect, it } from 'vitest';
import {
  digestLeases,
  masterDisruptionAfter,
  observeDigest,
  passNodes,
  passStartState,
  positionMayWait,
  positionWriteEvery,
  processedMeta,
  summaryReason,
  healthRowsLagUnknown,
  quietPeriodTooLong,
  type DigestObservation,
  type PassFigures,
} from '../../../shared/app/monitorSteps.js';
import type { ControllerConfig } from '../../../shared/config.js';
import { emptyControllerState, type ControllerState } from '../../../shared/domain/controllerState.js';
import type { NodeHealthData } from '../../../shared/domain/nodeHealth.js';
import { newRateLimitedTimedQueue } from '../../../shared/domain/rateLimitedTimedQueue.js';
import { fakeNeverRateLimiter } from '../../../shared/domain/tokenBucket.js';
import type { Node } from '../../../shared/domain/types.js';
import type { ClusterMeta } from '../../../shared/ports/stores.js';
import { testConfig } from '../../helpers/controllerHarness.js';

const config: ControllerConfig = { ...testConfig, cluster: 'prod', nodeMonitorGracePeriod: 50_000 };
// The pass's now on the functions' clock; the relay's clock runs 2 s ahead of it (offset 2,000).
const NOW = Date.parse('2026-03-02T10:00:00.000Z');
const OFFSET = 2_000;
const LEADER_SINCE = Date.parse('2026-03-02T08:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** A digest of relay-a's term, observed now (relay clock), observing since an hour ago. */
const digest = {
  relayId: 'relay-a',
  leaderSince: LEADER_SINCE,
  sequence: 42,
  observedAt: NOW + OFFSET,
  observingSince: NOW + OFFSET - 3_600_000,
};
/** The cluster row of the previous digest of the same term, 5 s ago, same observation. */
const lastMeta: ClusterMeta = {
  lastSequence: 41,
  lastObservedAt: NOW - 5_000,
  lastLeaderSince: LEADER_SINCE,
  lastRelayId: 'relay-a',
  lastObservingSince: digest.observingSince,
  clockOffset: OFFSET,
  masterDisruption: false,
};
const sameTerm = { kind: 'accept', now: NOW, offset: OFFSET, newTerm: false } as const;

describe('observeDigest: what a digest says about observation, against the cluster row', () => {
  it('the first digest: no gap, no note', () => {
    expect(observeDigest({ masterDisruption: false }, digest, sameTerm, config)).toEqual({
      gapMs: undefined,
      gapReset: false,
      relayObservingSince: digest.observingSince,
      notes: [],
    } satisfies DigestObservation);
  });

  it('the next digest of the same observation: the gap, and nothing to say', () => {
    expect(observeDigest(lastMeta, digest, sameTerm, config)).toEqual({
      gapMs: 5_000,
      gapReset: false,
      relayObservingSince: digest.observingSince,
      notes: [],
    });
  });

  it('a gap of exactly the grace period is no reset', () => {
    const meta = { ...lastMeta, lastObservedAt: NOW - 50_000 };
    expect(observeDigest(meta, digest, sameTerm, config)).toMatchObject({
      gapMs: 50_000,
      gapReset: false,
      notes: [],
    });
  });

  it('a gap beyond the grace period: a reset, a warning and an observationGap decision', () => {
    const meta = { ...lastMeta, lastObservedAt: NOW - 120_000 };
    expect(observeDigest(meta, digest, sameTerm, config)).toEqual({
      gapMs: 120_000,
      gapReset: true,
      relayObservingSince: digest.observingSince,
      notes: [
        {
          level: 'warn',
          message:
            'observation gap: digests resumed after more than the grace period; every node gets a fresh probe',
          fields: {
            cluster: 'prod',
            gapSeconds: 120,
            lastObservedAt: iso(NOW - 120_000),
            observedAt: iso(NOW),
            nodeMonitorGracePeriodSeconds: 50,
          },
          decision: {
            node: '#cluster',
            what: 'observationGap',
            why:
              'no Heartbeat Digest processed for 120s (more than nodeMonitorGracePeriod, 50s): ' +
              'every node gets a fresh probe, nobody is marked Unknown',
            inputs: { lastObservedAt: iso(NOW - 120_000), observedAt: iso(NOW), gapSeconds: 120 },
          },
        },
      ],
    });
  });

  it("a relay restart (another observingSince, same term): an observationRestart on the functions' clock", () => {
    const restarted = { ...digest, observingSince: NOW + OFFSET - 30_000 };
    expect(observeDigest(lastMeta, restarted, sameTerm, config)).toEqual({
      gapMs: 5_000,
      gapReset: false,
      relayObservingSince: NOW + OFFSET - 30_000,
      notes: [
        {
          level: 'info',
          message: 'relay observation restarted: nodes not seen renewing since count from then',
          fields: { cluster: 'prod', relayId: 'relay-a', observingSince: iso(NOW - 30_000) },
          decision: {
            node: '#cluster',
            what: 'observationRestart',
            why:
              `relay relay-a has observed the node Leases since ${iso(NOW - 30_000)} (a restart or a failover): ` +
              'a node it has not seen renew since then is taken as probed at that instant, as upstream gives ' +
              'every node a fresh probe when its controller starts',
            inputs: { observingSince: iso(NOW - 30_000), relayId: 'relay-a' },
          },
        },
      ],
    });
  });

  it('an observingSince after the observedAt counts as the observedAt', () => {
    const odd = { ...digest, observingSince: digest.observedAt + 1_000 };
    expect(observeDigest({ masterDisruption: false }, odd, sameTerm, config).relayObservingSince).toBe(
      digest.observedAt,
    );
  });

  it('a new relay term the Lease vouches for: relayTerm, and no observationRestart for its new observingSince', () => {
    const next = { ...digest, relayId: 'relay-b', leaderSince: NOW, observingSince: NOW + 500 };
    const verdict = { kind: 'accept', now: NOW, offset: 500, newTerm: true, verified: true } as const;
    expect(observeDigest(lastMeta, next, verdict, config).notes).toEqual([
      {
        level: 'info',
        message: 'relay term accepted',
        fields: {
          cluster: 'prod',
          relayId: 'relay-b',
          leaderSince: iso(NOW),
          verified: true,
          clockOffsetMs: 500,
          previousRelayId: 'relay-a',
        },
        decision: {
          node: '#cluster',
          what: 'relayTerm',
          why: `relay relay-b holds the leader Lease since ${iso(NOW)}: its digests are accepted from now on, on its own clock offset`,
          inputs: {
            relayId: 'relay-b',
            leaderSince: iso(NOW),
            clockOffsetMs: 500,
            verified: true,
            previousRelayId: 'relay-a',
          },
        },
      },
    ]);
  });

  it('a first relay term without a leader Lease: relayTerm unverified, no previous relay', () => {
    const verdict = { kind: 'accept', now: NOW, offset: OFFSET, newTerm: true } as const;
    expect(observeDigest({ masterDisruption: false }, digest, verdict, config).notes).toEqual([
      {
        level: 'info',
        message: 'relay term accepted',
        fields: {
          cluster: 'prod',
          relayId: 'relay-a',
          leaderSince: iso(LEADER_SINCE),
          verified: false,
          clockOffsetMs: OFFSET,
        },
        decision: {
          node: '#cluster',
          what: 'relayTerm',
          why: `relay relay-a leads since ${iso(LEADER_SINCE)}; no leader Lease exists to check it against (a relay without leader election)`,
          inputs: {
            relayId: 'relay-a',
            leaderSince: iso(LEADER_SINCE),
            clockOffsetMs: OFFSET,
            verified: false,
          },
        },
      },
    ]);
  });

  it('a relay clock that jumped forward: its offset re-based, a warning and a relayClock decision', () => {
    const verdict = {
      kind: 'accept',
      now: NOW,
      offset: OFFSET + 30_000,
      newTerm: false,
      rebased: 'ahead',
    } as const;
    const jumped = { ...digest, observedAt: NOW + OFFSET + 30_000 };
    expect(observeDigest(lastMeta, jumped, verdict, config).notes).toEqual([
      {
        level: 'warn',
        message: "relay clock jumped: its term's offset is re-based",
        fields: {
          cluster: 'prod',
          relayId: 'relay-a',
          direction: 'ahead',
          previousClockOffsetMs: OFFSET,
          clockOffsetMs: OFFSET + 30_000,
        },
        decision: {
          node: '#cluster',
          what: 'relayClock',
          why: "the relay's clock jumped forward by 30s (two digests in a row agree): its instants are moved onto the functions' clock by the new offset",
          inputs: { previousClockOffsetMs: OFFSET, clockOffsetMs: OFFSET + 30_000 },
        },
      },
    ]);
  });

  it('a relay clock that stepped back says so', () => {
    const verdict = {
      kind: 'accept',
      now: NOW,
      offset: OFFSET - 12_400,
      newTerm: false,
      rebased: 'behind',
    } as const;
    const [note] = observeDigest(lastMeta, digest, verdict, config).notes;
    expect(note?.decision.why).toMatch(/^the relay's clock jumped back by 12s /);
  });

  it('all at once: the gap, the restart, then the clock, in that order', () => {
    const meta = { ...lastMeta, lastObservedAt: NOW - 600_000 };
    const verdict = {
      kind: 'accept',
      now: NOW,
      offset: OFFSET - 30_000,
      newTerm: false,
      rebased: 'behind',
    } as const;
    const restarted = { ...digest, observingSince: NOW - 60_000 };
    expect(observeDigest(meta, restarted, verdict, config).notes.map((n) => n.decision.what)).toEqual([
      'observationGap',
      'observationRestart',
      'relayClock',
    ]);
  });
});

const T0 = NOW - 3_600_000;
const health: NodeHealthData = {
  probeTimestamp: NOW - 10_000,
  readyTransitionTimestamp: T0,
  status: [{ type: 'Ready', status: 'True', lastHeartbeatTime: NOW - 10_000, lastTransitionTime: T0 }],
  lease: { renewTime: NOW - 10_000 },
};

describe('passStartState: the state the pass starts from', () => {
  const drained = newRateLimitedTimedQueue(fakeNeverRateLimiter);
  const loaded: ControllerState = {
    ...emptyControllerState(),
    knownNodes: new Map([
      ['a', 'uid-a'],
      ['b', 'uid-b'],
    ]),
    nodeHealth: new Map([
      ['a', health],
      ['b', health],
    ]),
    // b was processed once and is no longer queued: the drainer has drained it.
    zoneQueues: new Map([['z1', { ...drained, set: ['b'] }]]),
    nodeEvictionStatus: new Map([['b', 'toBeEvicted']]),
  };

  it('no gap, taint mode: the loaded state itself', () => {
    expect(passStartState(loaded, false, NOW, 'taint')).toBe(loaded);
  });

  it('after a gap: every node probed now, its ready transition now, the rest as loaded', () => {
    const fresh = { ...health, probeTimestamp: NOW, readyTransitionTimestamp: NOW };
    expect(passStartState(loaded, true, NOW, 'taint')).toEqual({
      ...loaded,
      nodeHealth: new Map([
        ['a', fresh],
        ['b', fresh],
      ]),
    });
  });

  it('legacy mode: a node marked toBeEvicted that the drainer took off its queue is evicted', () => {
    expect(passStartState(loaded, false, NOW, 'legacy')).toEqual({
      ...loaded,
      nodeEvictionStatus: new Map([['b', 'evicted']]),
    });
  });
});

describe('digestLeases: the digest probes as leases', () => {
  it("moves each probe onto the functions' clock, none after now", () => {
    const probes = new Map([
      ['a', NOW + OFFSET - 4_000],
      ['b', NOW + OFFSET + 1_500], // the relay saw it after it sent the digest's observedAt: clamped
    ]);
    expect(digestLeases({ probes }, OFFSET, NOW)).toEqual(
      new Map([
        ['a', { renewTime: NOW - 4_000 }],
        ['b', { renewTime: NOW }],
      ]),
    );
  });
});

describe('passNodes: the nodes the pass decides on', () => {
  const node = (name: string, resourceVersion = '1'): Node => ({
    name,
    uid: `uid-${name}`,
    resourceVersion,
    creationTimestamp: T0,
    labels: {},
    taints: [],
    unschedulable: false,
    conditions: [],
  });
  it('cached copies, the API copy where one differs, none the API lost, the missing ones read, by name', () => {
    const cached = new Map([
      ['a', node('a')],
      ['c', node('c')],
      ['d', node('d')],
    ]);
    const live = node('d', '7');
    const checked = {
      gone: new Map([['c', node('c')]]),
      corrected: new Map([
        [
          'd',
          {
            stored: node('d'),
            live,
            check: { kind: 'unknownToRelay', name: 'd', stored: node('d') } as const,
          },
        ],
      ]),
    };
    expect(passNodes(cached, checked, new Map([['b', node('b')]]))).toEqual([node('a'), node('b'), live]);
  });
});

describe('processedMeta: the cluster row a committed pass records', () => {
  const fields = (over: Partial<ClusterMeta>) => ({
    lastSequence: 42,
    lastObservedAt: NOW,
    lastLeaderSince: LEADER_SINCE,
    lastRelayId: 'relay-a',
    relayLastSeen: NOW,
    lastObservingSince: digest.observingSince,
    nodeMonitorGracePeriodMs: 50_000,
    emulationVersion: config.emulationVersion,
    dryRun: config.dryRun,
    clusterVersion: 'v1.37.1',
    clusterVersionReadAt: NOW - 1_000,
    clockOffset: OFFSET,
    ...over,
  });
  const version = { clusterVersion: 'v1.37.1', clusterVersionReadAt: NOW - 1_000 };

  it.each<{
    name: string;
    meta: ClusterMeta;
    verdict: Parameters<typeof processedMeta>[2];
    want: ClusterMeta | object;
  }>([
    {
      name: 'the same term keeps whether it was verified',
      meta: { ...lastMeta, termVerified: true },
      verdict: sameTerm,
      want: fields({ termVerified: true }),
    },
    {
      name: 'a row without termVerified reads as not verified',
      meta: lastMeta,
      verdict: sameTerm,
      want: fields({ termVerified: false }),
    },
    {
      name: 'a new term records whether the Lease vouched for it',
      meta: { ...lastMeta, termVerified: false },
      verdict: { kind: 'accept', now: NOW, offset: OFFSET, newTerm: true, verified: true },
      want: fields({ termVerified: true }),
    },
    {
      name: 'an offset jump still to confirm is kept as the candidate',
      meta: lastMeta,
      verdict: { ...sameTerm, candidate: OFFSET + 40_000 },
      want: fields({ clockCandidate: OFFSET + 40_000, termVerified: false }),
    },
  ])('$name', ({ meta, verdict, want }) => {
    expect(processedMeta(meta, digest, verdict, config, digest.observingSince, version)).toEqual(want);
  });
});

describe('masterDisruptionAfter', () => {
  it.each([
    ['enter', false, true],
    ['stay', true, true],
    ['stay', false, false],
    ['exit', true, false],
    ['none', false, false],
  ] as const)('%s from %s: %s', (transition, before, want) => {
    expect(masterDisruptionAfter(transition, before)).toBe(want);
  });
});

describe('summaryReason: when a pass is an info line with its metrics, and when only a debug line', () => {
  // NOW is 10:00:00.000, so the previous digest 5 s before it is in another minute: use 10:00:30.
  const at = NOW + 30_000;
  const previous = at - 5_000;
  const quiet: PassFigures = {
    changes: 0,
    observationGapMs: 5_000,
    observationGapReset: false,
    attempts: 1,
    drainerTriggered: false,
    durationMs: 40,
  };
  it('a steady pass within the minute: debug only', () => {
    expect(summaryReason(quiet, previous, at, config)).toBeUndefined();
  });
  it('the first pass of a minute of digest time, and the first digest ever: minute', () => {
    expect(summaryReason(quiet, NOW - 5_000, NOW, config)).toBe('minute');
    expect(summaryReason(quiet, undefined, at, config)).toBe('minute');
  });
  it.each<[string, Partial<PassFigures>]>([
    ['a decision recorded', { changes: 1 }],
    ['an observation gap reset', { observationGapReset: true, observationGapMs: 60_000 }],
    ['a digest missing before it (gap over two periods)', { observationGapMs: 10_001 }],
    ['a lost race', { attempts: 2 }],
    ['nodes waiting to register', { waitingToRegister: 3 }],
    ['health rows still catching up', { healthRowsBehind: 120 }],
    ['zone queue entries still catching up', { queueEntriesBehind: 800 }],
    ['the drainer started', { drainerTriggered: true }],
    ['held by lease confirmation', { heldBy: 'waiting' }],
    ['slower than the monitor period', { durationMs: config.nodeMonitorPeriod + 1 }],
  ])('%s: changed', (_name, figures) => {
    expect(summaryReason({ ...quiet, ...figures }, previous, at, config)).toBe('changed');
  });
  it("with the relay's quiet period, a gap of two of them is quiet and a longer one is a digest missing", () => {
    const period = 15_000;
    expect(
      summaryReason({ ...quiet, observationGapMs: 2 * period }, previous, at, config, period),
    ).toBeUndefined();
    expect(summaryReason({ ...quiet, observationGapMs: 2 * period + 1 }, previous, at, config, period)).toBe(
      'changed',
    );
    // Slower than the monitor period is still measured against the monitor period.
    const slow = { ...quiet, durationMs: config.nodeMonitorPeriod + 1 };
    expect(summaryReason(slow, previous, at, config, period)).toBe('changed');
  });
  it('a gap of exactly two periods (one digest late, none missing) is quiet', () => {
    expect(
      summaryReason({ ...quiet, observationGapMs: 2 * config.nodeMonitorPeriod }, previous, at, config),
    ).toBeUndefined();
  });
});

describe("positionMayWait: whether a quiet pass may leave the cluster row's position unwritten", () => {
  it('half the grace period: 25 s by default, 20 s for a 40 s grace', () => {
    expect(positionWriteEvery(config)).toBe(25_000);
    expect(positionWriteEvery({ nodeMonitorGracePeriod: 40_000 })).toBe(20_000);
  });
  it.each([
    ['a quiet pass 5 s after the stored position', true, 5_000, true],
    ['a quiet pass 24.999 s after it', true, 24_999, true],
    ['a quiet pass 25 s after it: written', true, 25_000, false],
    ['a pass that decided something or read a node: written', false, 5_000, false],
  ] as const)('%s', (_name, quiet, after, want) => {
    expect(positionMayWait({ lastObservedAt: NOW - after }, quiet, NOW, config)).toBe(want);
  });
  it('no stored position (the first digest): written', () => {
    expect(positionMayWait({}, true, NOW, config)).toBe(false);
  });
});

describe('healthRowsLagUnknown: a load that cannot tell which health rows lag starts as after a restart', () => {
  it.each<[string, number | undefined, readonly string[] | undefined, boolean]>([
    ['no row lags', undefined, undefined, false],
    [
      'rows lag, and this state knows which (the warm function that deferred them)',
      3,
      ['a', 'b', 'c'],
      false,
    ],
    [
      'rows lag, and this state was loaded (a cold start, or after another monitor committed)',
      3,
      undefined,
      true,
    ],
    ['rows lag, and a loaded state has an empty list', 3, [], true],
  ])('%s', (_name, behind, pendingHealth, want) => {
    const meta = behind === undefined ? {} : { healthRowsBehind: behind };
    expect(healthRowsLagUnknown(meta, pendingHealth)).toBe(want);
  });
});

describe("quietPeriodTooLong: a relay's quiet period over a third of the functions' grace period", () => {
  it.each<[string, number | undefined, number, boolean]>([
    ['no quiet period', undefined, 50_000, false],
    ['15 s with the default 50 s grace', 15_000, 50_000, false],
    ['a third of the grace exactly', 16_666, 50_000, false],
    ['15 s beside functions with a 10 s grace (the relay left at 50 s)', 15_000, 10_000, true],
  ])('%s', (_name, quietPeriodMs, grace, want) => {
    const digest = quietPeriodMs === undefined ? {} : { quietPeriodMs };
    const got = quietPeriodTooLong(digest, { nodeMonitorGracePeriod: grace });
    expect(got !== undefined).toBe(want);
    if (want) expect(got).toEqual({ quietPeriodMs, mostMs: Math.floor(grace / 3) });
  });
});
