// The state store ports: what the functions keep between invocations (docs/state.md). Upstream keeps all of
// it in the controller's memory; here it lives in tables an operator can read (docs/state.md), behind
// these interfaces so the domain and the handlers never see a storage SDK.
//
// Contract shared by every store:
// - Writes that can race are conditional. A lost race throws VersionConflictError (shared/errors.ts)
//   naming the table and key, after which the caller discards what it loaded and reruns from a fresh
//   read; nothing is ever overwritten blindly.
// - Any other failure throws StoreError (throttled after the SDK's retries, aborted, failed).
// - `signal` aborts the request and any retries (the handler's deadline, docs/contributing.md#deadlines).
import type { ControllerState } from '../domain/controllerState.js';
import type { NodeEvictionStatus } from '../domain/legacyEviction.js';
import type { NodeHealthData } from '../domain/nodeHealth.js';
import type { HeartbeatDigest } from '../events.js';
import type { DigestPosition } from '../heartbeatDigest.js';
import type { RateLimitedTimedQueue, TokenClaim } from '../domain/rateLimitedTimedQueue.js';
import type { TimedWorkerEntry } from '../domain/timedWorkerQueue.js';
import type { EpochMillis, Node, PodKey } from '../domain/types.js';
import type { ZoneGauge } from '../domain/zones.js';

export interface StoreCallOptions {
  /** Aborts the call and its retries. */
  readonly signal?: AbortSignal;
}

// ---------------------------------------------------------------------------------------------------
// Controller state (the monitor pass)

/** Cluster-wide facts (one row per cluster). */
export interface ClusterMeta {
  /** `sequence` of the last Heartbeat Digest processed (logs and `nlc status`). */
  readonly lastSequence?: number;
  /**
   * `observedAt` of that digest on the functions' clock (moved by `clockOffset`): a digest of the same
   * term not after it is a no-op (docs/architecture.md#digest-time). On rows written before
   * `clockOffset` was kept, the relay's clock.
   */
  readonly lastObservedAt?: EpochMillis;
  /** `leaderSince` and `relayId` of that digest: the accepted relay term. */
  readonly lastLeaderSince?: EpochMillis;
  readonly lastRelayId?: string;
  /** Every zone is FullDisruption: upstream's master disruption mode (evictions stopped). */
  readonly masterDisruption: boolean;
  /** Relay-clock time of the latest digest committed (stale ones write nothing): observation-gap checks, operators. */
  readonly relayLastSeen?: EpochMillis;
  /** `observingSince` of that digest (relay clock): when the relay that sent it started observing. */
  readonly lastObservingSince?: EpochMillis;
  /**
   * The nodeMonitorGracePeriod the committing monitor ran with: operators' tools (`nlc status`) judge
   * the last digest's age by it, as the controller would judge a node's silence. Absent on rows written
   * before it was recorded.
   */
  readonly nodeMonitorGracePeriodMs?: number;
  /**
   * The upstream minor the committing monitor emulates, and whether it ran in shadow mode (dryRun):
   * `nlc agreement` compares the minor with the cluster's and says when nothing of the cluster's own
   * controller can have been recorded. Absent on rows written before they were recorded.
   */
  readonly emulationVersion?: string;
  readonly dryRun?: boolean;
  /**
   * The API server's version (its /version gitVersion), and when it was read (the functions' clock):
   * the minor the cluster's own controller runs (shared/app/clusterVersion.ts).
   */
  readonly clusterVersion?: string;
  readonly clusterVersionReadAt?: EpochMillis;
  /**
   * When the cluster row was last committed, on the clock of the function that committed it (read
   * only: the store sets it): how long the relay has been silent, and how far a digest's sequence may
   * have moved on since (shared/digestClock.ts).
   */
  readonly committedAt?: EpochMillis;
  /**
   * How many health rows the last commit left lagging the committed state (read only: the store sets
   * it, StoreVersions.pendingHealth). A load that finds it set cannot tell which rows lag.
   */
  readonly healthRowsBehind?: number;
  /**
   * The accepted relay term's clock offset: the relay's clock minus the functions', as its digests show
   * it (shared/digestClock.ts). Every digest instant is moved onto the functions' clock by it, so
   * `lastObservedAt` and every stored probe and queue instant are on the functions' clock. Absent on
   * rows written before it was kept.
   */
  readonly clockOffset?: number;
  /** An offset jump seen in one digest, waiting for the next to confirm it. */
  readonly clockCandidate?: number;
  /** The accepted term was checked against the leader Lease (false: no Lease exists). */
  readonly termVerified?: boolean;
  /**
   * Lease confirmation (PR #138698, v1.37; upstream's ConsistencyStore `WroteAt`): the resourceVersion of
   * a node Lease the API showed newer than the relay's copy. Monitor passes are held until a digest's
   * `leaseResourceVersion` is at least as new; then it is cleared.
   */
  readonly leaseWrittenVersion?: string;
  /** Digests refused so far (a deposed leader's, a forged one, a clock beyond tolerance). */
  readonly refusedDigests?: number;
  /** When the last one was refused (the functions' clock), why, and its term (`relayId@leaderSince`). */
  readonly lastRefusedAt?: EpochMillis;
  readonly lastRefusal?: string;
  readonly lastRefusedTerm?: string;
}

