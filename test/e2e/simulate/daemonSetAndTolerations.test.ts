// examples/scenarios/daemonset-and-tolerations.yaml: five pods, five tolerations, a node that dies and
// comes back.
//
// Derivation (docs/upstream.md#taint-eviction-controller processPodOnNode, getMinTolerationTime,
// cancelWorkWithEvent; docs/upstream.md#defaulttolerationseconds; docs/upstream.md#quirk-17 and #quirk-18;
// #behaviour-users-rely-on):
// - a-1 stops at 35 s after its 30 s renewal: Unknown at 85 s, all five pods NotReady (MarkPodsNotReady
//   spares none, DaemonSet pods included), unreachable:NoSchedule at 85 s, and unreachable:NoExecute in
//   the same pass, 85 s (processTaintBaseEviction decides on the Ready condition the pass leaves: PR
//   #120816, from v1.34; the default emulationVersion is 1.37).
// - At 85 s, per pod (GetMatchingTolerations, first match wins; getMinTolerationTime):
//     now-1      tolerationSeconds 0 → "<= 0 means evict now": deleted at 85 s;
//     quick-1    60 s → deleted at 145 s;
//     web-1      admission's 300 s → due at 385 s;
//     agent-1    DaemonSet tolerations without seconds → forever (-1): nothing scheduled;
//     forever-1  {operator: Exists} tolerates every taint, no seconds → forever.
//   Each deletion comes with one TaintManagerEviction "Marking for deletion" event.
// - 300 s: the kubelet comes back and posts Ready=True (the action comes first in the instant):
//   node-taints removes unreachable:NoSchedule; the 300 s pass observes Ready=True → markNodeAsReachable
//   removes unreachable:NoExecute. handleNodeUpdate with no NoExecute taint left cancels every pending
//   eviction, with a "Cancelling deletion" event for each timer it stops: only web-1's (quick-1's fired
//   at 145 s and is gone; now-1 never had a timer).
// - Upstream's filters (NodeUpdated: NoExecute taints unchanged; PodUpdated: tolerations and node
//   unchanged) keep the other node and pod updates of the run (a terminating pod, the NoSchedule
//   removal, the kubelet's Ready=True) from being processed at all.
import { beforeAll, describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../../local/simulate/simulation.js';
import { failures, firstPassAfter, linesOf, runExample, summaryOf } from './helpers.js';

const unknownAt = firstPassAfter(30 + 50); // 85
const noExecuteAt = unknownAt; // the same pass from v1.34 (PR #120816): 85
const backAt = 300;

let result: SimulationResult;
beforeAll(async () => {
  result = await runExample('daemonset-and-tolerations');
}, 60_000);

describe('examples/scenarios/daemonset-and-tolerations.yaml', () => {
  it('runs without a failed function', () => {
    expect(failures(result)).toEqual([]);
  });

  it('marks every pod NotReady when the node goes Unknown, the DaemonSet pod included', () => {
    expect(linesOf(result, 'PodNotReady')).toEqual(
      ['default/forever-1', 'default/now-1', 'default/quick-1', 'default/web-1', 'kube-system/agent-1'].map(
        (pod) => `${unknownAt} PodNotReady ${pod}`,
      ),
    );
  });

  it('deletes by toleration: 0 s at once, 60 s a minute later; never the forever-tolerating pods', () => {
    expect(linesOf(result, 'PodDeleted')).toEqual([
      `${noExecuteAt} PodDeleted default/now-1 TaintManagerEviction`,
      `${noExecuteAt + 60} PodDeleted default/quick-1 TaintManagerEviction`,
    ]);
    expect(summaryOf(result).evictions).toBe(2);
  });

  it('lifts both taints when the node is back', () => {
    expect(linesOf(result, 'TaintAdded', 'TaintRemoved')).toEqual([
      `${unknownAt} TaintAdded a-1 unreachable:NoSchedule`,
      `${noExecuteAt} TaintAdded a-1 unreachable:NoExecute`,
      `${backAt} TaintRemoved a-1 unreachable:NoSchedule`,
      `${backAt} TaintRemoved a-1 unreachable:NoExecute`,
    ]);
  });

  it("cancels web-1's pending deletion when the NoExecute taint goes", () => {
    expect(linesOf(result, 'Event').filter((l) => l.includes('Cancelling') && l.includes('web-1'))).toEqual([
      `${backAt} Event TaintManagerEviction Pod/default/web-1 Cancelling`,
    ]);
  });

  // The whole taint-eviction event trail, as upstream records it: one "Marking for deletion" per
  // deleted pod, one "Cancelling deletion" per stopped timer.
  it('records exactly the TaintManagerEviction events upstream records', () => {
    expect(linesOf(result, 'Event').filter((l) => l.includes('TaintManagerEviction'))).toEqual([
      `${noExecuteAt} Event TaintManagerEviction Pod/default/now-1 Marking`,
      `${noExecuteAt + 60} Event TaintManagerEviction Pod/default/quick-1 Marking`,
      `${backAt} Event TaintManagerEviction Pod/default/web-1 Cancelling`,
    ]);
  });
});
