import { describe, expect, it } from 'vitest';
import {
  loadClusterAuth,
  ownedEnvVars,
  parseClusterAuth,
} from '../../../../shared/adapters/kubernetes/authConfig.js';
import { loadConfig } from '../../../../shared/config.js';
import { ConfigError, type ConfigIssue } from '../../../../shared/errors.js';

function issuesOf(run: () => unknown): readonly ConfigIssue[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadClusterAuth', () => {
  it.each([
    { name: 'nothing set: no setting (the caller picks its default)', env: {}, want: undefined },
    {
      name: 'empty values count as unset',
      env: { NLC_KUBECONFIG: ' ', NLC_EKS_CLUSTER_NAME: '' },
      want: undefined,
    },
    {
      name: 'a kubeconfig file',
      env: { NLC_KUBECONFIG: '/etc/nlc/kubeconfig' },
      want: { kind: 'kubeconfigFile', path: '/etc/nlc/kubeconfig' },
    },
    {
      name: 'a kubeconfig file with a context',
      env: { NLC_KUBECONFIG: '/etc/nlc/kubeconfig', NLC_KUBECONFIG_CONTEXT: 'staging' },
      want: { kind: 'kubeconfigFile', path: '/etc/nlc/kubeconfig', context: 'staging' },
    },
    {
      name: 'a kubeconfig in Secrets Manager',
      env: { NLC_KUBECONFIG_SECRET_ID: 'prod/kubeconfig' },
      want: { kind: 'kubeconfigSecret', secretId: 'prod/kubeconfig' },
    },
    {
      name: 'a kubeconfig in SSM',
      env: { NLC_KUBECONFIG_PARAMETER: '/nlc/prod/kubeconfig' },
      want: { kind: 'kubeconfigParameter', name: '/nlc/prod/kubeconfig' },
    },
    {
      name: 'EKS, region from AWS_REGION',
      env: { NLC_EKS_CLUSTER_NAME: 'prod-1', AWS_REGION: 'eu-west-1' },
      want: { kind: 'eks', clusterName: 'prod-1', region: 'eu-west-1' },
    },
    {
      name: 'the JSON form',
      env: {
        NLC_CLUSTER_AUTH:
          '{"kind":"kubeconfigSecret","secretId":"arn:aws:secretsmanager:eu-west-1:1:secret:k","context":"c"}',
      },
      want: {
        kind: 'kubeconfigSecret',
        secretId: 'arn:aws:secretsmanager:eu-west-1:1:secret:k',
        context: 'c',
      },
    },
    {
      name: 'the JSON form ignores AWS_REGION (the region is in the JSON)',
      env: {
        NLC_CLUSTER_AUTH: '{"kind":"eks","clusterName":"c","region":"us-east-1"}',
        AWS_REGION: 'eu-west-1',
      },
      want: { kind: 'eks', clusterName: 'c', region: 'us-east-1' },
    },
  ])('$name', ({ env, want }) => {
    expect(loadClusterAuth(env)).toEqual(want);
  });

  it.each([
    {
      name: 'two sources',
      env: { NLC_KUBECONFIG: '/k', NLC_EKS_CLUSTER_NAME: 'c', AWS_REGION: 'eu-west-1' },
      want: [
        {
          path: 'NLC_EKS_CLUSTER_NAME',
          message: 'set only one cluster credentials source; NLC_KUBECONFIG is set too',
        },
      ],
    },
    {
      name: 'EKS without a region',
      env: { NLC_EKS_CLUSTER_NAME: 'prod' },
      want: [
        { path: 'AWS_REGION', message: 'required with NLC_EKS_CLUSTER_NAME: the region of the EKS cluster' },
      ],
    },
    {
      name: 'EKS with a bad cluster name and region',
      env: { NLC_EKS_CLUSTER_NAME: '-prod', AWS_REGION: 'Europe' },
      want: [
        {
          path: 'NLC_EKS_CLUSTER_NAME',
          message:
            'expected an EKS cluster name (1-100 letters, digits, "-" or "_", starting with a letter or digit)',
        },
        { path: 'AWS_REGION', message: 'expected an AWS region such as "eu-west-1"' },
      ],
    },
    {
      name: 'a context without a kubeconfig source',
      env: { NLC_KUBECONFIG_CONTEXT: 'c' },
      want: [
        {
          path: 'NLC_KUBECONFIG_CONTEXT',
          message: 'only used with NLC_KUBECONFIG, NLC_KUBECONFIG_SECRET_ID or NLC_KUBECONFIG_PARAMETER',
        },
      ],
    },
    {
      name: 'a context with EKS',
      env: { NLC_EKS_CLUSTER_NAME: 'c', AWS_REGION: 'eu-west-1', NLC_KUBECONFIG_CONTEXT: 'x' },
      want: [{ path: 'NLC_KUBECONFIG_CONTEXT', message: 'EKS credentials have no kubeconfig context' }],
    },
    {
      name: 'JSON that does not parse',
      env: { NLC_CLUSTER_AUTH: '{kind: eks}' },
      want: [
        {
          path: 'NLC_CLUSTER_AUTH',
          message: 'expected a JSON object such as {"kind":"eks",…}, got invalid JSON',
        },
      ],
    },
    {
      name: 'JSON that is not an object',
      env: { NLC_CLUSTER_AUTH: '"eks"' },
      want: [{ path: 'NLC_CLUSTER_AUTH', message: 'expected a JSON object with a "kind" field' }],
    },
    {
      name: 'JSON with an unknown kind',
      env: { NLC_CLUSTER_AUTH: '{"kind":"token"}' },
      want: [
        {
          path: 'NLC_CLUSTER_AUTH.kind',
          message: 'expected kind to be one of kubeconfigFile, kubeconfigSecret, kubeconfigParameter, eks',
        },
      ],
    },
    {
      name: 'JSON with a missing field and an unknown one',
      env: { NLC_CLUSTER_AUTH: '{"kind":"eks","clusterName":"c","zone":"a"}' },
      want: [
        { path: 'NLC_CLUSTER_AUTH.region', message: expect.any(String) as string },
        { path: 'NLC_CLUSTER_AUTH.zone', message: 'unknown field' },
      ],
    },
  ])('rejects $name, naming the variable', ({ env, want }) => {
    expect(issuesOf(() => loadClusterAuth(env))).toEqual(want);
  });
});

