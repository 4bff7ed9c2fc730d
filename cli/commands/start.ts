// `nlc start` (= `npm start`, issue #5 §1): the local stack in the foreground — the Kubernetes API
// simulator with a demo cluster and its kubelets, a DynamoDB-compatible server, the functions under
// serverless-offline with serverless.yml's rules and schedules, and the relay — with a live view, or log
// lines with --no-ui. Ctrl-C, q or SIGTERM stops everything. What runs and why: docs/local.md; the
// runtime itself is local/stack/ (loaded on use: it pulls in the whole stack).
import { existsSync } from 'node:fs';
import { delimiter } from 'node:path';
import { Command, Option } from 'commander';
import { z } from 'zod';
import { CONFIG_KEYS, type ConfigKey } from '../../shared/config.js';
import { durationSchema, formatDuration } from '../../shared/duration.js';
import { ConfigError } from '../../shared/errors.js';
import { parseOptions } from '../errors.js';
import type { CommandContext } from '../../shared/present/output.js';
import { settingDefaultText, settingFlag, settingKeys } from '../../shared/settings.js';
import { nodeStatusReportFrequency } from '../../local/kubelet/nodeStatus.js';
import { DefaultPorts, PortInfo, PortNames, type PortName } from '../../local/stack/ports.js';

const Port = z.coerce
  .number({ error: 'expected a port from 0 to 65535' })
  .int('expected a port from 0 to 65535')
  .min(0, 'expected a port from 0 to 65535')
  .max(65_535, 'expected a port from 0 to 65535');

export const StartOptionsSchema = z.object({
  kubeconfig: z.string().min(1, 'expected a kubeconfig file').optional(),
  context: z.string().min(1, 'expected a context name').optional(),
  simulator: z.boolean().optional(),
  ui: z.boolean().default(true),
  dataDir: z.string().min(1, 'expected a directory').default('.nlc-data'),
  ephemeral: z.boolean().optional(),
  // One per local/stack/ports.ts port (--port-apiserver → portApiserver; PortOptionKeys maps them).
  portApiserver: Port.optional(),
  portDynamodb: Port.optional(),
  portEventbridge: Port.optional(),
  portEventbridgePubsub: Port.optional(),
  portLambda: Port.optional(),
  portRelay: Port.optional(),
  /** The simulated kubelets' status report frequency (ms); upstream's kubelet default when absent. */
  nodeStatusReportFrequency: durationSchema('positive').optional(),
  /** Setting overrides by config key, as the flags carry them: validated by shared/config.ts. */
  settings: z.partialRecord(z.string(), z.union([z.string(), z.boolean()])),
  /** A second, active controller beside the simulator; this stack's then runs in shadow mode. */
  managedController: z.boolean().optional(),
  /** More simulated clusters served by the same functions (names validated by the stack). */
  extraCluster: z.array(z.string()).optional(),
  /** Its settings, `key=value` (config keys, as in a scenario's config): validated by the stack. */
  managedSet: z
    .array(z.string().regex(/^[A-Za-z]+=.*$/, 'expected key=value, e.g. nodeMonitorGracePeriod=40s'))
    .optional(),
});
export type StartOptions = z.output<typeof StartOptionsSchema>;

/** The option key of each port's flag (commander's attribute name of `PortInfo[name].flag`). */
export const PortOptionKeys: { readonly [K in PortName]: keyof StartOptions } = {
  apiServer: 'portApiserver',
  dynamodb: 'portDynamodb',
  eventBridge: 'portEventbridge',
  eventBridgePubSub: 'portEventbridgePubsub',
  lambda: 'portLambda',
  relay: 'portRelay',
};

/** The ports the options set, by local/stack/ports.ts name. */
export function portsOf(options: StartOptions): Partial<Record<PortName, number>> {
  const ports: Partial<Record<PortName, number>> = {};
  for (const name of PortNames) {
    const value = options[PortOptionKeys[name]];
    if (typeof value === 'number') ports[name] = value;
  }
  return ports;
}

/**
 * The managed controller's options from --managed-controller and --managed-set (which implies it), or
 * undefined for none.
 *
 * @example managedControllerOf({ managedSet: ['nodeMonitorGracePeriod=40s'] })?.settings // { nodeMonitorGracePeriod: '40s' }
 */
