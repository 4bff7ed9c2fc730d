// examples/scenarios/not-ready-unreachable-swap.yaml: Ready=False from the kubelet, then silence.
//
// Derivation (docs/upstream.md#node-health, #monitor-pass, #taint-based-eviction, #noschedule-taints,
// #taint-eviction-controller, #quirk-1 and #quirk-25; issue #125618):
// - 35 s: the running kubelet posts Ready=False at once. doNoScheduleTaintingPass: not-ready:NoSchedule.
//   The 35 s pass reads the node the kubelet wrote (the change handlers run before the monitor in an
//   instant, as upstream's informer updates its lister before monitorNodeHealth lists): observed False.
//   The controller changes no condition, and since it did not flip Ready from True itself, there is no
//   NodeNotReady event and no MarkPodsNotReady (issue #125618). processTaintBaseEviction(False):
//   markNodeForTainting → queued, the bucket is full: not-ready:NoExecute at 35 s.
//   web-1 (DefaultTolerationSeconds: not-ready 300 s) → due at 335 s. ops-1 tolerates not-ready
//   forever: nothing scheduled.
// - 120 s: the kubelet stops; its last renewal was at 110 s (the 120 s tick comes after the action).
//   The first pass after 110 + 50 = 160 is 165 s: Ready (False) and the pressure conditions become
//   Unknown. Ready was not True, so again no NodeNotReady and no MarkPodsNotReady. node-taints:
//   unreachable:NoSchedule replaces not-ready:NoSchedule.
// - The same 165 s pass: processTaintBaseEviction decides on the Ready condition the pass leaves,
//   Unknown (currentReadyCondition: upstream PR #120816, from v1.34; the default emulationVersion is
//   1.37), finds not-ready:NoExecute: SwapNodeControllerTaint, at once (not rate limited):
//   unreachable:NoExecute in, not-ready:NoExecute out. The swap is part of the pass (monitorNodeHealth
//   calls SwapNodeControllerTaint itself), so it comes before node-taints' reaction to the node the pass
//   wrote (doNoScheduleTaintingPass runs on the update): the NoExecute swap, then the NoSchedule swap.
//   web-1: processPodOnNode keeps the existing eviction (created 35 s: 35 + 300 < 165 + 300): 335 s.
//   ops-1: its unreachable toleration is admission's 300 s: due at 165 + 300 = 465 s.
import { beforeAll, describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../../local/simulate/simulation.js';
import { failures, firstPassAfter, lastRenewalAtOrBefore, linesOf, runExample } from './helpers.js';

const notReadyAt = 35;
const stopAt = 120;
const unknownAt = firstPassAfter(lastRenewalAtOrBefore(stopAt - 1) + 50); // 110 + 50 → 165
const swapAt = unknownAt; // the same pass from v1.34 (PR #120816): 165

let result: SimulationResult;
beforeAll(async () => {
  result = await runExample('not-ready-unreachable-swap');
}, 60_000);

describe('examples/scenarios/not-ready-unreachable-swap.yaml', () => {
  it('runs without a failed function', () => {
    expect(failures(result)).toEqual([]);
  });

  it('taints not-ready NoSchedule and NoExecute when the kubelet reports Ready=False', () => {
    expect(
      linesOf(result, 'TaintAdded', 'TaintRemoved').filter((l) => l.startsWith(`${notReadyAt} `)),
    ).toEqual([
      `${notReadyAt} TaintAdded a-1 not-ready:NoSchedule`,
      `${notReadyAt} TaintAdded a-1 not-ready:NoExecute`,
    ]);
  });

  it('marks Unknown a grace period after the last renewal, without NodeNotReady', () => {
    expect(linesOf(result, 'NodeCondition')).toEqual([
      `${unknownAt} NodeCondition a-1 MemoryPressure=Unknown`,
      `${unknownAt} NodeCondition a-1 DiskPressure=Unknown`,
      `${unknownAt} NodeCondition a-1 PIDPressure=Unknown`,
      `${unknownAt} NodeCondition a-1 Ready=Unknown`,
    ]);
    expect(linesOf(result, 'Event').filter((l) => l.includes(' NodeNotReady Node/'))).toEqual([]);
  });

  it('swaps the NoSchedule and the NoExecute taints in the pass that marks Unknown, at once', () => {
    expect(
      linesOf(result, 'TaintAdded', 'TaintRemoved').filter((l) => !l.startsWith(`${notReadyAt} `)),
    ).toEqual([
      `${swapAt} TaintRemoved a-1 not-ready:NoExecute`,
      `${swapAt} TaintAdded a-1 unreachable:NoExecute`,
      `${unknownAt} TaintRemoved a-1 not-ready:NoSchedule`,
      `${unknownAt} TaintAdded a-1 unreachable:NoSchedule`,
    ]);
  });

  it('keeps the earlier eviction of web-1 and starts ops-1 counting at the swap', () => {
    expect(linesOf(result, 'PodDeleted')).toEqual([
      `${notReadyAt + 300} PodDeleted default/web-1 TaintManagerEviction`,
      `${swapAt + 300} PodDeleted default/ops-1 TaintManagerEviction`,
    ]);
  });

  // Nothing marks a pod NotReady here: monitorNodeHealth does it only when it flips Ready from True
  // itself (#125618), and processPod only runs for a pod that is new or moved to another node
  // (upstream podUpdated), never for one that starts terminating.
  it('never marks a pod NotReady (the kubelet reported the node NotReady itself)', () => {
    expect(linesOf(result, 'PodNotReady')).toEqual([]);
    expect(linesOf(result, 'Event').filter((l) => l.includes(' NodeNotReady '))).toEqual([]);
  });
});
