// The real servers the function services run against in integration tests: the Kubernetes API simulator
// (over HTTPS, through the project's cluster adapter) and dynalite (through the DynamoDB stores), both on
// 127.0.0.1 port 0 and on one manual clock, plus a recording Observer and builders for the relay's
// events made from the simulator's objects (as the relay makes them).
import { nodeFromV1, podFromV1 } from '../../shared/adapters/kubernetes/mapping.js';
import { createKubernetesCluster } from '../../shared/adapters/kubernetes/cluster.js';
import type { DynamoDbStores } from '../../shared/adapters/dynamodb/index.js';
import type { EpochMillis, Node, Pod, Toleration } from '../../shared/domain/types.js';
import type { NodeChanged, PodChanged } from '../../shared/events.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ClusterPort } from '../../shared/ports/cluster.js';
import type { Decision, LogFields, MetricName, Observer } from '../../shared/ports/observer.js';
import { startApiServer, type ApiServerHandle, type RequestRecord } from '../../local/apiserver/index.js';
import { startDynamoDb, type DynamoFixture } from './dynamodb.js';

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(public time: EpochMillis) {}

  now(): EpochMillis {
    return this.time;
  }

  advance(ms: number): void {
    this.time += ms;
  }
}

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields?: LogFields;
}

/** An Observer that keeps everything, for assertions. */
export class RecordingObserver implements Observer {
  readonly lines: LogLine[] = [];
  readonly metrics: { readonly name: MetricName; readonly value: number }[] = [];
  readonly decisions: Decision[] = [];

  debug(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'debug', message, ...(fields && { fields }) });
  }
  info(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'info', message, ...(fields && { fields }) });
  }
  warn(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'warn', message, ...(fields && { fields }) });
  }
  error(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'error', message, ...(fields && { fields }) });
  }
  metric(name: MetricName, _unit: string, value: number): void {
    this.metrics.push({ name, value });
  }
  decided(decision: Decision): void {
    this.decisions.push(decision);
  }

  count(name: MetricName): number {
    return this.metrics.filter((m) => m.name === name).reduce((n, m) => n + m.value, 0);
  }

  reset(): void {
    this.lines.length = 0;
    this.metrics.length = 0;
    this.decisions.length = 0;
  }
}

export interface FunctionsFixture {
  readonly api: ApiServerHandle;
  readonly dynamo: DynamoFixture;
  readonly stores: DynamoDbStores;
  readonly clock: ManualClock;
  /** The cluster adapter, with one HTTP attempt per call (so fault counts are exact) and no real waits. */
  readonly cluster: ClusterPort;
  /** Each test gets its own cluster name: every state key starts with it. */
  nextCluster(): string;
  /** HTTP requests since `mark()`. */
  requests(): RequestRecord[];
  /** Writes (PATCH, PUT, POST, DELETE) since `mark()`. */
  writes(): RequestRecord[];
  mark(): void;
  /** Removes every node, pod and event from the simulator and clears faults. */
  cleanApi(): void;
  stop(): Promise<void>;
}