/** A refused Heartbeat Digest, as recorded on the cluster row (`nlc status` shows it). */
export interface RefusedDigest {
  /** The functions' clock when it was refused. */
  readonly at: EpochMillis;
  /** Why, in words, with the relay (`aheadOfClock: relay r-1 …`). */
  readonly reason: string;
  /** Its term, `relayId@leaderSince`. */
  readonly term: string;
  /** An offset jump to confirm with the next digest; undefined clears any. */
  readonly clockCandidate?: number;
}

/** A zone's gauges as last stored (node_collector_zone_size, zone_health, unhealthy_nodes_in_zone). */
export type ZoneGaugeValues = Omit<ZoneGauge, 'zone'>;

/** The version of a Nodes item's node group (written by node-taints). */
export interface NodeRowVersion {
  readonly version: number;
  /** The node was deleted: the item is a tombstone that keeps its last resourceVersion. */
  readonly deleted: boolean;
  /** When node-taints wrote it (its wall clock). */
  readonly updatedAtMs: EpochMillis;
}

/** One stored entry of a zone's eviction queue, as read: what a diff commit compares against. */
export interface StoredQueueEntry {
  /** In the queue (waiting); false = only in the processed-once set, or removed. */
  readonly inQueue: boolean;
  /** In upstream UniqueQueue's set; false = removed (a tombstone kept so a late writer cannot resurrect it). */
  readonly inSet: boolean;
  readonly uid?: string;
  readonly addedAt?: EpochMillis;
  readonly processAt?: EpochMillis;
  /** Position among queue entries with the same processAt (insertion order). */
  readonly seq: number;
  /** Position in the set (insertion order). */
  readonly setSeq: number;
  /** Only while queued: the token a drainer spent on the entry and has not completed (TimedValue.claim). */
  readonly claim?: TokenClaim;
}

/** A zone queue's stored version and entries; `version` 0 means nothing is stored yet. */
export interface ZoneQueueVersion {
  readonly version: number;
  /** The next insertion sequence number to hand out. */
  readonly nextSeq: number;
  readonly entries: ReadonlyMap<string, StoredQueueEntry>;
  /**
   * Entry changes of the committed queue not stored yet (StoreSettings.queueEntriesPerCommit): the next
   * commit writes them even when the pass changes nothing. Absent: the stored entries are the queue's.
   */
  readonly behind?: number;
}

/**
 * Per-row versions and bookkeeping a diff commit needs. Callers pass it back untouched (it comes with
 * a LoadedState and goes back into commit or refresh).
 */
