import { describe, expect, it } from 'vitest';
import { planCommit, type CommitPlan } from '../../../../shared/adapters/dynamodb/commitPlan.js';
import type { ControllerState } from '../../../../shared/domain/controllerState.js';
import type { NodeHealthData } from '../../../../shared/domain/nodeHealth.js';
import { add, newRateLimitedTimedQueue } from '../../../../shared/domain/rateLimitedTimedQueue.js';
import { fakeNeverRateLimiter } from '../../../../shared/domain/tokenBucket.js';
import type { NodeCondition } from '../../../../shared/domain/types.js';
import type { ZoneGauge } from '../../../../shared/domain/zones.js';
import type { ClusterMeta, LoadedState } from '../../../../shared/ports/stores.js';

// Two registered nodes with stored health rows (versions 4 and 7), one zone with a stored state (version 2),
// gauges and a queue, and the cluster row of digest 10. Each case states what the pass changed and, written
// out by hand, what the commit must write.
const T0 = Date.parse('2026-01-29T09:00:00Z');
const ready: NodeCondition = {
  type: 'Ready',
  status: 'True',
  lastHeartbeatTime: T0 - 40_000,
  lastTransitionTime: T0 - 3_600_000,
};
const healthA: NodeHealthData = {
  probeTimestamp: T0,
  readyTransitionTimestamp: T0 - 3_600_000,
  status: [ready],
  lease: { renewTime: T0 },
};
const healthB: NodeHealthData = { ...healthA, lease: { renewTime: T0 - 2_000 }, probeTimestamp: T0 - 2_000 };
const queueZ1 = newRateLimitedTimedQueue(fakeNeverRateLimiter);
const meta: ClusterMeta = {
  lastSequence: 10,
  lastObservedAt: T0,
  relayLastSeen: T0,
  masterDisruption: false,
};
const gaugeZ1 = { zoneSize: 2, unhealthyNodes: 0, zoneHealth: 1 };

const loaded: LoadedState = {
  cluster: 'prod',
  state: {
    knownNodes: new Map([
      ['a', 'uid-a'],
      ['b', 'uid-b'],
    ]),
    nodeHealth: new Map([
      ['a', healthA],
      ['b', healthB],
    ]),
    zoneStates: new Map([['z1', 'Normal']]),
    zoneQueues: new Map([['z1', queueZ1]]),
    nodesToRetry: new Set(),
    nodeEvictionStatus: new Map(),
  },
  nodes: new Map(),
  meta,
  zones: new Map([['z1', gaugeZ1]]),
  versions: {
    meta: 3,
    health: new Map([
      ['a', 4],
      ['b', 7],
    ]),
    nodes: new Map(),
    zoneStates: new Map([['z1', 2]]),
    zoneQueues: new Map(),
    nodesReadAt: T0,
    fullLoadAt: T0,
  },
};

/** The loaded state with some of its maps replaced, as a pass returns it. */
function stateWith(change: Partial<ControllerState>): ControllerState {
  return { ...loaded.state, ...change };
}

const nothing: CommitPlan = {
  healthWrites: [],
  deferredHealth: [],
  zoneStateWrites: [],
  queueWrites: [],
  metaChanged: false,
  positionDeferred: false,
  fence: false,
  unchanged: true,
};
const renewedA: NodeHealthData = {
  ...healthA,
  probeTimestamp: T0 + 10_000,
  lease: { renewTime: T0 + 10_000 },
};
const unknownA: NodeHealthData = {
  ...healthA,
  readyTransitionTimestamp: T0 + 5_000,
  status: [{ ...ready, status: 'Unknown', lastTransitionTime: T0 + 5_000 }],
};
const queuedZ1 = add(queueZ1, 'a', 'uid-a', T0 + 5_000).queue;
const nextMeta: ClusterMeta = {
  ...meta,
  lastSequence: 11,
  lastObservedAt: T0 + 5_000,
  relayLastSeen: T0 + 5_000,
};

interface Case {
  readonly name: string;
  readonly from?: LoadedState;
  readonly state: ControllerState;
  readonly meta?: ClusterMeta;
  readonly gauges?: readonly ZoneGauge[];
  readonly positionMayWait?: boolean;
  readonly want: CommitPlan;
}

