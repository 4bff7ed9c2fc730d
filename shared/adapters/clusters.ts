// The clusters one deployment serves, each with its own settings and credentials (docs/deploy.md,
// "Many clusters from one stage"). One zod schema, read once per cold start from NLC_CLUSTERS (a JSON
// object that infra/serverless/bridge.cjs renders from the stage parameters `clusters` and
// `clusterConfig`, validating it with this same module at package time):
//
//   NLC_CLUSTERS={"prod-eu":{"credentials":"eks","mode":"active"},
//                 "prod-us":{"credentials":{"kind":"kubeconfigSecret","secretId":"arn:…"},
//                            "settings":{"nodeEvictionRate":"0.05"}}}
//
// Each entry's settings override the stage-wide NLC_* settings for that cluster only; `mode` is its
// dryRun; `credentials` is one of the cluster credential sources of authConfig.ts ("eks" alone: the EKS
// cluster of the same name in the functions' region). An entry without credentials uses the stage-wide
// source (NLC_EKS_CLUSTER_NAME, NLC_KUBECONFIG_SECRET_ID, …), which only one cluster may do: two
// clusters behind one kubeconfig would be one API server written to under two names.
//
// Without NLC_CLUSTERS the deployment serves NLC_CLUSTER alone with the stage-wide settings and
// credentials: a single-cluster stage is configured exactly as before.
import { z } from 'zod';
import { loadConfig, type ControllerConfig } from '../config.js';
import { ConfigError, type ConfigIssue } from '../errors.js';
import {
  ClusterAuthConfigSchema,
  ClusterAuthEnv,
  loadClusterAuth,
  type ClusterAuthConfig,
} from './kubernetes/authConfig.js';

export const ClustersEnv = 'NLC_CLUSTERS';

// A DNS-1123 label, as the `cluster` setting (shared/config.ts): the name prefixes every state key.
const ClusterName = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Settings a cluster entry may not override: its name is the entry's key, its dryRun is `mode`. */
const NotOverridable = new Set(['cluster', 'dryRun']);

const Credentials = z.union([
  z.literal('eks'),
  // The EKS form without a region: the functions' own (AWS_REGION), filled in below.
  z.looseObject({ kind: z.string() }),
]);

const ClusterEntry = z.strictObject({
  credentials: Credentials.optional(),
  mode: z.enum(['shadow', 'active'], { error: 'expected "shadow" or "active"' }).optional(),
  settings: z.record(z.string(), z.unknown(), { error: 'expected an object of settings' }).optional(),
});

const ClustersDocument = z.record(z.string(), ClusterEntry, {
  error: 'expected a JSON object of clusters by name, such as {"prod":{"credentials":"eks"}}',
});

/** One served cluster: its effective settings (config.cluster is its name) and its credentials. */
export interface ServedCluster {
  readonly config: ControllerConfig;
  readonly clusterAuth: ClusterAuthConfig;
}

type Env = Readonly<Record<string, string | undefined>>;

function issuesOf(error: z.ZodError, root: string): ConfigIssue[] {
  return error.issues.flatMap((issue): ConfigIssue[] => {
    const at = issue.path.length === 0 ? root : `${root}.${issue.path.map(String).join('.')}`;
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({
        path: `${at}.${key}`,
        message: 'unknown field (credentials, mode, settings)',
      }));
    return [{ path: at, message: issue.message }];
  });
}

function credentialsOf(
  name: string,
  raw: z.output<typeof Credentials>,
  env: Env,
  issues: ConfigIssue[],
): ClusterAuthConfig | undefined {
  const path = `${ClustersEnv}.${name}.credentials`;
  const region = env[ClusterAuthEnv.region]?.trim();
  const isEks = raw === 'eks' || raw.kind === 'eks';
  if (isEks && (raw === 'eks' || raw.region === undefined) && (region === undefined || region === '')) {
    issues.push({
      path: `${path}.region`,
      message: `required: the EKS cluster's region, or ${ClusterAuthEnv.region} (Lambda sets it)`,
    });
    return undefined;
  }
  const candidate: unknown =
    raw === 'eks'
      ? { kind: 'eks', clusterName: name, region }
      : raw.kind === 'eks' && raw.region === undefined
        ? { ...raw, region }
        : raw;
  const result = ClusterAuthConfigSchema.safeParse(candidate);
  if (result.success) return result.data;
  issues.push(...issuesOf(result.error, path));
  return undefined;
}

