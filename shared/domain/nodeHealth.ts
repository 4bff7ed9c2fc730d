// shared/domain/nodeHealth.ts: port of upstream tryUpdateNodeHealth
// (pkg/controller/nodelifecycle/node_lifecycle_controller.go), branch for branch.
//
// What differs from upstream, and why:
// - Pure. Upstream reads its nodeHealthMap and the lease lister, calls UpdateStatus, and stores the
//   map entry in a `defer`. Here the saved entry and the observed lease are arguments, and the result
//   states every outcome: the UpdateStatus to make (`statusUpdate`), the entry to store when there is
//   no update or it succeeded (`nodeHealth`), and the entry upstream's deferred write keeps when
//   UpdateStatus fails (`nodeHealthIfUpdateFails`). The caller chooses; upstream's retry (a fresh GET
//   and another call) is the caller's too.
// - Upstream shares pointers: several branches store `status: &node.Status`, so the stored status
//   sees the Unknown marking done later in the same pass. We reproduce that observable effect by
//   resolving such references to the node's final conditions at the end (see `NODE_STATUS`).
// - NodeStatus is reduced to its conditions (types.ts Node); the status written is the condition list.
// - `now` is an argument; upstream calls its injectable clock several times, which tests fix to one value.
import {
  getNodeCondition,
  NodeDiskPressure,
  NodeMemoryPressure,
  NodePIDPressure,
  NodeReady,
  type EpochMillis,
  type Lease,
  type Millis,
  type Node,
  type NodeCondition,
} from './types.js';
import type { ControllerConfig } from '../ports/config.js';

/** Reason and message upstream writes on a condition the kubelet never posted. */
export const NodeStatusNeverUpdatedReason = 'NodeStatusNeverUpdated';
export const NodeStatusNeverUpdatedMessage = 'Kubelet never posted node status.';
/** Reason and message upstream writes on a condition the kubelet stopped refreshing. */
export const NodeStatusUnknownReason = 'NodeStatusUnknown';
export const NodeStatusUnknownMessage = 'Kubelet stopped posting node status.';

/** upstream nodeHealthData */
export interface NodeHealthData {
  /** When this controller last saw the node alive (its own clock, never the kubelet's: no skew). */
  readonly probeTimestamp: EpochMillis;
  readonly readyTransitionTimestamp: EpochMillis;
  /** The node status conditions this controller last saw (upstream nodeHealth.status). */
  readonly status: readonly NodeCondition[];
  /** upstream nodeHealth.lease: the saved lease. */
  readonly lease?: Lease;
}

export interface NodeHealthUpdate {
  readonly gracePeriod: Millis;
  /** Ready as the node reported it, or the fake Unknown one built from creationTimestamp. */
  readonly observedReadyCondition: NodeCondition;
  /** Ready after this pass (after Unknown marking). */
  readonly currentReadyCondition: NodeCondition | undefined;
  /** The node's conditions after this pass (what upstream's node.Status holds). */
  readonly conditions: readonly NodeCondition[];
  /** Present exactly where upstream calls UpdateStatus: the full new condition list to write. */
  readonly statusUpdate?: readonly NodeCondition[];
  /** To store when there is no update, or after the update succeeded. */
  readonly nodeHealth: NodeHealthData;
  /** What upstream's deferred write stores when UpdateStatus errors. */
  readonly nodeHealthIfUpdateFails: NodeHealthData;
}

/** Stands for upstream's `&node.Status`: resolved to the node's conditions as they are at the end of the pass. */
const NODE_STATUS = 'node.Status';

/** upstream nodeHealth while the pass runs. */
interface NodeHealthDraft {
  readonly probeTimestamp: EpochMillis;
  readonly readyTransitionTimestamp: EpochMillis;
  readonly status: typeof NODE_STATUS | readonly NodeCondition[];
  readonly lease?: Lease | undefined;
}

