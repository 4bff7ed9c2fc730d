// Quiet digests (relay.md, "Quiet digests"): while every node is Ready and renewing and nothing changed,
// the leader sends a digest every quiet period instead of every nodeMonitorPeriod, and goes back to
// every period the tick something happens.
import { describe, expect, it } from 'vitest';
import { DigestLoop } from '../../../relay/digestLoop.js';
import { silentLogger } from '../../../relay/logger.js';
import { RelayMetrics } from '../../../relay/metrics.js';
import type { ReflectorStatus } from '../../../relay/reflector.js';
import { loadRelaySettings } from '../../../relay/settings.js';
import {
  digestUrgency,
  forgetNode,
  newProbeTracker,
  observeLease,
  observeNodeStatus,
  type ProbeTracker,
} from '../../../relay/shaping.js';
import type { ConditionStatus, EpochMillis, Node } from '../../../shared/domain/types.js';
import { ConfigError } from '../../../shared/errors.js';
import type { HeartbeatDigest } from '../../../shared/events.js';
import { LeaseVersionsAfterMs } from '../../../shared/heartbeatDigestWire.js';

const t0 = Date.parse('2026-11-28T10:00:00Z');
const S = 1_000;

function node(name: string, status: ConditionStatus = 'True', labels: Record<string, string> = {}): Node {
  return {
    name,
    uid: `uid-${name}`,
    creationTimestamp: 0,
    labels,
    taints: [],
    unschedulable: false,
    conditions: [{ type: 'Ready', status, lastHeartbeatTime: 500 }],
  };
}

/** Two Ready nodes whose Leases were renewed (a probe each) at `at`. */
function renewing(at: EpochMillis): ProbeTracker {
  const tracker = newProbeTracker();
  for (const name of ['n1', 'n2']) {
    observeNodeStatus(tracker, node(name), at - 60 * S);
    observeLease(tracker, name, 1, at - 60 * S, '1');
    observeLease(tracker, name, 2, at, '2');
  }
  return tracker;
}

const renew = (tracker: ProbeTracker, name: string, at: EpochMillis): void => {
  observeLease(tracker, name, at, at, String(at));
};

describe('digestUrgency: what makes the next digest due at the full pace', () => {
  it('nothing, while every node is Ready, renewing, and unchanged', () => {
    const tracker = renewing(t0);
    expect(digestUrgency(tracker, t0 + 5 * S, tracker.changes)).toBeUndefined();
  });

  it('a node added, forgotten, changed or no longer Ready since the last digest sent', () => {
    const cases: [string, (tracker: ProbeTracker) => void][] = [
      ['added', (t) => observeNodeStatus(t, node('n3'), t0)],
      ['forgotten', (t) => forgetNode(t, 'n2')],
      ['labels changed', (t) => observeNodeStatus(t, node('n1', 'True', { team: 'a' }), t0)],
      ['not Ready', (t) => observeNodeStatus(t, node('n1', 'False'), t0)],
    ];
    for (const [name, change] of cases) {
      const tracker = renewing(t0);
      const sent = tracker.changes;
      change(tracker);
      expect(digestUrgency(tracker, t0 + S, sent), name).toBe('nodeChanged');
    }
  });

  it('a node not Ready, even with no change since the digest that said so', () => {
    const tracker = renewing(t0);
    observeNodeStatus(tracker, node('n2', 'Unknown'), t0);
    expect(digestUrgency(tracker, t0 + S, tracker.changes)).toBe('nodeNotReady');
  });

  it(`a node without a renewal for ${LeaseVersionsAfterMs / S} s: from then on, every period`, () => {
    const tracker = renewing(t0);
    renew(tracker, 'n1', t0 + 14 * S);
    expect(digestUrgency(tracker, t0 + LeaseVersionsAfterMs - 1, tracker.changes)).toBeUndefined();
    expect(digestUrgency(tracker, t0 + LeaseVersionsAfterMs, tracker.changes)).toBe('nodeSilent');
  });

  it('a node never probed (a kubelet that never renewed)', () => {
    const tracker = renewing(t0);
    observeNodeStatus(tracker, { ...node('n3'), conditions: [{ type: 'Ready', status: 'True' }] }, t0);
    expect(digestUrgency(tracker, t0 + S, tracker.changes)).toBe('nodeUnprobed');
  });

  it('a changed heartbeat alone (a probe) is no change', () => {
    const tracker = renewing(t0);
    const sent = tracker.changes;
    observeNodeStatus(
      tracker,
      { ...node('n1'), conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: 900 }] },
      t0 + S,
    );
    renew(tracker, 'n2', t0 + S);
    expect(tracker.changes).toBe(sent);
  });
});

