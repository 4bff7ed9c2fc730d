// `nlc relay`: runs the watch relay in the foreground (relay/main.ts runRelay, the container's entry
// point too) until SIGINT or SIGTERM, then stops it gracefully. The flags are the relay's settings for
// one run: they stand in for the environment variables relay/settings.ts reads (NLC_CLUSTER,
// NLC_EVENT_BUS_NAME, NLC_EVENTBRIDGE_ENDPOINT), so both paths share one validation.
import { Writable } from 'node:stream';
import { Command } from 'commander';
import { z } from 'zod';
import type { RunRelayOptions, RunningRelay } from '../../relay/main.js';
import { RelayEnv } from '../../relay/settings.js';
import { CONFIG_KEYS } from '../../shared/config.js';
import { ConfigError } from '../../shared/errors.js';
import { parseOptions } from '../errors.js';
import type { CliIo, CommandContext, OutputStream } from '../../shared/present/output.js';

export const RelayOptionsSchema = z.object({
  kubeconfig: z.string().min(1, 'expected a kubeconfig file').optional(),
  context: z.string().min(1, 'expected a context name').optional(),
  cluster: z.string().optional(),
  bus: z.string().optional(),
  endpoint: z.string().optional(),
  port: z.coerce
    .number({ error: 'expected a port from 0 to 65535' })
    .int('expected a port from 0 to 65535')
    .min(0, 'expected a port from 0 to 65535')
    .max(65_535, 'expected a port from 0 to 65535')
    .optional(),
  host: z.string().min(1, 'expected an address').optional(),
});
export type RelayOptions = z.output<typeof RelayOptionsSchema>;

// The relay's variables each flag stands in for: a problem with the value is reported by the flag.
const FLAG_OF_VARIABLE: ReadonlyMap<string, { flag: string; option: keyof RelayOptions }> = new Map([
  [CONFIG_KEYS.cluster.envVar, { flag: '--cluster', option: 'cluster' }],
  [RelayEnv.eventBusName, { flag: '--bus', option: 'bus' }],
  [RelayEnv.eventBridgeEndpoint, { flag: '--endpoint', option: 'endpoint' }],
  [RelayEnv.host, { flag: '--host', option: 'host' }],
]);

/** What starts the relay; tests may pass their own. */
export type StartRelay = (options: RunRelayOptions) => Promise<RunningRelay>;

// Loaded on use: the relay pulls in @kubernetes/client-node and the EventBridge client, which the
// other commands do not need at start-up.
const runRelay: StartRelay = async (options) => (await import('../../relay/main.js')).runRelay(options);

/** runRelay writes events to a Node stream: use the io's own when it is one (process.stdout). */
function writableOf(stream: OutputStream): NodeJS.WritableStream {
  if (stream instanceof Writable) return stream;
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      stream.write(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      done();
    },
  });
}

/**
 * Runs the relay until `until` aborts, then stops it (pending events published, Lease released).
 * Returns the exit code; a bad setting throws a ConfigError naming the flag or variable.
 *
 * @example
 * const stop = new AbortController();
 * const code = runRelayCommand({ kubeconfig: 'kubeconfig.yaml', port: 0 }, io, stop.signal);
 * stop.abort(); // → 0
 */
export async function runRelayCommand(
  options: RelayOptions,
  io: CliIo,
  until: AbortSignal,
  start: StartRelay = runRelay,
): Promise<number> {
  const env = {
    ...io.env,
    ...(options.cluster !== undefined && { [CONFIG_KEYS.cluster.envVar]: options.cluster }),
    ...(options.bus !== undefined && { [RelayEnv.eventBusName]: options.bus }),
    ...(options.endpoint !== undefined && { [RelayEnv.eventBridgeEndpoint]: options.endpoint }),
    ...(options.host !== undefined && { [RelayEnv.host]: options.host }),
  };
  let running: RunningRelay;
  try {
    running = await start({
      env,
      stdout: writableOf(io.stdout),
      ...(options.kubeconfig !== undefined && { kubeconfig: options.kubeconfig }),
      ...(options.context !== undefined && { context: options.context }),
      ...(options.port !== undefined && { port: options.port }),
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(
      error.issues.map((issue) => {
        const flag = FLAG_OF_VARIABLE.get(issue.path);
        return flag !== undefined && options[flag.option] !== undefined
          ? { ...issue, path: flag.flag }
          : issue;
      }),
      { cause: error },
    );
  }
  if (!until.aborted) {
    await new Promise<void>((resolve) => {
      until.addEventListener(
        'abort',
        () => {
          resolve();
        },
        { once: true },
      );
    });
  }
  await running.stop();
  return 0;
}

export const RELAY_HELP = `
Watches Nodes, node Leases and Pods and publishes Node Changed, Pod Changed and Heartbeat Digest
events: to the EventBridge bus given by --bus (or NLC_EVENT_BUS_NAME), else as JSON lines on stdout.
Cluster credentials: --kubeconfig, else the NLC_ cluster credential variables, KUBECONFIG,
~/.kube/config or the pod's service account. /healthz, /readyz and /metrics are served on --port,
on 127.0.0.1 unless --host (or NLC_RELAY_HOST) names another address, e.g. 0.0.0.0 for all.
Ctrl-C (SIGINT) or SIGTERM stops it gracefully. Settings: relay/settings.ts, docs/events.md.

Examples:
  nlc relay --kubeconfig ~/.kube/config --cluster dev --port 0
  nlc relay --cluster prod --bus nlc-prod --port 8080`;

export function relayCommand(ctx: CommandContext): Command {
  return new Command('relay')
    .description('run the watch relay in the foreground (the in-cluster Deployment runs the same)')
    .option(
      '--kubeconfig <file>',
      'kubeconfig file (default: NLC_ cluster credentials, KUBECONFIG, ~/.kube/config)',
    )
    .option('--context <name>', 'kubeconfig context')
    .option('--cluster <name>', 'cluster name carried by every event (default: NLC_CLUSTER, else "default")')
    .option('--bus <name>', 'EventBridge bus name or ARN (default: NLC_EVENT_BUS_NAME; none: stdout)')
    .option('--endpoint <url>', 'EventBridge endpoint, e.g. a local bus (default: NLC_EVENTBRIDGE_ENDPOINT)')
    .option('--port <port>', 'port of /healthz, /readyz and /metrics (default: NLC_RELAY_PORT, else 8080)')
    .option('--host <address>', 'IP address of those endpoints (default: NLC_RELAY_HOST, else 127.0.0.1)')
    .addHelpText('after', RELAY_HELP)
    .action(async (opts: Record<string, unknown>) => {
      const options = parseOptions(RelayOptionsSchema, opts);
      const stop = new AbortController();
      const onSignal = (): void => {
        stop.abort();
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        ctx.exitCode = await runRelayCommand(options, ctx.io, stop.signal);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}