/** A warm function's LoadedState whose meta ran ahead of the stored row (digest 11 processed quietly). */
/** The last commit wrote part of z1's queue changes (queueEntriesPerCommit). */
const queueBehind: LoadedState = {
  ...loaded,
  versions: {
    ...loaded.versions,
    zoneQueues: new Map([['z1', { version: 2, nextSeq: 1, entries: new Map(), behind: 3 }]]),
  },
};
const ahead: LoadedState = { ...loaded, meta: nextMeta, versions: { ...loaded.versions, storedMeta: meta } };
const thirdMeta: ClusterMeta = {
  ...meta,
  lastSequence: 12,
  lastObservedAt: T0 + 10_000,
  relayLastSeen: T0 + 10_000,
};

describe('planCommit: what a monitor commit writes', () => {
  it.each<Case>([
    { name: 'a pass that changed nothing plans no write and no fence', state: loaded.state, want: nothing },
    {
      name: 'gauges recomputed to the stored values are no change',
      state: loaded.state,
      gauges: [{ zone: 'z1', ...gaugeZ1 }],
      want: nothing,
    },
    {
      name: "a renewing node's new probe alone needs no health write",
      state: stateWith({ nodeHealth: new Map([...loaded.state.nodeHealth, ['a', renewedA]]) }),
      want: nothing,
    },
    {
      name: 'health entries rebuilt as equal values (new objects) need no write',
      state: stateWith({
        knownNodes: new Map(loaded.state.knownNodes),
        nodeHealth: new Map([
          ['a', { ...healthA }],
          ['b', { ...healthB, status: [{ ...ready }] }],
        ]),
      }),
      want: nothing,
    },
    {
      name: 'meta-only change: no fence',
      state: stateWith({ nodeHealth: new Map([...loaded.state.nodeHealth, ['a', renewedA]]) }),
      meta: nextMeta,
      want: { ...nothing, metaChanged: true, unchanged: false },
    },
    {
      name: 'a probe no digest carries again (set to now) is written, conditional on the stored version',
      state: stateWith({
        nodeHealth: new Map([...loaded.state.nodeHealth, ['b', { ...healthB, probeTimestamp: T0 + 5_000 }]]),
      }),
      want: {
        ...nothing,
        healthWrites: [
          {
            name: 'b',
            row: { registeredUid: 'uid-b', health: { ...healthB, probeTimestamp: T0 + 5_000 }, retry: false },
            expected: 7,
          },
        ],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'rows to write: fence first, the new meta recorded after them',
      state: stateWith({ nodeHealth: new Map([...loaded.state.nodeHealth, ['a', unknownA]]) }),
      meta: nextMeta,
      want: {
        ...nothing,
        healthWrites: [
          { name: 'a', row: { registeredUid: 'uid-a', health: unknownA, retry: false }, expected: 4 },
        ],
        metaChanged: true,
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'a node removed from knownNodes is written (deleted)',
      state: stateWith({
        knownNodes: new Map([['a', 'uid-a']]),
        nodeHealth: new Map([['a', healthA]]),
      }),
      want: {
        ...nothing,
        healthWrites: [{ name: 'b', row: { retry: false }, expected: 7 }],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'a new node is written with no expected version (its row must not exist)',
      state: stateWith({
        knownNodes: new Map([...loaded.state.knownNodes, ['c', 'uid-c']]),
        nodeHealth: new Map([...loaded.state.nodeHealth, ['c', healthA]]),
      }),
      want: {
        ...nothing,
        healthWrites: [
          { name: 'c', row: { registeredUid: 'uid-c', health: healthA, retry: false }, expected: undefined },
        ],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'a new node with an empty row and no stored row is skipped',
      // Registered in memory and forgotten again before any commit stored it: nothing to write or clear.
      from: {
        ...loaded,
        state: { ...loaded.state, knownNodes: new Map([...loaded.state.knownNodes, ['c', 'uid-c']]) },
      },
      state: loaded.state,
      want: nothing,
    },
    {
      name: 'a node loaded without a stored row is written even when the pass left it alone',
      from: {
        ...loaded,
        state: { ...loaded.state, knownNodes: new Map([...loaded.state.knownNodes, ['c', 'uid-c']]) },
      },
      state: { ...loaded.state, knownNodes: new Map([...loaded.state.knownNodes, ['c', 'uid-c']]) },
      want: {
        ...nothing,
        healthWrites: [{ name: 'c', row: { registeredUid: 'uid-c', retry: false }, expected: undefined }],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'nodesToRetry: a node added is written with retry',
      state: stateWith({ nodesToRetry: new Set(['a']) }),
      want: {
        ...nothing,
        healthWrites: [
          { name: 'a', row: { registeredUid: 'uid-a', health: healthA, retry: true }, expected: 4 },
        ],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'nodesToRetry: a node removed is written without retry',
      from: { ...loaded, state: { ...loaded.state, nodesToRetry: new Set(['b']) } },
      state: loaded.state,
      want: {
        ...nothing,
        healthWrites: [
          { name: 'b', row: { registeredUid: 'uid-b', health: healthB, retry: false }, expected: 7 },
        ],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'legacy eviction status set is written',
      state: stateWith({ nodeEvictionStatus: new Map([['b', 'toBeEvicted']]) }),
      want: {
        ...nothing,
        healthWrites: [
          {
            name: 'b',
            row: { registeredUid: 'uid-b', health: healthB, retry: false, evictionStatus: 'toBeEvicted' },
            expected: 7,
          },
        ],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'a zone state change writes the zone row and leaves the stored gauges',
      state: stateWith({ zoneStates: new Map([['z1', 'PartialDisruption']]) }),
      gauges: [{ zone: 'z1', ...gaugeZ1 }],
      want: {
        ...nothing,
        zoneStateWrites: [{ zone: 'z1', state: 'PartialDisruption', gauge: undefined }],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'a zone gauge change writes the zone row without a state change',
      state: loaded.state,
      gauges: [{ zone: 'z1', zoneSize: 2, unhealthyNodes: 1, zoneHealth: 0.5 }],
      want: {
        ...nothing,
        zoneStateWrites: [
          { zone: 'z1', state: 'Normal', gauge: { zoneSize: 2, unhealthyNodes: 1, zoneHealth: 0.5 } },
        ],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: "an empty zone's NaN health, stored as NaN, is no change",
      from: { ...loaded, zones: new Map([['z1', { zoneSize: 0, unhealthyNodes: 0, zoneHealth: NaN }]]) },
      state: loaded.state,
      gauges: [{ zone: 'z1', zoneSize: 0, unhealthyNodes: 0, zoneHealth: NaN }],
      want: nothing,
    },
    {
      name: 'a new zone is written with its state and gauges',
      state: stateWith({
        zoneStates: new Map([
          ['z1', 'Normal'],
          ['z2', 'Initial'],
        ]),
      }),
      gauges: [
        { zone: 'z1', ...gaugeZ1 },
        { zone: 'z2', zoneSize: 1, unhealthyNodes: 0, zoneHealth: 1 },
      ],
      want: {
        ...nothing,
        zoneStateWrites: [
          { zone: 'z2', state: 'Initial', gauge: { zoneSize: 1, unhealthyNodes: 0, zoneHealth: 1 } },
        ],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'a zone gone from zoneStates is written with no state',
      state: stateWith({ zoneStates: new Map() }),
      want: {
        ...nothing,
        zoneStateWrites: [{ zone: 'z1', state: undefined, gauge: undefined }],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'a changed queue is planned',
      state: stateWith({ zoneQueues: new Map([['z1', queuedZ1]]) }),
      want: {
        ...nothing,
        queueWrites: [{ zone: 'z1', queue: queuedZ1 }],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'a queue whose last commit left entries behind is planned though the pass did not change it',
      from: queueBehind,
      state: loaded.state,
      want: {
        ...nothing,
        queueWrites: [{ zone: 'z1', queue: queueZ1 }],
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'a queue stored whole and not changed is not planned',
      from: {
        ...loaded,
        versions: {
          ...loaded.versions,
          zoneQueues: new Map([['z1', { version: 2, nextSeq: 1, entries: new Map() }]]),
        },
      },
      state: loaded.state,
      want: nothing,
    },
    {
      name: 'a quiet pass that may wait: only the position moved, nothing written',
      state: loaded.state,
      meta: nextMeta,
      positionMayWait: true,
      want: { ...nothing, metaChanged: true, positionDeferred: true },
    },
    {
      name: 'the position may wait, but the relay clock offset moved too: the row is written',
      state: loaded.state,
      meta: { ...nextMeta, clockOffset: 250 },
      positionMayWait: true,
      want: { ...nothing, metaChanged: true, unchanged: false },
    },
    {
      name: 'the position may wait, but master disruption changed: the row is written',
      state: loaded.state,
      meta: { ...nextMeta, masterDisruption: true },
      positionMayWait: true,
      want: { ...nothing, metaChanged: true, unchanged: false },
    },
    {
      name: 'the position may wait, but a row is written: fence, rows, then the position',
      state: stateWith({ nodeHealth: new Map([...loaded.state.nodeHealth, ['a', unknownA]]) }),
      meta: nextMeta,
      positionMayWait: true,
      want: {
        ...nothing,
        healthWrites: [
          { name: 'a', row: { registeredUid: 'uid-a', health: unknownA, retry: false }, expected: 4 },
        ],
        metaChanged: true,
        fence: true,
        unchanged: false,
      },
    },
    {
      name: 'meta ahead of the stored row: compared with the row, so the position it owes is written when it may not wait',
      from: ahead,
      state: loaded.state,
      meta: thirdMeta,
      want: { ...nothing, metaChanged: true, unchanged: false },
    },
    {
      name: 'meta ahead of the stored row, and the next quiet pass may wait too',
      from: ahead,
      state: loaded.state,
      meta: thirdMeta,
      positionMayWait: true,
      want: { ...nothing, metaChanged: true, positionDeferred: true },
    },
  ])('$name', ({ from = loaded, state, meta: after = from.meta, gauges, positionMayWait, want }) => {
    expect(
      planCommit(from, {
        state,
        meta: after,
        ...(gauges !== undefined && { gauges }),
        ...(positionMayWait !== undefined && { positionMayWait }),
      }),
    ).toEqual(want);
  });

  it('names every node whose row changed, each conditional on its own version', () => {
    const plan = planCommit(loaded, {
      state: stateWith({
        nodeHealth: new Map([
          ['a', unknownA],
          ['b', healthB],
        ]),
        nodesToRetry: new Set(['b']),
      }),
      meta: nextMeta,
    });
    expect(plan.healthWrites.map((w) => [w.name, w.expected]).sort()).toEqual([
      ['a', 4],
      ['b', 7],
    ]);
  });

  it('builds no row for a node the pass left alone (the very same entries)', () => {
    // Rows are built (and compared) by reading the after state by name; the identity checks only iterate
    // it. Steady passes over 5,000 nodes rely on that (bench/stateStoreCost.ts).
    let reads = 0;
    const counted = new Map(loaded.state.nodeHealth);
    const get = counted.get.bind(counted);
    counted.get = (name: string) => {
      reads++;
      return get(name);
    };
    expect(planCommit(loaded, { state: stateWith({ nodeHealth: counted }), meta })).toEqual(nothing);
    expect(reads).toBe(0);
  });
});

describe('planCommit: health-only writes paced (StoreSettings.healthWritesPerCommit)', () => {
  // Four registered nodes with stored rows; a zone coming back changes every one's Ready condition.
  const names = ['a', 'b', 'c', 'd'];
  const four: LoadedState = {
    ...loaded,
    state: {
      ...loaded.state,
      knownNodes: new Map(names.map((n) => [n, `uid-${n}`])),
      nodeHealth: new Map(names.map((n) => [n, healthA])),
    },
    versions: { ...loaded.versions, health: new Map(names.map((n, i) => [n, i + 1])) },
  };
  const allUnknown = (...extra: [string, NodeHealthData][]): ControllerState => ({
    ...four.state,
    nodeHealth: new Map([...names.map((n): [string, NodeHealthData] => [n, unknownA]), ...extra]),
  });
  const unknownRow = (name: string, expected: number) => ({
    name,
    row: { registeredUid: `uid-${name}`, health: unknownA, retry: false },
    expected,
  });

  it('writes the first `limit` health-only rows in name order and defers the rest, in order', () => {
    const plan = planCommit(four, { state: allUnknown(), meta: nextMeta }, { healthWrites: 2 });
    expect(plan.healthWrites).toEqual([unknownRow('a', 1), unknownRow('b', 2)]);
    expect(plan.deferredHealth).toEqual(['c', 'd']);
    expect(plan.fence).toBe(true);
  });

  it('writes them all when they fit, deferring nothing', () => {
    const plan = planCommit(four, { state: allUnknown(), meta: nextMeta }, { healthWrites: 4 });
    expect(plan.healthWrites.map((w) => w.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(plan.deferredHealth).toEqual([]);
  });

  it('always writes a registration, a retry mark or an eviction status, beside the limit', () => {
    const state: ControllerState = {
      ...allUnknown(['e', healthA]),
      knownNodes: new Map([...four.state.knownNodes, ['e', 'uid-e']]),
      nodesToRetry: new Set(['d']),
    };
    const plan = planCommit(four, { state, meta: nextMeta }, { healthWrites: 1 });
    // In no particular order: the rows are written concurrently.
    expect([...plan.healthWrites].sort((x, y) => x.name.localeCompare(y.name))).toEqual([
      unknownRow('a', 1),
      { name: 'd', row: { registeredUid: 'uid-d', health: unknownA, retry: true }, expected: 4 },
      { name: 'e', row: { registeredUid: 'uid-e', health: healthA, retry: false }, expected: undefined },
    ]);
    expect(plan.deferredHealth).toEqual(['b', 'c']);
  });

  it('a later pass that changes nothing writes the rows left behind (not a quiet commit)', () => {
    // The warm function's state after the first commit: every node Unknown, c and d not stored yet.
    const behind: LoadedState = {
      ...four,
      state: allUnknown(),
      versions: {
        ...four.versions,
        health: new Map([...four.versions.health, ['a', 11], ['b', 12]]),
        pendingHealth: ['c', 'd'],
      },
    };
    const plan = planCommit(behind, { state: behind.state, meta: nextMeta }, { healthWrites: 2 });
    expect(plan.healthWrites).toEqual([unknownRow('c', 3), unknownRow('d', 4)]);
    expect(plan.deferredHealth).toEqual([]);
    expect(plan.fence).toBe(true);
    expect(plan.unchanged).toBe(false);
  });

  it('rows left behind go before new health-only changes, which queue after them', () => {
    const behind: LoadedState = {
      ...four,
      state: {
        ...four.state,
        nodeHealth: new Map([...four.state.nodeHealth, ['c', unknownA], ['d', unknownA]]),
      },
      versions: { ...four.versions, pendingHealth: ['d', 'c'] },
    };
    const plan = planCommit(behind, { state: allUnknown(), meta: nextMeta }, { healthWrites: 1 });
    expect(plan.healthWrites).toEqual([unknownRow('d', 4)]);
    expect(plan.deferredHealth).toEqual(['c', 'a', 'b']);
  });

  it('a row left behind that now forgets its node is written whatever the limit', () => {
    const behind: LoadedState = {
      ...four,
      state: allUnknown(),
      versions: { ...four.versions, pendingHealth: ['c', 'd'] },
    };
    const knownNodes = new Map(four.state.knownNodes);
    knownNodes.delete('d');
    const nodeHealth = new Map(allUnknown().nodeHealth);
    nodeHealth.delete('d');
    const plan = planCommit(
      behind,
      { state: { ...behind.state, knownNodes, nodeHealth }, meta: nextMeta },
      { healthWrites: 0 },
    );
    expect(plan.healthWrites).toEqual([{ name: 'd', row: { retry: false }, expected: 4 }]);
    expect(plan.deferredHealth).toEqual(['c']);
  });
});
