// shared/config.ts: upstream defaults (docs/upstream.md#defaults), duration forms, env and object parsing,
// precedence, and errors that name every bad setting at once (docs/contributing.md#settings, #validation).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CONFIG_KEYS,
  ControllerConfigSchema,
  ENV_PREFIX,
  UPSTREAM_DEFAULTS,
  configWarnings,
  defaultsFor,
  formatConfigValue,
  loadConfig,
  loadConfigWithSources,
  parseConfigObject,
  type ConfigKey,
  type ControllerConfig,
} from '../../shared/config.js';
import { durationSchema, formatDuration, parseDuration } from '../../shared/duration.js';
import {
  minorOfServerVersion,
  NewestEmulatedMinor,
  OldestEmulatedMinor,
  type EmulationVersion,
} from '../../shared/domain/upstreamVersion.js';
import { ConfigError, NlcError, type ConfigIssue } from '../../shared/errors.js';

const DURATION_FORM = 'expected a duration like "40s", "5m" or a number of seconds';

/** The issues of the ConfigError `fn` throws (fails the test if it throws anything else or nothing). */
function issuesOf(fn: () => unknown): readonly ConfigIssue[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).issues;
  }
  expect.fail('expected a ConfigError');
}

describe('UPSTREAM_DEFAULTS', () => {
  // Values from docs/upstream.md#defaults (kube-controller-manager flags and v1alpha1 defaults, v1.32+).
  it.each<{ key: ConfigKey; want: ControllerConfig[ConfigKey] }>([
    { key: 'nodeMonitorPeriod', want: 5_000 },
    { key: 'nodeMonitorGracePeriod', want: 50_000 },
    { key: 'nodeStartupGracePeriod', want: 60_000 },
    { key: 'nodeEvictionRate', want: 0.1 },
    { key: 'secondaryNodeEvictionRate', want: 0.01 },
    { key: 'largeClusterSizeThreshold', want: 50 },
    { key: 'unhealthyZoneThreshold', want: 0.55 },
    { key: 'podEvictionTimeout', want: 300_000 },
    { key: 'evictionMode', want: 'taint' },
    { key: 'nodeEvictionPeriod', want: 100 },
    { key: 'dryRun', want: false },
    { key: 'cluster', want: 'default' },
  ])('$key defaults to $want', ({ key, want }) => {
    expect(UPSTREAM_DEFAULTS[key]).toBe(want);
    expect(parseConfigObject({})[key]).toBe(want);
    expect(loadConfig({})[key]).toBe(want);
  });

  it('covers every setting and is frozen', () => {
    expect(Object.keys(UPSTREAM_DEFAULTS).sort()).toEqual(Object.keys(CONFIG_KEYS).sort());
    expect(Object.isFrozen(UPSTREAM_DEFAULTS)).toBe(true);
    expect(ControllerConfigSchema.parse({})).toEqual(UPSTREAM_DEFAULTS);
  });
});

describe('CONFIG_KEYS', () => {
  const keys = Object.keys(CONFIG_KEYS) as ConfigKey[];
  const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
  const kebab = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

  it.each(keys)(
    '%s: env var is NLC_ + SCREAMING_SNAKE, flag is the kebab-case key, kind fits the default',
    (key) => {
      const info = CONFIG_KEYS[key];
      expect(info.envVar).toBe(`${ENV_PREFIX}${snake(key)}`);
      if (info.flag !== null) expect(info.flag).toBe(`--${kebab(key)}`);
      expect(info.description.length).toBeGreaterThan(10);
      const kindOfDefault = {
        number: ['duration', 'number', 'integer'],
        boolean: ['boolean'],
        string: ['enum', 'string'],
      };
      expect(kindOfDefault[typeof UPSTREAM_DEFAULTS[key] as 'number' | 'boolean' | 'string']).toContain(
        info.kind,
      );
    },
  );

  it.each([
    {
      key: 'nodeMonitorGracePeriod',
      flag: '--node-monitor-grace-period',
      envVar: 'NLC_NODE_MONITOR_GRACE_PERIOD',
    },
    { key: 'nodeEvictionRate', flag: '--node-eviction-rate', envVar: 'NLC_NODE_EVICTION_RATE' },
    {
      key: 'largeClusterSizeThreshold',
      flag: '--large-cluster-size-threshold',
      envVar: 'NLC_LARGE_CLUSTER_SIZE_THRESHOLD',
    },
    { key: 'podEvictionTimeout', flag: '--pod-eviction-timeout', envVar: 'NLC_POD_EVICTION_TIMEOUT' },
    { key: 'nodeEvictionPeriod', flag: null, envVar: 'NLC_NODE_EVICTION_PERIOD' },
    { key: 'dryRun', flag: null, envVar: 'NLC_DRY_RUN' },
    { key: 'cluster', flag: null, envVar: 'NLC_CLUSTER' },
  ] as const)('$key ↔ $flag ↔ $envVar', ({ key, flag, envVar }) => {
    expect(CONFIG_KEYS[key]).toMatchObject({ flag, envVar });
  });
});

