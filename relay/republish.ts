// What a replica that starts leading republishes, once its informers have listed (relay.ts decides
// when): the recent changes on the live lane, then on the paced lane the node deletions of the last
// 24 h and its current view (recentChanges.ts); only the recent changes when the republish is damped.
//
// Why republish on every takeover (docs/relay.md, "Guarantees"): the predecessor may have observed
// changes it never published (a bus outage, then a stop with events pending, or a crash), for any
// length of time, and no replica can tell which. The alternative, a durable outbox every replica
// writes, costs a write per change on the hot path and a store the relay does not otherwise need;
// the view costs one paced burst per takeover, and the consumers are idempotent and order nodes by
// resourceVersion, so a republished copy never undoes a newer one.
//
// Damped (relay.ts): a relay that crash-loops or flaps would republish its whole view on every term.
// The functions no longer need it to converge (every digest's fingerprints correct the node copies, and
// the monitor's pod sweep the pods: docs/architecture.md#level-triggered); it only makes a takeover's
// pods converge at once rather than within the sweep. So a full republish is made at most once per
// damping window across all replicas, recorded on the leader Lease; the others replay their recent
// changes only.
import type { EpochMillis, Node, Pod } from '../shared/domain/types.js';
import type { RelayLogger } from './logger.js';
import type { RelayMetrics } from './metrics.js';
import type { Publisher } from './publisher.js';
import { currentView, type RecentChanges } from './recentChanges.js';
import type { Reflector } from './reflector.js';

export interface RepublishSources {
  readonly cluster: string;
  readonly relayId: string;
  readonly recent: Pick<RecentChanges, 'replay' | 'nodeDeletions'>;
  readonly nodes: Pick<Reflector<Node>, 'values'>;
  readonly pods: Pick<Reflector<Pod>, 'values'>;
  readonly publisher: Pick<Publisher, 'addChange' | 'addRepublished' | 'scheduleFlush'>;
  readonly metrics: RelayMetrics;
  readonly logger: RelayLogger;
}

/**
 * Hands the new leader's republish to the publisher's lanes, counted and logged. `full`: also its current
 * view and the node deletions of the last 24 h; otherwise (damped: a full one was made recently, by
 * this replica or another) only the replay window's changes.
 */
export function republishView(sources: RepublishSources, now: EpochMillis, full = true): void {
  const { cluster, relayId, recent, nodes, pods, publisher, metrics, logger } = sources;
  // Live lane, first: the recent changes (deletions, pods of healthy nodes the view cannot show).
  const replay = recent.replay(now);
  for (const c of replay) publisher.addChange(c.event, c.observedAt, false);
  metrics.republishes.inc({ kind: full ? 'full' : 'damped' });
  if (!full) {
    metrics.republishedEvents.inc({ kind: 'recent_change' }, replay.length);
    logger.info('republishing only the recent changes as the new leader: a full republish is recent', {
      relayId,
      recentChanges: replay.length,
    });
    publisher.scheduleFlush();
    return;
  }
  // Paced lane: node deletions, the nodes the functions act on, their pods, the other nodes.
  const deletions = recent.nodeDeletions(now);
  for (const c of deletions) publisher.addRepublished(c.event, c.observedAt);
  const view = currentView(cluster, nodes.values(), pods.values());
  for (const event of [...view.nodesNeedingAction, ...view.pods, ...view.otherNodes]) {
    publisher.addRepublished(event, now);
  }
  const counts = {
    node: view.nodesNeedingAction.length + view.otherNodes.length,
    pod: view.pods.length,
    node_deletion: deletions.length,
    recent_change: replay.length,
  };
  for (const [kind, count] of Object.entries(counts)) metrics.republishedEvents.inc({ kind }, count);
  logger.info('republishing the current view as the new leader', {
    relayId,
    nodes: counts.node,
    nodesNeedingAction: view.nodesNeedingAction.length,
    pods: counts.pod,
    nodeDeletions: counts.node_deletion,
    recentChanges: counts.recent_change,
  });
  publisher.scheduleFlush();
}
