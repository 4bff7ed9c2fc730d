// The relay process's settings, read once at start (STYLE 1.5): the controller settings it shares with
// the functions (NLC_CLUSTER, NLC_NODE_MONITOR_PERIOD, through shared/config.ts loadConfig), the
// variables only the relay reads (below), the cluster credentials (authConfig.ts), and the pod's
// identity from the Downward API (POD_NAME, POD_NAMESPACE). One ConfigError names every bad variable.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ownedEnvVars as clusterAuthEnvVars } from '../shared/adapters/kubernetes/authConfig.js';
import { loadConfig } from '../shared/config.js';
import type { Millis } from '../shared/domain/types.js';
import { ConfigError, type ConfigIssue } from '../shared/errors.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../shared/wireFormat.js';

/** The environment variables only the relay reads. */
export const RelayEnv = {
  /** The EventBridge bus (name or ARN); unset: events are printed to stdout. */
  eventBusName: 'NLC_EVENT_BUS_NAME',
  /** EventBridge endpoint override (a local bus). */
  eventBridgeEndpoint: 'NLC_EVENTBRIDGE_ENDPOINT',
  /** Port of /healthz, /readyz and /metrics (8080). */
  port: 'NLC_RELAY_PORT',
  /** The pod's name (Downward API): the leader-election identity and the digests' relayId. */
  podName: 'POD_NAME',
  /** The pod's namespace (Downward API): where the leader-election Lease lives. */
  podNamespace: 'POD_NAMESPACE',
} as const;

/** NLC_ variables loadConfig must not report as unknown: the relay's own and the cluster credentials'. */
export const relayOwnedEnvVars: ReadonlySet<string> = new Set([
  RelayEnv.eventBusName,
  RelayEnv.eventBridgeEndpoint,
  RelayEnv.port,
  ...clusterAuthEnvVars,
]);

export interface RelaySettings {
  readonly cluster: string;
  readonly nodeMonitorPeriod: Millis;
  readonly eventBusName: string | undefined;
  readonly eventBridgeEndpoint: string | undefined;
  readonly port: number;
  /** POD_NAME, or hostname_uuid outside a pod (client-go's convention for a unique identity). */
  readonly relayId: string;
  readonly podNamespace: string | undefined;
}

// An EventBridge bus name (1-256 of [/.\-_A-Za-z0-9]) or a bus ARN.
const BusName = z
  .string()
  .regex(
    /^(arn:aws[\w-]*:events:[a-z0-9-]+:\d{12}:event-bus\/[/.\-_A-Za-z0-9]{1,256}|[/.\-_A-Za-z0-9]{1,256})$/,
    {
      error: 'expected an EventBridge bus name or ARN',
    },
  );
const Endpoint = z.url({
  protocol: /^https?$/,
  error: 'expected an http(s) URL such as http://127.0.0.1:4010',
});
const Port = z.coerce
  .number({ error: 'expected a port number' })
  .int({ error: 'expected a port number' })
  .min(0, { error: 'expected a port from 0 to 65535' })
  .max(65_535, { error: 'expected a port from 0 to 65535' });

/**
 * Reads the relay's settings. `overrides` are command-line flags (they win over the environment).
 * Throws one ConfigError naming every bad variable.
 *
 * @example
 * loadRelaySettings({ NLC_CLUSTER: 'prod', NLC_EVENT_BUS_NAME: 'nlc-prod', POD_NAME: 'nlc-relay-0' });
 */
export function loadRelaySettings(
  env: Readonly<Record<string, string | undefined>>,
  overrides: { readonly port?: number } = {},
): RelaySettings {
  const issues: ConfigIssue[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const check = <T>(name: string, schema: z.ZodType<T>, raw: unknown): T | undefined => {
    const result = schema.safeParse(raw);
    if (result.success) return result.data;
    issues.push(...result.error.issues.map((issue) => ({ path: name, message: issue.message })));
    return undefined;
  };

  let controller: ReturnType<typeof loadConfig> | undefined;
  try {
    controller = loadConfig(env, {}, { allowEnv: relayOwnedEnvVars });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
  }
  const busRaw = read(RelayEnv.eventBusName);
  const eventBusName = busRaw === undefined ? undefined : check(RelayEnv.eventBusName, BusName, busRaw);
  const endpointRaw = read(RelayEnv.eventBridgeEndpoint);
  const eventBridgeEndpoint =
    endpointRaw === undefined ? undefined : check(RelayEnv.eventBridgeEndpoint, Endpoint, endpointRaw);
  if (endpointRaw !== undefined && busRaw === undefined) {
    issues.push({
      path: RelayEnv.eventBridgeEndpoint,
      message: `set ${RelayEnv.eventBusName} too: the bus to send to`,
    });
  }
  const port =
    overrides.port !== undefined
      ? check('--port', Port, overrides.port)
      : check(RelayEnv.port, Port, read(RelayEnv.port) ?? 8080);
  const podName = read(RelayEnv.podName);
  if (podName !== undefined && !isDNS1123Subdomain(podName)) {
    issues.push({ path: RelayEnv.podName, message: `expected a pod name, got ${JSON.stringify(podName)}` });
  }
  const podNamespace = read(RelayEnv.podNamespace);
  if (podNamespace !== undefined && !isDNS1123Label(podNamespace)) {
    issues.push({
      path: RelayEnv.podNamespace,
      message: `expected a namespace, got ${JSON.stringify(podNamespace)}`,
    });
  }
  if (issues.length > 0 || controller === undefined || port === undefined) throw new ConfigError(issues);
  return {
    cluster: controller.cluster,
    nodeMonitorPeriod: controller.nodeMonitorPeriod,
    eventBusName,
    eventBridgeEndpoint,
    port,
    relayId: podName ?? `${hostname()}_${randomUUID()}`,
    podNamespace,
  };
}
