// examples/scenarios/legacy-mode.yaml: evictionMode legacy (upstream ≤ 1.26, --enable-taint-manager=false).
//
// Derivation (docs/upstream.md#legacy-eviction processNoTaintBaseEviction, evictPods, doEvictionPass;
// #pod-helpers DeletePods, SetPodTerminationReason; docs/upstream.md#events; #quirk-28):
// - emulationVersion 1.26 (the last minor with this path), so nodeMonitorGracePeriod is its 40s default.
// - a-1 and a-2 stop at 35 s after their 30 s renewal: both Unknown at 75 s (30 + 40, next pass), pods
//   NotReady, unreachable:NoSchedule (doNoScheduleTaintingPass runs in both modes). 2 of 4 down is not
//   PartialDisruption (more than 2 needed): the zone stays Normal at 0.1/s.
// - processNoTaintBaseEviction(Unknown) evicts when now is after probeTimestamp + podEvictionTimeout:
//   30 + 300 = 330 → the 335 s pass queues both (a-1 first: node order) in the zone's pod evictor.
//   doEvictionPass: the bucket is full → a-1 at 335 s; the next token 1 / 0.1 = 10 s later → a-2 at 345 s.
// - DeletePods(node): Event DeletingAllPods on the node (pods exist), then per pod: status.reason NodeLost;
//   the DaemonSet pod is not deleted; the others get Event NodeControllerEviction and the delete.
// - From then on the node is `evicted`: every pass that still finds it Unknown past the timeout calls
//   DeletePods again at once, which records DeletingAllPods while any pod is left on the node (here the
//   DaemonSet pod and the terminating ones: the kubelet is down). Terminating pods are skipped, so nothing
//   is deleted twice. a-1: the drainer at 335 s, then every pass from 340 s; a-2: 345 s, then from 350 s.
// - No NoExecute taint at any time.
import { beforeAll, describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../../local/simulate/simulation.js';
import { failures, firstPassAfter, linesOf, runExample, summaryOf } from './helpers.js';

const podEvictionTimeout = 300;
const unknownAt = firstPassAfter(30 + 40); // 75
const evictedAt = firstPassAfter(30 + podEvictionTimeout); // 335
const secondAt = evictedAt + 1 / 0.1; // 345
const end = 570;
const every5sFrom = (from: number): number[] =>
  Array.from({ length: (end - from) / 5 + 1 }, (_, i) => from + i * 5);

let result: SimulationResult;
beforeAll(async () => {
  result = await runExample('legacy-mode');
}, 60_000);

describe('examples/scenarios/legacy-mode.yaml', () => {
  it('runs without a failed function', () => {
    expect(failures(result)).toEqual([]);
  });

  it('marks both nodes Unknown and taints them NoSchedule, never NoExecute', () => {
    expect(linesOf(result, 'TaintAdded', 'TaintRemoved')).toEqual([
      `${unknownAt} TaintAdded a-1 unreachable:NoSchedule`,
      `${unknownAt} TaintAdded a-2 unreachable:NoSchedule`,
    ]);
    expect(
      result.lines.filter((l) => l.kind === 'NodeCondition' && l.type === 'Ready').map((l) => l.t),
    ).toEqual([unknownAt, unknownAt]);
  });

  it('deletes the pods podEvictionTimeout after the last probe, one node per token, sparing the DaemonSet pod', () => {
    expect(linesOf(result, 'PodDeleted')).toEqual([
      `${evictedAt} PodDeleted default/web-1 NodeLost`,
      `${secondAt} PodDeleted default/web-2 NodeLost`,
    ]);
    expect(linesOf(result, 'Event').filter((l) => l.includes('NodeControllerEviction'))).toEqual([
      `${evictedAt} Event NodeControllerEviction Pod/default/web-1`,
      `${secondAt} Event NodeControllerEviction Pod/default/web-2`,
    ]);
    expect(summaryOf(result).evictions).toBe(2);
  });

  it('records DeletingAllPods at the eviction and on every pass after it while pods remain', () => {
    const deletingAll = (node: string) =>
      result.lines
        .filter((l) => l.kind === 'Event' && l.reason === 'DeletingAllPods' && l.object === `Node/${node}`)
        .map((l) => l.t);
    expect(deletingAll('a-1')).toEqual(every5sFrom(evictedAt));
    expect(deletingAll('a-2')).toEqual(every5sFrom(secondAt));
  });

  it('keeps the zone Normal', () => {
    expect(linesOf(result, 'ZoneState')).toEqual(['0 ZoneState region-1:zone-a Initial→Normal']);
    expect(summaryOf(result).zones).toEqual([
      { zone: 'region-1:zone-a', state: 'Normal', size: 4, unhealthy: 2 },
    ]);
  });
});
