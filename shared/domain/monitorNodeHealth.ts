// upstream monitorNodeHealth (pkg/controller/nodelifecycle/node_lifecycle_controller.go), one pass.
//
// Upstream runs it every nodeMonitorPeriod against its informer caches; here one Heartbeat Digest
// drives one pass, `now` is the digest's observedAt (docs/architecture.md#one-clock-per-comparison), `nodes`
// is the node cache (the Nodes table) and `leases` the probe times the relay observed. The pass yields its
// API calls as effects (effects.ts) and returns the next controller state. Differences from upstream:
// - nodes are processed one after another in list order (upstream: 8 parallel workers); no decision
//   depends on the order, and a fixed order keeps the effects deterministic;
// - knownNodes and nodeHealth are durable, so a restart neither re-registers nodes nor strips their
//   NoExecute taints (docs/upstream.md#quirk-14), and a deleted node's health is forgotten
//   (docs/upstream.md#quirk-24).
import type { ControllerConfig } from '../ports/config.js';
import {
  addPodEvictorForNewZone,
  type ControllerState,
  freeze,
  type WorkingState,
  workingCopy,
} from './controllerState.js';
import { type Effect, perform, type Pass } from './effects.js';
import { upstreamBehaviour } from './upstreamVersion.js';
import { registeredNodeEvent, removingNodeEvent, nodeNotReadyEvent } from './kubeEvents.js';
import {
  legacyMarkAllNodesReachable,
  legacyRegisterNode,
  processNoTaintBaseEvictionPass,
} from './legacyEvictionPass.js';
import {
  type NodeHealthData,
  type NodeHealthUpdate,
  NodeStatusNeverUpdatedReason,
  NodeStatusUnknownReason,
  tryUpdateNodeHealth,
} from './nodeHealth.js';
import { markPodsNotReady, markPodsNotReadyTrigger } from './podStatus.js';
import { remove, swapLimiter } from './rateLimitedTimedQueue.js';
import {
  markNodeAsReachable,
  processTaintBaseEviction,
  processTaintBaseEvictionWithoutWrites,
} from './taintBasedEviction.js';
import { TaintNodeNotReady, TaintNodeUnreachable } from './taints.js';
import {
  getNodeCondition,
  NodeReady,
  type EpochMillis,
  type Lease,
  type Node,
  type NodeCondition,
} from './types.js';
import {
  type DisruptionQPSFuncs,
  type DisruptionResult,
  getZoneKey,
  handleDisruption,
  isNodeExcludedFromDisruptionChecks,
} from './zones.js';

/** upstream NodeHealthUpdateRetry (older name NodeStatusUpdateRetry): attempts per node per pass. */
export const NodeHealthUpdateRetry = 5;

export type MonitorConfig = Pick<
  ControllerConfig,
  | 'emulationVersion'
  | 'nodeMonitorGracePeriod'
  | 'nodeStartupGracePeriod'
  | 'nodeEvictionRate'
  | 'secondaryNodeEvictionRate'
  | 'largeClusterSizeThreshold'
  | 'unhealthyZoneThreshold'
  | 'podEvictionTimeout'
  | 'evictionMode'
>;

export interface MonitorInput {
  /** The node cache (upstream nodeLister.List): each node once. */
  readonly nodes: readonly Node[];
  /** Node leases by node name (upstream leaseLister on kube-node-lease). */
  readonly leases: ReadonlyMap<string, Lease>;
}

