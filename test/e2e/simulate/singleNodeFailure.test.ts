// examples/scenarios/single-node-failure.yaml: one kubelet dies, upstream defaults everywhere.
//
// Derivation (docs/upstream.md#node-health, #monitor-pass, #taint-based-eviction, #noexecute-tainting-pass,
// #taint-eviction-controller, #defaulttolerationseconds, #timeline; the numbers are computed below from these
// rules, not copied from a run):
// - Kubelets renew their lease at 0, 10, 20, 30 s (docs/simulate.md). The action at 35 s comes after the
//   30 s renewal, which the relay observed at 30 s: a-1's last probe is 30 s.
// - Monitor passes run every 5 s from 0. tryUpdateNodeHealth marks Unknown when now is strictly after
//   probe + nodeMonitorGracePeriod (50 s): 30 + 50 = 80 is not after 80, so the 85 s pass. It sets Ready,
//   MemoryPressure, DiskPressure and PIDPressure to Unknown (NodeStatusUnknown), in the node's order.
//   The same pass records NodeNotReady on the node and runs MarkPodsNotReady: each Ready pod gets
//   Ready=False and a Warning NodeNotReady, in the order the pods are listed (by name).
// - doNoScheduleTaintingPass reacts to the node update at once: unreachable:NoSchedule at 85 s.
// - processTaintBaseEviction decides on the Ready condition as the pass leaves it (currentReadyCondition,
//   from v1.34: PR #120816, fixing issue #120815; the default emulationVersion is 1.37), so the node is
//   queued in the same pass, 85 s; the zone's token bucket is full (burst 1): NoExecute at 85 s.
// - The taint eviction controller: batch-1 tolerates nothing (admission skipped): deleted at once, 85 s;
//   web-1 has DefaultTolerationSeconds' unreachable:NoExecute for 300 s: deleted at 85 + 300 = 385 s,
//   each deletion after the TaintManagerEviction "Marking for deletion" event.
// - At emulationVersion 1.33 (before PR #120816) processTaintBaseEviction decides on the Ready condition
//   the pass found (observedReadyCondition: still True at 85 s), so the node is queued one pass later:
//   NoExecute at 90 s, batch-1 deleted at 90 s, web-1 at 390 s. Its grace period is 50 s too (the 50s
//   default is from v1.32), so the Unknown marks and the NoSchedule taint stay at 85 s.
// - The first pass (t = 0) registers every node and moves the zone Initial → Normal; 1 unhealthy node
//   of 3 keeps it Normal (PartialDisruption needs more than 2).
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

const stopAt = 35;
const grace = 50;
const lastProbe = lastRenewalAtOrBefore(stopAt); // 30
const unknownAt = firstPassAfter(lastProbe + grace); // 85
const noExecuteAt = unknownAt; // the same pass from v1.34 (PR #120816): 85
const tolerationSeconds = 300;

let result: SimulationResult;
beforeAll(async () => {
  result = await runExample('single-node-failure');
}, 60_000);

