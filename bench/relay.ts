// The relay's budget (docs/architecture.md#budgets; issue #3 §4): with 5,000 nodes renewing their Leases
// every 10 s and 50,000 pods, the relay must use < 10 % of one core and < 256 MiB resident, and make at most
// one PutEvents call per digest per 256 KB.
//
//   npm run bench:relay
//   npx tsx bench/relay.ts [--seconds 120] [--warmup 20] [--nodes 5000] [--pods 50000] [--pod-churn 0]
//                          [--renew-every 10] [--status-every 300] [--history-max-events 100000]
//                          [--entry-max-bytes 261120] [--quiet-digest-period 15] [--json]
//
// Besides the steady state it measures the first lists (all three resources), the first term's
// republish (the view through the paced lane) and a relist of all three resources (every watch ended
// with 410 Gone, as after an etcd restore). At 100,000 nodes the kubelets' 10,000 renewals a second
// may be more than the simulator can serve on a small machine: --renew-every lengthens the period, and
// the report states the rate observed.
//
// Three processes, so each number is the relay's alone: this one orchestrates; bench/relaySimulator.ts
// runs the API simulator and the kubelets' steady state; bench/relayProcess.ts, bundled by esbuild and
// run with plain node (as the container image runs it), is the relay. Measured over a steady-state
// window after the first lists and a warm-up: CPU from process.cpuUsage() deltas, resident memory
// sampled every second. Numbers are reported, never asserted: machines are shared and noisy.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { parse } from 'yaml';
import { HeartbeatDigestDetailType, NodeChangedDetailType, PodChangedDetailType } from '../shared/events.js';
import type { RelistReport, RepublishReport, StartMessage, WindowReport } from './relayProcess.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const value = i < 0 ? undefined : Number(args[i + 1]);
  return value === undefined || !Number.isFinite(value) ? fallback : value;
};
const options = {
  nodes: flag('--nodes', 5_000),
  pods: flag('--pods', 50_000),
  seconds: flag('--seconds', 120),
  warmupSeconds: flag('--warmup', 20),
  podChurn: flag('--pod-churn', 0),
  renewEverySeconds: flag('--renew-every', 10),
  statusEverySeconds: flag('--status-every', 300),
  historyMaxEvents: flag('--history-max-events', 100_000),
  // NLC_RELAY_DIGEST_ENTRY_MAX_BYTES and NLC_RELAY_QUIET_DIGEST_PERIOD, as the manifest sets them
  // (infra/relay-large: --entry-max-bytes 1000000).
  digestEntryMaxBytes: flag('--entry-max-bytes', 261_120),
  quietDigestPeriodSeconds: flag('--quiet-digest-period', 15),
  nodeMonitorPeriod: 5_000,
  json: args.includes('--json'),
};
const log = (message: string): void => {
  process.stderr.write(`[bench:relay] ${message}\n`);
};

interface SimStats {
  readonly type: 'stats';
  readonly cpu: NodeJS.CpuUsage;
  readonly rss: number;
  readonly renewals: number;
  readonly statusPosts: number;
  readonly podsChurned: number;
}

/** The relay container's NODE_OPTIONS (infra/relay/deployment.yaml), so the relay runs as deployed. */
async function deploymentNodeOptions(): Promise<string> {
  const text = await readFile(new URL('../infra/relay/deployment.yaml', import.meta.url), 'utf8');
  const deployment = parse(text) as {
    spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
  };
  const env = deployment.spec.template.spec.containers[0]?.env ?? [];
  return env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
}

/** Messages from a child, in order, awaited one at a time. */
function inbox(child: ChildProcess) {
  const queue: { type: string }[] = [];
  const waiters: ((m: { type: string }) => void)[] = [];
  child.on('message', (m: { type: string }) => {
    const waiter = waiters.shift();
    if (waiter !== undefined) waiter(m);
    else queue.push(m);
  });
  return async <T extends { type: string }>(type: T['type']): Promise<T> => {
    const m = queue.shift() ?? (await new Promise<{ type: string }>((resolve) => waiters.push(resolve)));
    if (m.type !== type) throw new Error(`expected ${type} from a child, got ${m.type}`);
    return m as T;
  };
}