export interface StoreVersions {
  /** Version of the cluster row: every monitor commit moves it, which fences concurrent monitors. 0 = none. */
  readonly meta: number;
  /** Health-group version of each Nodes item that has one. */
  readonly health: ReadonlyMap<string, number>;
  readonly nodes: ReadonlyMap<string, NodeRowVersion>;
  /** State-group version of each Zones row that has one. */
  readonly zoneStates: ReadonlyMap<string, number>;
  readonly zoneQueues: ReadonlyMap<string, ZoneQueueVersion>;
  /** Wall-clock time the node rows were last read (refresh reads the changes since, with an overlap). */
  readonly nodesReadAt: EpochMillis;
  /** Wall-clock time of the last full load. */
  readonly fullLoadAt: EpochMillis;
  /**
   * The cluster row as stored, when `meta` runs ahead of it: the position of quiet passes not written
   * yet (StateAfterPass.positionMayWait). Absent: `meta` is what is stored.
   */
  readonly storedMeta?: ClusterMeta;
  /**
   * Nodes whose health row as stored lags `state`: health-only changes a commit left for later ones
   * (StoreSettings.healthWritesPerCommit), oldest first. Absent or empty: every row is as in `state`.
   */
  readonly pendingHealth?: readonly string[];
}

/** What a monitor pass starts from. */
export interface LoadedState {
  readonly cluster: string;
  readonly state: ControllerState;
  /** The node cache (upstream nodeLister): live nodes by name, in name order. */
  readonly nodes: ReadonlyMap<string, Node>;
  readonly meta: ClusterMeta;
  readonly zones: ReadonlyMap<string, ZoneGaugeValues>;
  readonly versions: StoreVersions;
}

/**
 * One node as processPod reads it: one Nodes item, both groups (the node cache copy and the monitor's
 * health row), strongly consistent.
 */
export interface StoredNodeHealth {
  /** The live node (upstream nodeLister.Get); undefined when absent or deleted. */
  readonly node?: Node;
  /** upstream nodeHealthMap[name]; undefined when the monitor has no health data for the node. */
  readonly health?: NodeHealthData;
  /** upstream nodeEvictionMap[name] (legacy mode); undefined reads as unmarked. */
  readonly evictionStatus?: NodeEvictionStatus;
}

/** What a monitor pass ends with. */
export interface StateAfterPass {
  readonly state: ControllerState;
  readonly meta: ClusterMeta;
  /** The pass's zone gauges (DisruptionResult.gauges), stored on the zone rows when they change. */
  readonly gauges?: readonly ZoneGauge[];
  /**
   * The pass was quiet (no decision, no node read) and the stored position is recent: when nothing but
   * the position (lastSequence, lastObservedAt, relayLastSeen) changed, the cluster row is not written,
   * and the committed LoadedState's meta runs ahead of it (docs/state.md#the-position-of-quiet-passes).
   */
  readonly positionMayWait?: boolean;
}

export interface ControllerStateStore {
  /**
   * Everything a monitor pass needs, read consistently: the controller state, the node cache, the
   * cluster row and the versions a later commit is conditional on.
   *
   * @example
   * const loaded = await store.load('prod', { signal });
   * const pass = monitorNodeHealth(loaded.state, { nodes: [...loaded.nodes.values()], leases }, now, config);
   */
  load(cluster: string, opts?: StoreCallOptions): Promise<LoadedState>;

  /**
   * Records a refused digest on the cluster row (counted, with the last one's reason and term), without
   * moving the version that fences monitor commits: a refusal is never a pass.
   */
  recordRefusedDigest(cluster: string, refused: RefusedDigest, opts?: StoreCallOptions): Promise<void>;

  /**
   * Only the cluster row (one strongly consistent GetItem): what the
   * monitor's schedule fallback needs to tell how long the relay has been silent.
   */
  loadMeta(cluster: string, opts?: StoreCallOptions): Promise<ClusterMeta>;

