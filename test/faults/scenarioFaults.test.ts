// Faults as scenarios: each situation of the issue that made the controller believe something false
// for good, reproduced end to end by `nlc simulate` (the real relay, functions, stores and API
// simulator), and the truth it must end in. The unit and function-level tests beside this file prove
// each mechanism; these prove the whole system, through the same scenario actions an operator can run.
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../local/simulate/scenario.js';
import { runSimulation, type SimulationResult } from '../../local/simulate/simulation.js';
import { parseChaos } from '../../local/simulate/chaos.js';
import type { TimelineLine } from '../../local/simulate/timeline.js';

type Line = TimelineLine & Record<string, unknown>;

async function run(text: string, chaos?: string): Promise<SimulationResult> {
  return runSimulation(
    parseScenario(text, 'fault.yaml'),
    chaos === undefined ? {} : { chaos: parseChaos(chaos) },
  );
}

const lines = (result: SimulationResult, kind: string): Line[] =>
  result.lines.filter((l) => l.kind === kind) as Line[];
const errors = (result: SimulationResult) => result.diagnostics.filter((d) => d.level === 'error');
/** When `node` was first marked Ready=Unknown, in seconds. */
const markedAt = (result: SimulationResult, node: string): number | undefined =>
  lines(result, 'NodeCondition').find((l) => l.node === node && l.type === 'Ready' && l.status === 'Unknown')
    ?.t;
const summaryNode = (result: SimulationResult, node: string) =>
  (
    lines(result, 'Summary')[0]?.nodes as {
      node: string;
      ready: string;
      taints: { key: string; effect: string }[];
    }[]
  ).find((n) => n.node === node);
const deleted = (result: SimulationResult): string[] =>
  lines(result, 'PodDeleted')
    .map((l) => String(l.pod))
    .sort();

const grace = 50;
const period = 5;

describe('a recovered node under delivery chaos', () => {
  it('is untainted and keeps its pod, as without chaos (daemonset-and-tolerations, seed 11)', async () => {
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(
      new URL('../../examples/scenarios/daemonset-and-tolerations.yaml', import.meta.url),
      'utf8',
    );
    const calm = await run(text);
    const chaotic = await run(text, 'duplicates=10,maxDelay=10s,seed=11');
    expect(errors(chaotic)).toEqual([]);
    expect(summaryNode(chaotic, 'a-1')).toEqual(summaryNode(calm, 'a-1'));
    expect(summaryNode(chaotic, 'a-1')?.taints).toEqual([]);
    expect(deleted(chaotic)).toEqual(deleted(calm));
    expect(deleted(chaotic)).not.toContain('default/web-1');
    // One "Marking for deletion" per deleted pod.
    const marking = lines(chaotic, 'Event').filter((l) =>
      String(l.message).startsWith('Marking for deletion'),
    );
    expect(marking.map((l) => l.object).sort()).toEqual(deleted(chaotic).map((p) => `Pod/${p}`));
  }, 120_000);
});

describe('relay terms and clocks', () => {
  const base = (timeline: string, extra = '') => `
duration: 5m
${extra}
nodes:
  - generate: { prefix: a-, count: 3, zone: zone-a, region: region-1 }
pods:
  - { name: web-1, node: a-1 }
timeline:
${timeline}`;

  it('a short relay term on a host 60 s ahead fences nothing: a node dying after it is marked on time', async () => {
    const result = await run(
      base(`  - { at: 20s, restartRelay: { clockSkew: +60s } }
  - { at: 40s, restartRelay: {} }
  - { at: 65s, stopKubelet: a-1 }`),
    );
    expect(errors(result)).toEqual([]);
    // Last renewal at 60 s: marked at the first pass past 60 s + grace, within two periods.
    expect(markedAt(result, 'a-1')).toBeLessThanOrEqual(60 + grace + 2 * period);
    expect(summaryNode(result, 'a-1')?.taints).toContainEqual({
      key: 'node.kubernetes.io/unreachable',
      effect: 'NoExecute',
    });
  }, 60_000);

  it('a relay term on a clock stepped +10 min, then one on a good clock: no probe stays in the future', async () => {
    const result = await run(
      base(`  - { at: 30s, restartRelay: { clockSkew: +10m } }
  - { at: 40s, restartRelay: {} }
  - { at: 65s, stopKubelet: a-1 }`),
    );
    expect(errors(result)).toEqual([]);
    // The relay of 30 s read its host's clock 10 minutes ahead; the one of 40 s a good clock. a-1 renews
    // last at 60 s: marked within grace and two periods of it, not 10 minutes later.
    expect(markedAt(result, 'a-1')).toBeLessThanOrEqual(60 + grace + 2 * period);
  }, 60_000);

  it('a forged digest dated year 9999 is refused and disables nothing', async () => {
    const result = await run(
      base(`  - { at: 22s, injectEvent: { detailType: Heartbeat Digest, detail: { observedAt: "9999-01-01T00:00:00.000Z" } } }
  - { at: 35s, stopKubelet: a-1 }`),
    );
    expect(errors(result)).toEqual([]);
    expect(markedAt(result, 'a-1')).toBeLessThanOrEqual(30 + grace + 2 * period);
  }, 60_000);
});