/** The conditions marked Unknown when the node goes silent. NetworkUnavailable is left alone: it is managed at the control-plane level. */
const nodeConditionTypes = [NodeReady, NodeMemoryPressure, NodeDiskPressure, NodePIDPressure] as const;

export interface TryUpdateNodeHealthOptions {
  /**
   * Whether a changed Ready lastHeartbeatTime on `node` is a probe (upstream: yes, probe = now). The
   * functions pass false: their node copy lags the cluster by design (a status post that changes only
   * the heartbeat is not a Node Changed), so a heartbeat they see change may be minutes old (on a re-read
   * after a 409, on a Node Changed for a label). The relay observed every heartbeat change on its clock
   * and the Heartbeat Digest carries it as the `lease` probe, so nothing is lost (docs/upstream-deviations.md).
   */
  readonly heartbeatIsProbe?: boolean;
}

export function tryUpdateNodeHealth(
  node: Node,
  lease: Lease | undefined,
  saved: NodeHealthData | undefined,
  now: EpochMillis,
  config: Pick<ControllerConfig, 'nodeMonitorGracePeriod' | 'nodeStartupGracePeriod'>,
  options: TryUpdateNodeHealthOptions = {},
): NodeHealthUpdate {
  const heartbeatIsProbe = options.heartbeatIsProbe ?? true;
  // Upstream works on a deep copy of the map entry; ours is immutable, and every change below builds a
  // new draft, so the saved entry itself is where it starts.
  let nodeHealth: NodeHealthDraft | undefined = saved;

  const currentReadyCondition = getNodeCondition(node.conditions, NodeReady);
  let observedReadyCondition: NodeCondition;
  let gracePeriod: Millis;
  if (currentReadyCondition === undefined) {
    // The kubelet (or this controller) never posted a Ready condition. A fake one dated at creation
    // avoids a corner case, and the startup grace applies.
    observedReadyCondition = {
      type: NodeReady,
      status: 'Unknown',
      lastHeartbeatTime: node.creationTimestamp,
      lastTransitionTime: node.creationTimestamp,
    };
    gracePeriod = config.nodeStartupGracePeriod;
    // Upstream overwrites the saved status before reading the saved Ready condition below, which
    // makes the "ReadyCondition was removed" branch unreachable (docs/upstream.md#quirk-6).
    nodeHealth =
      nodeHealth !== undefined
        ? { ...nodeHealth, status: NODE_STATUS }
        : {
            status: NODE_STATUS,
            probeTimestamp: node.creationTimestamp,
            readyTransitionTimestamp: node.creationTimestamp,
            lease: undefined,
          };
  } else {
    observedReadyCondition = currentReadyCondition;
    gracePeriod = config.nodeMonitorGracePeriod;
  }

  // The cases, as upstream lists them:
  // - neither saved nor current status has a Ready condition: leave everything as it is;
  // - saved has none, current has one: the controller restarted with the node already in etcd;
  // - saved has one, current has none: an error, filled in anyway;
  // - both have one with the same heartbeat: nothing happened, the node may be unresponsive, leave it;
  // - both have one with different heartbeats: probe = now, and the ready transition = now only if
  //   the Ready condition's transition time changed since we last saw it.
  const savedCondition =
    nodeHealth === undefined
      ? undefined
      : getNodeCondition(nodeHealth.status === NODE_STATUS ? node.conditions : nodeHealth.status, NodeReady);
  const savedLease = nodeHealth?.lease;
  if (nodeHealth === undefined) {
    // Missing timestamp for the node: assume now.
    nodeHealth = replaced(now, now);
  } else if (savedCondition === undefined && currentReadyCondition !== undefined) {
    nodeHealth = replaced(now, now);
  } else if (savedCondition !== undefined && currentReadyCondition === undefined) {
    // "ReadyCondition was removed from Status of Node": unreachable, kept for branch fidelity.
    nodeHealth = replaced(now, now);
  } else if (
    savedCondition !== undefined &&
    currentReadyCondition !== undefined &&
    !sameTime(savedCondition.lastHeartbeatTime, currentReadyCondition.lastHeartbeatTime)
  ) {
    const transitionTime = sameTime(
      savedCondition.lastTransitionTime,
      currentReadyCondition.lastTransitionTime,
    )
      ? nodeHealth.readyTransitionTimestamp
      : now;
    // Without heartbeatIsProbe the saved status still follows the node (what upstream stores), and the
    // probe stays where the digest put it.
    nodeHealth = replaced(transitionTime, heartbeatIsProbe ? now : nodeHealth.probeTimestamp);
  } else if (
    !heartbeatIsProbe &&
    savedCondition !== undefined &&
    currentReadyCondition !== undefined &&
    !semanticallyEqual(currentReadyCondition, savedCondition)
  ) {
    // Same heartbeat, another Ready condition: a writer that keeps the heartbeat changed it (this
    // controller, in an attempt whose commit failed after its status write). Upstream's saved status is
    // its informer's object, always current; without this the saved Ready stays what it was, for good
    // (pod-processing decides on it). The probe stays where the digest put it.
    const transitionTime = sameTime(
      savedCondition.lastTransitionTime,
      currentReadyCondition.lastTransitionTime,
    )
      ? nodeHealth.readyTransitionTimestamp
      : now;
    nodeHealth = { ...replaced(transitionTime, nodeHealth.probeTimestamp), lease: nodeHealth.lease };
  }

  // A renewed lease always advances the probe. So a kubelet that never posts status but keeps
  // renewing its lease is taken as healthy. The comparison is against the lease saved before the
  // branches above, not the one they may have dropped.
  if (lease !== undefined && (savedLease === undefined || savedLease.renewTime < lease.renewTime)) {
    // Deviation: upstream sets the probe to now() when it notices the renewal. Our "lease" is the
    // relay-clock instant the probe was observed (never after now), so the probe is that instant: the
    // same clock, no skew, and it can be rebuilt from any full Heartbeat Digest, which is what lets
    // the functions skip writing node health on every renewal (docs/architecture.md#one-clock-per-comparison,
    // #budgets; see docs/upstream-deviations.md). Never moved backwards (a status heartbeat may have set it
    // to now).
    nodeHealth = {
      ...nodeHealth,
      lease,
      probeTimestamp: Math.max(nodeHealth.probeTimestamp, lease.renewTime),
    };
  }

  let conditions = node.conditions;
  let currentAfter = currentReadyCondition;
  let statusUpdate: readonly NodeCondition[] | undefined;
  let nodeHealthAfterUpdate: NodeHealthDraft | undefined;
  if (now > nodeHealth.probeTimestamp + gracePeriod) {
    // Neither the Ready condition nor the lease was refreshed within the grace period: mark Unknown,
    // whatever the current value.
    conditions = markUnknown(node, now);
    currentAfter = getNodeCondition(conditions, NodeReady);
    // Only the Ready condition decides whether to write (docs/upstream.md#quirk-8).
    if (!semanticallyEqual(currentAfter, observedReadyCondition)) {
      statusUpdate = conditions;
      nodeHealthAfterUpdate = {
        status: NODE_STATUS,
        probeTimestamp: nodeHealth.probeTimestamp,
        readyTransitionTimestamp: now,
        lease,
      };
    }
  }

  const nodeHealthIfUpdateFails = unchangedOr(saved, resolve(nodeHealth, conditions));
  const result = {
    gracePeriod,
    observedReadyCondition,
    currentReadyCondition: currentAfter,
    conditions,
    nodeHealth:
      nodeHealthAfterUpdate === undefined
        ? nodeHealthIfUpdateFails
        : resolve(nodeHealthAfterUpdate, conditions),
    nodeHealthIfUpdateFails,
  };
  // A literal with a conditional spread is built key by key at run time; this one runs for every node
  // on every pass, and only a node being marked Unknown has a status update.
  return statusUpdate === undefined ? result : { ...result, statusUpdate };
}

