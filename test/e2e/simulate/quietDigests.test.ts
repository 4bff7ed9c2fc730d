// Quiet digests (docs/relay.md, "Quiet digests") change when digests go out, never what the controller
// decides or when: every example scenario, run with the relays' quiet period as deployed (15 s) and with
// a digest every period (nlc simulate's default), gives the very same lines, times included, with far fewer invocations while the
// clusters are healthy. (During a disruption there may be a few more: a pass starts the drainer for what
// is due before the next pass, which a quiet period puts further away.)
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseScenarioDocument } from '../../../local/simulate/scenario.js';
import { runSimulation, type SimulationOptions } from '../../../local/simulate/simulation.js';
import { examplesDir } from './helpers.js';

const examples = readdirSync(examplesDir)
  .filter((file) => file.endsWith('.yaml'))
  .map((file) => file.replace(/\.yaml$/, ''))
  .sort();

async function run(name: string, options: SimulationOptions) {
  const text = await readFile(new URL(`${name}.yaml`, examplesDir), 'utf8');
  let invocations = 0;
  const result = await runSimulation(parseScenarioDocument(text, `${name}.yaml`), {
    ...options,
    onInvocation: () => {
      invocations++;
    },
  });
  return { lines: result.lines, invocations };
}

describe('quiet digests decide as digests every period', () => {
  it('has examples to run', () => {
    expect(examples.length).toBeGreaterThanOrEqual(10);
  });

  it.each(examples)(
    '%s: the same lines, at the same times',
    async (name) => {
      const everyPeriod = await run(name, {});
      const quiet = await run(name, { relayQuietDigestPeriod: 'asDeployed' });
      expect(quiet.lines).toEqual(everyPeriod.lines);
    },
    60_000,
  );

  it.each([
    ['node-failure-after-an-hour', 0.6],
    ['zone-failure-after-30m', 0.7],
  ])(
    '%s: a healthy hour costs far fewer invocations (at most %s of them)',
    async (name, share) => {
      const everyPeriod = await run(name, {});
      const quiet = await run(name, { relayQuietDigestPeriod: 'asDeployed' });
      expect(quiet.invocations).toBeLessThan(everyPeriod.invocations * share);
    },
    60_000,
  );
});