export interface MonitorOptions {
  /** Upstream tests override enterPartialDisruptionFunc / enterFullDisruptionFunc. */
  readonly disruptionQPSFuncs?: DisruptionQPSFuncs;
  /**
   * tryUpdateNodeHealth's heartbeatIsProbe (default true, upstream). The functions pass false: the
   * Heartbeat Digest is their only probe source, because their node copy lags the cluster.
   */
  readonly heartbeatIsProbe?: boolean;
  /**
   * Shadow mode (dryRun), not upstream: this controller never writes, so a node-controller marking on a
   * node (a condition set Unknown with NodeStatusUnknown that its saved status does not have) is another
   * controller's — the cluster's own. The pass decides as if it were not there (shadowView), so the
   * shadow records the write and the MarkPodsNotReady it would have made, whichever controller's pass
   * came first; that MarkPodsNotReady counts pods already NotReady (the other's, most likely).
   */
  readonly shadow?: boolean;
  /**
   * Not upstream: a pass registers at most this many nodes new to it (in list order; the functions
   * list by name); the others wait for a later pass (admitNewNodes). A waiting node is counted in its zone as
   * its first look finds it (tryUpdateNodeHealth with nothing saved: what upstream's first pass counts),
   * so zone states stay the whole cluster's; it gets no health entry, no decision and no write until it
   * is registered. Undefined: every new node at once, as upstream. docs/monitor.md#registration.
   */
  readonly registrationLimit?: number;
  /**
   * Not upstream: how much marking a pass takes on (docs/monitor.md#marking). A node whose first look
   * says "mark it" (its status write, then its pods and NoExecute taint) is started only while fewer
   * than `nodes` markings were started and fewer than `requests` API requests were made by this pass
   * (effectRequests: registrations, status writes, reads, Events, pod writes); the others wait for a
   * later pass. A waiting node is counted in its zone with the Ready condition the write would leave,
   * so zone states stay the whole cluster's; it gets no decision, no write and no health update until
   * its turn, so the next pass looks at it again exactly as this one did. Upstream's pass instead
   * takes as long as its client's rate limit (--kube-api-qps) makes it; a pass here must end within
   * its function's timeout. Undefined: no limit, as upstream.
   */
  readonly markingLimit?: { readonly nodes: number; readonly requests: number };
}

/**
 * The API requests an effect stands for, as the pass counts them against MonitorOptions.markingLimit:
 * one per call, and one per pod for MarkPodsNotReady (one status write each, as upstream). The adapter
 * may send a few more (a taint patch reads the node first); its throttle paces those all the same.
 *
 * @example
 * effectRequests({ kind: 'markPodsNotReady', node: 'a', pods: [p1, p2], why: '' }); // 2
 */
export function effectRequests(effect: Effect): number {
  return effect.kind === 'markPodsNotReady' ? effect.pods.length : 1;
}

/** Runs `inner`, adding each effect's requests to `counter` before it is performed. */
function* countingRequests<R>(inner: Pass<R>, counter: { requests: number }): Pass<R> {
  let step = inner.next();
  while (step.done !== true) {
    counter.requests += effectRequests(step.value);
    step = inner.next(yield step.value);
  }
  return step.value;
}

/**
 * The node as this controller would have it had no other controller written its conditions: every
 * condition another writer marked Unknown (NodeStatusUnknown or NodeStatusNeverUpdated, reasons only a
 * node controller writes) while the saved status still has it otherwise, put back as saved. In shadow
 * mode every such marking is another's: this controller never writes (its heartbeat is not compared:
 * the relay does not publish heartbeat-only posts, so the other controller may have seen a newer one).
 * Its not-ready/unreachable NoExecute taints go with such a marking. The node itself when nothing is
 * another's.
 *
 * @example
 * shadowView(nodeMarkedByTheCluster, savedTrue).conditions; // the Ready=True this controller last saw
 */
export function shadowView(node: Node, saved: NodeHealthData | undefined): Node {
  if (saved === undefined) return node;
  let conditions: NodeCondition[] | undefined;
  node.conditions.forEach((condition, i) => {
    if (condition.reason !== NodeStatusUnknownReason && condition.reason !== NodeStatusNeverUpdatedReason)
      return;
    const mine = getNodeCondition(saved.status, condition.type);
    if (mine === undefined || mine.status === condition.status) return;
    conditions ??= [...node.conditions];
    conditions[i] = mine;
  });
  if (conditions === undefined) return node;
  // The NoExecute taint that marking led to is that controller's too: without it this one would
  // otherwise "remove" it from a node it still takes for Ready (markNodeAsReachable).
  const taints = node.taints.filter(
    (t) => !(t.effect === 'NoExecute' && (t.key === TaintNodeNotReady || t.key === TaintNodeUnreachable)),
  );
  return { ...node, conditions, taints };
}