  /**
   * Brings a LoadedState kept by a warm function up to date for a fraction of a full load: it reads
   * the cluster row, the zone rows, the queues that changed and the nodes changed since the last read.
   * Falls back to a full load when another writer committed monitor state in between.
   */
  refresh(previous: LoadedState, opts?: StoreCallOptions): Promise<LoadedState>;

  /**
   * Writes what changed between `loaded` and `after`, conditionally on the versions read: the cluster
   * row first (it fences concurrent monitors), then the node health rows whose decision-relevant
   * fields changed, the zone rows and the eviction queues. A probe time the next full Heartbeat Digest
   * reproduces is not a reason to write. Returns the LoadedState to start the next pass from.
   * Throws VersionConflictError when another writer got there first (some rows may already be
   * written): discard `loaded` and rerun from a fresh load. Queue changes that raced with the drainer
   * are merged onto a fresh read instead.
   */
  commit(loaded: LoadedState, after: StateAfterPass, opts?: StoreCallOptions): Promise<LoadedState>;

  /**
   * One node's cache copy and health row, for the pod worker (processPod) outside a monitor pass: one
   * strongly consistent read of the node's Nodes item.
   *
   * @example
   * const { node, health } = await store.getNodeHealth('prod', pod.nodeName, { signal });
   * const decision = processPod(pod, health, node !== undefined, config.evictionMode);
   */
  getNodeHealth(cluster: string, name: string, opts?: StoreCallOptions): Promise<StoredNodeHealth>;
}

// ---------------------------------------------------------------------------------------------------
// The node cache (node-taints writes it on Node Changed)

export interface NodeWriteResult {
  /** False when the stored resourceVersion was newer (or the same): the event was stale or a duplicate. */
  readonly applied: boolean;
}

/**
 * What node-taints last saw of a node's node-controller state (shared/agreement.ts nodeControllerView):
 * the base its next Node Changed is diffed against to tell what the cluster's node controller did.
 */
export interface NodeControllerSeen {
  readonly uid: string;
  readonly resourceVersion?: string;
  /** The Ready condition's status and reason; absent when the node has no Ready condition. */
  readonly ready?: string;
  readonly reason?: string;
  /** The node-controller taints, `key:effect`, sorted. */
  readonly taints: readonly string[];
}

export interface NodeStore {
  /**
   * Stores the trimmed node, unless a newer resourceVersion is stored (compared as integers when both
   * parse as integers, else as strings). Never touches the monitor's fields of the same item.
   */
  putNode(cluster: string, node: Node, opts?: StoreCallOptions): Promise<NodeWriteResult>;
  /**
   * Marks the node deleted (a tombstone that keeps `resourceVersion`, expires after a while), unless a
   * newer resourceVersion is stored. A delete with the stored resourceVersion itself applies.
   */
  deleteNode(
    cluster: string,
    name: string,
    resourceVersion: string | undefined,
    opts?: StoreCallOptions,
  ): Promise<NodeWriteResult>;
  /**
   * Replaces the stored copy with the node as the API has it (`node`), or with a tombstone (`undefined`:
   * the API has no such node), whatever resourceVersion is stored: the API is the truth, and a stored
   * resourceVersion may have jumped ahead (a forged event) or the API's gone back (an etcd restore).
   * Conditional on the stored copy still being the one the caller compared (`expected`: its
   * resourceVersion, undefined for none): `applied: false` when another writer got there first.
   */
  replaceNode(
    cluster: string,
    name: string,
    node: Node | undefined,
    expected: { readonly resourceVersion: string | undefined },
    opts?: StoreCallOptions,
  ): Promise<NodeWriteResult>;
  /**
   * What node-taints last saw of the node (strongly consistent), and the cached copy (undefined when
   * absent or deleted): one read.
   */
  getNodeControllerSeen(
    cluster: string,
    name: string,
    opts?: StoreCallOptions,
  ): Promise<{ readonly seen: NodeControllerSeen | undefined; readonly node: Node | undefined }>;
  /**
   * Stores what node-taints saw of the node, conditional on the stored one still being the one it read
   * (`expected`: its resourceVersion, undefined for none): `applied: false` when another invocation got
   * there first. Touches nothing else of the item.
   */
  putNodeControllerSeen(
    cluster: string,
    name: string,
    seen: NodeControllerSeen,
    expected: { readonly resourceVersion: string | undefined },
    opts?: StoreCallOptions,
  ): Promise<NodeWriteResult>;
  /** One node from the cache (strongly consistent); undefined when absent or deleted. */
  getNode(cluster: string, name: string, opts?: StoreCallOptions): Promise<Node | undefined>;
  /** Several nodes (the drainer's queued ones); absent and deleted ones are left out. */
  getNodes(
    cluster: string,
    names: readonly string[],
    opts?: StoreCallOptions,
  ): Promise<ReadonlyMap<string, Node>>;
}

