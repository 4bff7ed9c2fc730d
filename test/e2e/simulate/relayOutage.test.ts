// examples/scenarios/relay-outage.yaml: the relay is down from 1m to 3m.
//
// Derivation (docs/architecture.md#observation-gap; docs/upstream.md#node-health, #zone-states exit of master
// disruption for the fresh-probe rule it borrows; relay/probeTracker.ts: a first sighting is a baseline, not
// a probe):
// - 60 s: stopRelay comes before the relay's own 60 s digest: the last digest processed is the 55 s one.
//   No digest means no monitor pass: nothing can be marked Unknown during the outage.
// - 120 s: a-3's kubelet stops (an action comes before the kubelets' ticks: its last renewal was 110 s).
// - 180 s: a new relay lists everything and sends a digest at once (then every 5 s); it has observed no
//   renewal yet, so the digest carries no probe. The monitor sees 180 - 55 = 125 s since the last digest,
//   more than the 50 s grace: every node's probe and ready-transition time become 180 s. a-1 and a-2 are
//   probed again at 190 s (their renewals); a-3 never.
// - a-3: the first pass with now > 180 + 50 = 230 → 235 s: Unknown, NodeNotReady, its pod NotReady,
//   unreachable:NoSchedule; NoExecute in the same pass, 235 s (processTaintBaseEviction decides on the
//   Ready condition the pass leaves: PR #120816, from v1.34; the default emulationVersion is 1.37); the
//   pod's 300 s toleration (admission's default) ends at 535 s: deleted then, before the end (750 s).
// - a-1, a-2: never Unknown.
import { beforeAll, describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../../local/simulate/simulation.js';
import { failures, firstPassAfter, linesOf, runExample, summaryOf } from './helpers.js';

const relayBackAt = 180;
const unknownAt = firstPassAfter(relayBackAt + 50); // 235
const noExecuteAt = unknownAt; // the same pass from v1.34 (PR #120816): 235

let result: SimulationResult;
beforeAll(async () => {
  result = await runExample('relay-outage');
}, 60_000);

describe('examples/scenarios/relay-outage.yaml', () => {
  it('runs without a failed function', () => {
    expect(failures(result)).toEqual([]);
  });

  it('finds a 125 s observation gap when digests resume (180 s back, 55 s the last one)', () => {
    const gaps = result.diagnostics.filter((d) => d.message.startsWith('observation gap: digests resumed'));
    expect(gaps.map((d) => [d.t, d.fields?.gapSeconds])).toEqual([[relayBackAt, relayBackAt - 55]]);
  });

  it('marks no healthy node Unknown for the observation gap', () => {
    expect(
      result.lines.filter((l) => l.kind === 'NodeCondition' && l.node !== 'a-3').map((l) => l.kind),
    ).toEqual([]);
  });

  it('marks the node that died during the outage a grace period after the relay is back', () => {
    expect(linesOf(result, 'NodeCondition', 'PodNotReady', 'TaintAdded')).toEqual([
      `${unknownAt} NodeCondition a-3 MemoryPressure=Unknown`,
      `${unknownAt} NodeCondition a-3 DiskPressure=Unknown`,
      `${unknownAt} NodeCondition a-3 PIDPressure=Unknown`,
      `${unknownAt} NodeCondition a-3 Ready=Unknown`,
      `${unknownAt} PodNotReady default/app-a-3-1`,
      `${unknownAt} TaintAdded a-3 unreachable:NoSchedule`,
      `${noExecuteAt} TaintAdded a-3 unreachable:NoExecute`,
    ]);
    expect(linesOf(result, 'PodDeleted')).toEqual([
      `${noExecuteAt + 300} PodDeleted default/app-a-3-1 TaintManagerEviction`,
    ]);
  });

  it('registers nothing again when the new relay lists the nodes', () => {
    expect(
      result.lines.filter((l) => l.kind === 'Event' && l.reason === 'RegisteredNode').map((l) => l.t),
    ).toEqual([0, 0, 0]);
    expect(summaryOf(result).zones).toEqual([
      { zone: 'region-1:zone-a', state: 'Normal', size: 3, unhealthy: 1 },
    ]);
  });
});
