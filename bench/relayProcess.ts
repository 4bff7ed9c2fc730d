// The relay side of bench/relay.ts. bench/relay.ts bundles this file with esbuild and runs it with
// plain node, as the container image runs the relay (a TypeScript loader in the process would add its
// own ~150 MiB and its CPU). The relay runs as in production: HTTPS informers through client-node,
// leader election on a Lease, the system clock, and the EventBridge event sink, whose SDK client
// answers every PutEvents after serializing it (no network) and counts calls, entries and bytes.
//
// IPC with bench/relay.ts: receives 'start' (kubeconfig, window), sends 'synced', 'republished' (the
// first term's view sent), 'window-start', 'window-end' (the measurements); then, told 'relist' just
// before the simulator ends every watch with 410, 'relisted' once all three informers have listed
// again; then stops the relay (releasing its Lease) and exits.
import { readFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';
import { EventBridgeClient, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { KubeConfig } from '@kubernetes/client-node';
import { RealScheduler } from '../shared/adapters/realScheduler.js';
import { createEventBridgeSink } from '../shared/adapters/eventbridge/eventSink.js';
import { putEventsEntrySize } from '../shared/adapters/eventbridge/putEvents.js';
import { RelayMetrics } from '../relay/metrics.js';
import { createRelay } from '../relay/relay.js';
import { DigestEntryOverheadBytes } from '../shared/heartbeatDigest.js';

export interface StartMessage {
  readonly type: 'start';
  readonly kubeconfigYaml: string;
  readonly warmupSeconds: number;
  readonly seconds: number;
  readonly nodeMonitorPeriod: number;
  readonly digestEntryMaxBytes: number;
  readonly quietDigestPeriod: number;
}

export interface RepublishReport {
  readonly type: 'republished';
  /** From leading with every informer synced to the paced lane's last event accepted. */
  readonly ms: number;
  readonly events: number;
  readonly rssMax: number;
  /** Leadership lost and won again meanwhile (a starved event loop misses its renew deadline). */
  readonly leadershipChanges: number;
}

export interface RelistReport {
  readonly type: 'relisted';
  /** From the request to the last of the three relists done. */
  readonly ms: number;
  readonly cpuMicros: number;
  readonly rssMax: number;
  readonly peakRss: number | null;
}

export interface PutEventsCall {
  readonly entries: number;
  readonly bytes: number;
  readonly detailTypes: readonly string[];
}

export interface WindowReport {
  readonly type: 'window-end';
  readonly windowMs: number;
  readonly cpuMicros: number;
  readonly rss: readonly number[];
  readonly heapUsed: readonly number[];
  /** At the end of the window: V8's heap reserved, and memory outside it (buffers, sockets). */
  readonly heapTotal: number;
  readonly external: number;
  /** Physical size of each V8 heap space, bytes. */
  readonly heapSpaces: Readonly<Record<string, number>>;
  /** /proc/self/status: anonymous and file-backed resident memory, peak RSS (bytes; Linux only). */
  readonly rssAnon: number | null;
  readonly rssFile: number | null;
  readonly peakRss: number | null;
  /** After a forced GC at the end of the window (null without --expose-gc). */
  readonly heapAfterGc: number | null;
  readonly calls: readonly PutEventsCall[];
  readonly digestBytes: number;
  readonly digestNodes: number;
  readonly syncMs: number;
  readonly cpuMicrosToSync: number;
  readonly rssAtSync: number;
  readonly peakRssAtSync: number | null;
  /** Counters since the relay started: what a starved process does not hide. */
  readonly health: Readonly<Record<string, number>>;
}

/** A `kB` line of /proc/self/status, in bytes; null where there is none. */
function procStatus(field: string): number | null {
  try {
    const line = readFileSync('/proc/self/status', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    const kb = line === undefined ? NaN : Number.parseInt(line.slice(field.length + 1), 10);
    return Number.isFinite(kb) ? kb * 1024 : null;
  } catch {
    return null;
  }
}

/** A counter's total over its labels. */
async function total(counter: { get(): Promise<{ values: readonly { value: number }[] }> }): Promise<number> {
  return (await counter.get()).values.reduce((n, v) => n + v.value, 0);
}

const send = (message: object): void => {
  process.send?.(message);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(start: StartMessage): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(start.kubeconfigYaml);

  const calls: PutEventsCall[] = [];
  const client = new EventBridgeClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    maxAttempts: 1,
  });
  // After serialization (the 'build' step), instead of signing and sending: a successful answer.
  client.middlewareStack.add(
    () => (args) => {
      const entries = (args.input as { Entries?: PutEventsRequestEntry[] }).Entries ?? [];
      calls.push({
        entries: entries.length,
        bytes: entries.reduce((sum, e) => sum + putEventsEntrySize(e), 0),
        detailTypes: entries.map((e) => e.DetailType ?? ''),
      });
      const output = {
        $metadata: { httpStatusCode: 200 },
        FailedEntryCount: 0,
        Entries: entries.map((_, i) => ({ EventId: `bench-${calls.length}-${i}` })),
      };
      return Promise.resolve({ output, response: {} });
    },
    { step: 'build', name: 'benchAnswer' },
  );
  const sink = createEventBridgeSink({ busName: 'nlc-bench', client });
  const scheduler = new RealScheduler();
  const metrics = new RelayMetrics();
  const relay = createRelay({
    kubeConfig,
    cluster: 'bench',
    sink,
    scheduler,
    nodeMonitorPeriod: start.nodeMonitorPeriod,
    quietDigestPeriod: start.quietDigestPeriod,
    digestPartMaxBytes: start.digestEntryMaxBytes - DigestEntryOverheadBytes,
    relayId: 'nlc-relay-bench',
    leaderElection: { namespace: 'nlc-system', name: 'nlc-relay' },
    metrics,
  });

  const cpuAtStart = process.cpuUsage();
  const startedAt = Date.now();
  await relay.start();
  while (!relay.synced() || !relay.isLeader()) await sleep(100);
  const syncMs = Date.now() - startedAt;
  const toSync = process.cpuUsage(cpuAtStart);
  const rssAtSync = process.memoryUsage().rss;
  const peakRssAtSync = procStatus('VmHWM');
  send({ type: 'synced', syncMs });

  // The first term's republish (the whole view, paced): until the paced lane is empty.
  const republishStart = Date.now();
  let republishRss = 0;
  // Until this term's view is out: a term lost meanwhile clears the lane, and the next term resumes it.
  while (relay.status().pendingRepublished > 0 || !relay.isLeader()) {
    republishRss = Math.max(republishRss, process.memoryUsage().rss);
    await sleep(100);
  }
  const republishedEvents = await total(metrics.republishedEvents);
  const republished: RepublishReport = {
    type: 'republished',
    ms: Date.now() - republishStart,
    events: republishedEvents,
    rssMax: republishRss,
    leadershipChanges: await total(metrics.leadershipChanges),
  };
  send(republished);
  await sleep(start.warmupSeconds * 1000);
  globalThis.gc?.();

  send({ type: 'window-start' });
  const callsBefore = calls.length;
  const cpuBefore = process.cpuUsage();
  const windowStart = Date.now();
  const rss: number[] = [];
  const heapUsed: number[] = [];
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    rss.push(m.rss);
    heapUsed.push(m.heapUsed);
  }, 1_000);
  await sleep(start.seconds * 1000);
  clearInterval(sampler);
  const cpu = process.cpuUsage(cpuBefore);
  const windowMs = Date.now() - windowStart;
  globalThis.gc?.();
  const report: WindowReport = {
    type: 'window-end',
    windowMs,
    cpuMicros: cpu.user + cpu.system,
    rss,
    heapUsed,
    heapAfterGc: globalThis.gc === undefined ? null : process.memoryUsage().heapUsed,
    heapTotal: process.memoryUsage().heapTotal,
    external: process.memoryUsage().external,
    heapSpaces: Object.fromEntries(
      getHeapSpaceStatistics()
        .filter((space) => space.physical_space_size > 0)
        .map((space) => [space.space_name, space.physical_space_size]),
    ),
    rssAnon: procStatus('RssAnon'),
    rssFile: procStatus('RssFile'),
    peakRss: procStatus('VmHWM'),
    calls: calls.slice(callsBefore),
    digestBytes: (await metrics.digestBytes.get()).values[0]?.value ?? 0,
    digestNodes: (await metrics.digestNodes.get()).values[0]?.value ?? 0,
    syncMs,
    cpuMicrosToSync: toSync.user + toSync.system,
    rssAtSync,
    peakRssAtSync,
    health: {
      leadershipChanges: await total(metrics.leadershipChanges),
      digestsSkipped: await total(metrics.digestsSkipped),
      watchRestarts: await total(metrics.watchRestarts),
      watchStalls: await total(metrics.watchStalls),
      relists: await total(metrics.relists),
    },
  };
  send(report);

  // A relist of all three resources, as after a 410 on every watch.
  await new Promise<void>((resolve) => {
    process.once('message', () => {
      resolve();
    });
  });
  const relists = () => total(metrics.relists);
  const relistsBefore = await relists();
  const relistCpu = process.cpuUsage();
  const relistStart = Date.now();
  let relistRss = 0;
  while ((await relists()) < relistsBefore + 3) {
    relistRss = Math.max(relistRss, process.memoryUsage().rss);
    await sleep(50);
  }
  const relistCpuUsed = process.cpuUsage(relistCpu);
  const relisted: RelistReport = {
    type: 'relisted',
    ms: Date.now() - relistStart,
    cpuMicros: relistCpuUsed.user + relistCpuUsed.system,
    rssMax: relistRss,
    peakRss: procStatus('VmHWM'),
  };
  send(relisted);
  await relay.stop({ flushTimeoutMs: 2_000 });
  scheduler.close();
  process.disconnect();
}

process.once('message', (message: StartMessage) => {
  run(message).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
});
