// The relay process's settings, read once at start: the controller settings it shares with the
// functions (NLC_CLUSTER, NLC_NODE_MONITOR_PERIOD, and NLC_NODE_MONITOR_GRACE_PERIOD, which bounds the
// lease watch's stall timeout; through shared/config.ts loadConfig), the variables only the relay reads
// (below), the cluster credentials (authConfig.ts), and the pod's identity from the Downward API
// (POD_NAME, POD_NAMESPACE). One ConfigError names every bad variable.
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { PutEventsMaxBytes } from '../shared/adapters/eventbridge/putEvents.js';
import { ownedEnvVars as clusterAuthEnvVars } from '../shared/adapters/kubernetes/authConfig.js';
import { loadConfig, type ControllerConfig } from '../shared/config.js';
import { durationSchema, formatDuration } from '../shared/duration.js';
import type { Millis } from '../shared/domain/types.js';
import { ConfigError, type ConfigIssue } from '../shared/errors.js';
import { DefaultDigestEntryMaxBytes, maxQuietDigestPeriod } from '../shared/heartbeatDigest.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../shared/wireFormat.js';
import {
  DefaultLeaseWatchStallTimeout,
  DefaultWatchStallTimeout,
  KubeletLeaseRenewInterval,
} from './informers.js';

/** The environment variables only the relay reads. */
export const RelayEnv = {
  /** The EventBridge bus (name or ARN); unset: events are printed to stdout. */
  eventBusName: 'NLC_EVENT_BUS_NAME',
  /** EventBridge endpoint override (a local bus). */
  eventBridgeEndpoint: 'NLC_EVENTBRIDGE_ENDPOINT',
  /** Port of /healthz, /readyz and /metrics (8080). */
  port: 'NLC_RELAY_PORT',
  /** Address those endpoints listen on (127.0.0.1; the in-cluster Deployment sets 0.0.0.0). */
  host: 'NLC_RELAY_HOST',
  /** Silence of the lease watch, while leases exist, taken for a stall (20s). */
  leaseWatchStallTimeout: 'NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT',
  /** Silence of the node and pod watches taken for a stall (3m; 0: no watchdog on them). */
  watchStallTimeout: 'NLC_RELAY_WATCH_STALL_TIMEOUT',
  /** The most bytes of a Heartbeat Digest's PutEvents entry (261120; at most 1000000). */
  digestEntryMaxBytes: 'NLC_RELAY_DIGEST_ENTRY_MAX_BYTES',
  /** How often a digest goes out while nothing is going on (15s; 0: every nodeMonitorPeriod). */
  quietDigestPeriod: 'NLC_RELAY_QUIET_DIGEST_PERIOD',
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
  RelayEnv.host,
  RelayEnv.leaseWatchStallTimeout,
  RelayEnv.watchStallTimeout,
  RelayEnv.digestEntryMaxBytes,
  RelayEnv.quietDigestPeriod,
  ...clusterAuthEnvVars,
]);

