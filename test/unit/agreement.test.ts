// shared/agreement.ts: a shadow's Decisions against what the cluster's own controller did.
import { describe, expect, it } from 'vitest';
import {
  actionsFromClusterDecisions,
  asIfNotEvictedByAnother,
  actionsFromDecisions,
  matchActions,
  nodeControllerActions,
  nodeControllerView,
  podControllerActions,
  type ControllerAction,
} from '../../shared/agreement.js';
import type { Node, Pod } from '../../shared/domain/types.js';
import type { DecisionRecord } from '../../shared/ports/stores.js';

const S = 1_000;
const t0 = Date.parse('2026-01-01T00:00:00Z');
const at = (seconds: number) => t0 + seconds * S;
const action = (
  kind: ControllerAction['kind'],
  subject: string,
  seconds: number,
  detail = '',
): ControllerAction => ({ kind, subject, detail, at: at(seconds) });
/** As read from a trail: filed under node a-1. */
const onA1 = (a: ControllerAction): ControllerAction => ({ ...a, node: 'a-1' });

describe('actionsFromDecisions', () => {
  const decision = (over: Partial<DecisionRecord>): DecisionRecord => ({
    node: 'a-1',
    at: at(85),
    source: 'monitor',
    what: 'updateNodeStatus',
    why: '',
    result: 'dryRun',
    dryRun: true,
    ...over,
  });

  it('reads each dry-run write as the action the cluster would have shown', () => {
    const actions = actionsFromDecisions([
      decision({ inputs: { conditions: ['Ready=Unknown (NodeStatusUnknown)', 'MemoryPressure=Unknown'] } }),
      decision({ what: 'markPodsNotReady', inputs: { pods: ['default/web-1', 'default/db-0'] } }),
      decision({
        source: 'drainer',
        what: 'swapNodeTaints',
        inputs: {
          add: ['node.kubernetes.io/unreachable:NoExecute'],
          remove: ['node.kubernetes.io/not-ready:NoExecute'],
        },
      }),
      decision({
        at: at(385),
        source: 'drainer',
        what: 'deletePodForTaintEviction',
        inputs: { pod: 'default/web-1' },
      }),
    ]);
    expect(actions).toEqual(
      [
        action('markUnknown', 'a-1', 85),
        action('podNotReady', 'default/web-1', 85),
        action('podNotReady', 'default/db-0', 85),
        action('taintAdded', 'a-1', 85, 'node.kubernetes.io/unreachable:NoExecute'),
        action('taintRemoved', 'a-1', 85, 'node.kubernetes.io/not-ready:NoExecute'),
        action('podDeleted', 'default/web-1', 385),
      ].map(onA1),
    );
  });

  it('leaves out intended-only rows, writes that were made, reads and queue bookkeeping', () => {
    expect(
      actionsFromDecisions([
        decision({ result: 'intended' }),
        decision({ result: 'ok', dryRun: false }),
        decision({ what: 'enqueue', result: undefined }),
        // A status write that marks nothing Unknown (none is made today; it would not be a mark).
        decision({ inputs: { conditions: ['Ready=True'] } }),
      ]),
    ).toEqual([]);
  });
});

