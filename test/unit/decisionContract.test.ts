// shared/decisionContract.ts: every format of the Decisions trail reads back what was written (a table of
// cases, then a seeded sweep), malformed strings and rows read as undefined or an error (never a throw),
// and what the producers record reads back to the values they were given.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { passDecisions } from '../../shared/app/monitorReport.js';
import { effectInputs } from '../../shared/app/decisions.js';
import {
  ClusterSubject,
  formatConditionInput,
  formatDecisionSubject,
  formatPodRef,
  formatTaintInput,
  formatTaintWithValueInput,
  massDecisionAbout,
  massDecisionInputs,
  massDecisionNodes,
  MassDecisionNodesPerRow,
  MassDecisionThreshold,
  parseConditionInput,
  parseDecisionSubject,
  parsePodRef,
  parseTaintInput,
  parseTaintWithValueInput,
  podOfDecision,
  readWriteDecision,
  readZoneStateDecision,
  taintOfDecision,
  zoneLabel,
  zoneSubject,
  type ConditionInput,
  type DecisionSubject,
  type PodRef,
  type TaintInput,
  type TaintWithValueInput,
} from '../../shared/decisionContract.js';
import { emptyControllerState } from '../../shared/domain/controllerState.js';
import type { MonitorPassResult } from '../../shared/domain/monitorNodeHealth.js';
import type { RateLimitedTimedQueue } from '../../shared/domain/rateLimitedTimedQueue.js';
import { TaintNodeNotReady, TaintNodeUnreachable } from '../../shared/domain/taints.js';
import { fakeNeverRateLimiter } from '../../shared/domain/tokenBucket.js';
import {
  parsePodKey,
  podKey,
  type NodeCondition,
  type Pod,
  type TaintEffect,
} from '../../shared/domain/types.js';
import { createZoneID, formatZoneKey } from '../../shared/domain/zones.js';
import type { DecisionRecord, JsonValue } from '../../shared/ports/stores.js';
import { nodeName } from '../helpers/eventArbitraries.js';

/** The sweep's seeds: each one a reproducible run of its own (`fc.assert(…, { seed })`). */
const Seeds = Array.from({ length: 24 }, (_, i) => 1000 + i);
const RunsPerSeed = 200;

const sweep = <T>(arbitrary: fc.Arbitrary<T>, check: (value: T) => void): void => {
  for (const seed of Seeds) fc.assert(fc.property(arbitrary, check), { seed, numRuns: RunsPerSeed });
};

