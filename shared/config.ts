// Every controller setting, with its upstream default, one zod schema, and where values come from.
// Ports the settings of kube-controller-manager's NodeLifecycleController: the flags in
// cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go (and --node-monitor-period from
// KubeCloudShared), the defaults in pkg/controller/nodelifecycle/config/v1alpha1/defaults.go (with the
// v1.32 grace-period change, PR #126287) and the NodeEvictionPeriod constant of the scheduler package.
// What differs: keys are the camelCase of the flags (docs/contributing.md#naming); durations also accept a bare number
// of seconds; and values are validated, where upstream's Validate() accepts anything (see the
// `Deviation:` notes below). Read once at cold start or CLI start; precedence is override (scenario or
// CLI flag) > NLC_ environment variable > upstream default (docs/configuration.md#precedence).
// This file is the settings and how they are read, one concern: the table drives the schema, the env
// mapping and the suggestions. The parsing it builds on lives apart: duration.ts, coerce.ts, suggest.ts.
import { z } from 'zod';
import { type Coerced, coerceBoolean, coerceNumber, describeInput } from './coerce.js';
import type { Millis } from './domain/types.js';
import { coerceDuration, formatDuration } from './duration.js';
import { ConfigError, type ConfigIssue } from './errors.js';
import type { ControllerConfig, EvictionMode } from './ports/config.js';
import { editDistance, normalizeName } from './suggest.js';
import {
  DefaultEmulationVersion,
  parseEmulationVersion,
  upstreamBehaviour,
  type EmulationVersion,
} from './domain/upstreamVersion.js';

// Durations belong to the settings' vocabulary: their importers may take them from here.

// The settings' type is a port (shared/ports/config.ts): the domain takes it without this module's
// parsing and defaults.
export type { ControllerConfig, EvictionMode };

export type ConfigKey = keyof ControllerConfig;
export type ConfigKind = 'duration' | 'number' | 'integer' | 'boolean' | 'enum' | 'string';
/** Where an effective value came from, for `nlc config`. */
export type ConfigSource = 'default' | 'env' | 'override';

/** Environment variables with this prefix are settings; an unknown one is an error. */
export const ENV_PREFIX = 'NLC_';

const EVICTION_MODES: readonly EvictionMode[] = ['taint', 'legacy'];

function coerceEvictionMode(input: unknown): Coerced<EvictionMode> {
  const mode = EVICTION_MODES.find((m) => m === input);
  return mode !== undefined
    ? { ok: true, value: mode }
    : { ok: false, message: `expected "taint" or "legacy", got ${describeInput(input)}` };
}

// DNS-1123 label: the cluster name prefixes every DynamoDB key, so it must not contain the separators.
const DNS_1123_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function coerceClusterName(input: unknown): Coerced<string> {
  return typeof input === 'string' && DNS_1123_LABEL.test(input)
    ? { ok: true, value: input }
    : {
        ok: false,
        message: `expected 1 to 63 lowercase letters, digits or '-', starting and ending with a letter or digit, got ${describeInput(input)}`,
      };
}

