// node-taints (shared/app/nodeTaints.ts) against the API simulator and dynalite: upstream
// TestTaintsNodeByCondition and TestReconcileNodeLabels as Node Changed events, plus what the service
// adds: ordering by resourceVersion (stale and duplicate events), a failed write retried by a redelivery,
// shadow mode. Request counts come from the simulator's request log.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runNodeTaints, type NodeTaintsDeps } from '../../../shared/app/nodeTaints.js';
import {
  TaintNodeDiskPressure,
  TaintNodeMemoryPressure,
  TaintNodeNetworkUnavailable,
  TaintNodeNotReady,
  TaintNodeUnreachable,
  TaintNodeUnschedulable,
} from '../../../shared/domain/taints.js';
import { ClusterWriteError } from '../../../shared/errors.js';
import {
  createNode,
  nodeChanged,
  nodeOf,
  RecordingObserver,
  startFunctionsFixture,
  updateNode,
  type FunctionsFixture,
} from '../../helpers/functionsFixture.js';

const START = Date.parse('2024-05-01T10:00:00Z');
const foreign = [
  { key: 'example.com/gpu', value: 'a100', effect: 'NoSchedule' },
  { key: 'example.com/maintenance', effect: 'NoExecute' },
  // A condition taint key with another effect is not the NoSchedule pass's either.
  { key: TaintNodeMemoryPressure, effect: 'PreferNoSchedule' },
];

let fx: FunctionsFixture;
let observer: RecordingObserver;
let cluster: string;

beforeAll(async () => {
  fx = await startFunctionsFixture(START);
});
afterAll(async () => {
  await fx.stop();
});
beforeEach(() => {
  cluster = fx.nextCluster();
  observer = new RecordingObserver();
  fx.mark();
});
afterEach(() => {
  fx.cleanApi();
});

function deps(options: { dryRun?: boolean } = {}): NodeTaintsDeps {
  return {
    config: { dryRun: options.dryRun ?? false },
    stores: fx.stores,
    cluster: fx.cluster,
    observer,
    clock: fx.clock,
  };
}

