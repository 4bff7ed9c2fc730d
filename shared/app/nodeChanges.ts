// Ordering Node Changed events by resourceVersion, for every function that acts on one.
//
// Upstream's handlers read the node from the informer when they process it, so they always act on the
// newest copy. Here each event carries the node as it was: EventBridge delivers at least once, out of
// order, and retries a failed invocation. The Nodes table's copy (written by node-taints through
// NodeStore.putNode, conditional on a newer resourceVersion) is the ordering point: an event whose
// resourceVersion is older than the stored one is stale and must not act on the cluster.
import type { NodeChanged } from '../events.js';
import type { NodeStore, StoreCallOptions } from '../ports/stores.js';

/**
 * How an event relates to the stored copy of its node:
 * - `applied`: it was newer, and is now stored;
 * - `redelivered`: the stored copy has this very resourceVersion: a duplicate delivery, a retry after a
 *   failed invocation, or the same event already stored by another function (node-taints and the taint
 *   eviction controller both receive every Node Changed);
 * - `stale`: a newer resourceVersion (or the node's deletion) is stored.
 */
export type NodeChangeOrder = 'applied' | 'redelivered' | 'stale';

/**
 * Stores the event's node (or its deletion) unless a newer one is stored, and says which case it was.
 * Costs one conditional write, plus one strongly consistent read when the write did not apply.
 *
 * @example
 * if ((await recordNodeChange(stores.nodes, change, { signal })) === 'stale') return { kind: 'stale' };
 */
export async function recordNodeChange(
  nodes: NodeStore,
  change: NodeChanged,
  opts: StoreCallOptions = {},
): Promise<NodeChangeOrder> {
  const { cluster, node } = change;
  if (change.type === 'DELETED') {
    // A deletion applies at the stored resourceVersion itself, so a redelivered DELETED applies again.
    const deleted = await nodes.deleteNode(cluster, node.name, node.resourceVersion, opts);
    return deleted.applied ? 'applied' : 'stale';
  }
  const put = await nodes.putNode(cluster, node, opts);
  if (put.applied) return 'applied';
  // Not applied: the stored resourceVersion is newer or the same. Only the same one is this event again.
  const stored = await nodes.getNode(cluster, node.name, opts);
  return stored !== undefined && stored.resourceVersion === node.resourceVersion ? 'redelivered' : 'stale';
}