// The two helpers below are module functions rather than closures of tryUpdateNodeHealth: it runs for
// every node on every pass, and creating them on each call was a fifth of its cost.

/**
 * A new entry in place of the saved one. Upstream quirk (docs/upstream.md#quirk-7): the replacing
 * branches build it without the saved lease, so on the next pass an unchanged lease looks new and
 * advances the probe once more.
 */
function replaced(readyTransitionTimestamp: EpochMillis, probeTimestamp: EpochMillis): NodeHealthDraft {
  return { status: NODE_STATUS, probeTimestamp, readyTransitionTimestamp, lease: undefined };
}

/**
 * `saved` itself when `next` holds the same values: callers tell the nodes a pass changed by identity
 * (the monitor's commit compares only those), and most nodes on most passes change nothing.
 */
function unchangedOr(saved: NodeHealthData | undefined, next: NodeHealthData): NodeHealthData {
  return saved !== undefined &&
    saved.probeTimestamp === next.probeTimestamp &&
    saved.readyTransitionTimestamp === next.readyTransitionTimestamp &&
    saved.status === next.status &&
    saved.lease?.renewTime === next.lease?.renewTime &&
    (saved.lease === undefined) === (next.lease === undefined)
    ? saved
    : next;
}

/** The entry to store, `node.Status` resolved to the node's conditions at the end of the pass. */
function resolve(draft: NodeHealthDraft, conditions: readonly NodeCondition[]): NodeHealthData {
  const { probeTimestamp, readyTransitionTimestamp, lease } = draft;
  const status = draft.status === NODE_STATUS ? conditions : draft.status;
  return lease === undefined
    ? { probeTimestamp, readyTransitionTimestamp, status }
    : { probeTimestamp, readyTransitionTimestamp, status, lease };
}

