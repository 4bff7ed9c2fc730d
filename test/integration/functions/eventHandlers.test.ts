// The three handlers (functions/nodeTaints.ts, taintEviction.ts, podProcessing.ts) through middy, with
// whole EventBridge events as Lambda receives them, wired from the environment by loadRuntime (the
// kubeconfig of the API simulator, dynalite as the DynamoDB endpoint). One run each end to end, then the
// edges: malformed events of every type a handler takes are rejected naming the field, before any I/O,
// with nothing written; an event for another cluster likewise.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServerHandle } from '../../../local/apiserver/index.js';
import type { DynamoDbStores } from '../../../shared/adapters/dynamodb/index.js';
import { systemClock } from '../../../shared/adapters/clock.js';
import { EventParseError } from '../../../shared/errors.js';
import { createKubernetesCluster } from '../../../shared/adapters/kubernetes/cluster.js';
import { Dispatch, newWarmState, type FunctionDeps } from '../../../shared/app/dispatch.js';
import { UPSTREAM_DEFAULTS } from '../../../shared/config.js';
import { silentObserver } from '../../../shared/ports/observer.js';
import {
  encodeDetail,
  NodeChangedEvent,
  parseRelayEvent,
  NodeChangedDetailType,
  PodChangedDetailType,
  RelaySource,
  type OutgoingEvent,
} from '../../../shared/events.js';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';
import {
  createNode,
  createPod,
  nodeOf,
  podCondition,
  podOf,
  type WireTaint,
} from '../../helpers/functionsFixture.js';

const CLUSTER = 'prod';
const taint1: WireTaint = { key: 'testTaint1', value: 'test1', effect: 'NoExecute' };

type Handler = (event: unknown, context: Context) => Promise<unknown>;
let handlers: { nodeTaints: Handler; taintEviction: Handler; podProcessing: Handler };
let api: ApiServerHandle;
let dynamo: DynamoFixture;
let stores: DynamoDbStores;
let dir: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  api = await startApiServer({ clock: systemClock });
  dynamo = await startDynamoDb('nlc-handlers');
  stores = dynamo.stores();
  dir = mkdtempSync(join(tmpdir(), 'nlc-handlers-'));
  await api.writeKubeconfig(join(dir, 'kubeconfig'));
  for (const key of Object.keys(process.env)) {
    if (key.startsWith('NLC_') || key.startsWith('AWS_')) Reflect.deleteProperty(process.env, key);
  }
  Object.assign(process.env, {
    NLC_CLUSTER: CLUSTER,
    NLC_NODES_TABLE: dynamo.tables.nodes,
    NLC_ZONES_TABLE: dynamo.tables.zones,
    NLC_EVICTION_QUEUE_TABLE: dynamo.tables.evictionQueue,
    NLC_POD_EVICTIONS_TABLE: dynamo.tables.podEvictions,
    NLC_DECISIONS_TABLE: dynamo.tables.decisions,
    NLC_DYNAMODB_ENDPOINT: dynamo.endpoint,
    NLC_KUBECONFIG: join(dir, 'kubeconfig'),
    AWS_REGION: 'us-east-1',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  });
  // Imported after the environment is set: the handlers read it at their first invocation, and the
  // Powertools logger its level when shared/observability.ts loads.
  handlers = {
    nodeTaints: (await import('../../../functions/nodeTaints.js')).handler as unknown as Handler,
    taintEviction: (await import('../../../functions/taintEviction.js')).handler as unknown as Handler,
    podProcessing: (await import('../../../functions/podProcessing.js')).handler as unknown as Handler,
  };
});

afterAll(async () => {
  process.env = savedEnv;
  await api.close();
  await dynamo.stop();
  rmSync(dir, { recursive: true, force: true });
});

function context(functionName: string): Context {
  // Without the deprecated callback-style members (done, fail, succeed): middy never calls them.
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `nlc-test-${functionName}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:nlc-test-${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/nlc-test-${functionName}`,
    logStreamName: '2026/11/21/[$LATEST]0123456789abcdef',
    getRemainingTimeInMillis: () => 30_000,
  } as Context;
}

/** The event EventBridge hands Lambda for a relay event: JSON, with the wire detail. */
function eventBridgeEvent(event: OutgoingEvent, overrides: Record<string, unknown> = {}): unknown {
  return JSON.parse(
    JSON.stringify({
      version: '0',
      id: randomUUID(),
      'detail-type': event.detailType,
      source: RelaySource,
      account: '123456789012',
      time: '2026-11-21T10:00:00Z',
      region: 'us-east-1',
      resources: [],
      detail: encodeDetail(event),
      ...overrides,
    }),
  ) as unknown;
}

