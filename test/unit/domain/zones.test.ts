import { describe, expect, it } from 'vitest';
import type { Node, NodeCondition, ZoneState } from '../../../shared/domain/types.js';
import {
  LabelNodeExcludeDisruption,
  LabelTopologyRegion,
  LabelTopologyZone,
  LabelZoneFailureDomain,
  LabelZoneRegion,
  computeZoneState,
  createZoneID,
  defaultDisruptionQPSFuncs,
  formatZoneKey,
  getZoneKey,
  handleDisruption,
  healthyQPSFunc,
  isNodeExcludedFromDisruptionChecks,
  reducedQPSFunc,
  setLimiterInZone,
  type DisruptionQPSFuncs,
  type DisruptionResult,
} from '../../../shared/domain/zones.js';

const T: NodeCondition = { type: 'Ready', status: 'True' };
const F: NodeCondition = { type: 'Ready', status: 'False' };
const U: NodeCondition = { type: 'Ready', status: 'Unknown' };
const none = undefined; // upstream nil: no Ready condition

// Upstream flag defaults (docs/upstream.md#defaults).
const defaults = {
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
  largeClusterSizeThreshold: 50,
  unhealthyZoneThreshold: 0.55,
};

const z1 = createZoneID('region1', 'zone1');
const z2 = createZoneID('region1', 'zone2');
const r2z2 = createZoneID('region2', 'zone2');

type Conditions = Record<string, readonly (NodeCondition | undefined)[]>;
const states = (entries: Record<string, ZoneState>) => new Map(Object.entries(entries));
const conds = (entries: Conditions) => new Map(Object.entries(entries));

// Upstream's three cases have no names (t.Run("")); these titles describe their inputs.
describe('Test_isNodeExcludedFromDisruptionChecks', () => {
  it.each<{ name: string; input: Pick<Node, 'name' | 'labels'>; want: boolean }>([
    { name: 'empty labels: not excluded', input: { name: '', labels: {} }, want: false },
    // The old name-based master exclusion is gone; upstream's node has nil labels here.
    { name: 'node named master-abc: not excluded', input: { name: 'master-abc', labels: {} }, want: false },
    {
      name: 'exclude-disruption label with an empty value: excluded',
      input: { name: '', labels: { [LabelNodeExcludeDisruption]: '' } },
      want: true,
    },
  ])('$name', ({ input, want }) => {
    expect(isNodeExcludedFromDisruptionChecks(input)).toBe(want);
  });

  it('counts the label whatever its value', () => {
    expect(isNodeExcludedFromDisruptionChecks({ labels: { [LabelNodeExcludeDisruption]: 'false' } })).toBe(
      true,
    );
  });
});

describe('getZoneKey', () => {
  it.each<{ name: string; labels: Readonly<Record<string, string>> | undefined; want: string }>([
    {
      name: 'beta labels win over topology labels',
      labels: {
        [LabelZoneRegion]: 'beta-r',
        [LabelZoneFailureDomain]: 'beta-z',
        [LabelTopologyRegion]: 'topo-r',
        [LabelTopologyZone]: 'topo-z',
      },
      want: 'beta-r:\x00:beta-z',
    },
    {
      name: 'beta labels present but empty still win (no fallback), so the key is empty',
      labels: {
        [LabelZoneRegion]: '',
        [LabelZoneFailureDomain]: '',
        [LabelTopologyRegion]: 'topo-r',
        [LabelTopologyZone]: 'topo-z',
      },
      want: '',
    },
    {
      name: 'beta zone present but empty, topology region used for the absent beta region',
      labels: {
        [LabelZoneFailureDomain]: '',
        [LabelTopologyRegion]: 'topo-r',
        [LabelTopologyZone]: 'topo-z',
      },
      want: 'topo-r:\x00:',
    },
    {
      name: 'topology labels only',
      labels: { [LabelTopologyRegion]: 'region1', [LabelTopologyZone]: 'zone1' },
      want: 'region1:\x00:zone1',
    },
    { name: 'region only', labels: { [LabelTopologyRegion]: 'region1' }, want: 'region1:\x00:' },
    { name: 'zone only', labels: { [LabelZoneFailureDomain]: 'zone1' }, want: ':\x00:zone1' },
    { name: 'no zone labels', labels: { 'kubernetes.io/hostname': 'node0' }, want: '' },
    { name: 'empty labels', labels: {}, want: '' },
    { name: 'nil labels', labels: undefined, want: '' },
  ])('$name', ({ labels, want }) => {
    expect(getZoneKey(labels)).toBe(want);
  });

  it('matches testutil.CreateZoneID for labelled nodes', () => {
    expect(getZoneKey({ [LabelTopologyRegion]: 'region1', [LabelTopologyZone]: 'zone1' })).toBe(z1);
  });
});