export interface RelaySettings {
  readonly cluster: string;
  readonly nodeMonitorPeriod: Millis;
  readonly eventBusName: string | undefined;
  readonly eventBridgeEndpoint: string | undefined;
  readonly port: number;
  /** The address /healthz, /readyz and /metrics listen on: loopback unless set. */
  readonly host: string;
  /** How long the lease watch may be silent, while leases exist, before it is relisted. */
  readonly leaseWatchStallTimeout: Millis;
  /** The same for the node and pod watches; 0: no watchdog on them. */
  readonly watchStallTimeout: Millis;
  /**
   * The most bytes of a digest's entry as EventBridge counts it (Source, DetailType and Detail): over it
   * the digest is packed, sends a shard of its fingerprints, or is split (shared/heartbeatDigest.ts).
   */
  readonly digestEntryMaxBytes: number;
  /**
   * How often a digest goes out while every node is Ready and renewing and nothing changed
   * (digestLoop.ts); nodeMonitorPeriod: every period.
   */
  readonly quietDigestPeriod: Millis;
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
 * Loopback by default: /metrics tells anyone who can reach it the cluster's size, the relay's
 * leadership and its publishing health, so it is served beyond the machine only when asked for (the
 * in-cluster Deployment asks, for its probes and Prometheus).
 */
export const DefaultRelayHost = '127.0.0.1';
// An IP address (no name lookups at start): 127.0.0.1, 0.0.0.0, ::, ::1, a pod IP.
const Host = z
  .string()
  .refine((value) => isIP(value) !== 0, { error: 'expected an IP address such as 127.0.0.1 or 0.0.0.0' });

/**
 * The smallest digest entry allowed: one 64 KB billing chunk. Smaller would only split digests that
 * every partition takes whole.
 */
export const MinDigestEntryMaxBytes = 64 * 1024;
const DigestEntryMaxBytes = z
  .string()
  .regex(/^\d{1,9}$/, { error: 'expected a number of bytes, digits only' })
  .transform(Number)
  .pipe(
    z
      .int()
      .min(MinDigestEntryMaxBytes, {
        error: `expected at least ${MinDigestEntryMaxBytes} (one 64 KB billing chunk)`,
      })
      .max(PutEventsMaxBytes, {
        error: `expected at most ${PutEventsMaxBytes} (what PutEvents takes in one request, since EventBridge's 1 MB entries of 29 January 2026; 261120 fits the 256 KB of partitions without them)`,
      }),
  );

/**
 * Shorter lease stall timeouts would take a one-node cluster's 10 s renewals (jittered by 4 %, plus
 * network delays) for stalls: harmless relists, but every one a warning.
 */
export const MinLeaseWatchStallTimeout: Millis = 15_000;
/** Shorter ones would relist quiet watches between two of the API server's bookmarks (about 1 a minute). */
export const MinWatchStallTimeout: Millis = 90_000;

/**
 * The longest lease stall timeout that still finds a stall before a healthy node looks silent for the
 * grace period: its last observed renewal can be one renewal interval older than the watch's last
 * delivery, and the relist and the next digest need a margin (two digest periods).
 *
 * @example
 * maxLeaseWatchStallTimeout({ nodeMonitorGracePeriod: 50_000, nodeMonitorPeriod: 5_000 }); // 30000
 */
export function maxLeaseWatchStallTimeout(
  config: Pick<ControllerConfig, 'nodeMonitorGracePeriod' | 'nodeMonitorPeriod'>,
): Millis {
  return config.nodeMonitorGracePeriod - KubeletLeaseRenewInterval - 2 * config.nodeMonitorPeriod;
}

/**
 * The lease stall timeout when none is set: 20 s, less when a short grace period leaves less room,
 * never below MinLeaseWatchStallTimeout (a grace period that short cannot be kept through a stall).
 *
 * @example
 * defaultLeaseWatchStallTimeout({ nodeMonitorGracePeriod: 40_000, nodeMonitorPeriod: 5_000 }); // 20000
 */
export function defaultLeaseWatchStallTimeout(
  config: Pick<ControllerConfig, 'nodeMonitorGracePeriod' | 'nodeMonitorPeriod'>,
): Millis {
  return Math.max(
    MinLeaseWatchStallTimeout,
    Math.min(DefaultLeaseWatchStallTimeout, maxLeaseWatchStallTimeout(config)),
  );
}

/** The quiet digest period when none is set. */
export const DefaultQuietDigestPeriod: Millis = 15_000;

/**
 * The quiet digest period when none is set: 15 s, a third of a grace period too short for it, never
 * below the monitor period (which turns quiet digests off).
 *
 * @example defaultQuietDigestPeriod({ nodeMonitorPeriod: 5_000, nodeMonitorGracePeriod: 40_000 }); // 13333
 */
export function defaultQuietDigestPeriod(
  config: Pick<ControllerConfig, 'nodeMonitorPeriod' | 'nodeMonitorGracePeriod'>,
): Millis {
  return Math.max(config.nodeMonitorPeriod, Math.min(DefaultQuietDigestPeriod, maxQuietDigestPeriod(config)));
}

/**
 * Reads the relay's settings. `overrides` are command-line flags (they win over the environment).
 * Throws one ConfigError naming every bad variable.
 *
 * @example
 * loadRelaySettings({ NLC_CLUSTER: 'prod', NLC_EVENT_BUS_NAME: 'nlc-prod', POD_NAME: 'nlc-relay-0' });
 */
export function loadRelaySettings(
  env: Readonly<Record<string, string | undefined>>,
  overrides: { readonly port?: number; readonly host?: string } = {},
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
  const host =
    overrides.host !== undefined
      ? check('--host', Host, overrides.host)
      : check(RelayEnv.host, Host, read(RelayEnv.host) ?? DefaultRelayHost);
  const leaseStallRaw = read(RelayEnv.leaseWatchStallTimeout);
  const leaseStall =
    leaseStallRaw === undefined
      ? undefined
      : check(RelayEnv.leaseWatchStallTimeout, durationSchema('positive'), leaseStallRaw);
  if (leaseStall !== undefined && leaseStall < MinLeaseWatchStallTimeout) {
    issues.push({
      path: RelayEnv.leaseWatchStallTimeout,
      message:
        `expected at least ${formatDuration(MinLeaseWatchStallTimeout)} (kubelets renew every ` +
        `${formatDuration(KubeletLeaseRenewInterval)}), got ${JSON.stringify(leaseStallRaw)}`,
    });
  } else if (leaseStall !== undefined && controller !== undefined) {
    const max = maxLeaseWatchStallTimeout(controller);
    if (leaseStall > max) {
      issues.push({
        path: RelayEnv.leaseWatchStallTimeout,
        message:
          `${formatDuration(leaseStall)} leaves no room within nodeMonitorGracePeriod ` +
          `(${formatDuration(controller.nodeMonitorGracePeriod)}): at most ${formatDuration(max)}, the grace ` +
          `period less the kubelets' renewal interval (${formatDuration(KubeletLeaseRenewInterval)}) and two ` +
          `nodeMonitorPeriods for the relist, or healthy nodes are marked Unknown before a stall is found`,
      });
    }
  }
  const watchStallRaw = read(RelayEnv.watchStallTimeout);
  const watchStall =
    watchStallRaw === undefined
      ? DefaultWatchStallTimeout
      : check(RelayEnv.watchStallTimeout, durationSchema('nonNegative'), watchStallRaw);
  if (watchStall !== undefined && watchStall > 0 && watchStall < MinWatchStallTimeout) {
    issues.push({
      path: RelayEnv.watchStallTimeout,
      message:
        `expected 0 (no watchdog) or at least ${formatDuration(MinWatchStallTimeout)} (the API server ` +
        `sends a bookmark about every minute), got ${JSON.stringify(watchStallRaw)}`,
    });
  }
  const digestEntryRaw = read(RelayEnv.digestEntryMaxBytes);
  const digestEntryMaxBytes =
    digestEntryRaw === undefined
      ? DefaultDigestEntryMaxBytes
      : check(RelayEnv.digestEntryMaxBytes, DigestEntryMaxBytes, digestEntryRaw);
  const quietRaw = read(RelayEnv.quietDigestPeriod);
  let quietDigestPeriod =
    quietRaw === undefined
      ? undefined
      : check(RelayEnv.quietDigestPeriod, durationSchema('nonNegative'), quietRaw);
  if (controller !== undefined) {
    const max = maxQuietDigestPeriod(controller);
    if (quietDigestPeriod === undefined && quietRaw === undefined) {
      quietDigestPeriod = defaultQuietDigestPeriod(controller);
    } else if (quietDigestPeriod === 0) {
      quietDigestPeriod = controller.nodeMonitorPeriod;
    } else if (quietDigestPeriod !== undefined && quietDigestPeriod < controller.nodeMonitorPeriod) {
      issues.push({
        path: RelayEnv.quietDigestPeriod,
        message:
          `expected 0 (a digest every period) or at least nodeMonitorPeriod ` +
          `(${formatDuration(controller.nodeMonitorPeriod)}), got ${JSON.stringify(quietRaw)}`,
      });
    } else if (quietDigestPeriod !== undefined && quietDigestPeriod > max) {
      issues.push({
        path: RelayEnv.quietDigestPeriod,
        message:
          `${formatDuration(quietDigestPeriod)} is over a third of nodeMonitorGracePeriod ` +
          `(${formatDuration(controller.nodeMonitorGracePeriod)}): at most ${formatDuration(max)}, so that ` +
          `two quiet digests lost in a row are not taken for an observation gap`,
      });
    }
  }
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
  if (
    issues.length > 0 ||
    controller === undefined ||
    port === undefined ||
    host === undefined ||
    watchStall === undefined ||
    digestEntryMaxBytes === undefined ||
    quietDigestPeriod === undefined
  )
    throw new ConfigError(issues);
  return {
    cluster: controller.cluster,
    nodeMonitorPeriod: controller.nodeMonitorPeriod,
    eventBusName,
    eventBridgeEndpoint,
    port,
    host,
    leaseWatchStallTimeout: leaseStall ?? defaultLeaseWatchStallTimeout(controller),
    watchStallTimeout: watchStall,
    digestEntryMaxBytes,
    quietDigestPeriod,
    relayId: podName ?? `${hostname()}_${randomUUID()}`,
    podNamespace,
  };
}