describe('examples/scenarios/single-node-failure.yaml', () => {
  it('runs without a failed function', () => {
    expect(failures(result)).toEqual([]);
  });

  it('registers the nodes and the zone in the first pass', () => {
    expect(linesOf(result, 'ZoneState')).toEqual(['0 ZoneState region-1:zone-a Initial→Normal']);
    expect(
      result.lines.filter((l) => l.kind === 'Event' && l.reason === 'RegisteredNode').map((l) => l.t),
    ).toEqual([0, 0, 0]);
  });

  it('marks a-1 Unknown a grace period after its last renewal, with its pods', () => {
    expect(linesOf(result, 'NodeCondition', 'PodNotReady')).toEqual([
      `${unknownAt} NodeCondition a-1 MemoryPressure=Unknown`,
      `${unknownAt} NodeCondition a-1 DiskPressure=Unknown`,
      `${unknownAt} NodeCondition a-1 PIDPressure=Unknown`,
      `${unknownAt} NodeCondition a-1 Ready=Unknown`,
      `${unknownAt} PodNotReady default/batch-1`,
      `${unknownAt} PodNotReady default/web-1`,
    ]);
    expect(linesOf(result, 'Event').filter((l) => l.includes('NodeNotReady'))).toEqual([
      `${unknownAt} Event NodeNotReady Node/a-1`,
      `${unknownAt} Event NodeNotReady Pod/default/batch-1`,
      `${unknownAt} Event NodeNotReady Pod/default/web-1`,
    ]);
  });

  it('taints NoSchedule and NoExecute in the pass that marks a-1 Unknown', () => {
    expect(linesOf(result, 'TaintAdded', 'TaintRemoved')).toEqual([
      `${unknownAt} TaintAdded a-1 unreachable:NoSchedule`,
      `${noExecuteAt} TaintAdded a-1 unreachable:NoExecute`,
    ]);
  });

  it('deletes the untolerating pod at once and the default-tolerating one 300 s later', () => {
    expect(linesOf(result, 'PodDeleted')).toEqual([
      `${noExecuteAt} PodDeleted default/batch-1 TaintManagerEviction`,
      `${noExecuteAt + tolerationSeconds} PodDeleted default/web-1 TaintManagerEviction`,
    ]);
    expect(linesOf(result, 'Event').filter((l) => l.includes('TaintManagerEviction'))).toEqual([
      `${noExecuteAt} Event TaintManagerEviction Pod/default/batch-1 Marking`,
      `${noExecuteAt + tolerationSeconds} Event TaintManagerEviction Pod/default/web-1 Marking`,
    ]);
  });

  it('ends with the zone Normal, a-1 Unknown and tainted, 2 evictions', () => {
    const summary = summaryOf(result);
    expect(summary.t).toBe(600);
    expect(summary.zones).toEqual([{ zone: 'region-1:zone-a', state: 'Normal', size: 3, unhealthy: 1 }]);
    expect(summary.nodes.map((n) => [n.node, n.ready, n.taints.map((t) => `${t.key}:${t.effect}`)])).toEqual([
      [
        'a-1',
        'Unknown',
        ['node.kubernetes.io/unreachable:NoSchedule', 'node.kubernetes.io/unreachable:NoExecute'],
      ],
      ['a-2', 'True', []],
      ['a-3', 'True', []],
    ]);
    expect(summary.evictions).toBe(2);
  });

  describe('at emulationVersion 1.33 (before PR #120816) taints NoExecute one pass later', () => {
    const noExecuteBefore134 = unknownAt + 5; // the next pass: 90

    let old: SimulationResult;
    beforeAll(async () => {
      old = await runExample('single-node-failure', { config: { emulationVersion: '1.33' } });
    }, 60_000);

    it('runs without a failed function', () => {
      expect(failures(old)).toEqual([]);
    });

    it('marks a-1 Unknown at 85 s all the same (the 50 s grace period is the default from v1.32)', () => {
      expect(
        old.lines.filter((l) => l.kind === 'NodeCondition' && l.type === 'Ready').map((l) => l.t),
      ).toEqual([unknownAt]);
    });

    it('taints NoExecute at the next pass, 90 s, and deletes the pods from there', () => {
      expect(linesOf(old, 'TaintAdded', 'TaintRemoved')).toEqual([
        `${unknownAt} TaintAdded a-1 unreachable:NoSchedule`,
        `${noExecuteBefore134} TaintAdded a-1 unreachable:NoExecute`,
      ]);
      expect(linesOf(old, 'PodDeleted')).toEqual([
        `${noExecuteBefore134} PodDeleted default/batch-1 TaintManagerEviction`,
        `${noExecuteBefore134 + tolerationSeconds} PodDeleted default/web-1 TaintManagerEviction`,
      ]);
    });
  });
});