describe('forged and stale events', () => {
  const healthy = (timeline: string) => `
duration: 3m
nodes:
  - generate: { prefix: a-, count: 3, zone: zone-a, region: region-1 }
pods:
  - { name: web-1, node: a-2 }
  - { name: batch-1, node: a-2, defaultTolerations: false }
timeline:
${timeline}`;

  it('a forged Node Changed with a NoExecute taint on a healthy node deletes nothing, taints nothing', async () => {
    const result = await run(
      healthy(`  - at: 30s
    injectEvent:
      detailType: Node Changed
      detail:
        node:
          name: a-2
          resourceVersion: "999999999"
          taints: [{ key: node.kubernetes.io/unreachable, effect: NoExecute }]
          conditions: [{ type: Ready, status: "False" }]`),
    );
    expect(errors(result)).toEqual([]);
    expect(lines(result, 'PodDeleted')).toEqual([]);
    expect(lines(result, 'TaintAdded')).toEqual([]);
    expect(summaryNode(result, 'a-2')).toMatchObject({ ready: 'True', taints: [] });
  }, 60_000);

  it('an absurd resourceVersion freezes the copy no more: a real NotReady after it is tainted', async () => {
    const result = await run(
      healthy(`  - { at: 20s, injectEvent: { detailType: Node Changed, detail: { node: { name: a-2, resourceVersion: "999999999" } } } }
  - { at: 40s, setCondition: { node: a-2, type: Ready, status: "False" } }`),
    );
    expect(errors(result)).toEqual([]);
    const taints = lines(result, 'TaintAdded')
      .filter((l) => l.node === 'a-2')
      .map((l) => `${String(l.key)}:${String(l.effect)}`);
    expect(taints).toContain('node.kubernetes.io/not-ready:NoSchedule');
    expect(taints).toContain('node.kubernetes.io/not-ready:NoExecute');
    expect(deleted(result)).toEqual(['default/batch-1']);
  }, 60_000);

  it('an etcd restore moves resourceVersions back: a node that goes NotReady after it is tainted', async () => {
    const result = await run(
      healthy(`  - { at: 60s, restoreApiServer: 50s }
  - { at: 80s, setCondition: { node: a-2, type: Ready, status: "False" } }`),
    );
    expect(errors(result)).toEqual([]);
    const taints = lines(result, 'TaintAdded')
      .filter((l) => l.node === 'a-2')
      .map((l) => `${String(l.key)}:${String(l.effect)}`);
    expect(taints).toContain('node.kubernetes.io/not-ready:NoSchedule');
    expect(taints).toContain('node.kubernetes.io/not-ready:NoExecute');
  }, 60_000);
});

describe('the rate limit on the API server clock', () => {
  it('under --chaos, no window holds more NoExecute taints of one zone than burst + qps × window', async () => {
    // Four of a zone's ten nodes fail together: 40 % is under the 55 % threshold, so the zone stays
    // Normal and taints at nodeEvictionRate, 0.1/s, burst 1 (upstream's handleDisruption).
    const text = `
duration: 6m
nodes:
  - generate: { prefix: a-, count: 10, zone: zone-a, region: region-1 }
  - generate: { prefix: b-, count: 10, zone: zone-b, region: region-1 }
timeline:
  - { at: 35s, stopKubelet: [a-1, a-2, a-3, a-4] }`;
    for (const seed of Array.from({ length: 20 }, (_, i) => i + 1)) {
      const result = await run(text, `duplicates=3,maxDelay=30s,failures=0.2,seed=${seed}`);
      const times = lines(result, 'TaintAdded')
        .filter((l) => l.effect === 'NoExecute')
        .map((l) => l.t)
        .sort((a, b) => a - b);
      expect(times.length, `seed ${seed}`).toBe(4);
      // burst 1, qps 0.1: within any window w, at most 1 + 0.1 w taints.
      for (let i = 0; i < times.length; i++) {
        for (let j = i + 1; j < times.length; j++) {
          // Times are printed in seconds with millisecond places: a millisecond of rounding slack.
          const window = (times[j] ?? 0) - (times[i] ?? 0) + 0.001;
          expect(j - i + 1, `seed ${seed}: ${j - i + 1} taints within ${window}s`).toBeLessThanOrEqual(
            1 + 0.1 * window,
          );
        }
      }
    }
  }, 180_000);
});
