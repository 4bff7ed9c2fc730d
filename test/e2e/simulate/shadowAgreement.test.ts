// examples/scenarios/shadow-agreement.yaml: the scenario's controller in shadow beside an active
// "cluster's own" controller (managedController), and the Summary's agreement (shared/agreement.ts).
//
// Derivation (single-node-failure's timeline, docs/upstream.md#timeline): a-1's last renewal at 30 s;
// a controller with grace G marks it at the first 5 s pass after 30 + G, and from v1.34 queues and
// taints it NoExecute in that pass; batch-1 (no toleration) goes at once, web-1 300 s later.
// - same settings: both decide at 85 s; the shadow's 7 decisions (mark, 2 pods NotReady, NoSchedule,
//   NoExecute, 2 deletions) all agree, lag 0;
// - managed grace 60 s: it marks at 95 s. The shadow (50 s) marks at 85 s (dry run: nothing written,
//   so it decides it again at 90 and 95: one decision), lag -10 s for the mark and both pods' NotReady;
//   the taints and deletions follow the cluster (the shadow's drainer reads the node from the API, and
//   taint eviction acts on the taint the cluster shows): agreed at 95 s and 395 s;
// - managed grace 40 s: it marks and taints at 75 s, before the shadow's grace runs out. The shadow never
//   writes, so that marking and its NoExecute taint are the other controller's: its monitor decides as if
//   they were not there (shadowView) and marks at 85 s, with both pods' NotReady (already NotReady by
//   then: counted, shadow only) and the NoExecute taint (its drainer takes the token though the taint is
//   in place): lag +10 s for those four; NoSchedule and the deletions follow the cluster, agreed at
//   75 s and 375 s. Before shadowView the shadow found a-1 marked and decided nothing at all.
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { buildReportModel } from '../../../local/simulate/report/model.js';
import { renderReportPage } from '../../../local/simulate/report/page.js';
import { parseScenario } from '../../../local/simulate/scenario.js';
import { runSimulation, type SimulationResult } from '../../../local/simulate/simulation.js';
import type { SummaryRecord } from '../../../local/simulate/timeline.js';
import { examplesDir, failures, runExample, summaryOf } from './helpers.js';

const S = 1_000;
const start = Date.parse('2026-01-01T00:00:00Z');

async function withManaged(config: Record<string, string>): Promise<SimulationResult> {
  const file = new URL('shadow-agreement.yaml', examplesDir);
  const document = parseYaml(await readFile(file, 'utf8')) as Record<string, unknown>;
  const text = stringifyYaml({ ...document, managedController: { config } });
  return runSimulation(parseScenario(text, 'shadow-agreement.yaml'));
}
const withManagedGrace = (grace: string) => withManaged({ nodeMonitorGracePeriod: grace });

const rowsOf = (result: SimulationResult) =>
  (result.agreement?.rows ?? []).map((r) => [
    r.kind,
    r.subject,
    r.detail,
    r.ours === undefined ? null : (r.ours - start) / S,
    r.theirs === undefined ? null : (r.theirs - start) / S,
    r.agreed,
  ]);

describe('examples/scenarios/shadow-agreement.yaml', () => {
  let result: SimulationResult;
  beforeAll(async () => {
    result = await runExample('shadow-agreement');
  });

  it('runs without a failed function and writes what the managed controller decides', () => {
    expect(failures(result)).toEqual([]);
    expect(summaryOf(result).evictions).toBe(2);
  });

  it('the HTML report says it under the summary', async () => {
    const file = new URL('shadow-agreement.yaml', examplesDir);
    const scenario = parseScenario(await readFile(file, 'utf8'), 'shadow-agreement.yaml');
    const html = renderReportPage(
      buildReportModel({ scenario, lines: result.lines, readyChanges: [], decisions: [] }),
      result.lines,
    );
    expect(html).toContain(
      "Agreement with the cluster's controller: <b>7 of 7</b> decisions (100%), 0 disagreed; median lag 0s, largest 0s.",
    );
  });

  it('the same settings: 100 % agreement, median lag 0', () => {
    expect((summaryOf(result) as SummaryRecord).agreement).toEqual({
      decisions: 7,
      agreed: 7,
      disagreed: 0,
      medianLagMs: 0,
      maxLagMs: 0,
    });
    expect(rowsOf(result)).toEqual([
      ['markUnknown', 'a-1', '', 85, 85, true],
      ['podDeleted', 'default/batch-1', '', 85, 85, true],
      ['podNotReady', 'default/batch-1', '', 85, 85, true],
      ['podNotReady', 'default/web-1', '', 85, 85, true],
      ['taintAdded', 'a-1', 'node.kubernetes.io/unreachable:NoExecute', 85, 85, true],
      ['taintAdded', 'a-1', 'node.kubernetes.io/unreachable:NoSchedule', 85, 85, true],
      ['podDeleted', 'default/web-1', '', 385, 385, true],
    ]);
  });
});

