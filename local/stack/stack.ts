// `npm start` (issue #5 §1): the whole system on this machine, on loopback, with no AWS account:
//
//   kubelet fleet ──▶ Kubernetes API simulator ◀──https── functions (serverless-offline, child process)
//   (in process)        (https, in process)                   ▲      │  ▲
//                            │ watch                          │ rules│  │ Invoke (monitor → drainer)
//                            ▼                                │      ▼  │
//                  relay (in process) ──PutEvents──▶ EventBridge endpoint (serverless-offline plugin)
//                                                    dynalite (DynamoDB-compatible, in process) ◀── functions
//
// With a kubeconfig (a real cluster) there is no simulator and no kubelet: the relay and the functions
// use that cluster. The functions are exactly what deploys: serverless.yml's handlers, bundled by
// serverless-esbuild, routed by its EventBridge rules, with its schedules; the relay publishes through
// the real EventBridge client (relay/main.ts runRelay) to the local endpoint. docs/local.md has the rest.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { parseDocument } from 'yaml';
import { loadSettings } from '../../cli/settings.js';
import { stageTableNames } from '../../cli/stores.js';
import type { RunningRelay } from '../../relay/main.js';
import type { RelayStatus } from '../../relay/relay.js';
import { RelayEnv } from '../../relay/settings.js';
import { createDynamoDbStores, type DynamoDbStores } from '../../shared/adapters/dynamodb/index.js';
import type { TableNames } from '../../shared/adapters/dynamodb/tables.js';
import { RealScheduler } from '../../shared/adapters/realScheduler.js';
import {
  CONFIG_KEYS,
  formatConfigValue,
  type ConfigKey,
  type ControllerConfig,
} from '../../shared/config.js';
import type { Millis } from '../../shared/domain/types.js';
import { LocalStackStartError } from '../../shared/errors.js';
import { startApiServer, writeKubeconfig, type ApiServerHandle } from '../apiserver/index.js';
import {
  KubeletFleet,
  type KubeletFleetOptions,
  type KubeletState,
  type SeedCluster,
} from '../kubelet/index.js';
import { simulatorIdentities } from '../simulate/identities.js';
import { demoCluster } from './demoCluster.js';
import { startDynamoDb, type LocalDynamoDb } from './dynamo.js';
import {
  fileLogger,
  logChildLine,
  relayLoggerOf,
  silentStackLogger,
  teeLogger,
  type StackLogger,
} from './log.js';
import { startOffline } from './offline.js';
import { DefaultPorts, LocalHost, reservePorts, type StackPorts } from './ports.js';

/** The repository root: where serverless.yml is and what serverless-offline runs in. */
export const ServiceDir = fileURLToPath(new URL('../../', import.meta.url));
/** The default data directory (gitignored), relative to the working directory. */
export const DefaultDataDir = '.nlc-data';
/** The serverless.yml stage the local stack runs: tables nlc-dev-*, bus nlc-dev (osls's default stage). */
export const LocalStage = 'dev';

export type KubeletTimings = Pick<
  KubeletFleetOptions,
  'nodeLeaseDurationSeconds' | 'nodeStatusUpdateFrequency' | 'podStatusSyncPeriod' | 'podTerminationDelay'
>;

