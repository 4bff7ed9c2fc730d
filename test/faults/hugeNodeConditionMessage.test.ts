// Fault: one node with a huge condition message blinds the monitor for the whole cluster.
//
// A node writes its own status, and nothing in the API bounds a condition's message. With a 200 KB
// message, the node's Nodes item (its copy, and the monitor's saved conditions: the same list again)
// passed DynamoDB's 400 KB item limit: every monitor commit failed, every retry was a stale no-op, and
// another node that died was never marked Unknown nor tainted. At 450 KB the Node Changed event itself
// could not be stored and was lost after its retries. Now the one mapping the relay and the functions
// share (nodeFromV1) bounds what a node can make the controller carry, says so, and nothing cut is ever
// written back to the cluster (shared/eventBounds.ts).
//
// Real pieces: the relay's shaping and the event contract (encode, JSON, parse), node-taints, the
// monitor, the Kubernetes API simulator over HTTPS through the cluster adapter, and dynalite, which
// enforces the 400 KB item limit as DynamoDB does.
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeFromV1 } from '../../shared/adapters/kubernetes/mapping.js';
import { runMonitorPass, type MonitorCache } from '../../shared/app/monitor.js';
import { runNodeTaints, type NodeTaintsDeps } from '../../shared/app/nodeTaints.js';
import type { Node } from '../../shared/domain/types.js';
import {
  encodeDetail,
  NodeChangedDetailType,
  parseNodeChanged,
  type NodeChanged,
} from '../../shared/events.js';
import type { LoadedState } from '../../shared/ports/stores.js';
import { nodeChanged } from '../../relay/shaping.js';
import { startWorld, t0, testConfig, type World } from '../integration/functions/world.js';
import {
  DynamoItemLimit,
  dynamoItemBytes,
  entryBytes,
  EventBridgeEntryLimit,
  noisyText,
  oversizedV1Node,
} from '../helpers/oversized.js';

const S = 1_000;
const KB = 1_024;
let world: World;
let cache: MonitorCache;
let sequence: number;

beforeEach(async () => {
  world = await startWorld(testConfig());
  cache = new Map<string, LoadedState>();
  sequence = 0;
});
afterEach(async () => {
  await world.close();
});

const nodeTaintsDeps = (): NodeTaintsDeps => ({
  config: world.config,
  stores: world.stores,
  cluster: world.cluster,
  observer: world.observer,
  clock: { now: () => world.now },
});

/** The node as the relay reads it from its watch. */
function watched(name: string): Node {
  const mapped = nodeFromV1(JSON.parse(JSON.stringify(world.api.store.nodes.get(name))));
  if (!mapped.ok) throw new Error(mapped.message);
  return mapped.value;
}

/**
 * What the relay sends for the node and what node-taints receives: shaped, encoded to its PutEvents
 * entry (which must fit EventBridge's 256 KB), through JSON, parsed by the contract.
 */
function relayed(name: string, old?: Node): NodeChanged {
  const detail = nodeChanged(world.config.cluster, old, watched(name));
  if (detail === undefined) throw new Error('not a relevant change');
  expect(entryBytes({ detailType: NodeChangedDetailType, detail })).toBeLessThan(EventBridgeEntryLimit);
  const wire = encodeDetail({ detailType: NodeChangedDetailType, detail });
  return parseNodeChanged(JSON.parse(JSON.stringify(wire)));
}

async function nodesItemBytes(name: string): Promise<number> {
  const { Item } = await world.db.client.send(
    new GetItemCommand({
      TableName: world.db.tables.nodes,
      Key: { cluster: { S: world.config.cluster }, node: { S: name } },
      ConsistentRead: true,
    }),
  );
  if (Item === undefined) throw new Error(`no Nodes item for ${name}`);
  return dynamoItemBytes(Item);
}

