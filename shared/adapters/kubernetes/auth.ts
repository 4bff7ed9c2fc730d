// Builds the client-node KubeConfig from the cluster credentials setting (authConfig.ts):
// - kubeconfigFile: the file, as kubectl reads it (paths in it resolved against its folder);
// - kubeconfigSecret / kubeconfigParameter: the kubeconfig text held in Secrets Manager (SecretString,
//   or SecretBinary as UTF-8) or in an SSM parameter (read WithDecryption, so a SecureString works);
// - eks: DescribeCluster gives the endpoint and CA; the user is an auth-provider answered by
//   eksTokenAuthenticator, which signs a fresh STS token when its cached one is due (eksToken.ts).
// A kubeconfig held in AWS should carry a token or a client certificate: an `exec` user (such as
// `aws eks get-token`) would run a CLI that Lambda does not have; use `eks` for that.
import { EKSClient, DescribeClusterCommand } from '@aws-sdk/client-eks';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterAuthError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import { systemClock } from '../clock.js';
import type { ClusterAuthConfig } from './authConfig.js';
import {
  createEksTokenSource,
  EKS_AUTH_PROVIDER,
  eksTokenAuthenticator,
  type AwsCredentialsProvider,
  type EksTokenSource,
} from './eksToken.js';

/** Clients and sources the loader uses; each defaults to the real one. Tests inject mocks. */
export interface LoadKubeConfigDeps {
  readonly secretsManager?: SecretsManagerClient;
  readonly ssm?: SSMClient;
  readonly eks?: EKSClient;
  /** Credentials that sign EKS tokens (and call DescribeCluster). Default: fromNodeProviderChain(). */
  readonly credentials?: AwsCredentialsProvider;
  /** Decides when a cached EKS token is due. Default: the wall clock. */
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
}

export interface LoadedKubeConfig {
  readonly kubeConfig: KubeConfig;
  /** Present for `eks`: the token source the KubeConfig's authenticator uses. */
  readonly eksTokens?: EksTokenSource;
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Loads kubeconfig text, selects `context` if given, and checks that it names a cluster. */
function kubeConfigFromText(text: string, source: string, context: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (error) {
    throw new ClusterAuthError(source, `not a readable kubeconfig (${describeError(error)})`, {
      cause: error,
    });
  }
  return selectContext(kc, source, context);
}

function selectContext(kc: KubeConfig, source: string, context: string | undefined): KubeConfig {
  if (context !== undefined) {
    if (kc.getContextObject(context) === null) {
      const known = kc.getContexts().map((c) => c.name);
      throw new ClusterAuthError(
        source,
        `has no context ${JSON.stringify(context)} (contexts: ${known.length === 0 ? 'none' : known.join(', ')})`,
      );
    }
    kc.setCurrentContext(context);
  }
  if (kc.getCurrentCluster() === null) {
    throw new ClusterAuthError(source, 'names no cluster: set current-context, or choose a context');
  }
  return kc;
}

async function kubeConfigFromSecret(secretId: string, context: string | undefined, deps: LoadKubeConfigDeps) {
  const source = `secret ${JSON.stringify(secretId)}`;
  const client = deps.secretsManager ?? new SecretsManagerClient({});
  let text: string | undefined;
  try {
    const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }), {
      abortSignal: deps.signal,
    });
    text =
      out.SecretString ??
      (out.SecretBinary === undefined ? undefined : Buffer.from(out.SecretBinary).toString('utf8'));
  } catch (error) {
    throw new ClusterAuthError(source, `GetSecretValue failed (${describeError(error)})`, { cause: error });
  }
  if (text === undefined || text.trim() === '')
    throw new ClusterAuthError(source, 'holds no kubeconfig (empty secret)');
  return kubeConfigFromText(text, source, context);
}

