// What the report draws, from real runs of the examples (no browser: report.test.ts opens the page).
// The zones' limiter rates are upstream's setLimiterInZone (docs/simulate.md, the example's comments):
// - zone-partial-disruption.yaml: both zones Normal (0.1/s) from t = 0, PartialDisruption at 85 s; the
//   8-node zone's rate becomes 0 (not more than largeClusterSizeThreshold, 50), the 52-node zone's
//   secondaryNodeEvictionRate, 0.01/s. 60 nodes, more than the 50 drawn whole: only the 35 stopped get
//   a lane; the other 3 and 22 are counted.
// - all-zones-down.yaml: every zone FullDisruption at 85 s is master disruption: every limiter stops
//   (0); at 5m the zones go back to Normal and their limiters to 0.1/s.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  buildReportModel,
  naturalCompare,
  recordReport,
  type ReportModel,
} from '../../../local/simulate/report/index.js';
import { parseScenario } from '../../../local/simulate/scenario.js';
import { runSimulation } from '../../../local/simulate/simulation.js';
import { examplesDir } from './helpers.js';

async function modelOf(name: string): Promise<ReportModel> {
  const scenario = parseScenario(
    await readFile(new URL(`${name}.yaml`, examplesDir), 'utf8'),
    `${name}.yaml`,
  );
  const recorder = recordReport();
  const result = await runSimulation(scenario, { ...recorder.hooks });
  return buildReportModel({ scenario, lines: result.lines, ...recorder });
}

const compact = (segments: readonly { from: number; to: number; value: unknown }[]): string[] =>
  segments.map((s) => `${s.from}-${s.to} ${String(s.value)}`);

describe('the report model', () => {
  it('sorts names as people do', () => {
    expect(['b-10', 'a-2', 'b-9', 'a-10', 'a-1'].sort(naturalCompare)).toEqual([
      'a-1',
      'a-2',
      'a-10',
      'b-9',
      'b-10',
    ]);
  });

  it('draws the busy nodes of a large cluster, the zones’ states and their limiters’ rates', async () => {
    const model = await modelOf('zone-partial-disruption');
    const [a, b] = model.zones;
    expect(model.zones.map((z) => z.zone)).toEqual(['region-1:zone-a', 'region-1:zone-b']);
    expect(a?.nodes.map((n) => n.node)).toEqual(['a-1', 'a-2', 'a-3', 'a-4', 'a-5']);
    expect(a?.quiet).toBe(3);
    expect(b?.nodes).toHaveLength(30);
    expect(b?.nodes.slice(0, 3).map((n) => n.node)).toEqual(['b-1', 'b-2', 'b-3']);
    expect(b?.quiet).toBe(22);
    expect(compact(a?.states ?? [])).toEqual(['0-85 Normal', '85-3510 PartialDisruption']);
    expect(compact(a?.rates ?? [])).toEqual(['0-85 0.1', '85-3510 0']);
    expect(compact(b?.rates ?? [])).toEqual(['0-85 0.1', '85-3510 0.01']);
    // b-1 is tainted NoExecute first (85 s, queued in the marking pass: PR #120816, from v1.34; the
    // bucket's token), its pod evicted 300 s later.
    const b1 = b?.nodes[0];
    expect(compact(b1?.ready ?? [])).toEqual(['0-85 True', '85-3510 Unknown']);
    expect(b1?.taints.map((t) => `${t.from} ${t.key}:${t.value}`)).toEqual([
      '85 node.kubernetes.io/unreachable:NoSchedule',
      '85 node.kubernetes.io/unreachable:NoExecute',
    ]);
    expect(b1?.marks.filter((m) => m.kind === 'eviction').map((m) => m.t)).toEqual([385]);
    expect(model.counts).toMatchObject({ nodes: 60, lanes: 35, pods: 60, evictions: 30 });
  }, 120_000);

  it('stops every limiter in master disruption and restores them after', async () => {
    const model = await modelOf('all-zones-down');
    for (const zone of model.zones) {
      expect(compact(zone.states)).toEqual(['0-85 Normal', '85-300 FullDisruption', '300-510 Normal']);
      expect(compact(zone.rates)).toEqual(['0-85 0.1', '85-300 0', '300-510 0.1']);
      expect(zone.nodes.map((n) => compact(n.ready))).toEqual(
        Array(3).fill(['0-85 True', '85-300 Unknown', '300-510 True']),
      );
    }
    expect(model.counts.evictions).toBe(0);
  }, 60_000);
});