describe('matchActions', () => {
  const options = { toleranceMs: 5 * S };

  it('the same actions at the same instants: all agreed, lag 0', () => {
    const same = [action('markUnknown', 'a-1', 85), action('taintAdded', 'a-1', 85, 'u:NoExecute')];
    const report = matchActions(same, same, options);
    expect(report).toMatchObject({ decisions: 2, agreed: 2, disagreed: 0, medianLagMs: 0, maxLagMs: 0 });
    expect(report.byKind.markUnknown).toEqual({ decisions: 1, agreed: 1, disagreed: 0 });
  });

  it('a lag within the tolerance agrees; beyond it disagrees, saying which way and the settings', () => {
    const report = matchActions(
      [action('markUnknown', 'a-1', 75), action('markUnknown', 'a-2', 95)],
      [action('markUnknown', 'a-1', 85), action('markUnknown', 'a-2', 90)],
      { ...options, settingsDiffer: ['nodeMonitorGracePeriod 40s here, 50s there'] },
    );
    expect(report.rows.map((r) => [r.subject, r.lagMs, r.agreed, r.why])).toEqual([
      [
        'a-1',
        -10 * S,
        false,
        "10s earlier than the cluster's controller; the settings differ: nodeMonitorGracePeriod 40s here, 50s there",
      ],
      ['a-2', 5 * S, true, undefined],
    ]);
    expect(report).toMatchObject({ agreed: 1, disagreed: 1, medianLagMs: 7.5 * S, maxLagMs: 10 * S });
    expect(report.worst.map((r) => r.subject)).toEqual(['a-1', 'a-2']);
  });

  it('an action on one side only disagrees, naming the side', () => {
    const report = matchActions(
      [action('podDeleted', 'default/web-1', 385)],
      [action('podNotReady', 'default/web-1', 85)],
      options,
    );
    expect(report.rows.map((r) => [r.kind, r.agreed, r.why])).toEqual([
      ['podNotReady', false, "the cluster's controller did it; this one did not decide it"],
      ['podDeleted', false, "this controller decided it; the cluster's did not do it"],
    ]);
    // No pairs: no lag to report.
    expect(report).toMatchObject({ medianLagMs: 0, maxLagMs: 0, worst: [] });
  });

  it("leaves out our removal of a taint the cluster's controller never added (a swap removes it if present)", () => {
    const notReady = 'node.kubernetes.io/not-ready:NoExecute';
    const unreachable = 'node.kubernetes.io/unreachable:NoExecute';
    const report = matchActions(
      [action('taintAdded', 'a-1', 85, unreachable), action('taintRemoved', 'a-1', 85, notReady)],
      [action('taintAdded', 'a-1', 85, unreachable)],
      options,
    );
    expect(report).toMatchObject({ decisions: 1, agreed: 1 });
    // Once the cluster had it, a removal counts, done or not.
    const lifted = matchActions(
      [action('taintRemoved', 'a-1', 200, unreachable)],
      [action('taintAdded', 'a-1', 85, unreachable)],
      options,
    );
    expect(lifted.rows.map((r) => [r.kind, r.agreed])).toEqual([
      ['taintAdded', false],
      ['taintRemoved', false],
    ]);
  });

  it('takes a dry run deciding the same write on every pass as one decision, the first', () => {
    const report = matchActions(
      [action('markUnknown', 'a-1', 85), action('markUnknown', 'a-1', 90), action('markUnknown', 'a-1', 95)],
      [action('markUnknown', 'a-1', 95)],
      options,
    );
    expect(report.rows.map((r) => [r.ours, r.theirs, r.lagMs])).toEqual([[at(85), at(95), -10 * S]]);
    // A second episode minutes later is a decision of its own.
    const twice = matchActions(
      [action('markUnknown', 'a-1', 85), action('markUnknown', 'a-1', 600)],
      [action('markUnknown', 'a-1', 85), action('markUnknown', 'a-1', 600)],
      options,
    );
    expect(twice).toMatchObject({ decisions: 2, agreed: 2 });
    // A pod is deleted once: the shadow deciding it again minutes later is the same decision.
    const pod = matchActions(
      [action('podDeleted', 'default/web-1', 85), action('podDeleted', 'default/web-1', 395)],
      [action('podDeleted', 'default/web-1', 85)],
      options,
    );
    expect(pod).toMatchObject({ decisions: 1, agreed: 1 });
  });

  it('pairs repeated actions in time order: a taint added, removed and added again', () => {
    const taint = 'node.kubernetes.io/unreachable:NoSchedule';
    const ours = [
      action('taintAdded', 'a-1', 85, taint),
      action('taintRemoved', 'a-1', 200, taint),
      action('taintAdded', 'a-1', 400, taint),
    ];
    const theirs = [
      action('taintAdded', 'a-1', 401, taint),
      action('taintAdded', 'a-1', 85, taint),
      action('taintRemoved', 'a-1', 200, taint),
    ];
    const report = matchActions(ours, theirs, options);
    expect(report.rows.map((r) => [r.kind, r.ours, r.theirs])).toEqual([
      ['taintAdded', at(85), at(85)],
      ['taintRemoved', at(200), at(200)],
      ['taintAdded', at(400), at(401)],
    ]);
    expect(report.agreed).toBe(3);
  });
});

