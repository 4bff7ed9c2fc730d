// shared/settings.ts: the NLC_ variables the CLI accepts besides the settings, and flags named by flag.
import { describe, expect, it } from 'vitest';
import { CLI_ALLOWED_ENV, loadSettings, settingFlag } from '../../../shared/settings.js';
import { relayOwnedEnvVars } from '../../../relay/settings.js';
import { ownedEnvVars as runtimeOwnedEnvVars } from '../../../shared/adapters/runtime.js';
import { ConfigError } from '../../../shared/errors.js';

describe('CLI_ALLOWED_ENV', () => {
  it("is every variable the functions' wiring and the relay own", () => {
    expect([...CLI_ALLOWED_ENV].sort()).toEqual(
      [...new Set([...runtimeOwnedEnvVars, ...relayOwnedEnvVars])].sort(),
    );
  });
});

describe('loadSettings', () => {
  it('names a bad flag by the flag and a bad variable by the variable', () => {
    let error: unknown;
    try {
      loadSettings({ NLC_NODE_EVICTION_RATE: 'fast' }, { nodeMonitorGracePeriod: 'fourty', dryRun: 'maybe' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    // In the settings' order (CONFIG_KEYS).
    expect((error as ConfigError).issues.map((i) => i.path)).toEqual([
      '--node-monitor-grace-period',
      'NLC_NODE_EVICTION_RATE',
      '--dry-run',
    ]);
  });

  it('uses the upstream flag where there is one, else the key in kebab case', () => {
    expect(settingFlag('nodeMonitorGracePeriod')).toBe('--node-monitor-grace-period');
    expect(settingFlag('evictionMode')).toBe('--eviction-mode');
  });
});