describe('createZoneID and formatZoneKey', () => {
  it.each([
    { key: createZoneID('region1', 'zone1'), want: 'region1:zone1' },
    { key: createZoneID('', ''), want: ':' }, // CreateZoneID has no empty special case, unlike GetZoneKey
    { key: createZoneID('a:b', 'c'), want: 'a:b:c' },
    { key: '', want: '' },
  ])('formats $want', ({ key, want }) => {
    expect(formatZoneKey(key)).toBe(want);
  });
});

describe('computeZoneState', () => {
  it.each([
    {
      name: 'all ready',
      conditions: [T, T, T],
      threshold: 0.55,
      want: { notReadyNodes: 0, state: 'Normal' },
    },
    { name: 'empty zone', conditions: [], threshold: 0.55, want: { notReadyNodes: 0, state: 'Normal' } },
    {
      name: 'all not ready (mixed False, Unknown, nil)',
      conditions: [F, U, none],
      threshold: 0.55,
      want: { notReadyNodes: 3, state: 'FullDisruption' },
    },
    {
      name: 'nil conditions count as not ready',
      conditions: [none, none, none, none],
      threshold: 0.55,
      want: { notReadyNodes: 4, state: 'FullDisruption' },
    },
    {
      name: 'a single not-ready node is a full disruption',
      conditions: [U],
      threshold: 0.55,
      want: { notReadyNodes: 1, state: 'FullDisruption' },
    },
    {
      name: 'exactly 2 not ready is Normal whatever the ratio',
      conditions: [U, none, T],
      threshold: 0.55,
      want: { notReadyNodes: 2, state: 'Normal' },
    },
    {
      name: '3 not ready of 5 (0.6) is partial',
      conditions: [U, U, F, T, T],
      threshold: 0.55,
      want: { notReadyNodes: 3, state: 'PartialDisruption' },
    },
    {
      name: '3 not ready of 6 (0.5) is normal',
      conditions: [U, U, U, T, T, T],
      threshold: 0.55,
      want: { notReadyNodes: 3, state: 'Normal' },
    },
    {
      name: 'ratio exactly at the threshold (11 of 20 = 0.55) is partial',
      conditions: [...Array<NodeCondition>(11).fill(U), ...Array<NodeCondition>(9).fill(T)],
      threshold: 0.55,
      want: { notReadyNodes: 11, state: 'PartialDisruption' },
    },
    {
      // float64 says 0.55 < 0.55000002, but both round to the same float32 (0.550000011920929).
      name: 'float32: 11 of 20 against 0.55000002 is partial',
      conditions: [...Array<NodeCondition>(11).fill(U), ...Array<NodeCondition>(9).fill(T)],
      threshold: 0.55000002,
      want: { notReadyNodes: 11, state: 'PartialDisruption' },
    },
    {
      name: 'float32: 3 of 10 against 0.30000002 is partial',
      conditions: [U, U, U, T, T, T, T, T, T, T],
      threshold: 0.30000002,
      want: { notReadyNodes: 3, state: 'PartialDisruption' },
    },
    {
      name: '10 of 20 (0.5) is normal',
      conditions: [...Array<NodeCondition>(10).fill(U), ...Array<NodeCondition>(10).fill(T)],
      threshold: 0.55,
      want: { notReadyNodes: 10, state: 'Normal' },
    },
  ])('$name', ({ conditions, threshold, want }) => {
    expect(computeZoneState(conditions, threshold)).toEqual(want);
  });

  it('is independent of the order of the conditions', () => {
    const conditions = [U, T, none, F, T];
    expect(computeZoneState([...conditions].reverse(), 0.55)).toEqual(computeZoneState(conditions, 0.55));
  });
});