const chars = (alphabet: string): fc.Arbitrary<string> => fc.constantFrom(...Array.from(alphabet));
const effects: readonly TaintEffect[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const effect = fc.constantFrom(...effects);

// Zone labels: '' (no zone labels) or `region:zone`, either part empty or holding ':' and '-'.
const zonePart = fc.string({ unit: chars('abz09-:.'), maxLength: 12 });
const zone = fc.oneof(
  fc.constant(''),
  fc.tuple(zonePart, zonePart).map(([region, z]) => `${region}:${z}`),
);
const subject: fc.Arbitrary<DecisionSubject> = fc.oneof(
  nodeName.map((name): DecisionSubject => ({ kind: 'node', name })),
  zone.map((z): DecisionSubject => ({ kind: 'zone', zone: z })),
  fc.constant<DecisionSubject>({ kind: 'cluster' }),
);

// Condition types have no '='; reasons may hold anything: spaces, parentheses, colons, newlines.
const condition: fc.Arbitrary<ConditionInput> = fc.record(
  {
    type: fc.oneof(
      fc.constantFrom('Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'),
      fc.string({ unit: chars('AZaz09 ./:()-'), minLength: 1, maxLength: 16 }),
    ),
    status: fc.constantFrom('True' as const, 'False' as const, 'Unknown' as const),
    reason: fc.oneof(
      fc.string({ minLength: 1 }),
      fc.string({ unit: chars('ab ()[]:=/\n'), minLength: 1, maxLength: 24 }),
    ),
  },
  { requiredKeys: ['type', 'status'] },
);

// Taint keys: a qualified name, with or without a DNS prefix and its '/'.
const dnsLabel = fc.stringMatching(/^[a-z0-9](?:[-a-z0-9]{0,6}[a-z0-9])?$/);
const taintKey = fc.oneof(
  fc.constantFrom(TaintNodeNotReady, TaintNodeUnreachable),
  fc.stringMatching(/^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?$/),
  fc
    .tuple(fc.array(dnsLabel, { minLength: 1, maxLength: 3 }), dnsLabel)
    .map(([prefix, name]) => `${prefix.join('.')}/${name}`),
);
const taint: fc.Arbitrary<TaintInput> = fc.record({ key: taintKey, effect });
const taintWithValue: fc.Arbitrary<TaintWithValueInput> = fc.record(
  { key: taintKey, value: fc.stringMatching(/^[-A-Za-z0-9_.=]{1,12}$/), effect },
  { requiredKeys: ['key', 'effect'] },
);
// Pod names are DNS subdomains: dots included.
const pod: fc.Arbitrary<PodRef> = fc.record({ namespace: dnsLabel, name: nodeName });

describe('subjects', () => {
  it.each<[DecisionSubject, string]>([
    [
      { kind: 'node', name: 'ip-10-0-1-17.eu-west-1.compute.internal' },
      'ip-10-0-1-17.eu-west-1.compute.internal',
    ],
    [{ kind: 'cluster' }, '#cluster'],
    [{ kind: 'zone', zone: 'eu-west-1:eu-west-1a' }, '#zone:eu-west-1:eu-west-1a'],
    [{ kind: 'zone', zone: ':zone-only' }, '#zone::zone-only'],
    [{ kind: 'zone', zone: 'region-only:' }, '#zone:region-only:'],
    [{ kind: 'zone', zone: '' }, '#zone:-'],
  ])('%o is written %s and reads back', (value, text) => {
    expect(formatDecisionSubject(value)).toBe(text);
    expect(parseDecisionSubject(text)).toEqual(value);
  });

  it('round-trips every subject (seeded sweep)', () => {
    sweep(subject, (value) => {
      expect(parseDecisionSubject(formatDecisionSubject(value))).toEqual(value);
    });
  });

  it('writes a zone key as its label: region:zone, `-` without zone labels', () => {
    expect(zoneSubject(createZoneID('eu-west-1', 'eu-west-1a'))).toBe('#zone:eu-west-1:eu-west-1a');
    expect(zoneSubject('')).toBe('#zone:-');
    expect(zoneLabel('')).toBe('-');
    expect(ClusterSubject).toBe('#cluster');
    sweep(fc.tuple(zonePart, zonePart), ([region, z]) => {
      const key = createZoneID(region, z);
      expect(parseDecisionSubject(zoneSubject(key))).toEqual({ kind: 'zone', zone: formatZoneKey(key) });
      expect(zoneSubject(key)).toBe(`#zone:${zoneLabel(key)}`);
    });
  });

  it.each(['', '#', '#zone:', '#zones', '#cluster2', '#node:a-1'])('%j is no subject', (text) => {
    expect(parseDecisionSubject(text)).toBeUndefined();
  });
});

describe('condition inputs', () => {
  it.each<[ConditionInput, string]>([
    [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }, 'Ready=Unknown (NodeStatusUnknown)'],
    [{ type: 'Ready', status: 'True' }, 'Ready=True'],
    [
      { type: 'MemoryPressure', status: 'False', reason: 'a reason (with parentheses)' },
      'MemoryPressure=False (a reason (with parentheses))',
    ],
    [{ type: 'Ready', status: 'False', reason: ') (' }, 'Ready=False () ()'],
  ])('%o is written %j and reads back', (value, text) => {
    expect(formatConditionInput(value)).toBe(text);
    expect(parseConditionInput(text)).toEqual(value);
  });

  it('writes an empty reason as none', () => {
    expect(formatConditionInput({ type: 'Ready', status: 'True', reason: '' })).toBe('Ready=True');
  });

  it('round-trips every condition (seeded sweep)', () => {
    sweep(condition, (value) => {
      expect(parseConditionInput(formatConditionInput(value))).toEqual(value);
    });
  });

  it.each([
    '',
    'Ready',
    'Ready=',
    '=True',
    'Ready=Maybe',
    'Ready=true',
    'Ready=True(x)',
    'Ready=True (x',
    'Ready=Unknown x',
  ])('%j does not read', (text) => {
    expect(parseConditionInput(text)).toBeUndefined();
  });
});

