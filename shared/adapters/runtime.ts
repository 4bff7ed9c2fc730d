// The wiring every function shares: settings, the DynamoDB stores, the cluster port, the Observer and the
// drainer trigger, built from the environment: the settings of every served cluster and the shared
// clients once per cold start, each cluster's credentials and Kubernetes client at its first use
// (module scope: clients and config only, docs/contributing.md#module-scope). The local stack builds the same Runtime with endpoint overrides
// (NLC_DYNAMODB_ENDPOINT for its DynamoDB-compatible server, NLC_LAMBDA_ENDPOINT for serverless-offline,
// NLC_KUBECONFIG for the API simulator's kubeconfig file).
//
// Environment (serverless.yml sets these; docs/deploy.md):
//   NLC_* controller settings          shared/config.ts
//   NLC_NODES_TABLE, NLC_ZONES_TABLE, NLC_EVICTION_QUEUE_TABLE, NLC_POD_EVICTIONS_TABLE, NLC_DECISIONS_TABLE
//   NLC_DYNAMODB_ENDPOINT              optional: a DynamoDB-compatible server (local stack, tests)
//   NLC_EVICTION_DRAINER_FUNCTION      optional: the drainer the monitor invokes after a pass
//   NLC_LAMBDA_ENDPOINT                optional: where that invoke goes (serverless-offline's lambda port)
//   cluster credentials                shared/adapters/kubernetes/authConfig.ts (NLC_KUBECONFIG, …)
//   NLC_CLUSTERS                       optional: several served clusters, each with its own settings and
//                                      credentials (shared/adapters/clusters.ts)
//   AWS_REGION                         set by Lambda; required unless every AWS endpoint is overridden
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { loadConfig, type ControllerConfig } from '../config.js';
import type { Millis } from '../domain/types.js';
import { ConfigError, DrainerTriggerError, type ConfigIssue } from '../errors.js';
import { powertoolsObserver } from '../observability.js';
import type { TriggerDrainer } from '../app/drainer.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Clock } from '../ports/clock.js';
import type { Observer } from '../ports/observer.js';
import { systemClock } from './clock.js';
import {
  createDynamoDbStores,
  type DynamoDbStores,
  type StoreSettings,
  type TableNames,
} from './dynamodb/index.js';
import { loadKubeConfig, type LoadKubeConfigDeps } from './kubernetes/auth.js';
import { ownedEnvVars as clusterAuthEnvVars } from './kubernetes/authConfig.js';
import { ClustersEnv, loadServedClusters, type ServedCluster } from './clusters.js';
import { createKubernetesCluster } from './kubernetes/cluster.js';

/** The environment variables the wiring reads (besides the settings and the cluster credentials). */
export const RuntimeEnv = {
  nodesTable: 'NLC_NODES_TABLE',
  zonesTable: 'NLC_ZONES_TABLE',
  evictionQueueTable: 'NLC_EVICTION_QUEUE_TABLE',
  podEvictionsTable: 'NLC_POD_EVICTIONS_TABLE',
  decisionsTable: 'NLC_DECISIONS_TABLE',
  dynamodbEndpoint: 'NLC_DYNAMODB_ENDPOINT',
  lambdaEndpoint: 'NLC_LAMBDA_ENDPOINT',
  drainerFunction: 'NLC_EVICTION_DRAINER_FUNCTION',
  clusters: ClustersEnv,
} as const;

/**
 * Every NLC_ variable that is not a controller setting: the wiring's and the cluster credentials'.
 * loadConfig's `allowEnv`, so the settings do not report them as unknown.
 */
export const ownedEnvVars: ReadonlySet<string> = new Set([
  ...Object.values(RuntimeEnv),
  ...clusterAuthEnvVars,
]);

/** Timeout of each Kubernetes API attempt (resilientHttp.ts retries 429/5xx/timeouts around it). */
export const KubernetesRequestTimeout: Millis = 10_000;

/** What the wiring reads from the environment, validated. */
export interface RuntimeSettings {
  readonly tables: TableNames;
  readonly region: string | undefined;
  readonly dynamodbEndpoint: string | undefined;
  readonly lambdaEndpoint: string | undefined;
  readonly drainerFunction: string | undefined;
  /** The served clusters by name: NLC_CLUSTER alone, or NLC_CLUSTERS' (each its settings and credentials). */
  readonly clusters: ReadonlyMap<string, ServedCluster>;
  /** Credentials for local endpoints when the environment has none (a local server ignores them). */
  readonly localCredentials: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function endpoint(env: Env, name: string, issues: ConfigIssue[]): string | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    issues.push({
      path: name,
      message: `expected an http(s) URL such as "http://127.0.0.1:8000", got ${JSON.stringify(value)}`,
    });
    return undefined;
  }
  return value;
}

