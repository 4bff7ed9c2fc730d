// Builds the client-node KubeConfig from the cluster credentials setting (authConfig.ts):
// - kubeconfigFile: the file, as kubectl reads it (paths in it resolved against its folder);
// - kubeconfigSecret / kubeconfigParameter: the kubeconfig text held in Secrets Manager (SecretString,
//   or SecretBinary as UTF-8) or in an SSM SecureString parameter (read WithDecryption; a String or
//   StringList parameter is refused: its value is stored and shown in plain text);
// - eks: DescribeCluster gives the endpoint and CA; the user is an auth-provider answered by
//   eksTokenAuthenticator, which signs a fresh STS token when its cached one is due (eksToken.ts).
// A kubeconfig held in AWS should carry a token or a client certificate: an `exec` user (such as
// `aws eks get-token`) would run a CLI that Lambda does not have; use `eks` for that.
// Credentials never reach an error message: every error leaving this module, and every error of the
// KubeConfig's request authentication (its authenticators, exec plugins, key files), goes through
// authRedaction.ts first.
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { EKSClient, DescribeClusterCommand } from '@aws-sdk/client-eks';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterAuthError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import { systemClock } from '../clock.js';
import type { ClusterAuthConfig } from './authConfig.js';
import { describeError, redactError, secretsOfText, secretsOfUser } from './authRedaction.js';
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

type HttpsOptions = Parameters<KubeConfig['applyToHTTPSOptions']>[0];
type FetchOptions = Parameters<KubeConfig['applyToFetchOptions']>[0];
type SecurityContext = Parameters<KubeConfig['applySecurityAuthentication']>[0];

/**
 * A KubeConfig whose request authentication fails with a redacted ClusterAuthError: client-node's
 * authenticators and exec plugins throw errors that may quote a token, an exec plugin's output or a
 * key (a JSON parse error of `aws eks get-token` output quotes the token), and the cluster adapter
 * copies any thrown error's message into its results, its logs and the Decisions trail.
 */
class RedactingKubeConfig extends KubeConfig {
  /** Errors this class made, passed through as they are when they surface again. */
  private static readonly made = new WeakSet<Error>();

  /** `secrets`: values known to be credentials (the kubeconfig text's values). */
  constructor(private readonly secrets: readonly string[] = []) {
    super();
  }

  private failure(error: unknown): Error {
    if (error instanceof Error && RedactingKubeConfig.made.has(error)) return error;
    const user = this.getCurrentUser();
    const safe = redactError(error, [...this.secrets, ...secretsOfUser(user)]);
    const failure = new ClusterAuthError(
      `kubeconfig user ${JSON.stringify(user?.name ?? '')}`,
      `cannot authenticate a request (${describeError(safe)})`,
      { cause: safe },
    );
    RedactingKubeConfig.made.add(failure);
    return failure;
  }

  override async applyToFetchOptions(opts: FetchOptions): ReturnType<KubeConfig['applyToFetchOptions']> {
    try {
      return await super.applyToFetchOptions(opts);
    } catch (error) {
      throw this.failure(error);
    }
  }

  override async applyToHTTPSOptions(opts: HttpsOptions): Promise<void> {
    try {
      await super.applyToHTTPSOptions(opts);
    } catch (error) {
      throw this.failure(error);
    }
  }

  override async applySecurityAuthentication(context: SecurityContext): Promise<void> {
    try {
      await super.applySecurityAuthentication(context);
    } catch (error) {
      throw this.failure(error);
    }
  }
}

/** A ClusterAuthError whose problem names what failed and carries the redacted error as its cause. */
function authFailure(source: string, what: string, error: unknown, secrets: readonly string[] = []) {
  const safe = redactError(error, secrets);
  return new ClusterAuthError(source, `${what} (${describeError(safe)})`, { cause: safe });
}

/** Loads kubeconfig text, selects `context` if given, and checks that it names a cluster. */
function kubeConfigFromText(text: string, source: string, context: string | undefined): KubeConfig {
  const secrets = secretsOfText(text);
  const kc = new RedactingKubeConfig(secrets);
  try {
    kc.loadFromString(text);
  } catch (error) {
    throw authFailure(source, 'not a readable kubeconfig', error, secrets);
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
    throw authFailure(source, 'GetSecretValue failed', error);
  }
  if (text === undefined || text.trim() === '')
    throw new ClusterAuthError(source, 'holds no kubeconfig (empty secret)');
  return kubeConfigFromText(text, source, context);
}

async function kubeConfigFromParameter(name: string, context: string | undefined, deps: LoadKubeConfigDeps) {
  const source = `SSM parameter ${JSON.stringify(name)}`;
  const client = deps.ssm ?? new SSMClient({});
  let text: string | undefined;
  let type: string | undefined;
  try {
    const out = await client.send(new GetParameterCommand({ Name: name, WithDecryption: true }), {
      abortSignal: deps.signal,
    });
    text = out.Parameter?.Value;
    type = out.Parameter?.Type;
  } catch (error) {
    throw authFailure(source, 'GetParameter failed', error);
  }
  // A String parameter is stored unencrypted and shown in the console, in `get-parameter` output and
  // in parameter history to anyone who may read it: refuse it instead of using the credentials.
  if (type !== 'SecureString') {
    throw new ClusterAuthError(
      source,
      `is ${type === undefined ? 'of no reported type' : `a ${type}`}, not a SecureString: store the ` +
        'kubeconfig as a SecureString (aws ssm put-parameter --type SecureString); its value was not used',
    );
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
    throw authFailure(source, 'DescribeCluster failed', error);
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
  const kc = new RedactingKubeConfig();
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
      let text: string;
      try {
        text = await readFile(auth.path, 'utf8');
      } catch (error) {
        throw authFailure(source, 'cannot be read', error);
      }
      const kc = kubeConfigFromText(text, source, auth.context);
      // As kubectl (and client-node's loadFromFile): paths in the file are relative to its folder.
      kc.makePathsAbsolute(dirname(auth.path));
      return { kubeConfig: kc };
    }
    case 'kubeconfigSecret':
      return { kubeConfig: await kubeConfigFromSecret(auth.secretId, auth.context, deps) };
    case 'kubeconfigParameter':
      return { kubeConfig: await kubeConfigFromParameter(auth.name, auth.context, deps) };
    case 'eks':
      return kubeConfigFromEks(auth.clusterName, auth.region, deps);
  }
}

/**
 * client-node's default KubeConfig (KUBECONFIG, ~/.kube/config, else the pod's service account), with
 * `context` selected if given, and the same redaction of errors as {@link loadKubeConfig}.
 *
 * @example
 * const kc = loadDefaultKubeConfig(); // in a pod: the service account's token and the cluster's CA
 */
export function loadDefaultKubeConfig(context?: string): KubeConfig {
  const source = 'the default kubeconfig (KUBECONFIG, ~/.kube/config or the in-cluster service account)';
  const kc = new RedactingKubeConfig();
  try {
    kc.loadFromDefault();
  } catch (error) {
    throw authFailure(source, 'not a readable kubeconfig', error);
  }
  return selectContext(kc, source, context);
}