// ---------------------------------------------------------------------------------------------------
// Zone eviction queues (the drainer: doNoExecuteTaintingPass / doEvictionPass)

export interface LoadedZoneQueues {
  readonly cluster: string;
  /** Every zone's RateLimitedTimedQueue (its limiter from the zone row, its entries from EvictionQueue). */
  readonly queues: ReadonlyMap<string, RateLimitedTimedQueue>;
  readonly versions: ReadonlyMap<string, ZoneQueueVersion>;
}

/** What a change to one zone's queue returns: the new queue (undefined = write nothing) and a result. */
export interface ZoneQueueChange<T> {
  readonly queue: RateLimitedTimedQueue | undefined;
  readonly result: T;
}

export interface CommitZoneQueuesOptions extends StoreCallOptions {
  /**
   * On a lost race, re-apply this commit's per-entry changes and limiter swaps onto a fresh read
   * instead of throwing (the monitor's way). Two token withdrawals cannot be merged: that still throws.
   */
  readonly merge?: boolean;
}

export interface ZoneQueueStore {
  /** Every zone's queue and limiter; only zones with entries cost an EvictionQueue read. */
  loadZoneQueues(cluster: string, opts?: StoreCallOptions): Promise<LoadedZoneQueues>;
  /** Writes the zones whose queue or limiter changed, each conditional on its version. */
  commitZoneQueues(
    loaded: LoadedZoneQueues,
    after: ReadonlyMap<string, RateLimitedTimedQueue>,
    opts?: CommitZoneQueuesOptions,
  ): Promise<LoadedZoneQueues>;
  /**
   * Read-modify-write of one zone's queue, retried from a fresh read on a lost race: `change` may run
   * several times and must be pure. The drainer takes a token this way before it taints.
   *
   * @example
   * const { result: item } = await queues.updateZoneQueue('prod', zone, (q) => {
   *   if (q === undefined) return { queue: undefined, result: undefined };
   *   const step = tryNext(q, now);
   *   return { queue: step.queue, result: step.item };
   * });
   */
  updateZoneQueue<T>(
    cluster: string,
    zone: string,
    change: (queue: RateLimitedTimedQueue | undefined) => ZoneQueueChange<T>,
    opts?: StoreCallOptions,
  ): Promise<ZoneQueueChange<T>>;
}

// ---------------------------------------------------------------------------------------------------
// Pod evictions (the taint eviction controller's TimedWorkerQueue)

/** A TimedWorkerQueue entry plus the node the pod was on when it was scheduled, and which pod it was. */
export interface PodEviction extends TimedWorkerEntry {
  readonly nodeName: string;
  /**
   * The UID of the pod the eviction was decided for: a pod re-created under the same name is another
   * pod, which this entry never deletes. Absent on entries written before UIDs were kept.
   */
  readonly uid?: string;
}

/** Outcome of {@link PodEvictionStore.add}: upstream AddWork's three cases. */
export type AddPodEvictionResult =
  | { readonly kind: 'scheduled' | 'firing'; readonly eviction: PodEviction }
  | { readonly kind: 'skipped'; readonly existing: PodEviction };