describe('parseClusterAuth', () => {
  it('names fields under the given path', () => {
    expect(issuesOf(() => parseClusterAuth({ kind: 'kubeconfigFile', path: '' }, 'cluster.auth'))).toEqual([
      { path: 'cluster.auth.path', message: 'expected a file path, got an empty string' },
    ]);
  });
});

describe('ownedEnvVars', () => {
  it('lists the NLC_ variables read here, so loadConfig can skip them', () => {
    expect([...ownedEnvVars].sort()).toEqual([
      'NLC_CLUSTER_AUTH',
      'NLC_EKS_CLUSTER_NAME',
      'NLC_KUBECONFIG',
      'NLC_KUBECONFIG_CONTEXT',
      'NLC_KUBECONFIG_PARAMETER',
      'NLC_KUBECONFIG_SECRET_ID',
    ]);
    const env = { NLC_KUBECONFIG: '/k', NLC_DRY_RUN: 'true' };
    expect(() => loadConfig(env)).toThrow(/NLC_KUBECONFIG: unknown setting/);
    expect(loadConfig(env, {}, { allowEnv: ownedEnvVars }).dryRun).toBe(true);
  });
});

describe('a credential pasted into the setting', () => {
  const token = 'eyJhbGciOiJSUzI1NiJ9.pasted-service-account-token-5f3a9c';
  const errorOf = (run: () => unknown): ConfigError => {
    try {
      run();
    } catch (error) {
      if (error instanceof ConfigError) return error;
      throw error;
    }
    throw new Error('expected a ConfigError');
  };

  it.each([
    ['as an unknown field', { NLC_CLUSTER_AUTH: JSON.stringify({ kind: 'eks', token }) }],
    ['as a value of the wrong kind', { NLC_CLUSTER_AUTH: JSON.stringify({ kind: token }) }],
    ['as a too long secret id', { NLC_KUBECONFIG_SECRET_ID: `${token}${'x'.repeat(2048)}` }],
    ['as an EKS cluster name', { NLC_EKS_CLUSTER_NAME: `bad name ${token}`, AWS_REGION: 'eu-west-1' }],
    ['in JSON that does not parse', { NLC_CLUSTER_AUTH: `{"kind":"eks","token":"${token}"` }],
  ])('%s: the error names the variable and the field, never the value', (_how, env) => {
    const error = errorOf(() => loadClusterAuth(env));
    expect(error.issues.length).toBeGreaterThan(0);
    expect(`${error.message}\n${JSON.stringify(error.issues)}`).not.toContain(token.slice(0, 16));
  });
});
