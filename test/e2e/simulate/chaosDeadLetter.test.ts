// `nlc simulate --chaos deadLetter=Q`: a delivery dead-lettered outright is never attempted and never
// retried. At 1 no function ever runs; at 0 a run is the run without the key, byte for byte.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseChaos } from '../../../local/simulate/chaos.js';
import { toJsonLines } from '../../../local/simulate/timeline.js';
import { runCli } from '../../integration/cli/helpers.js';
import { runExampleWith } from './chaosHelpers.js';
import { examplesDir, summaryOf } from './helpers.js';

describe('--chaos deadLetter', () => {
  it('deadLetter=1 dead-letters every delivery: no function runs, nothing is retried', async () => {
    const result = await runExampleWith('single-node-failure', parseChaos('deadLetter=1,failures=0,seed=3'));
    expect(result.stats.invocations).toEqual({});
    const { deliveries } = result.stats;
    expect(deliveries.deliveries).toBe(0);
    expect(deliveries.failures).toBe(0);
    // The relay kept publishing (a digest every 5 s, and the schedules fired): each copy was dropped.
    expect(deliveries.deadLettered).toBeGreaterThan(result.stats.eventsPublished);
    expect(summaryOf(result).deliveries).toEqual(deliveries);
    // Nothing the controller does reached the cluster: no record but the Summary, whose zones come
    // from a state no monitor pass ever wrote.
    expect(result.lines.map((l) => l.kind)).toEqual(['Summary']);
    expect(summaryOf(result).zones).toEqual([]);
    expect(result.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
    expect(
      result.diagnostics.filter((d) => d.message === 'chaos: the delivery was dead-lettered without a run'),
    ).toHaveLength(deliveries.deadLettered);
  }, 60_000);

  it('deadLetter=0 changes nothing: the same lines, byte for byte, as without the key', async () => {
    const spec = 'duplicates=3,maxDelay=5s,failures=0.05,seed=7';
    const without = await runExampleWith('single-node-failure', parseChaos(spec));
    const zero = await runExampleWith('single-node-failure', parseChaos(`${spec},deadLetter=0`));
    expect(toJsonLines(zero.lines)).toBe(toJsonLines(without.lines));
    expect(zero.stats.deliveries).toEqual(without.stats.deliveries);
  }, 60_000);

  it('deadLetter=0 on the command line: the same --json output, and the same closing line', async () => {
    const file = fileURLToPath(new URL('single-node-failure.yaml', examplesDir));
    const spec = 'duplicates=3,maxDelay=5s,failures=0.05,seed=7';
    const [without, zero] = await Promise.all([
      runCli(['simulate', '--json', '--chaos', spec, file]),
      runCli(['simulate', '--json', '--chaos', `deadLetter=0,${spec}`, file]),
    ]);
    expect(zero.code).toBe(0);
    expect(zero.stdout).toBe(without.stdout);
    const human = await runCli(['simulate', '--chaos', `${spec},deadLetter=0`, file]);
    expect(human.stderr).toMatch(
      /; chaos duplicates=3,maxDelay=5s,failures=0\.05,seed=7: \d+ deliveries, \d+ failed, \d+ dead-lettered\)\n$/,
    );
  }, 60_000);
});
