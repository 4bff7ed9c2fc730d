// Fault: every event delivered ten times, reordered across types (EventBridge and Lambda's asynchronous
// invocations are at-least-once and unordered). Each delivery of every Node Changed, Pod Changed,
// Heartbeat Digest, schedule firing and drainer invocation arrives 1 to 10 times, each copy up to 10 s
// late (nlc simulate --chaos, local/simulate/chaos.ts). The scenario must end as without, with no taint
// written twice and no pod deleted or marked NotReady twice (the zone queues are sets: a node is never
// queued twice by construction).
import { describe, expect, it } from 'vitest';
import type { TimelineLine } from '../../local/simulate/timeline.js';
import { finalState, runExampleWith } from '../e2e/simulate/chaosHelpers.js';
import { failures } from '../e2e/simulate/helpers.js';

const tenTimes = { duplicates: 10, maxDelayMs: 10_000, failures: 0 };

/** TaintAdded lines that add a taint the node already has (no TaintRemoved of it in between). */
function doubleTaints(lines: readonly TimelineLine[]): string[] {
  const present = new Set<string>();
  const doubles: string[] = [];
  for (const line of lines) {
    if (line.kind !== 'TaintAdded' && line.kind !== 'TaintRemoved') continue;
    const id = `${line.node} ${line.key}:${line.effect}`;
    if (line.kind === 'TaintRemoved') present.delete(id);
    else if (present.has(id)) doubles.push(`${line.t} ${id}`);
    else present.add(id);
  }
  return doubles;
}

const deletedTwice = (lines: readonly TimelineLine[]): string[] => {
  const pods = lines.flatMap((l) => (l.kind === 'PodDeleted' ? [l.pod] : []));
  return pods.filter((pod, i) => pods.indexOf(pod) !== i);
};

describe.each(['single-node-failure', 'not-ready-unreachable-swap', 'all-zones-down'])(
  'examples/scenarios/%s.yaml with every delivery up to ten times, reordered',
  (name) => {
    it('ends as without: no taint written twice, no pod deleted or marked NotReady twice', async () => {
      const calm = await runExampleWith(name);
      for (const seed of [1, 2]) {
        const noisy = await runExampleWith(name, { ...tenTimes, seed });
        expect(failures(noisy)).toEqual([]);
        expect({ seed, state: finalState(noisy) }).toEqual({ seed, state: finalState(calm) });
        expect(doubleTaints(noisy.lines)).toEqual([]);
        expect(deletedTwice(noisy.lines)).toEqual([]);
        // Each pod marked NotReady once per node failure, as without duplicates.
        expect(noisy.lines.filter((l) => l.kind === 'PodNotReady').length).toBe(
          calm.lines.filter((l) => l.kind === 'PodNotReady').length,
        );
        expect(noisy.stats.deliveries.deliveries).toBeGreaterThan(2 * calm.stats.deliveries.deliveries);
      }
    }, 300_000);
  },
);