describe('QPS funcs', () => {
  it.each([
    { zoneSize: 0, want: 0 },
    { zoneSize: 50, want: 0 }, // strict >: a zone exactly at the threshold stops evicting
    { zoneSize: 51, want: 0.01 },
  ])('reducedQPSFunc($zoneSize) = $want', ({ zoneSize, want }) => {
    expect(reducedQPSFunc(zoneSize, defaults)).toBe(want);
  });

  it.each([0, 1, 50, 51, 1000])('healthyQPSFunc(%i) is the normal rate', (zoneSize) => {
    expect(healthyQPSFunc(zoneSize, defaults)).toBe(0.1);
  });

  it('defaultDisruptionQPSFuncs: partial = reduced, full = healthy', () => {
    const funcs = defaultDisruptionQPSFuncs(defaults);
    expect([funcs.enterPartialDisruptionFunc(50), funcs.enterPartialDisruptionFunc(51)]).toEqual([0, 0.01]);
    expect([funcs.enterFullDisruptionFunc(1), funcs.enterFullDisruptionFunc(51)]).toEqual([0.1, 0.1]);
  });

  it.each([
    { state: 'Normal', zoneSize: 3, want: 0.1 },
    { state: 'PartialDisruption', zoneSize: 3, want: 0 },
    { state: 'PartialDisruption', zoneSize: 60, want: 0.01 },
    { state: 'FullDisruption', zoneSize: 3, want: 0.1 },
    { state: 'Initial', zoneSize: 3, want: undefined },
  ] as const)('setLimiterInZone($zoneSize, $state) = $want', ({ state, zoneSize, want }) => {
    expect(setLimiterInZone(zoneSize, state, defaults, defaultDisruptionQPSFuncs(defaults))).toBe(want);
  });

  it('setLimiterInZone uses the overridden funcs', () => {
    const funcs: DisruptionQPSFuncs = {
      enterPartialDisruptionFunc: (size) => size * 2,
      enterFullDisruptionFunc: (size) => size * 3,
    };
    expect(setLimiterInZone(5, 'PartialDisruption', defaults, funcs)).toBe(10);
    expect(setLimiterInZone(5, 'FullDisruption', defaults, funcs)).toBe(15);
    expect(setLimiterInZone(5, 'Normal', defaults, funcs)).toBe(0.1);
  });
});

interface DisruptionCase {
  name: string;
  before: Record<string, ZoneState>;
  conditions: Conditions;
  zoneStates: Record<string, ZoneState>;
  want: Partial<Pick<DisruptionResult, 'limiterSwaps' | 'masterDisruption' | 'transitions' | 'removedZones'>>;
}