export interface MonitorPassResult {
  readonly state: ControllerState;
  readonly disruption: DisruptionResult;
  /** Nodes newly registered (RegisteredNode) and forgotten (RemovingNode) in this pass. */
  readonly registered: readonly string[];
  /** New nodes left for a later pass by MonitorOptions.registrationLimit (0 without one). */
  readonly waiting: number;
  /** Nodes due to be marked that MonitorOptions.markingLimit left for a later pass (0 without one). */
  readonly waitingToMark: number;
  /** API requests the pass's effects stand for (effectRequests). */
  readonly apiRequests: number;
  readonly removed: readonly string[];
  /** Nodes whose health could not be updated ("Skipping - no pods will be evicted"). */
  readonly healthUpdateFailures: readonly string[];
  /** Per node, the Ready condition before and after this pass (for metrics, Decisions, scenarios). */
  readonly readiness: ReadonlyMap<string, { observed: NodeCondition; current: NodeCondition | undefined }>;
  /** Which of the two processTaintBaseEviction decided on: `current` from v1.34 (PR #120816). */
  readonly taintDecidedOn: 'observed' | 'current';
  /**
   * Nodes as the API returned them in this pass (a re-read after a failed status write, or the written
   * node), newer than the node cache's copy: the caller keeps them, so its next pass does not decide on
   * (and write from) a copy the cluster has moved past.
   */
  readonly nodeCopies: ReadonlyMap<string, Node>;
}

/**
 * upstream classifyNodes: nodes new to the controller, nodes gone from the cache, and known nodes
 * whose zone the controller does not track (a node moved zones, or its zone was dropped).
 */
export function classifyNodes(
  nodes: readonly Node[],
  knownNodes: ReadonlyMap<string, string>,
  zoneStates: ReadonlyMap<string, unknown>,
): { added: Node[]; deleted: string[]; newZoneRepresentatives: Node[] } {
  const added: Node[] = [];
  const newZoneRepresentatives: Node[] = [];
  for (const node of nodes) {
    if (!knownNodes.has(node.name)) added.push(node);
    else if (!zoneStates.has(getZoneKey(node.labels))) newZoneRepresentatives.push(node);
  }
  // Upstream's shortcut: when the known nodes and the new ones add up to the list, none is gone (a node
  // list names each node once). Most passes take it, and skip a set of every name.
  if (knownNodes.size + added.length === nodes.length) return { added, deleted: [], newZoneRepresentatives };
  const listed = new Set(nodes.map((n) => n.name));
  const deleted = [...knownNodes.keys()].filter((name) => !listed.has(name));
  return { added, deleted, newZoneRepresentatives };
}

/**
 * Which of the nodes new to a pass it registers (the first `limit`, in list order) and which wait for a
 * later pass (MonitorOptions.registrationLimit). Each pass admits the next ones, so n new nodes are all
 * registered within ceil(n / limit) passes.
 *
 * @example
 * admitNewNodes([a, b, c], 2); // { admitted: [a, b], waiting: Set { 'c' } }
 */
export function admitNewNodes(
  added: readonly Node[],
  limit: number | undefined,
): { admitted: readonly Node[]; waiting: ReadonlySet<string> } {
  if (limit === undefined || added.length <= limit) return { admitted: added, waiting: new Set() };
  const admitted = added.slice(0, Math.max(0, limit));
  return { admitted, waiting: new Set(added.slice(admitted.length).map((n) => n.name)) };
}

