// scripts/chaos.ts (`npm run chaos`): its options, the final state it compares, the differences it
// reports and how it prints them. The runs themselves are the simulator's (test/e2e/simulate/).
import { describe, expect, it } from 'vitest';
import {
  ChaosOptionsError,
  chaosOf,
  compareStates,
  DefaultProfiles,
  describeMismatch,
  finalStateOf,
  formatJson,
  formatReport,
  parseChaosArgs,
  parseSeeds,
  reproduce,
  selectExamples,
  tally,
  type FinalState,
  type RunResult,
} from '../../../scripts/chaos.js';
import type { TimelineLine } from '../../../local/simulate/timeline.js';

function problems(argv: readonly string[]): readonly string[] {
  try {
    parseChaosArgs(argv, 4);
  } catch (error) {
    if (error instanceof ChaosOptionsError) return error.problems;
    throw error;
  }
  return [];
}

describe('parseChaosArgs', () => {
  it('has the defaults: three profiles, seeds 1 to 20, every example, one job per CPU', () => {
    expect(parseChaosArgs([], 4)).toEqual({
      seeds: Array.from({ length: 20 }, (_, i) => i + 1),
      profiles: DefaultProfiles,
      examples: [],
      jobs: 4,
      quietDigests: false,
      json: false,
      help: false,
    });
    expect(DefaultProfiles).toEqual([
      'duplicates=10,maxDelay=10s',
      'duplicates=3,maxDelay=30s,failures=0.2',
      'deadLetter=0.05',
    ]);
  });

  it('reads every option; --profile and --example repeat', () => {
    expect(
      parseChaosArgs(
        [
          '--seeds',
          '3,7-9',
          '--profile',
          'duplicates=2',
          '--profile',
          ' deadLetter=0.5 ',
          '--example',
          'zone-*',
          '--example',
          'single-node-failure',
          '--jobs',
          '3',
          '--quiet-digests',
          '--json',
        ],
        4,
      ),
    ).toEqual({
      seeds: [3, 7, 8, 9],
      profiles: ['duplicates=2', 'deadLetter=0.5'],
      examples: ['zone-*', 'single-node-failure'],
      jobs: 3,
      quietDigests: true,
      json: true,
      help: false,
    });
    expect(parseChaosArgs(['-h'], 4).help).toBe(true);
  });

  it('names every bad option at once', () => {
    expect(
      problems(['--seeds', '5-1', '--profile', 'failures=2', '--profile', 'seed=3', '--jobs', '0']),
    ).toEqual([
      '--seeds: expected seeds like "1-20", "7" or "1,3,10-12" (0 to 4294967295), got "5-1"',
      '--profile failures: expected a probability from 0 to 1, got "2"',
      '--profile: give the seeds with --seeds, not in the profile: "seed=3"',
      '--jobs: expected a number of processes from 1 to 256, got "0"',
    ]);
    expect(problems(['--colour'])).toEqual([expect.stringContaining("Unknown option '--colour'")]);
    expect(problems(['--profile', 'speed=2'])).toEqual([
      '--profile: expected key=value with a key among duplicates, maxDelay, failures, deadLetter, seed, got "speed=2"',
    ]);
  });
});

describe('parseSeeds', () => {
  it.each([
    ['1-20', Array.from({ length: 20 }, (_, i) => i + 1)],
    ['7', [7]],
    ['0', [0]],
    ['1,3,10-12', [1, 3, 10, 11, 12]],
    ['2,2,1-3', [2, 1, 3]],
  ])('%s', (text, seeds) => {
    expect(parseSeeds(text)).toEqual(seeds);
  });

  it.each(['', 'a', '1-', '-1', '3-2', '1.5', '4294967296', '1-20000'])('refuses %j', (text) => {
    expect(() => parseSeeds(text)).toThrow(ChaosOptionsError);
  });
});

describe('chaosOf and reproduce', () => {
  it('adds the seed to the profile, as nlc simulate --chaos reads it', () => {
    expect(chaosOf('duplicates=3,maxDelay=30s,failures=0.2', 7)).toEqual({
      duplicates: 3,
      maxDelayMs: 30_000,
      failures: 0.2,
      seed: 7,
    });
    expect(chaosOf('deadLetter=0.05', 2)).toMatchObject({ deadLetter: 0.05, seed: 2 });
    expect(reproduce({ example: 'single-node-failure', profile: 'deadLetter=0.05', seed: 2 })).toBe(
      'nlc simulate --chaos deadLetter=0.05,seed=2 examples/scenarios/single-node-failure.yaml',
    );
    expect(
      reproduce({ example: 'relay-outage', profile: 'deadLetter=0.05', seed: 3, quietDigests: true }),
    ).toBe(
      'nlc simulate --chaos deadLetter=0.05,seed=3 --quiet-digests examples/scenarios/relay-outage.yaml',
    );
  });
});

