// The relay's clock against the functions' clock, end to end: a relay from 2 minutes behind to 2 minutes
// ahead changes no timeline. The monitor decides on the relay's clock (a digest's observedAt) and stamps
// the zone queues with it; the drainer carries the relay's clock forward from the last committed digest
// (shared/app/relayClock.ts) and the pod eviction timers run on the functions' clock. Before, a relay
// ahead of the functions stopped all NoExecute tainting (the queue head was never due).
//
// The scenario: a zone of four nodes dies after 30 s (their last renewal), in a two-zone cluster, with
// one pod per node tolerating unreachable for 300 s (the API's default). Derived as in
// zoneFailureAfter30m's test: Unknown at the first pass after 30 + 50 s (85 s), queued in that same pass
// (PR #120816, from v1.34; the default emulationVersion is 1.37), tainted one node every 10 s (85, 95,
// 105, 115 s), each pod deleted 300 s after its node's taint.
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../../local/simulate/scenario.js';
import { runSimulation } from '../../../local/simulate/simulation.js';
import { failures, linesOf } from './helpers.js';

const scenario = (skew: string): string => `
name: relay clock skew ${skew}
relayClockSkew: "${skew}"
duration: 7m
nodes:
  - generate: { prefix: a-, count: 3, zone: zone-a, region: region-1 }
  - generate: { prefix: b-, count: 4, zone: zone-b, region: region-1 }
pods:
  - generate: { prefix: app-, perNode: 1, nodes: 'b-*' }
timeline:
  - { at: 35s, stopKubelet: 'b-*' }
`;

const expected = [
  ...['b-1', 'b-2', 'b-3', 'b-4'].map((n) => `85 NodeCondition ${n} Ready=Unknown`),
  ...['b-1', 'b-2', 'b-3', 'b-4'].map((n) => `85 TaintAdded ${n} unreachable:NoSchedule`),
  ...['b-1', 'b-2', 'b-3', 'b-4'].map((n, i) => `${85 + 10 * i} TaintAdded ${n} unreachable:NoExecute`),
  ...['b-1', 'b-2', 'b-3', 'b-4'].map(
    (n, i) => `${385 + 10 * i} PodDeleted default/app-${n}-1 TaintManagerEviction`,
  ),
];

describe('relay clock skew from -2 min to +2 min (scenario key relayClockSkew)', () => {
  it.each(['-2m', '-1m', '-1s', '0s', '+1s', '+1m', '+2m'])(
    'a relay %s off the functions’ clock gives the same timeline',
    async (skew) => {
      const result = await runSimulation(parseScenario(scenario(skew), 'skew.yaml'));
      expect(failures(result)).toEqual([]);
      const lines = linesOf(result, 'NodeCondition', 'TaintAdded', 'PodDeleted').filter(
        (l) => !/ (MemoryPressure|DiskPressure|PIDPressure)=/.test(l),
      );
      const order = (l: string) => Number(l.split(' ')[0]);
      expect([...lines].sort((a, b) => order(a) - order(b) || a.localeCompare(b))).toEqual(
        [...expected].sort((a, b) => order(a) - order(b) || a.localeCompare(b)),
      );
    },
    60_000,
  );
});