const nodeEvent = (name: string, type: 'ADDED' | 'MODIFIED' = 'MODIFIED'): OutgoingEvent => ({
  detailType: NodeChangedDetailType,
  detail: { schemaVersion: 1, cluster: CLUSTER, type, node: nodeOf(api, name) },
});
const podEvent = (name: string): OutgoingEvent => ({
  detailType: PodChangedDetailType,
  detail: { schemaVersion: 1, cluster: CLUSTER, type: 'ADDED', pod: podOf(api, name) },
});

/** Items in every table, to show that nothing was written. */
async function itemCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const [name, table] of Object.entries(dynamo.tables) as [string, string][]) {
    const out = await dynamo.client.send(new ScanCommand({ TableName: table, Select: 'COUNT' }));
    counts[name] = out.Count ?? 0;
  }
  return counts;
}

describe('one event through each handler', () => {
  it('nodeTaints: a Node Changed event taints the node NoSchedule and stores its copy', async () => {
    createNode(api, 'nt-1', {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'DiskPressure', status: 'True' },
      ],
    });
    const event = eventBridgeEvent(nodeEvent('nt-1', 'ADDED'));
    await handlers.nodeTaints(event, context('nodeTaints'));
    expect((api.store.nodes.get('nt-1').spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`)).toEqual([
      'node.kubernetes.io/disk-pressure:NoSchedule',
    ]);
    expect(await stores.nodes.getNode(CLUSTER, 'nt-1')).toMatchObject({ name: 'nt-1' });
  });

  it('taintEviction: a Node Changed event evicts the untolerating pod; a Pod Changed event a new one', async () => {
    createNode(api, 'te-1', { taints: [taint1] });
    createPod(api, 'te-pod1', { nodeName: 'te-1' });
    await handlers.taintEviction(eventBridgeEvent(nodeEvent('te-1')), context('taintEviction'));
    expect(podCondition(api, 'te-pod1', 'DisruptionTarget')?.status).toBe('True');

    createPod(api, 'te-pod2', { nodeName: 'te-1' });
    await handlers.taintEviction(eventBridgeEvent(podEvent('te-pod2')), context('taintEviction'));
    expect(api.store.pods.get('te-pod2', { namespace: 'default' }).metadata?.deletionTimestamp).toBeDefined();
  });

  it('podProcessing: a Pod Changed event marks a pod bound to a NotReady node Ready=False', async () => {
    createNode(api, 'pp-1', { conditions: [{ type: 'Ready', status: 'False' }] });
    const node = nodeOf(api, 'pp-1');
    await stores.nodes.putNode(CLUSTER, node);
    const loaded = await stores.controllerState.load(CLUSTER);
    await stores.controllerState.commit(loaded, {
      meta: loaded.meta,
      state: {
        ...loaded.state,
        knownNodes: new Map([...loaded.state.knownNodes, ['pp-1', node.uid]]),
        nodeHealth: new Map([
          ...loaded.state.nodeHealth,
          ['pp-1', { probeTimestamp: 0, readyTransitionTimestamp: 0, status: node.conditions }],
        ]),
      },
    });
    createPod(api, 'pp-pod1', { nodeName: 'pp-1' });
    await handlers.podProcessing(eventBridgeEvent(podEvent('pp-pod1')), context('podProcessing'));
    expect(podCondition(api, 'pp-pod1', 'Ready')?.status).toBe('False');
  });
});

describe("one event through the shell and through the simulator's path", () => {
  // The simulator parses each event with parseRelayEvent and calls the dispatch with its own deps; a
  // Lambda parses it with its schema in the shell. Both must read the same event and decide the same.
  it('nodeTaints: the same event, parsed either way, gives the same detail and the same taints', async () => {
    for (const name of ['both-shell', 'both-sim'])
      createNode(api, name, {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'MemoryPressure', status: 'True' },
        ],
      });
    const viaShell = eventBridgeEvent(nodeEvent('both-shell', 'ADDED'));
    const viaSimulator = eventBridgeEvent(nodeEvent('both-sim', 'ADDED'));
    // The two parses of one event agree.
    expect(parseRelayEvent(viaShell)).toEqual(NodeChangedEvent.parse(viaShell));

    await handlers.nodeTaints(viaShell, context('nodeTaints'));
    const deps: FunctionDeps = {
      config: { ...UPSTREAM_DEFAULTS, cluster: CLUSTER },
      stores,
      cluster: createKubernetesCluster(api.kubeConfig(), { requestTimeoutMs: 10_000, clock: systemClock }),
      observer: silentObserver,
      clock: systemClock,
    };
    const step = await Dispatch.nodeTaints(
      { deps, warm: newWarmState(), remainingMs: () => 30_000 },
      { kind: 'event', event: parseRelayEvent(viaSimulator) },
    );
    expect(step).toEqual({ kind: 'done' });
    const taints = (name: string) =>
      (api.store.nodes.get(name).spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`);
    expect(taints('both-shell')).toEqual(['node.kubernetes.io/memory-pressure:NoSchedule']);
    expect(taints('both-sim')).toEqual(taints('both-shell'));
    const what = async (node: string) =>
      (await stores.decisions.query(CLUSTER, node, { newestFirst: false, limit: 50 })).map((d) => [
        d.source,
        d.what,
        d.result,
      ]);
    expect(await what('both-sim')).toEqual(await what('both-shell'));
  });
});