describe('selectExamples', () => {
  const names = ['zone-partial-disruption', 'single-node-failure', 'zone-failure-after-30m'];
  it('takes every example without a glob, each glob’s matches otherwise, in name order', () => {
    expect(selectExamples(names, [])).toEqual([
      'single-node-failure',
      'zone-failure-after-30m',
      'zone-partial-disruption',
    ]);
    expect(selectExamples(names, ['zone-*', 'zone-failure-*'])).toEqual([
      'zone-failure-after-30m',
      'zone-partial-disruption',
    ]);
    expect(selectExamples(names, ['single-node-failure.yaml'])).toEqual(['single-node-failure']);
  });

  it('names a glob that matches nothing', () => {
    expect(() => selectExamples(names, ['relay-*'])).toThrow('--example: no example matches "relay-*"');
  });
});

const t = { t: 0, time: '2026-01-01T00:00:00.000Z' };
const summary = (
  nodes: { node: string; ready: 'True' | 'Unknown' | ''; taints: [string, string][] }[],
): TimelineLine => ({
  ...t,
  kind: 'Summary',
  zones: [],
  evictions: 0,
  nodes: nodes.map((n) => ({
    node: n.node,
    zone: 'r:z',
    ready: n.ready,
    taints: n.taints.map(([key, effect]) => ({ key, effect: effect as 'NoSchedule' | 'NoExecute' })),
  })),
});
const event = (pod: string, message: string): TimelineLine => ({
  ...t,
  kind: 'Event',
  reason: 'TaintManagerEviction',
  object: `Pod/${pod}`,
  message,
  type: 'Normal',
});
const marking = (pod: string): TimelineLine => event(pod, `Marking for deletion Pod ${pod}`);
const deleted = (pod: string, at = 0): TimelineLine => ({
  ...t,
  t: at,
  kind: 'PodDeleted',
  pod,
  node: 'a-1',
  reason: 'TaintManagerEviction',
});

describe('finalStateOf', () => {
  it('keeps every node’s Ready and taints as a set, the set of pods deleted, and each pod’s Marking Events', () => {
    const state = finalStateOf([
      marking('default/web-1'),
      marking('default/web-1'),
      marking('default/batch-1'),
      event('default/web-1', 'Cancelling deletion Pod default/web-1'),
      deleted('default/web-1', 30),
      deleted('default/web-1', 400),
      deleted('default/batch-1', 90),
      summary([
        { node: 'a-2', ready: 'True', taints: [] },
        {
          node: 'a-1',
          ready: 'Unknown',
          taints: [
            ['node.kubernetes.io/unreachable', 'NoExecute'],
            ['node.kubernetes.io/unreachable', 'NoSchedule'],
            ['node.kubernetes.io/unreachable', 'NoExecute'],
          ],
        },
      ]),
    ]);
    expect(state).toEqual({
      nodes: {
        'a-1': {
          ready: 'Unknown',
          taints: ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule'],
        },
        'a-2': { ready: 'True', taints: [] },
      },
      podsDeleted: ['default/batch-1', 'default/web-1'],
      markings: { 'Pod/default/batch-1': 1, 'Pod/default/web-1': 2 },
    });
    expect(Object.keys(state.nodes)).toEqual(['a-1', 'a-2']);
  });

  it('needs a Summary', () => {
    expect(() => finalStateOf([deleted('default/web-1')])).toThrow('the run has no Summary line');
  });
});

const calm: FinalState = {
  nodes: {
    'a-1': {
      ready: 'Unknown',
      taints: ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule'],
    },
    'a-2': { ready: 'True', taints: [] },
  },
  podsDeleted: ['default/batch-1', 'default/web-1'],
  markings: { 'Pod/default/batch-1': 1, 'Pod/default/web-1': 1 },
};

describe('compareStates', () => {
  it('finds nothing between equal states, whatever their key order', () => {
    expect(
      compareStates(calm, {
        nodes: { 'a-2': calm.nodes['a-2']!, 'a-1': calm.nodes['a-1']! },
        podsDeleted: [...calm.podsDeleted],
        markings: { 'Pod/default/web-1': 1, 'Pod/default/batch-1': 1 },
      }),
    ).toBeUndefined();
  });

  it('names the nodes whose Ready or taints differ, and the pods deleted on one side only; symmetric', () => {
    const chaotic: FinalState = {
      nodes: {
        'a-1': { ready: 'Unknown', taints: ['node.kubernetes.io/unreachable:NoSchedule'] },
        'a-2': { ready: 'True', taints: [] },
        'a-3': { ready: 'True', taints: [] },
      },
      podsDeleted: ['default/batch-1', 'default/web-2'],
      markings: { 'Pod/default/batch-1': 1, 'Pod/default/web-2': 1 },
    };
    const difference = compareStates(calm, chaotic);
    expect(difference).toEqual({
      nodes: [
        {
          node: 'a-1',
          expected: calm.nodes['a-1'],
          actual: { ready: 'Unknown', taints: ['node.kubernetes.io/unreachable:NoSchedule'] },
        },
        { node: 'a-3', actual: { ready: 'True', taints: [] } },
      ],
      podsDeletedOnlyWithoutChaos: ['default/web-1'],
      podsDeletedOnlyWithChaos: ['default/web-2'],
      markings: [
        { object: 'Pod/default/web-1', expected: 1, actual: 0 },
        { object: 'Pod/default/web-2', expected: 0, actual: 1 },
      ],
    });
    const back = compareStates(chaotic, calm);
    expect(back?.nodes.map((n) => n.node)).toEqual(['a-1', 'a-3']);
    expect(back?.podsDeletedOnlyWithoutChaos).toEqual(difference?.podsDeletedOnlyWithChaos);
    expect(back?.podsDeletedOnlyWithChaos).toEqual(difference?.podsDeletedOnlyWithoutChaos);
  });

  it('tells a Ready change from a taint change', () => {
    const ready = compareStates(calm, {
      ...calm,
      nodes: { ...calm.nodes, 'a-2': { ready: 'Unknown', taints: [] } },
    });
    expect(ready?.nodes.map((n) => `${n.node} ${n.expected?.ready ?? ''}→${n.actual?.ready ?? ''}`)).toEqual([
      'a-2 True→Unknown',
    ]);
  });

  it('a second "Marking for deletion" for a pod deleted once is a difference of its own', () => {
    const twice = compareStates(calm, { ...calm, markings: { ...calm.markings, 'Pod/default/web-1': 2 } });
    expect(twice).toEqual({
      nodes: [],
      podsDeletedOnlyWithoutChaos: [],
      podsDeletedOnlyWithChaos: [],
      markings: [{ object: 'Pod/default/web-1', expected: 1, actual: 2 }],
    });
  });
});

