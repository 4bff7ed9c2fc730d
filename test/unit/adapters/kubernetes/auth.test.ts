// Building the KubeConfig from each kind of cluster credentials. The AWS services are mocked with
// aws-sdk-client-mock (no AWS account exists for tests; the mock stands in for the service only).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { Logger } from '@aws-lambda-powertools/logger';
import { CoreV1Api, HttpMethod, RequestContext, Watch, type KubeConfig } from '@kubernetes/client-node';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadKubeConfig } from '../../../../shared/adapters/kubernetes/auth.js';
import { ClusterAuthError } from '../../../../shared/errors.js';
import { everythingSaid } from '../../../helpers/secretLeaks.js';

const region = 'eu-west-1';
const awsCredentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };
const kubeconfigYaml = (server: string, token: string) => `
apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: { server: ${server}, insecure-skip-tls-verify: true }
- name: b
  cluster: { server: https://b.example:6443, insecure-skip-tls-verify: true }
users:
- name: u
  user: { token: ${token} }
contexts:
- name: ctx-a
  context: { cluster: a, user: u }
- name: ctx-b
  context: { cluster: b, user: u }
current-context: ctx-a
`;

async function authorizationOf(kc: KubeConfig): Promise<string | undefined> {
  const request = new RequestContext(`${kc.getCurrentCluster()?.server ?? ''}/api/v1/nodes`, HttpMethod.GET);
  await kc.applySecurityAuthentication(request);
  return request.getHeaders().Authorization;
}

async function authError(run: Promise<unknown>): Promise<ClusterAuthError> {
  try {
    await run;
  } catch (error) {
    if (error instanceof ClusterAuthError) return error;
    throw error;
  }
  throw new Error('expected a ClusterAuthError');
}

const secretsManager = mockClient(SecretsManagerClient);
const ssm = mockClient(SSMClient);
const eks = mockClient(EKSClient);
afterEach(() => {
  secretsManager.reset();
  ssm.reset();
  eks.reset();
});

describe('kubeconfigFile', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'nlc-auth-'));
    writeFileSync(join(dir, 'config'), kubeconfigYaml('http://127.0.0.1:1', 'file-token'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads the file and its current context', async () => {
    const { kubeConfig } = await loadKubeConfig({ kind: 'kubeconfigFile', path: join(dir, 'config') });
    expect(kubeConfig.getCurrentCluster()?.server).toBe('http://127.0.0.1:1');
    expect(await authorizationOf(kubeConfig)).toBe('Bearer file-token');
  });

  it('selects the given context', async () => {
    const { kubeConfig } = await loadKubeConfig({
      kind: 'kubeconfigFile',
      path: join(dir, 'config'),
      context: 'ctx-b',
    });
    expect(kubeConfig.getCurrentCluster()?.server).toBe('https://b.example:6443');
  });

  it('names the file and lists the contexts when the context is unknown', async () => {
    const error = await authError(
      loadKubeConfig({ kind: 'kubeconfigFile', path: join(dir, 'config'), context: 'prod' }),
    );
    expect(error.message).toBe(
      `cluster credentials from kubeconfig file ${JSON.stringify(join(dir, 'config'))}: has no context "prod" (contexts: ctx-a, ctx-b)`,
    );
  });

  it('names the file when it cannot be read', async () => {
    const error = await authError(loadKubeConfig({ kind: 'kubeconfigFile', path: join(dir, 'missing') }));
    expect(error.message).toMatch(
      /^cluster credentials from kubeconfig file ".*missing": cannot be read \(.*ENOENT/,
    );
  });
});