describe('handleDisruption', () => {
  it.each<DisruptionCase>([
    {
      name: 'normal: only zones whose state changed get a limiter swap',
      before: { [z1]: 'Normal', [z2]: 'Normal', [r2z2]: 'Normal' },
      conditions: { [z1]: [U, U, U, T], [z2]: [U], [r2z2]: [T, T] },
      zoneStates: { [z1]: 'PartialDisruption', [z2]: 'FullDisruption', [r2z2]: 'Normal' },
      want: {
        // Partial in a zone of 4 (<= 50): stop; Full of one zone: the normal rate.
        limiterSwaps: [
          { zone: z1, qps: 0 },
          { zone: z2, qps: 0.1 },
        ],
        masterDisruption: 'none',
        transitions: [
          { zone: z1, from: 'Normal', to: 'PartialDisruption' },
          { zone: z2, from: 'Normal', to: 'FullDisruption' },
        ],
        removedZones: [],
      },
    },
    {
      name: 'normal: a large partially disrupted zone gets the secondary rate',
      before: { [z1]: 'Normal', [z2]: 'Normal' },
      conditions: {
        [z1]: [...Array<NodeCondition>(40).fill(U), ...Array<NodeCondition>(11).fill(T)],
        [z2]: [T],
      },
      zoneStates: { [z1]: 'PartialDisruption', [z2]: 'Normal' },
      want: {
        limiterSwaps: [{ zone: z1, qps: 0.01 }],
        masterDisruption: 'none',
      },
    },
    {
      name: 'normal: back to Normal restores the normal rate',
      before: { [z1]: 'PartialDisruption', [z2]: 'FullDisruption' },
      conditions: { [z1]: [T, T, T, U], [z2]: [T] },
      zoneStates: { [z1]: 'Normal', [z2]: 'Normal' },
      want: {
        limiterSwaps: [
          { zone: z1, qps: 0.1 },
          { zone: z2, qps: 0.1 },
        ],
        masterDisruption: 'none',
      },
    },
    {
      name: 'no change: no swap, no transition',
      before: { [z1]: 'Normal', [z2]: 'FullDisruption' },
      conditions: { [z1]: [T], [z2]: [U] },
      zoneStates: { [z1]: 'Normal', [z2]: 'FullDisruption' },
      want: {
        limiterSwaps: [],
        masterDisruption: 'none',
        transitions: [],
      },
    },
    {
      name: 'enter: every zone is now Full, so all limiters become the never-limiter',
      before: { [z1]: 'FullDisruption', [z2]: 'Normal' },
      conditions: { [z1]: [U], [z2]: [U, none] },
      zoneStates: { [z1]: 'FullDisruption', [z2]: 'FullDisruption' },
      want: {
        // z1 was already Full and still gets SwapLimiter(0).
        limiterSwaps: [
          { zone: z1, qps: 0 },
          { zone: z2, qps: 0 },
        ],
        masterDisruption: 'enter',
        transitions: [{ zone: z2, from: 'Normal', to: 'FullDisruption' }],
      },
    },
    {
      name: 'enter: from Initial (controller start with every node down)',
      before: { [z1]: 'Initial' },
      conditions: { [z1]: [U, U] },
      zoneStates: { [z1]: 'FullDisruption' },
      want: {
        limiterSwaps: [{ zone: z1, qps: 0 }],
        masterDisruption: 'enter',
        transitions: [{ zone: z1, from: 'Initial', to: 'FullDisruption' }],
      },
    },
    {
      name: 'stay: every zone was and is Full',
      before: { [z1]: 'FullDisruption', [z2]: 'FullDisruption' },
      conditions: { [z1]: [U], [z2]: [F, none] },
      zoneStates: { [z1]: 'FullDisruption', [z2]: 'FullDisruption' },
      want: {
        limiterSwaps: [],
        masterDisruption: 'stay',
        transitions: [],
      },
    },
    {
      name: 'exit: every zone gets the limiter of its new state, changed or not',
      before: { [z1]: 'FullDisruption', [z2]: 'FullDisruption', [r2z2]: 'FullDisruption' },
      conditions: { [z1]: [T], [z2]: [U], [r2z2]: [U, U, U, T] },
      zoneStates: { [z1]: 'Normal', [z2]: 'FullDisruption', [r2z2]: 'PartialDisruption' },
      want: {
        limiterSwaps: [
          { zone: z1, qps: 0.1 },
          { zone: z2, qps: 0.1 }, // unchanged Full: HealthyQPSFunc replaces the never-limiter
          { zone: r2z2, qps: 0 }, // Partial in a small zone
        ],
        masterDisruption: 'exit',
        transitions: [
          { zone: z1, from: 'FullDisruption', to: 'Normal' },
          { zone: r2z2, from: 'FullDisruption', to: 'PartialDisruption' },
        ],
      },
    },
    {
      name: 'a zone with no counted node is removed, and is not a transition',
      before: { [z1]: 'Normal', [z2]: 'PartialDisruption' },
      conditions: { [z1]: [T] },
      zoneStates: { [z1]: 'Normal' },
      want: {
        limiterSwaps: [],
        masterDisruption: 'none',
        transitions: [],
        removedZones: [z2],
      },
    },
    {
      // Removed zones do not count for allWasFullyDisrupted: z2 was Normal but is gone, z1 was Full.
      name: 'removed zones do not prevent staying in master disruption',
      before: { [z1]: 'FullDisruption', [z2]: 'Normal' },
      conditions: { [z1]: [U] },
      zoneStates: { [z1]: 'FullDisruption' },
      want: {
        limiterSwaps: [],
        masterDisruption: 'stay',
        removedZones: [z2],
      },
    },
    {
      name: 'a removed zone is not swapped to the never-limiter on entry',
      before: { [z1]: 'Normal', [z2]: 'Normal' },
      conditions: { [z1]: [U] },
      zoneStates: { [z1]: 'FullDisruption' },
      want: {
        limiterSwaps: [{ zone: z1, qps: 0 }],
        masterDisruption: 'enter',
        removedZones: [z2],
      },
    },
    {
      name: 'a zone missing from zoneStates starts as Initial, then takes its new state',
      before: { [z1]: 'Normal' },
      conditions: { [z1]: [T], [z2]: [U, U, U, T] },
      zoneStates: { [z1]: 'Normal', [z2]: 'PartialDisruption' },
      want: {
        limiterSwaps: [{ zone: z2, qps: 0 }],
        masterDisruption: 'none',
        transitions: [{ zone: z2, from: 'Initial', to: 'PartialDisruption' }],
      },
    },
    {
      // The unseen zone is Initial, so allWasFullyDisrupted is false: this is an entry, not a stay.
      name: 'a zone missing from zoneStates makes all-Full an entry, not a stay',
      before: { [z1]: 'FullDisruption' },
      conditions: { [z1]: [U], [z2]: [U] },
      zoneStates: { [z1]: 'FullDisruption', [z2]: 'FullDisruption' },
      want: {
        limiterSwaps: [
          { zone: z1, qps: 0 },
          { zone: z2, qps: 0 },
        ],
        masterDisruption: 'enter',
        transitions: [{ zone: z2, from: 'Initial', to: 'FullDisruption' }],
      },
    },
    {
      // Upstream: the first loop does not run, so allAreFullyDisrupted stays true; the second loop
      // deletes every zone (none is present, so it never breaks) and allWasFullyDisrupted stays true;
      // handleDisruption returns early. No entry into master disruption (no taint stripping, no
      // never-limiter), no exit; all zones are simply forgotten. E.g. a cluster of excluded nodes only.
      name: 'empty zoneToNodeConditions: every zone removed, the early "stay" return, nothing else',
      before: { [z1]: 'Normal', [z2]: 'FullDisruption' },
      conditions: {},
      zoneStates: {},
      want: {
        limiterSwaps: [],
        masterDisruption: 'stay',
        transitions: [],
        removedZones: [z1, z2],
      },
    },
    {
      name: 'empty zoneToNodeConditions and no zones: the same no-op',
      before: {},
      conditions: {},
      zoneStates: {},
      want: { limiterSwaps: [], masterDisruption: 'stay', transitions: [], removedZones: [] },
    },
  ])('$name', (c) => {
    const result = handleDisruption(states(c.before), conds(c.conditions), defaults);
    expect(Object.fromEntries(result.zoneStates)).toEqual(c.zoneStates);
    expect(result).toMatchObject(c.want);
  });

  it('reports gauges for counted zones and resets removed ones to (0, 100, 0)', () => {
    const result = handleDisruption(
      states({ [z1]: 'Normal', [z2]: 'Normal' }),
      conds({ [z1]: [U, T, T, none] }),
      defaults,
    );
    expect(result.gauges).toEqual([
      { zone: z1, zoneSize: 4, zoneHealth: 50, unhealthyNodes: 2 },
      { zone: z2, zoneSize: 0, zoneHealth: 100, unhealthyNodes: 0 },
    ]);
  });

  it('computes zone health as a float percentage', () => {
    const result = handleDisruption(states({ [z1]: 'Normal' }), conds({ [z1]: [U, T, T] }), defaults);
    expect(result.gauges).toEqual([{ zone: z1, zoneSize: 3, zoneHealth: 200 / 3, unhealthyNodes: 1 }]);
  });

  it('does not mutate its inputs', () => {
    const before = states({ [z1]: 'Normal', [z2]: 'Normal' });
    const conditions = conds({ [z1]: [U], [r2z2]: [U] });
    handleDisruption(before, conditions, defaults);
    expect(Object.fromEntries(before)).toEqual({ [z1]: 'Normal', [z2]: 'Normal' });
    expect([...conditions.keys()]).toEqual([z1, r2z2]);
  });

  it('does not depend on the insertion order of the maps', () => {
    const a = handleDisruption(
      states({
        [z1]: 'FullDisruption',
        a: 'Normal',
        [z2]: 'FullDisruption',
        [r2z2]: 'FullDisruption',
        b: 'Normal',
      }),
      conds({ [z1]: [T], [z2]: [U], [r2z2]: [U, U, U, T] }),
      defaults,
    );
    const b = handleDisruption(
      states({
        b: 'Normal',
        [r2z2]: 'FullDisruption',
        [z2]: 'FullDisruption',
        a: 'Normal',
        [z1]: 'FullDisruption',
      }),
      conds({ [r2z2]: [U, U, U, T], [z2]: [U], [z1]: [T] }),
      defaults,
    );
    expect(b.limiterSwaps).toEqual(a.limiterSwaps);
    expect(b.transitions).toEqual(a.transitions);
    expect(b.gauges).toEqual(a.gauges);
    expect(b.removedZones).toEqual(a.removedZones);
    expect([...b.zoneStates.entries()]).toEqual([...a.zoneStates.entries()]);
  });

  it('passes the zone size (counted nodes) to the disruption funcs', () => {
    const sizes: number[] = [];
    const funcs: DisruptionQPSFuncs = {
      enterPartialDisruptionFunc: (size) => (sizes.push(size), 7),
      enterFullDisruptionFunc: (size) => (sizes.push(size), 9),
    };
    const result = handleDisruption(
      states({ [z1]: 'Normal', [z2]: 'Normal' }),
      conds({ [z1]: [U, U, U, U, T], [z2]: [U, U] }),
      defaults,
      funcs,
    );
    expect(sizes).toEqual([5, 2]);
    expect(result.limiterSwaps).toEqual([
      { zone: z1, qps: 7 },
      { zone: z2, qps: 9 },
    ]);
  });
});

