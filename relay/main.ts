// The relay process: the container image's entry point and what `nlc relay` runs (runRelay).
//
//   npx tsx relay/main.ts --kubeconfig ~/.kube/config         # events printed to stdout (no bus set)
//   NLC_EVENT_BUS_NAME=nlc-prod NLC_CLUSTER=prod node relay/main.mjs   # in the cluster (infra/relay)
//
// Settings: relay/settings.ts (NLC_CLUSTER, NLC_NODE_MONITOR_PERIOD, NLC_NODE_MONITOR_GRACE_PERIOD,
// NLC_EVENT_BUS_NAME, NLC_EVENTBRIDGE_ENDPOINT, NLC_RELAY_PORT, NLC_RELAY_HOST (127.0.0.1 unless set:
// the endpoints are served beyond the machine only when asked), NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT,
// NLC_RELAY_WATCH_STALL_TIMEOUT, NLC_RELAY_DIGEST_ENTRY_MAX_BYTES, POD_NAME, POD_NAMESPACE). Cluster credentials, in order:
// --kubeconfig, the NLC_ cluster credential variables (shared/adapters/kubernetes/authConfig.ts), then
// client-node's default (KUBECONFIG, ~/.kube/config, or the in-cluster service account).
// Leader election runs when the relay is in a pod (POD_NAMESPACE set) or with --leader-elect, on the
// Lease `nlc-relay` in that namespace. SIGTERM or SIGINT: stop the informers, publish what is pending,
// release the Lease (the standby takes over at once), exit 0.
import { resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger } from '@aws-lambda-powertools/logger';
import { Command, InvalidArgumentError } from 'commander';
import { z } from 'zod';
import { RealScheduler } from '../shared/adapters/realScheduler.js';
import { createEventBridgeSink } from '../shared/adapters/eventbridge/eventSink.js';
import { loadDefaultKubeConfig, loadKubeConfig } from '../shared/adapters/kubernetes/auth.js';
import { loadClusterAuth } from '../shared/adapters/kubernetes/authConfig.js';
import { ConfigError } from '../shared/errors.js';
import { DigestEntryOverheadBytes } from '../shared/heartbeatDigest.js';
import type { EventSink } from '../shared/ports/eventSink.js';
import type { Scheduler } from '../shared/ports/scheduler.js';
import { startRelayHttpServer, type RelayHttpServer } from './http.js';
import type { RelayLogger } from './logger.js';
import { RelayMetrics } from './metrics.js';
import { createRelay, type Relay } from './relay.js';
import { loadRelaySettings, type RelaySettings } from './settings.js';
import { createStdoutSink } from './stdoutSink.js';

/** The leader-election Lease's name (in the relay's namespace). */
export const RelayLeaseName = 'nlc-relay';

export interface RunRelayOptions {
  /** The environment to read settings from (process.env by default). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** A kubeconfig file; wins over the environment's credentials. */
  readonly kubeconfig?: string;
  readonly context?: string;
  /** Overrides NLC_RELAY_PORT (0 picks a free port). */
  readonly port?: number;
  /** Overrides NLC_RELAY_HOST: the address of the HTTP endpoints (127.0.0.1 by default). */
  readonly host?: string;
  /** Leader election on/off; on by default in a pod (POD_NAMESPACE set). */
  readonly leaderElect?: boolean;
  /** The Lease's namespace; POD_NAMESPACE, else "default". */
  readonly leaseNamespace?: string;
  /** Where the stdout sink writes (process.stdout). */
  readonly stdout?: NodeJS.WritableStream;
  /** Logs; JSON lines through Powertools' Logger by default (to stderr when events go to stdout). */
  readonly logger?: RelayLogger;
  /** The system clock's scheduler by default. */
  readonly scheduler?: Scheduler;
  /** Instead of the bus or stdout (tests, the local stack). */
  readonly sink?: EventSink;
  /** How long the shutdown may spend publishing what is pending (5 s). */
  readonly flushTimeoutMs?: number;
}

export interface RunningRelay {
  readonly relay: Relay;
  readonly http: RelayHttpServer;
  readonly settings: RelaySettings;
  /** Graceful stop (idempotent): informers, pending events, the Lease, the HTTP server. */
  stop(): Promise<void>;
}