export interface LocalStackOptions {
  /** Logs, kubeconfigs, the functions' bundles and (unless ephemeral) the tables. `.nlc-data` by default. */
  readonly dataDir?: string;
  /** Tables in memory: nothing of them survives a stop. */
  readonly ephemeral?: boolean;
  /** Ports to use; DefaultPorts for the rest; 0 picks a free one. */
  readonly ports?: Partial<StackPorts>;
  /** Controller settings by key (`nodeMonitorGracePeriod: '20s'`), over `env` and upstream's defaults. */
  readonly settings?: Readonly<Partial<Record<ConfigKey, unknown>>>;
  /** NLC_ variables to read settings from (npm start passes process.env); none by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** A real cluster's kubeconfig: no simulator, no kubelets; the relay and the functions use it. */
  readonly kubeconfig?: string;
  readonly context?: string;
  /** The simulated cluster (the demo cluster by default). */
  readonly cluster?: SeedCluster;
  /**
   * The simulated kubelets' timings. By default upstream's (40 s lease renewed every 10 s, status every
   * 10 s), shortened to a quarter of the grace period when that is shorter, so a short grace period in
   * a test does not make healthy nodes look silent.
   */
  readonly kubelet?: KubeletTimings;
  /** Where the parts log (besides the log file in the data directory). */
  readonly logger?: StackLogger;
  /** How long serverless-offline may take to bundle and start (180 s). */
  readonly functionsReadyTimeoutMs?: number;
  /** Aborting during the start stops what had started and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** The simulated cluster's controls (the live view's keys). */
export interface SimulatorControls {
  readonly api: ApiServerHandle;
  readonly fleet: KubeletFleet;
  /** Node name → zone label, for every simulated node. */
  readonly zoneOf: ReadonlyMap<string, string>;
  readonly kubeletState: (node: string) => KubeletState | undefined;
  readonly stopKubelet: (node: string) => void;
  readonly startKubelet: (node: string) => void;
  /** Stops every kubelet of the zone. */
  readonly failZone: (zone: string) => void;
  /** Starts every stopped kubelet of the zone. */
  readonly restoreZone: (zone: string) => void;
}

export interface RelayControls {
  running(): boolean;
  status(): RelayStatus | undefined;
  /** Stops the relay process (graceful: pending events published). */
  stop(): Promise<void>;
  /** Starts a new relay process (a new relay identity, as after a restart). */
  start(): Promise<void>;
}

export interface LocalStack {
  readonly config: ControllerConfig;
  readonly stage: string;
  readonly tables: TableNames;
  readonly busName: string;
  readonly dataDir: string;
  readonly ports: StackPorts;
  readonly endpoints: {
    readonly dynamodb: string;
    readonly eventBridge: string;
    readonly lambda: string;
    readonly relay: string;
    readonly apiServer?: string;
  };
  /** A kubeconfig for people and tools: the simulator's admin one, or the one given. */
  readonly kubeconfig: string;
  readonly context?: string;
  /** The simulated cluster; undefined with a real cluster. */
  readonly simulator: SimulatorControls | undefined;
  readonly relay: RelayControls;
  readonly functions: { readonly pid: number; running(): boolean };
  /** Read-only use: the live view reads the controller's state through them. */
  readonly stores: DynamoDbStores;
  /** How long the start took, in all and waiting for the functions (bundling included). */
  readonly startup: { readonly totalMs: Millis; readonly functionsMs: Millis };
  /** A client-node KubeConfig for reading the cluster (admin on the simulator). */
  kubeConfig(): KubeConfig;
  /** Stops everything (idempotent) and resolves once no process or port of the stack is left. */
  stop(): Promise<void>;
  /** Resolves when the stack has stopped, whoever stopped it. */
  readonly stopped: Promise<void>;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The bus serverless.yml names for a stage (`custom.busName`, `${self:service}-${sls:stage}`). */
async function busNameFor(stage: string): Promise<string> {
  const doc = parseDocument(await readFile(join(ServiceDir, 'serverless.yml'), 'utf8'), {
    logLevel: 'silent',
  });
  const service = String(doc.get('service'));
  const template = String(doc.getIn(['custom', 'busName']));
  return template.replaceAll('${self:service}', service).replaceAll('${sls:stage}', stage);
}

/** The kubelets' timings: upstream's, or a quarter of a shorter grace period. */
export function kubeletTimingsFor(config: ControllerConfig, given: KubeletTimings = {}): KubeletTimings {
  const quarter = Math.floor(config.nodeMonitorGracePeriod / 4);
  const leaseSeconds = Math.max(1, Math.min(40, Math.floor(config.nodeMonitorGracePeriod / 1000)));
  return {
    nodeLeaseDurationSeconds: leaseSeconds,
    nodeStatusUpdateFrequency: Math.max(250, Math.min(10_000, quarter)),
    ...given,
  };
}

/**
 * Claims the data directory for this process (`stack.pid`): two stacks on one directory would share its
 * tables and bundles. A pid file whose process is gone is taken over.
 */
export async function claimDataDir(dataDir: string): Promise<() => Promise<void>> {
  const pidFile = join(dataDir, 'stack.pid');
  const held = await readFile(pidFile, 'utf8').then(
    (text) => Number(text.trim()),
    () => undefined,
  );
  if (held !== undefined && Number.isInteger(held) && held > 0 && held !== process.pid) {
    let alive = true;
    try {
      process.kill(held, 0);
    } catch (error) {
      alive = (error as NodeJS.ErrnoException).code === 'EPERM';
    }
    if (alive) {
      throw new LocalStackStartError(
        'the data directory',
        `${dataDir} is in use by another local stack (pid ${held}): stop it, or give this one another --data-dir`,
      );
    }
  }
  await writeFile(pidFile, `${process.pid}\n`);
  return () => rm(pidFile, { force: true });
}

/** Every serverless.yml parameter the settings map to (their names are the config keys). */
function settingParams(config: ControllerConfig, context: string | undefined): Record<string, string> {
  const params: Record<string, string> = {};
  for (const key of Object.keys(CONFIG_KEYS) as ConfigKey[])
    params[key] = formatConfigValue(key, config[key]);
  if (context !== undefined) params.kubeconfigContext = context;
  return params;
}

/**
 * The order parts stop in, whatever order they started in: nothing new enters (the live view's reads, the
 * relay), the kubelets stop, the functions finish with the servers they use still up, then the servers.
 */
const StopOrder = [
  'stores',
  'relay',
  'kubelets',
  'functions',
  'apiServer',
  'dynamodb',
  'exitHook',
  'logFile',
  'dataDirLock',
] as const;
type Part = (typeof StopOrder)[number];

/** What to stop, by part; stopped in StopOrder, each once, a failure logged and the rest stopped anyway. */
class Teardown {
  private readonly parts = new Map<Part, () => Promise<void> | void>();

