// `nlc simulate` with several clusters (docs/simulate.md, "Several clusters"): one deployment (one state
// store, one bus, one dispatch serving every cluster through NLC_CLUSTERS) beside an API simulator,
// kubelets and a relay per cluster, on one virtual clock.
//
// examples/scenarios/two-clusters-one-zone-down.yaml, derived as zone-failure-after-30m.yaml is
// (docs/upstream.md#zone-states, #rate-limited-queue): eu's zone-b stops at 65 s, after its 60 s
// renewal; the first pass after 60 + 50 s (115 s) marks the three Unknown, puts zone-b in
// FullDisruption (the other zones are Normal, so the rate stays 0.1/s) and queues them (PR #120816):
// NoExecute at 115, 125, 135 s; each pod goes 300 s later. us, the same cluster, stays healthy.
//
// What makes the clusters independent is checked as behaviour: each cluster's lines are exactly what it
// gives alone (the same decisions, at the same instants, in the same order), and one cluster in master
// disruption (every zone down: no NoExecute taint) beside one with a single zone down (tainted at its
// zone's rate) shows that neither sees the other's zones.
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  isMultiCluster,
  parseScenarioDocument,
  scenarioDocumentFromObject,
  type MultiClusterScenario,
} from '../../../local/simulate/scenario.js';
import { runSimulation, type SimulationResult } from '../../../local/simulate/simulation.js';
import type { TimelineLine } from '../../../local/simulate/timeline.js';
import { ScenarioError } from '../../../shared/errors.js';
import { describeLine, examplesDir, failures, firstPassAfter } from './helpers.js';

const stoppedAfterRenewal = 60;
const unknownAt = firstPassAfter(stoppedAfterRenewal + 50); // 115
const taintTimes = [unknownAt, unknownAt + 10, unknownAt + 20]; // one token every 10 s at 0.1/s
const toleration = 300;

/** A cluster's lines, described, without the cluster (as a run of it alone prints them). */
function clusterLines(result: SimulationResult, cluster: string | undefined): string[] {
  return result.lines.filter((line) => line.cluster === cluster).map(describeLine);
}

/** A cluster's lines as JSON without their `cluster`: byte for byte what a run of it alone gives. */
function alone(lines: readonly TimelineLine[], cluster?: string): string[] {
  return lines
    .filter((line) => line.cluster === cluster)
    .map((line) => JSON.stringify({ ...line, cluster: undefined }));
}

function summaryOf(result: SimulationResult, cluster: string): Extract<TimelineLine, { kind: 'Summary' }> {
  const summary = result.lines.find((line) => line.kind === 'Summary' && line.cluster === cluster);
  if (summary?.kind !== 'Summary') throw new Error(`no Summary for cluster ${cluster}`);
  return summary;
}

async function example(): Promise<MultiClusterScenario> {
  const file = new URL('two-clusters-one-zone-down.yaml', examplesDir);
  const scenario = parseScenarioDocument(await readFile(file, 'utf8'), 'two-clusters-one-zone-down.yaml');
  if (!isMultiCluster(scenario)) throw new Error('expected a scenario of several clusters');
  return scenario;
}

describe('examples/scenarios/two-clusters-one-zone-down.yaml', () => {
  let scenario: MultiClusterScenario;
  let result: SimulationResult;
  beforeAll(async () => {
    scenario = await example();
    result = await runSimulation(scenario);
  }, 60_000);

  it('runs without a failed function', () => {
    expect(failures(result)).toEqual([]);
  });

  it('configures each cluster as the stage does: stage-wide settings, then its own (NLC_CLUSTERS)', () => {
    expect(JSON.parse(scenario.stageEnv.NLC_CLUSTERS ?? '')).toMatchObject({
      eu: { settings: {} },
      us: { settings: { nodeEvictionRate: 0.2 } },
    });
    expect(scenario.stageEnv.NLC_NODE_MONITOR_GRACE_PERIOD).toBe('50s');
    const [eu, us] = scenario.clusters;
    expect(eu?.config).toMatchObject({
      cluster: 'eu',
      nodeEvictionRate: 0.1,
      nodeMonitorGracePeriod: 50_000,
    });
    expect(us?.config).toMatchObject({
      cluster: 'us',
      nodeEvictionRate: 0.2,
      nodeMonitorGracePeriod: 50_000,
    });
  });

  it('marks, taints and evicts in the cluster that lost its zone, at its zone rate', () => {
    const eu = clusterLines(result, 'eu');
    expect(eu.filter((l) => / NodeCondition \S+ Ready=/.test(l))).toEqual([
      `${unknownAt} NodeCondition b-1 Ready=Unknown`,
      `${unknownAt} NodeCondition b-2 Ready=Unknown`,
      `${unknownAt} NodeCondition b-3 Ready=Unknown`,
    ]);
    expect(eu.filter((l) => l.includes(' ZoneState '))).toEqual([
      '0 ZoneState region-1:zone-a Initial→Normal',
      '0 ZoneState region-1:zone-b Initial→Normal',
      '0 ZoneState region-1:zone-c Initial→Normal',
      `${unknownAt} ZoneState region-1:zone-b Normal→FullDisruption`,
    ]);
    expect(eu.filter((l) => l.includes(' TaintAdded ') && l.endsWith(':NoExecute'))).toEqual(
      taintTimes.map((t, i) => `${t} TaintAdded b-${i + 1} unreachable:NoExecute`),
    );
    expect(eu.filter((l) => l.includes(' PodDeleted '))).toEqual(
      taintTimes.map((t, i) => `${t + toleration} PodDeleted default/app-b-${i + 1}-1 TaintManagerEviction`),
    );
    expect(summaryOf(result, 'eu')).toMatchObject({
      evictions: 3,
      zones: [
        { zone: 'region-1:zone-a', state: 'Normal', size: 3, unhealthy: 0 },
        { zone: 'region-1:zone-b', state: 'FullDisruption', size: 3, unhealthy: 3 },
        { zone: 'region-1:zone-c', state: 'Normal', size: 3, unhealthy: 0 },
      ],
    });
  });

  it('leaves the healthy cluster untouched: registered, zones Normal, nothing else', () => {
    const us = clusterLines(result, 'us');
    expect(us.filter((l) => !l.includes(' Event RegisteredNode '))).toEqual([
      '0 ZoneState region-1:zone-a Initial→Normal',
      '0 ZoneState region-1:zone-b Initial→Normal',
      '0 ZoneState region-1:zone-c Initial→Normal',
      '660 Summary',
    ]);
    const summary = summaryOf(result, 'us');
    expect(summary.evictions).toBe(0);
    expect(summary.nodes).toHaveLength(9);
    for (const node of summary.nodes) expect(node).toMatchObject({ ready: 'True', taints: [] });
    expect(summary.zones.map((zone) => zone.state)).toEqual(['Normal', 'Normal', 'Normal']);
  });

  it('names the cluster on every line, right after the kind, and ends with a Summary per cluster', () => {
    for (const line of result.lines) {
      expect(Object.keys(line).slice(0, 4)).toEqual(['t', 'time', 'kind', 'cluster']);
      expect(['eu', 'us']).toContain(line.cluster);
    }
    expect(result.lines.slice(-2).map((line) => `${line.kind} ${line.cluster ?? ''}`)).toEqual([
      'Summary eu',
      'Summary us',
    ]);
    const ts = result.lines.map((line) => line.t);
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
  });

  it('gives each cluster, byte for byte, the lines it gives alone', async () => {
    for (const cluster of scenario.clusters) {
      const own = await runSimulation(cluster);
      expect(alone(result.lines, cluster.name)).toEqual(alone(own.lines));
    }
  }, 60_000);
});