/** JSON log lines to a stream, in Powertools' shape: stdout belongs to the events in stdout mode. */
function streamLogger(out: NodeJS.WritableStream, service: string): RelayLogger {
  const write = (level: string) => (message: string, fields?: Readonly<Record<string, unknown>>) => {
    out.write(
      `${JSON.stringify({ level, message, timestamp: new Date().toISOString(), service, ...fields })}\n`,
    );
  };
  return { debug: () => undefined, info: write('INFO'), warn: write('WARN'), error: write('ERROR') };
}

function powertoolsLogger(): RelayLogger {
  const logger = new Logger({ serviceName: 'nlc-relay' });
  return {
    debug: (message, fields) => {
      logger.debug(message, { ...fields });
    },
    info: (message, fields) => {
      logger.info(message, { ...fields });
    },
    warn: (message, fields) => {
      logger.warn(message, { ...fields });
    },
    error: (message, fields) => {
      logger.error(message, { ...fields });
    },
  };
}

async function kubeConfigFor(options: RunRelayOptions, env: Readonly<Record<string, string | undefined>>) {
  if (options.kubeconfig !== undefined) {
    const { kubeConfig } = await loadKubeConfig({
      kind: 'kubeconfigFile',
      path: options.kubeconfig,
      ...(options.context !== undefined && { context: options.context }),
    });
    return kubeConfig;
  }
  const auth = loadClusterAuth(env);
  if (auth !== undefined) return (await loadKubeConfig(auth)).kubeConfig;
  // KUBECONFIG, ~/.kube/config, or the pod's service account.
  return loadDefaultKubeConfig(options.context);
}

/**
 * Starts the relay process: settings, cluster credentials, the sink (EventBridge when
 * NLC_EVENT_BUS_NAME is set, else stdout), leader election, the HTTP endpoints.
 *
 * @example
 * const running = await runRelay({ kubeconfig: '/tmp/nlc.kubeconfig', port: 0 });
 * // …
 * await running.stop();
 */
export async function runRelay(options: RunRelayOptions = {}): Promise<RunningRelay> {
  const env = options.env ?? process.env;
  const settings = loadRelaySettings(env, {
    ...(options.port !== undefined && { port: options.port }),
    ...(options.host !== undefined && { host: options.host }),
  });
  const stdout = options.stdout ?? process.stdout;
  const toStdout = options.sink === undefined && settings.eventBusName === undefined;
  const logger =
    options.logger ?? (toStdout ? streamLogger(process.stderr, 'nlc-relay') : powertoolsLogger());
  const kubeConfig = await kubeConfigFor(options, env);

  let sink: EventSink;
  if (options.sink !== undefined) sink = options.sink;
  else if (settings.eventBusName === undefined) sink = createStdoutSink(stdout);
  else {
    sink = createEventBridgeSink({
      busName: settings.eventBusName,
      ...(settings.eventBridgeEndpoint !== undefined && { endpoint: settings.eventBridgeEndpoint }),
      // A local bus checks no signature; without credentials in the environment, sign with dummies.
      ...(settings.eventBridgeEndpoint !== undefined &&
        env.AWS_ACCESS_KEY_ID === undefined && {
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          region: env.AWS_REGION ?? 'us-east-1',
        }),
    });
  }

  const leaderElect = options.leaderElect ?? settings.podNamespace !== undefined;
  const scheduler =
    options.scheduler ??
    new RealScheduler({
      onError: (error) => {
        logger.error('timer callback failed', {
          error: error instanceof Error ? error.message : String(error),
        });
      },
    });
  const metrics = new RelayMetrics({ defaultMetrics: options.scheduler === undefined });
  const relay = createRelay({
    kubeConfig,
    cluster: settings.cluster,
    sink,
    scheduler,
    nodeMonitorPeriod: settings.nodeMonitorPeriod,
    quietDigestPeriod: settings.quietDigestPeriod,
    leaseWatchStallTimeoutMs: settings.leaseWatchStallTimeout,
    watchStallTimeoutMs: settings.watchStallTimeout,
    digestPartMaxBytes: settings.digestEntryMaxBytes - DigestEntryOverheadBytes,
    relayId: settings.relayId,
    leaderElection: leaderElect
      ? { namespace: options.leaseNamespace ?? settings.podNamespace ?? 'default', name: RelayLeaseName }
      : false,
    logger,
    metrics,
  });
  const http = await startRelayHttpServer({
    relay,
    metrics,
    port: settings.port,
    host: settings.host,
  });
  logger.info('relay starting', {
    relayId: settings.relayId,
    cluster: settings.cluster,
    sink:
      options.sink !== undefined
        ? 'custom'
        : toStdout
          ? 'stdout'
          : `eventbridge:${settings.eventBusName ?? ''}`,
    leaderElection: leaderElect,
    http: http.url,
  });
  await relay.start();

  let stopping: Promise<void> | undefined;
  return {
    relay,
    http,
    settings,
    stop: () =>
      (stopping ??= (async () => {
        logger.info('relay stopping', { relayId: settings.relayId });
        await relay.stop(
          options.flushTimeoutMs === undefined ? {} : { flushTimeoutMs: options.flushTimeoutMs },
        );
        await http.close();
        if (scheduler instanceof RealScheduler) scheduler.close();
        logger.info('relay stopped', { relayId: settings.relayId });
      })()),
  };
}

