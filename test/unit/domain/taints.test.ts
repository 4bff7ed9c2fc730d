import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  NotReadyTaintTemplate,
  TaintNodeDiskPressure,
  TaintNodeMemoryPressure,
  TaintNodeNetworkUnavailable,
  TaintNodeNotReady,
  TaintNodePIDPressure,
  TaintNodeUnreachable,
  TaintNodeUnschedulable,
  UnreachableTaintTemplate,
  UnschedulableTaint,
  addOrUpdateTaint,
  doNoScheduleTaintingPass,
  getNoExecuteTaints,
  matchTaint,
  nodeConditionToTaintKeyStatusMap,
  ownedByNodeController,
  removeTaint,
  taintsAfterSwap,
  taintExists,
  taintKeyToNodeConditionMap,
  taintSemanticallyEqual,
  taintSetDiff,
  withOwnNoScheduleTaints,
} from '../../../shared/domain/taints.js';
import type {
  ConditionStatus,
  Node,
  NodeCondition,
  Taint,
  TaintEffect,
} from '../../../shared/domain/types.js';

const fakeNow = Date.parse('2017-01-01T12:00:00Z');
const earlier = Date.parse('2015-01-01T12:00:00Z');

function condition(type: string, status: ConditionStatus): NodeCondition {
  return { type, status, lastHeartbeatTime: earlier, lastTransitionTime: earlier };
}

// upstream node0 of the taint tests: created 2012, zone labels, no taints.
function node0(overrides: Partial<Node> = {}): Node {
  return {
    name: 'node0',
    uid: 'node0-uid',
    creationTimestamp: Date.parse('2012-01-01T00:00:00Z'),
    labels: {
      'topology.kubernetes.io/region': 'region1',
      'topology.kubernetes.io/zone': 'zone1',
      'failure-domain.beta.kubernetes.io/region': 'region1',
      'failure-domain.beta.kubernetes.io/zone': 'zone1',
    },
    taints: [],
    unschedulable: false,
    conditions: [],
    ...overrides,
  };
}

/** One doNoScheduleTaintingPass followed by the write an adapter would make. */
function runNoSchedulePass(node: Node, now: number): Taint[] {
  const swap = doNoScheduleTaintingPass(node);
  if (swap === undefined) return [...node.taints];
  return taintsAfterSwap(node.taints, swap.toAdd, swap.toRemove, now);
}

const noSchedule = (key: string): Taint => ({ key, effect: 'NoSchedule' });

