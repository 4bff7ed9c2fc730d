// Level-triggered pods (docs/architecture.md#level-triggered): what the functions decided from Pod
// Changed events is decided again from the API on a bounded period, for every node where pods matter, so
// a Pod Changed lost, dead-lettered, late or forged is repaired, never kept.
//
// The functions keep no pod set; they keep what they decided from pods: the taint eviction controller's
// scheduled deletions, and the pod worker's Ready=False marks (and, in legacy mode, deletions) on nodes
// that are not Ready. So the nodes whose pods matter are the NoExecute-tainted ones (taint mode) and the
// ones whose saved Ready condition is not True. Every PodSweepPeriod each of them is swept, staggered
// by a hash of its name so a zone that fails at once is not swept at once, at most MaxPodSweepsPerPass
// nodes a pass:
// - a tainted node: the taint eviction controller's node update on the API's node and pods
//   (handleNodeUpdate: a pod bound since, or whose tolerations changed, is scheduled or deleted; a pod
//   now tolerated forever is cancelled);
// - a node not Ready: the pod worker (processPod) for each of its pods created after the node's saved
//   Ready transition that the API shows Ready (taint mode) or not terminating (legacy): upstream's pod
//   worker sees a pod when it is bound, and marks it Ready=False (or, on an evicted node, deletes it) if
//   its node is not Ready then; a pod already there when the node stopped being Ready is the monitor's
//   (MarkPodsNotReady at the transition, only when the controller itself marked the node Unknown) or
//   the kubelet's, and is left as it is.
// Timers already scheduled need no sweep: each is decided again on the API's node and pod when it fires
// (firedPodEvictions.ts).
import type { ControllerConfig } from '../config.js';
import type { ControllerState } from '../domain/controllerState.js';
import { getNoExecuteTaints } from '../domain/taints.js';
import type { EpochMillis, Millis, Node } from '../domain/types.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { StateStores } from '../ports/stores.js';
import type { Sleep } from './podDeletion.js';
import { processPodChange } from './podProcessing.js';
import { handleNodeChanged } from './taintEviction.js';

/** How often the pods of a node that matters are decided again from the API. */
export const PodSweepPeriod: Millis = 4 * 60_000;

/** Nodes swept per monitor pass at most (two API requests each, plus a write per pod to repair). */
export const MaxPodSweepsPerPass = 25;

/**
 * Per node whose pods matter, when its pods were last decided from the API (a node first seen needing
 * it gets an instant staggered within the last PodSweepPeriod, so its first sweep comes within one).
 * Kept by the warm monitor; a cold start staggers them again.
 */
export type PodSweepMemo = Map<string, EpochMillis>;

/** Why a node's pods matter: it is NoExecute-tainted (taint mode), or its saved Ready is not True. */
export interface PodSweep {
  readonly node: Node;
  readonly tainted: boolean;
  /** The saved Ready transition time when the saved Ready is not True. */
  readonly notReadySince?: EpochMillis;
}

/** FNV-1a of the name, to stagger the first sweeps. */
function stagger(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return hash % PodSweepPeriod;
}

/**
 * The nodes to sweep this pass: those whose pods matter and whose last sweep is PodSweepPeriod old,
 * oldest first, at most MaxPodSweepsPerPass. Updates `memo`: nodes no longer mattering are forgotten,
 * nodes newly mattering get a staggered instant. Pure apart from `memo`.
 */
