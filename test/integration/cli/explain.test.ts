// `nlc explain NODE` against a seeded local stack: the trail newest first with its reasons, and the
// verdict derived from it (seed.ts: a-1 tainted by the drainer, a-2 waiting in the queue).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { ExplainReport } from '../../../cli/commands/explain.js';
import { massDecisionInputs } from '../../../shared/decisionContract.js';
import { runCli, tableRow } from './helpers.js';
import { CLUSTER, iso, PREFIX, seedStack, t0, type SeededStack } from './seed.js';

let stack: SeededStack;
let target: string[];
beforeAll(async () => {
  stack = await seedStack();
  target = ['--endpoint', stack.endpoint, '--tables-prefix', PREFIX, '--cluster', CLUSTER];
});
afterAll(async () => {
  await stack.stop();
});

const markedUnknown = iso(t0 + 55_000);
const tainted = iso(t0 + 60_000);
/** An instant as a table row shows it when every row is of one day: its time of day. */
const timeOf = (at: string): string => at.slice(11, 23);
const isRow = (line: string): boolean => /^\d\d:\d\d:\d\d\.\d{3}\s/.test(line);
const GRACE = 'no heartbeat within the grace period (50s)';

describe('nlc explain', () => {
  it('opens with a verdict derived from the trail', async () => {
    const { code, stdout, stderr } = await runCli(['explain', 'a-1', ...target]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout.split('\n')[0]).toBe(
      `a-1: tainted node.kubernetes.io/unreachable:NoExecute at ${tainted} by drainer because ` +
        `Ready=Unknown since ${markedUnknown} (${GRACE}); queued by monitor at ${tainted}`,
    );
  });

  it('prints the trail newest first, with source, result and reason: one row per decision', async () => {
    const { stdout } = await runCli(['explain', 'a-1', ...target]);
    const day = tainted.slice(0, 10);
    expect(tableRow(stdout, `TIME (${day})`)).toEqual([
      `TIME (${day})`,
      'SOURCE',
      'WHAT',
      'POD',
      'RESULT',
      'WHY',
    ]);
    const rows = stdout
      .split('\n')
      .filter(isRow)
      .map((line) => line.split(/\s{2,}/));
    // Same-instant rows sort by source, as their keys do (`<time>#<source>#<index>`). Each write's
    // `intended` row is folded into its outcome.
    expect(rows).toEqual([
      [timeOf(tainted), 'monitor', 'enqueue', '-', '-', 'markNodeForTainting: Ready=Unknown'],
      [timeOf(tainted), 'drainer', 'swapNodeTaints', '-', 'ok', 'doNoExecuteTaintingPass: Ready=Unknown'],
      [timeOf(markedUnknown), 'monitor', 'markPodsNotReady', '-', 'ok', 'node became not ready'],
      [timeOf(markedUnknown), 'monitor', 'updateNodeStatus', '-', 'ok', `tryUpdateNodeHealth: ${GRACE}`],
    ]);
    expect(stdout.trimEnd().split('\n').at(-1)).toBe(
      '(3 intended rows folded into their outcomes: -o wide shows every row)',
    );
    // -o wide: every row, the intended ones too.
    const wide = await runCli(['explain', 'a-1', ...target, '-o', 'wide']);
    expect(wide.stdout.split('\n').filter((line) => / intended /.test(line))).toHaveLength(3);
  });

  it('a write retried after a 409 is no failure: cut to width, marked retried, the verdict clean', async () => {
    const at = t0 + 200_000;
    const conflict =
      'Conflict: Operation cannot be fulfilled on nodes "c-1": the object has been modified; please apply your changes to the latest version and try again';
    const write = {
      node: 'c-1',
      source: 'monitor',
      what: 'updateNodeStatus',
      why: `tryUpdateNodeHealth: ${GRACE}`,
    };
    await stack.db.stores().decisions.append(CLUSTER, [
      { ...write, at, result: 'intended' },
      { ...write, at: at + 10, result: conflict, seq: 1 },
      { ...write, at: at + 20, result: 'intended', seq: 2 },
      { ...write, at: at + 30, result: 'ok', seq: 3 },
    ]);
    const { stdout } = await runCli(['explain', 'c-1', ...target]);
    expect(stdout.split('\n')[0]).not.toContain('failed');
    const rows = stdout.split('\n').filter(isRow);
    expect(rows.map((line) => line.split(/\s{2,}/)[4])).toEqual([
      'ok',
      `${conflict.slice(0, 31)}… (retried: ok)`,
    ]);
    // The table fits 160 columns (290 with the 409's message and the reason whole).
    expect(Math.max(...rows.map((line) => line.length))).toBeLessThanOrEqual(160);
    // A failure no retry made good stays a failure, whole in -o wide and JSON.
    await stack.db.stores().decisions.append(CLUSTER, [
      { ...write, at: at + 120_000, result: 'intended', seq: 4 },
      { ...write, at: at + 120_010, result: conflict, seq: 5 },
    ]);
    const after = await runCli(['explain', 'c-1', ...target]);
    expect(after.stdout.split('\n')[0]).toContain('last write failed: updateNodeStatus');
    const newest = after.stdout.split('\n').find((line) => line.startsWith(timeOf(iso(at + 120_010))));
    expect(newest?.split(/\s{2,}/)[4]).toBe(`${conflict.slice(0, 31)}…`);
    const wide = await runCli(['explain', 'c-1', ...target, '-o', 'wide']);
    expect(wide.stdout).toContain(conflict);
  });

  it('explains a node still waiting for its taint', async () => {
    const { stdout } = await runCli(['explain', 'a-2', ...target]);
    expect(stdout.split('\n')[0]).toBe(
      `a-2: Ready=Unknown since ${markedUnknown}, set by monitor (${GRACE}); ` +
        `queued for a NoExecute taint by monitor at ${tainted}`,
    );
  });

  it('--limit keeps the newest decisions', async () => {
    const { stdout } = await runCli(['explain', 'a-1', ...target, '--limit', '2']);
    const rows = stdout.split('\n').filter(isRow);
    expect(rows.map((line) => line.split(/\s{2,}/).slice(1, 5))).toEqual([
      ['monitor', 'enqueue', '-', '-'],
      ['drainer', 'swapNodeTaints', '-', 'ok'],
    ]);
  });

  it('-o wide adds the inputs each decision read', async () => {
    const { stdout } = await runCli(['explain', 'a-1', ...target, '-o', 'wide']);
    expect(tableRow(stdout, 'TIME')).toEqual(['TIME', 'SOURCE', 'WHAT', 'POD', 'RESULT', 'WHY', 'INPUTS']);
    const taint = stdout.split('\n').find((line) => line.includes('swapNodeTaints') && line.includes(' ok '));
    expect(taint?.split(/\s{2,}/)[6]).toBe(
      'add=node.kubernetes.io/unreachable:NoExecute remove=node.kubernetes.io/not-ready:NoExecute',
    );
  });

  it('-o json and -o yaml print the verdict and the whole trail', async () => {
    const { code, stdout } = await runCli(['explain', 'a-1', ...target, '-o', 'json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as ExplainReport;
    expect(Object.keys(report)).toEqual(['cluster', 'node', 'verdict', 'decisions']);
    expect(report.node).toBe('a-1');
    expect(report.decisions).toHaveLength(7);
    expect(report.decisions[1]).toEqual({
      id: `${tainted}#drainer#000001`, // the outcome row follows the intended one (#000000)
      at: tainted,
      source: 'drainer',
      what: 'swapNodeTaints',
      pod: null,
      result: 'ok',
      why: 'doNoExecuteTaintingPass: Ready=Unknown',
      inputs: {
        add: ['node.kubernetes.io/unreachable:NoExecute'],
        remove: ['node.kubernetes.io/not-ready:NoExecute'],
      },
      dryRun: false,
    });
    const yaml = await runCli(['explain', 'a-1', ...target, '-o', 'yaml']);
    expect(parseYaml(yaml.stdout)).toEqual(report);
  });

  it('names the pod of a pod decision, and does not take a scheduled deletion for a failed write', async () => {
    const at = t0 + 120_000;
    await stack.db.stores().decisions.append(CLUSTER, [
      {
        node: 'b-1',
        at,
        source: 'node-taints',
        what: 'swapNodeTaints',
        why: 'doNoScheduleTaintingPass',
        result: 'intended',
      },
      {
        node: 'b-1',
        at,
        source: 'node-taints',
        what: 'swapNodeTaints',
        why: 'doNoScheduleTaintingPass',
        result: 'ok (already so)',
        seq: 1,
      },
      {
        node: 'b-1',
        at: at + 1_000,
        source: 'taint-eviction',
        what: 'schedulePodEviction',
        why: 'processPodOnNode: every NoExecute taint is tolerated',
        inputs: { pod: 'default/web-9' },
        result: `fires at ${iso(at + 301_000)}`,
      },
    ]);
    const { code, stdout } = await runCli(['explain', 'b-1', ...target]);
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).not.toContain('failed');
    expect(tableRow(stdout, timeOf(iso(at + 1_000)))).toEqual([
      timeOf(iso(at + 1_000)),
      'taint-eviction',
      'schedulePodEviction',
      'default/web-9',
      `fires at ${timeOf(iso(at + 301_000))}`,
      // One day: times of day, so WHY fits whole within 160 columns.
      'processPodOnNode: every NoExecute taint is tolerated',
    ]);
    expect(
      Math.max(
        ...stdout
          .split('\n')
          .slice(2)
          .map((line) => line.length),
      ),
    ).toBeLessThanOrEqual(160);
    const wide = await runCli(['explain', 'b-1', ...target, '-o', 'wide']);
    expect(wide.stdout).toContain('processPodOnNode: every NoExecute taint is tolerated');
    const json = JSON.parse(
      (await runCli(['explain', 'b-1', ...target, '-o', 'json'])).stdout,
    ) as ExplainReport;
    expect(json.decisions.map((d) => d.pod)).toEqual(['default/web-9', null, null]);
  });

  it('exits 1 for a node the controller does not know, naming it and the closest names', async () => {
    const { code, stdout, stderr } = await runCli(['explain', 'a-11', ...target]);
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toBe(
      `error: node "a-11" not found in cluster ${CLUSTER}: no decisions and no state for it (did you mean a-1?)\n`,
    );
    const far = await runCli(['explain', 'web-server', ...target]);
    expect(far.code).toBe(1);
    expect(far.stderr).toBe(
      `error: node "web-server" not found in cluster ${CLUSTER}: no decisions and no state for it; check the name and --cluster\n`,
    );
  });

  it('says when a node the controller knows has nothing to explain, and exits 0', async () => {
    const { code, stdout } = await runCli(['explain', 'a-3', ...target]);
    expect(code).toBe(0);
    expect(stdout).toBe('a-3: no decisions recorded for a-3 (rows expire 14 days after they are written)\n');
  });

  it('exits 2 naming a bad --limit, and a missing NODE', async () => {
    const limit = await runCli(['explain', 'a-1', ...target, '--limit', '0']);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toBe(
      'error: Invalid options (1 problem):\n- --limit: expected a whole number of decisions, 1 to 1000\n',
    );
    const missing = await runCli(['explain', ...target]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'NODE'");
  });

  it('reads a mass decision filed under the zone back into the trail of each node it names', async () => {
    const stores = stack.db.stores();
    const at = t0 + 600_000;
    const zoneA = '#zone:region1:zone-a';
    // m-7 is no node of the cluster (any more): only its own row names its zone.
    await stores.decisions.append(CLUSTER, [
      {
        node: 'm-7',
        at,
        source: 'monitor',
        what: 'enqueue',
        why: 'processTaintBaseEviction: current Ready=Unknown: queued for NoExecute tainting, rate-limited in zone region1:zone-a',
        inputs: { zone: 'region1:zone-a', queueLength: 1 },
      },
    ]);
    // The zone back: 1,502 nodes dequeued in one pass, in two rows under the zone.
    const names = ['a-4', 'm-7', ...Array.from({ length: 1500 }, (_, i) => `m-${1000 + i}`)].sort();
    const back = 'markNodeAsReachable: current Ready=True: removed from NoExecute tainting';
    const rows = massDecisionInputs(names, { zone: 'region1:zone-a', zoneState: 'Normal' });
    expect(rows).toHaveLength(2);
    await stores.decisions.append(
      CLUSTER,
      rows.map((inputs, seq) => ({
        node: zoneA,
        at: at + 5_000,
        source: 'monitor',
        what: 'dequeue',
        why: back,
        inputs,
        seq,
      })),
    );

    const json = JSON.parse(
      (await runCli(['explain', 'm-7', ...target, '-o', 'json'])).stdout,
    ) as ExplainReport;
    expect(json.decisions.map((d) => [d.what, d.at])).toEqual([
      ['dequeue', iso(at + 5_000)],
      ['enqueue', iso(at)],
    ]);
    expect(json.decisions[0]?.inputs).toEqual({
      zone: 'region1:zone-a',
      zoneState: 'Normal',
      count: names.length,
      filedUnder: zoneA,
    });
    // The dequeue ends the queueing: the verdict no longer says the node waits for a taint.
    expect(json.verdict).toBe(
      `no NoExecute taint in force; last decision: dequeue at ${iso(at + 5_000)} by monitor (current Ready=True: removed from NoExecute tainting)`,
    );
    // Its own rows fill --limit 1: only mass decisions as recent are read, and the newest is kept.
    const one = JSON.parse(
      (await runCli(['explain', 'm-7', ...target, '--limit', '1', '-o', 'json'])).stdout,
    ) as ExplainReport;
    expect(one.decisions.map((d) => d.what)).toEqual(['dequeue']);

    // Newer rows of the zone (more than the 60 read for 30 decisions) hide none of it.
    await stores.decisions.append(
      CLUSTER,
      Array.from({ length: 70 }, (_, i) => ({
        node: zoneA,
        at: at + 10_000 + i * 1_000,
        source: 'monitor',
        what: 'zoneState',
        why: `handleDisruption: zone region1:zone-a ${i % 2 === 0 ? 'Normal → PartialDisruption' : 'PartialDisruption → Normal'}`,
        inputs: {
          from: i % 2 === 0 ? 'Normal' : 'PartialDisruption',
          to: i % 2 === 0 ? 'PartialDisruption' : 'Normal',
        },
      })),
    );
    const later = JSON.parse(
      (await runCli(['explain', 'm-7', ...target, '-o', 'json'])).stdout,
    ) as ExplainReport;
    expect(later.decisions.map((d) => d.what)).toEqual(['dequeue', 'enqueue']);

    // a-4 has no row of its own: its zone comes from its labels.
    const { code, stdout } = await runCli(['explain', 'a-4', ...target]);
    expect(code).toBe(0);
    expect(
      stdout
        .split('\n')
        .filter(isRow)
        .map((line) => line.split(/\s{2,}/).slice(0, 5)),
    ).toEqual([[timeOf(iso(at + 5_000)), 'monitor', 'dequeue', '-', '-']]);
    // A node the mass decision does not name is not in it.
    const other = await runCli(['explain', 'a-3', ...target]);
    expect(other.stdout).toBe(
      'a-3: no decisions recorded for a-3 (rows expire 14 days after they are written)\n',
    );
  });
});