describe('constants', () => {
  it('uses the upstream v1 taint keys and templates verbatim', () => {
    expect([
      TaintNodeNotReady,
      TaintNodeUnreachable,
      TaintNodeUnschedulable,
      TaintNodeMemoryPressure,
      TaintNodeDiskPressure,
      TaintNodeNetworkUnavailable,
      TaintNodePIDPressure,
    ]).toEqual([
      'node.kubernetes.io/not-ready',
      'node.kubernetes.io/unreachable',
      'node.kubernetes.io/unschedulable',
      'node.kubernetes.io/memory-pressure',
      'node.kubernetes.io/disk-pressure',
      'node.kubernetes.io/network-unavailable',
      'node.kubernetes.io/pid-pressure',
    ]);
    expect(UnreachableTaintTemplate).toEqual({ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' });
    expect(NotReadyTaintTemplate).toEqual({ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' });
    expect(UnschedulableTaint).toEqual({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' });
    expect(Object.isFrozen(UnreachableTaintTemplate)).toBe(true);
  });

  it('maps conditions to taint keys as upstream nodeConditionToTaintKeyStatusMap', () => {
    const asObject = Object.fromEntries(
      [...nodeConditionToTaintKeyStatusMap].map(([type, byStatus]) => [type, Object.fromEntries(byStatus)]),
    );
    expect(asObject).toEqual({
      Ready: { False: 'node.kubernetes.io/not-ready', Unknown: 'node.kubernetes.io/unreachable' },
      MemoryPressure: { True: 'node.kubernetes.io/memory-pressure' },
      DiskPressure: { True: 'node.kubernetes.io/disk-pressure' },
      NetworkUnavailable: { True: 'node.kubernetes.io/network-unavailable' },
      PIDPressure: { True: 'node.kubernetes.io/pid-pressure' },
    });
  });

  it('maps the six condition taint keys back to their condition types', () => {
    expect(Object.fromEntries(taintKeyToNodeConditionMap)).toEqual({
      'node.kubernetes.io/not-ready': 'Ready',
      'node.kubernetes.io/unreachable': 'Ready',
      'node.kubernetes.io/memory-pressure': 'MemoryPressure',
      'node.kubernetes.io/disk-pressure': 'DiskPressure',
      'node.kubernetes.io/network-unavailable': 'NetworkUnavailable',
      'node.kubernetes.io/pid-pressure': 'PIDPressure',
    });
  });
});

describe('TestTaintsNodeByCondition', () => {
  // Upstream runs the cases in sequence on one controller, but each fakeNodeHandler.Update replaces
  // node0 with an object that has no taints, so every case starts from an untainted node.
  it.each([
    {
      name: 'NetworkUnavailable is true',
      conditions: [condition('Ready', 'True'), condition('NetworkUnavailable', 'True')],
      expectedTaints: [noSchedule(TaintNodeNetworkUnavailable)],
    },
    {
      name: 'NetworkUnavailable is true',
      conditions: [condition('Ready', 'True'), condition('NetworkUnavailable', 'True')],
      expectedTaints: [noSchedule(TaintNodeNetworkUnavailable)],
    },
    {
      name: 'Ready is false',
      conditions: [condition('Ready', 'False')],
      expectedTaints: [noSchedule(TaintNodeNotReady)],
    },
    {
      name: 'Ready is unknown',
      conditions: [condition('Ready', 'Unknown')],
      expectedTaints: [noSchedule(TaintNodeUnreachable)],
    },
  ])('$name', ({ conditions, expectedTaints }) => {
    const taints = runNoSchedulePass(node0({ conditions }), fakeNow);

    expect(taints).toHaveLength(expectedTaints.length);
    for (const taint of expectedTaints) expect(taintExists(taints, taint)).toBe(true);
    // SwapNodeControllerTaint stamps TimeAdded on every taint it adds, NoSchedule ones included.
    expect(taints).toEqual(expectedTaints.map((t) => ({ ...t, timeAdded: fakeNow })));
  });
});

describe('TestFilterNoExecuteTaints', () => {
  it('keeps only the NoExecute taints', () => {
    const taints: Taint[] = [
      { key: 'one', value: 'one', effect: 'NoExecute' },
      { key: 'two', value: 'two', effect: 'NoSchedule' },
    ];
    const filtered = getNoExecuteTaints(taints);
    expect(filtered).toHaveLength(1);
    expect(filtered[0]?.key).toBe('one');
  });

  it('keeps the order and drops PreferNoSchedule too', () => {
    const taints: Taint[] = [
      { key: 'a', effect: 'NoExecute', timeAdded: 1 },
      { key: 'b', effect: 'PreferNoSchedule' },
      { key: 'c', effect: 'NoExecute' },
    ];
    expect(getNoExecuteTaints(taints)).toEqual([
      { key: 'a', effect: 'NoExecute', timeAdded: 1 },
      { key: 'c', effect: 'NoExecute' },
    ]);
    expect(getNoExecuteTaints([])).toEqual([]);
  });
});

describe('matchTaint and taintExists', () => {
  it.each([
    {
      name: 'same key and effect',
      a: { key: 'k', effect: 'NoSchedule' },
      b: { key: 'k', effect: 'NoSchedule' },
      want: true,
    },
    {
      name: 'value and timeAdded are ignored',
      a: { key: 'k', value: 'x', effect: 'NoExecute', timeAdded: 1 },
      b: { key: 'k', value: 'y', effect: 'NoExecute' },
      want: true,
    },
    {
      name: 'different effect',
      a: { key: 'k', effect: 'NoSchedule' },
      b: { key: 'k', effect: 'NoExecute' },
      want: false,
    },
    {
      name: 'different key',
      a: { key: 'k', effect: 'NoSchedule' },
      b: { key: 'l', effect: 'NoSchedule' },
      want: false,
    },
  ] satisfies { name: string; a: Taint; b: Taint; want: boolean }[])('$name', ({ a, b, want }) => {
    expect(matchTaint(a, b)).toBe(want);
    // The match is symmetric.
    expect(matchTaint(b, a)).toBe(want);
    expect(taintExists([{ key: 'other', effect: 'NoSchedule' }, b], a)).toBe(want);
  });

  it('finds nothing in an empty list', () => {
    expect(taintExists([], UnreachableTaintTemplate)).toBe(false);
  });
});

describe('taintSemanticallyEqual', () => {
  it.each([
    {
      name: 'absent value equals empty value',
      a: { key: 'k', effect: 'NoSchedule' },
      b: { key: 'k', value: '', effect: 'NoSchedule' },
      want: true,
    },
    {
      name: 'different values',
      a: { key: 'k', value: 'a', effect: 'NoSchedule' },
      b: { key: 'k', value: 'b', effect: 'NoSchedule' },
      want: false,
    },
    {
      name: 'absent timeAdded differs from a time',
      a: { key: 'k', effect: 'NoExecute' },
      b: { key: 'k', effect: 'NoExecute', timeAdded: 0 },
      want: false,
    },
    {
      name: 'different times',
      a: { key: 'k', effect: 'NoExecute', timeAdded: 1 },
      b: { key: 'k', effect: 'NoExecute', timeAdded: 2 },
      want: false,
    },
    {
      name: 'same time',
      a: { key: 'k', effect: 'NoExecute', timeAdded: 1 },
      b: { key: 'k', effect: 'NoExecute', timeAdded: 1 },
      want: true,
    },
    {
      name: 'different effect',
      a: { key: 'k', effect: 'NoExecute' },
      b: { key: 'k', effect: 'NoSchedule' },
      want: false,
    },
  ] satisfies { name: string; a: Taint; b: Taint; want: boolean }[])('$name', ({ a, b, want }) => {
    expect(taintSemanticallyEqual(a, b)).toBe(want);
    expect(taintSemanticallyEqual(b, a)).toBe(want);
  });
});

describe('taintSetDiff', () => {
  const a = noSchedule('a');
  const b = noSchedule('b');
  const c = noSchedule('c');
  it.each([
    { name: 'both empty', taintsNew: [], taintsOld: [], toAdd: [], toRemove: [] },
    { name: 'all new', taintsNew: [a, b], taintsOld: [], toAdd: [a, b], toRemove: [] },
    { name: 'all old', taintsNew: [], taintsOld: [a, b], toAdd: [], toRemove: [a, b] },
    { name: 'overlap', taintsNew: [a, b], taintsOld: [b, c], toAdd: [a], toRemove: [c] },
    {
      name: 'value and timeAdded do not make a difference',
      taintsNew: [a],
      taintsOld: [{ ...a, value: 'v', timeAdded: 5 }],
      toAdd: [],
      toRemove: [],
    },
    {
      name: 'same key with another effect is a different taint',
      taintsNew: [a],
      taintsOld: [{ key: 'a', effect: 'NoExecute' }],
      toAdd: [a],
      toRemove: [{ key: 'a', effect: 'NoExecute' }],
    },
    { name: 'duplicates are kept', taintsNew: [a, a], taintsOld: [], toAdd: [a, a], toRemove: [] },
  ] satisfies { name: string; taintsNew: Taint[]; taintsOld: Taint[]; toAdd: Taint[]; toRemove: Taint[] }[])(
    '$name',
    ({ taintsNew, taintsOld, toAdd, toRemove }) => {
      expect(taintSetDiff(taintsNew, taintsOld)).toEqual({ toAdd, toRemove });
      // Swapping the arguments swaps the result.
      expect(taintSetDiff(taintsOld, taintsNew)).toEqual({ toAdd: toRemove, toRemove: toAdd });
    },
  );
});

describe('addOrUpdateTaint', () => {
  const foreign: Taint = { key: 'example.com/foo', value: 'bar', effect: 'NoSchedule' };
  it.each([
    {
      name: 'appends a taint that is not there',
      taints: [foreign],
      taint: { ...UnreachableTaintTemplate, timeAdded: 2 },
      want: [foreign, { ...UnreachableTaintTemplate, timeAdded: 2 }],
      updated: true,
    },
    {
      name: 'replaces in place a taint with another timeAdded',
      taints: [{ ...UnreachableTaintTemplate, timeAdded: 1 }, foreign],
      taint: { ...UnreachableTaintTemplate, timeAdded: 2 },
      want: [{ ...UnreachableTaintTemplate, timeAdded: 2 }, foreign],
      updated: true,
    },
    {
      name: 'replaces a taint with another value',
      taints: [{ key: 'example.com/foo', value: 'baz', effect: 'NoSchedule' }],
      taint: foreign,
      want: [foreign],
      updated: true,
    },
    {
      name: 'leaves a semantically equal taint alone',
      taints: [{ ...UnreachableTaintTemplate, value: '', timeAdded: 1 }, foreign],
      taint: { ...UnreachableTaintTemplate, timeAdded: 1 },
      want: [{ ...UnreachableTaintTemplate, value: '', timeAdded: 1 }, foreign],
      updated: false,
    },
    {
      name: 'appends the same key with another effect',
      taints: [noSchedule(TaintNodeUnreachable)],
      taint: UnreachableTaintTemplate,
      want: [noSchedule(TaintNodeUnreachable), UnreachableTaintTemplate],
      updated: true,
    },
    {
      name: 'upstream quirk: an equal duplicate after a replaced one leaves the list unchanged',
      taints: [
        { ...UnreachableTaintTemplate, timeAdded: 1 },
        { ...UnreachableTaintTemplate, timeAdded: 2 },
      ],
      taint: { ...UnreachableTaintTemplate, timeAdded: 2 },
      want: [
        { ...UnreachableTaintTemplate, timeAdded: 1 },
        { ...UnreachableTaintTemplate, timeAdded: 2 },
      ],
      updated: false,
    },
  ] satisfies { name: string; taints: Taint[]; taint: Taint; want: Taint[]; updated: boolean }[])(
    '$name',
    ({ taints, taint, want, updated }) => {
      const before = structuredClone(taints);
      expect(addOrUpdateTaint(taints, taint)).toEqual({ taints: want, updated });
      expect(taints).toEqual(before);
    },
  );
});

describe('removeTaint', () => {
  const foreign: Taint = { key: 'example.com/foo', effect: 'NoSchedule' };
  it.each([
    {
      name: 'removes every taint with the same key and effect, whatever its value',
      taints: [{ ...NotReadyTaintTemplate, value: 'x', timeAdded: 1 }, foreign, NotReadyTaintTemplate],
      taint: NotReadyTaintTemplate,
      want: [foreign],
      updated: true,
    },
    {
      name: 'keeps the same key with another effect',
      taints: [noSchedule(TaintNodeNotReady)],
      taint: NotReadyTaintTemplate,
      want: [noSchedule(TaintNodeNotReady)],
      updated: false,
    },
    { name: 'empty list', taints: [], taint: NotReadyTaintTemplate, want: [], updated: false },
  ] satisfies { name: string; taints: Taint[]; taint: Taint; want: Taint[]; updated: boolean }[])(
    '$name',
    ({ taints, taint, want, updated }) => {
      const before = structuredClone(taints);
      expect(removeTaint(taints, taint)).toEqual({ taints: want, updated });
      expect(taints).toEqual(before);
    },
  );
});

describe('taintsAfterSwap', () => {
  const foreign: Taint = { key: 'example.com/foo', value: 'bar', effect: 'NoExecute', timeAdded: 3 };
  it.each([
    {
      name: 'nothing to add or remove leaves the list as it is',
      taints: [foreign],
      toAdd: [],
      toRemove: [],
      want: [foreign],
    },
    {
      name: 'adds with timeAdded = now',
      taints: [foreign],
      toAdd: [UnreachableTaintTemplate],
      toRemove: [],
      want: [foreign, { ...UnreachableTaintTemplate, timeAdded: fakeNow }],
    },
    {
      name: 'swaps unreachable for not-ready (processTaintBaseEviction, Ready False)',
      taints: [{ ...UnreachableTaintTemplate, timeAdded: earlier }, foreign],
      toAdd: [NotReadyTaintTemplate],
      toRemove: [UnreachableTaintTemplate],
      want: [foreign, { ...NotReadyTaintTemplate, timeAdded: fakeNow }],
    },
    {
      name: 're-adding a present taint refreshes its timeAdded (AddOrUpdateTaint)',
      taints: [{ ...NotReadyTaintTemplate, timeAdded: earlier }],
      toAdd: [NotReadyTaintTemplate],
      toRemove: [UnreachableTaintTemplate],
      want: [{ ...NotReadyTaintTemplate, timeAdded: fakeNow }],
    },
    {
      name: 'the timeAdded of the taint to add is replaced by now',
      taints: [],
      toAdd: [{ ...NotReadyTaintTemplate, timeAdded: earlier }],
      toRemove: [],
      want: [{ ...NotReadyTaintTemplate, timeAdded: fakeNow }],
    },
    {
      name: 'removing an absent taint changes nothing',
      taints: [foreign],
      toAdd: [],
      toRemove: [NotReadyTaintTemplate, UnreachableTaintTemplate],
      want: [foreign],
    },
  ] satisfies { name: string; taints: Taint[]; toAdd: Taint[]; toRemove: Taint[]; want: Taint[] }[])(
    '$name',
    ({ taints, toAdd, toRemove, want }) => {
      const before = structuredClone(taints);
      expect(taintsAfterSwap(taints, toAdd, toRemove, fakeNow)).toEqual(want);
      expect(taints).toEqual(before);
    },
  );
});

describe('ownedByNodeController', () => {
  it.each([
    ...[
      TaintNodeNotReady,
      TaintNodeUnreachable,
      TaintNodeMemoryPressure,
      TaintNodeDiskPressure,
      TaintNodeNetworkUnavailable,
      TaintNodePIDPressure,
      TaintNodeUnschedulable,
    ].map((key) => ({ taint: noSchedule(key), want: true })),
    { taint: UnreachableTaintTemplate, want: true },
    { taint: { ...NotReadyTaintTemplate, value: 'x', timeAdded: 1 }, want: true },
    { taint: { key: TaintNodeMemoryPressure, effect: 'NoExecute' }, want: false },
    { taint: { key: TaintNodeUnschedulable, effect: 'NoExecute' }, want: false },
    { taint: { key: TaintNodeNotReady, effect: 'PreferNoSchedule' }, want: false },
    { taint: { key: 'example.com/foo', effect: 'NoSchedule' }, want: false },
    { taint: { key: 'node.kubernetes.io/out-of-disk', effect: 'NoSchedule' }, want: false },
    { taint: { key: 'constructor', effect: 'NoSchedule' }, want: false },
  ] satisfies { taint: Taint; want: boolean }[])('$taint.key:$taint.effect → $want', ({ taint, want }) => {
    expect(ownedByNodeController(taint)).toBe(want);
  });
});

describe('doNoScheduleTaintingPass', () => {
  const ready = condition('Ready', 'True');
  it.each([
    {
      name: 'healthy node without taints: nothing to do',
      node: node0({ conditions: [ready] }),
      want: undefined,
    },
    { name: 'no conditions at all: nothing to do', node: node0(), want: undefined },
    {
      name: 'unknown pressure conditions give no taint',
      node: node0({
        conditions: [
          ready,
          condition('MemoryPressure', 'Unknown'),
          condition('DiskPressure', 'Unknown'),
          condition('PIDPressure', 'Unknown'),
          condition('NetworkUnavailable', 'Unknown'),
        ],
      }),
      want: undefined,
    },
    {
      name: 'false pressure conditions give no taint',
      node: node0({
        conditions: [ready, condition('MemoryPressure', 'False'), condition('PIDPressure', 'False')],
      }),
      want: undefined,
    },
    {
      name: 'true pressure conditions give their taints, in condition order',
      node: node0({
        conditions: [
          condition('PIDPressure', 'True'),
          ready,
          condition('MemoryPressure', 'True'),
          condition('DiskPressure', 'True'),
        ],
      }),
      want: {
        toAdd: [
          noSchedule(TaintNodePIDPressure),
          noSchedule(TaintNodeMemoryPressure),
          noSchedule(TaintNodeDiskPressure),
        ],
        toRemove: [],
      },
    },
    {
      name: 'a condition type upstream does not map gives no taint',
      node: node0({ conditions: [ready, condition('OutOfDisk', 'True'), condition('constructor', 'True')] }),
      want: undefined,
    },
    {
      name: 'missing Ready gives no not-ready/unreachable taint and removes a stale one',
      node: node0({ taints: [noSchedule(TaintNodeUnreachable)] }),
      want: { toAdd: [], toRemove: [noSchedule(TaintNodeUnreachable)] },
    },
    {
      name: 'Ready False replaces a stale unreachable taint',
      node: node0({
        conditions: [condition('Ready', 'False')],
        taints: [{ ...noSchedule(TaintNodeUnreachable), timeAdded: earlier }],
      }),
      want: {
        toAdd: [noSchedule(TaintNodeNotReady)],
        toRemove: [{ ...noSchedule(TaintNodeUnreachable), timeAdded: earlier }],
      },
    },
    {
      name: 'Ready True removes a stale not-ready taint',
      node: node0({ conditions: [ready], taints: [noSchedule(TaintNodeNotReady)] }),
      want: { toAdd: [], toRemove: [noSchedule(TaintNodeNotReady)] },
    },
    {
      name: 'MemoryPressure False removes a stale memory-pressure taint',
      node: node0({
        conditions: [ready, condition('MemoryPressure', 'False')],
        taints: [noSchedule(TaintNodeMemoryPressure)],
      }),
      want: { toAdd: [], toRemove: [noSchedule(TaintNodeMemoryPressure)] },
    },
    {
      name: 'a present taint with another value is left alone (key+effect match)',
      node: node0({
        conditions: [condition('Ready', 'False')],
        taints: [{ ...noSchedule(TaintNodeNotReady), value: 'x', timeAdded: earlier }],
      }),
      want: undefined,
    },
    {
      name: 'foreign NoSchedule taints are untouched',
      node: node0({
        conditions: [ready],
        taints: [noSchedule('example.com/foo'), noSchedule('node.kubernetes.io/out-of-disk')],
      }),
      want: undefined,
    },
    {
      name: 'NoExecute and PreferNoSchedule taints with controller keys are untouched',
      node: node0({
        conditions: [ready],
        taints: [
          { ...UnreachableTaintTemplate, timeAdded: earlier },
          { key: TaintNodeNotReady, effect: 'PreferNoSchedule' },
          { key: TaintNodeUnschedulable, effect: 'NoExecute' },
        ],
      }),
      want: undefined,
    },
    {
      name: 'a NoExecute not-ready taint does not stand in for the NoSchedule one',
      node: node0({ conditions: [condition('Ready', 'False')], taints: [NotReadyTaintTemplate] }),
      want: { toAdd: [noSchedule(TaintNodeNotReady)], toRemove: [] },
    },
    {
      name: 'unschedulable adds the unschedulable taint',
      node: node0({ conditions: [ready], unschedulable: true }),
      want: { toAdd: [UnschedulableTaint], toRemove: [] },
    },
    {
      name: 'unschedulable with the taint present: nothing to do',
      node: node0({ conditions: [ready], unschedulable: true, taints: [UnschedulableTaint] }),
      want: undefined,
    },
    {
      name: 'schedulable removes the unschedulable taint',
      node: node0({ conditions: [ready], taints: [{ ...UnschedulableTaint, timeAdded: earlier }] }),
      want: { toAdd: [], toRemove: [{ ...UnschedulableTaint, timeAdded: earlier }] },
    },
    {
      name: 'the unschedulable taint comes after the condition taints',
      node: node0({ conditions: [condition('Ready', 'Unknown')], unschedulable: true }),
      want: { toAdd: [noSchedule(TaintNodeUnreachable), UnschedulableTaint], toRemove: [] },
    },
  ] satisfies { name: string; node: Node; want: ReturnType<typeof doNoScheduleTaintingPass> }[])(
    '$name',
    ({ node, want }) => {
      const before = structuredClone(node);
      expect(doNoScheduleTaintingPass(node)).toEqual(want);
      expect(node).toEqual(before);
    },
  );

  it('applied through taintsAfterSwap, keeps foreign taints in place and appends new ones', () => {
    const foreignFirst: Taint = { key: 'example.com/first', effect: 'NoSchedule' };
    const foreignLast: Taint = { key: 'example.com/last', value: 'v', effect: 'NoExecute', timeAdded: 1 };
    const node = node0({
      conditions: [condition('Ready', 'False'), condition('DiskPressure', 'True')],
      unschedulable: true,
      taints: [foreignFirst, noSchedule(TaintNodeUnreachable), UnreachableTaintTemplate, foreignLast],
    });
    expect(runNoSchedulePass(node, fakeNow)).toEqual([
      foreignFirst,
      UnreachableTaintTemplate,
      foreignLast,
      { ...noSchedule(TaintNodeNotReady), timeAdded: fakeNow },
      { ...noSchedule(TaintNodeDiskPressure), timeAdded: fakeNow },
      { ...UnschedulableTaint, timeAdded: fakeNow },
    ]);
  });
});

describe('properties', () => {
  const conditionTypes = [
    'Ready',
    'MemoryPressure',
    'DiskPressure',
    'PIDPressure',
    'NetworkUnavailable',
    'OutOfDisk',
    'constructor',
  ];
  const taintKeys = [
    TaintNodeNotReady,
    TaintNodeUnreachable,
    TaintNodeUnschedulable,
    TaintNodeMemoryPressure,
    TaintNodeDiskPressure,
    TaintNodeNetworkUnavailable,
    TaintNodePIDPressure,
    'example.com/foo',
    'node.kubernetes.io/exclude-disruption',
    '__proto__',
  ];
  const effects: TaintEffect[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

  const arbTaint: fc.Arbitrary<Taint> = fc.record(
    {
      key: fc.constantFrom(...taintKeys),
      value: fc.constantFrom('', 'x', 'y'),
      effect: fc.constantFrom(...effects),
      timeAdded: fc.integer({ min: 0, max: 10 }),
    },
    { requiredKeys: ['key', 'effect'] },
  );
  const arbCondition: fc.Arbitrary<NodeCondition> = fc.record({
    type: fc.constantFrom(...conditionTypes),
    status: fc.constantFrom<ConditionStatus>('True', 'False', 'Unknown'),
  });
  const arbNode: fc.Arbitrary<Node> = fc
    .record({
      conditions: fc.array(arbCondition, { maxLength: 6 }),
      taints: fc.array(arbTaint, { maxLength: 8 }),
      unschedulable: fc.boolean(),
    })
    .map((parts) => node0(parts));

  it('taintSetDiff(a, a) is empty', () => {
    fc.assert(
      fc.property(fc.array(arbTaint, { maxLength: 8 }), (taints) => {
        expect(taintSetDiff(taints, taints)).toEqual({ toAdd: [], toRemove: [] });
      }),
    );
  });

  it('doNoScheduleTaintingPass is idempotent once its swap is applied', () => {
    fc.assert(
      fc.property(arbNode, (node) => {
        const after = { ...node, taints: runNoSchedulePass(node, fakeNow) };
        expect(doNoScheduleTaintingPass(after)).toBeUndefined();
      }),
    );
  });

  it('doNoScheduleTaintingPass never removes or rewrites a taint the node controller does not own', () => {
    fc.assert(
      fc.property(arbNode, (node) => {
        const swap = doNoScheduleTaintingPass(node);
        for (const taint of swap?.toRemove ?? []) expect(ownedByNodeController(taint)).toBe(true);
        for (const taint of swap?.toAdd ?? []) expect(ownedByNodeController(taint)).toBe(true);
        const after = runNoSchedulePass(node, fakeNow);
        const foreign = node.taints.filter((t) => !ownedByNodeController(t));
        expect(after.filter((t) => !ownedByNodeController(t))).toEqual(foreign);
      }),
    );
  });

  it('doNoScheduleTaintingPass never touches NoExecute or PreferNoSchedule taints', () => {
    fc.assert(
      fc.property(arbNode, (node) => {
        const after = runNoSchedulePass(node, fakeNow);
        const otherEffects = (taints: readonly Taint[]) => taints.filter((t) => t.effect !== 'NoSchedule');
        expect(otherEffects(after)).toEqual(otherEffects(node.taints));
      }),
    );
  });

  it('after addOrUpdateTaint the taint exists; after removeTaint it does not', () => {
    fc.assert(
      fc.property(fc.array(arbTaint, { maxLength: 8 }), arbTaint, (taints, taint) => {
        expect(taintExists(addOrUpdateTaint(taints, taint).taints, taint)).toBe(true);
        expect(taintExists(removeTaint(taints, taint).taints, taint)).toBe(false);
        expect(removeTaint(taints, taint).updated).toBe(taintExists(taints, taint));
      }),
    );
  });
});

describe('withOwnNoScheduleTaints (shadow mode: decide on the taints this controller would have had)', () => {
  const unreachableNoSchedule = { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' as const };
  const base = {
    name: 'a-1',
    uid: 'u',
    labels: {},
    unschedulable: false,
    creationTimestamp: 0,
  };
  const withReady = (status: 'True' | 'Unknown', taints: Taint[]) => ({
    ...base,
    conditions: [
      { type: 'Ready', status, reason: status === 'Unknown' ? 'NodeStatusUnknown' : 'KubeletReady' },
    ],
    taints,
  });
  const other = { key: 'example.com/dedicated', effect: 'NoSchedule' as const, value: 'gpu' };

  it('the node back Ready, its taint already lifted by the other controller: this one would remove it', () => {
    const previous = withReady('Unknown', [unreachableNoSchedule, other]);
    const now = withReady('True', [other]);
    expect(doNoScheduleTaintingPass(now)).toBeUndefined();
    expect(doNoScheduleTaintingPass(withOwnNoScheduleTaints(now, previous))).toEqual({
      toAdd: [],
      toRemove: [unreachableNoSchedule],
    });
  });

  it('the node marked Unknown and tainted by the other controller in one view: this one would add it', () => {
    const previous = withReady('True', [other]);
    const now = withReady('Unknown', [unreachableNoSchedule, other]);
    expect(doNoScheduleTaintingPass(now)).toBeUndefined();
    expect(doNoScheduleTaintingPass(withOwnNoScheduleTaints(now, previous))).toEqual({
      toAdd: [unreachableNoSchedule],
      toRemove: [],
    });
  });

  it('no change of conditions, nothing to decide (it decided at the change); other taints are kept', () => {
    const node = withReady('Unknown', [other]);
    expect(doNoScheduleTaintingPass(node)).toEqual({ toAdd: [unreachableNoSchedule], toRemove: [] });
    expect(doNoScheduleTaintingPass(withOwnNoScheduleTaints(node, node))).toBeUndefined();
    const tainted = withReady('Unknown', [unreachableNoSchedule, other]);
    expect(doNoScheduleTaintingPass(withOwnNoScheduleTaints(tainted, tainted))).toBeUndefined();
    expect(withOwnNoScheduleTaints(tainted, tainted).taints).toContainEqual(other);
  });
});
