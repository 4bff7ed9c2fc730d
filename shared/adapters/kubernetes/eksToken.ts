// EKS bearer tokens, as `aws eks get-token` and aws-iam-authenticator make them: a presigned STS
// GetCallerIdentity URL, signed with SigV4 over the headers `host` and `x-k8s-aws-id: <cluster name>`
// (the header binds the token to one cluster), valid 60 s as a URL and accepted by EKS for 15 minutes
// after its X-Amz-Date. The token is 'k8s-aws-v1.' + base64url(URL) without padding.
//
// The token source caches a token for 14 minutes (aws-iam-authenticator's client-side cache window,
// one minute short of EKS's limit) and earlier when the signing credentials expire sooner, refreshing on
// the first request after that; concurrent requests share one refresh.
import type { OutgoingHttpHeaders } from 'node:http';
import { Sha256 } from '@aws-crypto/sha256-js';
import type { KubeConfig, User } from '@kubernetes/client-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { EpochMillis, Millis } from '../../domain/types.js';
import type { Clock } from '../../ports/clock.js';

export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
/** The header that binds a token to a cluster (aws-iam-authenticator clusterIDHeader). */
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** Lifetime of the presigned URL, as aws-iam-authenticator sets it (X-Amz-Expires=60). */
export const PRESIGN_EXPIRES_SECONDS = 60;
/** How long a token is reused: 14 minutes, one short of the 15 EKS accepts. */
export const TOKEN_REUSE_WINDOW: Millis = 14 * 60_000;
/** A token is refreshed this long before the credentials that signed it expire. */
export const CREDENTIALS_EXPIRY_MARGIN: Millis = 60_000;
/** The KubeConfig user's auth-provider name that {@link eksTokenAuthenticator} answers for. */
export const EKS_AUTH_PROVIDER = 'nlc-eks-token';

/** client-node's Authenticator interface (its package index does not export the type). */
export type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

/** AWS credentials as the SDK's providers resolve them. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}
export type AwsCredentialsProvider = () => Promise<AwsCredentials>;

export interface EksToken {
  readonly token: string;
  /** When the source stops reusing it. */
  readonly refreshAt: EpochMillis;
}

/** The STS endpoint of a region (the China partition has its own domain). */
export function stsHostname(region: string): string {
  return `sts.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

// RFC 3986 unreserved characters stay, everything else is percent-encoded (SigV4 UriEncode).
function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

// aws-iam-authenticator's (Go SDK's) parameter order: the call, then the signature fields, signature last.
const QUERY_ORDER = [
  'Action',
  'Version',
  'X-Amz-Algorithm',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Expires',
  'X-Amz-Security-Token',
  'X-Amz-SignedHeaders',
  'X-Amz-Signature',
];

function rank(key: string): number {
  const i = QUERY_ORDER.indexOf(key);
  return i === -1 ? QUERY_ORDER.length - 1.5 : i;
}

/**
 * A fresh EKS token for `clusterName`, signed at `now` with `credentials`.
 *
 * @example
 * const { token } = await createEksToken({ clusterName: 'prod', region: 'eu-west-1', credentials, now: Date.now() });
 * // 'k8s-aws-v1.aHR0cHM6Ly9zdHMuZXUtd2VzdC0xLmFtYXpvbmF3cy5jb20vP0FjdGlvbj1HZXRDYWxsZXJJZGVudGl0eSZ…'
 */
export async function createEksToken(args: {
  readonly clusterName: string;
  readonly region: string;
  readonly credentials: AwsCredentials;
  readonly now: EpochMillis;
}): Promise<EksToken> {
  const { clusterName, region, credentials, now } = args;
  const hostname = stsHostname(region);
  const signer = new SignatureV4({ credentials, region, service: 'sts', sha256: Sha256 });
  const presigned = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: hostname, [CLUSTER_ID_HEADER]: clusterName },
    },
    { expiresIn: PRESIGN_EXPIRES_SECONDS, signingDate: new Date(now) },
  );
  const query = Object.entries(presigned.query ?? {})
    .flatMap(([key, value]): [string, string][] =>
      value === null ? [] : (Array.isArray(value) ? value : [value]).map((v): [string, string] => [key, v]),
    )
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([key, value]) => `${uriEncode(key)}=${uriEncode(value)}`)
    .join('&');
  const url = `https://${hostname}/?${query}`;
  const reuseUntil = now + TOKEN_REUSE_WINDOW;
  const credentialsUsableUntil =
    credentials.expiration === undefined
      ? Infinity
      : credentials.expiration.getTime() - CREDENTIALS_EXPIRY_MARGIN;
  return {
    token: EKS_TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url'),
    refreshAt: Math.max(now, Math.min(reuseUntil, credentialsUsableUntil)),
  };
}

export interface EksTokenSourceOptions {
  readonly clusterName: string;
  readonly region: string;
  /** Usually `fromNodeProviderChain()` (@aws-sdk/credential-providers). */
  readonly credentials: AwsCredentialsProvider;
  readonly clock: Clock;
}

/** A cached, self-refreshing EKS token for one cluster. */
export interface EksTokenSource {
  /** The cached token, or a new one when the cache is due. Rejects when credentials cannot be resolved. */
  token(): Promise<string>;
}

export function createEksTokenSource(options: EksTokenSourceOptions): EksTokenSource {
  let cached: EksToken | undefined;
  let refreshing: Promise<EksToken> | undefined;
  const refresh = async (): Promise<EksToken> => {
    const credentials = await options.credentials();
    return createEksToken({
      clusterName: options.clusterName,
      region: options.region,
      credentials,
      now: options.clock.now(),
    });
  };
  return {
    async token() {
      if (cached !== undefined && options.clock.now() < cached.refreshAt) return cached.token;
      refreshing ??= refresh().finally(() => {
        refreshing = undefined;
      });
      cached = await refreshing;
      return cached.token;
    },
  };
}

function isEksUser(user: User): boolean {
  const provider: unknown = user.authProvider;
  return (
    typeof provider === 'object' &&
    provider !== null &&
    (provider as { name?: unknown }).name === EKS_AUTH_PROVIDER
  );
}

/**
 * A client-node Authenticator that puts the source's current token on every request of a KubeConfig
 * user whose auth-provider is {@link EKS_AUTH_PROVIDER}. client-node 1.4.0 asks its authenticators for
 * headers on each request (KubeConfig.applySecurityAuthentication), so a refreshed token is picked up
 * without rebuilding the client.
 */
export function eksTokenAuthenticator(source: EksTokenSource): Authenticator {
  return {
    isAuthProvider: isEksUser,
    // Typed here: the interface's option type involves the `ws` typings, which are not installed.
    async applyAuthentication(_user: User, opts: { headers?: OutgoingHttpHeaders }) {
      const token = await source.token();
      opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` };
    },
  };
}