async function kubeConfigFromParameter(name: string, context: string | undefined, deps: LoadKubeConfigDeps) {
  const source = `SSM parameter ${JSON.stringify(name)}`;
  const client = deps.ssm ?? new SSMClient({});
  let text: string | undefined;
  try {
    const out = await client.send(new GetParameterCommand({ Name: name, WithDecryption: true }), {
      abortSignal: deps.signal,
    });
    text = out.Parameter?.Value;
  } catch (error) {
    throw new ClusterAuthError(source, `GetParameter failed (${describeError(error)})`, { cause: error });
  }
  if (text === undefined || text.trim() === '')
    throw new ClusterAuthError(source, 'holds no kubeconfig (empty value)');
  return kubeConfigFromText(text, source, context);
}

async function kubeConfigFromEks(
  clusterName: string,
  region: string,
  deps: LoadKubeConfigDeps,
): Promise<LoadedKubeConfig> {
  const source = `EKS cluster ${JSON.stringify(clusterName)} in ${region}`;
  const credentials = deps.credentials ?? fromNodeProviderChain();
  const client = deps.eks ?? new EKSClient({ region, credentials });
  let endpoint: string | undefined;
  let caData: string | undefined;
  try {
    const out = await client.send(new DescribeClusterCommand({ name: clusterName }), {
      abortSignal: deps.signal,
    });
    endpoint = out.cluster?.endpoint;
    caData = out.cluster?.certificateAuthority?.data;
  } catch (error) {
    throw new ClusterAuthError(source, `DescribeCluster failed (${describeError(error)})`, { cause: error });
  }
  if (endpoint === undefined || endpoint === '') {
    throw new ClusterAuthError(source, 'has no API endpoint yet (is the cluster ACTIVE?)');
  }
  if (caData === undefined || caData === '')
    throw new ClusterAuthError(source, 'has no certificate authority data');

  const eksTokens = createEksTokenSource({
    clusterName,
    region,
    credentials,
    clock: deps.clock ?? systemClock,
  });
  const kc = new KubeConfig();
  kc.addAuthenticator(eksTokenAuthenticator(eksTokens));
  // caData is base64 PEM in both DescribeCluster and kubeconfig, so it goes in as is.
  kc.loadFromOptions({
    clusters: [{ name: clusterName, server: endpoint, caData, skipTLSVerify: false }],
    users: [{ name: `${clusterName}-nlc`, authProvider: { name: EKS_AUTH_PROVIDER, config: {} } }],
    contexts: [{ name: clusterName, cluster: clusterName, user: `${clusterName}-nlc` }],
    currentContext: clusterName,
  });
  return { kubeConfig: kc, eksTokens };
}

/**
 * The KubeConfig for the configured cluster credentials. Throws ClusterAuthError naming the source
 * when they cannot be resolved.
 *
 * @example
 * const auth = loadClusterAuth(process.env) ?? { kind: 'kubeconfigFile', path: `${homedir()}/.kube/config` };
 * const { kubeConfig } = await loadKubeConfig(auth);
 */
export async function loadKubeConfig(
  auth: ClusterAuthConfig,
  deps: LoadKubeConfigDeps = {},
): Promise<LoadedKubeConfig> {
  switch (auth.kind) {
    case 'kubeconfigFile': {
      const source = `kubeconfig file ${JSON.stringify(auth.path)}`;
      const kc = new KubeConfig();
      try {
        kc.loadFromFile(auth.path);
      } catch (error) {
        throw new ClusterAuthError(source, `cannot be read (${describeError(error)})`, { cause: error });
      }
      return { kubeConfig: selectContext(kc, source, auth.context) };
    }
    case 'kubeconfigSecret':
      return { kubeConfig: await kubeConfigFromSecret(auth.secretId, auth.context, deps) };
    case 'kubeconfigParameter':
      return { kubeConfig: await kubeConfigFromParameter(auth.name, auth.context, deps) };
    case 'eks':
      return kubeConfigFromEks(auth.clusterName, auth.region, deps);
  }
}
