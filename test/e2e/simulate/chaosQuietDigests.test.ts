// Quiet digests (docs/relay.md, "Quiet digests") under delivery chaos: with the relay sending a digest
// every 15 s while nothing goes on, a run whose events are duplicated, late, failing (retried as Lambda
// retries) or dead-lettered outright (quiet digests lost among them) must end where a calm run with a
// digest every period ends. The scenario has a healthy stretch (quiet digests), a relay restart (a new
// term: digests every period again, then quiet), and a node failure whose pods are evicted.
import { describe, expect, it } from 'vitest';
import { parseChaos } from '../../../local/simulate/chaos.js';
import { parseScenarioDocument } from '../../../local/simulate/scenario.js';
import { runSimulation, type SimulationOptions } from '../../../local/simulate/simulation.js';
import { finalStateOf } from '../../../scripts/chaos.js';
import { finalState } from './chaosHelpers.js';
import { failures } from './helpers.js';

const Scenario = `
name: quiet digests, a relay restart, a node failure
duration: 16m
nodes:
  - generate: { prefix: a-, count: 3, zone: zone-a, region: region-1 }
  - generate: { prefix: b-, count: 3, zone: zone-b, region: region-1 }
pods:
  - generate: { prefix: app-, perNode: 1, nodes: '*' }
  - name: batch-1
    node: a-1
    defaultTolerations: false
timeline:
  - at: 3m
    restartRelay: {}
  - at: 6m
    stopKubelet: a-1
`;
const scenario = parseScenarioDocument(Scenario, 'quiet-digests-chaos.yaml');
const Quiet = { relayQuietDigestPeriod: 'asDeployed' } as const;
const Seeds = Array.from({ length: 20 }, (_, i) => i + 1);

async function run(options: SimulationOptions) {
  let monitorPasses = 0;
  const result = await runSimulation(scenario, {
    ...options,
    onInvocation: (_t, invocation) => {
      if (invocation.function === 'monitorNodeHealth') monitorPasses++;
    },
  });
  return { result, monitorPasses };
}

/** What `npm run chaos` compares (nodes' Ready and taints, pods deleted, their Events), and the Summary. */
const endOf = (result: Awaited<ReturnType<typeof run>>['result']) => ({
  summary: finalState(result),
  end: finalStateOf(result.lines),
});

describe('quiet digests under --chaos', () => {
  it('a calm run with quiet digests ends as one with a digest every period, with fewer passes', async () => {
    const everyPeriod = await run({});
    const quiet = await run(Quiet);
    expect(endOf(quiet.result)).toEqual(endOf(everyPeriod.result));
    // The node failed and its pods went (batch-1 at once, app-a-1 after its 300 s): not a trivial end.
    const { summary } = endOf(everyPeriod.result);
    expect(summary.nodes.find((n) => n.node === 'a-1')?.ready).toBe('Unknown');
    expect(summary.evictions).toBe(2);
    expect(quiet.monitorPasses).toBeLessThan(everyPeriod.monitorPasses);
  }, 60_000);

  it.each([
    ['duplicates=3,maxDelay=5s,failures=0.05', 'duplicated, late and failing'],
    ['deadLetter=0.1', 'dead-lettered (digests lost), and a little of the rest'],
  ])(
    `%s (%s): ends as the calm run, for seeds 1-${Seeds.length}`,
    async (profile) => {
      const expected = endOf((await run({})).result);
      let deadLettered = 0;
      for (const seed of Seeds) {
        const { result } = await run({ ...Quiet, chaos: parseChaos(`${profile},seed=${seed}`) });
        expect({ seed, state: endOf(result) }).toEqual({ seed, state: expected });
        expect({ seed, failures: failures(result) }).toEqual({ seed, failures: [] });
        deadLettered += result.stats.deliveries.deadLettered;
      }
      if (profile.startsWith('deadLetter')) expect(deadLettered).toBeGreaterThan(0);
    },
    240_000,
  );
});
