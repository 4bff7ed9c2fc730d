// The state upstream's NodeLifecycleController keeps in memory (node_lifecycle_controller.go: the
// Controller struct's knownNodeSet, nodeHealthMap, zoneStates, zoneNoExecuteTainter / zonePodEvictor,
// nodesToRetry and, in the legacy path, nodeEvictionMap), as plain data that can be stored in DynamoDB
// and survives restarts. Passes take a ControllerState and return the next one; they never mutate it.
import type { ControllerConfig } from '../config.js';
import type { NodeEvictionStatus } from './legacyEviction.js';
import type { NodeHealthData } from './nodeHealth.js';
import {
  EvictionRateLimiterBurst,
  newRateLimitedTimedQueue,
  type RateLimitedTimedQueue,
} from './rateLimitedTimedQueue.js';
import { newTokenBucketRateLimiter } from './tokenBucket.js';
import type { EpochMillis, Node, ZoneState } from './types.js';
import { getZoneKey } from './zones.js';

export interface ControllerState {
  /** upstream knownNodeSet: name → uid of the nodes the controller has registered. */
  readonly knownNodes: ReadonlyMap<string, string>;
  /** upstream nodeHealthMap. */
  readonly nodeHealth: ReadonlyMap<string, NodeHealthData>;
  /** upstream zoneStates. */
  readonly zoneStates: ReadonlyMap<string, ZoneState>;
  /** upstream zoneNoExecuteTainter (taint mode) or zonePodEvictor (legacy mode), by zone key. */
  readonly zoneQueues: ReadonlyMap<string, RateLimitedTimedQueue>;
  /** upstream nodesToRetry: nodes whose MarkPodsNotReady must be retried. */
  readonly nodesToRetry: ReadonlySet<string>;
  /** upstream nodeEvictionMap (legacy mode only); absent = unmarked. */
  readonly nodeEvictionStatus: ReadonlyMap<string, NodeEvictionStatus>;
}

export function emptyControllerState(): ControllerState {
  return {
    knownNodes: new Map(),
    nodeHealth: new Map(),
    zoneStates: new Map(),
    zoneQueues: new Map(),
    nodesToRetry: new Set(),
    nodeEvictionStatus: new Map(),
  };
}

/** The working copy a pass mutates; it never escapes the pass (passes return a ControllerState). */
export interface WorkingState {
  knownNodes: Map<string, string>;
  nodeHealth: Map<string, NodeHealthData>;
  zoneStates: Map<string, ZoneState>;
  zoneQueues: Map<string, RateLimitedTimedQueue>;
  nodesToRetry: Set<string>;
  nodeEvictionStatus: Map<string, NodeEvictionStatus>;
}

export function workingCopy(state: ControllerState): WorkingState {
  return {
    knownNodes: new Map(state.knownNodes),
    nodeHealth: new Map(state.nodeHealth),
    zoneStates: new Map(state.zoneStates),
    zoneQueues: new Map(state.zoneQueues),
    nodesToRetry: new Set(state.nodesToRetry),
    nodeEvictionStatus: new Map(state.nodeEvictionStatus),
  };
}

export function freeze(state: WorkingState): ControllerState {
  return { ...state };
}

/**
 * upstream addPodEvictorForNewZone: a zone seen for the first time starts Initial with a queue whose
 * token bucket holds one token (so the first node of a new zone is tainted at once).
 *
 * Deviation: upstream replaces the zone's queue whenever the zone re-enters zoneStates, which drops
 * pending items and refills the bucket; that happens every pass for a zone whose nodes are all
 * excluded from disruption checks (docs/upstream.md#quirk-13). We create the queue once and keep it
 * (see docs/upstream-deviations.md).
 */
export function addPodEvictorForNewZone(
  state: WorkingState,
  node: Pick<Node, 'labels'>,
  now: EpochMillis,
  config: Pick<ControllerConfig, 'nodeEvictionRate'>,
): void {
  const zone = getZoneKey(node.labels);
  if (state.zoneStates.has(zone)) return;
  state.zoneStates.set(zone, 'Initial');
  if (!state.zoneQueues.has(zone)) {
    state.zoneQueues.set(
      zone,
      newRateLimitedTimedQueue(
        newTokenBucketRateLimiter(config.nodeEvictionRate, EvictionRateLimiterBurst, now),
      ),
    );
  }
}

/** The zone's queue; every node's zone gets one in addPodEvictorForNewZone before it is used. */
export function zoneQueue(state: WorkingState, zone: string): RateLimitedTimedQueue {
  const queue = state.zoneQueues.get(zone);
  if (queue === undefined) throw new Error(`invariant: no eviction queue for zone ${JSON.stringify(zone)}`);
  return queue;
}
