// `nlc config`: the effective controller settings, where each value came from (flag, NLC_ environment
// variable, or upstream's default), the default, and how to set it. Every setting is also a flag here
// (`--node-monitor-grace-period 40s`), so an operator can check a value before deploying it: the same
// validation as the functions' cold start (shared/config.ts), the same messages.
import { Command, Option } from 'commander';
import { z } from 'zod';
import {
  CONFIG_KEYS,
  defaultsFor,
  formatConfigValue,
  type ConfigKey,
  type ConfigSource,
  type ControllerConfig,
} from '../../shared/config.js';
import { DefaultEmulationVersion } from '../../shared/domain/upstreamVersion.js';
import { parseOptions } from '../errors.js';
import {
  OUTPUT_FLAGS,
  OUTPUT_HELP,
  OutputFormatSchema,
  renderTable,
  stdoutPaint,
  writeOutput,
  type CliIo,
  type Column,
  type CommandContext,
  type Paint,
} from '../../shared/present/output.js';
import { loadSettings, settingDefaultText, settingFlag, settingKeys } from '../../shared/settings.js';

export const ConfigOptionsSchema = z.object({
  output: OutputFormatSchema,
  /** Setting overrides by config key, as the flags carry them: validated by shared/config.ts. */
  overrides: z.partialRecord(z.string(), z.union([z.string(), z.boolean()])),
});
export type ConfigOptions = z.output<typeof ConfigOptionsSchema>;

// ---------------------------------------------------------------------------------------------------
// The report (`-o json|yaml`: a public interface)

/** A setting's value as JSON: durations as operators write them ("50s"), the rest as is. */
export type SettingValue = string | number | boolean;

export interface SettingView {
  readonly key: ConfigKey;
  readonly value: SettingValue;
  /** flag (this command's flag), env (its NLC_ variable), or default (upstream's, at emulationVersion). */
  readonly source: 'flag' | 'env' | 'default';
  readonly default: SettingValue;
  /** The flag of this command that sets it. */
  readonly flag: string;
  /** The kube-controller-manager flag; null where upstream has none. */
  readonly upstreamFlag: string | null;
  readonly envVar: string;
  readonly description: string;
}

export interface ConfigReport {
  readonly settings: readonly SettingView[];
  /** Legal values upstream advises against. */
  readonly warnings: readonly string[];
}

function jsonValue<K extends ConfigKey>(key: K, value: ControllerConfig[K]): SettingValue {
  return CONFIG_KEYS[key].kind === 'duration' ? formatConfigValue(key, value) : value;
}

const SOURCE_NAMES: Readonly<Record<ConfigSource, SettingView['source']>> = {
  override: 'flag',
  env: 'env',
  default: 'default',
};

export function buildConfig(env: CliIo['env'], overrides: ConfigOptions['overrides']): ConfigReport {
  const { settings, warnings } = loadSettings(env, overrides);
  // The defaults of the emulated minor (nodeMonitorGracePeriod: 40s before v1.32).
  // (The version's own default stays the newest minor.)
  const defaults = {
    ...defaultsFor(settings.emulationVersion.value),
    emulationVersion: DefaultEmulationVersion,
  };
  return {
    settings: settingKeys().map((key): SettingView => {
      const info = CONFIG_KEYS[key];
      return {
        key,
        value: jsonValue(key, settings[key].value),
        source: SOURCE_NAMES[settings[key].source],
        default: jsonValue(key, defaults[key]),
        flag: settingFlag(key),
        upstreamFlag: info.flag,
        envVar: info.envVar,
        description: info.description,
      };
    }),
    warnings,
  };
}

// ---------------------------------------------------------------------------------------------------
// Output

const COLUMNS: readonly Column<SettingView>[] = [
  { header: 'key', value: (s) => s.key },
  {
    header: 'value',
    value: (s) => String(s.value),
    colour: (s) => (s.source === 'default' ? undefined : 'cyan'),
  },
  { header: 'source', value: (s) => s.source },
  { header: 'default', value: (s) => String(s.default) },
  { header: 'env', value: (s) => s.envVar },
  { header: 'upstream flag', value: (s) => s.upstreamFlag ?? '-', wide: true },
  { header: 'description', value: (s) => s.description, wide: true },
];

export function renderConfig(report: ConfigReport, wide: boolean, paint: Paint): string {
  return renderTable(COLUMNS, report.settings, { wide, paint });
}

/**
 * Prints the effective settings; warnings go to stderr. Returns the exit code.
 *
 * @example
 * await runConfig({ output: 'json', overrides: { nodeMonitorGracePeriod: '40s' } }, io); // 0
 */
export async function runConfig(options: ConfigOptions, io: CliIo): Promise<number> {
  const report = buildConfig(io.env, options.overrides);
  await writeOutput(io, options.output, report, () =>
    renderConfig(report, options.output === 'wide', stdoutPaint(io)),
  );
  for (const warning of report.warnings) io.stderr.write(`warning: ${warning}\n`);
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// The command

function settingOption(key: ConfigKey): Option {
  const info = CONFIG_KEYS[key];
  const flags = info.kind === 'boolean' ? `${settingFlag(key)} [bool]` : `${settingFlag(key)} <value>`;
  return new Option(flags, `${info.description} (env ${info.envVar}; default ${settingDefaultText(key)})`);
}

export const CONFIG_HELP = `
Precedence: a flag here > its NLC_ environment variable > upstream's default. Durations are written
like Go's ("40s", "5m", "1m30s") or as a number of seconds. An invalid value exits with code 2 and
names the flag or variable. -o wide adds the upstream kube-controller-manager flag and a description.
-o json|yaml: settings[] {key, value, source (flag|env|default), default, flag, upstreamFlag, envVar,
description}, warnings[]. The table of settings: docs/configuration.md.

Examples:
  nlc config
  NLC_NODE_EVICTION_RATE=0.05 nlc config --node-monitor-grace-period 40s -o yaml`;

export function configCommand(ctx: CommandContext): Command {
  const command = new Command('config').description(
    'the effective controller settings, with their sources and upstream defaults',
  );
  const attributes = new Map<ConfigKey, string>();
  for (const key of settingKeys()) {
    const option = settingOption(key);
    attributes.set(key, option.attributeName());
    command.addOption(option);
  }
  return command
    .option(OUTPUT_FLAGS, OUTPUT_HELP)
    .addHelpText('after', CONFIG_HELP)
    .action(async (opts: Record<string, unknown>) => {
      const overrides = Object.fromEntries(
        [...attributes].flatMap(([key, attribute]) =>
          opts[attribute] === undefined ? [] : [[key, opts[attribute]]],
        ),
      );
      const options = parseOptions(ConfigOptionsSchema, { output: opts.output, overrides });
      ctx.exitCode = await runConfig(options, ctx.io);
    });
}