// A Lease's namespace (a DNS-1123 label) and name (a DNS-1123 subdomain).
const LEASE_REF = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\/[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/;

function coerceLeaseRef(input: unknown): Coerced<string> {
  return typeof input === 'string' && LEASE_REF.test(input)
    ? { ok: true, value: input }
    : {
        ok: false,
        message: `expected namespace/name of a Lease (like nlc-system/nlc-relay), got ${describeInput(input)}`,
      };
}

// Deviation: upstream validates none of these (its Validate() returns no errors); we reject values it
// would take silently, such as a negative rate, a threshold outside (0, 1] or a zero period, so that a
// typo fails at cold start rather than as odd eviction behaviour (see docs/upstream-deviations.md).
const COERCE: { readonly [K in ConfigKey]: (input: unknown) => Coerced<ControllerConfig[K]> } = {
  emulationVersion: parseEmulationVersion,
  nodeMonitorPeriod: coerceDuration('positive'),
  nodeMonitorGracePeriod: coerceDuration('positive'),
  // Upstream accepts 0 for both (immediate); harmless, so we do too.
  nodeStartupGracePeriod: coerceDuration('nonNegative'),
  podEvictionTimeout: coerceDuration('nonNegative'),
  nodeEvictionPeriod: coerceDuration('positive'),
  nodeEvictionRate: coerceNumber('a number of nodes per second, 0 or more (like 0.1)', (n) => n >= 0),
  secondaryNodeEvictionRate: coerceNumber(
    'a number of nodes per second, 0 or more (like 0.01)',
    (n) => n >= 0,
  ),
  largeClusterSizeThreshold: coerceNumber(
    'a whole number of nodes, 0 or more (like 50)',
    (n) => n >= 0 && n <= 2 ** 31 - 1, // upstream int32
    true,
  ),
  unhealthyZoneThreshold: coerceNumber(
    'a fraction greater than 0 and at most 1 (like 0.55)',
    (n) => n > 0 && n <= 1,
  ),
  evictionMode: coerceEvictionMode,
  kubeApiQps: coerceNumber('a number of requests per second, more than 0 (like 20)', (n) => n > 0),
  kubeApiBurst: coerceNumber(
    'a whole number of requests, 1 or more (like 30)',
    (n) => n >= 1 && n <= 2 ** 31 - 1, // upstream int32
    true,
  ),
  dryRun: coerceBoolean,
  cluster: coerceClusterName,
  relayLease: coerceLeaseRef,
};

// ---------------------------------------------------------------------------------------------------
// The settings: metadata (docs, `nlc config`), defaults, schema.

export interface ConfigKeyInfo {
  readonly kind: ConfigKind;
  /** The kube-controller-manager flag, or null when upstream has none (a constant, or our own setting). */
  readonly flag: string | null;
  /** NLC_ + the key in SCREAMING_SNAKE. */
  readonly envVar: string;
  readonly description: string;
  /** Other names operators may know it by (upstream Go names); unknown keys matching one get a suggestion. */
  readonly aliases: readonly string[];
}

/**
 * Every setting, in display order.
 *
 * @example
 * CONFIG_KEYS.nodeEvictionRate.flag; // '--node-eviction-rate'
 * CONFIG_KEYS.nodeEvictionRate.envVar; // 'NLC_NODE_EVICTION_RATE'
 */
export const CONFIG_KEYS: { readonly [K in ConfigKey]: ConfigKeyInfo } = {
  emulationVersion: {
    kind: 'string',
    flag: null,
    envVar: 'NLC_EMULATION_VERSION',
    description:
      'The upstream minor to reproduce (1.25 to the newest): its defaults, and its behaviour where minors differ.',
    aliases: ['emulatedVersion', 'compatibilityVersion', 'kubernetesVersion'],
  },
  nodeMonitorPeriod: {
    kind: 'duration',
    flag: '--node-monitor-period',
    envVar: 'NLC_NODE_MONITOR_PERIOD',
    description: 'How often monitorNodeHealth runs (and the relay sends a heartbeat digest).',
    aliases: [],
  },
  nodeMonitorGracePeriod: {
    kind: 'duration',
    flag: '--node-monitor-grace-period',
    envVar: 'NLC_NODE_MONITOR_GRACE_PERIOD',
    description: 'How long a running node may stay silent before its Ready condition becomes Unknown.',
    aliases: [],
  },
  nodeStartupGracePeriod: {
    kind: 'duration',
    flag: '--node-startup-grace-period',
    envVar: 'NLC_NODE_STARTUP_GRACE_PERIOD',
    description: 'How long a node that never posted a Ready condition may stay silent.',
    aliases: [],
  },
  nodeEvictionRate: {
    kind: 'number',
    flag: '--node-eviction-rate',
    envVar: 'NLC_NODE_EVICTION_RATE',
    description: 'Nodes per second per zone that get a NoExecute taint while the zone is healthy.',
    aliases: ['evictionLimiterQPS'],
  },
  secondaryNodeEvictionRate: {
    kind: 'number',
    flag: '--secondary-node-eviction-rate',
    envVar: 'NLC_SECONDARY_NODE_EVICTION_RATE',
    description: 'Tainting rate in a PartialDisruption zone larger than largeClusterSizeThreshold (else 0).',
    aliases: ['secondaryEvictionLimiterQPS'],
  },
  largeClusterSizeThreshold: {
    kind: 'integer',
    flag: '--large-cluster-size-threshold',
    envVar: 'NLC_LARGE_CLUSTER_SIZE_THRESHOLD',
    description: 'Zone size above which (strictly) the secondary rate applies in PartialDisruption.',
    aliases: ['largeClusterThreshold'],
  },
  unhealthyZoneThreshold: {
    kind: 'number',
    flag: '--unhealthy-zone-threshold',
    envVar: 'NLC_UNHEALTHY_ZONE_THRESHOLD',
    description: 'Fraction of not-ready nodes (and more than 2) that puts a zone in PartialDisruption.',
    aliases: [],
  },
  podEvictionTimeout: {
    kind: 'duration',
    flag: '--pod-eviction-timeout',
    envVar: 'NLC_POD_EVICTION_TIMEOUT',
    description:
      'Legacy mode only: how long a node is not ready before its pods are deleted (flag removed in v1.27).',
    aliases: [],
  },
  evictionMode: {
    kind: 'enum',
    flag: null,
    envVar: 'NLC_EVICTION_MODE',
    description:
      'taint (NoExecute taints, upstream >= 1.27) or legacy (DeletePods, --enable-taint-manager=false).',
    aliases: ['enableTaintManager', 'runTaintManager', 'useTaintBasedEvictions'],
  },
  nodeEvictionPeriod: {
    kind: 'duration',
    flag: null,
    envVar: 'NLC_NODE_EVICTION_PERIOD',
    description: 'Period of doNoExecuteTaintingPass (the drainer); upstream constant NodeEvictionPeriod.',
    aliases: [],
  },
  kubeApiQps: {
    kind: 'number',
    flag: '--kube-api-qps',
    envVar: 'NLC_KUBE_API_QPS',
    description:
      "Requests per second each function's API client may send (client-go's throttle); bounds how many nodes a monitor pass marks.",
    aliases: ['kubeAPIQPS', 'qps'],
  },
  kubeApiBurst: {
    kind: 'integer',
    flag: '--kube-api-burst',
    envVar: 'NLC_KUBE_API_BURST',
    description: 'Requests the API client may send at once before kubeApiQps paces them.',
    aliases: ['kubeAPIBurst', 'burst'],
  },
  dryRun: {
    kind: 'boolean',
    flag: null,
    envVar: 'NLC_DRY_RUN',
    description: 'Shadow mode: compute and record every decision, never write to the cluster.',
    aliases: ['shadow', 'shadowMode'],
  },
  cluster: {
    kind: 'string',
    flag: null,
    envVar: 'NLC_CLUSTER',
    description: 'Name of the cluster this deployment serves; the prefix of every state key.',
    aliases: ['clusterName'],
  },
  relayLease: {
    kind: 'string',
    flag: null,
    envVar: 'NLC_RELAY_LEASE',
    description:
      "The relay's leader-election Lease (namespace/name): a Heartbeat Digest's relay term counts only while this Lease says its relay holds it.",
    aliases: ['leaderElectionLease'],
  },
};

const KEYS = Object.keys(CONFIG_KEYS) as readonly ConfigKey[];
const KEY_BY_ENV: ReadonlyMap<string, ConfigKey> = new Map(KEYS.map((key) => [CONFIG_KEYS[key].envVar, key]));

/**
 * Upstream's defaults at the newest emulated minor, plus ours: taint mode, no dry run, cluster "default",
 * the relay's Lease. An older emulationVersion changes some (defaultsFor).
 */
export const UPSTREAM_DEFAULTS: ControllerConfig = Object.freeze({
  emulationVersion: DefaultEmulationVersion,
  nodeMonitorPeriod: 5_000,
  nodeMonitorGracePeriod: 50_000, // 40s before v1.32 (PR #126287)
  nodeStartupGracePeriod: 60_000,
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
  largeClusterSizeThreshold: 50,
  unhealthyZoneThreshold: 0.55,
  podEvictionTimeout: 300_000,
  evictionMode: 'taint',
  nodeEvictionPeriod: 100,
  kubeApiQps: 20,
  kubeApiBurst: 30,
  dryRun: false,
  cluster: 'default',
  relayLease: 'nlc-system/nlc-relay',
});

/**
 * Upstream's defaults at an emulated minor.
 *
 * @example
 * defaultsFor('1.31').nodeMonitorGracePeriod; // 40000 (50000 from 1.32, PR #126287)
 */
export function defaultsFor(version: EmulationVersion): ControllerConfig {
  return Object.freeze({
    ...UPSTREAM_DEFAULTS,
    emulationVersion: version,
    nodeMonitorGracePeriod: upstreamBehaviour(version).defaultNodeMonitorGracePeriod,
  });
}

/**
 * Settings whose default depends on the emulated minor, or that only some minors have: left unset (an
 * empty serverless param, no flag), they take the emulated minor's default.
 */
export const VERSIONED_KEYS = ['nodeMonitorGracePeriod', 'podEvictionTimeout'] as const;
type VersionedKey = (typeof VERSIONED_KEYS)[number];

function versionedSetting<K extends VersionedKey>(key: K) {
  const coerce = COERCE[key];
  // No default here: the emulated minor's is filled in once the version is known (ControllerConfigSchema).
  return z
    .unknown()
    .transform((input, ctx): ControllerConfig[K] | undefined => {
      if (input === undefined) return undefined;
      const result = coerce(input);
      if (result.ok) return result.value;
      ctx.addIssue({ code: 'custom', message: result.message });
      return z.NEVER;
    })
    .optional();
}

function setting<K extends ConfigKey>(key: K) {
  const coerce = COERCE[key];
  return (
    z
      .unknown()
      .transform((input, ctx): ControllerConfig[K] => {
        const result = coerce(input);
        if (result.ok) return result.value;
        ctx.addIssue({ code: 'custom', message: result.message });
        return z.NEVER;
      })
      // Absent (or undefined): upstream's default. The cast only helps zod's types through the generic K.
      .default(UPSTREAM_DEFAULTS[key] as z.util.NoUndefined<Awaited<ControllerConfig[K]>>)
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * The one schema of every setting: defaults are upstream's, unknown keys are errors, and each field
 * accepts its value or the string an env var or CLI flag would carry ("40s", "0.1", "true").
 *
 * @example
 * ControllerConfigSchema.parse({ nodeMonitorGracePeriod: '40s' }).nodeMonitorGracePeriod; // 40000
 */
export const ControllerConfigSchema = z
  .strictObject({
    emulationVersion: setting('emulationVersion'),
    nodeMonitorPeriod: setting('nodeMonitorPeriod'),
    nodeMonitorGracePeriod: versionedSetting('nodeMonitorGracePeriod'),
    nodeStartupGracePeriod: setting('nodeStartupGracePeriod'),
    nodeEvictionRate: setting('nodeEvictionRate'),
    secondaryNodeEvictionRate: setting('secondaryNodeEvictionRate'),
    largeClusterSizeThreshold: setting('largeClusterSizeThreshold'),
    unhealthyZoneThreshold: setting('unhealthyZoneThreshold'),
    podEvictionTimeout: versionedSetting('podEvictionTimeout'),
    evictionMode: setting('evictionMode'),
    nodeEvictionPeriod: setting('nodeEvictionPeriod'),
    kubeApiQps: setting('kubeApiQps'),
    kubeApiBurst: setting('kubeApiBurst'),
    dryRun: setting('dryRun'),
    cluster: setting('cluster'),
    relayLease: setting('relayLease'),
  })
  // A setting the emulated minor did not have is refused, naming the minor that last had it.
  .superRefine(
    (c, ctx) => {
      const version = parseEmulationVersion(c.emulationVersion);
      if (!version.ok || upstreamBehaviour(version.value).legacyEviction) return;
      const removed = `removed in v1.27 (PR #115840); emulationVersion ${version.value} does not have it: emulate "1.26" or earlier for it`;
      if (c.evictionMode === 'legacy') {
        ctx.addIssue({
          code: 'custom',
          path: ['evictionMode'],
          message: `"legacy" is the eviction path of --enable-taint-manager=false, ${removed}`,
        });
      }
      // Only a value that parsed: a bad one is reported as bad, once.
      if (typeof c.podEvictionTimeout === 'number') {
        ctx.addIssue({
          code: 'custom',
          path: ['podEvictionTimeout'],
          message: `--pod-eviction-timeout was ${removed}`,
        });
      }
    },
    { when: ({ value }) => isRecord(value) },
  )
  // Deviation: upstream does not check this (its Validate() returns no errors). Its field comment asks
  // for a grace of N node status updates; a grace not above the monitor period could mark a healthy
  // node Unknown between two of its heartbeats (see docs/upstream-deviations.md).
  .refine((c) => graceOf(c) > c.nodeMonitorPeriod, {
    path: ['nodeMonitorGracePeriod'],
    error: ({ input }) => {
      const c = input as Pick<ControllerConfig, 'nodeMonitorPeriod'> & { nodeMonitorGracePeriod?: number };
      return (
        `nodeMonitorGracePeriod (${formatDuration(graceOf(c))}) must be greater than ` +
        `nodeMonitorPeriod (${formatDuration(c.nodeMonitorPeriod)}): the grace must span several node status updates`
      );
    },
    // Run even when other fields are bad (one error lists every problem), but only with both values.
    when: ({ value }) =>
      isRecord(value) &&
      (typeof value.nodeMonitorGracePeriod === 'number' || value.nodeMonitorGracePeriod === undefined) &&
      typeof value.nodeMonitorPeriod === 'number',
  })
  // The emulated minor's defaults where none was given.
  .transform((c): ControllerConfig => {
    const defaults = defaultsFor(c.emulationVersion);
    return {
      ...c,
      nodeMonitorGracePeriod: c.nodeMonitorGracePeriod ?? defaults.nodeMonitorGracePeriod,
      podEvictionTimeout: c.podEvictionTimeout ?? defaults.podEvictionTimeout,
    };
  });

/** The grace period given, or the emulated minor's default (the newest's when the version is bad). */
function graceOf(c: { nodeMonitorGracePeriod?: number; emulationVersion?: unknown }): number {
  if (typeof c.nodeMonitorGracePeriod === 'number') return c.nodeMonitorGracePeriod;
  const version = parseEmulationVersion(c.emulationVersion);
  return defaultsFor(version.ok ? version.value : DefaultEmulationVersion).nodeMonitorGracePeriod;
}

// The schema's output is exactly ControllerConfig (compile-time check, both directions).
type SchemaOutput = z.output<typeof ControllerConfigSchema>;
const _sameShape: [
  SchemaOutput extends ControllerConfig ? true : never,
  ControllerConfig extends SchemaOutput ? true : never,
] = [true, true];

// ---------------------------------------------------------------------------------------------------
// Unknown names: suggest the setting an operator probably meant.

/** The setting `name` most likely means: same letters as a key, alias, flag or env var, or a near typo. */
function suggestKey(name: string): ConfigKey | undefined {
  const wanted = normalizeName(name);
  const exact = KEYS.find((key) => {
    const { aliases, flag, envVar } = CONFIG_KEYS[key];
    return [key, ...aliases, flag ?? '', envVar, envVar.slice(ENV_PREFIX.length)].some(
      (n) => normalizeName(n) === wanted,
    );
  });
  if (exact !== undefined) return exact;
  const ranked = KEYS.map((key) => ({ key, distance: editDistance(wanted, normalizeName(key)) })).sort(
    (a, b) => a.distance - b.distance,
  );
  const best = ranked[0];
  return best !== undefined && best.distance <= Math.max(1, Math.floor(wanted.length / 6))
    ? best.key
    : undefined;
}

function unknownKeyMessage(suggestion: string | undefined): string {
  return suggestion === undefined
    ? 'unknown setting (the settings are listed in docs/configuration.md)'
    : `unknown setting; did you mean ${suggestion}?`;
}

// ---------------------------------------------------------------------------------------------------
// Entry points.

function toIssues(
  error: z.ZodError,
  input: unknown,
  label: (key: string) => string,
  rootLabel: string,
): ConfigIssue[] {
  return error.issues.flatMap((issue): ConfigIssue[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: label(key), message: unknownKeyMessage(suggestKey(key)) }));
    }
    const key = issue.path[0];
    if (key === undefined) {
      return [{ path: rootLabel, message: `expected an object of settings, got ${describeInput(input)}` }];
    }
    return [{ path: label(String(key)), message: issue.message }];
  });
}

