// examples/scenarios/zone-partial-disruption.yaml: a small and a large zone, both mostly down.
//
// Derivation (docs/upstream.md#zone-states, #rate-limited-queue, #timeline; issue #102908):
// - 5 of zone-a's 8 nodes and 30 of zone-b's 52 stop at 35 s, after their 30 s renewal: all 35 are marked
//   Unknown at the first pass after 30 + 50, 85 s, and handleDisruption counts them in that same pass
//   (it reads the current conditions): ComputeZoneState gives PartialDisruption when notReady > 2 and
//   notReady / size ≥ 0.55: zone-a 5/8 = 0.625, zone-b 30/52 ≈ 0.577. Both go Normal → Partial at 85 s.
// - setLimiterInZone(Partial) uses ReducedQPSFunc(zoneSize): 0 when the zone size is not above
//   largeClusterSizeThreshold (50), else secondaryNodeEvictionRate (0.01/s).
//   zone-a (8): SwapLimiter(0), a limiter that never gives a token: no NoExecute taint there, ever.
//   zone-b (52): SwapLimiter(0.01). The old 0.1/s bucket still held its token (never used), so the new
//   bucket is not drained: it starts full.
// - 85 s: the same pass queues the nodes (processTaintBaseEviction decides on the Ready condition the
//   pass leaves, Unknown: PR #120816, from v1.34; the default emulationVersion is 1.37), before
//   handleDisruption swaps the limiters; here the queues hand out only after the whole pass, so the
//   new limiters decide. (Upstream's 100 ms tainting loop runs beside the pass and could take the old
//   bucket's token first: zone-b's times would be the same, its new bucket then drained; zone-a could
//   get one NoExecute taint.)
//   zone-b: the new bucket's token at once, then one every 1 / 0.01 = 100 s: 85, 185, …, 2985 s: all
//   30 down nodes tainted NoExecute by 49m45s. The queue hands nodes out in the order they were queued,
//   which is the monitor's node order (by name): b-1, b-10, b-11, …
// - Each tainted node's pod (300 s default toleration) is deleted 300 s after its taint: 385 … 3285 s,
//   30 pods. No pod in zone-a.
// - The run ends at 3510 s (58m30s), 3m45s after the last deletion: a delivery late by --chaos's worst
//   still lands before it.
import { beforeAll, describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../../local/simulate/simulation.js';
import { failures, firstPassAfter, linesOf, linesWhere, runExample, summaryOf } from './helpers.js';

const unknownAt = firstPassAfter(30 + 50); // 85
const queuedAt = unknownAt; // the same pass from v1.34 (PR #120816): 85
const secondaryRate = 0.01;
const tokenEvery = 1 / secondaryRate; // 100 s
const end = 3510; // the scenario's duration, 58m30s
const taintTimes = Array.from({ length: 30 }, (_, i) => queuedAt + i * tokenEvery);
// Name order of the stopped zone-b nodes (b-1…b-30), as the monitor walks them.
const stoppedB = Array.from({ length: 30 }, (_, i) => `b-${i + 1}`).sort();

let result: SimulationResult;
beforeAll(async () => {
  result = await runExample('zone-partial-disruption');
}, 60_000);

describe('examples/scenarios/zone-partial-disruption.yaml', () => {
  it('runs without a failed function', () => {
    expect(failures(result)).toEqual([]);
  });

  it('puts both zones in PartialDisruption in the pass that marks the nodes Unknown', () => {
    expect(linesOf(result, 'ZoneState')).toEqual([
      '0 ZoneState region-1:zone-a Initial→Normal',
      '0 ZoneState region-1:zone-b Initial→Normal',
      `${unknownAt} ZoneState region-1:zone-a Normal→PartialDisruption`,
      `${unknownAt} ZoneState region-1:zone-b Normal→PartialDisruption`,
    ]);
    expect(linesWhere(result, (l) => l.kind === 'NodeCondition' && l.type === 'Ready').length).toBe(35);
    expect(new Set(result.lines.filter((l) => l.kind === 'NodeCondition').map((l) => l.t))).toEqual(
      new Set([unknownAt]),
    );
  });

  it('never taints the small zone NoExecute; taints the large one at 0.01/s from a full bucket', () => {
    const noExecute = linesWhere(result, (l) => l.kind === 'TaintAdded' && l.effect === 'NoExecute');
    expect(noExecute).toEqual(
      taintTimes.map((t, i) => `${t} TaintAdded ${stoppedB[i] ?? '?'} unreachable:NoExecute`),
    );
    expect(taintTimes.slice(0, 3)).toEqual([85, 185, 285]);
    expect(taintTimes.at(-1)).toBe(2985);
    expect(taintTimes.at(-1)).toBeLessThan(end);
  });

  it('still taints every down node NoSchedule at once, in both zones', () => {
    const noSchedule = result.lines.filter((l) => l.kind === 'TaintAdded' && l.effect === 'NoSchedule');
    expect(noSchedule).toHaveLength(35);
    expect(new Set(noSchedule.map((l) => l.t))).toEqual(new Set([unknownAt]));
  });

  it("deletes a tainted node's pod 300 s after its taint, none in the small zone", () => {
    const deletions = taintTimes.filter((t) => t + 300 <= end);
    expect(deletions).toHaveLength(30);
    expect(linesOf(result, 'PodDeleted')).toEqual(
      deletions.map(
        (t, i) => `${t + 300} PodDeleted default/app-${stoppedB[i] ?? '?'}-1 TaintManagerEviction`,
      ),
    );
  });

  it('ends with both zones PartialDisruption', () => {
    const summary = summaryOf(result);
    expect(summary.zones).toEqual([
      { zone: 'region-1:zone-a', state: 'PartialDisruption', size: 8, unhealthy: 5 },
      { zone: 'region-1:zone-b', state: 'PartialDisruption', size: 52, unhealthy: 30 },
    ]);
    expect(summary.t).toBe(end);
    expect(summary.evictions).toBe(30);
  });
});