export interface PodEvictionStore {
  /** Every pending eviction of the cluster. */
  list(cluster: string, opts?: StoreCallOptions): Promise<readonly PodEviction[]>;
  get(cluster: string, key: PodKey, opts?: StoreCallOptions): Promise<PodEviction | undefined>;
  /**
   * upstream AddWork: a fresh token from the cluster's counter, then a create that loses to an
   * existing entry (`skipped`). `now` is the call time the timer counts from (timedWorkerQueue.ts).
   */
  add(
    cluster: string,
    work: {
      readonly key: PodKey;
      readonly uid?: string;
      readonly nodeName: string;
      readonly createdAt: EpochMillis;
      readonly fireAt: EpochMillis;
      readonly now: EpochMillis;
    },
    opts?: StoreCallOptions,
  ): Promise<AddPodEvictionResult>;
  /** The timer of the entry holding `token` fired: mark it running. False when replaced, gone or already running. */
  startFiring(cluster: string, key: PodKey, token: number, opts?: StoreCallOptions): Promise<boolean>;
  /** The work of the entry holding `token` finished: remove it, only if it still holds that token. */
  complete(cluster: string, key: PodKey, token: number, opts?: StoreCallOptions): Promise<boolean>;
  /**
   * upstream CancelWork: remove the entry whatever its state; `cancelled` as timedWorkerQueue.cancelWork.
   * With `uid`, only an entry for that pod (or one without a UID) is removed: a late event about a pod
   * that was deleted never cancels the eviction of the pod re-created under its name. With `token`, only
   * the entry holding that token is removed (a fired timer revoked never removes the entry replacing it).
   */
  cancel(
    cluster: string,
    key: PodKey,
    opts?: StoreCallOptions & { readonly uid?: string; readonly token?: number },
  ): Promise<{ readonly cancelled: boolean; readonly removed?: PodEviction }>;
  /** Waiting timers due at `now` (firesAt <= now), earliest first, ties by key (timedWorkerQueue dueWork). */
  dueEvictions(cluster: string, now: EpochMillis, opts?: StoreCallOptions): Promise<readonly PodEviction[]>;
  /**
   * The earliest instant after `after` at which an entry becomes due (a waiting timer's firesAt, or a
   * firing entry's lease expiry); undefined when none. The drainer waits for it instead of polling.
   */
  nextDueAt(cluster: string, after: EpochMillis, opts?: StoreCallOptions): Promise<EpochMillis | undefined>;
}

// ---------------------------------------------------------------------------------------------------
// Decisions (the audit trail)

export type JsonValue =
  string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** One decision: what the controller decided about a subject, why, on what inputs, with what result. */
export interface DecisionRecord {
  /**
   * The subject: a node name, or `#cluster` / `#zone:<zone>` for cluster- and zone-wide decisions
   * (written and read by shared/decisionContract.ts).
   */
  readonly node: string;
  /** When it was decided: the pass's `now` (the digest's observedAt for the monitor). */
  readonly at: EpochMillis;
  /** The function that decided (`monitor`, `drainer`, `node-taints`, `taint-eviction`, …); part of the key. */
  readonly source: string;
  /** What was decided, e.g. `updateNodeStatus`, `swapNodeTaints`, `enqueue`. */
  readonly what: string;
  /** Why, in words (the effect's `why`). */
  readonly why: string;
  /** The inputs the decision read (conditions, zone state, probe times…); formats: shared/decisionContract.ts. */
  readonly inputs?: Readonly<Record<string, JsonValue>>;
  /** What came of it: `ok`, `dryRun`, or the failure (`Conflict: …`). */
  readonly result?: string;
  readonly dryRun?: boolean;
  /**
   * Position of this decision within its pass: part of the key, so decisions appended one by one at
   * the same instant stay distinct, and a retried pass rewrites the same rows. Defaults to the
   * record's index within its `append` call.
   */
  readonly seq?: number;
}