/**
 * The nodes this pass would mark Unknown (tryUpdateNodeHealth finds their probe older than the grace
 * period and writes the status): the ones upstream confirms against the API's Lease first (PR #138698,
 * v1.37). Pure, and as cheap as the pass's own first attempt per node, which it repeats.
 *
 * @example
 * nodesToMarkUnknown(state, { nodes, leases }, now, config); // ['a-1'] when a-1 went silent a grace ago
 */
export function nodesToMarkUnknown(
  state: ControllerState,
  input: MonitorInput,
  now: EpochMillis,
  config: MonitorConfig,
  options: MonitorOptions = {},
): string[] {
  const healthOptions = { heartbeatIsProbe: options.heartbeatIsProbe ?? true };
  // A node the pass leaves waiting for registration gets no write in it.
  const { waiting } = admitNewNodes(
    classifyNodes(input.nodes, state.knownNodes, state.zoneStates).added,
    options.registrationLimit,
  );
  const due = input.nodes
    .filter(
      (node) =>
        !waiting.has(node.name) &&
        tryUpdateNodeHealth(
          options.shadow === true ? shadowView(node, state.nodeHealth.get(node.name)) : node,
          input.leases.get(node.name),
          state.nodeHealth.get(node.name),
          now,
          config,
          healthOptions,
        ).statusUpdate !== undefined,
    )
    .map((node) => node.name);
  // The pass starts at most this many markings, the first in list order (MonitorOptions.markingLimit).
  return options.markingLimit === undefined ? due : due.slice(0, Math.max(0, options.markingLimit.nodes));
}

export function* monitorNodeHealth(
  state: ControllerState,
  input: MonitorInput,
  now: EpochMillis,
  config: MonitorConfig,
  options: MonitorOptions = {},
): Pass<MonitorPassResult> {
  const counter = { requests: 0 };
  const result = yield* countingRequests(monitorPass(state, input, now, config, options, counter), counter);
  return { ...result, apiRequests: counter.requests };
}