/**
 * The clusters the deployment serves, by name, each with its settings and credentials. `base` is the
 * stage-wide settings (already loaded from the environment; undefined when they are bad, which the
 * caller reports); `allowEnv` the NLC_ variables loadConfig must not report. Throws one ConfigError naming every bad field as `NLC_CLUSTERS.<cluster>.<field>`.
 *
 * @example
 * loadServedClusters({ NLC_CLUSTERS: '{"a":{"credentials":"eks"}}', AWS_REGION: 'eu-west-1' }, base, allow).get('a')
 */
export function loadServedClusters(
  env: Env,
  base: ControllerConfig | undefined,
  allowEnv: ReadonlySet<string>,
): ReadonlyMap<string, ServedCluster> {
  const raw = env[ClustersEnv]?.trim();
  const stageAuth = (): ClusterAuthConfig => {
    const auth = loadClusterAuth(env);
    if (auth !== undefined) return auth;
    throw new ConfigError([
      {
        path: ClusterAuthEnv.kubeconfigFile,
        message:
          `no cluster credentials: set one of ${ClusterAuthEnv.kubeconfigFile}, ${ClusterAuthEnv.kubeconfigSecret}, ` +
          `${ClusterAuthEnv.kubeconfigParameter}, ${ClusterAuthEnv.eks} or ${ClusterAuthEnv.json}`,
      },
    ]);
  };
  if (raw === undefined || raw === '') {
    // Checked even when the settings are bad (`base` undefined): one error names every problem.
    const clusterAuth = stageAuth();
    return base === undefined ? new Map() : new Map([[base.cluster, { config: base, clusterAuth }]]);
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ConfigError([
      { path: ClustersEnv, message: 'expected a JSON object of clusters by name, got invalid JSON' },
    ]);
  }
  const parsed = ClustersDocument.safeParse(json);
  if (!parsed.success) throw new ConfigError(issuesOf(parsed.error, ClustersEnv));
  const issues: ConfigIssue[] = [];
  const names = Object.keys(parsed.data);
  if (names.length === 0) issues.push({ path: ClustersEnv, message: 'names no cluster' });
  const withStageAuth = names.filter((name) => parsed.data[name]?.credentials === undefined);
  if (withStageAuth.length > 1) {
    issues.push({
      path: ClustersEnv,
      message:
        `clusters ${withStageAuth.join(', ')} have no credentials: only one cluster may use the stage-wide ` +
        'credentials (each cluster is its own API server); give the others "credentials"',
    });
  }
  const served = new Map<string, ServedCluster>();
  for (const name of names) {
    const entry = parsed.data[name] ?? {};
    if (!ClusterName.test(name)) {
      issues.push({
        path: `${ClustersEnv}.${name}`,
        message:
          "a cluster name is 1 to 63 lowercase letters, digits or '-', starting and ending with a letter or digit",
      });
      continue;
    }
    const settings = entry.settings ?? {};
    for (const key of Object.keys(settings).filter((k) => NotOverridable.has(k))) {
      issues.push({
        path: `${ClustersEnv}.${name}.settings.${key}`,
        message:
          key === 'cluster' ? 'the cluster is the entry’s name' : 'set "mode" (shadow or active) instead',
      });
    }
    let config: ControllerConfig | undefined;
    try {
      // The stage-wide NLC_* variables under the cluster's own settings, key by key: a setting left to
      // the emulated minor's default follows the cluster's emulationVersion.
      config = loadConfig(
        env,
        {
          ...Object.fromEntries(Object.entries(settings).filter(([k]) => !NotOverridable.has(k))),
          cluster: name,
          ...(entry.mode !== undefined && { dryRun: entry.mode === 'shadow' }),
        },
        { allowEnv, overridesPath: `${ClustersEnv}.${name}.settings` },
      );
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.push(...error.issues);
    }
    let clusterAuth: ClusterAuthConfig | undefined;
    if (entry.credentials === undefined) {
      try {
        clusterAuth = stageAuth();
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        issues.push(
          ...error.issues.map((i) => ({
            ...i,
            message: `${i.message} (for cluster ${name}, which has no credentials)`,
          })),
        );
      }
    } else {
      clusterAuth = credentialsOf(name, entry.credentials, env, issues);
    }
    if (config !== undefined && clusterAuth !== undefined) served.set(name, { config, clusterAuth });
  }
  // A bad stage-wide variable is reported once, not once per cluster.
  const seen = new Set<string>();
  const unique = issues.filter(
    (i) => !seen.has(`${i.path}\0${i.message}`) && seen.add(`${i.path}\0${i.message}`),
  );
  if (unique.length > 0) throw new ConfigError(unique);
  return served;
}