describe('matchActions: why they disagree, as far as the trail can say', () => {
  const options = { toleranceMs: 5 * S };
  const u = 'node.kubernetes.io/unreachable:NoExecute';
  const whyOf = (
    ours: readonly ControllerAction[],
    theirs: readonly ControllerAction[],
    more: Partial<Parameters<typeof matchActions>[2]>,
  ): (string | undefined)[] => matchActions(ours, theirs, { ...options, ...more }).rows.map((r) => r.why);

  it('names the v1.34 change when the NoExecute taint comes a pass apart across it (PR #120816)', () => {
    const ours = [action('taintAdded', 'a-1', 85, u)];
    const theirs = [action('taintAdded', 'a-1', 95, u)];
    expect(whyOf(ours, theirs, { versions: { ours: 34, theirs: 33 } })).toEqual([
      "10s earlier than the cluster's controller; a version difference (this controller emulates 1.34, the cluster runs v1.33): " +
        'from v1.34 the NoExecute taint comes in the pass that marks the node, before v1.34 one monitor period later (PR #120816)',
    ]);
    // The other way round (the older minor earlier) the change cannot account for it: the difference alone.
    expect(whyOf(theirs, ours, { versions: { ours: 34, theirs: 33 } })).toEqual([
      "10s later than the cluster's controller; a version difference (this controller emulates 1.34, the cluster runs v1.33)",
    ]);
    // Both sides of v1.34: no version difference, nothing to name.
    expect(whyOf(ours, theirs, { versions: { ours: 35, theirs: 34 } })).toEqual([
      "10s earlier than the cluster's controller; a version difference (this controller emulates 1.35, the cluster runs v1.34)",
    ]);
  });

  it('names no change it cannot be sure of: a later mark across v1.37 is the version difference alone', () => {
    // The v1.37 Lease read delays a mark only when the lease cache is behind: not certain from the row.
    expect(
      whyOf([action('markUnknown', 'a-1', 95)], [action('markUnknown', 'a-1', 85)], {
        versions: { ours: 37, theirs: 36 },
      }),
    ).toEqual([
      "10s later than the cluster's controller; a version difference (this controller emulates 1.37, the cluster runs v1.36)",
    ]);
  });

  it('says a v1.25 cluster records no taint eviction (no DisruptionTarget before v1.26)', () => {
    expect(
      whyOf([action('podDeleted', 'default/web-1', 385)], [], { versions: { ours: 25, theirs: 25 } }),
    ).toEqual([
      "this controller decided it; the cluster's did not do it; v1.25 writes no DisruptionTarget condition (from v1.26, PR #110959), " +
        'so its taint evictions cannot be told from other deletions and none is recorded',
    ]);
    // From v1.26 a missing deletion is a real disagreement.
    expect(
      whyOf([action('podDeleted', 'default/web-1', 385)], [], { versions: { ours: 26, theirs: 26 } }),
    ).toEqual(["this controller decided it; the cluster's did not do it"]);
  });

  it("compares this controller's grace period with the default of the cluster's minor (PR #126287)", () => {
    const ours = [action('markUnknown', 'a-1', 75)];
    const theirs = [action('markUnknown', 'a-1', 85)];
    expect(whyOf(ours, theirs, { versions: { ours: 37, theirs: 37, ourGracePeriodMs: 40 * S } })).toEqual([
      "10s earlier than the cluster's controller; this controller's nodeMonitorGracePeriod is 40s, v1.37's default 50s " +
        '(50s from v1.32, PR #126287; a control plane may set its own)',
    ]);
    // Earlier with a longer grace period than theirs: not the reason.
    expect(whyOf(ours, theirs, { versions: { ours: 31, theirs: 31, ourGracePeriodMs: 50 * S } })).toEqual([
      "10s earlier than the cluster's controller",
    ]);
  });

  it('names a node this controller never saw, for its node actions and its pods', () => {
    const theirs = [
      { ...action('markUnknown', 'b-9', 85), node: 'b-9' },
      { ...action('podNotReady', 'default/web-9', 85), node: 'b-9' },
      { ...action('markUnknown', 'a-1', 85), node: 'a-1' },
    ];
    expect(whyOf([], theirs, { nodesNeverSeen: new Set(['b-9']) })).toEqual([
      "the cluster's controller did it; this one did not decide it",
      "the cluster's controller did it; this controller never saw node b-9 (no health row, no decision of its own)",
      "the cluster's controller did it; this controller never saw node b-9 (no health row, no decision of its own)",
    ]);
    expect(matchActions([], theirs, options).rows.find((r) => r.kind === 'podNotReady')?.node).toBe('b-9');
  });
});

