// The EKS token checked against the layout aws-iam-authenticator documents, with static credentials and a
// fixed clock (no network): prefix, base64url, the presigned STS URL and its SigV4 signature, recomputed
// here independently with node:crypto.
import { createHash, createHmac } from 'node:crypto';
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  CLUSTER_ID_HEADER,
  EKS_AUTH_PROVIDER,
  TOKEN_REUSE_WINDOW,
  createEksToken,
  createEksTokenSource,
  eksTokenAuthenticator,
  stsHostname,
  type AwsCredentials,
} from '../../../../shared/adapters/kubernetes/eksToken.js';

const T0 = Date.parse('2024-03-05T06:07:08Z');
const credentials: AwsCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};

function decode(token: string): URL {
  expect(token.startsWith('k8s-aws-v1.')).toBe(true);
  const payload = token.slice('k8s-aws-v1.'.length);
  // base64url alphabet, no padding.
  expect(payload).toMatch(/^[A-Za-z0-9_-]+$/);
  return new URL(Buffer.from(payload, 'base64url').toString('utf8'));
}

const sha256 = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const rfc3986 = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** SigV4 for a presigned GET (AWS General Reference, "Create a signed AWS API request"). */
function expectedSignature(url: URL, clusterName: string, secretAccessKey: string): string {
  const params = [...url.searchParams.entries()].filter(([k]) => k !== 'X-Amz-Signature');
  params.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const canonicalQuery = params.map(([k, v]) => `${rfc3986(k)}=${rfc3986(v)}`).join('&');
  const canonicalRequest = [
    'GET',
    '/',
    canonicalQuery,
    `host:${url.hostname}`,
    `${CLUSTER_ID_HEADER}:${clusterName}`,
    '',
    'host;x-k8s-aws-id',
    sha256(''),
  ].join('\n');
  const amzDate = url.searchParams.get('X-Amz-Date') ?? '';
  // X-Amz-Credential is <key id>/<date>/<region>/<service>/aws4_request.
  const [, date = '', region = '', service = ''] = (url.searchParams.get('X-Amz-Credential') ?? '').split(
    '/',
  );
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    `${date}/${region}/${service}/aws4_request`,
    sha256(canonicalRequest),
  ].join('\n');
  const kDate = hmac(`AWS4${secretAccessKey}`, date);
  const kSigning = hmac(hmac(hmac(kDate, region), service), 'aws4_request');
  return hmac(kSigning, stringToSign).toString('hex');
}

describe('createEksToken', () => {
  it('is k8s-aws-v1. + base64url (no padding) of the presigned GetCallerIdentity URL, in the documented layout', async () => {
    const { token } = await createEksToken({
      clusterName: 'prod',
      region: 'eu-west-1',
      credentials,
      now: T0,
    });
    const url = decode(token);
    const decoded = url.toString();
    expect(decoded).toMatch(
      new RegExp(
        '^https://sts\\.eu-west-1\\.amazonaws\\.com/\\?Action=GetCallerIdentity&Version=2011-06-15' +
          '&X-Amz-Algorithm=AWS4-HMAC-SHA256' +
          '&X-Amz-Credential=AKIDEXAMPLE%2F20240305%2Feu-west-1%2Fsts%2Faws4_request' +
          '&X-Amz-Date=20240305T060708Z' +
          '&X-Amz-Expires=60' +
          '&X-Amz-SignedHeaders=host%3Bx-k8s-aws-id' +
          '&X-Amz-Signature=[0-9a-f]{64}$',
      ),
    );
  });

  it('signs host and x-k8s-aws-id, and the signature verifies when recomputed', async () => {
    const { token } = await createEksToken({
      clusterName: 'prod',
      region: 'eu-west-1',
      credentials,
      now: T0,
    });
    const url = decode(token);
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toEqual(['host', 'x-k8s-aws-id']);
    expect(url.searchParams.get('X-Amz-Signature')).toBe(
      expectedSignature(url, 'prod', credentials.secretAccessKey),
    );
  });

  it('binds the token to the cluster: another cluster name gives another signature', async () => {
    const a = decode(
      (await createEksToken({ clusterName: 'a', region: 'eu-west-1', credentials, now: T0 })).token,
    );
    const b = decode(
      (await createEksToken({ clusterName: 'b', region: 'eu-west-1', credentials, now: T0 })).token,
    );
    expect(a.searchParams.get('X-Amz-Signature')).not.toBe(b.searchParams.get('X-Amz-Signature'));
    expect(a.searchParams.get('X-Amz-Signature')).not.toBe(
      expectedSignature(a, 'b', credentials.secretAccessKey),
    );
  });

  it('carries the session token of temporary credentials, signed', async () => {
    const temporary = { ...credentials, sessionToken: 'FwoGZXIvYXdzE/session+token==' };
    const url = decode(
      (await createEksToken({ clusterName: 'prod', region: 'us-east-1', credentials: temporary, now: T0 }))
        .token,
    );
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe(temporary.sessionToken);
    expect(url.searchParams.get('X-Amz-Signature')).toBe(
      expectedSignature(url, 'prod', credentials.secretAccessKey),
    );
    // The signature stays the last parameter.
    expect([...url.searchParams.keys()].at(-1)).toBe('X-Amz-Signature');
  });

  it('uses the regional STS endpoint, with the China partition domain for cn- regions', () => {
    expect(stsHostname('us-west-2')).toBe('sts.us-west-2.amazonaws.com');
    expect(stsHostname('cn-north-1')).toBe('sts.cn-north-1.amazonaws.com.cn');
  });

  it('is reused for 14 minutes, or until one minute before the credentials expire when that is sooner', async () => {
    const lasting = await createEksToken({ clusterName: 'prod', region: 'eu-west-1', credentials, now: T0 });
    expect(lasting.refreshAt).toBe(T0 + 14 * 60_000);
    const expiring = await createEksToken({
      clusterName: 'prod',
      region: 'eu-west-1',
      credentials: { ...credentials, expiration: new Date(T0 + 5 * 60_000) },
      now: T0,
    });
    expect(expiring.refreshAt).toBe(T0 + 4 * 60_000);
  });
});

