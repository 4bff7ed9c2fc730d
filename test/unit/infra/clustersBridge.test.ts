// infra/serverless/bridge.cjs turns the stage parameters `clusters` and `clusterConfig` into the
// functions' NLC_CLUSTERS and the IAM statements each cluster's own credentials need, refusing at
// package time what a cold start would refuse (with the functions' own schema).
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';

interface Bridge {
  clustersDocumentFor(params: Record<string, unknown>): string;
  clusterCredentialStatements(json: string): unknown[];
}
const bridge = createRequire(import.meta.url)('../../../infra/serverless/bridge.cjs') as Bridge;

const stage = {
  clusters: 'prod',
  cluster: 'prod',
  clusterConfig: '',
  region: 'eu-west-1',
  eksClusterName: 'prod',
  kubeconfigSecretArn: '',
  kubeconfigParameterArn: '',
  kubeconfigContext: '',
};
const fails = (params: Record<string, unknown>): string => {
  try {
    bridge.clustersDocumentFor({ ...stage, ...params });
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return '';
};

// The first check loads the functions' TypeScript through tsx (seconds on a busy machine).
beforeAll(() => {
  bridge.clustersDocumentFor({
    ...stage,
    clusters: 'prod,warm',
    clusterConfig: '{"warm":{"credentials":"eks"}}',
  });
}, 120_000);

describe('the clusters document', () => {
  it('is empty for a single-cluster stage: it serves `cluster` as before', () => {
    expect(bridge.clustersDocumentFor(stage)).toBe('');
  });

  it('names every cluster of `clusters`, with its configuration or none', () => {
    const json = bridge.clustersDocumentFor({
      ...stage,
      clusters: 'prod, eu ,us',
      clusterConfig: '{"eu":{"credentials":"eks"},"us":{"credentials":"eks","mode":"shadow"}}',
    });
    expect(JSON.parse(json)).toEqual({
      prod: {},
      eu: { credentials: 'eks' },
      us: { credentials: 'eks', mode: 'shadow' },
    });
  });

  it('fits 50 EKS clusters in Lambda’s 4 KB of variables, and refuses what would not', () => {
    const names = Array.from({ length: 50 }, (_, i) => `cluster-${String(i).padStart(2, '0')}`);
    const config = Object.fromEntries(names.map((n) => [n, { credentials: 'eks' }]));
    const json = bridge.clustersDocumentFor({
      ...stage,
      clusters: names.join(','),
      clusterConfig: JSON.stringify(config),
    });
    expect(json.length).toBeLessThanOrEqual(2500);
    const big = Object.fromEntries(
      names.map((n) => [n, { credentials: { kind: 'eks', clusterName: `${n}-in-eks-with-a-long-name` } }]),
    );
    expect(fails({ clusters: names.join(','), clusterConfig: JSON.stringify(big) })).toMatch(
      /^the clusters document \(NLC_CLUSTERS\) would be \d+ bytes, over 2500/,
    );
  });

  it('refuses, naming the parameter, the cluster and the field', () => {
    expect(fails({ clusters: 'a', clusterConfig: '{"b":{}}' })).toBe(
      'param clusterConfig: b not in the clusters parameter (a): add it there too, so the rules accept its events',
    );
    expect(fails({ clusterConfig: '[1]' })).toBe(
      'param clusterConfig: expected a JSON object of clusters by name, such as {"prod":{"credentials":"eks"}}',
    );
    expect(
      fails({
        clusters: 'a,b',
        clusterConfig: '{"b":{"credentials":"eks","settings":{"nodeEvictionRate":"-1"}}}',
      }),
    ).toBe(
      'param clusterConfig: Invalid configuration (1 problem):\n' +
        '- NLC_CLUSTERS.b.settings.nodeEvictionRate: expected a number of nodes per second, 0 or more (like 0.1), got "-1"',
    );
  });

  it('grants exactly each cluster’s own credentials', () => {
    const json = JSON.stringify({
      a: { credentials: 'eks' },
      b: { credentials: { kind: 'eks', clusterName: 'bee', region: 'us-east-2' } },
      c: { credentials: { kind: 'kubeconfigSecret', secretId: 'nlc/c' } },
      d: { credentials: { kind: 'kubeconfigParameter', name: 'arn:aws:ssm:eu-west-1:1:parameter/nlc/d' } },
      e: {},
    });
    const sub = (text: string) => ({ 'Fn::Sub': text });
    expect(bridge.clusterCredentialStatements(json)).toEqual([
      {
        Effect: 'Allow',
        Action: 'eks:DescribeCluster',
        Resource: [
          sub('arn:${AWS::Partition}:eks:${AWS::Region}:${AWS::AccountId}:cluster/a'),
          sub('arn:${AWS::Partition}:eks:us-east-2:${AWS::AccountId}:cluster/bee'),
        ],
      },
      {
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: [
          sub('arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:nlc/c-??????'),
        ],
      },
      { Effect: 'Allow', Action: 'ssm:GetParameter', Resource: ['arn:aws:ssm:eu-west-1:1:parameter/nlc/d'] },
    ]);
    expect(bridge.clusterCredentialStatements('')).toEqual([]);
  });
});
