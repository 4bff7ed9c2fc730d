// `nlc simulate --chaos` on the long examples (a zone tainted at its rate for minutes, a failure after
// an hour): the same final state with duplicated, delayed and failing deliveries as without, under
// several seeds. See chaos.test.ts.
import { describe, expect, it } from 'vitest';
import { Chaos, finalState, runExampleWith, Seeds } from './chaosHelpers.js';
import { failures } from './helpers.js';

describe.each(['zone-partial-disruption', 'zone-failure-after-30m', 'node-failure-after-an-hour'])(
  'examples/scenarios/%s.yaml under --chaos',
  (name) => {
    it(`ends in the same state as without, for seeds ${Seeds.join(', ')}`, async () => {
      const expected = finalState(await runExampleWith(name));
      for (const seed of Seeds) {
        const chaotic = await runExampleWith(name, { ...Chaos, seed });
        expect({ seed, state: finalState(chaotic) }).toEqual({ seed, state: expected });
        expect(failures(chaotic)).toEqual([]);
        expect(chaotic.stats.deliveries.failures).toBeGreaterThan(0);
      }
    }, 300_000);
  },
);
