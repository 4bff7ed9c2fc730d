// Where the cluster credentials come from (docs/architecture.md#writing-to-the-cluster): a kubeconfig file
// (local), a kubeconfig stored in Secrets Manager or SSM Parameter Store (AWS), or EKS (an STS-presigned
// token plus DescribeCluster). One zod schema, read once at cold start from the environment; errors name the
// variable.
//
// The NLC_ variables read here are listed in `ownedEnvVars`; pass that set to loadConfig (shared/config.ts,
// `options.allowEnv`) so the controller settings do not report them as unknown.
import { z } from 'zod';
import { ConfigError, type ConfigIssue } from '../../errors.js';

// EKS cluster names: 1-100 characters, a letter or digit first, then letters, digits, '-' and '_'.
const EKS_CLUSTER_NAME = /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/;
// AWS region codes such as us-east-1, eu-central-2, us-gov-west-1, cn-north-1, ap-southeast-7.
const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

const nonEmpty = (what: string) =>
  z
    .string()
    .trim()
    .min(1, { error: `expected ${what}, got an empty string` });
const context = nonEmpty('a kubeconfig context name').optional();

/**
 * The cluster credentials setting, by kind.
 *
 * @example
 * ClusterAuthConfigSchema.parse({ kind: 'eks', clusterName: 'prod', region: 'eu-west-1' });
 */
export const ClusterAuthConfigSchema = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({ kind: z.literal('kubeconfigFile'), path: nonEmpty('a file path'), context }),
    z.strictObject({
      kind: z.literal('kubeconfigSecret'),
      secretId: nonEmpty('a Secrets Manager secret name or ARN').pipe(z.string().max(2048)),
      context,
    }),
    z.strictObject({
      kind: z.literal('kubeconfigParameter'),
      name: nonEmpty('an SSM parameter name or ARN').pipe(z.string().max(2048)),
      context,
    }),
    z.strictObject({
      kind: z.literal('eks'),
      clusterName: nonEmpty('an EKS cluster name').pipe(
        z.string().regex(EKS_CLUSTER_NAME, {
          error:
            'expected an EKS cluster name (1-100 letters, digits, "-" or "_", starting with a letter or digit)',
        }),
      ),
      region: nonEmpty('an AWS region').pipe(
        z.string().regex(AWS_REGION, { error: 'expected an AWS region such as "eu-west-1"' }),
      ),
    }),
  ],
  { error: 'expected kind to be one of kubeconfigFile, kubeconfigSecret, kubeconfigParameter, eks' },
);

export type ClusterAuthConfig = z.output<typeof ClusterAuthConfigSchema>;

/** The environment variables of this setting, by role. */
export const ClusterAuthEnv = {
  json: 'NLC_CLUSTER_AUTH',
  kubeconfigFile: 'NLC_KUBECONFIG',
  kubeconfigSecret: 'NLC_KUBECONFIG_SECRET_ID',
  kubeconfigParameter: 'NLC_KUBECONFIG_PARAMETER',
  eks: 'NLC_EKS_CLUSTER_NAME',
  context: 'NLC_KUBECONFIG_CONTEXT',
  region: 'AWS_REGION',
} as const;

/** The NLC_ variables this module reads: loadConfig's `allowEnv`. */
export const ownedEnvVars: ReadonlySet<string> = new Set(
  Object.values(ClusterAuthEnv).filter((name) => name.startsWith('NLC_')),
);

const SOURCES = [
  ClusterAuthEnv.json,
  ClusterAuthEnv.kubeconfigFile,
  ClusterAuthEnv.kubeconfigSecret,
  ClusterAuthEnv.kubeconfigParameter,
  ClusterAuthEnv.eks,
] as const;

function issuesOf(error: z.ZodError, path: string): ConfigIssue[] {
  return error.issues.flatMap((issue): ConfigIssue[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: `${path}.${key}`, message: 'unknown field' }));
    }
    const where = issue.path.length === 0 ? path : `${path}.${issue.path.map(String).join('.')}`;
    return [{ path: where, message: issue.message }];
  });
}

/**
 * Parses the setting from a plain object (a scenario or a JSON value). Throws one ConfigError listing
 * every bad field as `<path>.<field>`.
 *
 * @example
 * parseClusterAuth({ kind: 'kubeconfigFile', path: '~/.kube/config' }); // { kind: 'kubeconfigFile', path: … }
 */
