// The issue's budget, measured, not asserted (machines are shared and noisy): "a 15-minute scenario with
// 30 nodes runs in seconds". The run's wall time is printed; the test asserts only that the run is
// complete and right.
//
// Derivation of the lines checked (as in single-node-failure.test.ts): three nodes in three zones stop at
// 35 s after their 30 s renewal → Unknown at 85 s, NoExecute in that same pass, 85 s (PR #120816, from
// v1.34; the default emulationVersion is 1.37), in each zone (each zone has its own full bucket), their
// pods (300 s) deleted at 385 s.
import { describe, expect, it } from 'vitest';
import { scenarioFromObject } from '../../../local/simulate/scenario.js';
import { runSimulation } from '../../../local/simulate/simulation.js';
import { failures, linesWhere } from './helpers.js';

const scenario = scenarioFromObject(
  {
    name: '30 nodes, 15 minutes',
    duration: '15m',
    nodes: ['a', 'b', 'c'].map((z) => ({
      generate: { prefix: `${z}-`, count: 10, zone: `zone-${z}`, region: 'r' },
    })),
    pods: [{ generate: { prefix: 'app-', perNode: 2, nodes: '*' } }],
    timeline: [{ at: '35s', stopKubelet: ['a-1', 'b-1', 'c-1'] }],
  },
  'performance',
);

describe('a 15-minute scenario with 30 nodes', () => {
  it('runs in seconds (reported, not asserted)', async () => {
    const result = await runSimulation(scenario);
    const { wallMs, invocations, eventsPublished, apiRequests } = result.stats;
    console.log(
      `simulate: 15m of virtual time, 30 nodes, 60 pods: ${(wallMs / 1000).toFixed(2)} s wall; ` +
        `${Object.values(invocations).reduce((a, b) => a + b, 0)} function invocations ${JSON.stringify(invocations)}, ` +
        `${eventsPublished} events, ${apiRequests} API requests`,
    );
    expect(failures(result)).toEqual([]);
    expect(linesWhere(result, (l) => l.kind === 'TaintAdded' && l.effect === 'NoExecute')).toEqual([
      '85 TaintAdded a-1 unreachable:NoExecute',
      '85 TaintAdded b-1 unreachable:NoExecute',
      '85 TaintAdded c-1 unreachable:NoExecute',
    ]);
    expect(result.lines.filter((l) => l.kind === 'PodDeleted').map((l) => l.t)).toEqual(Array(6).fill(385));
  }, 120_000);
});