function* monitorPass(
  state: ControllerState,
  input: MonitorInput,
  now: EpochMillis,
  config: MonitorConfig,
  options: MonitorOptions,
  counter: { readonly requests: number },
): Pass<Omit<MonitorPassResult, 'apiRequests'>> {
  const s = workingCopy(state);
  const { added, deleted, newZoneRepresentatives } = classifyNodes(
    input.nodes,
    s.knownNodes.current,
    s.zoneStates,
  );

  for (const node of newZoneRepresentatives) addPodEvictorForNewZone(s, node, now, config);

  const { admitted, waiting } = admitNewNodes(added, options.registrationLimit);
  for (const node of added) {
    if (waiting.has(node.name)) {
      // Its zone exists from the first pass that sees it, as upstream's first pass makes it.
      addPodEvictorForNewZone(s, node, now, config);
      continue;
    }
    yield* perform({ kind: 'recordEvent', event: registeredNodeEvent(node) });
    s.knownNodes.set(node.name, node.uid);
    addPodEvictorForNewZone(s, node, now, config);
    if (config.evictionMode === 'taint') {
      yield* markNodeAsReachable(s, node, 'monitorNodeHealth: node registered');
    } else {
      legacyRegisterNode(s, node);
    }
  }

  for (const name of deleted) {
    yield* perform({
      kind: 'recordEvent',
      event: removingNodeEvent({ name, uid: s.knownNodes.get(name) ?? '' }),
    });
    forgetNode(s, name);
  }

  const zoneToNodeConditions = new Map<string, (NodeCondition | undefined)[]>();
  const healthUpdateFailures: string[] = [];
  const readiness = new Map<string, { observed: NodeCondition; current: NodeCondition | undefined }>();
  const nodeCopies = new Map<string, Node>();
  const healthOptions = { heartbeatIsProbe: options.heartbeatIsProbe ?? true };
  const taintOnCurrent = upstreamBehaviour(config.emulationVersion).taintOnCurrentReadyCondition;
  const { markingLimit } = options;
  let markingsStarted = 0;
  let waitingToMark = 0;

  for (const copy of input.nodes) {
    if (waiting.size > 0 && waiting.has(copy.name)) {
      // Counted as upstream's first pass counts it: the Ready its first look leaves (nothing saved yet).
      if (!isNodeExcludedFromDisruptionChecks(copy)) {
        const first = tryUpdateNodeHealth(
          copy,
          input.leases.get(copy.name),
          undefined,
          now,
          config,
          healthOptions,
        );
        pushZoneCondition(zoneToNodeConditions, getZoneKey(copy.labels), first.currentReadyCondition);
      }
      continue;
    }
    const savedBefore = s.nodeHealth.get(copy.name);
    const listed = options.shadow === true ? shadowView(copy, savedBefore) : copy;
    const lease = input.leases.get(listed.name);
    // Most nodes on most passes need no status write: their first attempt settles here, without a
    // generator (what a pass allocates per node adds up over 5,000 nodes every 5 s). The generator
    // starts over from that same attempt (tryUpdateNodeHealth is pure).
    const first = tryUpdateNodeHealth(listed, lease, savedBefore, now, config, healthOptions);
    if (first.statusUpdate !== undefined && markingLimit !== undefined) {
      if (markingsStarted >= markingLimit.nodes || counter.requests >= markingLimit.requests) {
        // Its turn comes in a later pass; its zone counts it as the write would leave it.
        waitingToMark++;
        if (!isNodeExcludedFromDisruptionChecks(listed))
          pushZoneCondition(zoneToNodeConditions, getZoneKey(listed.labels), first.currentReadyCondition);
        continue;
      }
      markingsStarted++;
    }
    const updated =
      first.statusUpdate === undefined
        ? settle(s, listed, first)
        : yield* updateNodeHealthWithRetry(s, listed, lease, now, config, healthOptions, nodeCopies);
    if (updated === undefined) {
      // Upstream: "Update health of Node from Controller error, Skipping - no pods will be evicted."
      healthUpdateFailures.push(listed.name);
      continue;
    }
    const { node, update } = updated;
    const observed = healthOptions.heartbeatIsProbe
      ? update.observedReadyCondition
      : (markingToRedo(savedBefore, update.observedReadyCondition) ?? update.observedReadyCondition);
    const current = update.currentReadyCondition;
    readiness.set(node.name, { observed, current });

    if (!isNodeExcludedFromDisruptionChecks(node)) {
      pushZoneCondition(zoneToNodeConditions, getZoneKey(node.labels), current);
    }

    if (current !== undefined) {
      if (config.evictionMode === 'taint') {
        // From v1.34 (PR #120816) on the condition this pass leaves, so the NoExecute taint is queued in
        // the pass that marks the node Unknown; before, on the one it found: one monitor period later
        // (docs/upstream.md#quirk-1).
        const ready = taintOnCurrent ? current : observed;
        if (!processTaintBaseEvictionWithoutWrites(s, node, ready, now))
          yield* processTaintBaseEviction(s, node, ready, now);
      } else {
        yield* processNoTaintBaseEvictionPass(s, node, observed, now, config);
      }

      const needsRetry = s.nodesToRetry.has(node.name);
      const trigger = markPodsNotReadyTrigger(observed, current, needsRetry);
      if (trigger.markPodsNotReady) {
        // Deviation: upstream lists the node's pods from its informer cache on every pass, before
        // processTaintBaseEviction. The functions have no pod cache, so pods are listed only when a
        // decision needs them; a failed list therefore no longer skips processTaintBaseEviction (see
        // docs/upstream-deviations.md).
        const pods = yield* perform({ kind: 'listPodsOnNode', node: node.name });
        if (!pods.ok) {
          s.nodesToRetry.add(node.name);
          continue;
        }
        // The controller itself saw the node go from Ready to not Ready in this pass.
        if (trigger.recordNodeNotReady)
          yield* perform({ kind: 'recordEvent', event: nodeNotReadyEvent(node) });
        // In shadow mode pods already NotReady count: the other controller may have marked them between
        // this pass's read of the node and its list of the pods.
        const targets = markPodsNotReady(pods.value, node.name, options.shadow === true);
        if (targets.length > 0) {
          const result = yield* perform({
            kind: 'markPodsNotReady',
            node: node.name,
            pods: targets,
            why: trigger.recordNodeNotReady ? 'node became not ready' : 'MarkPodsNotReady retry',
          });
          if (!result.ok) {
            s.nodesToRetry.add(node.name);
            continue;
          }
        }
      }
    }
    s.nodesToRetry.delete(node.name);
  }

  const disruption = yield* applyDisruption(s, input.nodes, zoneToNodeConditions, now, config, options);

  return {
    state: freeze(s),
    disruption,
    registered: admitted.map((n) => n.name),
    waiting: added.length - admitted.length,
    waitingToMark,
    removed: deleted,
    healthUpdateFailures,
    readiness,
    taintDecidedOn: taintOnCurrent ? 'current' : 'observed',
    nodeCopies,
  };
}

