// What a replica that starts leading republishes, once its informers have listed (relay.ts decides
// when): the recent changes on the live lane, then on the paced lane the node deletions of the last
// 24 h and its current view (recentChanges.ts).
//
// Why republish on every takeover (docs/relay.md, "Guarantees"): the predecessor may have observed
// changes it never published (a bus outage, then a stop with events pending, or a crash), for any
// length of time, and no replica can tell which. The alternative, a durable outbox every replica
// writes, costs a write per change on the hot path and a store the relay does not otherwise need;
// the view costs one paced burst per takeover, and the consumers are idempotent and order nodes by
// resourceVersion, so a republished copy never undoes a newer one.
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

/** Hands the new leader's republish to the publisher's lanes, counted and logged. */
export function republishView(sources: RepublishSources, now: EpochMillis): void {
  const { cluster, relayId, recent, nodes, pods, publisher, metrics, logger } = sources;
  // Live lane, first: the recent changes (deletions, pods of healthy nodes the view cannot show).
  const replay = recent.replay(now);
  for (const c of replay) publisher.addChange(c.event, c.observedAt, false);
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