export function managedControllerOf(
  options: Pick<StartOptions, 'managedController' | 'managedSet'>,
): { readonly settings: Readonly<Record<string, string>> } | undefined {
  if (options.managedController !== true && options.managedSet === undefined) return undefined;
  const settings: Record<string, string> = {};
  for (const pair of options.managedSet ?? []) {
    const at = pair.indexOf('=');
    settings[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return { settings };
}

/** A start's configuration error, its managed controller's settings named by the flag that set them. */
function withManagedFlags(error: unknown): unknown {
  if (!(error instanceof ConfigError)) return error;
  const prefix = 'managedController.';
  if (!error.issues.some((issue) => issue.path.startsWith(prefix))) return error;
  return new ConfigError(
    error.issues.map((issue) =>
      issue.path.startsWith(prefix)
        ? { path: `--managed-set ${issue.path.slice(prefix.length)}`, message: issue.message }
        : issue,
    ),
    { cause: error },
  );
}

/**
 * The cluster to use: --kubeconfig, else KUBECONFIG (unless --simulator), else the simulator. A
 * KUBECONFIG listing several files is refused: the functions take one file.
 */
export function chooseKubeconfig(
  options: Pick<StartOptions, 'kubeconfig' | 'simulator'>,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const fromEnv = env.KUBECONFIG?.trim();
  const path = options.kubeconfig ?? (options.simulator === true || fromEnv === '' ? undefined : fromEnv);
  if (path === undefined) return undefined;
  const source = options.kubeconfig !== undefined ? '--kubeconfig' : 'KUBECONFIG';
  if (source === 'KUBECONFIG' && path.includes(delimiter)) {
    throw new ConfigError([
      {
        path: 'KUBECONFIG',
        message: 'lists several files: pass one with --kubeconfig, or --simulator for the simulator',
      },
    ]);
  }
  if (!existsSync(path)) {
    throw new ConfigError([
      {
        path: source,
        message: `no such file: ${path}${source === 'KUBECONFIG' ? ' (or --simulator for the simulator)' : ''}`,
      },
    ]);
  }
  return path;
}

export const START_HELP = `
What runs (docs/local.md), all on 127.0.0.1, nothing beyond this machine:
  the Kubernetes API simulator with a demo cluster (3 zones x 10 nodes, pods, a DaemonSet) and its
  kubelets; dynalite with the state tables; the functions under serverless-offline (serverless.yml's
  handlers, rules and schedules; bundling takes most of the start-up); the relay, publishing through
  the EventBridge client to serverless-offline's endpoint.
With --kubeconfig (or KUBECONFIG) the relay and the functions use that cluster instead, and write to
it (taints, pod deletions) unless --dry-run.

Beside a managed control plane's controller (shadow mode, docs/local.md): --managed-controller runs a
second, active controller (stage "managed": its own functions, relay, bus and tables, upstream's
defaults; --managed-set key=value changes one, repeatable) while this stack's runs with dryRun and
records what it would do; "nlc agreement" then compares the two.

Several clusters (docs/deploy.md, "Many clusters from one stage"): --extra-cluster NAME adds a simulated
cluster with its own API simulator, kubelets and relay, served by the same functions, bus and tables
(repeatable); the live view shows the first, "nlc status --cluster NAME" any.

Live view keys: up/down or j/k select a node, s stop/start its kubelet, z fail/restore its zone,
r stop/start the relay, q or Ctrl-C quit. --no-ui logs JSON lines instead.

Simulated kubelets: --node-status-report-frequency sets how often one posts its status unchanged
(upstream's kubelet: ${formatDuration(nodeStatusReportFrequency)}). Lease renewals and status checks: upstream's every 10 s,
or a quarter of a shorter --node-monitor-grace-period.

Ports (0 picks a free one): ${PortNames.map((name) => `${PortInfo[name].flag} (${DefaultPorts[name]})`).join(', ')}.
Settings: every flag of "nlc config" (e.g. --node-monitor-grace-period 20s), over NLC_ variables.

Examples:
  npm start
  npm start -- --node-monitor-grace-period 20s --ephemeral
  npm start -- --node-monitor-grace-period 20s --node-status-report-frequency 20s
  npm start -- --no-ui --port-dynamodb 0
  npm start -- --managed-controller
  npm start -- --managed-controller --managed-set nodeMonitorGracePeriod=40s
  npm start -- --extra-cluster beta --extra-cluster gamma
  nlc start --kubeconfig ~/.kube/kind.yaml --dry-run`;

function settingOption(key: ConfigKey): Option {
  const info = CONFIG_KEYS[key];
  const flags = info.kind === 'boolean' ? `${settingFlag(key)} [bool]` : `${settingFlag(key)} <value>`;
  return new Option(flags, `${info.description} (default ${settingDefaultText(key)})`);
}

export function startCommand(ctx: CommandContext): Command {
  const command = new Command('start').description(
    'run the whole system on this machine (API simulator, kubelets, DynamoDB, functions, relay) with a live view',
  );
  command
    .option('--kubeconfig <file>', 'a real cluster instead of the simulator (default: KUBECONFIG)')
    .option('--context <name>', 'kubeconfig context')
    .option('--simulator', 'the simulator even when KUBECONFIG is set')
    .option('--no-ui', 'log JSON lines instead of the live view')
    .option(
      '--data-dir <dir>',
      'logs, kubeconfigs, bundles, tables and stack.json (where nlc status finds the stack)',
      '.nlc-data',
    )
    .option('--ephemeral', 'keep the tables in memory (nothing survives a stop)')
    .option(
      '--managed-controller',
      "a second, active controller as a managed control plane's own; this one runs in shadow mode",
    )
    .option(
      '--managed-set <key=value>',
      'a setting of the managed controller (repeatable; implies --managed-controller)',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option(
      '--extra-cluster <name>',
      'another simulated cluster (its own API simulator, kubelets and relay) served by the same functions, bus and tables (repeatable)',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option(
      '--node-status-report-frequency <duration>',
      `simulated kubelets post unchanged node status this often (default ${formatDuration(nodeStatusReportFrequency)}, as upstream's kubelet)`,
    );
  for (const name of PortNames) {
    command.addOption(
      new Option(
        `${PortInfo[name].flag} <port>`,
        `${PortInfo[name].purpose} (default ${DefaultPorts[name]})`,
      ),
    );
  }
  const attributes = new Map<ConfigKey, string>();
  for (const key of settingKeys()) {
    const option = settingOption(key);
    attributes.set(key, option.attributeName());
    command.addOption(option);
  }
  return command.addHelpText('after', START_HELP).action(async (opts: Record<string, unknown>) => {
    const settings = Object.fromEntries(
      [...attributes].flatMap(([key, attribute]) =>
        opts[attribute] === undefined ? [] : [[key, opts[attribute]]],
      ),
    );
    const options = parseOptions(StartOptionsSchema, { ...opts, settings });
    const kubeconfig = chooseKubeconfig(options, ctx.io.env);
    if (kubeconfig !== undefined && options.nodeStatusReportFrequency !== undefined) {
      // A real cluster has its own kubelets: the flag would silently do nothing.
      throw new ConfigError([
        {
          path: '--node-status-report-frequency',
          message: 'sets the simulated kubelets; a real cluster has none (or --simulator)',
        },
      ]);
    }
    const managedController = managedControllerOf(options);
    const { runLocalStack } = await import('../../local/stack/main.js');
    const stop = new AbortController();
    const onSignal = (): void => {
      stop.abort();
    };
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
    for (const signal of signals) process.on(signal, onSignal);
    try {
      ctx.exitCode = await runLocalStack(
        {
          ui: options.ui,
          stack: {
            dataDir: options.dataDir,
            ephemeral: options.ephemeral === true,
            ports: portsOf(options),
            settings: options.settings,
            ...(options.nodeStatusReportFrequency !== undefined && {
              kubelet: { nodeStatusReportFrequency: options.nodeStatusReportFrequency },
            }),
            env: ctx.io.env,
            ...(kubeconfig !== undefined && { kubeconfig }),
            ...(options.context !== undefined && { context: options.context }),
            ...(managedController !== undefined && { managedController }),
            ...(options.extraCluster !== undefined && { extraClusters: options.extraCluster }),
          },
        },
        { stdout: process.stdout, stderr: ctx.io.stderr, stdin: process.stdin, env: ctx.io.env },
        stop.signal,
      );
    } catch (error) {
      throw withManagedFlags(error);
    } finally {
      for (const signal of signals) process.off(signal, onSignal);
    }
  });
}
