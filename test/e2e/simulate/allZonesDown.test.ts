// examples/scenarios/all-zones-down.yaml: master disruption and recovery.
//
// Derivation (docs/upstream.md#monitor-pass, #zone-states handleDisruption, #quirk-10 and #quirk-11,
// #behaviour-users-rely-on):
// - Every kubelet stops at 35 s after its 30 s renewal: all six nodes Unknown at 85 s (30 + 50, next
//   pass), each with NodeNotReady and its pod NotReady; node-taints adds unreachable:NoSchedule to each
//   (not rate limited, not braked by zone states).
// - The same pass queues every node for its NoExecute taint (processTaintBaseEviction decides on the
//   Ready condition the pass leaves, Unknown: PR #120816, from v1.34; the default emulationVersion is
//   1.37); here the queues hand out only after the whole pass, handleDisruption included.
// - handleDisruption in that pass: both zones have no Ready node → FullDisruption; every zone is Full and
//   was not before → enter master disruption: markNodeAsReachable on every node (no NoExecute taint to
//   remove yet; it takes the nodes just queued off the queues), SwapLimiter(0) on every zone (never a
//   token), zones Normal → FullDisruption.
// - 90 s on: every pass queues the nodes again (Unknown) but no token ever comes: no NoExecute taint, no
//   pod deleted.
// - 300 s: startKubelet (actions come first in an instant): each kubelet posts Ready=True and renews.
//   node-taints removes unreachable:NoSchedule. The 300 s pass observes Ready=True: markNodeAsReachable
//   takes the nodes off the queues; handleDisruption: not all Full now, all were → exit master
//   disruption: fresh probes, limiters for Normal, zones FullDisruption → Normal.
// - The controller writes no condition on recovery (the kubelet does): no NodeCondition line after 85 s.
import { beforeAll, describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../../local/simulate/simulation.js';
import { failures, firstPassAfter, linesOf, linesWhere, runExample, summaryOf } from './helpers.js';

const unknownAt = firstPassAfter(30 + 50); // 85
const backAt = 300;
const nodes = ['a-1', 'a-2', 'a-3', 'b-1', 'b-2', 'b-3'];

let result: SimulationResult;
beforeAll(async () => {
  result = await runExample('all-zones-down');
}, 60_000);

describe('examples/scenarios/all-zones-down.yaml', () => {
  it('runs without a failed function', () => {
    expect(failures(result)).toEqual([]);
  });

  it('enters master disruption when every zone is down and leaves it when they are back', () => {
    expect(linesOf(result, 'ZoneState')).toEqual([
      '0 ZoneState region-1:zone-a Initial→Normal',
      '0 ZoneState region-1:zone-b Initial→Normal',
      `${unknownAt} ZoneState region-1:zone-a Normal→FullDisruption`,
      `${unknownAt} ZoneState region-1:zone-b Normal→FullDisruption`,
      `${backAt} ZoneState region-1:zone-a FullDisruption→Normal`,
      `${backAt} ZoneState region-1:zone-b FullDisruption→Normal`,
    ]);
  });

  it('marks every node Unknown and its pods NotReady, even in master disruption', () => {
    expect(linesWhere(result, (l) => l.kind === 'NodeCondition' && l.type === 'Ready')).toEqual(
      nodes.map((n) => `${unknownAt} NodeCondition ${n} Ready=Unknown`),
    );
    expect(linesOf(result, 'PodNotReady')).toEqual(
      nodes.map((n) => `${unknownAt} PodNotReady default/app-${n}-1`),
    );
  });

  it('adds and removes only NoSchedule taints: no NoExecute taint, no eviction', () => {
    expect(linesOf(result, 'TaintAdded', 'TaintRemoved')).toEqual([
      ...nodes.map((n) => `${unknownAt} TaintAdded ${n} unreachable:NoSchedule`),
      ...nodes.map((n) => `${backAt} TaintRemoved ${n} unreachable:NoSchedule`),
    ]);
    expect(linesOf(result, 'PodDeleted')).toEqual([]);
    expect(summaryOf(result).evictions).toBe(0);
  });

  it('ends with both zones Normal and every node Ready, untainted', () => {
    const summary = summaryOf(result);
    expect(summary.zones.map((z) => [z.zone, z.state, z.unhealthy])).toEqual([
      ['region-1:zone-a', 'Normal', 0],
      ['region-1:zone-b', 'Normal', 0],
    ]);
    expect(summary.nodes.every((n) => n.ready === 'True' && n.taints.length === 0)).toBe(true);
  });
});
