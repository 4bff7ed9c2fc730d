// `nlc simulate --chaos`: every example scenario ends in the same final state with duplicated, delayed
// and failing deliveries (retried as Lambda retries, then dead-lettered) as without, under several
// seeds; and a seed repeats its run byte for byte. The long examples are in chaosLong.test.ts (a file of
// their own, so the two run in parallel).
import { describe, expect, it } from 'vitest';
import { toJsonLines } from '../../../local/simulate/timeline.js';
import { Chaos, finalState, runExampleWith, Seeds } from './chaosHelpers.js';
import { failures } from './helpers.js';

const examples = [
  'all-zones-down',
  'daemonset-and-tolerations',
  'legacy-mode',
  'node-failure-after-status-post',
  'not-ready-unreachable-swap',
  'relay-outage',
  'single-node-failure',
  'stalled-lease-watch',
];

describe.each(examples)('examples/scenarios/%s.yaml under --chaos', (name) => {
  it(`ends in the same state as without, for seeds ${Seeds.join(', ')}`, async () => {
    const calm = await runExampleWith(name);
    const expected = finalState(calm);
    for (const seed of Seeds) {
      const chaotic = await runExampleWith(name, { ...Chaos, seed });
      expect({ seed, state: finalState(chaotic) }).toEqual({ seed, state: expected });
      expect(failures(chaotic)).toEqual([]);
      // The chaos happened: more deliveries than without (copies, retries), some of them failed.
      expect(chaotic.stats.deliveries.deliveries).toBeGreaterThan(calm.stats.deliveries.deliveries);
      expect(chaotic.stats.deliveries.failures).toBeGreaterThan(0);
    }
  }, 120_000);
});

describe('--chaos is reproducible', () => {
  it('the same seed gives the same output, byte for byte; another seed another run', async () => {
    const settings = { ...Chaos, seed: 11 };
    const first = await runExampleWith('single-node-failure', settings);
    const again = await runExampleWith('single-node-failure', settings);
    const other = await runExampleWith('single-node-failure', { ...settings, seed: 12 });
    expect(toJsonLines(again.lines)).toBe(toJsonLines(first.lines));
    expect(toJsonLines(other.lines)).not.toBe(toJsonLines(first.lines));
    expect(first.lines.at(-1)).toMatchObject({ kind: 'Summary', deliveries: first.stats.deliveries });
  }, 60_000);
});
