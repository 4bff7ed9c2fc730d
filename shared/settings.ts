// The controller settings as the CLI reads them: shared/config.ts's loadConfigWithSources (overrides >
// NLC_ environment variables > upstream defaults), with CLI flags as the overrides and every problem
// named the way the operator wrote it (`--node-monitor-grace-period`, or the env var).
import { ownedEnvVars as clusterAuthEnvVars } from './adapters/kubernetes/authConfig.js';
import {
  CONFIG_KEYS,
  formatConfigValue,
  loadConfigWithSources,
  UPSTREAM_DEFAULTS,
  VERSIONED_KEYS,
  type ConfigKey,
  type ConfigWithSources,
} from './config.js';
import { ConfigError } from './errors.js';

/**
 * NLC_ variables that are not controller settings but belong to the deployment (table names, local
 * endpoints, the drainer's function name), the relay (its bus, port) or the cluster credentials: the
 * CLI may run in the same environment as the functions, the relay or the local stack, so these are
 * not "unknown". The functions' names (RuntimeEnv in shared/adapters/runtime.ts) and the relay's
 * (relayOwnedEnvVars in relay/settings.ts) are listed here rather than imported because both modules
 * load the Kubernetes client, which `nlc config` and `nlc status` do not need
 * (test/unit/cli/settings.test.ts keeps the lists equal).
 */
export const CLI_ALLOWED_ENV: ReadonlySet<string> = new Set([
  ...clusterAuthEnvVars,
  'NLC_EVENT_BUS_NAME',
  'NLC_EVENTBRIDGE_ENDPOINT',
  'NLC_RELAY_PORT',
  'NLC_RELAY_HOST',
  'NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT',
  'NLC_RELAY_WATCH_STALL_TIMEOUT',
  'NLC_RELAY_DIGEST_ENTRY_MAX_BYTES',
  'NLC_RELAY_QUIET_DIGEST_PERIOD',
  'NLC_NODES_TABLE',
  'NLC_ZONES_TABLE',
  'NLC_EVICTION_QUEUE_TABLE',
  'NLC_POD_EVICTIONS_TABLE',
  'NLC_DECISIONS_TABLE',
  'NLC_DYNAMODB_ENDPOINT',
  'NLC_LAMBDA_ENDPOINT',
  'NLC_EVICTION_DRAINER_FUNCTION',
  // The stage's served clusters (shared/adapters/clusters.ts): the functions' wiring, not a setting.
  'NLC_CLUSTERS',
]);

const kebab = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * The CLI flag of a setting: the kube-controller-manager flag where upstream has one
 * (`--node-monitor-grace-period`), else the key in kebab case (`--eviction-mode`, `--dry-run`).
 *
 * @example settingFlag('nodeEvictionRate') // '--node-eviction-rate'
 */
export function settingFlag(key: ConfigKey): string {
  return CONFIG_KEYS[key].flag ?? `--${kebab(key)}`;
}

const KEYS = Object.keys(CONFIG_KEYS) as readonly ConfigKey[];
const isKey = (name: string): name is ConfigKey => Object.hasOwn(CONFIG_KEYS, name);

/**
 * The effective settings with their sources, `overrides` being the CLI flags by config key. A
 * ConfigError names each bad flag by the flag, each bad variable by its name.
 *
 * @example
 * loadSettings(process.env, { nodeMonitorGracePeriod: '40s' }).settings.nodeMonitorGracePeriod
 * // { value: 40000, source: 'override' }
 */
export function loadSettings(
  env: Readonly<Record<string, string | undefined>>,
  overrides: Readonly<Partial<Record<ConfigKey, unknown>>> = {},
): ConfigWithSources {
  try {
    return loadConfigWithSources(env, overrides, { allowEnv: CLI_ALLOWED_ENV });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // Overrides are reported by their bare key (no overridesPath): show the flag instead.
    throw new ConfigError(
      error.issues.map((issue) =>
        isKey(issue.path) && overrides[issue.path] !== undefined
          ? { path: settingFlag(issue.path), message: issue.message }
          : issue,
      ),
      { cause: error },
    );
  }
}

/**
 * A setting's default for help texts: upstream's at the newest emulated minor, and which settings the
 * chosen minor changes.
 *
 * @example settingDefaultText('nodeMonitorGracePeriod') // '50s at 1.37; by --emulation-version'
 */
export function settingDefaultText(key: ConfigKey): string {
  const value = formatConfigValue(key, UPSTREAM_DEFAULTS[key]);
  const versioned: readonly ConfigKey[] = VERSIONED_KEYS;
  return versioned.includes(key)
    ? `${value} at ${UPSTREAM_DEFAULTS.emulationVersion}; by --emulation-version`
    : value;
}

/** Every setting key, in display order. */
export function settingKeys(): readonly ConfigKey[] {
  return KEYS;
}
