// `nlc agreement` against dynalite: a shadow's dry-run decisions and the cluster's own controller's
// actions (recorded by node-taints in shadow mode, source `cluster`) in the Decisions table, matched per
// node. The story, a minute ago: a-1 marked Unknown by both at the same instant and tainted
// unreachable:NoExecute by both (the shadow's drainer 2 s later: agreed, within 5 s); a-2 marked by the
// cluster 10 s before the shadow (a longer grace here: disagreed, lag 10s); the shadow's swap also
// "removes" not-ready:NoExecute, a taint the cluster never had (not a decision); web-1 marked NotReady by
// the shadow at once and by the cluster 1 s later (agreed), and its taint eviction begun by both at the
// same instant (agreed; the cluster's record delivered twice, 30 s apart, is one action); web-2's
// deletion was the shadow's alone (disagreed).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgreementView } from '../../../cli/commands/agreement.js';
import type { DecisionRecord } from '../../../shared/ports/stores.js';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';
import { newNode, ready } from '../../helpers/fakeCluster.js';
import { runCli } from './helpers.js';

const PREFIX = 'nlc-agreement';
const CLUSTER = 'prod';
const S = 1_000;
const unreachable = 'node.kubernetes.io/unreachable:NoExecute';

let db: DynamoFixture;
let target: string[];
let t0: number;

const ours = (node: string, at: number, what: string, inputs: DecisionRecord['inputs']): DecisionRecord => ({
  node,
  at,
  source: what === 'swapNodeTaints' || what === 'deletePodForTaintEviction' ? 'drainer' : 'monitor',
  what,
  why: 'dry run',
  inputs,
  result: 'dryRun',
  dryRun: true,
});
const theirs = (node: string, at: number, what: string, taint?: string): DecisionRecord => ({
  node,
  at,
  source: 'cluster',
  what,
  why: "observed: the cluster's own controller",
  ...(taint !== undefined && { inputs: { taint } }),
});
const theirsOnPod = (node: string, at: number, what: string, pod: string, seq: number): DecisionRecord => ({
  node,
  at,
  source: 'cluster',
  what,
  why: "observed: the cluster's own controller",
  inputs: { pod, uid: `uid-${pod}` },
  seq,
});

beforeAll(async () => {
  db = await startDynamoDb(PREFIX);
  const stores = db.stores();
  t0 = Date.now() - 60 * S;
  for (const name of ['a-1', 'a-2']) {
    await stores.nodes.putNode(
      CLUSTER,
      newNode(name, { created: t0 - 3_600 * S, conditions: [ready('True', t0 - 10 * S, t0 - 3_600 * S)] }),
    );
  }
  await stores.decisions.append(CLUSTER, [
    ours('a-1', t0, 'updateNodeStatus', { conditions: ['Ready=Unknown (NodeStatusUnknown)'] }),
    {
      ...ours('a-1', t0, 'updateNodeStatus', { conditions: ['Ready=Unknown (NodeStatusUnknown)'] }),
      result: 'intended',
      seq: 1,
    },
    ours('a-1', t0 + 2 * S, 'swapNodeTaints', {
      add: [unreachable],
      remove: ['node.kubernetes.io/not-ready:NoExecute'],
    }),
    ours('a-1', t0, 'markPodsNotReady', { pods: ['default/web-1'] }),
    ours('a-1', t0 + 2 * S, 'deletePodForTaintEviction', { pod: 'default/web-1' }),
    ours('a-1', t0 + 3 * S, 'deletePodForTaintEviction', { pod: 'default/web-2' }),
    theirs('a-1', t0, 'markUnknown'),
    theirs('a-1', t0, 'taintAdded', unreachable),
    theirsOnPod('a-1', t0 + S, 'podNotReady', 'default/web-1', 10),
    theirsOnPod('a-1', t0 + 2 * S, 'podDeleted', 'default/web-1', 11),
    theirsOnPod('a-1', t0 + 32 * S, 'podDeleted', 'default/web-1', 12),
  ]);
  await stores.decisions.append(CLUSTER, [
    ours('a-2', t0 + 20 * S, 'updateNodeStatus', { conditions: ['Ready=Unknown (NodeStatusUnknown)'] }),
    theirs('a-2', t0 + 10 * S, 'markUnknown'),
  ]);
  target = ['--endpoint', db.endpoint, '--tables-prefix', PREFIX, '--cluster', CLUSTER];
});
afterAll(async () => {
  await db.stop();
});

