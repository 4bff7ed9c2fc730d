// The scenario format's `clusters` (docs/simulate.md, "Several clusters"): the shared fields, each
// cluster's own, the stage a deployment serving them would have (NLC_CLUSTERS, read by the functions'
// own loadServedClusters), and one ScenarioError naming every bad field with its cluster.
import { describe, expect, it } from 'vitest';
import {
  isMultiCluster,
  parseScenario,
  parseScenarioDocument,
  scenarioDocumentFromObject,
  type MultiClusterScenario,
} from '../../../../local/simulate/scenario.js';
import { ScenarioError } from '../../../../shared/errors.js';

function issuesOf(doc: unknown): string[] {
  try {
    scenarioDocumentFromObject(doc);
  } catch (error) {
    if (error instanceof ScenarioError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

function multi(doc: unknown): MultiClusterScenario {
  const scenario = scenarioDocumentFromObject(doc);
  if (!isMultiCluster(scenario)) throw new Error('expected a scenario of several clusters');
  return scenario;
}

const node = (name: string) => ({ name, zone: 'zone-a' });

describe('a scenario with clusters', () => {
  it('reads each cluster as a scenario of its own, on the shared start and duration', () => {
    const scenario = parseScenarioDocument(`
name: two clusters
start: "2026-03-01T00:00:00Z"
duration: 10m
clusters:
  - name: prod-eu
    relayClockSkew: -30s
    nodes:
      - generate: {prefix: a-, count: 2, zone: zone-a}
    pods:
      - generate: {prefix: app-, perNode: 1, nodes: "a-*"}
    timeline:
      - {at: 1m, stopKubelet: a-1}
  - name: prod-us
    nodes: [{name: a-1}]
`);
    if (!isMultiCluster(scenario)) throw new Error('expected a scenario of several clusters');
    expect(scenario.name).toBe('two clusters');
    expect(scenario.duration).toBe(600_000);
    const [eu, us] = scenario.clusters;
    expect(eu).toMatchObject({
      name: 'prod-eu',
      start: Date.parse('2026-03-01T00:00:00Z'),
      duration: 600_000,
      relayClockSkew: -30_000,
      nodes: [{ name: 'a-1' }, { name: 'a-2' }],
      pods: [{ name: 'app-a-1-1' }, { name: 'app-a-2-1' }],
      timeline: [{ at: 60_000, index: 0, action: { kind: 'stopKubelet', nodes: ['a-1'] } }],
    });
    expect(eu?.config.cluster).toBe('prod-eu');
    expect(us).toMatchObject({ name: 'prod-us', relayClockSkew: 0, nodes: [{ name: 'a-1' }], timeline: [] });
    expect(us?.config.cluster).toBe('prod-us');
  });

  it('configures the stage as a deployment of both: stage-wide variables, an entry per cluster', () => {
    const scenario = multi({
      duration: '5m',
      config: { nodeMonitorGracePeriod: '40s', nodeEvictionRate: 0.2 },
      clusters: [
        { name: 'a', nodes: [node('a-1')], config: { nodeEvictionRate: 0.05, dryRun: true } },
        { name: 'b', nodes: [node('b-1')] },
      ],
    });
    expect(scenario.stageEnv).toEqual({
      NLC_NODE_MONITOR_GRACE_PERIOD: '40s',
      NLC_NODE_EVICTION_RATE: '0.2',
      NLC_CLUSTERS: JSON.stringify({
        a: {
          credentials: { kind: 'kubeconfigFile', path: '(the API simulator of cluster a)' },
          settings: { nodeEvictionRate: 0.05 },
          mode: 'shadow',
        },
        b: {
          credentials: { kind: 'kubeconfigFile', path: '(the API simulator of cluster b)' },
          settings: {},
        },
      }),
    });
    const [a, b] = scenario.clusters;
    // A cluster's own setting over the stage's; `dryRun` as the entry's mode.
    expect(a?.config).toMatchObject({ nodeEvictionRate: 0.05, nodeMonitorGracePeriod: 40_000, dryRun: true });
    expect(b?.config).toMatchObject({ nodeEvictionRate: 0.2, nodeMonitorGracePeriod: 40_000, dryRun: false });
  });

  it("lets a setting the stage leaves out follow each cluster's emulationVersion", () => {
    const scenario = multi({
      duration: '5m',
      clusters: [
        { name: 'old', nodes: [node('a-1')], config: { emulationVersion: '1.31' } },
        { name: 'new', nodes: [node('a-1')] },
      ],
    });
    // v1.31's default grace is 40 s, 50 s from v1.32 (PR #126287).
    expect(scenario.clusters.map((c) => c.config.nodeMonitorGracePeriod)).toEqual([40_000, 50_000]);
  });

  it('is refused by parseScenario, which reads one cluster', () => {
    expect(() => parseScenario('duration: 5m\nclusters: [{name: a, nodes: [{name: a-1}]}]\n')).toThrow(
      'clusters: a scenario of several clusters: read it with parseScenarioDocument',
    );
  });

  it('reads a scenario without clusters as before', () => {
    const scenario = parseScenarioDocument('duration: 5m\nnodes: [{name: a-1}]\n');
    expect(isMultiCluster(scenario)).toBe(false);
  });
});

describe('an invalid scenario with clusters', () => {
  it('names the cluster of every bad field', () => {
    expect(
      issuesOf({
        duration: '5m',
        clusters: [
          { name: 'a', nodes: [node('a-1')], timeline: [{ at: '1m', stopKubelet: 'b-*' }] },
          { name: 'a', nodes: [node('b-1')] },
          { nodes: [node('c-1')] },
          { name: 'Bad_Name', nodes: [], extra: true },
          'not a cluster',
          { name: 'e', nodes: [node('e-1')], timeline: [{ at: '6m', cordon: 'e-1' }] },
        ],
      }),
    ).toEqual([
      'clusters[0].timeline[0].stopKubelet: no node matches "b-*"',
      'clusters[1].name: cluster "a" is named already (clusters[0].name)',
      'clusters[2].name: missing: the cluster\'s name, e.g. "prod-eu"',
      'clusters[3].extra: unknown field (fields of a cluster: name, config, nodes, pods, timeline, relayClockSkew)',
      'clusters[3].name: expected a cluster name (a DNS-1123 label: 1 to 63 lowercase letters, digits or "-"), got "Bad_Name"',
      'clusters[3].nodes: expected at least one node',
      'clusters[4]: expected a cluster ({name, nodes, ...}), got "not a cluster"',
      'clusters[5].timeline[0].at: after the end of the scenario (duration 5m)',
    ]);
  });

  it('refuses no cluster at all, and the fields each cluster has its own of at the top', () => {
    expect(issuesOf({ duration: '5m', clusters: [] })).toEqual(['clusters: expected at least one cluster']);
    expect(
      issuesOf({
        duration: '5m',
        nodes: [node('a-1')],
        timeline: [],
        managedController: {},
        clusters: [{ name: 'a', nodes: [node('a-1')] }],
      }),
    ).toEqual([
      'nodes: with clusters, each cluster has its own: clusters[].nodes',
      'timeline: with clusters, each cluster has its own: clusters[].timeline',
      'managedController: not with several clusters (a managed controller beside each cluster is not simulated)',
    ]);
    expect(issuesOf({ duration: '5m', clusters: 'a,b' })).toEqual([
      'clusters: expected a list of clusters ({name, nodes, ...}), got "a,b"',
    ]);
  });

  it("reports a cluster's settings as the stage reads them, at the cluster's config", () => {
    expect(
      issuesOf({
        duration: '5m',
        config: { cluster: 'x' },
        clusters: [
          {
            name: 'a',
            nodes: [node('a-1')],
            config: {
              cluster: 'q',
              nodeEvictionRate: 'fast',
              dryRun: 'maybe',
              nodeMonitorGracePeriodd: '40s',
            },
          },
          { name: 'b', nodes: [node('b-1')], config: { evictionMode: 'legacy' } },
        ],
      }),
    ).toEqual([
      'config.cluster: with clusters, each is named by clusters[].name',
      'clusters[0].config.cluster: the cluster is named by clusters[0].name',
      'clusters[0].config.dryRun: expected true or false, got "maybe"',
      'clusters[0].config.nodeEvictionRate: expected a number of nodes per second, 0 or more (like 0.1), got "fast"',
      'clusters[0].config.nodeMonitorGracePeriodd: unknown setting; did you mean nodeMonitorGracePeriod?',
      'clusters[1].config.evictionMode: "legacy" is the eviction path of --enable-taint-manager=false, removed in v1.27 (PR #115840); emulationVersion 1.37 does not have it: emulate "1.26" or earlier for it',
    ]);
  });

  it('names the clusters a stage-wide setting is wrong for', () => {
    expect(
      issuesOf({
        duration: '5m',
        config: { nodeMonitorGracePeriod: '50s' },
        clusters: [
          { name: 'a', nodes: [node('a-1')] },
          { name: 'b', nodes: [node('b-1')], config: { nodeMonitorPeriod: '1m' } },
        ],
      }),
    ).toEqual([
      'config.nodeMonitorGracePeriod: nodeMonitorGracePeriod (50s) must be greater than nodeMonitorPeriod (1m): the grace must span several node status updates (with clusters[1])',
    ]);
  });
});