function pushZoneCondition(
  zoneToNodeConditions: Map<string, (NodeCondition | undefined)[]>,
  zone: string,
  condition: NodeCondition | undefined,
): void {
  const conditions = zoneToNodeConditions.get(zone);
  if (conditions === undefined) zoneToNodeConditions.set(zone, [condition]);
  else conditions.push(condition);
}

/**
 * upstream: PollImmediate(retrySleepTime, retrySleepTime*NodeHealthUpdateRetry, tryUpdateNodeHealth
 * then, on error, a fresh GET of the node). Returns undefined when every attempt failed. Every node the
 * API returns (re-read or written) goes into `nodeCopies`.
 */
function* updateNodeHealthWithRetry(
  s: WorkingState,
  listed: Node,
  lease: Lease | undefined,
  now: EpochMillis,
  config: MonitorConfig,
  options: { readonly heartbeatIsProbe: boolean },
  nodeCopies: Map<string, Node>,
): Pass<{ node: Node; update: NodeHealthUpdate } | undefined> {
  let node = listed;
  for (let attempt = 0; attempt < NodeHealthUpdateRetry; attempt++) {
    const update = tryUpdateNodeHealth(node, lease, s.nodeHealth.get(node.name), now, config, options);
    if (update.statusUpdate === undefined) return settle(s, node, update);
    const written = yield* perform({
      kind: 'updateNodeStatus',
      node: node.name,
      ...(node.resourceVersion === undefined ? {} : { resourceVersion: node.resourceVersion }),
      conditions: update.statusUpdate,
      why: statusUpdateReason(update),
    });
    if (written.ok) {
      s.nodeHealth.set(node.name, update.nodeHealth);
      if (written.node !== undefined) nodeCopies.set(node.name, written.node);
      return { node: { ...node, conditions: update.conditions }, update };
    }
    s.nodeHealth.set(node.name, update.nodeHealthIfUpdateFails);
    // Upstream re-reads and retries (NodeHealthUpdateRetry). With heartbeatIsProbe false, a heartbeat
    // the re-read shows is not taken as a new probe: the digest already carried it, and taking it would
    // restart the grace period of a node whose copy was older than its last 5-minute status post.
    const fresh = yield* perform({ kind: 'getNode', node: node.name });
    if (!fresh.ok) return undefined;
    node = fresh.value;
    nodeCopies.set(node.name, node);
  }
  return undefined;
}

/** An attempt without a status write: its health entry is kept, with the node as the attempt left it. */
function settle(
  s: WorkingState,
  node: Node,
  update: NodeHealthUpdate,
): { node: Node; update: NodeHealthUpdate } {
  s.nodeHealth.set(node.name, update.nodeHealth);
  return {
    node: update.conditions === node.conditions ? node : { ...node, conditions: update.conditions },
    update,
  };
}