describe('shadow-agreement with other settings on the managed side', () => {
  it('a longer grace there (60s): the shadow marks 10 s earlier, the rest follows the cluster', async () => {
    const result = await withManagedGrace('60s');
    expect(failures(result)).toEqual([]);
    expect(rowsOf(result)).toEqual([
      ['markUnknown', 'a-1', '', 85, 95, false],
      ['podNotReady', 'default/batch-1', '', 85, 95, false],
      ['podNotReady', 'default/web-1', '', 85, 95, false],
      ['podDeleted', 'default/batch-1', '', 95, 95, true],
      ['taintAdded', 'a-1', 'node.kubernetes.io/unreachable:NoExecute', 95, 95, true],
      ['taintAdded', 'a-1', 'node.kubernetes.io/unreachable:NoSchedule', 95, 95, true],
      ['podDeleted', 'default/web-1', '', 395, 395, true],
    ]);
    expect(result.agreement?.rows[0]?.why).toBe(
      "10s earlier than the cluster's controller; the settings differ: nodeMonitorGracePeriod 50s here, 1m there",
    );
    expect((summaryOf(result) as SummaryRecord).agreement).toEqual({
      decisions: 7,
      agreed: 4,
      disagreed: 3,
      medianLagMs: 0,
      maxLagMs: 10 * S,
    });
  });

  it('a shorter grace there (40s): the cluster marks first; the shadow still decides, 10 s later', async () => {
    const result = await withManagedGrace('40s');
    expect(failures(result)).toEqual([]);
    expect(rowsOf(result)).toEqual([
      ['markUnknown', 'a-1', '', 85, 75, false],
      ['podDeleted', 'default/batch-1', '', 75, 75, true],
      ['podNotReady', 'default/batch-1', '', 85, 75, false],
      ['podNotReady', 'default/web-1', '', 85, 75, false],
      ['taintAdded', 'a-1', 'node.kubernetes.io/unreachable:NoExecute', 85, 75, false],
      ['taintAdded', 'a-1', 'node.kubernetes.io/unreachable:NoSchedule', 75, 75, true],
      ['podDeleted', 'default/web-1', '', 375, 375, true],
    ]);
    expect(result.agreement?.rows[0]?.why).toBe(
      "10s later than the cluster's controller; the settings differ: nodeMonitorGracePeriod 50s here, 40s there",
    );
    expect((summaryOf(result) as SummaryRecord).agreement).toEqual({
      decisions: 7,
      agreed: 3,
      disagreed: 4,
      medianLagMs: 10 * S,
      maxLagMs: 10 * S,
    });
  });

  // v1.31's defaults: a 40 s grace (50 s from v1.32, PR #126287), so it marks at 75 s as in the 40s
  // case; and its NoExecute taint comes one pass after the mark (PR #120816, v1.34), at 80 s, not 75 s;
  // batch-1 (no toleration) goes with it, web-1 300 s later. The shadow's taint at 85 s is then within a
  // pass of it: agreed.
  it('an older minor there (1.31): the version difference named beside the settings it changes', async () => {
    const result = await withManaged({ emulationVersion: '1.31' });
    expect(failures(result)).toEqual([]);
    expect(rowsOf(result)).toEqual([
      ['markUnknown', 'a-1', '', 85, 75, false],
      ['podNotReady', 'default/batch-1', '', 85, 75, false],
      ['podNotReady', 'default/web-1', '', 85, 75, false],
      ['taintAdded', 'a-1', 'node.kubernetes.io/unreachable:NoSchedule', 75, 75, true],
      ['podDeleted', 'default/batch-1', '', 80, 80, true],
      ['taintAdded', 'a-1', 'node.kubernetes.io/unreachable:NoExecute', 85, 80, true],
      ['podDeleted', 'default/web-1', '', 380, 380, true],
    ]);
    expect(result.agreement?.rows[0]?.why).toBe(
      "10s later than the cluster's controller; a version difference (this controller emulates 1.37, the cluster runs v1.31); " +
        'the settings differ: nodeMonitorGracePeriod 50s here, 40s there',
    );
  });
});