/**
 * Reads and checks the wiring's environment. Throws one ConfigError naming every bad or missing
 * variable (the settings' and the cluster credentials' problems included).
 *
 * @example
 * loadRuntimeSettings(process.env).tables.nodes // 'nlc-prod-nodes'
 */
export function loadRuntimeSettings(env: Env): { config: ControllerConfig; settings: RuntimeSettings } {
  const issues: ConfigIssue[] = [];
  let config: ControllerConfig | undefined;
  try {
    config = loadConfig(env, {}, { allowEnv: ownedEnvVars });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
  }
  const table = (name: string): string => {
    const value = read(env, name);
    if (value === undefined) issues.push({ path: name, message: 'required: the DynamoDB table name' });
    else if (!/^[a-zA-Z0-9_.-]{3,255}$/.test(value)) {
      issues.push({
        path: name,
        message: `expected a DynamoDB table name (3-255 of a-z, A-Z, 0-9, "_", "-", "."), got ${JSON.stringify(value)}`,
      });
    }
    return value ?? '';
  };
  const tables: TableNames = {
    nodes: table(RuntimeEnv.nodesTable),
    zones: table(RuntimeEnv.zonesTable),
    evictionQueue: table(RuntimeEnv.evictionQueueTable),
    podEvictions: table(RuntimeEnv.podEvictionsTable),
    decisions: table(RuntimeEnv.decisionsTable),
  };
  const dynamodbEndpoint = endpoint(env, RuntimeEnv.dynamodbEndpoint, issues);
  const lambdaEndpoint = endpoint(env, RuntimeEnv.lambdaEndpoint, issues);
  const drainerFunction = read(env, RuntimeEnv.drainerFunction);
  if (lambdaEndpoint !== undefined && drainerFunction === undefined) {
    issues.push({ path: RuntimeEnv.lambdaEndpoint, message: `only used with ${RuntimeEnv.drainerFunction}` });
  }
  const region = read(env, 'AWS_REGION') ?? read(env, 'AWS_DEFAULT_REGION');
  const needsRegion =
    dynamodbEndpoint === undefined || (drainerFunction !== undefined && lambdaEndpoint === undefined);
  if (region === undefined && needsRegion) {
    issues.push({
      path: 'AWS_REGION',
      message: 'required: the region of the DynamoDB tables (Lambda sets it)',
    });
  }
  let clusters: ReadonlyMap<string, ServedCluster> | undefined;
  try {
    clusters = loadServedClusters(env, config, ownedEnvVars);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // A bad stage-wide setting is already reported above: each cluster's settings read it too.
    const known = new Set(issues.map((i) => `${i.path}\0${i.message}`));
    issues.push(...error.issues.filter((i) => !known.has(`${i.path}\0${i.message}`)));
  }
  if (issues.length > 0 || config === undefined || clusters === undefined) throw new ConfigError(issues);
  const hasCredentials =
    read(env, 'AWS_ACCESS_KEY_ID') !== undefined || read(env, 'AWS_PROFILE') !== undefined;
  return {
    config,
    settings: {
      tables,
      region,
      dynamodbEndpoint,
      lambdaEndpoint,
      drainerFunction,
      clusters,
      localCredentials: !hasCredentials && (dynamodbEndpoint !== undefined || lambdaEndpoint !== undefined),
    },
  };
}

/** Everything a function needs for one served cluster, built at the cluster's first event per container. */
export interface Runtime {
  /** The cluster's effective settings (config.cluster is its name). */
  readonly config: ControllerConfig;
  /** The cluster this runtime serves (config.cluster): events for another one are rejected. */
  readonly clusterName: string;
  /** The function's name in the Decisions trail and logs (`monitor`, `drainer`, …). */
  readonly source: string;
  readonly stores: DynamoDbStores;
  readonly cluster: ClusterPort;
  readonly observer: Observer;
  readonly clock: Clock;
  /** Present when NLC_EVICTION_DRAINER_FUNCTION is set (the monitor's environment). */
  readonly triggerDrainer?: TriggerDrainer;
}

/** The runtimes of every served cluster of one container. */
export interface Runtimes {
  /** The served clusters' names (one, or NLC_CLUSTERS' in its order). */
  readonly clusters: readonly string[];
  /**
   * The runtime of a served cluster, built at its first use and kept (its credentials resolved then);
   * a failed build is not kept, so the next invocation tries again (credentials held in AWS may be
   * briefly unavailable). Undefined for a cluster the deployment does not serve: nothing was read.
   */
  runtime(cluster: string): Promise<Runtime> | undefined;
}

