// The bus's routing comes from serverless.yml: the deployed rules decide which function gets which event.
import { describe, expect, it } from 'vitest';
import {
  loadServerlessRules,
  matchesPattern,
  parseRate,
  parseServerlessRules,
  targetsOf,
} from '../../../../local/simulate/routing.js';

const event = (detailType: string, cluster = 'prod') => ({
  source: 'nlc.relay',
  'detail-type': detailType,
  detail: { cluster },
});

describe('serverless.yml routing', () => {
  it('routes each relay event type to the functions the deployed rules name, for the served cluster only', async () => {
    const rules = await loadServerlessRules(['prod']);
    expect(targetsOf(event('Node Changed'), rules)).toEqual(['nodeTaints', 'taintEviction']);
    expect(targetsOf(event('Pod Changed'), rules)).toEqual(['taintEviction', 'podProcessing']);
    expect(targetsOf(event('Heartbeat Digest'), rules)).toEqual(['monitorNodeHealth']);
    expect(targetsOf(event('Heartbeat Digest', 'other'), rules)).toEqual([]);
    expect(targetsOf({ ...event('Node Changed'), source: 'someone.else' }, rules)).toEqual([]);
    expect(rules.filter((r) => r.kind === 'schedule').map((r) => [r.function, r.periodMs])).toEqual([
      ['monitorNodeHealth', 60_000],
      ['evictionDrainer', 60_000],
    ]);
  });

  it('reads exact-value patterns and rates, and refuses what it cannot match', () => {
    const rules = parseServerlessRules(
      `
functions:
  f:
    events:
      - eventBridge: {pattern: {source: [a], detail: {kind: [x, y]}}}
      - eventBridge: {schedule: rate(5 minutes)}
      - http: {path: /}
`,
      ['c'],
    );
    expect(rules).toEqual([
      { kind: 'event', function: 'f', pattern: { source: ['a'], detail: { kind: ['x', 'y'] } } },
      { kind: 'schedule', function: 'f', periodMs: 300_000, expression: 'rate(5 minutes)' },
    ]);
    expect(() =>
      parseServerlessRules(
        'functions: {f: {events: [{eventBridge: {pattern: {source: [{prefix: a}]}}}]}}',
        [],
      ),
    ).toThrow(/only exact-value patterns/);
    expect(() => parseRate('cron(0 * * * ? *)')).toThrow(/unsupported schedule/);
    expect(() => parseRate('rate(1 minutes)')).toThrow(/unsupported schedule/);
    expect(parseRate('rate(1 hour)')).toBe(3_600_000);
  });

  it('matches nested fields and requires every named field', () => {
    const pattern = { source: ['a'], detail: { kind: ['x'] } };
    expect(matchesPattern({ source: 'a', detail: { kind: 'x' } }, pattern)).toBe(true);
    expect(matchesPattern({ source: 'a', detail: { kind: 'z' } }, pattern)).toBe(false);
    expect(matchesPattern({ source: 'a' }, pattern)).toBe(false);
    expect(matchesPattern('a', pattern)).toBe(false);
  });
});
