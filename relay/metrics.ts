// The relay's Prometheus metrics, served on /metrics (relay/http.ts). One registry per relay (not
// prom-client's global one), so tests and a process running two relays never mix their counts. Names
// follow Prometheus conventions with the `nlc_relay_` prefix; no label carries a node or pod name.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export type WatchRestartReason = 'error' | 'expired' | 'closed';
export type DropReason = 'queue_full' | 'replay_full' | 'permanent_failure';
/**
 * Why a digest was not sent: the lease watch broke, expired or stalled and is not watching again yet;
 * it has been silent for its stall timeout; or the digest timer fired more than two periods late.
 */
export type DigestSkipReason = 'lease_watch_interrupted' | 'lease_watch_stalled' | 'late_timer';

/**
 * The relay's metrics on their own registry.
 *
 * @example
 * const metrics = new RelayMetrics({ defaultMetrics: true }); // plus process_* and nodejs_* metrics
 * metrics.eventsSent.inc({ detail_type: 'Node Changed' });
 * await metrics.registry.metrics(); // the text exposition
 */
export class RelayMetrics {
  readonly registry = new Registry();

  /** Events the bus accepted, by detail type. */
  readonly eventsSent = new Counter({
    name: 'nlc_relay_events_sent_total',
    help: 'Events the event bus accepted, by detail type.',
    labelNames: ['detail_type'] as const,
    registers: [this.registry],
  });
  /** Events a publish attempt failed to deliver (kept for the next attempt unless permanent). */
  readonly eventsFailed = new Counter({
    name: 'nlc_relay_events_failed_total',
    help: 'Events a publish attempt failed to deliver, by detail type and whether the failure is permanent.',
    labelNames: ['detail_type', 'permanent'] as const,
    registers: [this.registry],
  });
  /** Events the sink sent again within one publish after a failed entry or request. */
  readonly eventsRetried = new Counter({
    name: 'nlc_relay_events_retried_total',
    help: 'Events re-sent by the event sink after a failed entry or request.',
    registers: [this.registry],
  });
  /** Events given up on: only when the queue cap is reached, or a failure no retry can fix. */
  readonly eventsDropped = new Counter({
    name: 'nlc_relay_events_dropped_total',
    help: 'Events given up on (queue cap reached, or a permanent failure such as an oversized entry).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  /** Unsent digests replaced by a newer one while the bus was unreachable (a digest is a full snapshot). */
  readonly digestsSuperseded = new Counter({
    name: 'nlc_relay_digests_superseded_total',
    help: 'Heartbeat Digest parts replaced, unsent, by a newer digest.',
    registers: [this.registry],
  });
  /** Requests to the event bus (PutEvents calls), retries included. */
  readonly publishRequests = new Counter({
    name: 'nlc_relay_publish_requests_total',
    help: 'Requests made to the event bus (PutEvents calls), retries included.',
    registers: [this.registry],
  });
  readonly watchRestarts = new Counter({
    name: 'nlc_relay_watch_restarts_total',
    help: 'Watches started again, by resource and reason (error: broken stream or failed request, with backoff; expired: 410 Gone, relisted; closed: ended by the server, resumed).',
    labelNames: ['resource', 'reason'] as const,
    registers: [this.registry],
  });
  readonly watchStalls = new Counter({
    name: 'nlc_relay_watch_stalls_total',
    help: 'Watches abandoned because they stayed open and delivered nothing (no event, no bookmark) for the stall timeout, then relisted, by resource.',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  readonly digestsQuiet = new Counter({
    name: 'nlc_relay_digests_quiet_total',
    help: 'Digest ticks with no digest sent because nothing was going on and the quiet period had not passed (relay.md, "Quiet digests").',
    registers: [this.registry],
  });
  readonly digestsSkipped = new Counter({
    name: 'nlc_relay_digests_skipped_total',
    help: 'Heartbeat Digests not sent because the relay could not vouch for the silence they would report (lease_watch_interrupted, lease_watch_stalled, late_timer).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly relists = new Counter({
    name: 'nlc_relay_relists_total',
    help: 'Lists after the first (a resync after 410 Gone or a failed list), by resource.',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  readonly malformedObjects = new Counter({
    name: 'nlc_relay_malformed_objects_total',
    help: 'Objects the relay could not read (missing name, uid, ...), skipped, by resource.',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  readonly digestBytes = new Gauge({
    name: 'nlc_relay_digest_bytes',
    help: 'Size of the last Heartbeat Digest, all parts, in bytes of JSON detail.',
    registers: [this.registry],
  });
  readonly digestParts = new Gauge({
    name: 'nlc_relay_digest_parts',
    help: 'Parts (PutEvents entries) of the last Heartbeat Digest.',
    registers: [this.registry],
  });
  readonly digestNodes = new Gauge({
    name: 'nlc_relay_digest_nodes',
    help: 'Nodes with a probe in the last Heartbeat Digest.',
    registers: [this.registry],
  });
  readonly digestSequence = new Gauge({
    name: 'nlc_relay_digest_sequence',
    help: 'Sequence of the last Heartbeat Digest built in this leadership term.',
    registers: [this.registry],
  });
  readonly publishLag = new Histogram({
    name: 'nlc_relay_publish_lag_seconds',
    help: 'Time from observing a change (or building a digest) to the bus accepting its event.',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });
  readonly pendingEvents = new Gauge({
    name: 'nlc_relay_pending_events',
    help: 'Events waiting to be published (pending changes plus unsent digest parts).',
    registers: [this.registry],
  });
  readonly oldestPendingAge = new Gauge({
    name: 'nlc_relay_oldest_pending_seconds',
    help: 'Age of the oldest event waiting to be published; 0 when none is.',
    registers: [this.registry],
  });
  /** What a replica republished when it started leading (recentChanges.ts), by kind. */
  readonly republishedEvents = new Counter({
    name: 'nlc_relay_republished_events_total',
    help: 'Events a replica queued for publishing when it started leading, so nothing its predecessor left unpublished is lost, by kind (node and pod: its current view; node_deletion: node deletions of the last 24 h; recent_change: changes of the replay window).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly pendingRepublished = new Gauge({
    name: 'nlc_relay_republish_pending_events',
    help: 'Republished events still waiting for their pace (part of nlc_relay_pending_events).',
    registers: [this.registry],
  });
  readonly isLeader = new Gauge({
    name: 'nlc_relay_is_leader',
    help: '1 while this replica holds the leader Lease and publishes, else 0.',
    registers: [this.registry],
  });
  readonly republishes = new Counter({
    name: 'nlc_relay_republishes_total',
    help: "Republishes this replica made when it started leading: full (its current view and the node deletions of the last 24 h), resumed (the rest of a full one a previous leader left unfinished, from its Lease record), or damped (only the replay window's changes: a full one was made within the damping window, by any replica).",
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly takeoversLastHour = new Gauge({
    name: 'nlc_relay_takeovers_last_hour',
    help: 'Relay terms (a replica starting to lead) within the last hour, as the leader Lease records them, as of when this replica last started leading: a relay that crash-loops or flaps shows here.',
    registers: [this.registry],
  });
  readonly leadershipChanges = new Counter({
    name: 'nlc_relay_leadership_changes_total',
    help: 'Times this replica started or stopped leading.',
    labelNames: ['change'] as const,
    registers: [this.registry],
  });
  readonly informerSynced = new Gauge({
    name: 'nlc_relay_informer_synced',
    help: '1 once the informer of a resource completed its first list.',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  readonly cachedObjects = new Gauge({
    name: 'nlc_relay_cached_objects',
    help: 'Objects in the informer cache, by resource.',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });

  constructor(options: { readonly defaultMetrics?: boolean } = {}) {
    // process_resident_memory_bytes, process_cpu_seconds_total, nodejs_eventloop_lag_seconds, ...
    if (options.defaultMetrics === true) collectDefaultMetrics({ register: this.registry });
  }
}