const FlagsSchema = z.object({
  kubeconfig: z.string().min(1).optional(),
  context: z.string().min(1).optional(),
  port: z.number().int().min(0).max(65_535).optional(),
  host: z.string().min(1).optional(),
  leaderElect: z.boolean().optional(),
  leaseNamespace: z.string().min(1).optional(),
});

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new InvalidArgumentError('expected a port from 0 to 65535');
  return n;
}

/** The command line (the container's entry point and `npx tsx relay/main.ts`). Returns the exit code. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  const program = new Command()
    .name('nlc-relay')
    .description(
      'Watches Nodes, node Leases and Pods and publishes Node Changed, Pod Changed and Heartbeat Digest events.',
    )
    .option(
      '--kubeconfig <file>',
      'kubeconfig file (default: NLC_ cluster credentials, KUBECONFIG, ~/.kube/config, in-cluster)',
    )
    .option('--context <name>', 'kubeconfig context')
    .option(
      '--port <port>',
      'port of /healthz, /readyz and /metrics (default: NLC_RELAY_PORT or 8080)',
      parsePort,
    )
    .option(
      '--host <address>',
      'IP address of the HTTP endpoints (default: NLC_RELAY_HOST or 127.0.0.1; 0.0.0.0 for all interfaces)',
    )
    .option('--leader-elect', 'run leader election (default: when POD_NAMESPACE is set)')
    .option('--no-leader-elect', 'publish without leader election (a single replica)')
    .option(
      '--lease-namespace <namespace>',
      'namespace of the leader election Lease (default: POD_NAMESPACE or default)',
    )
    .exitOverride();
  try {
    program.parse(argv);
  } catch (error) {
    return (error as { exitCode?: number }).exitCode ?? 2;
  }
  // --leader-elect is defined before --no-leader-elect, so it has no default: undefined unless given.
  const flags = FlagsSchema.parse(program.opts());
  let running: RunningRelay;
  try {
    running = await runRelay({
      ...(flags.kubeconfig !== undefined && { kubeconfig: flags.kubeconfig }),
      ...(flags.context !== undefined && { context: flags.context }),
      ...(flags.port !== undefined && { port: flags.port }),
      ...(flags.host !== undefined && { host: flags.host }),
      ...(flags.leaderElect !== undefined && { leaderElect: flags.leaderElect }),
      ...(flags.leaseNamespace !== undefined && { leaseNamespace: flags.leaseNamespace }),
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return error instanceof ConfigError ? 2 : 1;
  }
  await new Promise<void>((resolve) => {
    const onSignal = () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      running.stop().then(resolve, resolve);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  return 0;
}

// Run when executed directly (tsx relay/main.ts, node relay/main.mjs), not when imported.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolvePath(process.argv[1])) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