  add(part: Part, stop: () => Promise<void> | void): void {
    this.parts.set(part, stop);
  }

  async run(logger: StackLogger): Promise<void> {
    for (const part of StopOrder) {
      const stop = this.parts.get(part);
      if (stop === undefined) continue;
      this.parts.delete(part);
      const began = performance.now();
      try {
        await stop();
        logger.log('DEBUG', 'stack', 'part stopped', { part, ms: Math.round(performance.now() - began) });
      } catch (error) {
        logger.log('WARN', 'stack', 'stopping a part failed', {
          part,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
  }
}

/**
 * Starts the local stack and resolves once every part is up (the relay started; its first list and the
 * functions' first invocations follow). Throws PortInUseError, ConfigError or LocalStackStartError, with
 * whatever had started stopped again.
 *
 * @example
 * const stack = await startLocalStack({ ephemeral: true, ports: { dynamodb: 0 } });
 * stack.simulator?.stopKubelet('zone-a-1');
 * await stack.stop();
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const started = performance.now();
  const { config } = loadSettings(options.env ?? {}, options.settings ?? {});
  const dataDir = resolve(options.dataDir ?? DefaultDataDir);
  await mkdir(join(dataDir, 'logs'), { recursive: true });
  const release = await claimDataDir(dataDir);
  const file = fileLogger(join(dataDir, 'logs', 'stack.log'));
  const logger = teeLogger(options.logger ?? silentStackLogger, file);
  const teardown = new Teardown();
  teardown.add('dataDirLock', release);
  teardown.add('logFile', () => file.close());
  const simulate = options.kubeconfig === undefined;

  try {
    const ports = await reservePorts(
      { ...DefaultPorts, ...options.ports },
      // Ports the child process is told as numbers (and dynalite's, which the child must know first).
      ['dynamodb', 'eventBridge', 'eventBridgePubSub', 'lambda'],
      simulate ? [] : ['apiServer'],
    );
    const stage = LocalStage;
    const [tables, busName] = await Promise.all([stageTableNames(stage), busNameFor(stage)]);
    const functionsKubeconfig = simulate
      ? join(dataDir, 'controller.kubeconfig')
      : resolve(options.kubeconfig ?? '');
    const relayKubeconfig = simulate ? join(dataDir, 'relay.kubeconfig') : functionsKubeconfig;
    const adminKubeconfig = simulate ? join(dataDir, 'kubeconfig') : functionsKubeconfig;
    const workFolder = relative(ServiceDir, join(dataDir, 'esbuild'));
    logger.log('INFO', 'stack', 'starting', {
      dataDir,
      ephemeral: options.ephemeral === true,
      cluster: simulate ? 'simulator' : functionsKubeconfig,
      ports,
    });

    // The functions take longest (bundling): start them first, the rest meanwhile. They read the
    // kubeconfig and the tables only when first invoked, which is after the relay starts.
    const functionsStarted = performance.now();
    const offlineStarting = startOffline({
      serviceDir: ServiceDir,
      eventBridgePort: ports.eventBridge,
      eventBridgePubSubPort: ports.eventBridgePubSub,
      lambdaPort: ports.lambda,
      dynamodbEndpoint: `http://${LocalHost}:${ports.dynamodb}`,
      kubeconfig: functionsKubeconfig,
      params: settingParams(config, options.context),
      workFolder: isAbsolute(workFolder) ? workFolder : workFolder.split('\\').join('/'),
      onLine: (line, stream) => {
        logChildLine(logger, line, stream);
      },
      onExit: (code, signal) => {
        logger.log('ERROR', 'stack', 'the functions (serverless-offline) exited', { code, signal });
      },
      ...(options.functionsReadyTimeoutMs !== undefined && {
        readyTimeoutMs: options.functionsReadyTimeoutMs,
      }),
      ...(options.signal !== undefined && { signal: options.signal }),
    });
    // Settled below; until then a failure elsewhere must not leave it unhandled.
    offlineStarting.catch(() => undefined);
    teardown.add('functions', async () => {
      await (await offlineStarting.catch(() => undefined))?.stop();
    });

    const tablesPath = options.ephemeral === true ? undefined : join(dataDir, 'dynamodb');
    // The simulated cluster is new at every start (new uids, resourceVersions from 1): state the
    // controller kept about the previous one would be about objects that no longer exist, and its
    // stored resourceVersions would hide the new ones. So the simulator starts from empty tables; the
    // last run's stay on disk until then. A real cluster outlives the stack, and so do its tables.
    if (simulate && tablesPath !== undefined) await rm(tablesPath, { recursive: true, force: true });
    const dynamo: LocalDynamoDb = await startDynamoDb({
      port: ports.dynamodb,
      tables,
      ...(tablesPath !== undefined && { path: tablesPath }),
    });
    teardown.add('dynamodb', () => dynamo.close());
    options.signal?.throwIfAborted();
    logger.log('INFO', 'stack', 'DynamoDB-compatible server ready', {
      endpoint: dynamo.endpoint,
      tablesCreated: dynamo.created,
      persisted: options.ephemeral !== true,
    });

    let simulator: SimulatorControls | undefined;
    let api: ApiServerHandle | undefined;
    if (simulate) {
      const identities = await simulatorIdentities();
      const controller = { ...identities.controller, token: randomBytes(24).toString('base64url') };
      const relayIdentity = { ...identities.relay, token: randomBytes(24).toString('base64url') };
      api = await startApiServer({ port: ports.apiServer, identities: [controller, relayIdentity] });
      const server = api;
      teardown.add('apiServer', () => server.close());
      await api.writeKubeconfig(adminKubeconfig);
      const connection = { server: api.url, ...(api.caPem !== undefined && { caPem: api.caPem }) };
      await writeKubeconfig(functionsKubeconfig, { ...connection, token: controller.token });
      await writeKubeconfig(relayKubeconfig, { ...connection, token: relayIdentity.token });
      const cluster = startSimulatedCluster(
        api,
        options.cluster ?? demoCluster(),
        kubeletTimingsFor(config, options.kubelet),
        logger,
      );
      simulator = cluster.controls;
      teardown.add('kubelets', () => {
        cluster.close();
      });
      logger.log('INFO', 'stack', 'Kubernetes API simulator ready', {
        url: api.url,
        kubeconfig: adminKubeconfig,
        nodes: cluster.controls.zoneOf.size,
      });
    }

    options.signal?.throwIfAborted();
    const offline = await offlineStarting;
    const functionsMs = performance.now() - functionsStarted;
    logger.log('INFO', 'stack', 'functions ready (serverless-offline)', {
      pid: offline.pid,
      startupMs: Math.round(functionsMs),
    });

    const relayEnv: Env = {
      [CONFIG_KEYS.cluster.envVar]: config.cluster,
      [CONFIG_KEYS.nodeMonitorPeriod.envVar]: formatConfigValue(
        'nodeMonitorPeriod',
        config.nodeMonitorPeriod,
      ),
      [RelayEnv.eventBusName]: busName,
      [RelayEnv.eventBridgeEndpoint]: `http://${LocalHost}:${ports.eventBridge}`,
      AWS_REGION: 'us-east-1',
    };
    const { runRelay } = await import('../../relay/main.js');
    let relayPort = ports.relay;
    let running: RunningRelay | undefined;
    let relayTransition: Promise<void> = Promise.resolve();
    const startRelay = async (): Promise<void> => {
      running = await runRelay({
        env: relayEnv,
        kubeconfig: relayKubeconfig,
        ...(options.context !== undefined && { context: options.context }),
        port: relayPort,
        host: LocalHost,
        leaderElect: false,
        logger: relayLoggerOf(logger),
        flushTimeoutMs: 2_000,
      });
      // A restart binds the same port again.
      relayPort = Number(new URL(running.http.url).port);
    };
    const stopRelay = async (): Promise<void> => {
      const current = running;
      running = undefined;
      await current?.stop();
    };
    options.signal?.throwIfAborted();
    await startRelay();
    teardown.add('relay', () => stopRelay());
    const relay: RelayControls = {
      running: () => running !== undefined,
      status: () => running?.relay.status(),
      stop: () => (relayTransition = relayTransition.then(stopRelay, stopRelay)),
      start: () =>
        (relayTransition = relayTransition.then(async () => {
          if (running === undefined) await startRelay();
        })),
    };

    const stores = createDynamoDbStores({
      tables,
      endpoint: dynamo.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    teardown.add('stores', () => {
      stores.client.destroy();
    });

    // Should this process end without stop() (an uncaught error), take the functions' group with it.
    const killOnExit = (): void => {
      try {
        process.kill(-offline.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    process.once('exit', killOnExit);
    teardown.add('exitHook', () => {
      process.off('exit', killOnExit);
    });

    const totalMs = performance.now() - started;
    logger.log('INFO', 'stack', 'local stack ready', {
      startupMs: Math.round(totalMs),
      functionsStartupMs: Math.round(functionsMs),
      dynamodb: dynamo.endpoint,
      relay: running?.http.url,
    });

    let resolveStopped: () => void = () => undefined;
    const stopped = new Promise<void>((res) => {
      resolveStopped = res;
    });
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> =>
      (stopping ??= (async () => {
        logger.log('INFO', 'stack', 'stopping');
        await relayTransition.catch(() => undefined);
        // Relay first (no new events), kubelets, the functions' process group, then the servers.
        await teardown.run(logger);
        resolveStopped();
      })());

    const kubeConfig = (): KubeConfig => {
      if (api !== undefined) return api.kubeConfig();
      const kc = new KubeConfig();
      kc.loadFromFile(adminKubeconfig);
      if (options.context !== undefined) kc.setCurrentContext(options.context);
      return kc;
    };

    return {
      config,
      stage,
      tables,
      busName,
      dataDir,
      ports: {
        ...ports,
        relay: relayPort,
        ...(api !== undefined && { apiServer: Number(new URL(api.url).port) }),
      },
      endpoints: {
        dynamodb: dynamo.endpoint,
        eventBridge: `http://${LocalHost}:${ports.eventBridge}`,
        lambda: `http://${LocalHost}:${ports.lambda}`,
        relay: `http://${LocalHost}:${relayPort}`,
        ...(api !== undefined && { apiServer: api.url }),
      },
      kubeconfig: adminKubeconfig,
      ...(options.context !== undefined && { context: options.context }),
      simulator,
      relay,
      functions: { pid: offline.pid, running: () => offline.running() },
      stores,
      startup: { totalMs, functionsMs },
      kubeConfig,
      stop,
      stopped,
    };
  } catch (error) {
    logger.log('ERROR', 'stack', 'start failed', {
      error: error instanceof Error ? error.message : String(error),
    });
    await teardown.run(logger);
    throw error;
  }
}

/** Seeds the simulated cluster and starts its kubelets on the system clock. */
function startSimulatedCluster(
  api: ApiServerHandle,
  cluster: SeedCluster,
  timings: KubeletTimings,
  logger: StackLogger,
): { readonly controls: SimulatorControls; close(): void } {
  const scheduler = new RealScheduler({
    onError: (error) => {
      logger.log('WARN', 'kubelets', 'kubelet timer failed', {
        error: error instanceof Error ? error.message : String(error),
      });
    },
  });
  const fleet = new KubeletFleet({
    store: api.store,
    scheduler,
    ...timings,
    onApiError: (error, where) => {
      logger.log('DEBUG', 'kubelets', 'kubelet API call failed', { ...where, error: error.message });
    },
  });
  for (const namespace of new Set((cluster.pods ?? []).map((p) => p.namespace ?? 'default'))) {
    try {
      api.store.namespaces.get(namespace);
    } catch {
      api.store.namespaces.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    }
  }
  fleet.seed(cluster);
  const zoneOf = new Map(cluster.nodes.map((n) => [n.name, n.zone ?? '']));
  const nodesIn = (zone: string): string[] => [...zoneOf].filter(([, z]) => z === zone).map(([name]) => name);
  const state = (node: string): KubeletState | undefined => fleet.kubelet(node)?.state;
  const controls: SimulatorControls = {
    api,
    fleet,
    zoneOf,
    kubeletState: state,
    stopKubelet: (node) => {
      if (state(node) === 'running') fleet.stopKubelet(node);
      logger.log('INFO', 'kubelets', 'kubelet stopped', { node });
    },
    startKubelet: (node) => {
      if (state(node) === 'stopped') fleet.startKubelet(node);
      logger.log('INFO', 'kubelets', 'kubelet started', { node });
    },
    failZone: (zone) => {
      for (const node of nodesIn(zone)) if (state(node) === 'running') fleet.stopKubelet(node);
      logger.log('INFO', 'kubelets', 'zone failed: every kubelet stopped', { zone });
    },
    restoreZone: (zone) => {
      for (const node of nodesIn(zone)) if (state(node) === 'stopped') fleet.startKubelet(node);
      logger.log('INFO', 'kubelets', 'zone restored: every kubelet started', { zone });
    },
  };
  return {
    controls,
    close: () => {
      fleet.close();
      scheduler.close();
    },
  };
}