const results: RunResult[] = [
  { example: 'single-node-failure', profile: 'duplicates=10,maxDelay=10s', seed: 1, same: true },
  { example: 'single-node-failure', profile: 'duplicates=10,maxDelay=10s', seed: 2, same: true },
  {
    example: 'single-node-failure',
    profile: 'deadLetter=0.05',
    seed: 1,
    same: false,
    difference: {
      nodes: [
        {
          node: 'a-1',
          expected: calm.nodes['a-1']!,
          actual: { ready: 'Unknown', taints: ['node.kubernetes.io/unreachable:NoSchedule'] },
        },
      ],
      podsDeletedOnlyWithoutChaos: ['default/web-1'],
      podsDeletedOnlyWithChaos: [],
      markings: [{ object: 'Pod/default/batch-1', expected: 1, actual: 2 }],
    },
  },
  { example: 'relay-outage', profile: 'deadLetter=0.05', seed: 1, same: false, error: 'Error: boom' },
];

describe('the report', () => {
  it('tallies per example and profile, in the order of the runs', () => {
    expect(tally(results)).toEqual([
      { example: 'single-node-failure', profile: 'duplicates=10,maxDelay=10s', same: 2, runs: 2 },
      { example: 'single-node-failure', profile: 'deadLetter=0.05', same: 0, runs: 1 },
      { example: 'relay-outage', profile: 'deadLetter=0.05', same: 0, runs: 1 },
    ]);
  });

  it('describes a mismatch: which run, what differs, how to reproduce it', () => {
    expect(describeMismatch(results[2]!)).toBe(
      [
        'single-node-failure · deadLetter=0.05 · seed 1',
        '  node a-1: Ready=Unknown, taints unreachable:NoSchedule (without chaos: Ready=Unknown, taints unreachable:NoExecute unreachable:NoSchedule)',
        '  pods deleted only without chaos: default/web-1',
        '  Pod/default/batch-1: 2 "Marking for deletion" Events (without chaos: 1)',
        '  reproduce: nlc simulate --chaos deadLetter=0.05,seed=1 examples/scenarios/single-node-failure.yaml',
      ].join('\n'),
    );
    expect(describeMismatch(results[3]!)).toBe(
      [
        'relay-outage · deadLetter=0.05 · seed 1',
        '  failed: Error: boom',
        '  reproduce: nlc simulate --chaos deadLetter=0.05,seed=1 examples/scenarios/relay-outage.yaml',
      ].join('\n'),
    );
  });

  it('prints the mismatches, then a line per example and profile, then the total', () => {
    const report = formatReport(results);
    expect(report).toContain('Runs that did not end as without chaos (2):');
    expect(report.split('\n').slice(-6)).toEqual([
      'EXAMPLE               PROFILE                      SAME END',
      'single-node-failure   duplicates=10,maxDelay=10s   2/2',
      'single-node-failure   deadLetter=0.05              0/1',
      'relay-outage          deadLetter=0.05              0/1',
      'TOTAL                                              2/4',
      '',
    ]);
    expect(formatReport(results.slice(0, 2))).not.toContain('did not end');
  });

  it('gives the same as JSON, each run with its command line', () => {
    const json = JSON.parse(formatJson(results)) as {
      total: unknown;
      tally: unknown[];
      runs: { reproduce: string; same: boolean }[];
    };
    expect(json.total).toEqual({ same: 2, runs: 4 });
    expect(json.tally).toEqual(tally(results));
    expect(json.runs.map((r) => r.same)).toEqual([true, true, false, false]);
    expect(json.runs[2]?.reproduce).toBe(
      'nlc simulate --chaos deadLetter=0.05,seed=1 examples/scenarios/single-node-failure.yaml',
    );
  });
});