export async function startFunctionsFixture(start: EpochMillis): Promise<FunctionsFixture> {
  const clock = new ManualClock(start);
  const api = await startApiServer({ clock });
  const dynamo = await startDynamoDb();
  const stores = dynamo.stores({ clock });
  // Deterministic, but never the same twice in a row: Event names take their sub-millisecond digits from it.
  let draws = 0;
  const cluster = createKubernetesCluster(api.kubeConfig(), {
    requestTimeoutMs: 10_000,
    retry: { maxAttempts: 1 },
    clock,
    sleep: () => Promise.resolve(),
    random: () => (++draws * 0.6180339887) % 1,
  });
  let clusters = 0;
  let mark = 0;
  return {
    api,
    dynamo,
    stores,
    clock,
    cluster,
    nextCluster: () => `c${++clusters}`,
    requests: () => api.requests.slice(mark),
    writes: () =>
      api.requests.slice(mark).filter((r) => ['PATCH', 'PUT', 'POST', 'DELETE'].includes(r.method)),
    mark: () => {
      mark = api.requests.length;
    },
    cleanApi: () => {
      api.faults.clear();
      for (const pod of api.store.pods.list().items) {
        api.store.pods.delete(pod.metadata?.name ?? '', {
          namespace: pod.metadata?.namespace ?? '',
          gracePeriodSeconds: 0,
        });
      }
      for (const node of api.store.nodes.list().items) api.store.nodes.delete(node.metadata?.name ?? '');
      for (const event of api.store.events.list().items) {
        api.store.events.delete(event.metadata.name ?? '', { namespace: event.metadata.namespace ?? '' });
      }
    },
    stop: async () => {
      await api.close();
      await dynamo.stop();
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Simulator objects

export interface WireTaint {
  readonly key: string;
  readonly value?: string;
  readonly effect: string;
}

export interface WireCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
}

export interface NodeSpec {
  readonly taints?: readonly WireTaint[];
  readonly conditions?: readonly WireCondition[];
  readonly unschedulable?: boolean;
  readonly labels?: Record<string, string>;
}

/**
 * Creates a node (admission adds node.kubernetes.io/not-ready:NoSchedule to a new node, as
 * TaintNodesByCondition does) and sets its taints, spec.unschedulable and conditions.
 */
export function createNode(api: ApiServerHandle, name: string, spec: NodeSpec = {}): void {
  api.store.nodes.create({ metadata: { name, labels: spec.labels ?? { 'kubernetes.io/hostname': name } } });
  updateNode(api, name, spec);
}

/** Replaces the node's taints / unschedulable (when given) and sets its conditions (when given). */
export function updateNode(api: ApiServerHandle, name: string, spec: NodeSpec): void {
  if (spec.taints !== undefined || spec.unschedulable !== undefined) {
    api.store.nodes.patch(
      name,
      {
        spec: {
          ...(spec.taints !== undefined && { taints: spec.taints.map((t) => ({ ...t })) }),
          ...(spec.unschedulable !== undefined && { unschedulable: spec.unschedulable }),
        },
      },
      { type: 'merge' },
    );
  }
  if (spec.conditions !== undefined) {
    api.store.nodes.patch(
      name,
      {
        status: {
          conditions: spec.conditions.map((c) => ({
            ...c,
            lastHeartbeatTime: '2024-05-01T09:59:50Z',
            lastTransitionTime: '2024-05-01T09:00:00Z',
          })),
        },
      },
      { type: 'merge', subresource: 'status' },
    );
  }
}

export interface PodSpec {
  readonly nodeName?: string;
  readonly tolerations?: readonly Toleration[];
  /** The controller owner's kind (DaemonSet pods). */
  readonly ownerKind?: string;
  readonly ready?: 'True' | 'False';
  readonly namespace?: string;
}

/** Creates a running pod (Ready as given, True by default). Admission adds the default tolerations. */
export function createPod(api: ApiServerHandle, name: string, spec: PodSpec = {}): void {
  const namespace = spec.namespace ?? 'default';
  api.store.pods.create(
    {
      metadata: {
        name,
        namespace,
        ...(spec.ownerKind !== undefined && {
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: spec.ownerKind,
              name: 'owner',
              uid: 'owner-uid',
              controller: true,
            },
          ],
        }),
      },
      spec: {
        ...(spec.nodeName !== undefined && { nodeName: spec.nodeName }),
        containers: [{ name: 'c', image: 'busybox' }],
        ...(spec.tolerations !== undefined && { tolerations: spec.tolerations.map((t) => ({ ...t })) }),
      },
    },
    { namespace },
  );
  api.store.pods.patch(
    name,
    {
      status: {
        phase: 'Running',
        conditions: [
          { type: 'Ready', status: spec.ready ?? 'True', lastTransitionTime: '2024-05-01T09:00:00Z' },
        ],
      },
    },
    { type: 'merge', subresource: 'status', namespace },
  );
}

/** The node as the relay reads it. */
export function nodeOf(api: ApiServerHandle, name: string): Node {
  const mapped = nodeFromV1(api.store.nodes.get(name));
  if (!mapped.ok) throw new Error(mapped.message);
  return mapped.value;
}

/** The pod as the relay reads it. */
export function podOf(api: ApiServerHandle, name: string, namespace = 'default'): Pod {
  const mapped = podFromV1(api.store.pods.get(name, { namespace }));
  if (!mapped.ok) throw new Error(mapped.message);
  return mapped.value;
}

/** A Node Changed detail for the simulator's current node (or the given one). */
export function nodeChanged(
  cluster: string,
  node: Node,
  type: NodeChanged['type'] = 'MODIFIED',
): NodeChanged {
  return { schemaVersion: 1, cluster, type, node };
}

/** A Pod Changed detail. */
export function podChanged(
  cluster: string,
  pod: Pod,
  type: PodChanged['type'] = 'ADDED',
  oldNodeName?: string,
): PodChanged {
  return { schemaVersion: 1, cluster, type, pod, ...(oldNodeName !== undefined && { oldNodeName }) };
}

/** The pod's condition of `type`, as the simulator has it. */
export function podCondition(
  api: ApiServerHandle,
  name: string,
  type: string,
  namespace = 'default',
): { status?: string; reason?: string; observedGeneration?: number } | undefined {
  return api.store.pods.get(name, { namespace }).status?.conditions?.find((c) => c.type === type);
}

/** The simulator's core/v1 Events, as `reason: message` lines, in the order they were created. */
export function eventLines(api: ApiServerHandle): string[] {
  return api.store.events
    .list()
    .items.sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))
    .map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`);
}