export function parseClusterAuth(value: unknown, path = 'clusterAuth'): ClusterAuthConfig {
  const result = ClusterAuthConfigSchema.safeParse(value);
  if (result.success) return result.data;
  throw new ConfigError(issuesOf(result.error, path));
}

/**
 * Reads the setting from the environment: either NLC_CLUSTER_AUTH (the JSON form of
 * {@link ClusterAuthConfigSchema}) or exactly one of NLC_KUBECONFIG (a path), NLC_KUBECONFIG_SECRET_ID,
 * NLC_KUBECONFIG_PARAMETER (each optionally with NLC_KUBECONFIG_CONTEXT) or NLC_EKS_CLUSTER_NAME (with
 * AWS_REGION, which Lambda sets). Undefined when none is set, so the caller picks its default. Empty
 * values count as unset. Throws one ConfigError naming every bad variable.
 *
 * @example
 * loadClusterAuth({ NLC_EKS_CLUSTER_NAME: 'prod', AWS_REGION: 'eu-west-1' });
 * // { kind: 'eks', clusterName: 'prod', region: 'eu-west-1' }
 */
export function loadClusterAuth(
  env: Readonly<Record<string, string | undefined>>,
): ClusterAuthConfig | undefined {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const set = SOURCES.filter((name) => read(name) !== undefined);
  const contextName = read(ClusterAuthEnv.context);
  const issues: ConfigIssue[] = [];

  if (set.length > 1) {
    for (const name of set.slice(1)) {
      issues.push({
        path: name,
        message: `set only one cluster credentials source; ${set[0] ?? ''} is set too`,
      });
    }
  }
  const source = set[0];
  if (
    contextName !== undefined &&
    (source === undefined || source === ClusterAuthEnv.json || source === ClusterAuthEnv.eks)
  ) {
    const why =
      source === ClusterAuthEnv.json
        ? `put "context" in ${ClusterAuthEnv.json} instead`
        : source === ClusterAuthEnv.eks
          ? 'EKS credentials have no kubeconfig context'
          : `only used with ${ClusterAuthEnv.kubeconfigFile}, ${ClusterAuthEnv.kubeconfigSecret} or ${ClusterAuthEnv.kubeconfigParameter}`;
    issues.push({ path: ClusterAuthEnv.context, message: why });
  }
  if (issues.length > 0) throw new ConfigError(issues);
  if (source === undefined) return undefined;

  const value = read(source) ?? '';
  const withContext = contextName === undefined ? {} : { context: contextName };
  let candidate: unknown;
  let label: (field: string) => string = () => source;
  switch (source) {
    case ClusterAuthEnv.json:
      try {
        candidate = JSON.parse(value);
      } catch {
        throw new ConfigError([
          { path: source, message: 'expected a JSON object such as {"kind":"eks",…}, got invalid JSON' },
        ]);
      }
      if (typeof candidate !== 'object' || candidate === null || Array.isArray(candidate)) {
        throw new ConfigError([{ path: source, message: 'expected a JSON object with a "kind" field' }]);
      }
      label = (field) => (field === '' ? source : `${source}.${field}`);
      break;
    case ClusterAuthEnv.kubeconfigFile:
      candidate = { kind: 'kubeconfigFile', path: value, ...withContext };
      break;
    case ClusterAuthEnv.kubeconfigSecret:
      candidate = { kind: 'kubeconfigSecret', secretId: value, ...withContext };
      break;
    case ClusterAuthEnv.kubeconfigParameter:
      candidate = { kind: 'kubeconfigParameter', name: value, ...withContext };
      break;
    case ClusterAuthEnv.eks: {
      const region = read(ClusterAuthEnv.region);
      if (region === undefined) {
        throw new ConfigError([
          { path: ClusterAuthEnv.region, message: `required with ${source}: the region of the EKS cluster` },
        ]);
      }
      candidate = { kind: 'eks', clusterName: value, region };
      label = (field) => (field === 'region' ? ClusterAuthEnv.region : source);
      break;
    }
  }
  const result = ClusterAuthConfigSchema.safeParse(candidate);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.flatMap((issue): ConfigIssue[] => {
      if (issue.code === 'unrecognized_keys') {
        return issue.keys.map((key) => ({ path: label(key), message: 'unknown field' }));
      }
      const field = issue.path.map(String).join('.');
      const path =
        field === 'context' && source !== ClusterAuthEnv.json ? ClusterAuthEnv.context : label(field);
      return [{ path, message: issue.message }];
    }),
  );
}
