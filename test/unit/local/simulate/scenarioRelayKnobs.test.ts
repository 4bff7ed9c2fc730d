// The scenario knobs for the relay's own troubles: `stallWatch` (the relay's watch of a resource
// delivers nothing for a while) and `relayClockSkew` (the relay's clock is off the functions'), and
// their errors, each naming its field.
import { describe, expect, it } from 'vitest';
import { parseScenario, scenarioFromObject } from '../../../../local/simulate/scenario.js';
import { ScenarioError } from '../../../../shared/errors.js';

function issuesOf(doc: unknown): string[] {
  try {
    scenarioFromObject(doc);
  } catch (error) {
    if (error instanceof ScenarioError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

const base = { duration: '10m', nodes: [{ name: 'a-1', zone: 'zone-a' }] };

describe('stallWatch', () => {
  it('reads the resource and how long, for each watch of the relay', () => {
    const scenario = parseScenario(`
duration: 10m
nodes: [{name: a-1}]
timeline:
  - {at: 1m30s, stallWatch: {resource: leases, for: 3m}}
  - {at: 2m, stallWatch: {resource: nodes, for: 90}}
  - {at: 2m, stallWatch: {resource: pods, for: 1h}}
`);
    expect(scenario.timeline.map((e) => [e.at, e.action])).toEqual([
      [90_000, { kind: 'stallWatch', resource: 'leases', duration: 180_000 }],
      [120_000, { kind: 'stallWatch', resource: 'nodes', duration: 90_000 }],
      [120_000, { kind: 'stallWatch', resource: 'pods', duration: 3_600_000 }],
    ]);
  });

  it('names the field of every mistake', () => {
    expect(
      issuesOf({
        ...base,
        timeline: [
          { at: '1m', stallWatch: { resource: 'events', for: '3m' } },
          { at: '1m', stallWatch: { resource: 'leases' } },
          { at: '1m', stallWatch: { resource: 'leases', for: 0 } },
          { at: '1m', stallWatch: { resource: 'leases', for: 'long' } },
          { at: '1m', stallWatch: { resource: 'leases', for: '1m', until: '2m' } },
          { at: '1m', stallWatch: 'leases' },
          { at: '1m', stalWatch: { resource: 'leases', for: '1m' } },
        ],
      }),
    ).toEqual([
      'timeline[6].stalWatch: unknown action "stalWatch"; did you mean stallWatch?',
      'timeline[0].stallWatch.resource: expected leases, nodes or pods, got "events"',
      'timeline[1].stallWatch.for: missing: how long, e.g. "3m"',
      'timeline[2].stallWatch.for: expected a duration greater than 0, got 0',
      'timeline[3].stallWatch.for: expected a duration like "40s", "5m" or a number of seconds, got "long"',
      'timeline[4].stallWatch: unknown field "until"',
      'timeline[5].stallWatch: expected {resource: leases | nodes | pods, for: <duration>}, got "leases"',
    ]);
  });
});

describe('relayClockSkew', () => {
  it('is 0 unless given; takes a signed duration or a number of seconds', () => {
    expect(scenarioFromObject(base).relayClockSkew).toBe(0);
    expect(scenarioFromObject({ ...base, relayClockSkew: '-2m' }).relayClockSkew).toBe(-120_000);
    expect(scenarioFromObject({ ...base, relayClockSkew: '+90s' }).relayClockSkew).toBe(90_000);
    expect(scenarioFromObject({ ...base, relayClockSkew: -1.5 }).relayClockSkew).toBe(-1_500);
    expect(scenarioFromObject({ ...base, relayClockSkew: '1h' }).relayClockSkew).toBe(3_600_000);
    expect(parseScenario('duration: 5m\nnodes: [{name: a-1}]\nrelayClockSkew: -30s\n').relayClockSkew).toBe(
      -30_000,
    );
  });

  it('is at most an hour either way, and an error names the field', () => {
    expect(issuesOf({ ...base, relayClockSkew: '-1h1s' })).toEqual([
      'relayClockSkew: expected a skew of at most 1h either way, got "-1h1s"',
    ]);
    expect(issuesOf({ ...base, relayClockSkew: 7200 })).toEqual([
      'relayClockSkew: expected a skew of at most 1h either way, got 7200',
    ]);
    expect(issuesOf({ ...base, relayClockSkew: 'behind' })).toEqual([
      'relayClockSkew: expected a signed duration like "-2m", "+90s" or a number of seconds, got "behind"',
    ]);
    expect(issuesOf({ ...base, relayClockSkew: true })).toEqual([
      'relayClockSkew: expected a signed duration like "-2m", "+90s" or a number of seconds, got true',
    ]);
  });
});