export function podSweepsDue(
  nodes: readonly Node[],
  state: Pick<ControllerState, 'nodeHealth'>,
  evictionMode: ControllerConfig['evictionMode'],
  memo: PodSweepMemo,
  now: EpochMillis,
): PodSweep[] {
  const matter = new Map<string, PodSweep>();
  for (const node of nodes) {
    const tainted = evictionMode === 'taint' && getNoExecuteTaints(node.taints).length > 0;
    const health = state.nodeHealth.get(node.name);
    const ready = health?.status.find((c) => c.type === 'Ready');
    const notReady = health !== undefined && ready !== undefined && ready.status !== 'True';
    if (tainted || notReady) {
      matter.set(node.name, {
        node,
        tainted,
        ...(notReady && { notReadySince: health.readyTransitionTimestamp }),
      });
    }
  }
  for (const name of memo.keys()) if (!matter.has(name)) memo.delete(name);
  for (const name of matter.keys()) if (!memo.has(name)) memo.set(name, now - stagger(name));
  return [...matter.values()]
    .filter((sweep) => now - (memo.get(sweep.node.name) ?? now) >= PodSweepPeriod)
    .sort((a, b) => (memo.get(a.node.name) ?? 0) - (memo.get(b.node.name) ?? 0))
    .slice(0, MaxPodSweepsPerPass);
}

export interface PodSweepDeps {
  readonly config: Pick<
    ControllerConfig,
    'cluster' | 'dryRun' | 'evictionMode' | 'podEvictionTimeout' | 'emulationVersion'
  >;
  readonly stores: Pick<
    StateStores,
    'nodes' | 'podEvictions' | 'decisions' | 'controllerState' | 'zoneQueues'
  >;
  readonly cluster: Pick<ClusterPort, 'execute' | 'listPodsOnNode' | 'deletePodForTaintEviction' | 'getNode'>;
  readonly observer: Observer;
  readonly clock: { now(): EpochMillis };
  readonly signal?: AbortSignal;
  readonly sleep?: Sleep;
}

/**
 * Sweeps each node: its pods are decided again from the API. A node whose sweep failed is swept again
 * the next pass. Errors are logged, never thrown: the pass is committed.
 */
export async function sweepPods(
  deps: PodSweepDeps,
  sweeps: readonly PodSweep[],
  memo: PodSweepMemo,
  now: EpochMillis,
): Promise<void> {
  const { config, observer, signal } = deps;
  const cluster = config.cluster;
  const opts = signal === undefined ? {} : { signal };
  const failed: string[] = [];
  let repaired = 0;
  for (const { node, tainted, notReadySince } of sweeps) {
    try {
      if (tainted) {
        const outcome = await handleNodeChanged(
          deps,
          { schemaVersion: 1, cluster, type: 'MODIFIED', node },
          opts,
        );
        if (outcome.kind === 'processed') {
          const { scheduled, cancelled, deleted } = outcome.summary;
          repaired += scheduled.length + cancelled.length + deleted.length;
        }
      }
      if (notReadySince !== undefined) repaired += await sweepNotReadyNode(deps, node, notReadySince, opts);
      memo.set(node.name, now);
    } catch (error) {
      failed.push(`${node.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (sweeps.length > 0) {
    observer.info('pods decided again from the API', {
      cluster,
      nodes: sweeps.length,
      repaired,
      ...(failed.length > 0 && { failed: failed.slice(0, 10) }),
    });
  }
}

/**
 * The pod worker for the pods of a node that is not Ready, as the API lists them: those created after
 * the node stopped being Ready (the ones upstream's pod worker would have seen bound to it then) that
 * are still Ready (taint mode) or not terminating (legacy: an evicted node's pods go). Returns how many
 * it processed.
 */
async function sweepNotReadyNode(
  deps: PodSweepDeps,
  node: Node,
  notReadySince: EpochMillis,
  opts: { readonly signal?: AbortSignal },
): Promise<number> {
  const listed = await deps.cluster.listPodsOnNode(node.name, opts);
  if (!listed.ok) throw new Error(`listing the pods of node ${JSON.stringify(node.name)}: ${listed.message}`);
  let processed = 0;
  for (const pod of listed.value) {
    if (pod.creationTimestamp === undefined || pod.creationTimestamp <= notReadySince) continue;
    const needs =
      deps.config.evictionMode === 'legacy' ? pod.deletionTimestamp === undefined : pod.ready === 'True';
    if (!needs) continue;
    await processPodChange(
      deps,
      { schemaVersion: 1, cluster: deps.config.cluster, type: 'ADDED', pod },
      opts,
    );
    processed++;
  }
  return processed;
}
