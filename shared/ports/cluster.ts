// The cluster port: everything the functions, the relay-less tools and the simulator's drivers do to a
// Kubernetes cluster. `execute` answers the domain's Effects (shared/domain/effects.ts); the other
// operations serve callers that are not controller passes (the taint eviction worker, the NoSchedule
// tainting handler, the CLI).
//
// Contract: API failures are values, never exceptions. Every result that is not ok carries a reason the
// domain branches on (NotFound, Conflict, Failed) and a message that names the node or pod. Only a broken
// invariant (a write that would touch a taint this controller does not own) throws.
import type { Effect, ReadResult, ResultOf, WriteResult } from '../domain/effects.js';
import type { KubeEvent } from '../domain/kubeEvents.js';
import type { TaintSwap } from '../domain/taints.js';
import type { EpochMillis, Node, Pod } from '../domain/types.js';

/** How addConditionAndDeletePod writes the DisruptionTarget condition (upstreamBehaviour). */
export type DisruptionTargetWrite = 'none' | 'condition' | 'withObservedGeneration';

export interface ClusterCallOptions {
  /** Aborts the call (and its retries): the handler's deadline signal (docs/contributing.md#deadlines). */
  readonly signal?: AbortSignal;
}

/**
 * What {@link ClusterPort.deletePodForTaintEviction} did. A pod that was already gone, already
 * terminating, or another pod under the name counts as done (`podWasGone`), so the caller neither
 * retries nor counts a deletion.
 */
export type TaintEvictionDeleteResult =
  { readonly ok: true; readonly podWasGone: boolean } | Extract<WriteResult, { readonly ok: false }>;

/** The leader-election record of a coordination Lease, as the API server holds it now. */
export interface LeaderLease {
  readonly holderIdentity: string;
  /** spec.acquireTime, to the millisecond; absent when never set. */
  readonly acquireTime?: EpochMillis;
  readonly leaseTransitions: number;
}

export interface ClusterPort {
  /**
   * Performs one Effect and answers it with the result type of its kind (effects.ts EffectResults).
   * Usable as the executor of driveAsync: `driveAsync(pass, (e) => cluster.execute(e, { signal }))`.
   *
   * @example
   * const result = await cluster.execute({ kind: 'getNode', node: 'node-a' });
   * if (result.ok) console.log(result.value.conditions);
   */
  execute<E extends Effect>(effect: E, opts?: ClusterCallOptions): Promise<ResultOf<E>>;

  /** A fresh (quorum) read of one node. */
  getNode(name: string, opts?: ClusterCallOptions): Promise<ReadResult<Node>>;

  /** Every node, paginated. For relay-less tools (CLI, tests); the functions get nodes from the relay. */
  listNodes(opts?: ClusterCallOptions): Promise<ReadResult<readonly Node[]>>;

  /** upstream getPodsAssignedToNode: every pod whose spec.nodeName is `name`. */
  listPodsOnNode(name: string, opts?: ClusterCallOptions): Promise<ReadResult<readonly Pod[]>>;

  /**
   * upstream AddOrUpdateLabelsOnNode with the result of reconcileNodeLabels (nodeLabels.ts): adds or
   * overwrites the given labels, leaving the others alone.
   */
  addNodeLabels(
    name: string,
    labels: Readonly<Record<string, string>>,
    opts?: ClusterCallOptions,
  ): Promise<WriteResult>;

  /**
   * upstream SwapNodeControllerTaint: the same as the `swapNodeTaints` effect. Taints in `toAdd`
   * without `timeAdded` are stamped with the adapter's clock. Throws TaintOwnershipError when a taint
   * is not owned by the node controller (taints.ts ownedByNodeController).
   */
  swapNodeTaints(name: string, swap: TaintSwap, opts?: ClusterCallOptions): Promise<WriteResult>;

  /**
   * upstream addConditionAndDeletePod (taint eviction controller): GET the pod, add the
   * DisruptionTarget condition through pods/status when it is not already there, then DELETE with the
   * default grace period. With `uid` (the pod the eviction was decided for), a pod of another UID counts
   * as gone and the DELETE carries a UID precondition: a pod re-created under the name is never touched.
   * One attempt; the caller retries (taintEviction.ts deletePodRetries). `disruptionTarget` follows the
   * emulated minor (upstreamVersion.ts): `none` before v1.26 (PodDisruptionConditions off), `condition`
   * v1.26–v1.33, `withObservedGeneration` (the pod's generation on the condition) from v1.34, the default.
   */
  deletePodForTaintEviction(
    namespace: string,
    name: string,
    opts?: ClusterCallOptions & { readonly uid?: string; readonly disruptionTarget?: DisruptionTargetWrite },
  ): Promise<TaintEvictionDeleteResult>;

  /**
   * The relay's leader-election Lease (a quorum read): which relay term the API server vouches for
   * (shared/digestClock.ts). NotFound when no relay runs leader election.
   */
  getLeaderLease(
    namespace: string,
    name: string,
    opts?: ClusterCallOptions,
  ): Promise<ReadResult<LeaderLease>>;

  /**
   * The resourceVersion of a node's Lease in `kube-node-lease`, read from the API (a quorum read): the
   * live GET of upstream's lease confirmation (PR #138698, v1.37) before a node is marked Unknown.
   * NotFound when the node has no Lease.
   */
  getNodeLeaseVersion(node: string, opts?: ClusterCallOptions): Promise<ReadResult<string>>;

  /**
   * The API server's version, its /version `gitVersion` (like "v1.31.4-eks-1a2b3c4"): the minor the
   * cluster's own controller runs. Any authenticated client may read it (system:public-info-viewer).
   */
  getServerVersion(opts?: ClusterCallOptions): Promise<ReadResult<string>>;

  /** Records a core/v1 Event, as client-go's EventRecorder would. Best effort: failures are values. */
  recordEvent(event: KubeEvent, opts?: ClusterCallOptions): Promise<WriteResult>;
}
