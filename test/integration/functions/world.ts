// A small world for the function services' integration tests: the Kubernetes API simulator (real HTTPS,
// through the real cluster adapter) and dynalite (the real DynamoDB stores), on one virtual clock. The
// relay and node-taints are stood in for by `syncNodeCache` (the Node Changed → putNode path) and
// `digest` (a Heartbeat Digest as the relay would build it).
import { createKubernetesCluster } from '../../../shared/adapters/kubernetes/cluster.js';
import { startApiServer, type ApiServerHandle, type RequestRecord } from '../../../local/apiserver/index.js';
import type { DrainerDeps, DrainerInvocation } from '../../../shared/app/drainer.js';
import type { MonitorDeps } from '../../../shared/app/monitor.js';
import { UPSTREAM_DEFAULTS, type ControllerConfig } from '../../../shared/config.js';
import type { EpochMillis, Node, Taint } from '../../../shared/domain/types.js';
import type { HeartbeatDigest } from '../../../shared/events.js';
import type { ClusterPort } from '../../../shared/ports/cluster.js';
import type { LogFields, MetricName, MetricUnit, Observer } from '../../../shared/ports/observer.js';
import type { DynamoDbStores } from '../../../shared/adapters/dynamodb/index.js';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';

export const t0 = Date.parse('2026-03-02T09:00:00.000Z');
export const ZoneA = { region: 'eu-west-1', zone: 'eu-west-1a' } as const;
export const ZoneB = { region: 'eu-west-1', zone: 'eu-west-1b' } as const;
/** The zone key (zones.ts getZoneKey) of a zone above. */
export const zoneKey = (z: { region: string; zone: string }): string => `${z.region}:\x00:${z.zone}`;

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: LogFields;
}
export interface MetricPoint {
  readonly name: MetricName;
  readonly unit: MetricUnit;
  readonly value: number;
  readonly zone?: string;
}

/** An Observer that keeps everything, for assertions. */
export class RecordingObserver implements Observer {
  readonly logs: LogLine[] = [];
  readonly metrics: MetricPoint[] = [];
  debug(message: string, fields: LogFields = {}): void {
    this.logs.push({ level: 'debug', message, fields });
  }
  info(message: string, fields: LogFields = {}): void {
    this.logs.push({ level: 'info', message, fields });
  }
  warn(message: string, fields: LogFields = {}): void {
    this.logs.push({ level: 'warn', message, fields });
  }
  error(message: string, fields: LogFields = {}): void {
    this.logs.push({ level: 'error', message, fields });
  }
  metric(name: MetricName, unit: MetricUnit, value: number, dimensions?: { readonly zone?: string }): void {
    this.metrics.push({
      name,
      unit,
      value,
      ...(dimensions?.zone !== undefined && { zone: dimensions.zone }),
    });
  }
  metricValues(name: MetricName): number[] {
    return this.metrics.filter((m) => m.name === name).map((m) => m.value);
  }
  warnings(): string[] {
    return this.logs.filter((l) => l.level === 'warn').map((l) => l.message);
  }
}

/** Upstream's defaults for a cluster named `cluster` (grace 50 s, period 5 s, rate 0.1/s). */
export function testConfig(overrides: Partial<ControllerConfig> = {}): ControllerConfig {
  return { ...UPSTREAM_DEFAULTS, cluster: 'test', ...overrides };
}

export interface World {
  readonly api: ApiServerHandle;
  readonly db: DynamoFixture;
  readonly stores: DynamoDbStores;
  readonly cluster: ClusterPort;
  readonly observer: RecordingObserver;
  /** The virtual wall clock of the API simulator, the stores and the cluster adapter. */
  now: EpochMillis;
  config: ControllerConfig;
  /** Backoff and retry sleeps the cluster adapter and the drainer asked for (none are slept). */
  readonly waits: number[];
  /** Drainer invocations the monitor made (an injected trigger). */
  readonly triggers: DrainerInvocation[];
  monitorDeps(overrides?: Partial<MonitorDeps>): MonitorDeps;
  drainerDeps(overrides?: Partial<DrainerDeps>): DrainerDeps;
  /** Creates a node in the API (Ready=True, heartbeat `now`) in `zone`. */
  addNode(name: string, zone?: { region: string; zone: string }, labels?: Record<string, string>): void;
  /** What node-taints does on Node Changed: the node cache follows the API. */
  syncNodeCache(): Promise<void>;
  /** A Heartbeat Digest at `observedAt` with the given probe instants. */
  digest(sequence: number, observedAt: EpochMillis, probes: Record<string, EpochMillis>): HeartbeatDigest;
  /** The HTTP requests served since `mark()`. */
  requestsSince(mark: number): RequestRecord[];
  /** Write requests (anything but get/list/watch) since `mark`. */
  writesSince(mark: number): RequestRecord[];
  taintsOf(name: string): Taint[];
  close(): Promise<void>;
}