/**
 * Parses settings from a plain object (a scenario's `config:`), by config name; defaults fill the rest.
 * Throws one ConfigError listing every bad field, each as `<path>.<key>`.
 *
 * @example
 * parseConfigObject({ nodeMonitorGracePeriod: '40s', evictionMode: 'legacy' }).nodeMonitorGracePeriod; // 40000
 */
export function parseConfigObject(obj: unknown, path = 'config'): ControllerConfig {
  const result = ControllerConfigSchema.safeParse(obj ?? {});
  if (result.success) return Object.freeze(result.data);
  const label = (key: string): string => (path === '' ? key : `${path}.${key}`);
  throw new ConfigError(toIssues(result.error, obj, label, path === '' ? 'config' : path));
}

export interface LoadConfigOptions {
  /** Prefix of override keys in error messages, e.g. 'config' for a scenario. Default: the bare key. */
  readonly overridesPath?: string;
  /**
   * NLC_ variables that other modules own and read themselves (e.g. the cluster credentials of
   * shared/adapters/kubernetes/authConfig.ts `ownedEnvVars`): skipped here instead of reported unknown.
   */
  readonly allowEnv?: ReadonlySet<string>;
}

export type EffectiveSettings = {
  readonly [K in ConfigKey]: { readonly value: ControllerConfig[K]; readonly source: ConfigSource };
};