export interface LoadRuntimeOptions {
  readonly source: string;
  /** Wall clock for the stores' stamps and the cluster adapter's event times. Default: the system clock. */
  readonly clock?: Clock;
  /** Default: the Powertools-backed observer (shared/observability.ts). */
  readonly observer?: Observer;
  /** Clients for kubeconfig sources held in AWS, and an abort signal (tests inject mocks). */
  readonly kube?: LoadKubeConfigDeps;
  /** A Lambda client for the drainer trigger (tests inject one); else one is built from the settings. */
  readonly lambda?: LambdaClient;
  readonly storeSettings?: Partial<StoreSettings>;
}

const LocalCredentials = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/**
 * The runtimes of every served cluster from the environment. Throws ConfigError naming every bad
 * variable (each cluster's settings and credentials included) before any I/O. The stores and the
 * Lambda client are shared by the clusters (every key starts with the cluster's name); each cluster has
 * its own settings and its own Kubernetes client.
 *
 * @example
 * let runtimes: Runtimes | undefined; // module scope: once per cold start
 * const rt = await (runtimes ??= createRuntimes(process.env, { source: 'monitor' })).runtime('prod');
 */
export function createRuntimes(env: Env, options: LoadRuntimeOptions): Runtimes {
  const { settings } = loadRuntimeSettings(env);
  const clock = options.clock ?? systemClock;
  const observer = options.observer ?? powertoolsObserver;
  const credentials = settings.localCredentials ? LocalCredentials : undefined;
  const region = settings.region ?? 'us-east-1';
  const stores = createDynamoDbStores({
    tables: settings.tables,
    region,
    clock,
    ...(settings.dynamodbEndpoint !== undefined && { endpoint: settings.dynamodbEndpoint }),
    ...(credentials !== undefined && { credentials }),
    ...(options.storeSettings !== undefined && { settings: options.storeSettings }),
  });
  const functionName = settings.drainerFunction;
  let triggerDrainer: TriggerDrainer | undefined;
  if (functionName !== undefined) {
    const lambda =
      options.lambda ??
      new LambdaClient({
        region,
        ...(settings.lambdaEndpoint !== undefined && { endpoint: settings.lambdaEndpoint }),
        ...(credentials !== undefined && { credentials }),
      });
    triggerDrainer = async (invocation) => {
      try {
        const out = await lambda.send(
          new InvokeCommand({
            FunctionName: functionName,
            InvocationType: 'Event',
            Payload: new TextEncoder().encode(JSON.stringify(invocation)),
          }),
        );
        // An accepted asynchronous invoke answers 202.
        if (out.StatusCode !== undefined && out.StatusCode !== 202) {
          throw new DrainerTriggerError(functionName, `unexpected status ${out.StatusCode}`);
        }
      } catch (error) {
        if (error instanceof DrainerTriggerError) throw error;
        const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        throw new DrainerTriggerError(functionName, detail, { cause: error });
      }
    };
  }
  const build = async (served: ServedCluster): Promise<Runtime> => {
    const { kubeConfig } = await loadKubeConfig(served.clusterAuth, { clock, ...options.kube });
    const cluster = createKubernetesCluster(kubeConfig, {
      requestTimeoutMs: KubernetesRequestTimeout,
      clock,
      // Each cluster's client has its own rate limit, as each controller's client upstream.
      throttle: { qps: served.config.kubeApiQps, burst: served.config.kubeApiBurst },
      onRetry: (notice) => {
        observer.debug('retrying a Kubernetes API request', { ...notice, cluster: served.config.cluster });
      },
    });
    return {
      config: served.config,
      clusterName: served.config.cluster,
      source: options.source,
      stores,
      cluster,
      observer,
      clock,
      ...(triggerDrainer !== undefined && { triggerDrainer }),
    };
  };
  const built = new Map<string, Promise<Runtime>>();
  return {
    clusters: [...settings.clusters.keys()],
    runtime: (name) => {
      const kept = built.get(name);
      if (kept !== undefined) return kept;
      const served = settings.clusters.get(name);
      if (served === undefined) return undefined;
      const pending = build(served).catch((error: unknown) => {
        built.delete(name);
        throw error;
      });
      built.set(name, pending);
      return pending;
    },
  };
}

/**
 * The runtime of the deployment's first (in a single-cluster stage, its only) served cluster. Rejects
 * with ConfigError naming every bad variable before any I/O, then ClusterAuthError if the cluster
 * credentials cannot be resolved.
 *
 * @example
 * const runtime = await loadRuntime(process.env, { source: 'monitor' });
 */
export async function loadRuntime(env: Env, options: LoadRuntimeOptions): Promise<Runtime> {
  const runtimes = createRuntimes(env, options);
  const first = runtimes.clusters[0];
  const runtime = first === undefined ? undefined : runtimes.runtime(first);
  if (runtime === undefined) throw new ConfigError([{ path: ClustersEnv, message: 'names no cluster' }]);
  return runtime;
}
