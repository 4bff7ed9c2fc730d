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
import { mkdir, readFile, rm } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { parseDocument } from 'yaml';
import { loadSettings } from '../../shared/settings.js';
import { stageTableNames } from '../../shared/stageTables.js';
import { createDynamoDbStores, type DynamoDbStores } from '../../shared/adapters/dynamodb/index.js';
import type { TableNames } from '../../shared/adapters/dynamodb/tables.js';
import {
  CONFIG_KEYS,
  formatConfigValue,
  loadConfigWithSources,
  VERSIONED_KEYS,
  type ConfigKey,
  type ConfigWithSources,
  type ControllerConfig,
} from '../../shared/config.js';
import { formatDuration } from '../../shared/duration.js';
import type { Millis } from '../../shared/domain/types.js';
import { ConfigError } from '../../shared/errors.js';
import {
  nodeLeaseDurationSeconds,
  nodeStatusReportFrequency,
  nodeStatusUpdateFrequency,
  type SeedCluster,
} from '../kubelet/index.js';
import { versionInfoOf } from '../apiserver/discovery.js';
import { demoCluster } from './demoCluster.js';
import { startDynamoDb } from './dynamo.js';
import { claimDataDir, Teardown } from './lifecycle.js';
import { startLocalRelay, type RelayControls } from './localRelay.js';
import {
  fileLogger,
  logChildLine,
  prefixedLogger,
  silentStackLogger,
  teeLogger,
  type StackLogger,
} from './log.js';
import { startOffline, type OfflineProcess } from './offline.js';
import { checkRealCluster } from './realCluster.js';
import { removeStackRecord, writeStackRecord } from './stackRecord.js';
import { AnyPorts, DefaultPorts, LocalHost, PortNames, reservePorts, type StackPorts } from './ports.js';
import {
  kubeletTimingsFor,
  startSimulator,
  type KubeletTimings,
  type Simulator,
  type SimulatorControls,
} from './simulator.js';

export type { KubeletTimings, RelayControls, SimulatorControls };

/** The repository root: where serverless.yml is and what serverless-offline runs in. */
export const ServiceDir = fileURLToPath(new URL('../../', import.meta.url));
/** The default data directory (gitignored), relative to the working directory. */
export const DefaultDataDir = '.nlc-data';
/** The serverless.yml stage the local stack runs: tables nlc-dev-*, bus nlc-dev (osls's default stage). */
export const LocalStage = 'dev';
/** The region the local SDK clients sign for: any will do, the local servers check no signature. */
export const LocalRegion = 'us-east-1';
/** The stage of the second, active controller (--managed-controller): tables nlc-managed-*, bus nlc-managed. */
export const ManagedStage = 'managed';

/**
 * A second controller beside the stack's own, standing in for a managed control plane's built-in one
 * (EKS's, which cannot be switched off): it writes to the cluster, and the stack's controller runs in
 * shadow mode (dryRun) and records what it would do and what the other one did, for `nlc agreement`.
 */
export interface ManagedControllerOptions {
  /**
   * Its settings by key, over upstream's defaults (as a managed control plane's, which no one tunes).
   * The cluster name and the emulated minor are the stack's unless given here.
   */
  readonly settings?: Readonly<Partial<Record<ConfigKey, unknown>>>;
}

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
   * The simulated kubelets' timings. By default upstream's (40 s lease renewed every 10 s, status
   * computed every 10 s and unchanged status posted every 5 min), the first two shortened to a quarter
   * of the grace period when that is shorter, so a short grace period in a test does not make healthy
   * nodes look silent. `nodeStatusReportFrequency` is `--node-status-report-frequency`.
   */
  readonly kubelet?: KubeletTimings;
  /** Where the parts log (besides the log file in the data directory). */
  readonly logger?: StackLogger;
  /** How long serverless-offline may take to bundle and start (180 s). */
  readonly functionsReadyTimeoutMs?: number;
  /** Aborting during the start stops what had started and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** A second, active controller (simulator only); the stack's own then runs in shadow mode. */
  readonly managedController?: ManagedControllerOptions;
  /**
   * More simulated clusters, by name (simulator only): each its own API simulator, kubelets (the demo
   * cluster) and relay, served by the same functions, bus and tables as the stack's cluster, the way
   * one stage serves many clusters (docs/deploy.md, "Many clusters from one stage").
   */
  readonly extraClusters?: readonly string[];
}

