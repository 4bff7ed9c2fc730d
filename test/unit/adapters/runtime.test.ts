// The wiring's environment (shared/adapters/runtime.ts): every bad or missing variable named at once,
// before any I/O; the variables it owns are not reported as unknown settings.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  loadRuntime,
  loadRuntimeSettings,
  ownedEnvVars,
  RuntimeEnv,
} from '../../../shared/adapters/runtime.js';
import { silentObserver } from '../../../shared/ports/observer.js';
import { ConfigError } from '../../../shared/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'nlc-runtime-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true } }]',
    'users: [{ name: u, user: { token: t } }]',
    'contexts: [{ name: x, context: { cluster: c, user: u } }]',
    'current-context: x',
  ].join('\n'),
);

/** What serverless.yml gives the monitor, with a kubeconfig file for the cluster. */
const lambdaEnv: Readonly<Record<string, string>> = {
  AWS_REGION: 'eu-west-1',
  NLC_CLUSTER: 'prod',
  NLC_NODE_MONITOR_GRACE_PERIOD: '40s',
  NLC_NODES_TABLE: 'nlc-prod-nodes',
  NLC_ZONES_TABLE: 'nlc-prod-zones',
  NLC_EVICTION_QUEUE_TABLE: 'nlc-prod-eviction-queue',
  NLC_POD_EVICTIONS_TABLE: 'nlc-prod-pod-evictions',
  NLC_DECISIONS_TABLE: 'nlc-prod-decisions',
  NLC_EVICTION_DRAINER_FUNCTION: 'nlc-prod-evictionDrainer',
  // serverless.yml renders the unused credential sources as empty strings.
  NLC_KUBECONFIG_SECRET_ID: '',
  NLC_KUBECONFIG_PARAMETER: '',
  NLC_EKS_CLUSTER_NAME: '',
  NLC_KUBECONFIG_CONTEXT: '',
  NLC_KUBECONFIG: kubeconfig,
};