describe('taint inputs', () => {
  it.each<[TaintInput, string]>([
    [{ key: TaintNodeUnreachable, effect: 'NoExecute' }, 'node.kubernetes.io/unreachable:NoExecute'],
    [{ key: 'dedicated', effect: 'PreferNoSchedule' }, 'dedicated:PreferNoSchedule'],
  ])('%o is written %j and reads back', (value, text) => {
    expect(formatTaintInput(value)).toBe(text);
    expect(parseTaintInput(text)).toEqual(value);
  });

  it('leaves the value out: the taint as upstream MatchTaint compares it', () => {
    const withValue = { key: 'gpu', value: 'a100', effect: 'NoSchedule' as const };
    expect(formatTaintInput(withValue)).toBe('gpu:NoSchedule');
    expect(formatTaintWithValueInput(withValue)).toBe('gpu=a100:NoSchedule');
    expect(parseTaintWithValueInput('gpu=a100:NoSchedule')).toEqual(withValue);
    expect(parseTaintWithValueInput('gpu:NoSchedule')).toEqual({ key: 'gpu', effect: 'NoSchedule' });
    expect(formatTaintWithValueInput({ key: 'gpu', value: '', effect: 'NoSchedule' })).toBe('gpu:NoSchedule');
  });

  it('round-trips every taint, with and without its value (seeded sweep)', () => {
    sweep(taint, (value) => {
      expect(parseTaintInput(formatTaintInput(value))).toEqual(value);
    });
    sweep(taintWithValue, (value) => {
      expect(parseTaintWithValueInput(formatTaintWithValueInput(value))).toEqual(value);
    });
  });

  it.each(['', 'NoExecute', ':NoExecute', 'key:', 'key:noexecute', 'key:Evict', 'key'])(
    '%j does not read',
    (text) => {
      expect(parseTaintInput(text)).toBeUndefined();
      expect(parseTaintWithValueInput(text)).toBeUndefined();
    },
  );

  it('does not read a taint with a value but no key', () => {
    expect(parseTaintWithValueInput('=v:NoExecute')).toBeUndefined();
  });
});

describe('pod refs', () => {
  it.each<[PodRef, string]>([
    [{ namespace: 'default', name: 'web-1' }, 'default/web-1'],
    [
      { namespace: 'kube-system', name: 'coredns-5d78c9869d-abcde.v2' },
      'kube-system/coredns-5d78c9869d-abcde.v2',
    ],
  ])('%o is written %j and reads back', (value, text) => {
    expect(formatPodRef(value)).toBe(text);
    expect(parsePodRef(text)).toEqual(value);
  });

  it("round-trips every pod, and is upstream's pod key (seeded sweep)", () => {
    sweep(pod, (value) => {
      const text = formatPodRef(value);
      expect(parsePodRef(text)).toEqual(value);
      expect(text).toBe(podKey(value));
      expect(parsePodKey(text)).toEqual(value);
    });
  });

  it.each(['', 'web-1', '/web-1', 'default/', '/'])('%j does not read', (text) => {
    expect(parsePodRef(text)).toBeUndefined();
  });
});