describe('kubeconfigSecret', () => {
  const client = new SecretsManagerClient({ region, credentials: awsCredentials });

  it('reads the kubeconfig from SecretString', async () => {
    secretsManager
      .on(GetSecretValueCommand, { SecretId: 'prod/kubeconfig' })
      .resolves({ SecretString: kubeconfigYaml('https://a.example', 'secret-token') });
    const { kubeConfig } = await loadKubeConfig(
      { kind: 'kubeconfigSecret', secretId: 'prod/kubeconfig' },
      { secretsManager: client },
    );
    expect(kubeConfig.getCurrentCluster()?.server).toBe('https://a.example');
    expect(await authorizationOf(kubeConfig)).toBe('Bearer secret-token');
  });

  it('reads SecretBinary as UTF-8 and honours the context', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({
      SecretBinary: new TextEncoder().encode(kubeconfigYaml('https://a.example', 't')),
    });
    const { kubeConfig } = await loadKubeConfig(
      { kind: 'kubeconfigSecret', secretId: 'k', context: 'ctx-b' },
      { secretsManager: client },
    );
    expect(kubeConfig.getCurrentCluster()?.name).toBe('b');
  });

  it('names the secret when it does not exist', async () => {
    secretsManager.on(GetSecretValueCommand).rejects(
      new ResourceNotFoundException({
        message: "Secrets Manager can't find the specified secret.",
        $metadata: {},
      }),
    );
    const error = await authError(
      loadKubeConfig({ kind: 'kubeconfigSecret', secretId: 'prod/kubeconfig' }, { secretsManager: client }),
    );
    expect(error.message).toBe(
      'cluster credentials from secret "prod/kubeconfig": GetSecretValue failed ' +
        "(ResourceNotFoundException: Secrets Manager can't find the specified secret.)",
    );
    expect(error.source).toBe('secret "prod/kubeconfig"');
  });

  it('rejects an empty secret and text that is not a kubeconfig', async () => {
    secretsManager
      .on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: '' })
      .resolvesOnce({ SecretString: 'just text' });
    await expect(
      loadKubeConfig({ kind: 'kubeconfigSecret', secretId: 'k' }, { secretsManager: client }),
    ).rejects.toThrow('cluster credentials from secret "k": holds no kubeconfig (empty secret)');
    await expect(
      loadKubeConfig({ kind: 'kubeconfigSecret', secretId: 'k' }, { secretsManager: client }),
    ).rejects.toThrow(/^cluster credentials from secret "k": (not a readable kubeconfig|names no cluster)/);
  });
});

describe('kubeconfigParameter', () => {
  const client = new SSMClient({ region, credentials: awsCredentials });

  it('reads the parameter with decryption', async () => {
    ssm.on(GetParameterCommand, { Name: '/nlc/kubeconfig', WithDecryption: true }).resolves({
      Parameter: { Type: 'SecureString', Value: kubeconfigYaml('https://a.example', 'ssm-token') },
    });
    const { kubeConfig } = await loadKubeConfig(
      { kind: 'kubeconfigParameter', name: '/nlc/kubeconfig' },
      { ssm: client },
    );
    expect(await authorizationOf(kubeConfig)).toBe('Bearer ssm-token');
    expect(ssm.commandCalls(GetParameterCommand)[0]?.args[0].input).toEqual({
      Name: '/nlc/kubeconfig',
      WithDecryption: true,
    });
  });

  it.each(['String', 'StringList'] as const)(
    'refuses a %s parameter, naming it and not its value: a kubeconfig must be a SecureString',
    async (type) => {
      const token = 'plain-text-token-in-a-string-parameter';
      ssm.on(GetParameterCommand).resolves({
        Parameter: { Name: '/nlc/kubeconfig', Type: type, Value: kubeconfigYaml('https://a.example', token) },
      });
      const error = await authError(
        loadKubeConfig({ kind: 'kubeconfigParameter', name: '/nlc/kubeconfig' }, { ssm: client }),
      );
      expect(error.message).toBe(
        `cluster credentials from SSM parameter "/nlc/kubeconfig": is a ${type}, not a SecureString: ` +
          'store the kubeconfig as a SecureString (aws ssm put-parameter --type SecureString); its value was not used',
      );
      expect(everythingSaid(error)).not.toContain(token);
    },
  );

  it('names the parameter when the call fails', async () => {
    ssm.on(GetParameterCommand).rejects(new Error('AccessDenied'));
    await expect(
      loadKubeConfig({ kind: 'kubeconfigParameter', name: '/nlc/kubeconfig' }, { ssm: client }),
    ).rejects.toThrow(
      'cluster credentials from SSM parameter "/nlc/kubeconfig": GetParameter failed (Error: AccessDenied)',
    );
  });
});