async function main(): Promise<void> {
  const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
  const dir = await mkdtemp(join(tmpdir(), 'nlc-bench-relay-'));
  // The relay as the container image bundles it (infra/relay/Dockerfile).
  await build({
    entryPoints: [here('./relayProcess.ts')],
    outfile: join(dir, 'relay.mjs'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    mainFields: ['module', 'main'],
    logLevel: 'warning',
    banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
  });

  const sim = spawn(
    process.execPath,
    [
      // The simulator keeps whole objects: 1,000,000 pods take several GiB.
      '--max-old-space-size=16384',
      '--import',
      'tsx',
      here('./relaySimulator.ts'),
      '--nodes',
      String(options.nodes),
      '--pods',
      String(options.pods),
      '--pod-churn',
      String(options.podChurn),
      '--renew-every-ms',
      String(options.renewEverySeconds * 1000),
      '--status-every-ms',
      String(options.statusEverySeconds * 1000),
      '--history-max-events',
      String(options.historyMaxEvents),
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const fromSim = inbox(sim);
  const simStats = async (): Promise<SimStats> => {
    sim.send({ type: 'stats' });
    return fromSim<SimStats>('stats');
  };
  log(
    `seeding ${options.nodes} nodes, ${options.nodes} node Leases and ${options.pods} pods in the simulator`,
  );
  const ready = await fromSim<{ type: 'ready'; kubeconfigYaml: string; seededMs: number }>('ready');
  log(`seeded in ${(ready.seededMs / 1000).toFixed(1)} s; starting the relay`);

  const nodeOptions = process.env.BENCH_RELAY_NODE_OPTIONS ?? (await deploymentNodeOptions());
  log(`relay NODE_OPTIONS: ${nodeOptions}`);
  const relay = spawn(process.execPath, ['--expose-gc', join(dir, 'relay.mjs')], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: {
      ...process.env,
      NODE_OPTIONS: nodeOptions,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  });
  const fromRelay = inbox(relay);
  const start: StartMessage = {
    type: 'start',
    kubeconfigYaml: ready.kubeconfigYaml,
    warmupSeconds: options.warmupSeconds,
    seconds: options.seconds,
    nodeMonitorPeriod: options.nodeMonitorPeriod,
    digestEntryMaxBytes: options.digestEntryMaxBytes,
    quietDigestPeriod: options.quietDigestPeriodSeconds * 1000,
  };
  relay.send(start);
  const synced = await fromRelay<{ type: 'synced'; syncMs: number }>('synced');
  log(`relay synced and leading after ${(synced.syncMs / 1000).toFixed(1)} s; republishing its view`);
  const republished = await fromRelay<RepublishReport>('republished');
  log(
    `republished ${republished.events} events in ${(republished.ms / 1000).toFixed(1)} s; warming up ${options.warmupSeconds} s`,
  );
  await fromRelay('window-start');
  const simBefore = await simStats();
  log(`measuring for ${options.seconds} s`);
  const w = await fromRelay<WindowReport>('window-end');
  const simAfter = await simStats();
  log('ending every watch with 410 Gone: the relay relists');
  relay.send({ type: 'relist' });
  sim.send({ type: 'expire' });
  await fromSim('expired');
  const relisted = await fromRelay<RelistReport>('relisted');
  log(`relisted in ${(relisted.ms / 1000).toFixed(1)} s`);
  await new Promise((resolve) => relay.once('exit', resolve));
  sim.send({ type: 'stop' });
  await new Promise((resolve) => sim.once('exit', resolve));
  await rm(dir, { recursive: true, force: true });

  const minutes = w.windowMs / 60_000;
  const entries = w.calls.reduce((s, c) => s + c.entries, 0);
  const bytes = w.calls.reduce((s, c) => s + c.bytes, 0);
  const count = (type: string) =>
    w.calls.reduce((s, c) => s + c.detailTypes.filter((t) => t === type).length, 0);
  const digestEntries = count(HeartbeatDigestDetailType);
  const callsWithDigest = w.calls.filter((c) => c.detailTypes.includes(HeartbeatDigestDetailType)).length;
  const digests = Math.round(w.windowMs / options.nodeMonitorPeriod);
  const chunks256 = Math.max(1, Math.ceil(w.digestBytes / 262_144));
  const mib = (n: number) => +(n / 2 ** 20).toFixed(1);
  const simCpuMs =
    (simAfter.cpu.user + simAfter.cpu.system - simBefore.cpu.user - simBefore.cpu.system) / 1000;
  const cpuShare = w.cpuMicros / 1000 / w.windowMs;
  const report = {
    machine: {
      cpu: cpus()[0]?.model ?? 'unknown',
      loadAverage: loadavg().map((l) => +l.toFixed(2)),
      cores: cpus().length,
      memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
      node: process.version,
    },
    cluster: {
      nodes: options.nodes,
      pods: options.pods,
      leaseRenewalSeconds: options.renewEverySeconds,
      nodeStatusReportSeconds: options.statusEverySeconds,
      podChurnPerSecond: options.podChurn,
    },
    relayNodeOptions: nodeOptions,
    digestEntryMaxBytes: options.digestEntryMaxBytes,
    quietDigestPeriodSeconds: options.quietDigestPeriodSeconds,
    startup: {
      syncSeconds: +(w.syncMs / 1000).toFixed(1),
      cpuSecondsToSync: +(w.cpuMicrosToSync / 1e6).toFixed(1),
      rssMiBAtSync: mib(w.rssAtSync),
      peakRssMiBAtSync: w.peakRssAtSync === null ? null : mib(w.peakRssAtSync),
    },
    republish: {
      seconds: +(republished.ms / 1000).toFixed(1),
      events: republished.events,
      rssMiBMax: mib(republished.rssMax),
      leadershipChanges: republished.leadershipChanges,
    },
    health: w.health,
    relist: {
      seconds: +(relisted.ms / 1000).toFixed(1),
      cpuSeconds: +(relisted.cpuMicros / 1e6).toFixed(1),
      rssMiBMax: mib(relisted.rssMax),
      peakRssMiBSinceStart: relisted.peakRss === null ? null : mib(relisted.peakRss),
    },
    window: { seconds: +(w.windowMs / 1000).toFixed(1) },
    relay: {
      cpuPercentOfOneCore: +(cpuShare * 100).toFixed(2),
      rssMiB: { max: mib(Math.max(...w.rss)), mean: mib(w.rss.reduce((a, b) => a + b, 0) / w.rss.length) },
      heapUsedMiB: {
        max: mib(Math.max(...w.heapUsed)),
        afterGc: w.heapAfterGc === null ? null : mib(w.heapAfterGc),
      },
      heapTotalMiB: mib(w.heapTotal),
      externalMiB: mib(w.external),
      heapSpacesMiB: Object.fromEntries(Object.entries(w.heapSpaces).map(([k, v]) => [k, mib(v)])),
      rssAnonMiB: w.rssAnon === null ? null : mib(w.rssAnon),
      rssFileMiB: w.rssFile === null ? null : mib(w.rssFile),
      peakRssMiB: w.peakRss === null ? null : mib(w.peakRss),
      leaseRenewalsPerSecond: +((simAfter.renewals - simBefore.renewals) / (w.windowMs / 1000)).toFixed(1),
      nodeStatusPostsPerSecond: +(
        (simAfter.statusPosts - simBefore.statusPosts) /
        (w.windowMs / 1000)
      ).toFixed(1),
    },
    putEvents: {
      callsPerMinute: +(w.calls.length / minutes).toFixed(1),
      entriesPerMinute: +(entries / minutes).toFixed(1),
      bytesPerMinute: Math.round(bytes / minutes),
      entriesPerMinuteByDetailType: {
        [HeartbeatDigestDetailType]: +(digestEntries / minutes).toFixed(1),
        [NodeChangedDetailType]: +(count(NodeChangedDetailType) / minutes).toFixed(1),
        [PodChangedDetailType]: +(count(PodChangedDetailType) / minutes).toFixed(1),
      },
      digestBytes: w.digestBytes,
      digestNodes: w.digestNodes,
      entriesPerDigest: +(digestEntries / Math.max(1, digests)).toFixed(2),
      callsPerDigest: +(callsWithDigest / Math.max(1, digests)).toFixed(2),
      callsPerDigestPer256KB: +(callsWithDigest / Math.max(1, digests) / chunks256).toFixed(2),
    },
    simulator: {
      cpuPercentOfOneCore: +((simCpuMs / w.windowMs) * 100).toFixed(1),
      rssMiB: mib(simAfter.rss),
    },
    budget: {
      cpuUnder10Percent: cpuShare < 0.1,
      rssUnder256MiB: Math.max(...w.rss) < 256 * 2 ** 20,
      atMostOneCallPerDigestPer256KB: callsWithDigest <= digests * chunks256,
    },
  };

  if (options.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  const r = report;
  process.stdout.write(
    [
      `Relay benchmark: ${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}, load ${r.machine.loadAverage.join(' ')} at the end`,
      `Cluster: ${r.cluster.nodes} nodes (Lease every ${r.cluster.leaseRenewalSeconds} s, status every ${r.cluster.nodeStatusReportSeconds} s), ${r.cluster.pods} pods, pod churn ${r.cluster.podChurnPerSecond}/s`,
      `Relay NODE_OPTIONS (as deployed): ${r.relayNodeOptions}`,
      `Startup: first lists and leadership in ${r.startup.syncSeconds} s, ${r.startup.cpuSecondsToSync} CPU s, RSS ${r.startup.rssMiBAtSync} MiB (peak ${r.startup.peakRssMiBAtSync ?? '?'} MiB)`,
      `Republish (first term, paced): ${r.republish.events} events in ${r.republish.seconds} s, RSS up to ${r.republish.rssMiBMax} MiB; leadership changes until then ${r.republish.leadershipChanges}`,
      `Relist of all three resources (410 on every watch): ${r.relist.seconds} s, ${r.relist.cpuSeconds} CPU s, RSS up to ${r.relist.rssMiBMax} MiB; peak since start ${r.relist.peakRssMiBSinceStart ?? '?'} MiB`,
      `Steady state over ${r.window.seconds} s:`,
      `  relay CPU         ${r.relay.cpuPercentOfOneCore} % of one core (budget < 10 %)`,
      `  relay RSS         max ${r.relay.rssMiB.max} MiB, mean ${r.relay.rssMiB.mean} MiB (budget < 256 MiB); anonymous ${r.relay.rssAnonMiB ?? '?'} MiB, file-backed ${r.relay.rssFileMiB ?? '?'} MiB; peak since start ${r.relay.peakRssMiB ?? '?'} MiB`,
      `  relay heap        used max ${r.relay.heapUsedMiB.max} MiB, after GC ${r.relay.heapUsedMiB.afterGc ?? 'n/a'} MiB; reserved ${r.relay.heapTotalMiB} MiB; outside the heap ${r.relay.externalMiB} MiB`,
      `  observed          ${r.relay.leaseRenewalsPerSecond} lease renewals/s, ${r.relay.nodeStatusPostsPerSecond} node status posts/s`,
      `  PutEvents         ${r.putEvents.callsPerMinute} calls/min, ${r.putEvents.entriesPerMinute} entries/min, ${r.putEvents.bytesPerMinute} bytes/min`,
      `  entries/min       ${JSON.stringify(r.putEvents.entriesPerMinuteByDetailType)}`,
      `  digest            ${r.putEvents.digestBytes} bytes for ${r.putEvents.digestNodes} nodes; ${r.putEvents.entriesPerDigest} entries, ${r.putEvents.callsPerDigest} calls per digest = ${r.putEvents.callsPerDigestPer256KB} per digest per 256 KB (budget <= 1)`,
      `  simulator (child) ${r.simulator.cpuPercentOfOneCore} % of one core, ${r.simulator.rssMiB} MiB (not the relay's)`,
      `Since start: ${JSON.stringify(r.health)}`,
      `Budgets met: ${JSON.stringify(r.budget)}`,
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