describe('nlc agreement', () => {
  it('-o json: every compared decision matched, with the totals and the lags', async () => {
    const { code, stdout, stderr } = await runCli(['agreement', ...target, '--since', '1h', '-o', 'json']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const view = JSON.parse(stdout) as AgreementView;
    expect(view).toMatchObject({
      cluster: CLUSTER,
      compared: ['markUnknown', 'taintAdded', 'taintRemoved', 'podNotReady', 'podDeleted'],
      decisions: 6,
      agreed: 4,
      disagreed: 2,
      // |lags| of the pairs: 0, 1, 2, 0, 10 s.
      medianLagMs: 1 * S,
      maxLagMs: 10 * S,
    });
    expect(view.rows.map((r) => [r.kind, r.subject, r.detail, r.lagMs, r.agreed])).toEqual([
      ['markUnknown', 'a-1', '', 0, true],
      ['podNotReady', 'default/web-1', '', -1 * S, true],
      ['taintAdded', 'a-1', unreachable, 2 * S, true],
      ['podDeleted', 'default/web-1', '', 0, true],
      ['podDeleted', 'default/web-2', '', null, false],
      ['markUnknown', 'a-2', '', 10 * S, false],
    ]);
    expect(view.rows[4]?.why).toBe("this controller decided it; the cluster's did not do it");
    expect(view.rows[5]?.why).toBe("10s later than the cluster's controller");
    expect(view.byKind.markUnknown).toEqual({ decisions: 2, agreed: 1, disagreed: 1 });
    expect(view.byKind.podDeleted).toEqual({ decisions: 2, agreed: 1, disagreed: 1 });
  });

  it('prints the summary, then the disagreements and the largest lags', async () => {
    const { code, stdout } = await runCli(['agreement', ...target]);
    expect(code).toBe(0);
    const [first, second] = stdout.split('\n');
    expect(first).toMatch(
      /^prod: 4 of 6 decisions agree \(67%\) since .+; median lag 1s, largest 10s \(within 5s agrees\)$/,
    );
    expect(second).toBe(
      'by kind: markUnknown 1/2, taintAdded 1/1, taintRemoved 0/0, podNotReady 1/1, podDeleted 1/2',
    );
    expect(stdout).toMatch(
      /markUnknown\s+a-2\s+-\s+\S+\s+\S+\s+10s\s+no\s+10s later than the cluster's controller/,
    );
  });

  it('--report writes one self-contained page: the summary, every row, the disagreements first', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nlc-agreement-'));
    try {
      const file = join(dir, 'agreement.html');
      const { code, stderr } = await runCli(['agreement', ...target, '--report', file, '-o', 'json']);
      expect(code).toBe(0);
      expect(stderr).toBe(`report written to ${file}\n`);
      const html = await readFile(file, 'utf8');
      expect(html).toMatch(/^<!doctype html>/);
      expect(html).toContain('<b>4 of 6</b> decisions agree (67%)');
      expect(html).toContain('<h2>Disagreements (2)</h2>');
      expect(html).toContain('<h2>Every decision (6)</h2>');
      // Values from the trail are escaped ("cluster's" has a quote).
      expect(html).toContain('10s later than the cluster&#39;s controller');
      expect(html).not.toMatch(/<script|https?:\/\//);
      // A report that cannot be written fails before anything is read (exit 1), naming the file.
      const bad = await runCli(['agreement', ...target, '--report', join(dir, 'missing', 'x.html')]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain(join(dir, 'missing', 'x.html'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--since leaves out older decisions; a bad duration exits 2 naming the flag', async () => {
    const recent = await runCli(['agreement', ...target, '--since', '45s', '-o', 'json']);
    expect((JSON.parse(recent.stdout) as AgreementView).decisions).toBe(1);
    const bad = await runCli(['agreement', ...target, '--since', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--since: expected a duration/);
  });

  // Another cluster, its row as a shadow monitor at 1.37 records it, on a v1.33 control plane: the
  // unreachable taint came 10 s after our pass (v1.33 taints a pass later, PR #120816) and our mark 10 s
  // after theirs (nothing the versions account for for certain); c-9, a node only the cluster's
  // controller acted on, has no health row and no decision of ours.
  it('names the version difference the cluster row records, and the nodes it never saw', async () => {
    const stores = db.stores();
    const cluster = 'staging';
    const loaded = await stores.controllerState.load(cluster);
    await stores.controllerState.commit(loaded, {
      state: loaded.state,
      meta: {
        masterDisruption: false,
        emulationVersion: '1.37',
        dryRun: true,
        nodeMonitorGracePeriodMs: 50 * S,
        clusterVersion: 'v1.33.2-eks-1a2b3c4',
        clusterVersionReadAt: t0,
      },
    });
    for (const name of ['a-1', 'c-9'])
      await stores.nodes.putNode(cluster, newNode(name, { created: t0 - 3_600 * S, conditions: [] }));
    await stores.decisions.append(cluster, [
      ours('a-1', t0, 'swapNodeTaints', { add: [unreachable], remove: [] }),
      theirs('a-1', t0 + 10 * S, 'taintAdded', unreachable),
      ours('a-1', t0 + 10 * S, 'updateNodeStatus', { conditions: ['Ready=Unknown (NodeStatusUnknown)'] }),
      theirs('a-1', t0, 'markUnknown'),
    ]);
    await stores.decisions.append(cluster, [theirs('c-9', t0, 'markUnknown')]);
    const at = ['--endpoint', db.endpoint, '--tables-prefix', PREFIX, '--cluster', cluster];

    const json = await runCli(['agreement', ...at, '-o', 'json']);
    const view = JSON.parse(json.stdout) as AgreementView;
    expect(view).toMatchObject({
      controller: { emulationVersion: '1.37', mode: 'shadow', nodeMonitorGracePeriodMs: 50 * S },
      clusterVersion: 'v1.33.2-eks-1a2b3c4',
      nodesNeverSeen: ['c-9'],
      decisions: 3,
      agreed: 0,
    });
    const difference = 'a version difference (this controller emulates 1.37, the cluster runs v1.33)';
    expect(view.rows.map((r) => [r.kind, r.subject, r.why])).toEqual([
      ['markUnknown', 'a-1', `10s later than the cluster's controller; ${difference}`],
      [
        'markUnknown',
        'c-9',
        "the cluster's controller did it; this controller never saw node c-9 (no health row, no decision of its own)",
      ],
      [
        'taintAdded',
        'a-1',
        `10s earlier than the cluster's controller; ${difference}: from v1.34 the NoExecute taint comes in the ` +
          'pass that marks the node, before v1.34 one monitor period later (PR #120816)',
      ],
    ]);

    const table = await runCli(['agreement', ...at]);
    expect(table.stdout.split('\n').slice(2, 4)).toEqual([
      'versions: this controller emulates 1.37, the cluster runs v1.33.2-eks-1a2b3c4 (a version difference: the rows it explains say which change)',
      "the cluster's controller acted on 1 node(s) this controller has no trace of: c-9",
    ]);

    // The same tables, the monitor since switched to active: nothing of theirs is recorded any more.
    const again = await stores.controllerState.load(cluster);
    await stores.controllerState.commit(again, {
      state: again.state,
      meta: { ...again.meta, dryRun: false },
    });
    const active = await runCli(['agreement', ...at]);
    expect(active.stdout.split('\n')[0]).toMatch(/^staging: 0 of 3 decisions agree \(0%\) since /);
    expect(active.stdout).toContain(
      "this controller runs active (dryRun false): the cluster's own controller's actions are recorded only in shadow mode",
    );
  });

  it('a cluster row without versions says so, and explains nothing by version', async () => {
    const { stdout } = await runCli(['agreement', ...target]);
    expect(stdout.split('\n')[2]).toBe(
      "versions: this controller has not recorded its version yet; the cluster's is not recorded yet (the monitor reads /version hourly)",
    );
    const none = await runCli(['agreement', ...target, '--cluster', 'nothing-yet']);
    expect(none.stdout.split('\n')[0]).toMatch(/^nothing-yet: no decision to compare since \S+$/);
  });
});