/**
 * Marks Ready, MemoryPressure, DiskPressure and PIDPressure Unknown. A missing condition is appended
 * with the creation time as heartbeat; a present one keeps its heartbeat; one already Unknown is left
 * untouched (reason and message too). Like upstream's GetNodeCondition, only the first condition of a
 * type is considered.
 */
function markUnknown(node: Node, now: EpochMillis): readonly NodeCondition[] {
  const conditions = [...node.conditions];
  for (const type of nodeConditionTypes) {
    const index = conditions.findIndex((c) => c.type === type);
    const condition = index < 0 ? undefined : conditions[index];
    if (condition === undefined) {
      conditions.push({
        type,
        status: 'Unknown',
        reason: NodeStatusNeverUpdatedReason,
        message: NodeStatusNeverUpdatedMessage,
        lastHeartbeatTime: node.creationTimestamp,
        lastTransitionTime: now,
      });
    } else if (condition.status !== 'Unknown') {
      conditions[index] = {
        ...condition,
        status: 'Unknown',
        reason: NodeStatusUnknownReason,
        message: NodeStatusUnknownMessage,
        lastTransitionTime: now,
      };
    }
  }
  return conditions;
}

/** metav1.Time equality on epoch millis; an absent time is Go's zero time, equal only to another absent one. */
function sameTime(a: EpochMillis | undefined, b: EpochMillis | undefined): boolean {
  return a === b;
}

/** apiequality.Semantic.DeepEqual of a *NodeCondition with a NodeCondition: nil never equals; absent strings are Go's "". */
function semanticallyEqual(a: NodeCondition | undefined, b: NodeCondition): boolean {
  return (
    a !== undefined &&
    a.type === b.type &&
    a.status === b.status &&
    (a.reason ?? '') === (b.reason ?? '') &&
    (a.message ?? '') === (b.message ?? '') &&
    sameTime(a.lastHeartbeatTime, b.lastHeartbeatTime) &&
    sameTime(a.lastTransitionTime, b.lastTransitionTime)
  );
}