describe('readWriteDecision', () => {
  const row = (what: string, inputs?: Record<string, JsonValue>): Pick<DecisionRecord, 'what' | 'inputs'> =>
    inputs === undefined ? { what } : { what, inputs };

  it('is undefined for a decision that writes nothing', () => {
    expect(readWriteDecision(row('enqueue', { zone: '-' }))).toBeUndefined();
    expect(readWriteDecision(row('zoneState', { from: 'Normal', to: 'FullDisruption' }))).toBeUndefined();
  });

  it('reads the lists leniently: absent is empty, an entry that does not parse is skipped', () => {
    expect(readWriteDecision(row('swapNodeTaints'))).toEqual({
      ok: true,
      value: { what: 'swapNodeTaints', inputs: { add: [], remove: [] } },
    });
    expect(
      readWriteDecision(
        row('swapNodeTaints', {
          add: ['bad', 7, `${TaintNodeUnreachable}:NoExecute`],
          remove: null,
          note: 'x',
        }),
      ),
    ).toEqual({ ok: false, error: expect.stringContaining('remove') as unknown });
    expect(
      readWriteDecision(
        row('updateNodeStatus', { conditions: ['Ready=Maybe', 'Ready=Unknown (NodeStatusUnknown)', null] }),
      ),
    ).toEqual({
      ok: true,
      value: {
        what: 'updateNodeStatus',
        inputs: { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }] },
      },
    });
    expect(readWriteDecision(row('markPodsNotReady', { pods: ['default/web-1', 'no-namespace'] }))).toEqual({
      ok: true,
      value: { what: 'markPodsNotReady', inputs: { pods: [{ namespace: 'default', name: 'web-1' }] } },
    });
  });

  it('says why a pod write without a readable pod does not read', () => {
    expect(readWriteDecision(row('deletePod'))).toEqual({
      ok: false,
      error: expect.stringMatching(/^deletePod: inputs\.pod: /) as unknown,
    });
    expect(readWriteDecision(row('deletePodForTaintEviction', { pod: 'web-1' }))).toEqual({
      ok: false,
      error: 'deletePodForTaintEviction: inputs.pod: expected a pod namespace/name, got "web-1"',
    });
  });

  it('drops the inputs outside the contract (the context a decision was made in)', () => {
    expect(
      readWriteDecision(row('deletePod', { pod: 'default/web-1', zone: 'r:z', probeAgeSeconds: 3 })),
    ).toEqual({
      ok: true,
      value: { what: 'deletePod', inputs: { pod: { namespace: 'default', name: 'web-1' } } },
    });
  });
});

describe('readZoneStateDecision', () => {
  const zoneState = (node: string, inputs: Record<string, JsonValue>): DecisionRecord => ({
    node,
    at: 0,
    source: 'monitor',
    what: 'zoneState',
    why: '',
    inputs,
  });

  it('reads the zone from the subject and the inputs typed', () => {
    expect(
      readZoneStateDecision(
        zoneState('#zone:-', { from: 'Initial', to: 'Normal', zoneSize: 3, evictionRate: 0.1 }),
      ),
    ).toEqual({
      ok: true,
      value: { zone: '', from: 'Initial', to: 'Normal', zoneSize: 3, evictionRate: 0.1 },
    });
  });

  it('is undefined for other decisions, an error for a row that does not match', () => {
    expect(readZoneStateDecision({ ...zoneState('#zone:-', {}), what: 'zoneRemoved' })).toBeUndefined();
    expect(readZoneStateDecision(zoneState('a-1', { from: 'Normal', to: 'Normal' }))).toEqual({
      ok: false,
      error: 'zoneState: subject "a-1" is not a zone',
    });
    expect(readZoneStateDecision(zoneState('#zone:r:z', { from: 'Normal', to: 'Sideways' }))).toEqual({
      ok: false,
      error: expect.stringMatching(/^zoneState: to: /) as unknown,
    });
  });

  it('reads a gauge or rate that is not a number as absent, as the report always did', () => {
    expect(
      readZoneStateDecision(
        zoneState('#zone:r:z', { from: 'Normal', to: 'PartialDisruption', evictionRate: '0.01' }),
      ),
    ).toEqual({
      ok: true,
      value: { zone: 'r:z', from: 'Normal', to: 'PartialDisruption' },
    });
  });
});

describe('podOfDecision and taintOfDecision', () => {
  it('read the pod and taint inputs, undefined when absent or malformed', () => {
    expect(podOfDecision({ inputs: { pod: 'default/web-1' } })).toEqual({
      namespace: 'default',
      name: 'web-1',
    });
    expect(podOfDecision({ inputs: { pod: 'web-1' } })).toBeUndefined();
    expect(podOfDecision({ inputs: { pod: 3 } })).toBeUndefined();
    expect(podOfDecision({})).toBeUndefined();
    expect(taintOfDecision({ inputs: { taint: `${TaintNodeNotReady}:NoExecute` } })).toEqual({
      key: TaintNodeNotReady,
      effect: 'NoExecute',
    });
    expect(taintOfDecision({ inputs: { taint: 'not-ready' } })).toBeUndefined();
  });
});