export interface ConfigWithSources {
  readonly config: ControllerConfig;
  readonly settings: EffectiveSettings;
  /** Legal but doubtful values (see configWarnings). */
  readonly warnings: readonly string[];
}

/**
 * Like loadConfig, and reports where each effective value came from (for `nlc config`).
 *
 * @example
 * loadConfigWithSources({ NLC_DRY_RUN: 'true' }).settings.dryRun; // { value: true, source: 'env' }
 */
export function loadConfigWithSources(
  env: Readonly<Record<string, string | undefined>>,
  overrides: Readonly<Record<string, unknown>> = {},
  options: LoadConfigOptions = {},
): ConfigWithSources {
  const issues: ConfigIssue[] = [];
  const fromEnv: Partial<Record<ConfigKey, string>> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || options.allowEnv?.has(name) === true) continue;
    const key = KEY_BY_ENV.get(name);
    if (key === undefined) {
      const suggestion = suggestKey(name.slice(ENV_PREFIX.length));
      issues.push({ path: name, message: unknownKeyMessage(suggestion && CONFIG_KEYS[suggestion].envVar) });
      continue;
    }
    // Empty means unset: deployment templates often render a missing value as "".
    if (value !== undefined && value.trim() !== '') fromEnv[key] = value.trim();
  }
  // An override of undefined (a CLI flag not given) is no override; unknown keys stay, to be reported.
  const fromOverrides = Object.fromEntries(
    Object.entries(overrides).filter(([key, value]) => value !== undefined || !(key in CONFIG_KEYS)),
  );
  const sourceOf = (key: ConfigKey): ConfigSource =>
    key in fromOverrides ? 'override' : key in fromEnv ? 'env' : 'default';
  const overrideLabel = (key: string): string =>
    options.overridesPath === undefined ? key : `${options.overridesPath}.${key}`;
  const label = (key: string): string =>
    key in CONFIG_KEYS && sourceOf(key as ConfigKey) === 'env'
      ? CONFIG_KEYS[key as ConfigKey].envVar
      : overrideLabel(key);

  // A bad env var hidden by an override is still reported: it breaks as soon as the override goes.
  for (const key of KEYS) {
    const raw = fromEnv[key];
    if (raw === undefined || sourceOf(key) !== 'override') continue;
    const result = COERCE[key](raw);
    if (!result.ok) issues.push({ path: CONFIG_KEYS[key].envVar, message: result.message });
  }

  const merged = { ...fromEnv, ...fromOverrides };
  const result = ControllerConfigSchema.safeParse(merged);
  if (!result.success)
    issues.push(...toIssues(result.error, merged, label, options.overridesPath ?? 'overrides'));
  if (!result.success || issues.length > 0) throw new ConfigError(issues);

  const config = Object.freeze(result.data);
  const settings = Object.fromEntries(
    KEYS.map((key) => [key, Object.freeze({ value: config[key], source: sourceOf(key) })]),
  ) as unknown as EffectiveSettings;
  return { config, settings: Object.freeze(settings), warnings: configWarnings(config) };
}