describe('parseDuration', () => {
  it.each([
    { input: '500ms', want: 500 },
    { input: '40s', want: 40_000 },
    { input: '5m', want: 300_000 },
    { input: '1h', want: 3_600_000 },
    { input: '1m30s', want: 90_000 },
    { input: '1h2m3s4ms', want: 3_723_004 },
    { input: '1.5h', want: 5_400_000 },
    { input: '.5s', want: 500 },
    { input: '5.s', want: 5_000 },
    { input: '0.1s', want: 100 },
    { input: '2s500ms', want: 2_500 },
    { input: '+5s', want: 5_000 },
    { input: '-5s', want: -5_000 }, // signed: each setting decides whether negatives are allowed
    { input: ' 40s ', want: 40_000 },
    { input: '0', want: 0 },
    { input: '40', want: 40_000 }, // a numeric string is seconds
    { input: '0.5', want: 500 },
    { input: '1.005', want: 1_005 },
    { input: 40, want: 40_000 }, // a number is seconds
    { input: 0.5, want: 500 },
    { input: 1.005, want: 1_005 }, // 1.005 * 1000 is 1004.9999999999999 in floating point
    { input: 0, want: 0 },
    { input: -0, want: 0 },
    { input: -2, want: -2_000 },
  ])('$input → $want ms', ({ input, want }) => {
    expect(Object.is(parseDuration(input), want)).toBe(true);
  });

  it.each([
    { input: '', message: `${DURATION_FORM}, got ""` },
    { input: '   ', message: `${DURATION_FORM}, got "   "` },
    { input: 'fourty', message: `${DURATION_FORM}, got "fourty"` },
    { input: 's', message: `${DURATION_FORM}, got "s"` },
    { input: '.', message: `${DURATION_FORM}, got "."` },
    { input: '-', message: `${DURATION_FORM}, got "-"` },
    { input: '5us', message: `${DURATION_FORM}, got "5us"` },
    { input: '5d', message: `${DURATION_FORM}, got "5d"` },
    { input: '1m 30s', message: `${DURATION_FORM}, got "1m 30s"` },
    { input: '5m-3s', message: `${DURATION_FORM}, got "5m-3s"` },
    { input: '1e3', message: `${DURATION_FORM}, got "1e3"` },
    { input: '5S', message: `${DURATION_FORM}, got "5S"` },
    { input: Number.NaN, message: `${DURATION_FORM}, got NaN` },
    { input: Number.POSITIVE_INFINITY, message: `${DURATION_FORM}, got Infinity` },
    { input: '1.5ms', message: 'expected a whole number of milliseconds, got "1.5ms"' },
    { input: '0.0001', message: 'expected a whole number of milliseconds, got "0.0001"' },
    { input: 0.0001, message: 'expected a whole number of milliseconds, got 0.0001' },
    { input: '0.0000001h', message: 'expected a whole number of milliseconds, got "0.0000001h"' },
    {
      input: '9999999999999999h',
      message: 'expected a duration shorter than 285,000 years, got "9999999999999999h"',
    },
    { input: 1e20, message: 'expected a duration shorter than 285,000 years, got 100000000000000000000' },
  ])('$input is rejected', ({ input, message }) => {
    expect(issuesOf(() => parseDuration(input))).toEqual([{ path: 'duration', message }]);
    expect(issuesOf(() => parseDuration(input, 'timeline[2].at'))).toEqual([
      { path: 'timeline[2].at', message },
    ]);
  });
});

describe('formatDuration', () => {
  it.each([
    { ms: 0, want: '0s' },
    { ms: 100, want: '100ms' },
    { ms: 1_500, want: '1s500ms' },
    { ms: 50_000, want: '50s' },
    { ms: 90_000, want: '1m30s' },
    { ms: 300_000, want: '5m' },
    { ms: 3_600_000, want: '1h' },
    { ms: 5_400_000, want: '1h30m' },
    { ms: 3_723_004, want: '1h2m3s4ms' },
    { ms: 90_000_000, want: '25h' },
    { ms: -5_000, want: '-5s' },
    { ms: 99.6, want: '100ms' },
  ])('$ms ms → $want', ({ ms, want }) => {
    expect(formatDuration(ms)).toBe(want);
  });

  it('is the inverse of parseDuration for every whole number of milliseconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
    );
  });
});

describe('durationSchema', () => {
  it.each([
    { min: 'any', input: '-5s', want: { success: true, data: -5_000 } },
    { min: 'nonNegative', input: 0, want: { success: true, data: 0 } },
    { min: 'nonNegative', input: '-1s', message: 'expected a duration of 0 or more, got "-1s"' },
    { min: 'positive', input: '0s', message: 'expected a duration greater than 0, got "0s"' },
    { min: 'positive', input: true, message: `${DURATION_FORM}, got true` },
  ] as const)('$min: $input', ({ min, input, ...expected }) => {
    const result = z.object({ at: durationSchema(min) }).safeParse({ at: input });
    if ('want' in expected) expect({ success: result.success, data: result.data?.at }).toEqual(expected.want);
    else expect(result.error?.issues.map((i) => [i.path, i.message])).toEqual([[['at'], expected.message]]);
  });

  it('defaults to nonNegative', () => {
    expect(durationSchema().safeParse('-1s').success).toBe(false);
    expect(durationSchema().parse('30s')).toBe(30_000);
  });
});