describe("the producers' output reads back", () => {
  const web = {
    namespace: 'default',
    name: 'web-1.v2',
    uid: 'u1',
    nodeName: 'a-1',
    tolerations: [],
  } satisfies Pod;
  const db = { ...web, namespace: 'data', name: 'db-0' };

  it('effectInputs: each cluster write, stored as before, reads back to the effect', () => {
    const status = effectInputs({
      kind: 'updateNodeStatus',
      node: 'a-1',
      why: '',
      conditions: [
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
        },
        { type: 'MemoryPressure', status: 'Unknown', reason: 'NodeStatusUnknown' },
        { type: 'DiskPressure', status: 'False' },
      ],
    });
    // The stored form: rows already in DynamoDB are in it.
    expect(status).toEqual({
      conditions: [
        'Ready=Unknown (NodeStatusUnknown)',
        'MemoryPressure=Unknown (NodeStatusUnknown)',
        'DiskPressure=False',
      ],
    });
    expect(readWriteDecision({ what: 'updateNodeStatus', inputs: status })).toEqual({
      ok: true,
      value: {
        what: 'updateNodeStatus',
        inputs: {
          conditions: [
            { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' },
            { type: 'MemoryPressure', status: 'Unknown', reason: 'NodeStatusUnknown' },
            { type: 'DiskPressure', status: 'False' },
          ],
        },
      },
    });

    const swap = effectInputs({
      kind: 'swapNodeTaints',
      node: 'a-1',
      why: '',
      toAdd: [{ key: TaintNodeUnreachable, effect: 'NoExecute', timeAdded: 5 }],
      toRemove: [{ key: TaintNodeNotReady, value: 'x', effect: 'NoExecute' }],
    });
    expect(swap).toEqual({
      add: ['node.kubernetes.io/unreachable:NoExecute'],
      remove: ['node.kubernetes.io/not-ready:NoExecute'],
    });
    expect(readWriteDecision({ what: 'swapNodeTaints', inputs: swap })).toEqual({
      ok: true,
      value: {
        what: 'swapNodeTaints',
        inputs: {
          add: [{ key: TaintNodeUnreachable, effect: 'NoExecute' }],
          remove: [{ key: TaintNodeNotReady, effect: 'NoExecute' }],
        },
      },
    });

    const marked = effectInputs({ kind: 'markPodsNotReady', node: 'a-1', why: '', pods: [web, db] });
    expect(marked).toEqual({ pods: ['default/web-1.v2', 'data/db-0'] });
    expect(readWriteDecision({ what: 'markPodsNotReady', inputs: marked })).toEqual({
      ok: true,
      value: {
        what: 'markPodsNotReady',
        inputs: {
          pods: [
            { namespace: 'default', name: 'web-1.v2' },
            { namespace: 'data', name: 'db-0' },
          ],
        },
      },
    });

    const reason = effectInputs({
      kind: 'setPodTerminationReason',
      pod: web,
      reason: 'NodeLost',
      message: '',
      why: '',
    });
    expect(readWriteDecision({ what: 'setPodTerminationReason', inputs: reason })).toEqual({
      ok: true,
      value: {
        what: 'setPodTerminationReason',
        inputs: { pod: { namespace: 'default', name: 'web-1.v2' }, reason: 'NodeLost' },
      },
    });

    const deleted = effectInputs({ kind: 'deletePod', pod: db, why: '' });
    expect(deleted).toEqual({ pod: 'data/db-0' });
    expect(readWriteDecision({ what: 'deletePod', inputs: deleted })).toEqual({
      ok: true,
      value: { what: 'deletePod', inputs: { pod: { namespace: 'data', name: 'db-0' } } },
    });
  });

  it("passDecisions: a zone's state change reads back to the transition, its gauges and its rate", () => {
    const zoneKey = createZoneID('eu-west-1', 'eu-west-1a');
    const before = emptyControllerState();
    const pass: MonitorPassResult = {
      state: before,
      disruption: {
        zoneStates: new Map([[zoneKey, 'PartialDisruption']]),
        limiterSwaps: [{ zone: zoneKey, qps: 0.01 }],
        masterDisruption: 'none',
        transitions: [{ zone: zoneKey, from: 'Normal', to: 'PartialDisruption' }],
        removedZones: [],
        gauges: [{ zone: zoneKey, zoneSize: 10, unhealthyNodes: 6, zoneHealth: 40 }],
      },
      registered: [],
      waiting: 0,
      waitingToMark: 0,
      apiRequests: 0,
      removed: [],
      healthUpdateFailures: [],
      readiness: new Map(),
      taintDecidedOn: 'current',
      nodeCopies: new Map(),
    };
    const [decision, ...others] = passDecisions({
      before,
      pass,
      nodes: new Map(),
      evictionMode: 'taint',
      now: 0,
    });
    expect(others).toEqual([]);
    if (decision === undefined) throw new Error('passDecisions recorded no decision');
    expect(decision).toMatchObject({
      node: '#zone:eu-west-1:eu-west-1a',
      what: 'zoneState',
      inputs: {
        from: 'Normal',
        to: 'PartialDisruption',
        zoneSize: 10,
        unhealthyNodes: 6,
        zoneHealthPercent: 40,
        evictionRate: 0.01,
      },
    });
    expect(Object.keys(decision.inputs ?? {})).toEqual([
      'from',
      'to',
      'zoneSize',
      'unhealthyNodes',
      'zoneHealthPercent',
      'evictionRate',
    ]);
    expect(readZoneStateDecision(decision)).toEqual({
      ok: true,
      value: {
        zone: 'eu-west-1:eu-west-1a',
        from: 'Normal',
        to: 'PartialDisruption',
        zoneSize: 10,
        unhealthyNodes: 6,
        zoneHealthPercent: 40,
        evictionRate: 0.01,
      },
    });
  });
});

