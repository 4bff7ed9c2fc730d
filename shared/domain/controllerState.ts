// The state upstream's NodeLifecycleController keeps in memory (node_lifecycle_controller.go: the
// Controller struct's knownNodeSet, nodeHealthMap, zoneStates, zoneNoExecuteTainter / zonePodEvictor,
// nodesToRetry and, in the legacy path, nodeEvictionMap), as plain data that can be stored in DynamoDB
// and survives restarts. Passes take a ControllerState and return the next one; they never mutate it.
import type { ControllerConfig } from '../ports/config.js';
import type { NodeEvictionStatus } from './legacyEviction.js';
import type { NodeHealthData } from './nodeHealth.js';
import {
  EvictionRateLimiterBurst,
  newRateLimitedTimedQueue,
  type RateLimitedTimedQueue,
  WorkingQueue,
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
  knownNodes: CopyOnWriteMap<string, string>;
  nodeHealth: Map<string, NodeHealthData>;
  zoneStates: Map<string, ZoneState>;
  zoneQueues: WorkingZoneQueues;
  nodesToRetry: CopyOnWriteSet<string>;
  nodeEvictionStatus: CopyOnWriteMap<string, NodeEvictionStatus>;
}

export function workingCopy(state: ControllerState): WorkingState {
  return {
    knownNodes: new CopyOnWriteMap(state.knownNodes),
    // Copied whole: a pass gives every listed node a new entry.
    nodeHealth: new Map(state.nodeHealth),
    zoneStates: new Map(state.zoneStates),
    zoneQueues: new WorkingZoneQueues(state.zoneQueues),
    nodesToRetry: new CopyOnWriteSet(state.nodesToRetry),
    nodeEvictionStatus: new CopyOnWriteMap(state.nodeEvictionStatus),
  };
}

export function freeze(state: WorkingState): ControllerState {
  return {
    ...state,
    knownNodes: state.knownNodes.current,
    nodesToRetry: state.nodesToRetry.current,
    nodeEvictionStatus: state.nodeEvictionStatus.current,
    zoneQueues: new Map(state.zoneQueues),
  };
}

/**
 * A pass's copy of a map it reads for every node and rarely changes (the registered nodes: only when
 * one comes or goes): the state's own map until the first change, then a copy of it. Copying 5,000
 * entries on every pass cost more than the rest of a steady pass's bookkeeping together.
 */
export class CopyOnWriteMap<K, V> {
  private map: ReadonlyMap<K, V>;
  private copy: Map<K, V> | undefined;

  constructor(map: ReadonlyMap<K, V>) {
    this.map = map;
  }

  /** The map as it stands: the original while unchanged. */
  get current(): ReadonlyMap<K, V> {
    return this.map;
  }

  get size(): number {
    return this.map.size;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  set(key: K, value: V): void {
    this.own().set(key, value);
  }

  delete(key: K): void {
    if (this.map.has(key)) this.own().delete(key);
  }

  private own(): Map<K, V> {
    if (this.copy === undefined) {
      this.copy = new Map(this.map);
      this.map = this.copy;
    }
    return this.copy;
  }
}

/** CopyOnWriteMap's set: the nodes whose MarkPodsNotReady must be retried, none on most passes. */
export class CopyOnWriteSet<T> {
  private set: ReadonlySet<T>;
  private copy: Set<T> | undefined;

  constructor(set: ReadonlySet<T>) {
    this.set = set;
  }

  get current(): ReadonlySet<T> {
    return this.set;
  }

  has(value: T): boolean {
    return this.set.has(value);
  }

  add(value: T): void {
    if (!this.set.has(value)) this.own().add(value);
  }

  delete(value: T): void {
    if (this.set.has(value)) this.own().delete(value);
  }

  private own(): Set<T> {
    if (this.copy === undefined) {
      this.copy = new Set(this.set);
      this.set = this.copy;
    }
    return this.copy;
  }
}

/**
 * The working copy's zone queues. Reads and `set` work on plain queues, as on a Map; the taint-based
 * eviction pass changes a zone's queue through its WorkingQueue instead (`working`), which turns a
 * pass's Remove+Add per unhealthy node into Map and Set operations. A read of the zone gives the
 * WorkingQueue's plain queue, so no reader sees a stale one; a `set` replaces both.
 */
export class WorkingZoneQueues {
  private readonly queues: Map<string, RateLimitedTimedQueue>;
  private readonly workingQueues = new Map<string, WorkingQueue>();

  constructor(queues: ReadonlyMap<string, RateLimitedTimedQueue>) {
    this.queues = new Map(queues);
  }

  has(zone: string): boolean {
    return this.queues.has(zone);
  }

  get(zone: string): RateLimitedTimedQueue | undefined {
    return this.workingQueues.get(zone)?.queue() ?? this.queues.get(zone);
  }

  set(zone: string, queue: RateLimitedTimedQueue): void {
    this.workingQueues.delete(zone);
    this.queues.set(zone, queue);
  }

  /** The zone's queue to change in place; undefined for a zone without a queue. */
  working(zone: string): WorkingQueue | undefined {
    let working = this.workingQueues.get(zone);
    if (working === undefined) {
      const queue = this.queues.get(zone);
      if (queue === undefined) return undefined;
      working = new WorkingQueue(queue);
      this.workingQueues.set(zone, working);
    }
    return working;
  }

  *[Symbol.iterator](): IterableIterator<[string, RateLimitedTimedQueue]> {
    for (const [zone, queue] of this.queues) yield [zone, this.workingQueues.get(zone)?.queue() ?? queue];
  }
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
  return state.zoneQueues.get(zone) ?? noQueue(zone);
}

/** The zone's queue to change in place (see WorkingZoneQueues); the same invariant as zoneQueue. */
export function workingZoneQueue(state: WorkingState, zone: string): WorkingQueue {
  return state.zoneQueues.working(zone) ?? noQueue(zone);
}

function noQueue(zone: string): never {
  throw new Error(`invariant: no eviction queue for zone ${JSON.stringify(zone)}`);
}
