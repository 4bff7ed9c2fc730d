// What one relay hand-over costs (docs/relay.md, "Guarantees"): the new leader republishes its current
// view (relay/recentChanges.ts). Two replicas against the API simulator in process, on virtual time;
// the leader stops (gracefully) and the standby takes over. Measured: the events the successor
// republishes, the PutEvents calls they make (as the EventBridge sink batches them), the time the
// paced lane takes to drain, and the takeover's CPU. Derived from the events and docs/functions.md:
// the Lambda invocations and the reads the consumers make.
//
//   npx tsx bench/relayHandOver.ts [--nodes 5000] [--pods 50000] [--not-ready 0,0.1,1] [--rate 250] [--json]
//
// Numbers are reported, never asserted: machines are shared and noisy.
import { Faults } from '../local/apiserver/faults.js';
import { defaultVersion } from '../local/apiserver/discovery.js';
import { createApiStore, makeKubeConfig } from '../local/apiserver/index.js';
import { ApiHttpServer } from '../local/apiserver/server.js';
import { formatMicroTime, formatTime } from '../local/apiserver/timestamps.js';
import { inProcessHttpLibrary, inProcessWatch } from '../local/simulate/transport.js';
import { VirtualScheduler } from '../local/virtualScheduler.js';
import { silentLogger } from '../relay/logger.js';
import { RelayMetrics } from '../relay/metrics.js';
import { createRelay, type Relay } from '../relay/relay.js';
import { batchEntries, putEventsEntrySize, toPutEventsEntries } from '../relay/shaping.js';
import type { EpochMillis } from '../shared/domain/types.js';
import type { OutgoingEvent } from '../shared/events.js';
import type { EventSink, PublishResult } from '../shared/ports/eventSink.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i < 0 ? fallback : (args[i + 1] ?? fallback);
};
const options = {
  nodes: Number(flag('--nodes', '5000')),
  pods: Number(flag('--pods', '50000')),
  notReady: flag('--not-ready', '0,0.1,1').split(',').map(Number),
  rate: Number(flag('--rate', '250')),
  json: args.includes('--json'),
};
const log = (message: string): void => {
  process.stderr.write(`[bench:relayHandOver] ${message}\n`);
};

const t0 = Date.parse('2026-01-01T00:00:00Z');
const RelayUser = 'system:serviceaccount:nlc-system:nlc-relay';

/** Counts what the bus accepts and the PutEvents requests the EventBridge sink would make for it. */
class CountingSink implements EventSink {
  readonly accepted: { readonly event: OutgoingEvent; readonly at: EpochMillis }[] = [];
  putEventsCalls = 0;
  entryBytes = 0;
  constructor(private readonly clock: { now(): EpochMillis }) {}
  publish(events: readonly OutgoingEvent[]): Promise<PublishResult> {
    const { batches } = batchEntries(toPutEventsEntries(events, { busName: 'nlc-bench' }));
    this.putEventsCalls += batches.length;
    for (const batch of batches) for (const entry of batch) this.entryBytes += putEventsEntrySize(entry);
    for (const event of events) this.accepted.push({ event, at: this.clock.now() });
    return Promise.resolve({ sent: events.length, failed: [], retried: 0, requests: batches.length });
  }
}

function nodeName(i: number): string {
  return `ip-10-0-${i >> 8}-${i & 255}.eu-west-1.compute.internal`;
}

interface Result {
  readonly notReadyFraction: number;
  readonly nodesNeedingAction: number;
  readonly events: { readonly node: number; readonly pod: number; readonly digest: number };
  readonly putEventsCalls: number;
  readonly entryMegabytes: number;
  readonly drainSeconds: number;
  readonly takeoverCpuMs: number;
  readonly lambdaInvocations: number;
  readonly consumerApiReads: number;
  readonly consumerDynamoDbCalls: number;
}