/**
 * Reads the settings once (cold start, CLI start): overrides (scenario or CLI flags) > NLC_ env vars >
 * upstream defaults. Env vars without the NLC_ prefix are ignored; an unknown NLC_ var is an error.
 * Throws one ConfigError naming every bad setting (by env var when it came from the environment).
 *
 * @example
 * const config = loadConfig(process.env); // e.g. NLC_NODE_MONITOR_GRACE_PERIOD=40s, NLC_CLUSTER=prod
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  overrides?: Readonly<Record<string, unknown>>,
  options?: LoadConfigOptions,
): ControllerConfig {
  return loadConfigWithSources(env, overrides, options).config;
}

// Upstream's field documentation: the grace period should exceed HTTP2_PING_TIMEOUT_SECONDS (30s) +
// HTTP2_READ_IDLE_TIMEOUT_SECONDS (15s), so a kubelet on a dead connection can reconnect in time.
const HTTP2_DEAD_CONNECTION_DETECTION: Millis = 45_000;

/**
 * Legal values that upstream's documentation advises against. Not errors: scenarios use them on purpose.
 *
 * @example
 * configWarnings({ ...UPSTREAM_DEFAULTS, nodeMonitorGracePeriod: 40_000 }); // ['nodeMonitorGracePeriod (40s) is ...']
 */
export function configWarnings(config: Pick<ControllerConfig, 'nodeMonitorGracePeriod'>): readonly string[] {
  return config.nodeMonitorGracePeriod <= HTTP2_DEAD_CONNECTION_DETECTION
    ? [
        `nodeMonitorGracePeriod (${formatDuration(config.nodeMonitorGracePeriod)}) is not above 45s: upstream asks ` +
          'for more than HTTP2_PING_TIMEOUT_SECONDS (30s) + HTTP2_READ_IDLE_TIMEOUT_SECONDS (15s) (PR #126287)',
      ]
    : [];
}

/**
 * One setting's value as an operator writes it (durations as "50s").
 *
 * @example
 * formatConfigValue('podEvictionTimeout', 300_000); // '5m'
 */
export function formatConfigValue<K extends ConfigKey>(key: K, value: ControllerConfig[K]): string {
  return CONFIG_KEYS[key].kind === 'duration' && typeof value === 'number'
    ? formatDuration(value)
    : String(value);
}