describe('clusters of one deployment are independent', () => {
  // The same two zones and node names in both clusters: `down` loses both zones (master disruption:
  // upstream stops tainting NoExecute), `one` loses zone-a only (tainted at the zone's rate). A cluster
  // that saw the other's zones would decide otherwise.
  const cluster = (name: string, stop: string) => ({
    name,
    nodes: [
      { generate: { prefix: 'a-', count: 2, zone: 'zone-a', region: 'region-1' } },
      { generate: { prefix: 'b-', count: 2, zone: 'zone-b', region: 'region-1' } },
    ],
    pods: [{ generate: { prefix: 'app-', perNode: 1, nodes: '*' } }],
    timeline: [{ at: '35s', stopKubelet: stop }],
  });
  let scenario: MultiClusterScenario;
  let result: SimulationResult;
  beforeAll(async () => {
    const parsed = scenarioDocumentFromObject({
      duration: '3m',
      clusters: [cluster('down', '*'), cluster('one', 'a-*')],
    });
    if (!isMultiCluster(parsed)) throw new Error('expected a scenario of several clusters');
    scenario = parsed;
    result = await runSimulation(scenario);
  }, 60_000);

  it('puts only the cluster whose every zone is down in master disruption', () => {
    const noExecute = (name: string) =>
      clusterLines(result, name).filter((l) => l.includes(' TaintAdded ') && l.endsWith(':NoExecute'));
    const markedAt = firstPassAfter(30 + 50); // 85
    expect(noExecute('down')).toEqual([]);
    expect(noExecute('one')).toEqual([
      `${markedAt} TaintAdded a-1 unreachable:NoExecute`,
      `${markedAt + 10} TaintAdded a-2 unreachable:NoExecute`,
    ]);
    expect(summaryOf(result, 'down').zones.map((z) => z.state)).toEqual(['FullDisruption', 'FullDisruption']);
    expect(summaryOf(result, 'one').zones.map((z) => z.state)).toEqual(['FullDisruption', 'Normal']);
  });

  it('decides for each cluster what it decides alone', async () => {
    for (const part of scenario.clusters) {
      const own = await runSimulation(part);
      expect(alone(result.lines, part.name)).toEqual(alone(own.lines));
    }
  }, 60_000);
});

describe('a scenario of several clusters that turns out wrong as it runs', () => {
  it('names the cluster of the field', async () => {
    const scenario = scenarioDocumentFromObject({
      duration: '1m',
      clusters: [
        { name: 'a', nodes: [{ name: 'n-1' }] },
        {
          name: 'b',
          nodes: [{ name: 'n-1' }],
          timeline: [{ at: '0s', injectEvent: { detailType: 'Heartbeat Digest' } }],
        },
      ],
    });
    const run = runSimulation(scenario);
    await expect(run).rejects.toThrow(ScenarioError);
    await expect(run).rejects.toThrow(
      'clusters[1].timeline[0].injectEvent: no Heartbeat Digest published yet to start from at 0s',
    );
  });

  it('replays a cluster its own relay’s digest', async () => {
    const scenario = scenarioDocumentFromObject({
      duration: '1m',
      clusters: [
        { name: 'a', nodes: [{ name: 'n-1' }] },
        {
          name: 'b',
          nodes: [{ name: 'n-1' }],
          timeline: [{ at: '30s', injectEvent: { detailType: 'Heartbeat Digest' } }],
        },
      ],
    });
    const injected: unknown[] = [];
    const result = await runSimulation(scenario, {
      onBusEvent: (_t, event) => {
        if (event.origin === 'injected') injected.push(event.detail);
      },
    });
    expect(failures(result)).toEqual([]);
    expect(injected).toEqual([expect.objectContaining({ cluster: 'b' })]);
  });
});