/**
 * The functions' passes are retried whole when their commit fails, but their cluster writes may have
 * landed: the retry then reads the node already marked Unknown by the attempt that failed, and upstream's
 * "observed True → current not True" transition, which triggers NodeNotReady and MarkPodsNotReady,
 * would never be seen again. When the node's Ready is this controller's own marking (its reason, the
 * heartbeat the saved status has) but the committed status still says True, the pass that wrote it did
 * not commit: the retry redoes it from the Ready=True it started from. Returns that condition, or
 * undefined when there is nothing to redo.
 */
function markingToRedo(
  saved: NodeHealthData | undefined,
  observed: NodeCondition,
): NodeCondition | undefined {
  const savedReady = saved === undefined ? undefined : getNodeCondition(saved.status, NodeReady);
  if (savedReady?.status !== 'True' || observed.status === 'True') return undefined;
  const ours =
    observed.reason === NodeStatusUnknownReason || observed.reason === NodeStatusNeverUpdatedReason;
  return ours && savedReady.lastHeartbeatTime === observed.lastHeartbeatTime ? savedReady : undefined;
}

function statusUpdateReason(update: NodeHealthUpdate): string {
  const grace = `${update.gracePeriod / 1000}s`;
  return update.observedReadyCondition.reason === 'NodeStatusNeverUpdated' ||
    update.currentReadyCondition?.reason === 'NodeStatusNeverUpdated'
    ? `tryUpdateNodeHealth: no Ready condition posted within the startup grace period (${grace})`
    : `tryUpdateNodeHealth: no heartbeat within the grace period (${grace})`;
}

/**
 * Deviation: upstream only drops a deleted node from knownNodeSet; its health entry and queue
 * membership stay forever (docs/upstream.md#quirk-24). We forget them, so a node re-created with the same
 * name starts fresh (see docs/upstream-deviations.md).
 */
function forgetNode(s: WorkingState, name: string): void {
  s.knownNodes.delete(name);
  s.nodeHealth.delete(name);
  s.nodesToRetry.delete(name);
  s.nodeEvictionStatus.delete(name);
  for (const [zone, queue] of s.zoneQueues) {
    const result = remove(queue, name);
    if (result.removed) s.zoneQueues.set(zone, result.queue);
  }
}

/** upstream handleDisruption, with its side effects on nodes and queues. */
function* applyDisruption(
  s: WorkingState,
  nodes: readonly Node[],
  zoneToNodeConditions: ReadonlyMap<string, readonly (NodeCondition | undefined)[]>,
  now: EpochMillis,
  config: MonitorConfig,
  options: MonitorOptions,
): Pass<DisruptionResult> {
  const disruption = handleDisruption(s.zoneStates, zoneToNodeConditions, config, options.disruptionQPSFuncs);

  if (disruption.masterDisruption === 'enter') {
    // Every zone looks dead: the control plane is more likely cut off than the nodes. Stop evicting,
    // and lift the NoExecute taints so nothing is evicted meanwhile (upstream, all nodes incl. excluded).
    for (const node of nodes) {
      if (config.evictionMode === 'taint') {
        yield* markNodeAsReachable(s, node, 'handleDisruption: entering master disruption mode');
      } else {
        legacyMarkAllNodesReachable(s, node);
      }
    }
  }
  if (disruption.masterDisruption === 'exit') {
    // Give every node a fresh grace period before it can be marked Unknown again.
    for (const node of nodes) {
      const health = s.nodeHealth.get(node.name);
      if (health !== undefined) {
        s.nodeHealth.set(node.name, { ...health, probeTimestamp: now, readyTransitionTimestamp: now });
      }
    }
  }
  for (const { zone, qps } of disruption.limiterSwaps) {
    const queue = s.zoneQueues.get(zone);
    if (queue !== undefined) s.zoneQueues.set(zone, swapLimiter(queue, qps, now));
  }
  s.zoneStates = new Map(disruption.zoneStates);
  return disruption;
}