// The zone-state part of upstream's TestMonitorNodeHealth: two monitorNodeHealth passes, the first at
// fakeNow (2015-01-01 12:00), the second 60 minutes later after replacing the node statuses. Here each
// pass is the handleDisruption call, fed with the Ready condition every counted node has AFTER
// tryUpdateNodeHealth (grace 50s, startup grace 60s). Before pass 1 every zone is Initial (all nodes
// are new, addPodEvictorForNewZone). Upstream overrides both disruption funcs to return 100000 and
// builds the controller with evictionQPS = secondaryQPS = 100000, large threshold 20.
// `healthy` = True, heartbeat fakeNow+60m; `unhealthy` = Unknown, heartbeat fakeNow.
describe('TestMonitorNodeHealth', () => {
  const testConfig = {
    nodeEvictionRate: 100000,
    secondaryNodeEvictionRate: 100000,
    largeClusterSizeThreshold: 20,
    unhealthyZoneThreshold: 0.55,
  };
  const testFuncs: DisruptionQPSFuncs = {
    enterPartialDisruptionFunc: () => 100000,
    enterFullDisruptionFunc: () => 100000,
  };
  const noZone = '';

  it.each<{
    name: string;
    initialZones: string[];
    initial: Conditions;
    following: Conditions;
    expectedInitialStates: Record<string, ZoneState>;
    expectedFollowingStates: Record<string, ZoneState>;
    masterDisruption: [DisruptionResult['masterDisruption'], DisruptionResult['masterDisruption']];
  }>([
    {
      // Pass 1: node0 (no labels) has Ready=True when first seen: probe = now, so True.
      // Pass 2: new heartbeat (fakeNow+60m): probe = now, True.
      name: 'No Disruption: Node created recently without failure domain labels (happens only at cluster startup)',
      initialZones: [noZone],
      initial: { [noZone]: [T] },
      following: { [noZone]: [T] },
      expectedInitialStates: { [noZone]: 'Normal' },
      expectedFollowingStates: { [noZone]: 'Normal' },
      masterDisruption: ['none', 'none'],
    },
    {
      // Pass 1: both nodes Unknown as posted (first sight, probe = now). Every zone Full: enter.
      // Pass 2: node0 `unhealthy` has the same heartbeat, probe stays fakeNow, stale, already
      // Unknown: stays Unknown. node1 `healthy`: new heartbeat, True. Exit master disruption.
      name: 'No Disruption: Initially both zones down, one comes back',
      initialZones: [z1, z2],
      initial: { [z1]: [U], [z2]: [U] },
      following: { [z1]: [U], [z2]: [T] },
      expectedInitialStates: { [z1]: 'FullDisruption', [z2]: 'FullDisruption' },
      expectedFollowingStates: { [z1]: 'FullDisruption', [z2]: 'Normal' },
      masterDisruption: ['enter', 'exit'],
    },
    {
      // Pass 1: no status at all: startup grace counted from creation (fakeNow), not stale, Ready
      // stays nil; 4 nil conditions: Full. Pass 2: node0-2 post Unknown, node3 True; a Ready
      // condition seen for the first time resets the probe, so they keep what they posted: 3 of 4.
      name: 'Partial Disruption: Nodes created recently without status conditions (happens only at cluster startup)',
      initialZones: [z1],
      initial: { [z1]: [none, none, none, none] },
      following: { [z1]: [U, U, U, T] },
      expectedInitialStates: { [z1]: 'FullDisruption' },
      expectedFollowingStates: { [z1]: 'PartialDisruption' },
      masterDisruption: ['enter', 'exit'],
    },
    {
      // Pass 1: as posted, 2 Unknown + 3 True: only 2 not ready, Normal.
      // Pass 2: node0, node1 and node2 get `unhealthy` (heartbeat fakeNow, unchanged for node2 too),
      // so their probe stays at fakeNow, stale, Ready already Unknown; node3, node4 True: 3 of 5.
      name: 'Partial Disruption: one Node failed leading to the number of healthy Nodes to exceed the configured threshold',
      initialZones: [z1],
      initial: { [z1]: [U, U, T, T, T] },
      following: { [z1]: [U, U, U, T, T] },
      expectedInitialStates: { [z1]: 'Normal' },
      expectedFollowingStates: { [z1]: 'PartialDisruption' },
      masterDisruption: ['none', 'none'],
    },
    {
      // Pass 1: 2 Unknown + 1 True: Normal. Pass 2: all `unhealthy` (stale, Unknown): the only zone
      // is Full, so the cluster enters master disruption.
      name: 'Full Disruption: the zone has less than 2 Nodes down, the last healthy Node has failed',
      initialZones: [z1],
      initial: { [z1]: [U, U, T] },
      following: { [z1]: [U, U, U] },
      expectedInitialStates: { [z1]: 'Normal' },
      expectedFollowingStates: { [z1]: 'FullDisruption' },
      masterDisruption: ['none', 'enter'],
    },
    {
      // Pass 1 and 2: node0 Unknown (stale in pass 2), node1 True (new heartbeat in pass 2).
      name: 'Full Disruption: all the Nodes in one zone are down',
      initialZones: [z1, z2],
      initial: { [z1]: [U], [z2]: [T] },
      following: { [z1]: [U], [z2]: [T] },
      expectedInitialStates: { [z1]: 'FullDisruption', [z2]: 'Normal' },
      expectedFollowingStates: { [z1]: 'FullDisruption', [z2]: 'Normal' },
      masterDisruption: ['none', 'none'],
    },
    {
      // Both Unknown in both passes (pass 2: stale, already Unknown).
      name: 'Full Disruption: all the Nodes in both the zones are down',
      initialZones: [z1, r2z2],
      initial: { [z1]: [U], [r2z2]: [U] },
      following: { [z1]: [U], [r2z2]: [U] },
      expectedInitialStates: { [z1]: 'FullDisruption', [r2z2]: 'FullDisruption' },
      expectedFollowingStates: { [z1]: 'FullDisruption', [r2z2]: 'FullDisruption' },
      masterDisruption: ['enter', 'stay'],
    },
    {
      // Pass 1: True. Pass 2: conditions removed: the startup grace (60s) applies from the old probe
      // (fakeNow), stale, so NodeStatusNeverUpdated Unknown conditions are appended: Unknown.
      name: 'Full Disruption: Ready condition removed from the Node',
      initialZones: [z1],
      initial: { [z1]: [T] },
      following: { [z1]: [U] },
      expectedInitialStates: { [z1]: 'Normal' },
      expectedFollowingStates: { [z1]: 'FullDisruption' },
      masterDisruption: ['none', 'enter'],
    },
    {
      // node-master carries the exclusion label, so only node0 (Unknown in both passes) is counted;
      // both nodes created the z1 entry through addPodEvictorForNewZone.
      name: 'Full Disruption: the only available Node has the node.kubernetes.io/exclude-disruption label',
      initialZones: [z1],
      initial: { [z1]: [U] },
      following: { [z1]: [U] },
      expectedInitialStates: { [z1]: 'FullDisruption' },
      expectedFollowingStates: { [z1]: 'FullDisruption' },
      masterDisruption: ['enter', 'stay'],
    },
  ])('$name', (c) => {
    const initial = new Map(c.initialZones.map((zone): [string, ZoneState] => [zone, 'Initial']));
    const first = handleDisruption(initial, conds(c.initial), testConfig, testFuncs);
    expect(Object.fromEntries(first.zoneStates)).toEqual(c.expectedInitialStates);
    const second = handleDisruption(first.zoneStates, conds(c.following), testConfig, testFuncs);
    expect(Object.fromEntries(second.zoneStates)).toEqual(c.expectedFollowingStates);
    expect([first.masterDisruption, second.masterDisruption]).toEqual(c.masterDisruption);
  });
});