describe('mass decisions: one queue decision about many nodes of a zone, filed under the zone', () => {
  const zoneKey = createZoneID('eu-west-1', 'eu-west-1a');
  const zone = '#zone:eu-west-1:eu-west-1a';
  const names = (n: number, prefix = 'a-'): string[] =>
    Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);
  const queueOf = (values: readonly string[]): RateLimitedTimedQueue => ({
    queue: values.map((value) => ({ value, uid: `uid-${value}`, addedAt: 0, processAt: 0 })),
    set: [...values],
    limiter: fakeNeverRateLimiter,
  });
  const readyCondition = (status: NodeCondition['status']): NodeCondition => ({ type: 'Ready', status });
  /** A draft with its gzipped names read back as `nodes`, to compare whole. */
  const decoded = (d: { node: string; inputs?: DecisionRecord['inputs'] }) => {
    const { nodesGzip, ...inputs } = d.inputs ?? {};
    expect(typeof nodesGzip).toBe('string');
    return { ...d, inputs: { ...inputs, nodes: massDecisionNodes(d) ?? null } };
  };

  /** The decisions of a pass that moved zone-a's queue from `queuedBefore` to `queuedAfter`. */
  function decide(opts: {
    queuedBefore: readonly string[];
    queuedAfter: readonly string[];
    removed?: readonly string[];
    readyNow?: ReadonlyMap<string, NodeCondition['status']>;
  }): ReturnType<typeof passDecisions> {
    const before = {
      ...emptyControllerState(),
      zoneStates: new Map([[zoneKey, 'Normal' as const]]),
      zoneQueues: new Map([[zoneKey, queueOf(opts.queuedBefore)]]),
    };
    const readiness = new Map(
      [...(opts.readyNow ?? [])].map(([name, status]) => [
        name,
        { observed: readyCondition(status), current: readyCondition(status) },
      ]),
    );
    const pass: MonitorPassResult = {
      state: { ...before, zoneQueues: new Map([[zoneKey, queueOf(opts.queuedAfter)]]) },
      disruption: {
        zoneStates: new Map([[zoneKey, 'Normal']]),
        limiterSwaps: [],
        masterDisruption: 'none',
        transitions: [],
        removedZones: [],
        gauges: [],
      },
      registered: [],
      waiting: 0,
      waitingToMark: 0,
      apiRequests: 0,
      removed: [...(opts.removed ?? [])],
      healthUpdateFailures: [],
      readiness,
      taintDecidedOn: 'current',
      nodeCopies: new Map(),
    };
    return passDecisions({ before, pass, nodes: new Map(), evictionMode: 'taint', now: 0 });
  }

  it('massDecisionInputs parts the names, and massDecisionAbout reads each name back from its part', () => {
    const all = names(2 * MassDecisionNodesPerRow + 5);
    const rows = massDecisionInputs(all, { zone: 'eu-west-1:eu-west-1a' });
    expect(
      rows.map((r) => [r.part, r.parts, r.count, massDecisionNodes({ node: zone, inputs: r })?.length]),
    ).toEqual([
      [1, 3, all.length, MassDecisionNodesPerRow],
      [2, 3, all.length, MassDecisionNodesPerRow],
      [3, 3, all.length, 5],
    ]);
    const stored = rows.map((inputs, seq): DecisionRecord => ({
      node: zone,
      at: 7,
      source: 'monitor',
      what: 'dequeue',
      why: 'w',
      inputs,
      seq,
    }));
    for (const name of [all[0], all[MassDecisionNodesPerRow], all.at(-1)]) {
      if (name === undefined) throw new Error('no name');
      const about = stored.flatMap((row) => massDecisionAbout(row, name) ?? []);
      expect(about).toEqual([
        {
          node: name,
          at: 7,
          source: 'monitor',
          what: 'dequeue',
          why: 'w',
          seq:
            all.indexOf(name) < MassDecisionNodesPerRow
              ? 0
              : all.indexOf(name) < 2 * MassDecisionNodesPerRow
                ? 1
                : 2,
          inputs: { zone: 'eu-west-1:eu-west-1a', count: all.length, filedUnder: zone },
        },
      ]);
    }
    expect(stored.flatMap((row) => massDecisionAbout(row, 'b-1') ?? [])).toEqual([]);
  });

  it("a row of the longest names, incompressible, stays under DynamoDB's 400 KB item", () => {
    // 253 characters of a DNS subdomain, each from a hash: gzip finds next to nothing to share.
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
    const longest = Array.from({ length: MassDecisionNodesPerRow }, (_, i) => {
      const bytes = Buffer.concat(
        Array.from({ length: 8 }, (_, k) => createHash('sha256').update(`${i}/${k}`).digest()),
      );
      return Array.from(bytes.subarray(0, 253), (b) => alphabet.charAt(b % 36)).join('');
    });
    const [row, ...more] = massDecisionInputs(longest, { zone: 'eu-west-1:eu-west-1a', zoneState: 'Normal' });
    expect(more).toEqual([]);
    const bytes = Buffer.byteLength(JSON.stringify(row));
    expect(bytes).toBeGreaterThan(200 * MassDecisionNodesPerRow); // little was shared
    expect(bytes).toBeLessThan(400 * 1024 - 2048); // the key and the other attributes fit beside it
    expect(massDecisionNodes({ node: zone, inputs: row })).toEqual(longest);
  });

  it('a zone of EKS names costs about 4 bytes a node', () => {
    const eks = Array.from(
      { length: MassDecisionNodesPerRow },
      (_, i) => `ip-10-0-${i >> 8}-${i & 255}.eu-west-1.compute.internal`,
    ).sort();
    const [row] = massDecisionInputs(eks);
    expect(Buffer.byteLength(JSON.stringify(row)) / eks.length).toBeLessThan(6);
  });

  it("massDecisionAbout reads nothing from a node's own row or a row that is not a mass decision", () => {
    const inputs = massDecisionInputs(['a-1', 'a-2'])[0] ?? {};
    const row = { node: zone, at: 1, source: 'monitor', what: 'dequeue', why: 'w' };
    expect(massDecisionAbout({ ...row, node: 'a-9', inputs }, 'a-1')).toBeUndefined();
    expect(massDecisionAbout({ ...row, node: ClusterSubject, inputs }, 'a-1')).toMatchObject({ node: 'a-1' });
    expect(massDecisionAbout({ ...row, inputs: { ...inputs, nodesGzip: 'a-1' } }, 'a-1')).toBeUndefined();
    expect(massDecisionAbout({ ...row, inputs: { ...inputs, nodesGzip: 7 } }, 'a-1')).toBeUndefined();
    expect(massDecisionAbout({ ...row, inputs: { ...inputs, count: 0 } }, 'a-1')).toBeUndefined();
    expect(massDecisionAbout({ ...row, inputs: { nodes: ['a-1'] } }, 'a-1')).toBeUndefined();
    // A name is a whole line: a-1 is not a-10.
    expect(massDecisionAbout({ ...row, inputs: massDecisionInputs(['a-10'])[0] }, 'a-1')).toBeUndefined();
    expect(massDecisionAbout(row, 'a-1')).toBeUndefined();
  });

  it(`${MassDecisionThreshold} nodes dequeued in one pass are ${MassDecisionThreshold} rows, one more is one row under the zone`, () => {
    const at = names(MassDecisionThreshold);
    const perNode = decide({ queuedBefore: at, queuedAfter: [] });
    expect(perNode.map((d) => d.node)).toEqual(at);
    expect(perNode.every((d) => d.what === 'dequeue' && d.inputs?.wasQueued === true)).toBe(true);

    const over = names(MassDecisionThreshold + 1);
    const mass = decide({ queuedBefore: over, queuedAfter: [] });
    expect(mass.map(decoded)).toEqual([
      {
        node: zone,
        what: 'dequeue',
        why: 'markNodeAsReachable: current Ready=none: removed from NoExecute tainting',
        inputs: {
          zone: 'eu-west-1:eu-west-1a',
          zoneState: 'Normal',
          count: over.length,
          part: 1,
          parts: 1,
          nodes: over,
        },
      },
    ]);
  });

  it('a zone back from an outage: one decision per reason, in parts, naming every node once', () => {
    const back = names(2 * MassDecisionNodesPerRow + 100);
    const stillOut = names(50, 'z-');
    const readyNow = new Map<string, NodeCondition['status']>([
      ...back.map((n): [string, NodeCondition['status']] => [n, 'True']),
      ...stillOut.map((n): [string, NodeCondition['status']] => [n, 'Unknown']),
    ]);
    // stillOut are dequeued too (upstream's Remove on another path): a second reason, fewer rows.
    const drafts = decide({ queuedBefore: [...back, ...stillOut], queuedAfter: ['q-1'], readyNow });
    const dequeues = drafts.filter((d) => d.what === 'dequeue');
    expect(dequeues.map((d) => [d.node, d.why, d.inputs?.part, d.inputs?.parts, d.inputs?.count])).toEqual([
      [zone, 'markNodeAsReachable: current Ready=True: removed from NoExecute tainting', 1, 3, back.length],
      [zone, 'markNodeAsReachable: current Ready=True: removed from NoExecute tainting', 2, 3, back.length],
      [zone, 'markNodeAsReachable: current Ready=True: removed from NoExecute tainting', 3, 3, back.length],
      [
        zone,
        'markNodeAsReachable: current Ready=Unknown: removed from NoExecute tainting',
        1,
        1,
        stillOut.length,
      ],
    ]);
    for (const name of [...back, ...stillOut]) {
      const about = dequeues.flatMap(
        (row) => massDecisionAbout({ ...row, at: 0, source: 'monitor' }, name) ?? [],
      );
      expect(about).toHaveLength(1);
    }
    // The one node enqueued is below the threshold: its own row, with its context.
    expect(drafts.filter((d) => d.what === 'enqueue')).toMatchObject([
      { node: 'q-1', inputs: { queueLength: 1 } },
    ]);
  });

  it('a zone whose nodes all turn NotReady in one pass: one enqueue decision under the zone, with the queue length', () => {
    const out = names(MassDecisionThreshold + 20);
    const readyNow = new Map(out.map((n): [string, NodeCondition['status']] => [n, 'False']));
    const drafts = decide({ queuedBefore: [], queuedAfter: out, readyNow });
    expect(drafts.map(decoded)).toEqual([
      {
        node: zone,
        what: 'enqueue',
        why: 'processTaintBaseEviction: current Ready=False: queued for NoExecute tainting, rate-limited in zone eu-west-1:eu-west-1a',
        inputs: {
          zone: 'eu-west-1:eu-west-1a',
          zoneState: 'Normal',
          queueLength: out.length,
          count: out.length,
          part: 1,
          parts: 1,
          nodes: out,
        },
      },
    ]);
  });

  it('many nodes removed from the cluster in one pass: one forget decision under the cluster', () => {
    const gone = names(MassDecisionThreshold + 1);
    const drafts = decide({ queuedBefore: gone, queuedAfter: [], removed: gone });
    // Removed nodes are forgotten, not dequeued.
    expect(drafts.map(decoded)).toEqual([
      {
        node: ClusterSubject,
        what: 'forget',
        why: 'monitorNodeHealth: node gone from the node cache (RemovingNode); its health and queue entries are dropped',
        inputs: { count: gone.length, part: 1, parts: 1, nodes: gone },
      },
    ]);
    const few = decide({ queuedBefore: [], queuedAfter: [], removed: ['a-2', 'a-1'] });
    expect(few.map((d) => [d.node, d.what])).toEqual([
      ['a-2', 'forget'],
      ['a-1', 'forget'],
    ]);
  });
});
