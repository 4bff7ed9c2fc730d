// The settings the controller runs with, as the domain and the services take them: a port, so the
// domain depends on their shape and not on shared/config.ts, which parses, validates and defaults them.
import type { Millis } from '../domain/types.js';
import type { EmulationVersion } from '../domain/upstreamVersion.js';

export type EvictionMode = 'taint' | 'legacy';

export interface ControllerConfig {
  /**
   * The upstream minor reproduced (shared/domain/upstreamVersion.ts): its defaults, and its behaviour
   * where minors differ. The newest released one by default.
   */
  readonly emulationVersion: EmulationVersion;
  /** --node-monitor-period: how often monitorNodeHealth runs (and the relay sends a digest). 5s. */
  readonly nodeMonitorPeriod: Millis;
  /** --node-monitor-grace-period: silence before Ready=Unknown. 50s (v1.32+; 40s before): the emulated minor's. */
  readonly nodeMonitorGracePeriod: Millis;
  /** --node-startup-grace-period: grace for a node that never posted a Ready condition. 60s. */
  readonly nodeStartupGracePeriod: Millis;
  /** --node-eviction-rate (upstream evictionLimiterQPS): NoExecute taints per second per zone. 0.1. */
  readonly nodeEvictionRate: number;
  /** --secondary-node-eviction-rate: rate in PartialDisruption for zones larger than the threshold. 0.01. */
  readonly secondaryNodeEvictionRate: number;
  /** --large-cluster-size-threshold: compared (strictly greater) with the zone size. 50. */
  readonly largeClusterSizeThreshold: number;
  /** --unhealthy-zone-threshold: fraction of not-ready nodes (and > 2) making a zone PartialDisruption. 0.55. */
  readonly unhealthyZoneThreshold: number;
  /** --pod-eviction-timeout (legacy mode only; removed upstream in v1.27, so settable only up to 1.26). 5m. */
  readonly podEvictionTimeout: Millis;
  /** taint, or legacy (the pre-taint DeletePods path, `--enable-taint-manager=false`: emulationVersion 1.26 or before). */
  readonly evictionMode: EvictionMode;
  /** NodeEvictionPeriod: period of doNoExecuteTaintingPass / doEvictionPass upstream. 100ms. */
  readonly nodeEvictionPeriod: Millis;
  /**
   * --kube-api-qps: requests per second a function's client may send to the API server (client-go's
   * token bucket, per client; kube-controller-manager gives each controller its own). 20.
   */
  readonly kubeApiQps: number;
  /** --kube-api-burst: requests the client may send at once before kubeApiQps paces them. 30. */
  readonly kubeApiBurst: number;
  /** Shadow mode: decide and record, never write to the cluster. */
  readonly dryRun: boolean;
  /** Name of the cluster this deployment serves; every state key starts with it. */
  readonly cluster: string;
  /**
   * The relay's leader-election Lease, `namespace/name`: a digest's relay term is accepted only when this
   * Lease says its relay holds it (shared/digestClock.ts). nlc-system/nlc-relay, as infra/relay deploys.
   */
  readonly relayLease: string;
}