/** The node's taints as `key:effect`, in order. */
const taints = (name: string): string[] =>
  (fx.api.store.nodes.get(name).spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`);
const calls = (verb: string, resource = 'nodes') =>
  fx.requests().filter((r) => r.verb === verb && r.resource === resource).length;

describe('TestTaintsNodeByCondition (one Node Changed each)', () => {
  const cases = [
    {
      name: 'NoSchedule taints added',
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'MemoryPressure', status: 'True' },
        { type: 'DiskPressure', status: 'True' },
        { type: 'NetworkUnavailable', status: 'True' },
      ],
      unschedulable: false,
      want: [
        `${TaintNodeMemoryPressure}:NoSchedule`,
        `${TaintNodeDiskPressure}:NoSchedule`,
        `${TaintNodeNetworkUnavailable}:NoSchedule`,
      ],
    },
    {
      name: 'NotReady taint added',
      conditions: [{ type: 'Ready', status: 'False' }],
      unschedulable: false,
      want: [`${TaintNodeNotReady}:NoSchedule`],
    },
    {
      name: 'Unreachable taint added',
      conditions: [{ type: 'Ready', status: 'Unknown' }],
      unschedulable: false,
      want: [`${TaintNodeUnreachable}:NoSchedule`],
    },
    {
      name: 'unschedulable taint added',
      conditions: [{ type: 'Ready', status: 'True' }],
      unschedulable: true,
      want: [`${TaintNodeUnschedulable}:NoSchedule`],
    },
  ];

  it.each(cases)('$name, never touching foreign taints', async ({ conditions, unschedulable, want }) => {
    createNode(fx.api, 'node0', { taints: foreign, conditions: [{ type: 'Ready', status: 'True' }] });
    // A first pass takes off the not-ready taint admission put on the new node.
    await runNodeTaints(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node0'), 'ADDED'));
    expect(taints('node0')).toEqual(foreign.map((t) => `${t.key}:${t.effect}`));
    updateNode(fx.api, 'node0', { conditions, unschedulable });
    fx.mark();

    const event = nodeChanged(cluster, nodeOf(fx.api, 'node0'));
    const outcome = await runNodeTaints(deps(), event);

    expect(outcome).toMatchObject({ kind: 'processed', order: 'applied' });
    expect(taints('node0')).toEqual([...foreign.map((t) => `${t.key}:${t.effect}`), ...want]);
    // One read to decide on the API's node (the event is a hint), then one read-modify-write.
    expect([calls('get'), calls('patch')]).toEqual([2, 1]);
    // The Nodes table holds the event's copy.
    expect((await fx.stores.nodes.getNode(cluster, 'node0'))?.resourceVersion).toBe(
      event.node.resourceVersion,
    );
  });

  it('removes unschedulable when spec.unschedulable is cleared, and makes no call when the taints are right', async () => {
    createNode(fx.api, 'node0', { conditions: [{ type: 'Ready', status: 'True' }], unschedulable: true });
    await runNodeTaints(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node0'), 'ADDED'));
    expect(taints('node0')).toEqual([`${TaintNodeUnschedulable}:NoSchedule`]);

    updateNode(fx.api, 'node0', { unschedulable: false });
    await runNodeTaints(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node0')));
    expect(taints('node0')).toEqual([]);

    // A label-only change: nothing to swap, nothing to label.
    fx.api.store.nodes.patch(
      'node0',
      { metadata: { labels: { 'topology.kubernetes.io/zone': 'z1' } } },
      { type: 'merge' },
    );
    fx.mark();
    const outcome = await runNodeTaints(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node0')));
    expect(outcome).toEqual({ kind: 'processed', order: 'applied' });
    expect(fx.requests()).toEqual([]);
  });

  it('files each swap in the Decisions trail under the node, intended then ok, with the conditions read', async () => {
    createNode(fx.api, 'node0', {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'DiskPressure', status: 'True' },
      ],
    });
    await runNodeTaints(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node0'), 'ADDED'));

    const trail = await fx.stores.decisions.query(cluster, 'node0', { newestFirst: false });
    expect(trail.map((d) => [d.source, d.what, d.result])).toEqual([
      ['node-taints', 'swapNodeTaints', 'intended'],
      ['node-taints', 'swapNodeTaints', 'ok'],
    ]);
    expect(trail[0]?.inputs).toMatchObject({
      add: [`${TaintNodeDiskPressure}:NoSchedule`],
      remove: [`${TaintNodeNotReady}:NoSchedule`],
      conditions: ['Ready=True', 'DiskPressure=True'],
      unschedulable: false,
    });
  });
});

describe('TestReconcileNodeLabels', () => {
  it('adds the beta OS/arch labels from the stable ones, and fixes a stale one', async () => {
    createNode(fx.api, 'node0', {
      labels: {
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'arm64',
        'beta.kubernetes.io/arch': 'amd64',
      },
      conditions: [{ type: 'Ready', status: 'True' }],
    });
    const outcome = await runNodeTaints(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node0'), 'ADDED'));
    expect(outcome).toMatchObject({
      labels: { 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'arm64' },
    });
    expect(fx.api.store.nodes.get('node0').metadata?.labels).toMatchObject({
      'kubernetes.io/os': 'linux',
      'beta.kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'arm64',
      'beta.kubernetes.io/arch': 'arm64',
    });
    const trail = await fx.stores.decisions.query(cluster, 'node0', { newestFirst: false });
    expect(trail.filter((d) => d.what === 'addNodeLabels').map((d) => d.result)).toEqual(['intended', 'ok']);
  });
});

describe('ordering and delivery', () => {
  it('a stale event (older resourceVersion) does nothing: no write to the cluster, the newer copy kept', async () => {
    createNode(fx.api, 'node0', { conditions: [{ type: 'Ready', status: 'False' }] });
    const older = nodeChanged(cluster, nodeOf(fx.api, 'node0'), 'ADDED');
    updateNode(fx.api, 'node0', { conditions: [{ type: 'Ready', status: 'True' }] });
    const newer = nodeChanged(cluster, nodeOf(fx.api, 'node0'));
    await runNodeTaints(deps(), newer);
    expect(taints('node0')).toEqual([]);
    fx.mark();

    expect(await runNodeTaints(deps(), older)).toEqual({ kind: 'stale' });
    expect(fx.requests()).toEqual([]);
    expect(taints('node0')).toEqual([]);
    expect((await fx.stores.nodes.getNode(cluster, 'node0'))?.resourceVersion).toBe(
      newer.node.resourceVersion,
    );
  });

  it('a duplicate of a processed event reads the node and writes nothing', async () => {
    createNode(fx.api, 'node0', {
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'PIDPressure', status: 'True' },
      ],
    });
    const event = nodeChanged(cluster, nodeOf(fx.api, 'node0'), 'ADDED');
    await runNodeTaints(deps(), event);
    const after = taints('node0');
    fx.mark();
    fx.clock.advance(1_000);

    expect(await runNodeTaints(deps(), event)).toEqual({ kind: 'processed', order: 'redelivered' });
    expect(fx.writes()).toEqual([]);
    expect(taints('node0')).toEqual(after);
  });

  it('a failed taint write throws; the redelivered event (Lambda retry) completes it', async () => {
    createNode(fx.api, 'node0', {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'DiskPressure', status: 'True' },
      ],
    });
    const event = nodeChanged(cluster, nodeOf(fx.api, 'node0'), 'ADDED');
    const removeFault = fx.api.faults.inject({
      kind: 'internalError',
      match: { verb: 'patch', resource: 'nodes' },
    });
    await expect(runNodeTaints(deps(), event)).rejects.toThrow(ClusterWriteError);
    expect(taints('node0')).toEqual([`${TaintNodeNotReady}:NoSchedule`]);
    removeFault();

    expect(await runNodeTaints(deps(), event)).toMatchObject({ kind: 'processed', order: 'redelivered' });
    expect(taints('node0')).toEqual([`${TaintNodeDiskPressure}:NoSchedule`]);
  });

  it('a deletion stores a tombstone and touches nothing; a late MODIFIED after it is stale', async () => {
    createNode(fx.api, 'node0', { conditions: [{ type: 'Ready', status: 'False' }] });
    const modified = nodeChanged(cluster, nodeOf(fx.api, 'node0'));
    fx.api.store.nodes.delete('node0');
    const deleted = { ...modified, type: 'DELETED' as const };
    fx.mark();

    expect(await runNodeTaints(deps(), deleted)).toEqual({ kind: 'deleted' });
    expect(await runNodeTaints(deps(), modified)).toEqual({ kind: 'stale' });
    expect(fx.requests()).toEqual([]);
    expect(await fx.stores.nodes.getNode(cluster, 'node0')).toBeUndefined();
  });
});

describe('shadow mode (dryRun)', () => {
  it("records what the cluster's own controller did between two copies (source cluster)", async () => {
    createNode(fx.api, 'node0', { conditions: [{ type: 'Ready', status: 'True' }] });
    await runNodeTaints(deps({ dryRun: true }), nodeChanged(cluster, nodeOf(fx.api, 'node0'), 'ADDED'));
    // The cluster's node controller marks it and taints it unreachable (it writes; the shadow never does).
    updateNode(fx.api, 'node0', {
      conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }],
      taints: [
        { key: TaintNodeUnreachable, effect: 'NoSchedule' },
        { key: TaintNodeUnreachable, effect: 'NoExecute' },
      ],
    });
    fx.clock.advance(5_000);
    const seen = fx.clock.now();
    const marked = nodeChanged(cluster, nodeOf(fx.api, 'node0'));
    await runNodeTaints(deps({ dryRun: true }), marked);
    // A redelivery records nothing twice (the stored copy is the same).
    await runNodeTaints(deps({ dryRun: true }), marked);
    const trail = await fx.stores.decisions.query(cluster, 'node0', { newestFirst: false });
    const observed = trail.filter((d) => d.source === 'cluster');
    // (The API server tainted the node not-ready:NoSchedule at creation; the swap took it off.)
    expect(observed.map((d) => [d.what, d.inputs?.taint ?? '', d.at])).toEqual([
      ['markUnknown', '', seen],
      ['taintAdded', `${TaintNodeUnreachable}:NoExecute`, seen],
      ['taintAdded', `${TaintNodeUnreachable}:NoSchedule`, seen],
      ['taintRemoved', `${TaintNodeNotReady}:NoSchedule`, seen],
    ]);
  });

  it("records the change when another writer stored the API's newer copy first (taint eviction, the monitor)", async () => {
    createNode(fx.api, 'node2', { conditions: [{ type: 'Ready', status: 'True' }] });
    await runNodeTaints(deps({ dryRun: true }), nodeChanged(cluster, nodeOf(fx.api, 'node2'), 'ADDED'));
    updateNode(fx.api, 'node2', {
      conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }],
      taints: [{ key: TaintNodeUnreachable, effect: 'NoExecute' }],
    });
    // Taint eviction reads the live node on the same event and stores it before node-taints runs.
    await fx.stores.nodes.putNode(cluster, nodeOf(fx.api, 'node2'));
    await runNodeTaints(deps({ dryRun: true }), nodeChanged(cluster, nodeOf(fx.api, 'node2')));
    const trail = await fx.stores.decisions.query(cluster, 'node2', { newestFirst: false });
    expect(trail.filter((d) => d.source === 'cluster').map((d) => [d.what, d.inputs?.taint ?? ''])).toEqual([
      ['markUnknown', ''],
      ['taintAdded', `${TaintNodeUnreachable}:NoExecute`],
      ['taintRemoved', `${TaintNodeNotReady}:NoSchedule`],
    ]);
  });

  it('out of order: the later version first records the whole change; the earlier one after it records nothing', async () => {
    createNode(fx.api, 'node3', { conditions: [{ type: 'Ready', status: 'True' }] });
    await runNodeTaints(deps({ dryRun: true }), nodeChanged(cluster, nodeOf(fx.api, 'node3'), 'ADDED'));
    updateNode(fx.api, 'node3', {
      conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }],
      taints: [{ key: TaintNodeUnreachable, effect: 'NoSchedule' }],
    });
    const earlier = nodeChanged(cluster, nodeOf(fx.api, 'node3'));
    updateNode(fx.api, 'node3', {
      taints: [
        { key: TaintNodeUnreachable, effect: 'NoSchedule' },
        { key: TaintNodeUnreachable, effect: 'NoExecute' },
      ],
    });
    await runNodeTaints(deps({ dryRun: true }), nodeChanged(cluster, nodeOf(fx.api, 'node3')));
    await runNodeTaints(deps({ dryRun: true }), earlier);
    const trail = await fx.stores.decisions.query(cluster, 'node3', { newestFirst: false });
    expect(trail.filter((d) => d.source === 'cluster').map((d) => [d.what, d.inputs?.taint ?? ''])).toEqual([
      ['markUnknown', ''],
      ['taintAdded', `${TaintNodeUnreachable}:NoExecute`],
      ['taintAdded', `${TaintNodeUnreachable}:NoSchedule`],
      ['taintRemoved', `${TaintNodeNotReady}:NoSchedule`],
    ]);
  });

  it("a Node Changed lost: the monitor's repair from the API (fromApi) records what it would have shown", async () => {
    createNode(fx.api, 'node6', { conditions: [{ type: 'Ready', status: 'True' }] });
    await runNodeTaints(deps({ dryRun: true }), nodeChanged(cluster, nodeOf(fx.api, 'node6'), 'ADDED'));
    updateNode(fx.api, 'node6', {
      conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }],
      taints: [{ key: TaintNodeUnreachable, effect: 'NoExecute' }],
    });
    // No event for it; the monitor finds the copy out of step with the relay's and reads the API's.
    fx.clock.advance(40_000);
    const repairedAt = fx.clock.now();
    await runNodeTaints(deps({ dryRun: true }), nodeChanged(cluster, nodeOf(fx.api, 'node6')), {
      fromApi: true,
    });
    const trail = await fx.stores.decisions.query(cluster, 'node6', { newestFirst: false });
    expect(
      trail.filter((d) => d.source === 'cluster').map((d) => [d.what, d.inputs?.taint ?? '', d.at]),
    ).toEqual([
      ['markUnknown', '', repairedAt],
      ['taintAdded', `${TaintNodeUnreachable}:NoExecute`, repairedAt],
      ['taintRemoved', `${TaintNodeNotReady}:NoSchedule`, repairedAt],
    ]);
  });

  it('writes its view only when it changes: a cordon leaves the stored view as it was', async () => {
    createNode(fx.api, 'node5', { conditions: [{ type: 'Ready', status: 'True' }] });
    await runNodeTaints(deps({ dryRun: true }), nodeChanged(cluster, nodeOf(fx.api, 'node5'), 'ADDED'));
    // The API server's not-ready:NoSchedule at creation is gone (the cluster's node-taints took it off).
    updateNode(fx.api, 'node5', { taints: [] });
    await runNodeTaints(deps({ dryRun: true }), nodeChanged(cluster, nodeOf(fx.api, 'node5')));
    const before = (await fx.stores.nodes.getNodeControllerSeen(cluster, 'node5')).seen;
    updateNode(fx.api, 'node5', { unschedulable: true });
    await runNodeTaints(deps({ dryRun: true }), nodeChanged(cluster, nodeOf(fx.api, 'node5')));
    const after = await fx.stores.nodes.getNodeControllerSeen(cluster, 'node5');
    expect(after.seen).toEqual(before);
    expect(Number(after.node?.resourceVersion)).toBeGreaterThan(Number(before?.resourceVersion));
  });

  it('a row stored before node-taints kept its own view: the older node copy is the base', async () => {
    createNode(fx.api, 'node4', { conditions: [{ type: 'Ready', status: 'True' }] });
    await fx.stores.nodes.putNode(cluster, nodeOf(fx.api, 'node4'));
    updateNode(fx.api, 'node4', {
      conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }],
    });
    await runNodeTaints(deps({ dryRun: true }), nodeChanged(cluster, nodeOf(fx.api, 'node4')));
    const trail = await fx.stores.decisions.query(cluster, 'node4', { newestFirst: false });
    expect(trail.filter((d) => d.source === 'cluster').map((d) => [d.what, d.inputs?.taint ?? ''])).toEqual([
      ['markUnknown', ''],
    ]);
  });

  it('active: a node-controller change its own trail does not explain is two controllers at once: warned, counted, recorded', async () => {
    createNode(fx.api, 'node1', { conditions: [{ type: 'Ready', status: 'True' }] });
    // The API server tainted it not-ready:NoSchedule at creation; Ready=True: node-taints removes it.
    await runNodeTaints(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node1'), 'ADDED'));
    expect(taints('node1')).toEqual([]);
    // The echo of that write: explained by its own swap (recorded `intended` before it wrote).
    await runNodeTaints(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node1')));
    expect(observer.count('nlc_foreign_node_controller_writes_total')).toBe(0);

    // Another controller (a managed control plane's own) marks it and taints it.
    updateNode(fx.api, 'node1', {
      conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }],
      taints: [{ key: TaintNodeUnreachable, effect: 'NoExecute' }],
    });
    await runNodeTaints(deps(), nodeChanged(cluster, nodeOf(fx.api, 'node1')));
    expect(observer.count('nlc_foreign_node_controller_writes_total')).toBe(2);
    expect(
      observer.lines.filter((l) => l.level === 'warn').map((l) => [l.message, l.fields?.changes]),
    ).toEqual([
      [
        'two controllers at once: node-controller changes this controller did not make',
        ['markUnknown', `taintAdded ${TaintNodeUnreachable}:NoExecute`],
      ],
    ]);
    const trail = await fx.stores.decisions.query(cluster, 'node1', { newestFirst: false });
    expect(trail.filter((d) => d.source === 'cluster').map((d) => [d.what, d.why.split(' (')[0]])).toEqual([
      ['markUnknown', 'observed: another controller'],
      ['taintAdded', 'observed: another controller'],
    ]);
  });

  it('records every decision as dryRun and writes nothing to the cluster', async () => {
    createNode(fx.api, 'node0', {
      labels: { 'kubernetes.io/os': 'linux' },
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'MemoryPressure', status: 'True' },
      ],
    });
    fx.mark();
    await runNodeTaints(deps({ dryRun: true }), nodeChanged(cluster, nodeOf(fx.api, 'node0'), 'ADDED'));

    // The decision reads the API's node; nothing is written.
    expect(fx.requests().map((r) => r.verb)).toEqual(['get']);
    expect(taints('node0')).toEqual([`${TaintNodeNotReady}:NoSchedule`]);
    const trail = await fx.stores.decisions.query(cluster, 'node0', { newestFirst: false });
    expect(trail.map((d) => [d.what, d.result, d.dryRun])).toEqual([
      ['swapNodeTaints', 'dryRun', true],
      ['addNodeLabels', 'dryRun', true],
    ]);
  });
});
