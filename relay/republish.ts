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
//
// Resumed: at 100,000 nodes a full republish takes minutes at its pace, longer than a leader term can
// last (a rolling update stops a leader seconds after it took over). Damped, the successor would leave
// the rest unsent for the whole window. So the other nodes go in name order, the leader records on its
// Lease the first one the bus has not accepted yet (RepublishCursor), and a successor within the window
// resumes from there: the nodes the functions act on and their pods again (few, and first), then the
// other nodes from the cursor on. Later terms never start the view over.
import type { EpochMillis, Node, Pod } from '../shared/domain/types.js';
import type { RelayLogger } from './logger.js';
import type { RelayMetrics } from './metrics.js';
import type { Publisher } from './publisher.js';
import { NodeChangedDetailType } from '../shared/events.js';
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
 * What a term republishes: `full` (its view and the node deletions), `resumed` (a full one a
 * predecessor left unfinished: the same, but the other nodes only from `from`, by name), or `damped`
 * (only the replay window's changes).
 */
export type RepublishKind =
  | { readonly kind: 'full' }
  | { readonly kind: 'resumed'; readonly from: string }
  | { readonly kind: 'damped' };

/**
 * Hands the new leader's republish to the publisher's lanes, counted and logged (see RepublishKind).
 * Returns the names of the other nodes queued, in the order they go (by name): what a RepublishCursor
 * follows.
 */
export function republishView(
  sources: RepublishSources,
  now: EpochMillis,
  what: RepublishKind = { kind: 'full' },
): readonly string[] {
  const { cluster, relayId, recent, nodes, pods, publisher, metrics, logger } = sources;
  // Live lane, first: the recent changes (deletions, pods of healthy nodes the view cannot show).
  const replay = recent.replay(now);
  for (const c of replay) publisher.addChange(c.event, c.observedAt, false);
  metrics.republishes.inc({ kind: what.kind });
  if (what.kind === 'damped') {
    metrics.republishedEvents.inc({ kind: 'recent_change' }, replay.length);
    logger.info('republishing only the recent changes as the new leader: a full republish is recent', {
      relayId,
      recentChanges: replay.length,
    });
    publisher.scheduleFlush();
    return [];
  }
  // Paced lane: node deletions, the nodes the functions act on, their pods, the other nodes by name
  // (from the cursor when resumed).
  const deletions = recent.nodeDeletions(now);
  for (const c of deletions) publisher.addRepublished(c.event, c.observedAt);
  const view = currentView(cluster, nodes.values(), pods.values());
  const from = what.kind === 'resumed' ? what.from : '';
  const otherNodes = view.otherNodes
    .flatMap((event) =>
      event.detailType === NodeChangedDetailType && event.detail.node.name >= from
        ? [{ name: event.detail.node.name, event }]
        : [],
    )
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const event of [...view.nodesNeedingAction, ...view.pods, ...otherNodes.map((o) => o.event)]) {
    publisher.addRepublished(event, now);
  }
  const counts = {
    node: view.nodesNeedingAction.length + otherNodes.length,
    pod: view.pods.length,
    node_deletion: deletions.length,
    recent_change: replay.length,
  };
  for (const [kind, count] of Object.entries(counts)) metrics.republishedEvents.inc({ kind }, count);
  logger.info(
    what.kind === 'resumed'
      ? 'resuming the republish a previous leader left unfinished'
      : 'republishing the current view as the new leader',
    {
      relayId,
      ...(what.kind === 'resumed' && { resumedFrom: what.from }),
      nodes: counts.node,
      nodesNeedingAction: view.nodesNeedingAction.length,
      pods: counts.pod,
      nodeDeletions: counts.node_deletion,
      recentChanges: counts.recent_change,
    },
  );
  publisher.scheduleFlush();
  return otherNodes.map((o) => o.name);
}

/**
 * How far a republish of the other nodes (in name order) has got: `next` is the first name the bus has
 * not accepted yet, undefined once every one was. Accepted out of order (a failed batch retried later)
 * is remembered until the names before it are accepted too, so `next` never skips an unsent node.
 */
export class RepublishCursor {
  private index = 0;
  private readonly acceptedAhead = new Set<string>();
  private readonly queued: ReadonlySet<string>;

  constructor(private readonly names: readonly string[]) {
    this.queued = new Set(names);
  }

  /** The bus accepted this node's republished event; returns whether `next` moved. */
  accepted(name: string): boolean {
    if (!this.queued.has(name)) return false;
    this.acceptedAhead.add(name);
    const before = this.index;
    while (this.index < this.names.length && this.acceptedAhead.delete(this.names[this.index] ?? '')) {
      this.index++;
    }
    return this.index !== before;
  }

  get next(): string | undefined {
    return this.names[this.index];
  }
}
