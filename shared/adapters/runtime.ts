// The wiring every function shares: settings, the DynamoDB stores, the cluster port, the Observer and the
// drainer trigger, built from the environment once per cold start (module scope: clients and config
// only, docs/contributing.md#module-scope). The local stack builds the same Runtime with endpoint overrides
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
import {
  ClusterAuthEnv,
  loadClusterAuth,
  ownedEnvVars as clusterAuthEnvVars,
  type ClusterAuthConfig,
} from './kubernetes/authConfig.js';
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
  readonly clusterAuth: ClusterAuthConfig;
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
  let clusterAuth: ClusterAuthConfig | undefined;
  try {
    clusterAuth = loadClusterAuth(env);
    if (clusterAuth === undefined) {
      issues.push({
        path: ClusterAuthEnv.kubeconfigFile,
        message:
          `no cluster credentials: set one of ${ClusterAuthEnv.kubeconfigFile}, ${ClusterAuthEnv.kubeconfigSecret}, ` +
          `${ClusterAuthEnv.kubeconfigParameter}, ${ClusterAuthEnv.eks} or ${ClusterAuthEnv.json}`,
      });
    }
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
  }
  if (issues.length > 0 || config === undefined || clusterAuth === undefined) throw new ConfigError(issues);
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
      clusterAuth,
      localCredentials: !hasCredentials && (dynamodbEndpoint !== undefined || lambdaEndpoint !== undefined),
    },
  };
}

/** Everything a function needs, built once per cold start. */
export interface Runtime {
  readonly config: ControllerConfig;
  /** The cluster this deployment serves (config.cluster): events for another one are rejected. */
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
 * Builds the Runtime from the environment. Throws ConfigError naming every bad variable before any I/O,
 * then ClusterAuthError if the cluster credentials cannot be resolved.
 *
 * @example
 * let runtime: Promise<Runtime> | undefined; // module scope: once per cold start
 * const get = () => (runtime ??= loadRuntime(process.env, { source: 'monitor' }));
 */
export async function loadRuntime(env: Env, options: LoadRuntimeOptions): Promise<Runtime> {
  const { config, settings } = loadRuntimeSettings(env);
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
  const { kubeConfig } = await loadKubeConfig(settings.clusterAuth, { clock, ...options.kube });
  const cluster = createKubernetesCluster(kubeConfig, {
    requestTimeoutMs: KubernetesRequestTimeout,
    clock,
    throttle: { qps: config.kubeApiQps, burst: config.kubeApiBurst },
    onRetry: (notice) => {
      observer.debug('retrying a Kubernetes API request', { ...notice });
    },
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
  return {
    config,
    clusterName: config.cluster,
    source: options.source,
    stores,
    cluster,
    observer,
    clock,
    ...(triggerDrainer !== undefined && { triggerDrainer }),
  };
}