describe('eks', () => {
  const client = new EKSClient({ region, credentials: awsCredentials });
  const caData = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString(
    'base64',
  );

  it('takes the endpoint and CA from DescribeCluster and authenticates with a fresh EKS token', async () => {
    eks.on(DescribeClusterCommand, { name: 'prod' }).resolves({
      cluster: {
        endpoint: 'https://ABC.gr7.eu-west-1.eks.amazonaws.com',
        certificateAuthority: { data: caData },
      },
    });
    const { kubeConfig, eksTokens } = await loadKubeConfig(
      { kind: 'eks', clusterName: 'prod', region },
      {
        eks: client,
        credentials: () => Promise.resolve(awsCredentials),
        clock: { now: () => Date.parse('2024-01-01T00:00:00Z') },
      },
    );
    const cluster = kubeConfig.getCurrentCluster();
    expect(cluster?.server).toBe('https://ABC.gr7.eu-west-1.eks.amazonaws.com');
    expect(cluster?.caData).toBe(caData);
    expect(cluster?.skipTLSVerify).toBe(false);
    const authorization = await authorizationOf(kubeConfig);
    expect(authorization).toBe(`Bearer ${(await eksTokens?.token()) ?? ''}`);
    const url = Buffer.from((authorization ?? '').slice('Bearer k8s-aws-v1.'.length), 'base64url').toString();
    expect(url).toMatch(
      /^https:\/\/sts\.eu-west-1\.amazonaws\.com\/\?Action=GetCallerIdentity&Version=2011-06-15&/,
    );
  });

  it('names the cluster when it has no endpoint yet, or DescribeCluster fails', async () => {
    eks
      .on(DescribeClusterCommand)
      .resolvesOnce({ cluster: { status: 'CREATING' } })
      .rejectsOnce(new Error('ResourceNotFoundException'));
    const deps = { eks: client, credentials: () => Promise.resolve(awsCredentials) };
    await expect(loadKubeConfig({ kind: 'eks', clusterName: 'prod', region }, deps)).rejects.toThrow(
      'cluster credentials from EKS cluster "prod" in eu-west-1: has no API endpoint yet (is the cluster ACTIVE?)',
    );
    await expect(loadKubeConfig({ kind: 'eks', clusterName: 'prod', region }, deps)).rejects.toThrow(
      'cluster credentials from EKS cluster "prod" in eu-west-1: DescribeCluster failed (Error: ResourceNotFoundException)',
    );
  });
});

