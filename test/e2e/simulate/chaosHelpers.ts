// Shared by the `--chaos` tests: every example scenario must end in the same state whatever the
// delivery does (duplicates, delays, failures with Lambda's retries), under several seeds.
import { readFile } from 'node:fs/promises';
import type { ChaosSettings } from '../../../local/simulate/chaos.js';
import { parseScenario } from '../../../local/simulate/scenario.js';
import { runSimulation, type SimulationResult } from '../../../local/simulate/simulation.js';
import type { SummaryRecord } from '../../../local/simulate/timeline.js';
import { examplesDir, summaryOf } from './helpers.js';

/**
 * Delivery as on a bad day, yet one a system with retries and alarms lives with: up to 3 copies of
 * everything, each up to 5 s late, 1 attempt in 20 failing (so 1 in 8,000 deliveries dead-lettered).
 */
export const Chaos = { duplicates: 3, maxDelayMs: 5_000, failures: 0.05 } as const;
export const Seeds = [1, 2, 3] as const;

export async function runExampleWith(name: string, chaos?: ChaosSettings): Promise<SimulationResult> {
  const file = new URL(`${name}.yaml`, examplesDir);
  const scenario = parseScenario(await readFile(file, 'utf8'), `${name}.yaml`);
  return runSimulation(scenario, chaos === undefined ? {} : { chaos });
}

/** The final state, comparable: the Summary without the delivery counts, each node's taints as a set. */
export function finalState(result: SimulationResult): Omit<SummaryRecord, 'deliveries'> {
  const { deliveries: _counts, ...summary } = summaryOf(result);
  return {
    ...summary,
    nodes: summary.nodes.map((n) => ({
      ...n,
      taints: [...n.taints].sort((a, b) => `${a.key}:${a.effect}`.localeCompare(`${b.key}:${b.effect}`)),
    })),
  };
}