describe('nodeControllerActions (what the cluster did between two copies of a node)', () => {
  const node = (ready: 'True' | 'Unknown', reason: string, taints: string[]): Node => ({
    name: 'a-1',
    uid: 'u',
    creationTimestamp: t0,
    labels: {},
    conditions: [{ type: 'Ready', status: ready, reason, lastHeartbeatTime: t0, lastTransitionTime: t0 }],
    taints: taints.map((t) => {
      const [key = '', effect = ''] = t.split(':');
      return { key, effect: effect as 'NoSchedule' | 'NoExecute' };
    }),
    unschedulable: false,
  });
  const u = 'node.kubernetes.io/unreachable';
  const view = nodeControllerView;

  it('a mark with its reason and the node-controller taints added and removed; other taints are not its', () => {
    const before = node('True', 'KubeletReady', [
      'node.kubernetes.io/not-ready:NoSchedule',
      'dedicated:NoSchedule',
    ]);
    const after = node('Unknown', 'NodeStatusUnknown', [`${u}:NoSchedule`, `${u}:NoExecute`]);
    expect(nodeControllerActions(view(before), view(after), 'a-1', at(85))).toEqual([
      action('markUnknown', 'a-1', 85),
      action('taintAdded', 'a-1', 85, `${u}:NoExecute`),
      action('taintAdded', 'a-1', 85, `${u}:NoSchedule`),
      action('taintRemoved', 'a-1', 85, 'node.kubernetes.io/not-ready:NoSchedule'),
    ]);
  });

  it('nothing without an earlier copy, and no mark for an Unknown the kubelet never set this way', () => {
    const after = node('Unknown', 'NodeStatusUnknown', []);
    expect(nodeControllerActions(undefined, view(after), 'a-1', at(85))).toEqual([]);
    expect(nodeControllerActions(view(after), view(after), 'a-1', at(90))).toEqual([]);
    expect(
      nodeControllerActions(
        view(node('True', 'KubeletReady', [])),
        view(node('Unknown', 'Other', [])),
        'a-1',
        at(85),
      ),
    ).toEqual([]);
  });

  it('nothing between two nodes of one name (another uid: deleted and created again)', () => {
    const before = node('True', 'KubeletReady', []);
    const after = { ...node('Unknown', 'NodeStatusUnknown', [`${u}:NoSchedule`]), uid: 'v' };
    expect(nodeControllerActions(view(before), view(after), 'a-1', at(85))).toEqual([]);
  });

  it("one node version's action recorded twice (a retried invocation) reads back as one", () => {
    const recorded = (seconds: number, resourceVersion: string) => ({
      node: 'a-1',
      at: at(seconds),
      source: 'cluster',
      what: 'taintAdded',
      why: '',
      inputs: { taint: `${u}:NoExecute`, resourceVersion },
    });
    expect(actionsFromClusterDecisions([recorded(85, '7'), recorded(86, '7'), recorded(120, '9')])).toEqual(
      [
        action('taintAdded', 'a-1', 85, `${u}:NoExecute`),
        action('taintAdded', 'a-1', 120, `${u}:NoExecute`),
      ].map(onA1),
    );
  });

  it('reads back what the functions recorded (source cluster)', () => {
    expect(
      actionsFromClusterDecisions([
        { node: 'a-1', at: at(85), source: 'cluster', what: 'markUnknown', why: '' },
        {
          node: 'a-1',
          at: at(85),
          source: 'cluster',
          what: 'taintAdded',
          why: '',
          inputs: { taint: `${u}:NoExecute` },
        },
        { node: 'a-1', at: at(85), source: 'monitor', what: 'markUnknown', why: '' },
      ]),
    ).toEqual(
      [action('markUnknown', 'a-1', 85), action('taintAdded', 'a-1', 85, `${u}:NoExecute`)].map(onA1),
    );
  });
});