describe('DigestLoop with a quiet period', () => {
  function loop(tracker: ProbeTracker, quietPeriod: number | undefined) {
    const status = (resource: string): ReflectorStatus => ({
      resource,
      synced: true,
      syncedAt: t0 - 60 * S,
      resourceVersion: '1',
      objects: 2,
      watching: true,
      interrupted: false,
      suspectedStall: false,
    });
    const clock = { time: t0 };
    const sent: HeartbeatDigest[] = [];
    const metrics = new RelayMetrics();
    const digests = new DigestLoop({
      cluster: 'prod',
      relayId: 'relay-a',
      nodeMonitorPeriod: 5 * S,
      ...(quietPeriod !== undefined && { quietPeriod }),
      partMaxBytes: 255 * 1024,
      clock: { now: () => clock.time },
      tracker,
      leases: { status: () => status('leases') },
      nodes: { status: () => status('nodes') },
      publisher: {
        setDigest: (parts) => {
          sent.push(...parts);
          return Promise.resolve();
        },
      },
      metrics,
      logger: silentLogger,
      leaderSince: () => t0 - 60 * S,
    });
    /** Ticks every period from t0 for `seconds`, the nodes renewing every 10 s; the instants sent. */
    const run = async (seconds: number, before?: (at: EpochMillis) => void): Promise<number[]> => {
      const at: number[] = [];
      for (let s = 0; s <= seconds; s += 5) {
        clock.time = t0 + s * S;
        if (s % 10 === 0) for (const name of tracker.nodes.keys()) renew(tracker, name, clock.time);
        before?.(clock.time);
        const count = sent.length;
        await digests.tick();
        if (sent.length > count) at.push(s);
      }
      return at;
    };
    return { digests, sent, run, metrics };
  }

  it('sends the first digest, then one every quiet period while nothing happens, each saying so', async () => {
    const { sent, run } = loop(renewing(t0), 15 * S);
    expect(await run(60)).toEqual([0, 15, 30, 45, 60]);
    expect(sent.every((d) => d.quietPeriodMs === 15 * S)).toBe(true);
  });

  it('without one (or one no longer than the period), every period, and no quietPeriodMs', async () => {
    for (const quiet of [undefined, 5 * S]) {
      const { sent, run } = loop(renewing(t0), quiet);
      expect(await run(20)).toEqual([0, 5, 10, 15, 20]);
      expect(sent.some((d) => d.quietPeriodMs !== undefined)).toBe(false);
    }
  });

  it('goes back to every period the tick a node changes, and while one is not Ready', async () => {
    const tracker = renewing(t0);
    const { run } = loop(tracker, 15 * S);
    const at = await run(60, (now) => {
      if (now === t0 + 20 * S) observeNodeStatus(tracker, node('n2', 'False'), now);
      if (now === t0 + 40 * S) observeNodeStatus(tracker, node('n2'), now);
    });
    // Quiet, n2 NotReady from 20 s (every period), Ready again at 40 s (a change: sent), then quiet.
    expect(at).toEqual([0, 15, 20, 25, 30, 35, 40, 55]);
  });

  it('sends every period once a node has been silent for LeaseVersionsAfterMs, however quiet the rest', async () => {
    const tracker = renewing(t0);
    const { run } = loop(tracker, 15 * S);
    // n2's kubelet stops after t0 (its renewals at 10, 20, ... s never come): silent for 15 s at 15 s.
    const n2 = tracker.nodes.get('n2');
    const sentAt = await run(40, () => {
      if (n2 !== undefined) n2.probedAt = t0;
    });
    expect(sentAt).toEqual([0, 15, 20, 25, 30, 35, 40]);
  });

  it('counts the ticks it let pass', async () => {
    const { run, metrics } = loop(renewing(t0), 15 * S);
    await run(30);
    expect((await metrics.digestsQuiet.get()).values[0]?.value).toBe(4);
  });

  it('a new term sends its first digest at once', async () => {
    const { digests, sent, run } = loop(renewing(t0), 15 * S);
    await run(5);
    digests.startTerm();
    const count = sent.length;
    await digests.tick();
    expect(sent.length).toBe(count + 1);
  });
});

describe('NLC_RELAY_QUIET_DIGEST_PERIOD', () => {
  const env = { NLC_CLUSTER: 'prod' };
  const quiet = (value?: string, extra: Record<string, string> = {}) =>
    loadRelaySettings({
      ...env,
      ...extra,
      ...(value !== undefined && { NLC_RELAY_QUIET_DIGEST_PERIOD: value }),
    }).quietDigestPeriod;

  it('defaults to 15 s, and to a third of a shorter grace period', () => {
    expect(quiet()).toBe(15 * S);
    expect(quiet(undefined, { NLC_NODE_MONITOR_GRACE_PERIOD: '40s' })).toBe(13_333);
  });

  it('0 is a digest every period; a duration between the period and a third of the grace is kept', () => {
    expect(quiet('0')).toBe(5 * S);
    expect(quiet('10s')).toBe(10 * S);
    expect(quiet('16s')).toBe(16 * S);
  });

  it.each([
    ['2s', 'at least nodeMonitorPeriod (5s)'],
    ['20s', 'at most 16s666ms'],
    ['soon', 'NLC_RELAY_QUIET_DIGEST_PERIOD'],
  ])('refuses %s, naming the variable and why', (value, why) => {
    let error: unknown;
    try {
      quiet(value);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues;
    expect(issues.map((i) => i.path)).toEqual(['NLC_RELAY_QUIET_DIGEST_PERIOD']);
    expect(`${issues[0]?.path}: ${issues[0]?.message}`).toContain(why);
  });
});
