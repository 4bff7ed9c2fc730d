// The local stack's relay: relay/main.ts runRelay in this process, publishing through the EventBridge
// client to serverless-offline's endpoint, on loopback, without leader election (a single replica), and
// restartable from the live view (`r`): a restart is a new relay process with a new identity, as after a
// pod restart, on the same port.
import { CONFIG_KEYS, formatConfigValue, type ControllerConfig } from '../../shared/config.js';
import type { RunningRelay } from '../../relay/main.js';
import type { RelayStatus } from '../../relay/relay.js';
import { RelayEnv } from '../../relay/settings.js';
import { relayLoggerOf, type StackLogger } from './log.js';
import { LocalHost } from './ports.js';

export interface RelayControls {
  running(): boolean;
  status(): RelayStatus | undefined;
  /** Stops the relay process (graceful: pending events published). */
  stop(): Promise<void>;
  /** Starts a new relay process (a new relay identity, as after a restart). */
  start(): Promise<void>;
}

export interface LocalRelayOptions {
  readonly config: ControllerConfig;
  readonly busName: string;
  readonly eventBridgeEndpoint: string;
  readonly kubeconfig: string;
  readonly context?: string;
  readonly port: number;
  readonly logger: StackLogger;
}

export interface LocalRelay {
  readonly controls: RelayControls;
  /** The HTTP endpoints' URL (the port stays the same across restarts). */
  url(): string;
  /** Stops the relay for good (waits for a start or stop under way). */
  close(): Promise<void>;
}

/**
 * Starts the relay and resolves once it is publishing (its first list follows).
 *
 * @example
 * const relay = await startLocalRelay({ config, busName: 'nlc-dev', eventBridgeEndpoint, kubeconfig, port: 0, logger });
 * await relay.controls.stop();
 */
export async function startLocalRelay(options: LocalRelayOptions): Promise<LocalRelay> {
  const { config } = options;
  // Only the relay's own variables: runRelay reads its settings from them, as in the cluster.
  const env = {
    [CONFIG_KEYS.cluster.envVar]: config.cluster,
    [CONFIG_KEYS.nodeMonitorPeriod.envVar]: formatConfigValue('nodeMonitorPeriod', config.nodeMonitorPeriod),
    // The functions' grace period: it bounds the relay's quiet digest period (relay.md, "Quiet digests").
    [CONFIG_KEYS.nodeMonitorGracePeriod.envVar]: formatConfigValue(
      'nodeMonitorGracePeriod',
      config.nodeMonitorGracePeriod,
    ),
    [RelayEnv.eventBusName]: options.busName,
    [RelayEnv.eventBridgeEndpoint]: options.eventBridgeEndpoint,
    AWS_REGION: 'us-east-1',
  };
  const { runRelay } = await import('../../relay/main.js');
  let port = options.port;
  let running: RunningRelay | undefined;
  // Starts and stops from the keys run one after another.
  let transition: Promise<void> = Promise.resolve();

  const start = async (): Promise<void> => {
    if (running !== undefined) return;
    running = await runRelay({
      env,
      kubeconfig: options.kubeconfig,
      ...(options.context !== undefined && { context: options.context }),
      port,
      host: LocalHost,
      leaderElect: false,
      logger: relayLoggerOf(options.logger),
      flushTimeoutMs: 2_000,
    });
    port = Number(new URL(running.http.url).port);
  };
  const stop = async (): Promise<void> => {
    const current = running;
    running = undefined;
    await current?.stop();
  };
  const queue = (step: () => Promise<void>): Promise<void> => (transition = transition.then(step, step));

  await start();
  return {
    controls: {
      running: () => running !== undefined,
      status: () => running?.relay.status(),
      stop: () => queue(stop),
      start: () => queue(start),
    },
    url: () => `http://${LocalHost}:${port}`,
    close: () => queue(stop),
  };
}
