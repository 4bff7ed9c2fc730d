// How the application layer reports: one structured log line per invocation, debug lines for
// per-node reasoning, and metrics under upstream's names. Lambda handlers back it with Powertools
// (shared/observability.ts); the simulator and tests pass a recording or silent observer.
import type { DecisionRecord } from './stores.js';

/** A recorded decision, with the cluster it concerns (what the app layer hands to `decided`). */
export interface Decision extends DecisionRecord {
  readonly cluster: string;
}

/** Upstream metric names (pkg/controller/nodelifecycle/metrics.go, tainteviction/metrics). */
export type MetricName =
  | 'node_collector_zone_health'
  | 'node_collector_zone_size'
  | 'node_collector_unhealthy_nodes_in_zone'
  | 'node_collector_evictions_total'
  | 'node_collector_update_node_health_duration_seconds'
  | 'node_collector_update_all_nodes_health_duration_seconds'
  | 'taint_eviction_controller_pod_deletions_total'
  | 'nlc_observation_gap_seconds'
  | 'nlc_stale_digests_total'
  | 'nlc_monitor_pass_lease_busy_total'
  | 'nlc_refused_digests_total'
  | 'nlc_lease_confirmation_holds_total'
  | 'nlc_foreign_node_controller_writes_total';

export type MetricUnit = 'Count' | 'Percent' | 'Seconds';

export type LogFields = Readonly<Record<string, unknown>>;

export interface Observer {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** `zone` is the only dimension: a per-node dimension would cost a CloudWatch series per node. */
  metric(name: MetricName, unit: MetricUnit, value: number, dimensions?: { readonly zone?: string }): void;
  /** A decision was recorded (for live views and tests; the Decisions table is the durable trail). */
  decided?(decision: Decision): void;
}

/** Discards everything: for tools that only want the effects. */
export const silentObserver: Observer = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  metric: () => undefined,
};