/** One more simulated cluster of the stack (`extraClusters`). */
export interface ExtraCluster {
  readonly name: string;
  readonly simulator: SimulatorControls;
  readonly relay: RelayControls;
  /** The admin kubeconfig of its simulator. */
  readonly kubeconfig: string;
}

/** The second controller's parts (--managed-controller): its own functions, relay, bus and tables. */
export interface ManagedController {
  readonly config: ControllerConfig;
  readonly stage: string;
  readonly tables: TableNames;
  readonly busName: string;
  readonly endpoints: { readonly eventBridge: string; readonly lambda: string; readonly relay: string };
  readonly relay: RelayControls;
  readonly functions: { readonly pid: number; running(): boolean };
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
  /** The second, active controller; undefined unless started with `managedController`. */
  readonly managed: ManagedController | undefined;
  /** The other simulated clusters the functions serve (`extraClusters`), in order. */
  readonly extraClusters: readonly ExtraCluster[];
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

/** The bus serverless.yml names for a stage (`custom.busName`, `${self:service}-${sls:stage}`). */
async function busNameFor(stage: string): Promise<string> {
  const doc = parseDocument(await readFile(join(ServiceDir, 'serverless.yml'), 'utf8'), {
    logLevel: 'silent',
  });
  const service = String(doc.get('service'));
  const template = String(doc.getIn(['custom', 'busName']));
  return template.replaceAll('${self:service}', service).replaceAll('${sls:stage}', stage);
}

/**
 * Every serverless.yml parameter the settings map to (their names are the config keys). A versioned
 * setting left at its default is not passed: serverless.yml leaves it empty and the emulated minor
 * decides it (a minor without podEvictionTimeout refuses any value).
 */
function settingParams(
  { config, settings }: Pick<ConfigWithSources, 'config' | 'settings'>,
  context: string | undefined,
): Record<string, string> {
  const params: Record<string, string> = {};
  const versioned: readonly ConfigKey[] = VERSIONED_KEYS;
  for (const key of Object.keys(CONFIG_KEYS) as ConfigKey[]) {
    // Not passed at all: osls refuses `--param="key="`, and serverless.yml's default is the empty value.
    if (versioned.includes(key) && settings[key].source === 'default') continue;
    params[key] = formatConfigValue(key, config[key]);
  }
  if (context !== undefined) params.kubeconfigContext = context;
  return params;
}

/**
 * The stack's settings beside a managed controller: its own, in shadow mode. A dryRun of false that
 * someone gave (flag or NLC_DRY_RUN) is refused rather than overridden: two controllers would write.
 */
function shadowSettings(
  loaded: ConfigWithSources,
  env: Readonly<Record<string, string | undefined>>,
  settings: Readonly<Partial<Record<ConfigKey, unknown>>>,
): ConfigWithSources {
  const { value, source } = loaded.settings.dryRun;
  if (!value && source !== 'default') {
    throw new ConfigError([
      {
        path: source === 'env' ? CONFIG_KEYS.dryRun.envVar : '--dry-run',
        message:
          "is false, but beside a managed controller this stack's controller is the shadow and never writes: drop it",
      },
    ]);
  }
  return loadSettings(env, { ...settings, dryRun: true });
}

/**
 * The managed controller's settings: upstream's defaults at the stack's emulated minor, for the stack's
 * cluster, with `given` over them; always active. Errors name `managedController.<key>`.
 *
 * @example
 * managedControllerSettings(config, { nodeMonitorGracePeriod: '40s' }).config.dryRun; // false
 */
export function managedControllerSettings(
  shadow: ControllerConfig,
  given: Readonly<Partial<Record<ConfigKey, unknown>>> = {},
): ConfigWithSources {
  const dryRun = given.dryRun;
  const saysFalse =
    dryRun === false || (typeof dryRun === 'string' && dryRun.trim().toLowerCase() === 'false');
  if (dryRun !== undefined && !saysFalse) {
    throw new ConfigError([
      {
        path: 'managedController.dryRun',
        message: "expected false or nothing: the managed controller is the cluster's own, and writes",
      },
    ]);
  }
  return loadConfigWithSources(
    {},
    {
      cluster: shadow.cluster,
      emulationVersion: formatConfigValue('emulationVersion', shadow.emulationVersion),
      ...given,
      dryRun: false,
    },
    { overridesPath: 'managedController' },
  );
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
  const env = options.env ?? {};
  const simulate = options.kubeconfig === undefined;
  const managedOptions = options.managedController;
  if (managedOptions !== undefined && !simulate) {
    throw new ConfigError([
      {
        path: '--managed-controller',
        message:
          'runs beside the simulator only: a real cluster has its own controller already (run this one beside it with --dry-run)',
      },
    ]);
  }
  // A real cluster is checked first: a bad kubeconfig or an unreachable server, before any bundling.
  const real =
    options.kubeconfig === undefined
      ? undefined
      : await checkRealCluster(options.kubeconfig, options.context);
  const given = loadSettings(env, options.settings ?? {});
  const loaded = managedOptions === undefined ? given : shadowSettings(given, env, options.settings ?? {});
  const { config } = loaded;
  const managedLoaded =
    managedOptions === undefined ? undefined : managedControllerSettings(config, managedOptions.settings);
  const extraNames = options.extraClusters ?? [];
  if (extraNames.length > 0 && !simulate) {
    throw new ConfigError([
      { path: 'extraClusters', message: 'simulated clusters only: a real cluster comes with its own relay' },
    ]);
  }
  for (const [i, name] of extraNames.entries()) {
    const problem = !/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(name)
      ? "expected 1 to 63 lowercase letters, digits or '-', starting and ending with a letter or digit"
      : name === config.cluster || extraNames.indexOf(name) !== i
        ? `${JSON.stringify(name)} is named twice (the stack's cluster is ${JSON.stringify(config.cluster)})`
        : undefined;
    if (problem !== undefined) throw new ConfigError([{ path: `extraClusters[${i}]`, message: problem }]);
  }
  const dataDir = resolve(options.dataDir ?? DefaultDataDir);
  await mkdir(join(dataDir, 'logs'), { recursive: true });
  const release = await claimDataDir(dataDir);
  const file = fileLogger(join(dataDir, 'logs', 'stack.log'));
  const logger = teeLogger(options.logger ?? silentStackLogger, file);
  const teardown = new Teardown();
  teardown.add('dataDirLock', release);
  teardown.add('logFile', () => file.close());

  try {
    const ports = await reservePorts(
      { ...DefaultPorts, ...options.ports },
      // Ports the child process is told as numbers (and dynalite's, which the child must know first).
      ['dynamodb', 'eventBridge', 'eventBridgePubSub', 'lambda'],
      simulate ? [] : ['apiServer'],
    );
    const managedPorts =
      managedLoaded === undefined
        ? undefined
        : await reservePorts(
            AnyPorts,
            ['eventBridge', 'eventBridgePubSub', 'lambda'],
            [],
            PortNames.map((name) => ports[name]),
          );
    const stage = LocalStage;
    const [tables, busName, managedTables, managedBusName] = await Promise.all([
      stageTableNames(stage),
      busNameFor(stage),
      stageTableNames(ManagedStage),
      busNameFor(ManagedStage),
    ]);
    const kubeconfigs = simulate
      ? {
          admin: join(dataDir, 'kubeconfig'),
          controller: join(dataDir, 'controller.kubeconfig'),
          relay: join(dataDir, 'relay.kubeconfig'),
        }
      : (() => {
          const given = resolve(options.kubeconfig ?? '');
          return { admin: given, controller: given, relay: given };
        })();
    // Each extra cluster's kubeconfigs, in a folder of its own; the functions read its controller's.
    const extraKubeconfigs = extraNames.map((name) => {
      const dir = join(dataDir, 'clusters', name);
      return {
        name,
        dir,
        admin: join(dir, 'kubeconfig'),
        controller: join(dir, 'controller.kubeconfig'),
        relay: join(dir, 'relay.kubeconfig'),
      };
    });
    for (const extra of extraKubeconfigs) await mkdir(extra.dir, { recursive: true });
    // The stack's cluster keeps the stage-wide credentials (NLC_KUBECONFIG); each extra one has its own.
    const clusterParams: Record<string, string> =
      extraNames.length === 0
        ? {}
        : {
            clusters: [config.cluster, ...extraNames].join(','),
            clusterConfig: JSON.stringify(
              Object.fromEntries(
                extraKubeconfigs.map((k) => [
                  k.name,
                  { credentials: { kind: 'kubeconfigFile', path: k.controller } },
                ]),
              ),
            ),
          };
    const workFolder = relative(ServiceDir, join(dataDir, 'esbuild'));
    logger.log('INFO', 'stack', 'starting', {
      dataDir,
      ephemeral: options.ephemeral === true,
      cluster: simulate ? 'simulator' : kubeconfigs.admin,
      ...(real !== undefined && { server: real.server, clusterVersion: real.version }),
      ports,
    });

    // The functions take longest (bundling): start them first, the rest meanwhile. They read the
    // kubeconfig and the tables only when first invoked, which is after the relay starts.
    const functionsStarted = performance.now();
    const startFunctions = (part: {
      readonly name: 'functions' | 'managedFunctions';
      readonly stage: string;
      readonly ports: StackPorts;
      readonly params: Record<string, string>;
      readonly workFolder: string;
      readonly logger: StackLogger;
    }): Promise<OfflineProcess> => {
      const starting = startOffline({
        serviceDir: ServiceDir,
        stage: part.stage,
        eventBridgePort: part.ports.eventBridge,
        eventBridgePubSubPort: part.ports.eventBridgePubSub,
        lambdaPort: part.ports.lambda,
        dynamodbEndpoint: `http://${LocalHost}:${ports.dynamodb}`,
        kubeconfig: kubeconfigs.controller,
        params: part.params,
        workFolder: isAbsolute(part.workFolder) ? part.workFolder : part.workFolder.split('\\').join('/'),
        onLine: (line, stream) => {
          logChildLine(part.logger, line, stream);
        },
        onExit: (code, signal) => {
          part.logger.log('ERROR', 'stack', 'the functions (serverless-offline) exited', { code, signal });
        },
        ...(options.functionsReadyTimeoutMs !== undefined && {
          readyTimeoutMs: options.functionsReadyTimeoutMs,
        }),
        ...(options.signal !== undefined && { signal: options.signal }),
      });
      // Settled below; until then a failure elsewhere must not leave it unhandled.
      starting.catch(() => undefined);
      teardown.add(part.name, async () => {
        await (await starting.catch(() => undefined))?.stop();
      });
      return starting;
    };
    const offlineStarting = startFunctions({
      name: 'functions',
      stage,
      ports,
      params: { ...settingParams(loaded, options.context), ...clusterParams },
      workFolder,
      logger,
    });
    const managedLogger = prefixedLogger(logger, 'managed:');
    const managedStarting =
      managedLoaded === undefined || managedPorts === undefined
        ? undefined
        : startFunctions({
            name: 'managedFunctions',
            stage: ManagedStage,
            ports: managedPorts,
            params: settingParams(managedLoaded, options.context),
            // Its own bundles: two serverless-esbuild runs must not write one folder.
            workFolder: relative(ServiceDir, join(dataDir, 'esbuild-managed')),
            logger: managedLogger,
          });

    const tablesPath = options.ephemeral === true ? undefined : join(dataDir, 'dynamodb');
    // The simulated cluster is new at every start (new uids, resourceVersions from 1): state the
    // controller kept about the previous one would be about objects that no longer exist, and its
    // stored resourceVersions would hide the new ones. So the simulator starts from empty tables; the
    // last run's stay on disk until then. A real cluster outlives the stack, and so do its tables.
    if (simulate && tablesPath !== undefined) await rm(tablesPath, { recursive: true, force: true });
    const dynamo = await startDynamoDb({
      port: ports.dynamodb,
      tables: managedLoaded === undefined ? [tables] : [tables, managedTables],
      ...(tablesPath !== undefined && { path: tablesPath }),
    });
    teardown.add('dynamodb', () => dynamo.close());
    options.signal?.throwIfAborted();
    logger.log('INFO', 'stack', 'DynamoDB-compatible server ready', {
      endpoint: dynamo.endpoint,
      tablesCreated: dynamo.created,
      persisted: options.ephemeral !== true,
    });

    let simulator: Simulator | undefined;
    if (simulate) {
      // Healthy kubelets must look healthy to both controllers: timings from the shorter grace period.
      const timings = kubeletTimingsFor(
        managedLoaded === undefined
          ? config
          : {
              ...config,
              nodeMonitorGracePeriod: Math.min(
                config.nodeMonitorGracePeriod,
                managedLoaded.config.nodeMonitorGracePeriod,
              ),
            },
        options.kubelet,
      );
      const sim = await startSimulator({
        port: ports.apiServer,
        kubeconfigs,
        cluster: options.cluster ?? demoCluster(),
        timings,
        // The simulated cluster runs the minor its controller emulates (the managed one's, when there
        // is one): `nlc agreement` reads it from /version.
        version: versionInfoOf((managedLoaded?.config ?? config).emulationVersion),
        logger,
      });
      simulator = sim;
      teardown.add('kubelets', () => {
        sim.stopKubelets();
      });
      teardown.add('apiServer', () => sim.close());
      logger.log('INFO', 'stack', 'Kubernetes API simulator ready', {
        url: sim.controls.api.url,
        kubeconfig: kubeconfigs.admin,
        nodes: sim.controls.zoneOf.size,
        kubelets: {
          leaseDuration: formatDuration(
            (timings.nodeLeaseDurationSeconds ?? nodeLeaseDurationSeconds) * 1000,
          ),
          statusUpdateFrequency: formatDuration(
            timings.nodeStatusUpdateFrequency ?? nodeStatusUpdateFrequency,
          ),
          statusReportFrequency: formatDuration(
            timings.nodeStatusReportFrequency ?? nodeStatusReportFrequency,
          ),
        },
      });
    }

    // The other clusters: the demo cluster again, each on an API simulator of its own.
    const extraSimulators: { name: string; sim: Simulator; admin: string; relayKubeconfig: string }[] = [];
    teardown.add('extraKubelets', () => {
      for (const { sim } of extraSimulators) sim.stopKubelets();
    });
    teardown.add('extraApiServers', async () => {
      await Promise.all(extraSimulators.map(({ sim }) => sim.close()));
    });
    for (const extra of extraKubeconfigs) {
      const sim = await startSimulator({
        port: 0,
        kubeconfigs: extra,
        cluster: demoCluster(),
        timings: kubeletTimingsFor(config, options.kubelet),
        version: versionInfoOf(config.emulationVersion),
        logger: prefixedLogger(logger, `${extra.name}:`),
      });
      extraSimulators.push({ name: extra.name, sim, admin: extra.admin, relayKubeconfig: extra.relay });
      logger.log('INFO', 'stack', 'Kubernetes API simulator ready', {
        cluster: extra.name,
        url: sim.controls.api.url,
        kubeconfig: extra.admin,
      });
    }

    options.signal?.throwIfAborted();
    const offline = await offlineStarting;
    const functionsMs = performance.now() - functionsStarted;
    logger.log('INFO', 'stack', 'functions ready (serverless-offline)', {
      pid: offline.pid,
      startupMs: Math.round(functionsMs),
    });

    const managedOffline = await managedStarting;
    if (managedOffline !== undefined) {
      logger.log('INFO', 'stack', 'managed controller functions ready (serverless-offline)', {
        pid: managedOffline.pid,
        stage: ManagedStage,
      });
    }

    options.signal?.throwIfAborted();
    const relay = await startLocalRelay({
      config,
      busName,
      eventBridgeEndpoint: `http://${LocalHost}:${ports.eventBridge}`,
      kubeconfig: kubeconfigs.relay,
      ...(options.context !== undefined && { context: options.context }),
      port: ports.relay,
      logger,
    });
    teardown.add('relay', () => relay.close());
    // Each extra cluster's relay publishes to the same bus, its events carrying its cluster's name.
    const extraClusters: ExtraCluster[] = [];
    const extraRelays: { close(): Promise<void> }[] = [];
    teardown.add('extraRelays', async () => {
      await Promise.all(extraRelays.map((r) => r.close()));
    });
    for (const extra of extraSimulators) {
      const extraRelay = await startLocalRelay({
        config: { ...config, cluster: extra.name },
        busName,
        eventBridgeEndpoint: `http://${LocalHost}:${ports.eventBridge}`,
        kubeconfig: extra.relayKubeconfig,
        port: 0,
        logger: prefixedLogger(logger, `${extra.name}:`),
      });
      extraRelays.push(extraRelay);
      extraClusters.push({
        name: extra.name,
        simulator: extra.sim.controls,
        relay: extraRelay.controls,
        kubeconfig: extra.admin,
      });
    }

    // The managed controller watches the cluster through a relay of its own, as a control plane's
    // controller has its own informers: one relay's outage (`r`) leaves the other controller's view.
    let managed: ManagedController | undefined;
    if (managedLoaded !== undefined && managedPorts !== undefined && managedOffline !== undefined) {
      const managedRelay = await startLocalRelay({
        config: managedLoaded.config,
        busName: managedBusName,
        eventBridgeEndpoint: `http://${LocalHost}:${managedPorts.eventBridge}`,
        kubeconfig: kubeconfigs.relay,
        port: 0,
        logger: managedLogger,
      });
      teardown.add('managedRelay', () => managedRelay.close());
      managed = {
        config: managedLoaded.config,
        stage: ManagedStage,
        tables: managedTables,
        busName: managedBusName,
        endpoints: {
          eventBridge: `http://${LocalHost}:${managedPorts.eventBridge}`,
          lambda: `http://${LocalHost}:${managedPorts.lambda}`,
          relay: managedRelay.url(),
        },
        relay: managedRelay.controls,
        functions: { pid: managedOffline.pid, running: () => managedOffline.running() },
      };
      logger.log('INFO', 'stack', 'managed controller ready', {
        stage: ManagedStage,
        dryRun: false,
        nodeMonitorGracePeriod: formatDuration(managedLoaded.config.nodeMonitorGracePeriod),
        emulationVersion: managedLoaded.config.emulationVersion,
      });
    }

    const stores = createDynamoDbStores({
      tables,
      endpoint: dynamo.endpoint,
      region: LocalRegion,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    teardown.add('stores', () => {
      stores.client.destroy();
    });

    // Should this process end without stop() (an uncaught error), take the functions' group with it.
    const killOnExit = (): void => {
      for (const pid of [offline.pid, managedOffline?.pid]) {
        if (pid === undefined) continue;
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    };
    process.once('exit', killOnExit);
    teardown.add('exitHook', () => {
      process.off('exit', killOnExit);
    });

    const api = simulator?.controls.api;
    const relayPort = Number(new URL(relay.url()).port);
    const endpoints = {
      dynamodb: dynamo.endpoint,
      eventBridge: `http://${LocalHost}:${ports.eventBridge}`,
      lambda: `http://${LocalHost}:${ports.lambda}`,
      relay: relay.url(),
      ...(api !== undefined && { apiServer: api.url }),
    };
    // Tells `nlc status` (and people) where this stack is; removed first thing at stop.
    teardown.add('stackRecord', () => removeStackRecord(dataDir));
    await writeStackRecord(dataDir, {
      pid: process.pid,
      startedAt: new Date().toISOString(),
      cluster: config.cluster,
      stage,
      region: LocalRegion,
      tables,
      endpoints,
      kubeconfig: kubeconfigs.admin,
      ...(managed !== undefined && {
        managed: { stage: managed.stage, tables: managed.tables, endpoints: managed.endpoints },
      }),
    });

    const totalMs = performance.now() - started;
    logger.log('INFO', 'stack', 'local stack ready', {
      startupMs: Math.round(totalMs),
      functionsStartupMs: Math.round(functionsMs),
      dynamodb: dynamo.endpoint,
      relay: relay.url(),
    });

    let resolveStopped: () => void = () => undefined;
    const stopped = new Promise<void>((res) => {
      resolveStopped = res;
    });
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> =>
      (stopping ??= (async () => {
        logger.log('INFO', 'stack', 'stopping');
        await teardown.run(logger);
        resolveStopped();
      })());

    const kubeConfig = (): KubeConfig => {
      if (api !== undefined) return api.kubeConfig();
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfigs.admin);
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
      endpoints,
      kubeconfig: kubeconfigs.admin,
      ...(options.context !== undefined && { context: options.context }),
      simulator: simulator?.controls,
      relay: relay.controls,
      functions: { pid: offline.pid, running: () => offline.running() },
      managed,
      extraClusters,
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
