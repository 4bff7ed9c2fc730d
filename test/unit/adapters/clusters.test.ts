// The served clusters (shared/adapters/clusters.ts): NLC_CLUSTERS gives each cluster its own settings,
// mode and credentials; without it the stage serves NLC_CLUSTER alone, as before. Every bad field is
// named with its cluster, before any I/O.
import { describe, expect, it } from 'vitest';
import { loadServedClusters } from '../../../shared/adapters/clusters.js';
import { ownedEnvVars } from '../../../shared/adapters/runtime.js';
import { loadConfig } from '../../../shared/config.js';
import { ConfigError } from '../../../shared/errors.js';

const stage = {
  AWS_REGION: 'eu-west-1',
  NLC_CLUSTER: 'prod',
  NLC_NODE_EVICTION_RATE: '0.2',
  NLC_EKS_CLUSTER_NAME: 'prod-eks',
} as const;

function served(env: Readonly<Record<string, string | undefined>>) {
  return loadServedClusters(env, loadConfig(env, {}, { allowEnv: ownedEnvVars }), ownedEnvVars);
}

function issuesOf(env: Readonly<Record<string, string | undefined>>): string[] {
  try {
    served(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

describe('loadServedClusters', () => {
  it('without NLC_CLUSTERS: NLC_CLUSTER alone, with the stage-wide settings and credentials', () => {
    const clusters = served(stage);
    expect([...clusters.keys()]).toEqual(['prod']);
    expect(clusters.get('prod')?.config).toMatchObject({ cluster: 'prod', nodeEvictionRate: 0.2 });
    expect(clusters.get('prod')?.clusterAuth).toEqual({
      kind: 'eks',
      clusterName: 'prod-eks',
      region: 'eu-west-1',
    });
  });

  it('each cluster: its settings over the stage-wide ones, its mode, its credentials', () => {
    const clusters = served({
      ...stage,
      NLC_CLUSTERS: JSON.stringify({
        'prod-eu': { credentials: 'eks', mode: 'active', settings: { nodeEvictionRate: '0.05' } },
        'prod-us': {
          credentials: {
            kind: 'kubeconfigSecret',
            secretId: 'arn:aws:secretsmanager:us-east-1:1:secret:k-AbCdEf',
            context: 'us',
          },
          mode: 'shadow',
          settings: { emulationVersion: '1.31' },
        },
        legacy: {},
      }),
    });
    expect([...clusters.keys()]).toEqual(['prod-eu', 'prod-us', 'legacy']);
    expect(clusters.get('prod-eu')?.config).toMatchObject({
      cluster: 'prod-eu',
      nodeEvictionRate: 0.05,
      dryRun: false,
    });
    expect(clusters.get('prod-eu')?.clusterAuth).toEqual({
      kind: 'eks',
      clusterName: 'prod-eu',
      region: 'eu-west-1',
    });
    // The emulated minor's default grace (40s before 1.32), and the stage-wide rate.
    expect(clusters.get('prod-us')?.config).toMatchObject({
      cluster: 'prod-us',
      nodeMonitorGracePeriod: 40_000,
      nodeEvictionRate: 0.2,
      dryRun: true,
    });
    expect(clusters.get('prod-us')?.clusterAuth).toMatchObject({ kind: 'kubeconfigSecret', context: 'us' });
    // No credentials of its own: the stage-wide source.
    expect(clusters.get('legacy')?.clusterAuth).toEqual({
      kind: 'eks',
      clusterName: 'prod-eks',
      region: 'eu-west-1',
    });
  });

  it('names every bad field with its cluster, at once', () => {
    expect(
      issuesOf({
        ...stage,
        NLC_CLUSTERS: JSON.stringify({
          a: { credentials: { kind: 'ftp' }, settings: { nodeEvictionRate: 'fast', cluster: 'b' } },
          b: { mode: 'on', colour: 'red' },
          Bad_Name: { credentials: 'eks' },
        }),
      }),
    ).toEqual([
      'NLC_CLUSTERS.b.mode: expected "shadow" or "active"',
      'NLC_CLUSTERS.b.colour: unknown field (credentials, mode, settings)',
    ]);
    expect(
      issuesOf({
        ...stage,
        NLC_CLUSTERS: JSON.stringify({
          a: { credentials: { kind: 'ftp' }, settings: { nodeEvictionRate: 'fast', cluster: 'b' } },
          Bad_Name: { credentials: 'eks' },
        }),
      }),
    ).toEqual([
      'NLC_CLUSTERS.a.settings.cluster: the cluster is the entry’s name',
      'NLC_CLUSTERS.a.settings.nodeEvictionRate: expected a number of nodes per second, 0 or more (like 0.1), got "fast"',
      'NLC_CLUSTERS.a.credentials.kind: expected kind to be one of kubeconfigFile, kubeconfigSecret, kubeconfigParameter, eks',
      "NLC_CLUSTERS.Bad_Name: a cluster name is 1 to 63 lowercase letters, digits or '-', starting and ending with a letter or digit",
    ]);
  });

  it('refuses two clusters on the stage-wide credentials: one API server under two names', () => {
    expect(issuesOf({ ...stage, NLC_CLUSTERS: '{"a":{},"b":{},"c":{"credentials":"eks"}}' })).toEqual([
      'NLC_CLUSTERS: clusters a, b have no credentials: only one cluster may use the stage-wide credentials (each cluster is its own API server); give the others "credentials"',
    ]);
  });

  it('refuses what is not a document of clusters', () => {
    expect(issuesOf({ ...stage, NLC_CLUSTERS: '{"a":' })).toEqual([
      'NLC_CLUSTERS: expected a JSON object of clusters by name, got invalid JSON',
    ]);
    expect(issuesOf({ ...stage, NLC_CLUSTERS: '["a"]' })).toEqual([
      'NLC_CLUSTERS: expected a JSON object of clusters by name, such as {"prod":{"credentials":"eks"}}',
    ]);
    expect(issuesOf({ ...stage, NLC_CLUSTERS: '{}' })).toEqual(['NLC_CLUSTERS: names no cluster']);
    expect(
      issuesOf({ ...stage, NLC_CLUSTERS: '{"a":{"settings":{"dryRun":true},"credentials":"eks"}}' }),
    ).toEqual(['NLC_CLUSTERS.a.settings.dryRun: set "mode" (shadow or active) instead']);
  });

  it('"eks" needs the functions’ region', () => {
    const { AWS_REGION: _, ...noRegion } = stage;
    expect(
      issuesOf({
        ...noRegion,
        NLC_EKS_CLUSTER_NAME: '',
        NLC_KUBECONFIG: '/k',
        NLC_CLUSTERS: '{"a":{"credentials":"eks"}}',
      }),
    ).toEqual([
      "NLC_CLUSTERS.a.credentials.region: required: the EKS cluster's region, or AWS_REGION (Lambda sets it)",
    ]);
  });
});