async function run(notReadyFraction: number): Promise<Result> {
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
  store.namespaces.create({ metadata: { name: 'nlc-system' } });
  const notReady = Math.round(options.nodes * notReadyFraction);
  for (let i = 0; i < options.nodes; i++) {
    const name = nodeName(i);
    const down = i < notReady;
    store.nodes.create({
      metadata: { name, labels: { 'topology.kubernetes.io/zone': `eu-west-1${'abc'[i % 3] ?? 'a'}` } },
      // A node the controller found unreachable: Ready Unknown and the unreachable NoExecute taint.
      ...(down && {
        spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] },
      }),
    });
    store.nodes.patch(
      name,
      {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: down ? 'Unknown' : 'True',
              reason: down ? 'NodeStatusUnknown' : 'KubeletReady',
              lastHeartbeatTime: formatTime(t0),
              lastTransitionTime: formatTime(t0),
            },
          ],
        },
      },
      { type: 'strategic', subresource: 'status' },
    );
    store.leases.create({
      metadata: { name, namespace: 'kube-node-lease' },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: formatMicroTime(t0) },
    });
  }
  for (let i = 0; i < options.pods; i++) {
    store.pods.create({
      metadata: { name: `app-${i}`, namespace: 'default' },
      spec: {
        nodeName: nodeName(i % options.nodes),
        containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
      },
    });
  }

  const sink = new CountingSink(scheduler);
  const replica = async (relayId: string): Promise<Relay> => {
    const relay = createRelay({
      kubeConfig: makeKubeConfig({ server: 'https://nlc-bench.invalid', token: 'relay-token' }),
      cluster: 'bench',
      sink,
      scheduler,
      nodeMonitorPeriod: 5_000,
      relayId,
      leaderElection: { namespace: 'nlc-system', name: 'nlc-relay' },
      logger: silentLogger,
      metrics: new RelayMetrics(),
      random: () => 0.5,
      republishRate: options.rate,
      transport: inProcessHttpLibrary(server),
      watch: inProcessWatch(store.registry, { faults, user: RelayUser }),
    });
    await relay.start();
    while (!(relay.synced() && relay.status().informers.every((i) => i.watching))) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    await scheduler.advance(0);
    return relay;
  };
  const a = await replica('relay-a');
  const b = await replica('relay-b');
  // A's own first republish drains before the hand-over.
  while (a.status().pendingEvents > 0) await scheduler.advance(1_000);
  await scheduler.advance(10_000);

  await a.stop({ flushTimeoutMs: 1_000 });
  const from = sink.accepted.length;
  const calls = sink.putEventsCalls;
  const bytes = sink.entryBytes;
  const cpu = process.cpuUsage();
  // The standby's next election try takes the released Lease and republishes.
  while (!b.isLeader()) await scheduler.advance(100);
  const used = process.cpuUsage(cpu);
  const takeoverCpuMs = (used.user + used.system) / 1000;
  const since = scheduler.now();
  while (b.status().pendingRepublished > 0 || b.status().pendingEvents > 0) await scheduler.advance(100);
  const drainSeconds = (scheduler.now() - since) / 1000;
  await b.stop({ flushTimeoutMs: 1_000 });

  const events = sink.accepted.slice(from).map((a) => a.event);
  const count = (type: string) => events.filter((e) => e.detailType === type).length;
  const nodeEvents = count('Node Changed');
  const podEvents = count('Pod Changed');
  // docs/functions.md: a Node Changed is node-taints + taint-eviction, a Pod Changed taint-eviction +
  // pod-processing. API reads: taint eviction lists the pods of each NoExecute-tainted node;
  // pod-processing reads each pod of a not-Ready node (markPodsNotReady writes only when needed);
  // node-taints reads a node only for a redelivery (same resourceVersion as stored), which a node's
  // 5-minute status report makes rare: not counted. DynamoDB: node-taints one conditional write,
  // taint eviction one Query (+ a conditional write for a tainted node), per Pod Changed one GetItem
  // each (+ the pending eviction's read on a tainted node).
  return {
    notReadyFraction,
    nodesNeedingAction: notReady,
    events: { node: nodeEvents, pod: podEvents, digest: count('Heartbeat Digest') },
    putEventsCalls: sink.putEventsCalls - calls,
    entryMegabytes: (sink.entryBytes - bytes) / 1e6,
    drainSeconds,
    takeoverCpuMs,
    lambdaInvocations: 2 * (nodeEvents + podEvents),
    consumerApiReads: notReady + podEvents,
    consumerDynamoDbCalls: 2 * nodeEvents + notReady + 3 * podEvents,
  };
}

const results: Result[] = [];
for (const fraction of options.notReady) {
  log(`${options.nodes} nodes, ${options.pods} pods, ${fraction * 100} % not Ready ...`);
  results.push(await run(fraction));
}
if (options.json) {
  process.stdout.write(`${JSON.stringify({ options, results }, null, 2)}\n`);
} else {
  process.stdout.write(
    `| not Ready | Node Changed | Pod Changed | PutEvents calls | MB | drain (s) | takeover CPU (ms) | Lambda invocations | API reads | DynamoDB calls |\n` +
      `|---|---|---|---|---|---|---|---|---|---|\n`,
  );
  for (const r of results) {
    process.stdout.write(
      `| ${r.notReadyFraction * 100} % | ${r.events.node} | ${r.events.pod} | ${r.putEventsCalls} | ${r.entryMegabytes.toFixed(1)} | ${r.drainSeconds.toFixed(1)} | ${r.takeoverCpuMs.toFixed(0)} | ${r.lambdaInvocations} | ${r.consumerApiReads} | ${r.consumerDynamoDbCalls} |\n`,
    );
  }
}