describe('no credential reaches an error, its cause chain or a log line', () => {
  const TOKEN = 'tok-3fa9c1d2e4b5a6978877665544332211';
  // The line after the token is badly indented: js-yaml's message quotes the lines before it.
  const malformedYaml = `users:\n- name: u\n  user:\n    token: ${TOKEN}\n   bad: indentation\n`;
  // JSON is YAML to client-node; a truncated file quotes its last line.
  const malformedJson = `{"users":[{"name":"u","user":{"token":"${TOKEN}"}}],"clusters":[{`;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'nlc-auth-leaks-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const smClient = new SecretsManagerClient({ region, credentials: awsCredentials });
  const ssmClient = new SSMClient({ region, credentials: awsCredentials });
  const paths = {
    file: (text: string) => {
      const path = join(dir, 'config');
      writeFileSync(path, text);
      return loadKubeConfig({ kind: 'kubeconfigFile', path });
    },
    secret: (text: string) => {
      secretsManager.on(GetSecretValueCommand).resolves({ SecretString: text });
      return loadKubeConfig({ kind: 'kubeconfigSecret', secretId: 'k' }, { secretsManager: smClient });
    },
    parameter: (text: string) => {
      ssm.on(GetParameterCommand).resolves({ Parameter: { Type: 'SecureString', Value: text } });
      return loadKubeConfig({ kind: 'kubeconfigParameter', name: '/k' }, { ssm: ssmClient });
    },
  };

  it.each(
    Object.keys(paths).flatMap((path) => [
      [path, 'YAML', malformedYaml],
      [path, 'JSON', malformedJson],
    ]) as [keyof typeof paths, string, string][],
  )(
    'a malformed kubeconfig (%s, %s) is reported by line and column, without its text',
    async (path, _format, text) => {
      const error = await authError(paths[path](text));
      expect(error.message).toMatch(
        /: not a readable kubeconfig \(YAMLException: .* at line \d+, column \d+ /,
      );
      expect(everythingSaid(error)).not.toContain(TOKEN.slice(0, 12));
      expect(everythingSaid(error)).not.toContain(TOKEN.slice(-12));
    },
  );

  it('an SDK error keeps its name and message, never the raw response it holds', async () => {
    const sdkError = Object.assign(
      new Error('Deserialization error: to see the raw response, inspect the hidden field {error}.$response'),
      { name: 'SerializationException', $response: { body: `{"SecretString":"${TOKEN}"}` } },
    );
    secretsManager.on(GetSecretValueCommand).rejects(sdkError);
    const error = await authError(
      loadKubeConfig({ kind: 'kubeconfigSecret', secretId: 'k' }, { secretsManager: smClient }),
    );
    expect(error.message).toBe(
      'cluster credentials from secret "k": GetSecretValue failed (SerializationException: Deserialization ' +
        'error: to see the raw response, inspect the hidden field {error}.$response)',
    );
    expect(everythingSaid(error)).not.toContain(TOKEN);
  });

  /** A kubeconfig whose user's exec plugin is this Node running `script`. */
  function execKubeconfig(script: string): string {
    return JSON.stringify({
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [
        { name: 'u', user: { exec: { command: process.execPath, args: ['-e', script], apiVersion: 'v1' } } },
      ],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    });
  }

  it.each([
    [
      'output that is not JSON (the parse error quotes it)',
      `process.stdout.write('{"status":{"token":"${TOKEN}"')`,
    ],
    [
      'a failure whose stderr holds a token',
      `process.stderr.write('refresh failed: {"access_token":"${TOKEN}"}'); process.exit(1)`,
    ],
  ])('an exec plugin with %s fails the request with a redacted ClusterAuthError', async (_what, script) => {
    const { kubeConfig } = await paths.secret(execKubeconfig(script));
    const error = await authError(authorizationOf(kubeConfig));
    expect(error.message).toMatch(
      /^cluster credentials from kubeconfig user "u": cannot authenticate a request \(/,
    );
    expect(everythingSaid(error)).not.toContain(TOKEN);
  });

  it('the API clients and watches the adapters make fail the same way, before any request is sent', async () => {
    const script = `process.stdout.write('{"status":{"token":"${TOKEN}"')`;
    const { kubeConfig } = await paths.secret(execKubeconfig(script));
    const list = kubeConfig.makeApiClient(CoreV1Api).listNode();
    await expect(list).rejects.toBeInstanceOf(ClusterAuthError);
    await list.catch((error: unknown) => {
      expect(everythingSaid(error)).not.toContain(TOKEN);
    });
    const watch = new Watch(kubeConfig).watch(
      '/api/v1/nodes',
      {},
      () => undefined,
      () => undefined,
    );
    await expect(watch).rejects.toBeInstanceOf(ClusterAuthError);
  });

  it('the EKS path redacts a failed credentials lookup and a failed DescribeCluster', async () => {
    const secretKey = 'Qw3rTy7uIoP9aSdF0gHjK1lZxCvBnM2qWeRtYuI4';
    eks
      .on(DescribeClusterCommand)
      .rejectsOnce(
        Object.assign(new Error('UnrecognizedClientException'), { $response: { body: secretKey } }),
      );
    const failing = { eks: new EKSClient({ region, credentials: awsCredentials }) };
    const describeError = await authError(
      loadKubeConfig({ kind: 'eks', clusterName: 'prod', region }, failing),
    );
    expect(everythingSaid(describeError)).not.toContain(secretKey);

    eks.on(DescribeClusterCommand).resolves({
      cluster: {
        endpoint: 'https://ABC.gr7.eu-west-1.eks.amazonaws.com',
        certificateAuthority: { data: 'Q0E=' },
      },
    });
    const { kubeConfig } = await loadKubeConfig(
      { kind: 'eks', clusterName: 'prod', region },
      {
        eks: failing.eks,
        credentials: () => Promise.reject(new Error(`profile broken: aws_secret_access_key = ${secretKey}`)),
      },
    );
    const error = await authError(authorizationOf(kubeConfig));
    expect(error.message).toBe(
      'cluster credentials from kubeconfig user "prod-nlc": cannot authenticate a request ' +
        '(Error: profile broken: aws_secret_access_key = [REDACTED])',
    );
    expect(everythingSaid(error)).not.toContain(secretKey);
  });

  it('a Powertools log line of the error holds no credential', async () => {
    const error = await authError(paths.secret(malformedYaml));
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      // Error level goes to stderr.
      new Logger({ serviceName: 'nlc-test' }).error('cold start failed', error);
    } finally {
      spy.mockRestore();
    }
    expect(lines.join('')).toContain('not a readable kubeconfig');
    expect(lines.join('')).not.toContain(TOKEN.slice(0, 12));
  });
});
