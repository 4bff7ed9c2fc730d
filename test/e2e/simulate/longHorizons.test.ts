// Failures late in a cluster's life (examples/scenarios/node-failure-after-status-post.yaml,
// node-failure-after-an-hour.yaml, zone-failure-after-30m.yaml): by then every kubelet has posted its
// periodic status report (every 5 minutes, heartbeat only) many times. Those posts are probes the relay
// carries in the Heartbeat Digest, not Node Changed events, so the controller's node copy is older than
// the node; detection must not depend on it (docs/upstream-deviations.md, "Probes").
//
// Derivation (the same rules as singleNodeFailure.test.ts; the numbers are computed here):
// - Kubelets renew their lease every 10 s from 0 and post status every 300 s from 0 (5 m, 10 m, …).
// - A kubelet stopped at s was last probed at its last renewal at or before s.
// - tryUpdateNodeHealth marks Unknown at the first 5 s pass strictly after probe + 50 s grace; the
//   same pass queues the node for the NoExecute taint (processTaintBaseEviction decides on the Ready
//   condition the pass leaves: upstream PR #120816, from v1.34; the default emulationVersion is 1.37);
//   a zone's bucket (0.1/s, burst 1) then hands out one token every 10 s; a pod without a toleration
//   goes at its node's taint, one with the default 300 s toleration 300 s later.
import { beforeAll, describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../../local/simulate/simulation.js';
import {
  failures,
  firstPassAfter,
  lastRenewalAtOrBefore,
  linesOf,
  runExample,
  summaryOf,
} from './helpers.js';

const grace = 50;
const tolerationSeconds = 300;
const statusReportPeriod = 300;

/** The lines a single node's failure produces (Unknown marking, taints, evictions), derived. */
function singleNodeTimeline(stopAt: number, pods: { readonly tolerating: string[]; readonly not: string[] }) {
  const lastProbe = lastRenewalAtOrBefore(stopAt);
  const unknownAt = firstPassAfter(lastProbe + grace);
  const noExecuteAt = unknownAt; // the same pass from v1.34 (PR #120816)
  return {
    unknownAt,
    noExecuteAt,
    taints: [
      `${unknownAt} TaintAdded a-1 unreachable:NoSchedule`,
      `${noExecuteAt} TaintAdded a-1 unreachable:NoExecute`,
    ],
    deletions: [
      ...pods.not.map((p) => `${noExecuteAt} PodDeleted default/${p} TaintManagerEviction`),
      ...pods.tolerating.map(
        (p) => `${noExecuteAt + tolerationSeconds} PodDeleted default/${p} TaintManagerEviction`,
      ),
    ],
  };
}

describe('examples/scenarios/node-failure-after-status-post.yaml (a node that dies after 6 minutes)', () => {
  let result: SimulationResult;
  beforeAll(async () => {
    result = await runExample('node-failure-after-status-post');
  }, 60_000);
  const stopAt = 6 * 60 + 35;
  const expected = singleNodeTimeline(stopAt, { tolerating: ['web-1'], not: ['batch-1'] });

  it('stops a-1 after its periodic status report', () => {
    expect(stopAt).toBeGreaterThan(statusReportPeriod);
  });

  it('marks a-1 Unknown a grace period after its last renewal, taints and evicts as in the first minute', () => {
    expect(failures(result)).toEqual([]);
    expect(expected.unknownAt).toBe(445); // 6m30s + 50s → the 7m25s pass
    expect(linesOf(result, 'NodeCondition').filter((l) => l.endsWith('Ready=Unknown'))).toEqual([
      `${expected.unknownAt} NodeCondition a-1 Ready=Unknown`,
    ]);
    expect(linesOf(result, 'TaintAdded', 'TaintRemoved')).toEqual(expected.taints);
    expect(linesOf(result, 'PodDeleted')).toEqual(expected.deletions);
    expect(linesOf(result, 'PodNotReady')).toEqual([
      `${expected.unknownAt} PodNotReady default/batch-1`,
      `${expected.unknownAt} PodNotReady default/web-1`,
    ]);
  });

  it('leaves the healthy nodes alone', () => {
    const summary = summaryOf(result);
    expect(summary.nodes.map((n) => `${n.node}=${n.ready}`)).toEqual(['a-1=Unknown', 'a-2=True', 'a-3=True']);
  });
});

describe('examples/scenarios/node-failure-after-an-hour.yaml (a node that dies after 1 hour)', () => {
  let result: SimulationResult;
  beforeAll(async () => {
    result = await runExample('node-failure-after-an-hour');
  }, 120_000);
  const stopAt = 3600 + 5;
  const expected = singleNodeTimeline(stopAt, { tolerating: ['web-1'], not: ['batch-1'] });

  it('keeps the first minute’s timeline after twelve status reports', () => {
    expect(failures(result)).toEqual([]);
    expect(Math.floor(stopAt / statusReportPeriod)).toBe(12);
    expect(expected.unknownAt).toBe(3655);
    expect(linesOf(result, 'NodeCondition').filter((l) => l.endsWith('Ready=Unknown'))).toEqual([
      `${expected.unknownAt} NodeCondition a-1 Ready=Unknown`,
    ]);
    expect(linesOf(result, 'TaintAdded', 'TaintRemoved')).toEqual(expected.taints);
    expect(linesOf(result, 'PodDeleted')).toEqual(expected.deletions);
  });
});

describe('examples/scenarios/zone-failure-after-30m.yaml (a zone that dies after 30 minutes)', () => {
  let result: SimulationResult;
  beforeAll(async () => {
    result = await runExample('zone-failure-after-30m');
  }, 120_000);
  const stopAt = 30 * 60 + 5;
  const zoneNodes = ['b-1', 'b-2', 'b-3', 'b-4'];
  const unknownAt = firstPassAfter(lastRenewalAtOrBefore(stopAt) + grace); // 1855
  const queuedAt = unknownAt; // the marking pass queues them all (PR #120816); the full bucket hands out at once
  const taintTimes = zoneNodes.map((_, i) => queuedAt + i * 10); // one token every 1 / 0.1 s

  it('marks the whole zone Unknown in one pass and moves it to FullDisruption', () => {
    expect(failures(result)).toEqual([]);
    expect(unknownAt).toBe(1855);
    expect(linesOf(result, 'NodeCondition').filter((l) => l.endsWith('Ready=Unknown'))).toEqual(
      zoneNodes.map((n) => `${unknownAt} NodeCondition ${n} Ready=Unknown`),
    );
    expect(linesOf(result, 'ZoneState').filter((l) => !l.startsWith('0 '))).toEqual([
      `${unknownAt} ZoneState region-1:zone-b Normal→FullDisruption`,
    ]);
  });

  it('taints one node every 10 s (the normal rate: not every zone is down) and evicts 300 s after each', () => {
    expect(linesOf(result, 'TaintAdded').filter((l) => l.includes('NoExecute'))).toEqual(
      zoneNodes.map((n, i) => `${taintTimes[i]} TaintAdded ${n} unreachable:NoExecute`),
    );
    expect(linesOf(result, 'PodDeleted')).toEqual(
      zoneNodes.map(
        (n, i) =>
          `${(taintTimes[i] ?? 0) + tolerationSeconds} PodDeleted default/app-${n}-1 TaintManagerEviction`,
      ),
    );
  });

  it('touches no node of the healthy zones', () => {
    expect(linesOf(result, 'TaintAdded', 'NodeCondition').filter((l) => / [ac]-\d /.test(l))).toEqual([]);
  });
});