describe('createEksTokenSource', () => {
  function setup() {
    let now = T0;
    let resolutions = 0;
    const source = createEksTokenSource({
      clusterName: 'prod',
      region: 'eu-west-1',
      credentials: () => {
        resolutions++;
        return Promise.resolve(credentials);
      },
      clock: { now: () => now },
    });
    return {
      source,
      advance: (ms: number) => {
        now += ms;
      },
      resolutions: () => resolutions,
    };
  }
  const amzDate = (token: string) => decode(token).searchParams.get('X-Amz-Date');

  it('reuses the cached token within the window and signs a new one after it', async () => {
    const { source, advance, resolutions } = setup();
    const first = await source.token();
    advance(TOKEN_REUSE_WINDOW - 1);
    expect(await source.token()).toBe(first);
    expect(resolutions()).toBe(1);
    advance(1);
    const second = await source.token();
    expect(second).not.toBe(first);
    expect(amzDate(second)).toBe('20240305T062108Z');
    expect(resolutions()).toBe(2);
  });

  it('shares one refresh between concurrent requests', async () => {
    const { source, resolutions } = setup();
    const tokens = await Promise.all([source.token(), source.token(), source.token()]);
    expect(new Set(tokens).size).toBe(1);
    expect(resolutions()).toBe(1);
  });

  it('surfaces a credentials failure, and tries again on the next request', async () => {
    let fail = true;
    const source = createEksTokenSource({
      clusterName: 'prod',
      region: 'eu-west-1',
      credentials: () => (fail ? Promise.reject(new Error('no credentials')) : Promise.resolve(credentials)),
      clock: { now: () => T0 },
    });
    await expect(source.token()).rejects.toThrow('no credentials');
    fail = false;
    await expect(source.token()).resolves.toMatch(/^k8s-aws-v1\./);
  });
});

describe('eksTokenAuthenticator', () => {
  it('puts the current token on every request of a KubeConfig user with the nlc-eks-token auth provider', async () => {
    let now = T0;
    const source = createEksTokenSource({
      clusterName: 'prod',
      region: 'eu-west-1',
      credentials: () => Promise.resolve(credentials),
      clock: { now: () => now },
    });
    const kc = new KubeConfig();
    kc.addAuthenticator(eksTokenAuthenticator(source));
    kc.loadFromOptions({
      clusters: [{ name: 'prod', server: 'https://example.eks.amazonaws.com', skipTLSVerify: false }],
      users: [{ name: 'nlc', authProvider: { name: EKS_AUTH_PROVIDER, config: {} } }],
      contexts: [{ name: 'prod', cluster: 'prod', user: 'nlc' }],
      currentContext: 'prod',
    });
    // What every API call does before sending (KubeConfig is the generated client's auth method).
    const authorize = async () => {
      const request = new RequestContext('https://example.eks.amazonaws.com/api/v1/nodes', HttpMethod.GET);
      await kc.applySecurityAuthentication(request);
      return request.getHeaders().Authorization;
    };
    const header = await authorize();
    expect(header).toBe(`Bearer ${await source.token()}`);
    now += TOKEN_REUSE_WINDOW;
    const refreshed = await authorize();
    expect(refreshed).toMatch(/^Bearer k8s-aws-v1\./);
    expect(refreshed).not.toBe(header);
  });

  it('does not answer for other users', () => {
    const authenticator = eksTokenAuthenticator({ token: () => Promise.resolve('t') });
    expect(authenticator.isAuthProvider({ name: 'u', token: 'static' })).toBe(false);
    expect(authenticator.isAuthProvider({ name: 'u', authProvider: { name: 'oidc' } })).toBe(false);
    expect(authenticator.isAuthProvider({ name: 'u', authProvider: { name: EKS_AUTH_PROVIDER } })).toBe(true);
  });
});