describe('parseConfigObject (scenarios)', () => {
  it('reads every kind of value by config name, defaults the rest, and freezes the result', () => {
    const config = parseConfigObject({
      emulationVersion: '1.26', // the last minor with the legacy path
      nodeMonitorPeriod: '1s',
      nodeMonitorGracePeriod: 40, // seconds
      nodeStartupGracePeriod: '2m',
      nodeEvictionRate: 1,
      secondaryNodeEvictionRate: 0,
      largeClusterSizeThreshold: 0,
      unhealthyZoneThreshold: 1,
      podEvictionTimeout: 0,
      evictionMode: 'legacy',
      nodeEvictionPeriod: '50ms',
      kubeApiQps: '50',
      kubeApiBurst: 100,
      dryRun: true,
      cluster: 'prod-eu-1',
      relayLease: 'kube-system/relay',
    });
    expect(config).toEqual({
      emulationVersion: '1.26',
      nodeMonitorPeriod: 1_000,
      nodeMonitorGracePeriod: 40_000,
      nodeStartupGracePeriod: 120_000,
      nodeEvictionRate: 1,
      secondaryNodeEvictionRate: 0,
      largeClusterSizeThreshold: 0,
      unhealthyZoneThreshold: 1,
      podEvictionTimeout: 0,
      evictionMode: 'legacy',
      nodeEvictionPeriod: 50,
      kubeApiQps: 50,
      kubeApiBurst: 100,
      dryRun: true,
      cluster: 'prod-eu-1',
      relayLease: 'kube-system/relay',
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it.each([{ input: undefined }, { input: null }, { input: {} }, { input: { dryRun: undefined } }])(
    '$input gives the upstream defaults',
    ({ input }) => {
      expect(parseConfigObject(input)).toEqual(UPSTREAM_DEFAULTS);
    },
  );

  it('accepts the string forms a CLI flag carries', () => {
    expect(
      parseConfigObject({ nodeEvictionRate: '0.5', largeClusterSizeThreshold: '10', dryRun: 'true' }),
    ).toMatchObject({
      nodeEvictionRate: 0.5,
      largeClusterSizeThreshold: 10,
      dryRun: true,
    });
  });

  it.each([
    { input: 'nodeMonitorPeriod: 5s', got: '"nodeMonitorPeriod: 5s"' },
    { input: [1], got: 'an array' },
    { input: 42, got: '42' },
  ])('a non-object ($got) is an error naming the config', ({ input, got }) => {
    expect(issuesOf(() => parseConfigObject(input))).toEqual([
      { path: 'config', message: `expected an object of settings, got ${got}` },
    ]);
  });

  it('names fields after the given path, or bare with an empty path', () => {
    expect(issuesOf(() => parseConfigObject({ dryRun: 'yes' }, 'scenario.config'))).toEqual([
      { path: 'scenario.config.dryRun', message: 'expected true or false (or 1 / 0), got "yes"' },
    ]);
    expect(issuesOf(() => parseConfigObject({ dryRun: 'yes' }, ''))).toEqual([
      { path: 'dryRun', message: 'expected true or false (or 1 / 0), got "yes"' },
    ]);
    expect(issuesOf(() => parseConfigObject(7, ''))).toEqual([
      { path: 'config', message: 'expected an object of settings, got 7' },
    ]);
  });
});

describe('invalid settings name the field and the expected form', () => {
  const RATE = 'expected a number of nodes per second, 0 or more (like 0.1), got';
  const SECONDARY = 'expected a number of nodes per second, 0 or more (like 0.01), got';
  const FRACTION = 'expected a fraction greater than 0 and at most 1 (like 0.55), got';
  const WHOLE = 'expected a whole number of nodes, 0 or more (like 50), got';
  const CLUSTER =
    "expected 1 to 63 lowercase letters, digits or '-', starting and ending with a letter or digit, got";
  const BOOL = 'expected true or false (or 1 / 0), got';
  it.each<{ name: string; config: Record<string, unknown>; issues: ConfigIssue[] }>([
    {
      name: 'negative rate',
      config: { nodeEvictionRate: -0.1 },
      issues: [{ path: 'config.nodeEvictionRate', message: `${RATE} -0.1` }],
    },
    {
      name: 'negative secondary rate',
      config: { secondaryNodeEvictionRate: '-1' },
      issues: [{ path: 'config.secondaryNodeEvictionRate', message: `${SECONDARY} "-1"` }],
    },
    {
      name: 'rate not a number',
      config: { nodeEvictionRate: '0.1/s' },
      issues: [{ path: 'config.nodeEvictionRate', message: `${RATE} "0.1/s"` }],
    },
    {
      name: 'rate Infinity',
      config: { nodeEvictionRate: Infinity },
      issues: [{ path: 'config.nodeEvictionRate', message: `${RATE} Infinity` }],
    },
    {
      name: 'rate as boolean',
      config: { nodeEvictionRate: true },
      issues: [{ path: 'config.nodeEvictionRate', message: `${RATE} true` }],
    },
    {
      name: 'threshold 0',
      config: { unhealthyZoneThreshold: 0 },
      issues: [{ path: 'config.unhealthyZoneThreshold', message: `${FRACTION} 0` }],
    },
    {
      name: 'threshold > 1',
      config: { unhealthyZoneThreshold: 1.5 },
      issues: [{ path: 'config.unhealthyZoneThreshold', message: `${FRACTION} 1.5` }],
    },
    {
      name: 'threshold 55 (a percentage)',
      config: { unhealthyZoneThreshold: '55' },
      issues: [{ path: 'config.unhealthyZoneThreshold', message: `${FRACTION} "55"` }],
    },
    {
      name: 'non-integer large cluster threshold',
      config: { largeClusterSizeThreshold: 2.5 },
      issues: [{ path: 'config.largeClusterSizeThreshold', message: `${WHOLE} 2.5` }],
    },
    {
      name: 'non-integer large cluster threshold string',
      config: { largeClusterSizeThreshold: '50.5' },
      issues: [{ path: 'config.largeClusterSizeThreshold', message: `${WHOLE} "50.5"` }],
    },
    {
      name: 'negative large cluster threshold',
      config: { largeClusterSizeThreshold: -1 },
      issues: [{ path: 'config.largeClusterSizeThreshold', message: `${WHOLE} -1` }],
    },
    {
      name: 'large cluster threshold beyond int32',
      config: { largeClusterSizeThreshold: 2 ** 31 },
      issues: [{ path: 'config.largeClusterSizeThreshold', message: `${WHOLE} 2147483648` }],
    },
    {
      name: 'zero API QPS',
      config: { kubeApiQps: 0 },
      issues: [
        {
          path: 'config.kubeApiQps',
          message: 'expected a number of requests per second, more than 0 (like 20), got 0',
        },
      ],
    },
    {
      name: 'fractional API burst',
      config: { kubeApiBurst: '2.5' },
      issues: [
        {
          path: 'config.kubeApiBurst',
          message: 'expected a whole number of requests, 1 or more (like 30), got "2.5"',
        },
      ],
    },
    {
      name: 'grace equal to period',
      config: { nodeMonitorPeriod: '50s' },
      issues: [
        {
          path: 'config.nodeMonitorGracePeriod',
          message:
            'nodeMonitorGracePeriod (50s) must be greater than nodeMonitorPeriod (50s): the grace must span several node status updates',
        },
      ],
    },
    {
      name: 'grace below period',
      config: { nodeMonitorGracePeriod: '4s' },
      issues: [
        {
          path: 'config.nodeMonitorGracePeriod',
          message:
            'nodeMonitorGracePeriod (4s) must be greater than nodeMonitorPeriod (5s): the grace must span several node status updates',
        },
      ],
    },
    {
      name: 'zero monitor period',
      config: { nodeMonitorPeriod: 0 },
      issues: [{ path: 'config.nodeMonitorPeriod', message: 'expected a duration greater than 0, got 0' }],
    },
    {
      name: 'zero eviction period',
      config: { nodeEvictionPeriod: '0ms' },
      issues: [
        { path: 'config.nodeEvictionPeriod', message: 'expected a duration greater than 0, got "0ms"' },
      ],
    },
    {
      name: 'negative startup grace',
      config: { nodeStartupGracePeriod: '-1m' },
      issues: [
        { path: 'config.nodeStartupGracePeriod', message: 'expected a duration of 0 or more, got "-1m"' },
      ],
    },
    {
      name: 'garbage duration',
      config: { nodeMonitorGracePeriod: 'fourty' },
      issues: [{ path: 'config.nodeMonitorGracePeriod', message: `${DURATION_FORM}, got "fourty"` }],
    },
    {
      name: 'duration as object',
      config: { podEvictionTimeout: { minutes: 5 } },
      issues: [{ path: 'config.podEvictionTimeout', message: `${DURATION_FORM}, got an object` }],
    },
    {
      name: 'bad evictionMode',
      config: { evictionMode: 'Taint' },
      issues: [{ path: 'config.evictionMode', message: 'expected "taint" or "legacy", got "Taint"' }],
    },
    {
      name: 'evictionMode as boolean',
      config: { evictionMode: false },
      issues: [{ path: 'config.evictionMode', message: 'expected "taint" or "legacy", got false' }],
    },
    {
      name: 'boolean as yes',
      config: { dryRun: 'yes' },
      issues: [{ path: 'config.dryRun', message: `${BOOL} "yes"` }],
    },
    {
      name: 'boolean as number',
      config: { dryRun: 1 },
      issues: [{ path: 'config.dryRun', message: `${BOOL} 1` }],
    },
    {
      name: 'null value',
      config: { dryRun: null },
      issues: [{ path: 'config.dryRun', message: `${BOOL} null` }],
    },
    {
      name: 'cluster with uppercase',
      config: { cluster: 'Prod' },
      issues: [{ path: 'config.cluster', message: `${CLUSTER} "Prod"` }],
    },
    {
      name: 'cluster with underscore',
      config: { cluster: 'my_cluster' },
      issues: [{ path: 'config.cluster', message: `${CLUSTER} "my_cluster"` }],
    },
    {
      name: 'cluster with a key separator',
      config: { cluster: 'a#b' },
      issues: [{ path: 'config.cluster', message: `${CLUSTER} "a#b"` }],
    },
    {
      name: 'empty cluster',
      config: { cluster: '' },
      issues: [{ path: 'config.cluster', message: `${CLUSTER} ""` }],
    },
    {
      name: 'cluster starting with -',
      config: { cluster: '-prod' },
      issues: [{ path: 'config.cluster', message: `${CLUSTER} "-prod"` }],
    },
    {
      name: 'cluster of 64 characters',
      config: { cluster: 'a'.repeat(64) },
      issues: [{ path: 'config.cluster', message: `${CLUSTER} "${'a'.repeat(57)}..."` }],
    },
    {
      name: 'cluster as number',
      config: { cluster: 7 },
      issues: [{ path: 'config.cluster', message: `${CLUSTER} 7` }],
    },
    {
      name: 'cluster as function',
      config: { cluster: () => 'x' },
      issues: [{ path: 'config.cluster', message: `${CLUSTER} a function` }],
    },
    {
      name: 'Go name evictionLimiterQPS',
      config: { evictionLimiterQPS: 1 },
      issues: [
        { path: 'config.evictionLimiterQPS', message: 'unknown setting; did you mean nodeEvictionRate?' },
      ],
    },
    {
      name: 'Go name secondaryEvictionLimiterQPS',
      config: { secondaryEvictionLimiterQPS: 1 },
      issues: [
        {
          path: 'config.secondaryEvictionLimiterQPS',
          message: 'unknown setting; did you mean secondaryNodeEvictionRate?',
        },
      ],
    },
    {
      name: 'Go name largeClusterThreshold',
      config: { largeClusterThreshold: 1 },
      issues: [
        {
          path: 'config.largeClusterThreshold',
          message: 'unknown setting; did you mean largeClusterSizeThreshold?',
        },
      ],
    },
    {
      name: 'removed flag enableTaintManager',
      config: { enableTaintManager: false },
      issues: [{ path: 'config.enableTaintManager', message: 'unknown setting; did you mean evictionMode?' }],
    },
    {
      name: 'flag name',
      config: { 'node-monitor-grace-period': '40s' },
      issues: [
        {
          path: 'config.node-monitor-grace-period',
          message: 'unknown setting; did you mean nodeMonitorGracePeriod?',
        },
      ],
    },
    {
      name: 'env var name',
      config: { NLC_DRY_RUN: true },
      issues: [{ path: 'config.NLC_DRY_RUN', message: 'unknown setting; did you mean dryRun?' }],
    },
    {
      name: 'typo',
      config: { nodeMonitorGracePerid: '40s' },
      issues: [
        {
          path: 'config.nodeMonitorGracePerid',
          message: 'unknown setting; did you mean nodeMonitorGracePeriod?',
        },
      ],
    },
    {
      name: 'unrelated key',
      config: { replicas: 3 },
      issues: [
        {
          path: 'config.replicas',
          message: 'unknown setting (the settings are listed in docs/configuration.md)',
        },
      ],
    },
  ])('$name', ({ config, issues }) => {
    expect(issuesOf(() => parseConfigObject(config))).toEqual(issues);
  });

  it.each([
    { name: 'threshold 1 is allowed', config: { unhealthyZoneThreshold: 1 } },
    { name: 'rates 0 are allowed', config: { nodeEvictionRate: 0, secondaryNodeEvictionRate: '0' } },
    { name: 'threshold 0 nodes is allowed', config: { largeClusterSizeThreshold: '0' } },
    {
      name: 'zero startup grace and pod eviction timeout are allowed',
      config: { nodeStartupGracePeriod: 0, podEvictionTimeout: '0s', emulationVersion: '1.26' },
    },
    {
      name: 'grace just above period',
      config: { nodeMonitorPeriod: '5s', nodeMonitorGracePeriod: '5001ms' },
    },
    { name: '63-character cluster', config: { cluster: `a${'-'.repeat(61)}b` } },
    { name: 'one-character cluster', config: { cluster: '7' } },
  ])('$name', ({ config }) => {
    expect(() => parseConfigObject(config)).not.toThrow();
  });

  it('lists several errors at once, each on its own line', () => {
    let error: unknown;
    try {
      parseConfigObject({
        nodeEvictionRate: -1,
        unhealthyZoneThreshold: 2,
        largeClusterThreshold: 3,
        cluster: 'Bad',
        nodeMonitorGracePeriod: '1s', // still compared with the (valid) period while other fields are bad
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { issues, message } = error as ConfigError;
    expect(issues.map((i) => i.path)).toEqual([
      'config.nodeEvictionRate',
      'config.unhealthyZoneThreshold',
      'config.cluster',
      'config.largeClusterThreshold',
      'config.nodeMonitorGracePeriod',
    ]);
    expect(message.split('\n')).toEqual([
      'Invalid configuration (5 problems):',
      ...issues.map((i) => `- ${i.path}: ${i.message}`),
    ]);
  });

  it('skips the grace/period comparison when either value is invalid', () => {
    expect(
      issuesOf(() => parseConfigObject({ nodeMonitorPeriod: 'x', nodeMonitorGracePeriod: '1ms' })),
    ).toEqual([{ path: 'config.nodeMonitorPeriod', message: `${DURATION_FORM}, got "x"` }]);
  });
});

describe('loadConfig (environment and overrides)', () => {
  it.each([
    { value: 'true', want: true },
    { value: 'false', want: false },
    { value: '1', want: true },
    { value: '0', want: false },
    { value: 'TRUE', want: true },
    { value: ' False ', want: false },
  ])('NLC_DRY_RUN=$value → $want', ({ value, want }) => {
    expect(loadConfig({ NLC_DRY_RUN: value }).dryRun).toBe(want);
  });

  it.each<{ env: Record<string, string>; key: ConfigKey; want: ControllerConfig[ConfigKey] }>([
    { env: { NLC_NODE_EVICTION_RATE: '0.5' }, key: 'nodeEvictionRate', want: 0.5 },
    { env: { NLC_SECONDARY_NODE_EVICTION_RATE: '.02' }, key: 'secondaryNodeEvictionRate', want: 0.02 },
    { env: { NLC_SECONDARY_NODE_EVICTION_RATE: '1e-3' }, key: 'secondaryNodeEvictionRate', want: 0.001 },
    { env: { NLC_UNHEALTHY_ZONE_THRESHOLD: '0.7' }, key: 'unhealthyZoneThreshold', want: 0.7 },
    { env: { NLC_LARGE_CLUSTER_SIZE_THRESHOLD: '20' }, key: 'largeClusterSizeThreshold', want: 20 },
    { env: { NLC_NODE_MONITOR_PERIOD: '500ms' }, key: 'nodeMonitorPeriod', want: 500 },
    { env: { NLC_NODE_MONITOR_GRACE_PERIOD: '40s' }, key: 'nodeMonitorGracePeriod', want: 40_000 },
    { env: { NLC_NODE_MONITOR_GRACE_PERIOD: '40' }, key: 'nodeMonitorGracePeriod', want: 40_000 },
    { env: { NLC_NODE_STARTUP_GRACE_PERIOD: '1m30s' }, key: 'nodeStartupGracePeriod', want: 90_000 },
    {
      env: { NLC_POD_EVICTION_TIMEOUT: '10m', NLC_EMULATION_VERSION: '1.26' },
      key: 'podEvictionTimeout',
      want: 600_000,
    },
    { env: { NLC_NODE_EVICTION_PERIOD: '0.25' }, key: 'nodeEvictionPeriod', want: 250 },
    {
      env: { NLC_EVICTION_MODE: 'legacy', NLC_EMULATION_VERSION: '1.25' },
      key: 'evictionMode',
      want: 'legacy',
    },
    { env: { NLC_EMULATION_VERSION: 'v1.30.4' }, key: 'emulationVersion', want: '1.30' },
    { env: { NLC_CLUSTER: ' prod ' }, key: 'cluster', want: 'prod' },
  ])('$env → $key = $want', ({ env, key, want }) => {
    expect(loadConfig(env)[key]).toBe(want);
  });

  it('ignores variables without the NLC_ prefix (case-sensitive) and treats empty NLC_ values as unset', () => {
    const env = {
      PATH: '/usr/bin',
      NODE_MONITOR_PERIOD: 'garbage',
      nlc_dry_run: 'garbage',
      NLC_DRY_RUN: '',
      NLC_CLUSTER: '   ',
      NLC_EVICTION_MODE: undefined,
    };
    expect(loadConfigWithSources(env).settings.dryRun).toEqual({ value: false, source: 'default' });
    expect(loadConfig(env)).toEqual(UPSTREAM_DEFAULTS);
  });

  it('precedence: override > env > upstream default', () => {
    const env = { NLC_NODE_EVICTION_RATE: '0.5', NLC_DRY_RUN: 'true' };
    const config = loadConfig(env, { nodeEvictionRate: 0.2 });
    expect(config.nodeEvictionRate).toBe(0.2); // override wins over env
    expect(config.dryRun).toBe(true); // env wins over default
    expect(config.nodeMonitorGracePeriod).toBe(50_000); // default
  });

  it('an override of undefined (a CLI flag not given) leaves the env value', () => {
    expect(loadConfig({ NLC_DRY_RUN: 'true' }, { dryRun: undefined }).dryRun).toBe(true);
  });

  it('an override may lift a cross-field conflict of env values', () => {
    const env = { NLC_NODE_MONITOR_PERIOD: '1m' };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(loadConfig(env, { nodeMonitorGracePeriod: '2m' }).nodeMonitorGracePeriod).toBe(120_000);
  });

  it('reports every effective value with its source', () => {
    const { config, settings, warnings } = loadConfigWithSources(
      { NLC_DRY_RUN: '1', NLC_NODE_EVICTION_RATE: '0.5', NLC_CLUSTER: 'prod' },
      { nodeEvictionRate: '0.2', nodeMonitorGracePeriod: '60s' },
    );
    expect(settings).toEqual({
      emulationVersion: { value: '1.37', source: 'default' },
      nodeMonitorPeriod: { value: 5_000, source: 'default' },
      nodeMonitorGracePeriod: { value: 60_000, source: 'override' },
      nodeStartupGracePeriod: { value: 60_000, source: 'default' },
      nodeEvictionRate: { value: 0.2, source: 'override' },
      secondaryNodeEvictionRate: { value: 0.01, source: 'default' },
      largeClusterSizeThreshold: { value: 50, source: 'default' },
      unhealthyZoneThreshold: { value: 0.55, source: 'default' },
      podEvictionTimeout: { value: 300_000, source: 'default' },
      evictionMode: { value: 'taint', source: 'default' },
      nodeEvictionPeriod: { value: 100, source: 'default' },
      kubeApiQps: { value: 20, source: 'default' },
      kubeApiBurst: { value: 30, source: 'default' },
      dryRun: { value: true, source: 'env' },
      cluster: { value: 'prod', source: 'env' },
      relayLease: { value: 'nlc-system/nlc-relay', source: 'default' },
    });
    expect(config).toEqual(Object.fromEntries(Object.entries(settings).map(([k, s]) => [k, s.value])));
    expect(Object.isFrozen(config) && Object.isFrozen(settings)).toBe(true);
    expect(warnings).toEqual([]);
  });

  it.each<{
    name: string;
    env: Record<string, string>;
    overrides?: Record<string, unknown>;
    issues: ConfigIssue[];
  }>([
    {
      name: 'a relay Lease that is not namespace/name',
      env: { NLC_RELAY_LEASE: 'nlc-relay' },
      issues: [
        {
          path: 'NLC_RELAY_LEASE',
          message: 'expected namespace/name of a Lease (like nlc-system/nlc-relay), got "nlc-relay"',
        },
      ],
    },
    {
      name: 'a bad env value is named by its env var',
      env: { NLC_NODE_MONITOR_GRACE_PERIOD: 'fourty' },
      issues: [{ path: 'NLC_NODE_MONITOR_GRACE_PERIOD', message: `${DURATION_FORM}, got "fourty"` }],
    },
    {
      name: 'unknown NLC_ var with a suggestion',
      env: { NLC_EVICTION_LIMITER_QPS: '1' },
      issues: [
        {
          path: 'NLC_EVICTION_LIMITER_QPS',
          message: 'unknown setting; did you mean NLC_NODE_EVICTION_RATE?',
        },
      ],
    },
    {
      name: 'unknown NLC_ var with a typo',
      env: { NLC_DRYRUN: 'true' },
      issues: [{ path: 'NLC_DRYRUN', message: 'unknown setting; did you mean NLC_DRY_RUN?' }],
    },
    {
      name: 'unknown NLC_ var without a suggestion',
      env: { NLC_TABLE_NAME: 'state' },
      issues: [
        {
          path: 'NLC_TABLE_NAME',
          message: 'unknown setting (the settings are listed in docs/configuration.md)',
        },
      ],
    },
    {
      name: 'unknown NLC_ var even when empty',
      env: { NLC_FOO: '' },
      issues: [
        { path: 'NLC_FOO', message: 'unknown setting (the settings are listed in docs/configuration.md)' },
      ],
    },
    {
      name: 'a bad env var hidden by an override is still reported',
      env: { NLC_DRY_RUN: 'yes' },
      overrides: { dryRun: false },
      issues: [{ path: 'NLC_DRY_RUN', message: 'expected true or false (or 1 / 0), got "yes"' }],
    },
    {
      name: 'a bad override is named by its key',
      env: { NLC_EVICTION_MODE: 'legacy', NLC_EMULATION_VERSION: '1.26' },
      overrides: { evictionMode: 'none' },
      issues: [{ path: 'evictionMode', message: 'expected "taint" or "legacy", got "none"' }],
    },
    {
      name: 'an unknown override key, even undefined, gets a suggestion',
      env: {},
      overrides: { evictionLimiterQPS: undefined },
      issues: [{ path: 'evictionLimiterQPS', message: 'unknown setting; did you mean nodeEvictionRate?' }],
    },
    {
      name: 'grace from env not above the default period names both',
      env: { NLC_NODE_MONITOR_GRACE_PERIOD: '5s' },
      issues: [
        {
          path: 'NLC_NODE_MONITOR_GRACE_PERIOD',
          message:
            'nodeMonitorGracePeriod (5s) must be greater than nodeMonitorPeriod (5s): the grace must span several node status updates',
        },
      ],
    },
  ])('$name', ({ env, overrides, issues }) => {
    expect(issuesOf(() => loadConfig(env, overrides))).toEqual(issues);
  });

  it('lists every bad env var and override at once', () => {
    const issues = issuesOf(() =>
      loadConfig(
        {
          NLC_NODE_MONITOR_GRACE_PERIOD: 'fourty',
          NLC_NODE_EVICTION_RATE: '-1',
          NLC_BOGUS: 'x',
          HOME: '/root',
        },
        { unhealthyZoneThreshold: 0, cluster: 'My_Cluster', largeClusterThreshold: 10 },
      ),
    );
    expect(issues.map((i) => i.path).sort()).toEqual(
      [
        'NLC_BOGUS',
        'NLC_NODE_MONITOR_GRACE_PERIOD',
        'NLC_NODE_EVICTION_RATE',
        'unhealthyZoneThreshold',
        'cluster',
        'largeClusterThreshold',
      ].sort(),
    );
  });

  it('prefixes override keys with overridesPath (a scenario)', () => {
    expect(
      issuesOf(() => loadConfig({}, { cluster: 'Bad', typoKey: 1 }, { overridesPath: 'config' })).map(
        (i) => i.path,
      ),
    ).toEqual(['config.cluster', 'config.typoKey']);
  });
});

describe('configWarnings', () => {
  it.each([
    { grace: 40_000, warns: true }, // the pre-1.32 default
    { grace: 45_000, warns: true },
    { grace: 45_001, warns: false },
    { grace: 50_000, warns: false },
  ])('grace $grace ms warns: $warns', ({ grace, warns }) => {
    const warnings = configWarnings({ nodeMonitorGracePeriod: grace });
    expect(warnings).toHaveLength(warns ? 1 : 0);
    if (warns)
      expect(warnings[0]).toContain(`nodeMonitorGracePeriod (${formatDuration(grace)}) is not above 45s`);
  });

  it('are reported by loadConfigWithSources, not thrown', () => {
    expect(loadConfigWithSources({ NLC_NODE_MONITOR_GRACE_PERIOD: '40s' }).warnings).toHaveLength(1);
  });
});

describe('formatConfigValue', () => {
  it.each([
    { key: 'podEvictionTimeout', value: 300_000, want: '5m' },
    { key: 'nodeEvictionPeriod', value: 100, want: '100ms' },
    { key: 'nodeEvictionRate', value: 0.1, want: '0.1' },
    { key: 'dryRun', value: false, want: 'false' },
    { key: 'evictionMode', value: 'taint', want: 'taint' },
  ] as const)('$key $value → $want', ({ key, value, want }) => {
    expect(formatConfigValue(key, value)).toBe(want);
  });
});

describe('errors', () => {
  it('ConfigError is an NlcError with its own name, issues and cause', () => {
    const cause = new Error('underlying');
    const error = new ConfigError(
      [{ path: 'NLC_DRY_RUN', message: 'expected true or false (or 1 / 0), got "yes"' }],
      {
        cause,
      },
    );
    expect(error).toBeInstanceOf(NlcError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ConfigError');
    expect(error.cause).toBe(cause);
    expect(error.message).toBe(
      'Invalid configuration (1 problem):\n- NLC_DRY_RUN: expected true or false (or 1 / 0), got "yes"',
    );
  });

  it('NlcError takes the name of the subclass', () => {
    class ExampleError extends NlcError {}
    expect(new NlcError('x').name).toBe('NlcError');
    expect(new ExampleError('x').name).toBe('ExampleError');
  });
});

describe('emulationVersion: the upstream minor reproduced', () => {
  it('defaults to the newest released minor, with its defaults', () => {
    expect(parseConfigObject({}).emulationVersion).toBe(`1.${NewestEmulatedMinor}`);
    expect(UPSTREAM_DEFAULTS.emulationVersion).toBe(`1.${NewestEmulatedMinor}`);
  });

  it.each([
    { version: '1.25', grace: 40_000 },
    { version: '1.31', grace: 40_000 },
    { version: '1.32', grace: 50_000 },
    { version: '1.37', grace: 50_000 },
  ])(
    '$version: nodeMonitorGracePeriod defaults to $grace ms (50s from v1.32, PR #126287)',
    ({ version, grace }) => {
      expect(parseConfigObject({ emulationVersion: version }).nodeMonitorGracePeriod).toBe(grace);
      expect(defaultsFor(version as EmulationVersion).nodeMonitorGracePeriod).toBe(grace);
      // A grace period given is kept, whatever the minor.
      expect(
        parseConfigObject({ emulationVersion: version, nodeMonitorGracePeriod: '45s' })
          .nodeMonitorGracePeriod,
      ).toBe(45_000);
    },
  );

  it('takes "1.NN", "v1.NN.P" and the YAML number 1.NN', () => {
    expect(parseConfigObject({ emulationVersion: 'v1.28.3' }).emulationVersion).toBe('1.28');
    expect(parseConfigObject({ emulationVersion: 1.34 }).emulationVersion).toBe('1.34');
  });

  it.each([
    { gitVersion: 'v1.31.4-eks-1a2b3c4', minor: 31 },
    { gitVersion: 'v1.30.9-gke.1127000', minor: 30 },
    { gitVersion: 'v1.37.0', minor: 37 },
    { gitVersion: 'v1.38.0-alpha.1', minor: 38 },
    { gitVersion: '1.34', minor: 34 },
    { gitVersion: 'v2.0.0', minor: undefined },
    { gitVersion: 'v1.3x', minor: undefined },
    { gitVersion: '', minor: undefined },
  ])("reads a server's minor from its /version: $gitVersion", ({ gitVersion, minor }) => {
    expect(minorOfServerVersion(gitVersion)).toBe(minor);
  });

  it.each([
    { input: '1.24', shown: '"1.24"', hint: '' },
    { input: '1.38', shown: '"1.38"', hint: '' },
    { input: 'latest', shown: '"latest"', hint: '' },
    { input: 1.3, shown: '1.3', hint: ' (a YAML number loses trailing zeros: quote it, as "1.30")' },
  ])('refuses $input, naming the range', ({ input, shown, hint }) => {
    expect(issuesOf(() => parseConfigObject({ emulationVersion: input }))).toEqual([
      {
        path: 'config.emulationVersion',
        message: `expected an upstream minor from 1.${OldestEmulatedMinor} to 1.${NewestEmulatedMinor} (like "1.34"), got ${shown}${hint}`,
      },
    ]);
  });

  it('refuses the legacy eviction path and --pod-eviction-timeout from v1.27 (PR #115840), by field', () => {
    const removed =
      'removed in v1.27 (PR #115840); emulationVersion 1.27 does not have it: emulate "1.26" or earlier for it';
    expect(
      issuesOf(() =>
        parseConfigObject({ emulationVersion: '1.27', evictionMode: 'legacy', podEvictionTimeout: '2m' }),
      ),
    ).toEqual([
      {
        path: 'config.evictionMode',
        message: `"legacy" is the eviction path of --enable-taint-manager=false, ${removed}`,
      },
      { path: 'config.podEvictionTimeout', message: `--pod-eviction-timeout was ${removed}` },
    ]);
    expect(issuesOf(() => loadConfig({ NLC_EVICTION_MODE: 'legacy' }))).toEqual([
      {
        path: 'NLC_EVICTION_MODE',
        message:
          '"legacy" is the eviction path of --enable-taint-manager=false, removed in v1.27 (PR #115840); emulationVersion 1.37 does not have it: emulate "1.26" or earlier for it',
      },
    ]);
    const legacy = parseConfigObject({
      emulationVersion: '1.26',
      evictionMode: 'legacy',
      podEvictionTimeout: '2m',
    });
    expect([legacy.evictionMode, legacy.podEvictionTimeout]).toEqual(['legacy', 120_000]);
  });

  it('a bad emulationVersion still lets the grace check run on the newest defaults, and reports both', () => {
    expect(issuesOf(() => parseConfigObject({ emulationVersion: '2.0', nodeMonitorPeriod: '1m' }))).toEqual([
      {
        path: 'config.emulationVersion',
        message: `expected an upstream minor from 1.${OldestEmulatedMinor} to 1.${NewestEmulatedMinor} (like "1.34"), got "2.0"`,
      },
      {
        path: 'config.nodeMonitorGracePeriod',
        message:
          'nodeMonitorGracePeriod (50s) must be greater than nodeMonitorPeriod (1m): the grace must span several node status updates',
      },
    ]);
  });
});