describe('malformed events are rejected naming the field, with nothing written', () => {
  // The objects exist (created by each case); only the event is bad.
  const badNode = () => {
    const event = eventBridgeEvent(nodeEvent('bad-node')) as { detail: { node: { taints: unknown[] } } };
    event.detail.node.taints = [{ key: 'k', effect: 'NoWhere' }];
    return event;
  };
  const badPod = () => {
    const event = eventBridgeEvent(podEvent('bad-pod')) as {
      detail: { pod: { deletionTimestamp?: string } };
    };
    event.detail.pod.deletionTimestamp = 'yesterday';
    return event;
  };
  const cases = [
    {
      handler: 'nodeTaints',
      what: 'Node Changed with a bad taint effect',
      event: badNode,
      issue: 'detail.node.taints[0].effect',
    },
    {
      handler: 'taintEviction',
      what: 'Node Changed with a bad taint effect',
      event: badNode,
      issue: 'detail.node.taints[0].effect',
    },
    {
      handler: 'taintEviction',
      what: 'Pod Changed with a bad deletionTimestamp',
      event: badPod,
      issue: 'detail.pod.deletionTimestamp: expected an ISO 8601 date, got "yesterday"',
    },
    {
      handler: 'podProcessing',
      what: 'Pod Changed with a bad deletionTimestamp',
      event: badPod,
      issue: 'detail.pod.deletionTimestamp: expected an ISO 8601 date, got "yesterday"',
    },
    {
      handler: 'nodeTaints',
      what: 'Node Changed of an unknown schemaVersion',
      event: () => {
        const event = eventBridgeEvent(nodeEvent('bad-node')) as { detail: { schemaVersion: number } };
        event.detail.schemaVersion = 2;
        return event;
      },
      issue: 'detail.schemaVersion: unsupported schemaVersion 2',
    },
    {
      handler: 'podProcessing',
      what: 'Pod Changed without its pod',
      event: () => {
        const event = eventBridgeEvent(podEvent('bad-pod')) as { detail: { pod?: unknown } };
        delete event.detail.pod;
        return event;
      },
      issue: 'detail.pod',
    },
    {
      handler: 'taintEviction',
      what: 'a detail-type it does not take',
      event: () => eventBridgeEvent(nodeEvent('bad-node'), { 'detail-type': 'Heartbeat Digest' }),
      issue: 'detail-type: expected "Node Changed" or "Pod Changed"',
    },
  ] as const;

  it.each(cases)('$handler: $what', async ({ handler, event, issue }) => {
    createNode(api, 'bad-node');
    createPod(api, 'bad-pod', { nodeName: 'bad-node' });
    const before = await itemCounts();
    const requests = api.requests.length;

    const error: unknown = await handlers[handler](event(), context(handler)).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(EventParseError);
    expect((error as EventParseError).issues.join('\n')).toContain(issue);
    expect(api.requests.length).toBe(requests);
    expect(await itemCounts()).toEqual(before);
    api.store.pods.delete('bad-pod', { namespace: 'default', gracePeriodSeconds: 0 });
    api.store.nodes.delete('bad-node');
  });

  it('an event for another cluster is rejected before any write', async () => {
    createNode(api, 'other-1', { conditions: [{ type: 'Ready', status: 'False' }] });
    const event = eventBridgeEvent(nodeEvent('other-1')) as { detail: { cluster: string } };
    event.detail.cluster = 'staging';
    const before = await itemCounts();
    const requests = api.requests.length;

    await expect(handlers.nodeTaints(event, context('nodeTaints'))).rejects.toThrow(
      'detail.cluster: this deployment serves cluster "prod", got "staging"',
    );
    expect(api.requests.length).toBe(requests);
    expect(await itemCounts()).toEqual(before);
  });
});
