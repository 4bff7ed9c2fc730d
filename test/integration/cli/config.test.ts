// `nlc config`: the effective settings with their sources (default, env, flag) and upstream defaults,
// and exit 2 naming each bad flag or variable.
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { ConfigReport } from '../../../cli/commands/config.js';
import { CONFIG_KEYS, formatConfigValue, UPSTREAM_DEFAULTS, type ConfigKey } from '../../../shared/config.js';
import { runCli, tableRow } from './helpers.js';

const KEYS = Object.keys(CONFIG_KEYS) as ConfigKey[];

describe('nlc config', () => {
  it('prints every setting with its value, source, default and variable', async () => {
    const { code, stdout, stderr } = await runCli(['config']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(tableRow(stdout, 'KEY')).toEqual(['KEY', 'VALUE', 'SOURCE', 'DEFAULT', 'ENV']);
    for (const key of KEYS) {
      const value = formatConfigValue(key, UPSTREAM_DEFAULTS[key]);
      expect(tableRow(stdout, key)).toEqual([key, value, 'default', value, CONFIG_KEYS[key].envVar]);
    }
  });

  it('reports the source of each value: flag over env over default', async () => {
    const { code, stdout, stderr } = await runCli(
      ['config', '--node-monitor-grace-period', '40s', '--dry-run', '-o', 'json'],
      { env: { NLC_NODE_EVICTION_RATE: '0.05', NLC_NODE_MONITOR_GRACE_PERIOD: '60s' } },
    );
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as ConfigReport;
    const byKey = new Map(report.settings.map((s) => [s.key, s]));
    expect(byKey.get('nodeMonitorGracePeriod')).toEqual({
      key: 'nodeMonitorGracePeriod',
      value: '40s',
      source: 'flag',
      default: '50s',
      flag: '--node-monitor-grace-period',
      upstreamFlag: '--node-monitor-grace-period',
      envVar: 'NLC_NODE_MONITOR_GRACE_PERIOD',
      description: CONFIG_KEYS.nodeMonitorGracePeriod.description,
    });
    expect(byKey.get('nodeEvictionRate')).toMatchObject({ value: 0.05, source: 'env', default: 0.1 });
    expect(byKey.get('dryRun')).toMatchObject({
      value: true,
      source: 'flag',
      default: false,
      flag: '--dry-run',
    });
    expect(byKey.get('evictionMode')).toMatchObject({
      value: 'taint',
      source: 'default',
      upstreamFlag: null,
    });
    expect(report.settings.map((s) => s.key)).toEqual(KEYS);
    // 40s is legal but below what upstream advises: a warning on stderr, not an error.
    expect(report.warnings).toHaveLength(1);
    expect(stderr).toMatch(/^warning: nodeMonitorGracePeriod \(40s\) is not above 45s/);
  });

  it('shows the defaults of the emulated minor; the version itself defaults to the newest', async () => {
    const { code, stdout } = await runCli(['config', '--emulation-version', 'v1.31.4', '-o', 'json']);
    expect(code).toBe(0);
    const byKey = new Map((JSON.parse(stdout) as ConfigReport).settings.map((s) => [s.key, s]));
    expect(byKey.get('emulationVersion')).toMatchObject({ value: '1.31', source: 'flag', default: '1.37' });
    expect(byKey.get('nodeMonitorGracePeriod')).toMatchObject({
      value: '40s',
      source: 'default',
      default: '40s',
    });
  });

  it('-o yaml parses to the same report as -o json; -o wide adds the upstream flag', async () => {
    const json = await runCli(['config', '-o', 'json']);
    const yaml = await runCli(['config', '-o', 'yaml']);
    expect(parseYaml(yaml.stdout)).toEqual(JSON.parse(json.stdout));
    const wide = await runCli(['config', '-o', 'wide']);
    expect(tableRow(wide.stdout, 'KEY')).toEqual([
      'KEY',
      'VALUE',
      'SOURCE',
      'DEFAULT',
      'ENV',
      'UPSTREAM FLAG',
      'DESCRIPTION',
    ]);
    expect(tableRow(wide.stdout, 'nodeEvictionRate')?.slice(5)).toEqual([
      '--node-eviction-rate',
      CONFIG_KEYS.nodeEvictionRate.description,
    ]);
  });

  it('exits 2 naming every bad flag', async () => {
    const { code, stdout, stderr } = await runCli([
      'config',
      '--node-monitor-grace-period',
      'fourty',
      '--unhealthy-zone-threshold',
      '2',
    ]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      [
        'error: Invalid configuration (2 problems):',
        '- --node-monitor-grace-period: expected a duration like "40s", "5m" or a number of seconds, got "fourty"',
        '- --unhealthy-zone-threshold: expected a fraction greater than 0 and at most 1 (like 0.55), got "2"',
        '',
      ].join('\n'),
    );
  });

  it('exits 2 naming a bad or unknown variable', async () => {
    const bad = await runCli(['config'], { env: { NLC_DRY_RUN: 'yes' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'error: Invalid configuration (1 problem):\n- NLC_DRY_RUN: expected true or false (or 1 / 0), got "yes"\n',
    );
    const unknown = await runCli(['config'], { env: { NLC_NODE_MONITOR_GRACE_PERIOOD: '40s' } });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      '- NLC_NODE_MONITOR_GRACE_PERIOOD: unknown setting; did you mean NLC_NODE_MONITOR_GRACE_PERIOD?',
    );
  });

  it('accepts the deployment variables the functions and the local stack set', async () => {
    const { code } = await runCli(['config'], {
      env: { NLC_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', NLC_NODES_TABLE: 'nlc-dev-nodes' },
    });
    expect(code).toBe(0);
  });
});
