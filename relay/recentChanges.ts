// What a replica that starts leading republishes, so that nothing its predecessor observed and did not
// publish is lost (docs/relay.md, "Guarantees"). A standby cannot know what the leader published: the
// leader may have been failing to publish for minutes (a bus outage) and stop, gracefully or not, with
// those events unsent. So every new term republishes:
// - its current view (`currentView`): every node, and the pods bound to a node the functions act on
//   (not Ready, or NoExecute-tainted), as ADDED with their current state and resourceVersion. The
//   functions converge on it: node-taints stores a node unless a newer resourceVersion is stored and
//   reconciles its taints; taint eviction lists the pods of a NoExecute-tainted node itself;
//   pod-processing marks a pod on a not-Ready node; every consumer is idempotent.
// - the node deletions observed within `deletedNodesWindow` (24 h): the view cannot show them, and a
//   node whose deletion is lost stays in the functions' node cache and zone arithmetic for good.
// - the changes observed within `window` (a lease duration plus margins): the rest the view cannot show
//   (pod deletions, changes of pods on healthy nodes). Older pod changes need no republishing: no
//   function acts on a pod of a healthy node, and an eviction scheduled for a pod since deleted finds
//   it gone, by UID, when it falls due.
// Every replica records this, leader or not, from its informers' changes after their first lists.
//
// Bounded by the windows and by `max` / `maxDeletedNodes` entries (the oldest go first).
import { getNoExecuteTaints } from '../shared/domain/taints.js';
import type { EpochMillis, Millis, Node, Pod } from '../shared/domain/types.js';
import { NodeChangedDetailType, PodChangedDetailType } from '../shared/events.js';
import { changeKey, type ChangeEvent } from './publishQueue.js';
import { nodeChanged, podChanged } from './shaping.js';

export interface RecentChange {
  readonly event: ChangeEvent;
  readonly observedAt: EpochMillis;
}

export interface RecentChangesOptions {
  /** How long changes are kept for a takeover. */
  readonly window: Millis;
  readonly max: number;
  /** How long node deletions are kept for a takeover (24 h). */
  readonly deletedNodesWindow?: Millis;
  /** Node deletions kept at most (10,000). */
  readonly maxDeletedNodes?: number;
}

/** 24 h: within the Nodes table's 2-day tombstones, so a late republished deletion finds its tombstone. */
export const DefaultDeletedNodesWindow: Millis = 24 * 3_600_000;
export const DefaultMaxDeletedNodes = 10_000;

export class RecentChanges {
  private items: RecentChange[] = [];
  private head = 0;
  /** Node deletions by node (name and uid), oldest first. */
  private readonly deletedNodes = new Map<string, RecentChange>();
  private readonly deletedNodesWindow: Millis;
  private readonly maxDeletedNodes: number;

  constructor(private readonly options: RecentChangesOptions) {
    this.deletedNodesWindow = options.deletedNodesWindow ?? DefaultDeletedNodesWindow;
    this.maxDeletedNodes = options.maxDeletedNodes ?? DefaultMaxDeletedNodes;
  }

  /** Records a change; returns how many old entries were dropped to stay within the caps. */
  add(change: RecentChange): number {
    this.items.push(change);
    let dropped = 0;
    while (this.size > this.options.max) {
      this.head++;
      dropped++;
    }
    this.compact();
    const { event } = change;
    if (event.detailType === NodeChangedDetailType && event.detail.type === 'DELETED') {
      const key = changeKey(event);
      this.deletedNodes.delete(key);
      this.deletedNodes.set(key, change);
      for (const oldest of this.deletedNodes.keys()) {
        if (this.deletedNodes.size <= this.maxDeletedNodes) break;
        this.deletedNodes.delete(oldest);
        dropped++;
      }
    }
    return dropped;
  }

  /** Forgets the changes observed before now − window, and the node deletions before their window. */
  prune(now: EpochMillis): void {
    const from = now - this.options.window;
    while (this.head < this.items.length && (this.items[this.head]?.observedAt ?? from) < from) this.head++;
    this.compact();
    for (const [key, deletion] of this.deletedNodes) {
      if (deletion.observedAt >= now - this.deletedNodesWindow) break;
      this.deletedNodes.delete(key);
    }
  }

  /** The changes observed within the window before `now`, oldest first. */
  replay(now: EpochMillis): RecentChange[] {
    const from = now - this.options.window;
    return this.items.slice(this.head).filter((c) => c.observedAt >= from);
  }

  /** The node deletions observed within their window before `now`, oldest first. */
  nodeDeletions(now: EpochMillis): RecentChange[] {
    const from = now - this.deletedNodesWindow;
    return [...this.deletedNodes.values()].filter((c) => c.observedAt >= from);
  }

  get size(): number {
    return this.items.length - this.head;
  }

  get deletedNodeCount(): number {
    return this.deletedNodes.size;
  }

  private compact(): void {
    // Amortized O(1): copy only when the dead prefix is most of the array.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

/** A node the functions act on: not Ready (False, Unknown, or no Ready condition), or NoExecute-tainted. */
export function nodeNeedsAction(node: Node): boolean {
  const ready = node.conditions.find((c) => c.type === 'Ready');
  return ready?.status !== 'True' || getNoExecuteTaints(node.taints).length > 0;
}

export interface CurrentView {
  /** The nodes the functions act on (nodeNeedsAction). */
  readonly nodesNeedingAction: readonly ChangeEvent[];
  /** The pods bound to those nodes. */
  readonly pods: readonly ChangeEvent[];
  /** Every other node. */
  readonly otherNodes: readonly ChangeEvent[];
}

/**
 * The state a new leader republishes: every node as Node Changed ADDED (its current state and
 * resourceVersion), and every pod bound to a node that is not Ready or is NoExecute-tainted as Pod
 * Changed ADDED. ADDED because the consumers must not skip it as "nothing changed": taint eviction's
 * NodeUpdated filter skips a MODIFIED whose NoExecute taints did not change, and pod-processing skips
 * what is not a binding. Publish it in the order of the fields: a pod's consumers read its node's
 * copy, which the node's event writes.
 *
 * @example
 * const view = currentView('prod', nodes.values(), pods.values());
 * for (const event of [...view.nodesNeedingAction, ...view.pods, ...view.otherNodes]) {
 *   publisher.addRepublished(event, now);
 * }
 */
export function currentView(cluster: string, nodes: Iterable<Node>, pods: Iterable<Pod>): CurrentView {
  const nodesNeedingAction: ChangeEvent[] = [];
  const otherNodes: ChangeEvent[] = [];
  const acting = new Set<string>();
  for (const node of nodes) {
    const detail = nodeChanged(cluster, undefined, node);
    if (detail === undefined) continue;
    const event: ChangeEvent = { detailType: NodeChangedDetailType, detail };
    if (nodeNeedsAction(node)) {
      acting.add(node.name);
      nodesNeedingAction.push(event);
    } else {
      otherNodes.push(event);
    }
  }
  const podEvents: ChangeEvent[] = [];
  if (acting.size > 0) {
    for (const pod of pods) {
      if (!acting.has(pod.nodeName)) continue;
      const detail = podChanged(cluster, undefined, pod);
      if (detail !== undefined) podEvents.push({ detailType: PodChangedDetailType, detail });
    }
  }
  return { nodesNeedingAction, pods: podEvents, otherNodes };
}