// The disruption rows of the legacy TestMonitorNodeHealthEvictPodsWithDisruption (disruption funcs
// overridden to 10000, QPS 10000). "Evicts" is read here as: after both passes, node0's zone queue
// has a limiter that lets items through (qps > 0; 0 is the never-limiter). Queues start at the
// normal rate when addPodEvictorForNewZone creates them. The old "-master" name exclusion is gone
// upstream (Test_isNodeExcludedFromDisruptionChecks), so that row uses the exclusion label instead.
describe('TestMonitorNodeHealthEvictPodsWithDisruption', () => {
  const legacyConfig = {
    nodeEvictionRate: 10000,
    secondaryNodeEvictionRate: 10000,
    largeClusterSizeThreshold: 20,
    unhealthyZoneThreshold: 0.55,
  };
  const legacyFuncs: DisruptionQPSFuncs = {
    enterPartialDisruptionFunc: () => 10000,
    enterFullDisruptionFunc: () => 10000,
  };

  it.each<{
    description: string;
    zones: string[];
    initial: Conditions;
    following: Conditions;
    expectedInitialStates: Record<string, ZoneState>;
    expectedFollowingStates: Record<string, ZoneState>;
    expectedEvictPods: boolean;
  }>([
    {
      description: "Network Disruption: Only zone is down - eviction shouldn't take place.",
      zones: [z1],
      initial: { [z1]: [U, U] },
      following: { [z1]: [U, U] },
      expectedInitialStates: { [z1]: 'FullDisruption' },
      expectedFollowingStates: { [z1]: 'FullDisruption' },
      expectedEvictPods: false,
    },
    {
      description: "Network Disruption: Both zones down - eviction shouldn't take place.",
      zones: [z1, r2z2],
      initial: { [z1]: [U], [r2z2]: [U] },
      following: { [z1]: [U], [r2z2]: [U] },
      expectedInitialStates: { [z1]: 'FullDisruption', [r2z2]: 'FullDisruption' },
      expectedFollowingStates: { [z1]: 'FullDisruption', [r2z2]: 'FullDisruption' },
      expectedEvictPods: false,
    },
    {
      description: 'Network Disruption: One zone is down - eviction should take place.',
      zones: [z1, z2],
      initial: { [z1]: [U], [z2]: [T] },
      following: { [z1]: [U], [z2]: [T] },
      expectedInitialStates: { [z1]: 'FullDisruption', [z2]: 'Normal' },
      expectedFollowingStates: { [z1]: 'FullDisruption', [z2]: 'Normal' },
      expectedEvictPods: true,
    },
    {
      description: 'NetworkDisruption: eviction should stop, only -master Node is healthy',
      zones: [z1],
      initial: { [z1]: [U] },
      following: { [z1]: [U] },
      expectedInitialStates: { [z1]: 'FullDisruption' },
      expectedFollowingStates: { [z1]: 'FullDisruption' },
      expectedEvictPods: false,
    },
    {
      description: 'Initially both zones down, one comes back - eviction should take place',
      zones: [z1, z2],
      initial: { [z1]: [U], [z2]: [U] },
      following: { [z1]: [U], [z2]: [T] },
      expectedInitialStates: { [z1]: 'FullDisruption', [z2]: 'FullDisruption' },
      expectedFollowingStates: { [z1]: 'FullDisruption', [z2]: 'Normal' },
      expectedEvictPods: true,
    },
    {
      description: 'Zone is partially disrupted - eviction should take place.',
      zones: [z1],
      initial: { [z1]: [U, U, U, T, T] },
      following: { [z1]: [U, U, U, T, T] },
      expectedInitialStates: { [z1]: 'PartialDisruption' },
      expectedFollowingStates: { [z1]: 'PartialDisruption' },
      expectedEvictPods: true,
    },
  ])('$description', (c) => {
    const limiter = new Map(c.zones.map((zone) => [zone, legacyConfig.nodeEvictionRate]));
    const initial = new Map(c.zones.map((zone): [string, ZoneState] => [zone, 'Initial']));
    const first = handleDisruption(initial, conds(c.initial), legacyConfig, legacyFuncs);
    expect(Object.fromEntries(first.zoneStates)).toEqual(c.expectedInitialStates);
    const second = handleDisruption(first.zoneStates, conds(c.following), legacyConfig, legacyFuncs);
    expect(Object.fromEntries(second.zoneStates)).toEqual(c.expectedFollowingStates);
    for (const { zone, qps } of [...first.limiterSwaps, ...second.limiterSwaps]) limiter.set(zone, qps);
    expect((limiter.get(z1) ?? 0) > 0).toBe(c.expectedEvictPods);
  });
});