describe('podControllerActions (what the cluster did to a pod, as one Pod Changed shows it)', () => {
  const pod: Pod = { namespace: 'default', name: 'web-1', uid: 'u1', nodeName: 'a-1', tolerations: [] };
  const modified = (
    next: Partial<Pod>,
    old: { oldReady?: 'True' | 'False'; oldDeletionTimestamp?: number },
  ) => ({
    type: 'MODIFIED' as const,
    pod: { ...pod, ...next },
    ...old,
  });

  it('NotReady: Ready lost on a node that is not Ready (MarkPodsNotReady)', () => {
    const lost = modified({ ready: 'False' }, { oldReady: 'True' });
    expect(podControllerActions(lost, 'Unknown', at(90))).toEqual([
      action('podNotReady', 'default/web-1', 90),
    ]);
    expect(podControllerActions(lost, 'False', at(90))).toHaveLength(1);
    // On a Ready node, or one not known: the kubelet's doing, or nothing to tell.
    expect(podControllerActions(lost, 'True', at(90))).toEqual([]);
    expect(podControllerActions(lost, undefined, at(90))).toEqual([]);
    // Not newly lost.
    expect(
      podControllerActions(modified({ ready: 'False' }, { oldReady: 'False' }), 'Unknown', at(90)),
    ).toEqual([]);
    expect(podControllerActions(modified({ ready: 'False' }, {}), 'Unknown', at(90))).toEqual([]);
  });

  it('deleted: a deletion newly begun with DisruptionTarget DeletionByTaintManager (taint eviction)', () => {
    const deleting = { ready: 'True' as const, deletionTimestamp: at(120) };
    const evicted = modified(
      { ...deleting, disruptionTarget: 'DeletionByTaintManager' },
      { oldReady: 'True' },
    );
    expect(podControllerActions(evicted, 'Unknown', at(91))).toEqual([
      action('podDeleted', 'default/web-1', 91),
    ]);
    // Already terminating before; deleted by someone else (another reason, or none: before v1.26).
    expect(podControllerActions({ ...evicted, oldDeletionTimestamp: at(120) }, 'Unknown', at(91))).toEqual(
      [],
    );
    expect(
      podControllerActions(
        modified({ ...deleting, disruptionTarget: 'EvictionByEvictionAPI' }, {}),
        'Unknown',
        at(91),
      ),
    ).toEqual([]);
    expect(podControllerActions(modified(deleting, {}), 'Unknown', at(91))).toEqual([]);
    // Adds and deletes are not the controller's actions on a pod.
    expect(podControllerActions({ ...evicted, type: 'ADDED' }, 'Unknown', at(91))).toEqual([]);
  });

  it('reads back recorded pod actions once per pod, however often the event was delivered', () => {
    const recorded = (seconds: number, uid: string) => ({
      node: 'a-1',
      at: at(seconds),
      source: 'cluster',
      what: 'podDeleted',
      why: '',
      inputs: { pod: 'default/web-1', uid },
    });
    expect(
      actionsFromClusterDecisions([recorded(95, 'u1'), recorded(91, 'u1'), recorded(91 + 600, 'u1')]),
    ).toEqual([action('podDeleted', 'default/web-1', 91)].map(onA1));
    // A new pod of the same name (a StatefulSet's) is another action; so is one an hour later.
    expect(
      actionsFromClusterDecisions([recorded(91, 'u1'), recorded(100, 'u2'), recorded(91 + 3_600, 'u1')]),
    ).toEqual(
      [
        action('podDeleted', 'default/web-1', 91),
        action('podDeleted', 'default/web-1', 100),
        action('podDeleted', 'default/web-1', 91 + 3_600),
      ].map(onA1),
    );
  });
});

describe('asIfNotEvictedByAnother (shadow mode: a taint eviction the cluster began)', () => {
  it('takes the deletion away only when the DisruptionTarget says taint eviction', () => {
    const deleting = { deletionTimestamp: at(120) };
    expect(asIfNotEvictedByAnother({ ...deleting, disruptionTarget: 'DeletionByTaintManager' })).toEqual({
      disruptionTarget: 'DeletionByTaintManager',
    });
    expect(asIfNotEvictedByAnother({ ...deleting, disruptionTarget: 'EvictionByEvictionAPI' })).toEqual({
      ...deleting,
      disruptionTarget: 'EvictionByEvictionAPI',
    });
    expect(asIfNotEvictedByAnother(deleting)).toEqual(deleting);
    expect(asIfNotEvictedByAnother({ disruptionTarget: 'DeletionByTaintManager' })).toEqual({
      disruptionTarget: 'DeletionByTaintManager',
    });
  });
});
