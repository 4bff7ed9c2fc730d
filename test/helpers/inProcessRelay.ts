// A relay against the API simulator served in process, as `nlc simulate` runs it: lists through the
// in-process HttpLibrary, watches through inProcessWatch (with the server's Faults, so watch stalls
// apply), all on one VirtualScheduler. Nothing travels over a socket, so a test moves virtual time and
// every watch event has been handled when the timer that wrote it returns.
import { Faults } from '../../local/apiserver/faults.js';
import { defaultVersion } from '../../local/apiserver/discovery.js';
import { createApiStore, makeKubeConfig, type ApiStore } from '../../local/apiserver/index.js';
import { ApiHttpServer } from '../../local/apiserver/server.js';
import { formatMicroTime, formatTime } from '../../local/apiserver/timestamps.js';
import { inProcessHttpLibrary, inProcessWatch } from '../../local/simulate/transport.js';
import { VirtualScheduler } from '../../local/virtualScheduler.js';
import { RelayMetrics } from '../../relay/metrics.js';
import { createRelay, type Relay, type RelayOptions } from '../../relay/relay.js';
import type { EpochMillis } from '../../shared/domain/types.js';
import { MemoryLogger, RecordingSink } from '../integration/relay/helpers.js';

export const t0 = Date.parse('2026-01-01T00:00:00Z');
const RelayUser = 'system:serviceaccount:nlc-system:nlc-relay';

export interface InProcessCluster {
  readonly scheduler: VirtualScheduler;
  readonly store: ApiStore;
  readonly faults: Faults;
  readonly server: ApiHttpServer;
}

export function startCluster(): InProcessCluster {
  const scheduler = new VirtualScheduler(t0);
  const store = createApiStore({ clock: scheduler, seed: 1 });
  const faults = new Faults();
  const server = new ApiHttpServer({
    registry: store.registry,
    identities: [{ name: RelayUser, token: 'relay-token' }],
    faults,
    version: defaultVersion,
    defaultWatchTimeoutSeconds: 1800,
    bookmarkIntervalMs: 2 ** 31 - 1,
    now: () => store.registry.now(),
  });
  return { scheduler, store, faults, server };
}

export interface InProcessRelay {
  readonly relay: Relay;
  readonly sink: RecordingSink;
  readonly logger: MemoryLogger;
  readonly metrics: RelayMetrics;
}

/** Starts a single always-leading relay and waits (in real time, no virtual time passing) for its lists. */
export async function startInProcessRelay(
  cluster: InProcessCluster,
  overrides: Partial<RelayOptions> = {},
): Promise<InProcessRelay> {
  const sink = new RecordingSink(cluster.scheduler);
  const logger = new MemoryLogger();
  const metrics = new RelayMetrics();
  const relay = createRelay({
    kubeConfig: makeKubeConfig({ server: 'https://nlc-test.invalid', token: 'relay-token' }),
    cluster: 'test',
    sink,
    scheduler: cluster.scheduler,
    nodeMonitorPeriod: 5_000,
    relayId: 'relay-0',
    leaderElection: false,
    logger,
    metrics,
    random: () => 0.5,
    transport: inProcessHttpLibrary(cluster.server),
    watch: inProcessWatch(cluster.store.registry, { faults: cluster.faults, user: RelayUser }),
    ...overrides,
  });
  await relay.start();
  for (let turn = 0; ; turn++) {
    if (relay.synced() && relay.status().informers.every((i) => i.watching)) break;
    if (turn > 10_000) throw new Error('the relay did not list and watch');
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { relay, sink, logger, metrics };
}

/** A node with a Ready condition and its Lease, renewed at `at`, as a kubelet registers them. */
export function createNode(cluster: InProcessCluster, name: string, at: EpochMillis = t0): void {
  cluster.store.nodes.create({
    metadata: { name, labels: { 'topology.kubernetes.io/zone': 'zone-a' } },
  });
  cluster.store.nodes.patch(
    name,
    {
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            lastHeartbeatTime: formatTime(at),
            lastTransitionTime: formatTime(at),
          },
        ],
      },
    },
    { type: 'strategic', subresource: 'status' },
  );
  cluster.store.leases.create({
    metadata: { name, namespace: 'kube-node-lease' },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: formatMicroTime(at) },
  });
}

/** A kubelet's lease renewal at the current virtual time. */
export function renewLease(cluster: InProcessCluster, name: string): void {
  cluster.store.leases.patch(
    name,
    { spec: { renewTime: formatMicroTime(cluster.scheduler.now()) } },
    { type: 'merge', namespace: 'kube-node-lease' },
  );
}

/** The value of a counter of the relay's metrics for the given labels (0 when never counted). */
export async function counterValue(
  metrics: RelayMetrics,
  name: 'watchStalls' | 'digestsSkipped' | 'relists',
  labels: Readonly<Record<string, string>>,
): Promise<number> {
  const metric = await metrics[name].get();
  return metric.values
    .filter((v) =>
      Object.entries(labels).every(([k, value]) => (v.labels as Record<string, unknown>)[k] === value),
    )
    .reduce((sum, v) => sum + v.value, 0);
}