const READ_VERBS = new Set(['get', 'list', 'watch']);

export async function startWorld(
  config: ControllerConfig = testConfig(),
  options: { readonly requestTimeoutMs?: number } = {},
): Promise<World> {
  const clockRef = { now: t0 };
  const clock = { now: () => clockRef.now };
  const api = await startApiServer({ clock });
  const db = await startDynamoDb(`nlc-fn`);
  // Conflict backoff of the stores in real time, kept short: tests race drainers on purpose.
  const stores = db.stores({ clock, settings: { backoffBaseMs: 1, backoffCapMs: 5 } });
  const waits: number[] = [];
  const cluster = createKubernetesCluster(api.kubeConfig(), {
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    clock,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1_000 },
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
  });
  const observer = new RecordingObserver();
  const triggers: DrainerInvocation[] = [];
  const world: World = {
    api,
    db,
    stores,
    cluster,
    observer,
    get now() {
      return clockRef.now;
    },
    set now(value: EpochMillis) {
      clockRef.now = value;
    },
    config,
    waits,
    triggers,
    monitorDeps: (overrides = {}) => ({
      config: world.config,
      stores,
      cluster,
      observer,
      clock,
      triggerDrainer: (invocation) => {
        triggers.push(invocation);
        return Promise.resolve();
      },
      ...overrides,
    }),
    drainerDeps: (overrides = {}) => ({
      config: world.config,
      stores,
      cluster,
      observer,
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
      ...overrides,
    }),
    addNode: (name, zone = ZoneA, labels = {}) => {
      api.store.nodes.create({
        metadata: {
          name,
          labels: {
            'kubernetes.io/hostname': name,
            'topology.kubernetes.io/region': zone.region,
            'topology.kubernetes.io/zone': zone.zone,
            ...labels,
          },
        },
      });
      const at = new Date(clockRef.now).toISOString().replace(/\.\d{3}Z$/, 'Z');
      api.store.nodes.patch(
        name,
        {
          status: {
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'KubeletReady',
                message: 'kubelet is posting ready status',
                lastHeartbeatTime: at,
                lastTransitionTime: at,
              },
            ],
          },
        },
        { type: 'merge', subresource: 'status' },
      );
      // What node-taints does on the node's ADDED (doNoScheduleTaintingPass): the not-ready taint
      // admission put on the new node goes once it reports Ready=True. Left in place, the monitor would
      // find it a write node-taints missed, and make it.
      const taints = (api.store.nodes.get(name).spec?.taints ?? []).filter(
        (t) => !(t.key === 'node.kubernetes.io/not-ready' && t.effect === 'NoSchedule'),
      );
      api.store.nodes.patch(name, { spec: { taints } }, { type: 'merge' });
    },
    syncNodeCache: async () => {
      const listed = await cluster.listNodes();
      if (!listed.ok) throw new Error(listed.message);
      for (const node of listed.value) await stores.nodes.putNode(world.config.cluster, node);
    },
    digest: (sequence, observedAt, probes) => ({
      schemaVersion: 1,
      cluster: world.config.cluster,
      relayId: 'relay-0',
      leaderSince: t0 - 3_600_000,
      observingSince: t0 - 3_600_000,
      sequence,
      observedAt,
      part: { index: 0, count: 1 },
      probes: new Map(Object.entries(probes)),
    }),
    requestsSince: (mark) => api.requests.slice(mark),
    writesSince: (mark) => api.requests.slice(mark).filter((r) => !READ_VERBS.has(r.verb ?? 'get')),
    taintsOf: (name) =>
      (api.store.nodes.get(name).spec?.taints ?? []).map((t) => ({
        key: t.key,
        effect: t.effect as Taint['effect'],
        ...(t.value === undefined ? {} : { value: t.value }),
      })),
    close: async () => {
      await api.close();
      await db.stop();
    },
  };
  return world;
}

/** The trimmed node the cache holds. */
export async function cachedNode(world: World, name: string): Promise<Node | undefined> {
  return world.stores.nodes.getNode(world.config.cluster, name);
}