function issuesOf(env: Readonly<Record<string, string | undefined>>): string[] {
  try {
    loadRuntimeSettings(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

describe('loadRuntimeSettings', () => {
  it('reads the Lambda environment: settings, tables, drainer; no endpoint overrides', () => {
    const { config, settings } = loadRuntimeSettings(lambdaEnv);
    expect(config).toMatchObject({ cluster: 'prod', nodeMonitorGracePeriod: 40_000 });
    expect(settings).toEqual({
      tables: {
        nodes: 'nlc-prod-nodes',
        zones: 'nlc-prod-zones',
        evictionQueue: 'nlc-prod-eviction-queue',
        podEvictions: 'nlc-prod-pod-evictions',
        decisions: 'nlc-prod-decisions',
      },
      region: 'eu-west-1',
      dynamodbEndpoint: undefined,
      lambdaEndpoint: undefined,
      drainerFunction: 'nlc-prod-evictionDrainer',
      clusters: new Map([['prod', { config, clusterAuth: { kind: 'kubeconfigFile', path: kubeconfig } }]]),
      localCredentials: false,
    });
  });

  it('the local stack: endpoint overrides, no region needed, placeholder credentials', () => {
    const { AWS_REGION: _, ...env } = lambdaEnv;
    const { settings } = loadRuntimeSettings({
      ...env,
      NLC_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      NLC_LAMBDA_ENDPOINT: 'http://127.0.0.1:3002',
    });
    expect(settings).toMatchObject({
      region: undefined,
      dynamodbEndpoint: 'http://127.0.0.1:8000',
      lambdaEndpoint: 'http://127.0.0.1:3002',
      localCredentials: true,
    });
  });

  it('names every missing table at once', () => {
    const env = Object.fromEntries(Object.entries(lambdaEnv).filter(([name]) => !name.endsWith('_TABLE')));
    expect(issuesOf(env)).toEqual([
      'NLC_NODES_TABLE: required: the DynamoDB table name',
      'NLC_ZONES_TABLE: required: the DynamoDB table name',
      'NLC_EVICTION_QUEUE_TABLE: required: the DynamoDB table name',
      'NLC_POD_EVICTIONS_TABLE: required: the DynamoDB table name',
      'NLC_DECISIONS_TABLE: required: the DynamoDB table name',
    ]);
  });

  it('reports bad settings, tables, endpoints, region and credentials together, each by variable', () => {
    expect(
      issuesOf({
        ...lambdaEnv,
        AWS_REGION: undefined,
        NLC_NODE_EVICTION_RATE: 'fast',
        NLC_NODES_TABLE: 'x',
        NLC_DYNAMODB_ENDPOINT: 'localhost:8000',
        NLC_KUBECONFIG: '',
        NLC_EVICTION_DRAINER_FUNCTION: '',
        NLC_LAMBDA_ENDPOINT: 'http://127.0.0.1:3002',
      }),
    ).toEqual([
      'NLC_NODE_EVICTION_RATE: expected a number of nodes per second, 0 or more (like 0.1), got "fast"',
      'NLC_NODES_TABLE: expected a DynamoDB table name (3-255 of a-z, A-Z, 0-9, "_", "-", "."), got "x"',
      'NLC_DYNAMODB_ENDPOINT: expected an http(s) URL such as "http://127.0.0.1:8000", got "localhost:8000"',
      'NLC_LAMBDA_ENDPOINT: only used with NLC_EVICTION_DRAINER_FUNCTION',
      'AWS_REGION: required: the region of the DynamoDB tables (Lambda sets it)',
      'NLC_KUBECONFIG: no cluster credentials: set one of NLC_KUBECONFIG, NLC_KUBECONFIG_SECRET_ID, NLC_KUBECONFIG_PARAMETER, NLC_EKS_CLUSTER_NAME or NLC_CLUSTER_AUTH',
    ]);
  });

  it('passes on the cluster credentials’ own errors, and still reports unknown NLC_ variables', () => {
    expect(issuesOf({ ...lambdaEnv, NLC_EKS_CLUSTER_NAME: 'prod', NLC_DYNAMO_TABLE: 'typo' })).toEqual([
      'NLC_DYNAMO_TABLE: unknown setting (the settings are listed in docs/configuration.md)',
      'NLC_EKS_CLUSTER_NAME: set only one cluster credentials source; NLC_KUBECONFIG is set too',
    ]);
  });

  it('owns its variables and the cluster credentials’, so loadConfig does not report them', () => {
    for (const name of Object.values(RuntimeEnv)) expect(ownedEnvVars.has(name)).toBe(true);
    for (const name of [
      'NLC_KUBECONFIG',
      'NLC_KUBECONFIG_SECRET_ID',
      'NLC_EKS_CLUSTER_NAME',
      'NLC_CLUSTER_AUTH',
    ]) {
      expect(ownedEnvVars.has(name)).toBe(true);
    }
    expect(ownedEnvVars.has('NLC_CLUSTER')).toBe(false);
  });
});

describe('loadRuntime', () => {
  it('builds the stores, the cluster port and the drainer trigger without any request', async () => {
    const runtime = await loadRuntime(lambdaEnv, { source: 'monitor', observer: silentObserver });
    expect(runtime.clusterName).toBe('prod');
    expect(runtime.source).toBe('monitor');
    expect(typeof runtime.triggerDrainer).toBe('function');
    expect(runtime.stores.capacity.snapshot().requests).toBe(0);
    runtime.stores.client.destroy();
  });

  it('has no drainer trigger where NLC_EVICTION_DRAINER_FUNCTION is not set (the drainer itself)', async () => {
    const runtime = await loadRuntime(
      { ...lambdaEnv, NLC_EVICTION_DRAINER_FUNCTION: undefined },
      { source: 'drainer', observer: silentObserver },
    );
    expect(runtime.triggerDrainer).toBeUndefined();
    runtime.stores.client.destroy();
  });

  it('rejects with ConfigError before reading any credentials', async () => {
    await expect(loadRuntime({ ...lambdaEnv, NLC_ZONES_TABLE: '' }, { source: 'monitor' })).rejects.toThrow(
      ConfigError,
    );
  });
});