function setConditions(name: string, conditions: readonly Record<string, string>[]): void {
  const at = new Date(world.now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  world.api.store.nodes.patch(
    name,
    {
      status: {
        conditions: conditions.map((c) => ({ lastHeartbeatTime: at, lastTransitionTime: at, ...c })),
      },
    },
    { type: 'merge', subresource: 'status' },
  );
}

/** A monitor pass at `observedAt`: every node probed a second ago but the silent ones (last probe t0). */
async function pass(observedAt: number, silent: readonly string[]): Promise<void> {
  world.now = observedAt;
  const names = world.api.store.nodes.list().items.map((n) => n.metadata?.name ?? '');
  const probes = Object.fromEntries(names.map((n) => [n, silent.includes(n) ? t0 : observedAt - S]));
  await runMonitorPass(world.monitorDeps(), world.digest(++sequence, observedAt, probes), { cache });
  await world.syncNodeCache();
}

const serverConditions = (name: string) => world.api.store.nodes.get(name).status?.conditions ?? [];
const queued = async () => {
  const { queues } = await world.stores.zoneQueues.loadZoneQueues(world.config.cluster);
  return [...queues.values()].flatMap((q) => q.queue.map((v) => v.value)).sort();
};
const trail = (node: string) =>
  world.stores.decisions.query(world.config.cluster, node, { newestFirst: false, limit: 100 });

describe('a node that writes a huge condition message', () => {
  it('is stored cut, said so in the trail, and another dead node is still marked Unknown and queued', async () => {
    // ASCII, so that dynalite counts the item as DynamoDB does (see noisyText).
    const deadlock = noisyText(200 * KB, 1, true);
    const readyMessage = noisyText(450 * KB, 2, true);
    for (const name of ['node-a', 'dead', 'loud-200', 'loud-450']) world.addNode(name);
    const ready = { type: 'Ready', status: 'True', reason: 'KubeletReady' };
    setConditions('loud-200', [
      { ...ready, message: 'kubelet is posting ready status' },
      { type: 'KernelDeadlock', status: 'False', reason: 'KernelHasNoDeadlock', message: deadlock },
    ]);
    setConditions('loud-450', [{ ...ready, message: readyMessage }]);

    // The relay's Node Changed of each fits EventBridge; node-taints stores it within DynamoDB's limit.
    for (const name of ['loud-200', 'loud-450']) {
      const outcome = await runNodeTaints(nodeTaintsDeps(), relayed(name));
      expect(outcome.kind).toBe('processed');
      expect(await nodesItemBytes(name)).toBeLessThan(20 * KB);
    }
    const [said] = (await trail('loud-200')).filter((d) => d.what === 'truncated');
    expect(said?.inputs?.truncated).toEqual([
      'status.conditions[KernelDeadlock].message: 204,800 bytes, truncated to 2,048',
    ]);
    const [said450] = (await trail('loud-450')).filter((d) => d.what === 'truncated');
    expect(said450?.inputs?.truncated).toEqual([
      'status.conditions[Ready].message: 460,800 bytes, truncated to 2,048',
    ]);

    // The monitor, with `dead` and `loud-200` silent: both go Unknown after the grace period, both queued.
    await world.syncNodeCache();
    for (let t = t0; t <= t0 + 50 * S; t += 5 * S) await pass(t, ['dead', 'loud-200']);
    expect(serverConditions('dead').find((c) => c.type === 'Ready')?.status).toBe('True');
    await pass(t0 + 55 * S, ['dead', 'loud-200']);
    expect(serverConditions('dead').find((c) => c.type === 'Ready')?.status).toBe('Unknown');
    expect(serverConditions('loud-200').find((c) => c.type === 'Ready')?.status).toBe('Unknown');
    await pass(t0 + 60 * S, ['dead', 'loud-200']);
    expect(await queued()).toEqual(['dead', 'loud-200']);
    expect((await trail('dead')).map((d) => [d.what, d.result ?? ''])).toContainEqual(['enqueue', '']);

    // The loud nodes' items, the monitor's saved conditions in them too, stay far from the limit.
    for (const name of ['loud-200', 'loud-450']) expect(await nodesItemBytes(name)).toBeLessThan(20 * KB);

    // Nothing cut went back: the status write left the kubelet's other condition whole.
    expect(serverConditions('loud-200').find((c) => c.type === 'KernelDeadlock')).toMatchObject({
      status: 'False',
      reason: 'KernelHasNoDeadlock',
      message: deadlock,
    });
    expect(serverConditions('loud-450').find((c) => c.type === 'Ready')?.message).toBe(readyMessage);
    for (const node of world.api.store.nodes.list().items) {
      for (const c of node.status?.conditions ?? []) {
        expect(`${c.reason ?? ''} ${c.message ?? ''}`).not.toMatch(/\[truncated [\d,]+ bytes\]/);
      }
    }
  });

  it('the largest node the bounds allow is stored, marked and queued in an item of about half the limit', async () => {
    // Every field at or past its bound, in text that keeps the most raw bytes; no Ready condition, so
    // the monitor adds four conditions to its saved status.
    const worst = oversizedV1Node({ name: 'worst', plainText: true, otherLabels: 20 });
    world.api.store.nodes.create({
      metadata: { name: 'worst', labels: worst.metadata.labels },
      spec: worst.spec,
    });
    world.api.store.nodes.patch('worst', { status: worst.status }, { type: 'merge', subresource: 'status' });
    world.addNode('dead');
    const customMessages = serverConditions('worst').map((c) => c.message);

    await runNodeTaints(nodeTaintsDeps(), relayed('worst'));
    await world.syncNodeCache();
    for (let t = t0; t <= t0 + 65 * S; t += 5 * S) await pass(t, ['dead', 'worst']);
    expect(serverConditions('worst').find((c) => c.type === 'Ready')?.status).toBe('Unknown');
    expect(serverConditions('dead').find((c) => c.type === 'Ready')?.status).toBe('Unknown');
    await pass(t0 + 70 * S, ['dead', 'worst']);
    expect(await queued()).toEqual(['dead', 'worst']);

    const loaded = await world.stores.controllerState.load(world.config.cluster);
    expect(loaded.state.nodeHealth.get('worst')?.status).toHaveLength(36);
    const bytes = await nodesItemBytes('worst');
    expect(bytes).toBeGreaterThan(DynamoItemLimit * 0.45);
    expect(bytes).toBeLessThan(DynamoItemLimit * 0.55);
    // The status write added the controller's four conditions and left the node's own untouched.
    expect(
      serverConditions('worst')
        .slice(0, 40)
        .map((c) => c.message),
    ).toEqual(customMessages);
  });
});

describe('a node with more taints and labels than the bounds', () => {
  it('keeps every taint on the server when node-taints writes one, and the trail says what the copy dropped', async () => {
    const labels = Object.fromEntries(
      Array.from({ length: 3_000 }, (_, i) => [`example.com/l${i}`, `v${i}`]),
    );
    world.addNode('crowded', undefined, labels);
    const foreign = Array.from({ length: 500 }, (_, i) => ({
      key: `example.com/t${i}`,
      effect: 'NoSchedule',
    }));
    world.api.store.nodes.patch(
      'crowded',
      { spec: { taints: foreign, unschedulable: true } },
      { type: 'merge' },
    );

    const first = relayed('crowded');
    expect(first.node.taints).toHaveLength(64);
    const outcome = await runNodeTaints(nodeTaintsDeps(), first);
    expect(outcome).toMatchObject({
      kind: 'processed',
      swap: { toAdd: [{ key: 'node.kubernetes.io/unschedulable' }] },
    });
    const onServer = world.api.store.nodes.get('crowded').spec?.taints ?? [];
    expect(onServer).toHaveLength(501);
    expect(onServer.slice(0, 500).map((t) => t.key)).toEqual(foreign.map((t) => t.key));
    expect(onServer[500]).toMatchObject({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' });

    // The next Node Changed keeps the controller's taint in its 64, so the pass sees it is there.
    world.now += S;
    const next = relayed('crowded', first.node);
    expect(next.node.taints).toContainEqual(
      expect.objectContaining({ key: 'node.kubernetes.io/unschedulable' }),
    );
    expect(await runNodeTaints(nodeTaintsDeps(), next)).toMatchObject({ kind: 'processed' });
    expect(world.api.store.nodes.get('crowded').spec?.taints).toHaveLength(501);
    expect(
      (await trail('crowded')).filter((d) => d.what === 'truncated').map((d) => d.inputs?.truncated),
    ).toEqual([
      ['spec.taints: dropped 436 of 500 (at most 64 are kept)'],
      ['spec.taints: dropped 437 of 501 (at most 64 are kept)'],
    ]);
    expect(await nodesItemBytes('crowded')).toBeLessThan(20 * KB);
  });
});