export interface StoredDecision extends DecisionRecord {
  readonly cluster: string;
  /** The sort key: `<ISO at>#<source>#<index>`. */
  readonly id: string;
  /** When the table's TTL deletes it (epoch seconds). */
  readonly expiresAt: number;
}

export interface DecisionQuery {
  /** At most this many (default 50). */
  readonly limit?: number;
  /** Newest first (default true). */
  readonly newestFirst?: boolean;
  /** Only decisions decided at or after this instant. */
  readonly since?: EpochMillis;
  /**
   * Only mass decisions (rows with `inputs.nodesGzip`; shared/decisionContract.ts), filtered where the
   * rows are stored: a zone's other rows are never sent, and `limit` counts mass decisions.
   */
  readonly massOnly?: boolean;
}

export interface DecisionStore {
  /** Appends records (idempotent: the same record appended twice is stored once). */
  append(cluster: string, records: readonly DecisionRecord[], opts?: StoreCallOptions): Promise<void>;
  /** One subject's decisions, newest first unless asked otherwise. */
  query(
    cluster: string,
    node: string,
    query?: DecisionQuery,
    opts?: StoreCallOptions,
  ): Promise<readonly StoredDecision[]>;
}

// ---------------------------------------------------------------------------------------------------
// Heartbeat Digest parts (the monitor, only for digests split into parts: above ~24,000 nodes)

/**
 * Keeps the parts of a multi-part Heartbeat Digest until all of them have arrived (each part is its own
 * EventBridge event and Lambda invocation). Parts of older digests are dropped: a digest is a full
 * snapshot, so a newer one makes an incomplete older one worthless.
 */
export interface DigestPartStore {
  /**
   * Stores `part` (a duplicate delivery overwrites itself) and returns every stored part of the same
   * digest, this one included; drops the stored parts of earlier digests of its relay term, and those of
   * any other digest stored more than a minute ago (the functions' clock).
   */
  addPart(
    cluster: string,
    part: HeartbeatDigest,
    opts?: StoreCallOptions,
  ): Promise<readonly HeartbeatDigest[]>;
  /**
   * Drops the stored parts of the digest at `upTo` and of the earlier digests of its term (after it was
   * processed), and those of any other digest stored more than a minute ago.
   */
  clearParts(cluster: string, upTo: DigestPosition, opts?: StoreCallOptions): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------
// The monitor's pass lease (one pass of a cluster at a time: docs/deploy.md, "Serializing the monitor")

/** Who holds a cluster's pass lease, and until when (the functions' clock). */
export interface PassLeaseHolder {
  readonly holder: string;
  readonly until: EpochMillis;
}

export type PassLeaseResult =
  { readonly acquired: true } | { readonly acquired: false; readonly held: PassLeaseHolder | undefined };

/**
 * One lease per cluster that a monitor pass holds while it runs, so two passes of one cluster never
 * overlap while passes of different clusters run in parallel. Times are the functions' clock (Lambda's,
 * which AWS keeps synchronised), never a relay's.
 */
export interface PassLeaseStore {
  /**
   * Takes the cluster's lease for `holder` until `until`, unless another holder's lease is still
   * unexpired at `now` (then `held` says whose, when it could be read). An expired lease (its holder
   * crashed or timed out) is taken over.
   */
  acquire(
    cluster: string,
    lease: PassLeaseHolder & { readonly now: EpochMillis },
    opts?: StoreCallOptions,
  ): Promise<PassLeaseResult>;
  /** Gives the lease back if `holder` still holds it (a taken-over lease is left to its new holder). */
  release(cluster: string, holder: string, opts?: StoreCallOptions): Promise<void>;
}

/** All state stores of one deployment. */
export interface StateStores {
  readonly controllerState: ControllerStateStore;
  readonly nodes: NodeStore;
  readonly zoneQueues: ZoneQueueStore;
  readonly podEvictions: PodEvictionStore;
  readonly decisions: DecisionStore;
  readonly digestParts: DigestPartStore;
  readonly passLease: PassLeaseStore;
}
