// The scenario format (docs/simulate.md): expansion of `generate`, globs resolved against the cluster as the
// timeline goes, durations, and one ScenarioError naming every bad field.
import { describe, expect, it } from 'vitest';
import {
  DefaultScenarioStart,
  globToRegExp,
  parseScenario,
  scenarioFromObject,
} from '../../../../local/simulate/scenario.js';
import { ScenarioError } from '../../../../shared/errors.js';
import { UPSTREAM_DEFAULTS } from '../../../../shared/config.js';

function issuesOf(doc: unknown): string[] {
  try {
    scenarioFromObject(doc);
  } catch (error) {
    if (error instanceof ScenarioError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

const base = { duration: '5m', nodes: [{ name: 'a-1', zone: 'zone-a' }] };

describe('parseScenario', () => {
  it('reads the example fields of docs/simulate.md, with defaults', () => {
    const scenario = parseScenario(`
name: one node loses its kubelet
config:
  nodeMonitorGracePeriod: 40s
start: "2026-03-01T00:00:00Z"
duration: 15m
nodes:
  - name: a-1
    zone: zone-a
    region: region-1
    labels: {team: web}
    taints: [{key: example.com/gpu, effect: NoSchedule}]
    unschedulable: true
    conditions: {DiskPressure: True}
    ready: False
    kubelet: stopped
    createdAgo: 2h
  - generate: {prefix: b-, count: 3, zone: zone-b}
pods:
  - name: web-1
    node: a-1
    tolerations: [{key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 60}]
  - generate: {prefix: app-, perNode: 2, nodes: "b-*", daemonSet: true}
timeline:
  - {at: 1m, stopKubelet: "b-*"}
  - {at: 30s, setCondition: {node: [a-1, b-1], type: NetworkUnavailable, status: True}}
  - {at: 30s, cordon: b-2}
  - {at: 2m, deleteNode: b-3}
  - {at: 3m, addNode: {name: b-3, zone: zone-b}}
  - {at: 4m, addPod: {name: late-1, node: b-3}}
  - {at: 5m, deletePod: [late-1, "default/app-b-1-*"]}
  - {at: 5m, stopRelay: true}
  - {at: 6m, startRelay: true}
`);
    expect(scenario.config).toEqual({ ...UPSTREAM_DEFAULTS, nodeMonitorGracePeriod: 40_000 });
    expect(scenario.start).toBe(Date.parse('2026-03-01T00:00:00Z'));
    expect(scenario.duration).toBe(900_000);
    expect(scenario.nodes[0]).toEqual({
      name: 'a-1',
      zone: 'zone-a',
      region: 'region-1',
      labels: { team: 'web' },
      taints: [{ key: 'example.com/gpu', effect: 'NoSchedule' }],
      unschedulable: true,
      conditions: { DiskPressure: 'True' },
      ready: 'False',
      kubelet: 'stopped',
      createdAgo: 7_200_000,
    });
    expect(scenario.nodes.map((n) => n.name)).toEqual(['a-1', 'b-1', 'b-2', 'b-3']);
    expect(scenario.pods.map((p) => p.name)).toEqual([
      'web-1',
      'app-b-1-1',
      'app-b-1-2',
      'app-b-2-1',
      'app-b-2-2',
      'app-b-3-1',
      'app-b-3-2',
    ]);
    expect(scenario.pods[1]).toEqual({ name: 'app-b-1-1', node: 'b-1', daemonSet: true });
    // Sorted by time; at one time, in the file's order.
    expect(scenario.timeline.map((e) => [e.at / 1000, e.index, e.action.kind])).toEqual([
      [30, 1, 'setCondition'],
      [30, 2, 'cordon'],
      [60, 0, 'stopKubelet'],
      [120, 3, 'deleteNode'],
      [180, 4, 'addNode'],
      [240, 5, 'addPod'],
      [300, 6, 'deletePod'],
      [300, 7, 'stopRelay'],
      [360, 8, 'startRelay'],
    ]);
    expect(scenario.timeline[2]?.action).toEqual({ kind: 'stopKubelet', nodes: ['b-1', 'b-2', 'b-3'] });
    expect(scenario.timeline[0]?.action).toEqual({
      kind: 'setCondition',
      nodes: ['a-1', 'b-1'],
      type: 'NetworkUnavailable',
      status: 'True',
    });
    expect(scenario.timeline[6]?.action).toEqual({
      kind: 'deletePod',
      pods: [
        { namespace: 'default', name: 'app-b-1-1' },
        { namespace: 'default', name: 'app-b-1-2' },
        { namespace: 'default', name: 'late-1' },
      ],
    });
  });

  it('takes JSON, and starts at a fixed instant when no start is given', () => {
    const scenario = parseScenario(JSON.stringify({ duration: 60, nodes: [{ name: 'a-1' }] }));
    expect(scenario.start).toBe(DefaultScenarioStart);
    expect(scenario.duration).toBe(60_000);
    expect(scenario.name).toBe('');
  });

  it('reports YAML syntax errors with their position', () => {
    expect(() => parseScenario('duration: 5m\nnodes: [\n', 'x.yaml')).toThrow(
      /Invalid scenario x\.yaml[\s\S]*\(line \d+, column \d+\)/,
    );
  });
});

describe('scenario validation', () => {
  it('names every bad field at once', () => {
    expect(
      issuesOf({
        duration: 'soon',
        config: { nodeEvictionRate: -1 },
        nodes: [
          { name: 'A_1' },
          { name: 'a-2', kubelet: 'sleeping' },
          { generate: { prefix: 'b-', count: 0 } },
        ],
        pods: [{ name: 'p', node: 'a-2', tolerations: [{ effect: 'NoRun' }] }],
        timeline: [{ at: '1m' }, { at: -1, cordon: 'a-2' }],
        extra: 1,
      }),
    ).toEqual([
      'extra: unknown field (fields: name, start, duration, nodes, pods, timeline, relayClockSkew, config, managedController)',
      'duration: expected a duration like "40s", "5m" or a number of seconds, got "soon"',
      'config.nodeEvictionRate: expected a number of nodes per second, 0 or more (like 0.1), got -1',
      'nodes[0].name: expected a node name (a DNS-1123 subdomain: lowercase letters, digits, "-" and "."), got "A_1"',
      'nodes[1].kubelet: expected running, stopped or unregistered, got "sleeping"',
      'nodes[2].generate.count: expected at least 1 node',
      'pods[0].tolerations[0].effect: expected NoSchedule, PreferNoSchedule or NoExecute, got "NoRun"',
      'timeline[0]: expected one action (stopKubelet, startKubelet, setCondition, cordon, uncordon, deleteNode, addNode, addPod, deletePod, stopRelay, startRelay, restartRelay, relayClockStep, stallWatch, injectEvent, restoreApiServer)',
      'timeline[1].at: expected a duration of 0 or more, got -1',
    ]);
  });

  it('resolves names against the cluster as it is at that point of the timeline', () => {
    expect(
      issuesOf({
        ...base,
        timeline: [
          { at: '1m', deleteNode: 'a-1' },
          { at: '2m', stopKubelet: 'a-1' },
          { at: '3m', addNode: { name: 'a-1' } },
          { at: '4m', startKubelet: 'a-*' },
          { at: '4m', addPod: { name: 'p-1', node: 'a-1' } },
          { at: '4m', addPod: { name: 'p-1', node: 'a-1' } },
          { at: '5m', deletePod: 'other/p-1' },
        ],
      }),
    ).toEqual([
      'timeline[1].stopKubelet: no node "a-1"',
      'timeline[5].addPod: pod "default/p-1" exists already',
      'timeline[6].deletePod: no pod "other/p-1"',
    ]);
  });

  it('rejects duplicates, missing references and actions after the end', () => {
    expect(
      issuesOf({
        duration: '5m',
        nodes: [{ name: 'a-1' }, { generate: { prefix: 'a-', count: 2 } }],
        pods: [{ generate: { prefix: 'x-', perNode: 1, nodes: 'z-*' } }],
        timeline: [
          { at: '6m', cordon: 'a-1' },
          { at: '1m', cordon: 'a-1', uncordon: 'a-1' },
          { at: '1m', stopRelay: false },
        ],
      }),
    ).toEqual([
      'nodes[1]: node "a-1" exists already',
      'pods[0].generate.nodes: no node matches "z-*"',
      'timeline[1]: expected one action per entry, got cordon and uncordon',
      'timeline[2].stopRelay: expected true, got false',
      'timeline[0].at: after the end of the scenario (duration 5m)',
    ]);
  });

  it('managedController: its settings validated as config is, the scenario controller in shadow', () => {
    const scenario = scenarioFromObject({
      ...base,
      managedController: { config: { nodeMonitorGracePeriod: '40s' } },
    });
    expect(scenario.config.dryRun).toBe(true);
    expect(scenario.managedController?.config).toEqual({
      ...UPSTREAM_DEFAULTS,
      nodeMonitorGracePeriod: 40_000,
    });
    expect(scenarioFromObject({ ...base, managedController: {} }).managedController?.config).toEqual(
      UPSTREAM_DEFAULTS,
    );
    expect(
      issuesOf({
        ...base,
        managedController: { config: { nodeMonitorGracePeriod: 'soon', dryRun: true }, mode: 'x' },
      }),
    ).toEqual([
      'managedController.mode: unknown field (fields: config)',
      'managedController.config.nodeMonitorGracePeriod: expected a duration like "40s", "5m" or a number of seconds, got "soon"',
    ]);
    expect(issuesOf({ ...base, managedController: { config: { dryRun: true } } })).toEqual([
      "managedController.config.dryRun: expected false or nothing: the managed controller is the cluster's own, and writes",
    ]);
    expect(issuesOf({ ...base, managedController: 'eks' })).toEqual([
      'managedController: expected {config: {…}}, got "eks"',
    ]);
  });

  it('requires a duration and at least one node', () => {
    expect(issuesOf({ nodes: [] })).toEqual([
      'duration: missing: how much virtual time to run, e.g. "15m"',
      'nodes: expected at least one node',
    ]);
    expect(issuesOf('15m')).toEqual(['(scenario): expected a scenario object, got "15m"']);
  });
});

describe('globToRegExp', () => {
  it.each([
    ['b-*', 'b-1', true],
    ['b-*', 'b-10', true],
    ['b-*', 'a-1', false],
    ['b-?', 'b-10', false],
    ['b-1?', 'b-10', true],
    ['a.b', 'aXb', false],
    ['*', 'anything.at.all', true],
  ])('%s matches %s: %s', (pattern, name, matches) => {
    expect(globToRegExp(pattern).test(name)).toBe(matches);
  });
});
