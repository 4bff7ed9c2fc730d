// The monitor pass's state in DynamoDB: ControllerState spread over the Nodes (health group), Zones
// (zone rows and the cluster row) and EvictionQueue tables, with a diff commit.
//
// Cost rules (docs/architecture.md#budgets, docs/state.md):
// - A node's health row is written only when a decision-relevant field changed: registration, the
//   saved conditions, readyTransitionTimestamp, nodesToRetry membership, the legacy eviction status,
//   or a probe time the next full Heartbeat Digest would not reproduce. A lease renewal alone, which
//   only moves probeTimestamp to the relay-observed probe instant, is not written: after a cold start
//   tryUpdateNodeHealth rebuilds the same probe from the digest (nodeHealth.ts).
// - A warm function keeps its LoadedState and calls refresh, which reads the cluster row, the zone
//   rows, the queues whose version moved and the nodes node-taints changed since its last read.
//
// Concurrency: the cluster row's metaVersion is claimed first on every commit, so of two monitors
// that loaded the same state only one writes anything; every other row is conditional on its own
// version as well. Queue changes that raced with the drainer are merged (zoneQueues.ts).
//
// One concern, kept whole: one class whose load, refresh and commit share the LoadedState's versions;
// the row codecs it uses are in modules of their own (codec.ts, clusterRows.ts, healthRows.ts), and what
// a commit writes is decided by the pure planCommit (commitPlan.ts): commit only carries the plan out.
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { RateLimitedTimedQueue } from '../../domain/rateLimitedTimedQueue.js';
import type { Node } from '../../domain/types.js';
import type {
  ClusterMeta,
  ControllerStateStore,
  LoadedState,
  NodeRowVersion,
  StateAfterPass,
  RefusedDigest,
  StoredNodeHealth,
  StoreCallOptions,
  ZoneQueueVersion,
} from '../../ports/stores.js';
import {
  Expression,
  forEachLimit,
  queryAll,
  request,
  type DynamoContext,
  type StoreSettings,
  type StoredItem,
} from './client.js';
import { decodeZoneRows, positionOf, type ZoneRows } from './clusterRows.js';
import { checkClusterName, ClusterRowKey, encodeInstant, encodeZone, isoString } from './codec.js';
import { planCommit, type ZoneStateWrite } from './commitPlan.js';
import { decodeNodesItems, encodeHealthRow, type HealthRow } from './healthRows.js';
import { parseItem } from './items.js';
import { getNodesItem, NodeGroupSchema, nodeOfItem } from './nodeStore.js';
import { mergeQueueChanges, toDomainQueue } from './queueState.js';
import { NodesByChangeIndex } from './tables.js';
import { commitZoneQueueMerging, readZoneQueue, snapshotOf, versionOf } from './zoneQueues.js';

/**
 * Whether a copy of a node group read from the byNodeChange index is newer than the cached one. The
 * index is read with an overlap and is eventually consistent, so older copies come back: the version
 * decides. Except after a deleted node's tombstone expired and the name was used again: the item was
 * created afresh and its version restarted, but it was written at least a tombstone TTL after the
 * deletion (an older copy never is).
 */
export function isNewerNodeCopy(
  cached: NodeRowVersion | undefined,
  version: number,
  updatedAtMs: number,
  settings: Pick<StoreSettings, 'tombstoneTtlSeconds'>,
): boolean {
  if (cached === undefined || version > cached.version) return true;
  return cached.deleted && updatedAtMs >= cached.updatedAtMs + settings.tombstoneTtlSeconds * 1000;
}

/**
 * A full load that follows this function's own last commit: the rows it left lagging are read as
 * stored, older than what it decided; it keeps its own entries for them, and the list.
 */
function keepPendingHealth(full: LoadedState, previous: LoadedState): LoadedState {
  const pending = previous.versions.pendingHealth ?? [];
  if (pending.length === 0) return full;
  const nodeHealth = new Map(full.state.nodeHealth);
  for (const name of pending) {
    const health = previous.state.nodeHealth.get(name);
    if (health === undefined) nodeHealth.delete(name);
    else nodeHealth.set(name, health);
  }
  return {
    ...full,
    state: { ...full.state, nodeHealth },
    versions: { ...full.versions, pendingHealth: pending },
  };
}

/**
 * A zone queue read from the table, with the entry changes `previous` had not written yet
 * (ZoneQueueVersion.behind) put back onto it: whatever another writer (a drainer's token) changed since
 * is kept, and the nodes this instance forgot are not read back, forgotten and recorded a second time.
 * undefined when nothing was behind, or the changes cannot be merged (the table's queue then stands).
 */
function withEntriesBehind(
  zone: string,
  previous: LoadedState,
  read: RateLimitedTimedQueue,
  readVersion: ZoneQueueVersion,
): { queue: RateLimitedTimedQueue; version: ZoneQueueVersion } | undefined {
  const known = previous.versions.zoneQueues.get(zone);
  const held = previous.state.zoneQueues.get(zone);
  if (known?.behind === undefined || held === undefined) return undefined;
  const queue = mergeQueueChanges(toDomainQueue(snapshotOf(zone, known, held)), held, read);
  return queue === undefined ? undefined : { queue, version: { ...readVersion, behind: known.behind } };
}

/** The full load, keeping the queue entries `previous` had not written yet (withEntriesBehind). */
function keepEntriesBehind(full: LoadedState, previous: LoadedState): LoadedState {
  let queues: Map<string, RateLimitedTimedQueue> | undefined;
  let versions: Map<string, ZoneQueueVersion> | undefined;
  for (const [zone, read] of full.state.zoneQueues) {
    const readVersion = full.versions.zoneQueues.get(zone);
    const kept = readVersion === undefined ? undefined : withEntriesBehind(zone, previous, read, readVersion);
    if (kept === undefined) continue;
    (queues ??= new Map(full.state.zoneQueues)).set(zone, kept.queue);
    (versions ??= new Map(full.versions.zoneQueues)).set(zone, kept.version);
  }
  if (queues === undefined || versions === undefined) return full;
  return {
    ...full,
    state: { ...full.state, zoneQueues: queues },
    versions: { ...full.versions, zoneQueues: versions },
  };
}

/** The meta without the store's own healthRowsBehind (each commit sets it anew). */
function withoutBehind(meta: ClusterMeta): ClusterMeta {
  const { healthRowsBehind: _behind, ...rest } = meta;
  return rest;
}

function sortedMap<V>(entries: Iterable<readonly [string, V]>): Map<string, V> {
  return new Map([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export class DynamoDbControllerStateStore implements ControllerStateStore {
  constructor(private readonly ctx: DynamoContext) {}

  async load(cluster: string, opts: StoreCallOptions = {}): Promise<LoadedState> {
    const { ctx } = this;
    const { signal } = opts;
    const fullLoadAt = ctx.clock.now();
    // The cluster row first: it fences monitor commits, so rows read after it are at least as new,
    // and a commit that lands in between makes our own commit fail instead of going unnoticed.
    const zones = await this.readZoneRows(cluster, signal);
    const nodesReadAt = ctx.clock.now();
    const items = await queryAll(
      ctx,
      {
        TableName: ctx.tables.nodes,
        KeyConditionExpression: '#c = :c',
        ExpressionAttributeNames: { '#c': 'cluster' },
        ExpressionAttributeValues: { ':c': cluster },
        ConsistentRead: true,
      },
      signal,
    );
    const rows = decodeNodesItems(ctx, cluster, items);
    const queues = await this.readQueues(cluster, zones.queueRows, undefined, signal);
    return {
      cluster,
      state: {
        knownNodes: rows.knownNodes,
        nodeHealth: rows.nodeHealth,
        zoneStates: zones.zoneStates,
        zoneQueues: queues.queues,
        nodesToRetry: rows.nodesToRetry,
        nodeEvictionStatus: rows.nodeEvictionStatus,
      },
      nodes: sortedMap(rows.nodes),
      meta: zones.meta,
      zones: zones.gauges,
      versions: {
        meta: zones.metaVersion,
        health: rows.healthVersions,
        nodes: rows.nodeVersions,
        zoneStates: zones.zoneStateVersions,
        zoneQueues: queues.versions,
        nodesReadAt,
        fullLoadAt,
      },
    };
  }

  async recordRefusedDigest(
    cluster: string,
    refused: RefusedDigest,
    opts: StoreCallOptions = {},
  ): Promise<void> {
    const { ctx } = this;
    const key = { cluster: checkClusterName(cluster), zone: ClusterRowKey };
    const e = new Expression();
    // No condition and no metaVersion: a refusal races with nothing a monitor commit fences.
    const update = e.update(
      {
        lastRefusedAt: isoString(refused.at),
        lastRefusedAtMs: refused.at,
        lastRefusal: refused.reason,
        lastRefusedTerm: refused.term,
        clockCandidate: refused.clockCandidate,
      },
      [`${e.n('refusedDigests')} = if_not_exists(${e.n('refusedDigests')}, ${e.v(0)}) + ${e.v(1)}`],
    );
    await request(
      ctx,
      'UpdateItem',
      { table: ctx.tables.zones, key },
      (abortSignal) =>
        ctx.doc.send(
          new UpdateCommand({
            TableName: ctx.tables.zones,
            Key: key,
            UpdateExpression: update,
            ...e.params,
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      opts.signal,
    );
  }

  async loadMeta(cluster: string, opts: StoreCallOptions = {}): Promise<ClusterMeta> {
    const { ctx } = this;
    const key = { cluster: checkClusterName(cluster), zone: ClusterRowKey };
    const output = await request(
      ctx,
      'GetItem',
      { table: ctx.tables.zones, key },
      (abortSignal) =>
        ctx.doc.send(
          new GetCommand({
            TableName: ctx.tables.zones,
            Key: key,
            ConsistentRead: true,
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      opts.signal,
    );
    return decodeZoneRows(ctx, cluster, output.Item === undefined ? [] : [output.Item]).meta;
  }

  async getNodeHealth(cluster: string, name: string, opts: StoreCallOptions = {}): Promise<StoredNodeHealth> {
    const item = await getNodesItem(this.ctx, cluster, name, opts.signal);
    if (item === undefined) return {};
    // One item, decoded as a load decodes it, so both readers agree on what a row means.
    const rows = decodeNodesItems(this.ctx, cluster, [item]);
    const node = rows.nodes.get(name);
    const health = rows.nodeHealth.get(name);
    const evictionStatus = rows.nodeEvictionStatus.get(name);
    return {
      ...(node !== undefined && { node }),
      ...(health !== undefined && { health }),
      ...(evictionStatus !== undefined && { evictionStatus }),
    };
  }

  async refresh(previous: LoadedState, opts: StoreCallOptions = {}): Promise<LoadedState> {
    const { ctx } = this;
    const { signal } = opts;
    const { cluster } = previous;
    if (ctx.clock.now() - previous.versions.fullLoadAt >= ctx.settings.fullReloadEveryMs) {
      const loaded = await this.load(cluster, opts);
      // The hourly safety net re-reads the rows, not what this function processed since they were
      // written. When no monitor committed since, a position still ahead of the row is kept, and so are
      // the health entries of rows still lagging (pendingHealth) and the zone queue entries not yet
      // written (behind), which the next commits write.
      if (loaded.versions.meta !== previous.versions.meta) return loaded;
      const full = keepEntriesBehind(keepPendingHealth(loaded, previous), previous);
      if (previous.versions.storedMeta === undefined) return full;
      return {
        ...full,
        meta: { ...full.meta, ...positionOf(previous.meta) },
        versions: { ...full.versions, storedMeta: full.meta },
      };
    }
    const zones = await this.readZoneRows(cluster, signal);
    // Another monitor committed since: our health rows may be stale. (Only monitors move metaVersion.)
    if (zones.metaVersion !== previous.versions.meta) return this.load(cluster, opts);

    const nodesReadAt = ctx.clock.now();
    const changed = await queryAll(
      ctx,
      {
        TableName: ctx.tables.nodes,
        IndexName: NodesByChangeIndex,
        KeyConditionExpression: '#c = :c AND #t >= :since',
        ExpressionAttributeNames: { '#c': 'cluster', '#t': 'nodeUpdatedAtMs' },
        ExpressionAttributeValues: {
          ':c': cluster,
          ':since': previous.versions.nodesReadAt - ctx.settings.refreshOverlapMs,
        },
      },
      signal,
    );
    // Copied on the first newer row only: most passes find none (the window's rows were read before).
    let nodes: Map<string, Node> | undefined;
    let nodeVersions: Map<string, NodeRowVersion> | undefined;
    for (const raw of changed) {
      // Most of the window's rows were read by the previous pass: not newer, no need to decode them.
      const { node: rawName, nodeVersion: rawVersion, nodeUpdatedAtMs: rawUpdatedAt } = raw;
      const known = nodeVersions ?? previous.versions.nodes;
      if (
        typeof rawName === 'string' &&
        typeof rawVersion === 'number' &&
        typeof rawUpdatedAt === 'number' &&
        !isNewerNodeCopy(known.get(rawName), rawVersion, rawUpdatedAt, ctx.settings)
      ) {
        continue;
      }
      const item = parseItem(NodeGroupSchema, raw, {
        table: ctx.tables.nodes,
        key: { cluster, node: String(raw.node) },
      });
      const version = item.nodeVersion ?? 0;
      const updatedAtMs = item.nodeUpdatedAtMs ?? 0;
      if (!isNewerNodeCopy(known.get(item.node), version, updatedAtMs, ctx.settings)) continue;
      nodes ??= new Map(previous.nodes);
      nodeVersions ??= new Map(previous.versions.nodes);
      nodeVersions.set(item.node, { version, deleted: item.deleted === true, updatedAtMs });
      const node = nodeOfItem(item);
      if (node === undefined) nodes.delete(item.node);
      else nodes.set(item.node, node);
    }

    const queues = await this.readQueues(cluster, zones.queueRows, previous, signal);
    // No monitor committed since (metaVersion): the row's position is the one last written, and the
    // warm function's, which quiet passes moved since, is the later one (positionMayWait).
    const ahead = previous.versions.storedMeta !== undefined;
    return {
      cluster,
      state: { ...previous.state, zoneQueues: queues.queues },
      nodes: nodes === undefined ? previous.nodes : sortedMap(nodes),
      meta: ahead ? { ...zones.meta, ...positionOf(previous.meta) } : zones.meta,
      zones: zones.gauges,
      versions: {
        ...previous.versions,
        nodes: nodeVersions ?? previous.versions.nodes,
        zoneQueues: queues.versions,
        nodesReadAt,
        ...(ahead && { storedMeta: zones.meta }),
      },
    };
  }

  async commit(
    loaded: LoadedState,
    after: StateAfterPass,
    opts: StoreCallOptions = {},
  ): Promise<LoadedState> {
    const { ctx } = this;
    const { signal } = opts;
    const { cluster } = loaded;
    const state = after.state;
    const plan = planCommit(loaded, after, { healthWrites: ctx.settings.healthWritesPerCommit });
    if (plan.unchanged) {
      // Nothing written. The meta kept is the pass's (its position, when deferred), on top of the stored
      // row's committedAt; storedMeta remembers the row while the kept meta runs ahead of it.
      const stored = loaded.versions.storedMeta ?? loaded.meta;
      const { storedMeta: _written, ...versions } = loaded.versions;
      return {
        ...loaded,
        state,
        meta: {
          ...withoutBehind(after.meta),
          ...(stored.committedAt !== undefined && { committedAt: stored.committedAt }),
        },
        versions: plan.positionDeferred ? { ...versions, storedMeta: stored } : versions,
      };
    }
    const { healthWrites, zoneStateWrites, queueWrites } = plan;

    // The fence: claim the cluster row before writing anything else, so of two monitors that loaded
    // the same state only one writes. But "processed" (lastSequence and the rest of the new meta) is
    // recorded only after the rows it stands for: a pass whose rows only partly land is not recorded,
    // and its retry (the same digest, still newer) redoes it from a fresh load. With rows to write, the
    // fence keeps the old meta (one more write); a pass that writes only the cluster row needs no fence.
    let fenced = loaded.versions.meta;
    if (plan.fence) {
      fenced = (await this.claimMeta(cluster, loaded.versions.meta, loaded.meta, signal, 'fence')).version;
    }

    // Copied only when rows change: it holds a version per node (5,000 entries), most passes none.
    let health = loaded.versions.health;
    if (healthWrites.length > 0) {
      const versions = new Map(health);
      await forEachLimit(healthWrites, ctx.settings.writeConcurrency, async (w) => {
        versions.set(w.name, await this.writeHealth(cluster, w.name, w.row, w.expected, signal));
      });
      health = versions;
    }
    const zoneStates = new Map(loaded.versions.zoneStates);
    const zoneGauges = new Map(loaded.zones);
    await forEachLimit(zoneStateWrites, ctx.settings.writeConcurrency, async (w) => {
      zoneStates.set(
        w.zone,
        await this.writeZoneState(cluster, w, loaded.versions.zoneStates.get(w.zone), signal),
      );
      if (w.gauge !== undefined) zoneGauges.set(w.zone, w.gauge);
    });
    const zoneQueues = new Map(state.zoneQueues);
    const queueVersions = new Map(loaded.versions.zoneQueues);
    for (const { zone, queue } of queueWrites) {
      const before = loaded.state.zoneQueues.get(zone);
      const snapshot = snapshotOf(zone, loaded.versions.zoneQueues.get(zone), before);
      const written = await commitZoneQueueMerging(
        ctx,
        cluster,
        snapshot,
        before,
        queue,
        signal,
        ctx.settings.queueEntriesPerCommit,
      );
      zoneQueues.set(zone, written.queue);
      queueVersions.set(zone, versionOf(written.snapshot));
    }

    // Processed: only now, after every row of the pass.
    const behind = plan.deferredHealth.length;
    const { version: metaVersion, at: committedAt } = await this.claimMeta(
      cluster,
      fenced,
      after.meta,
      signal,
      'processed',
      behind,
    );

    const { storedMeta: _written, ...versions } = loaded.versions;
    return {
      cluster,
      state: { ...state, zoneQueues },
      nodes: loaded.nodes,
      meta: { ...withoutBehind(after.meta), committedAt, ...(behind > 0 && { healthRowsBehind: behind }) },
      zones: zoneGauges,
      versions: {
        ...versions,
        meta: metaVersion,
        health,
        zoneStates,
        zoneQueues: queueVersions,
        pendingHealth: plan.deferredHealth,
      },
    };
  }

  private async readZoneRows(cluster: string, signal: AbortSignal | undefined): Promise<ZoneRows> {
    const { ctx } = this;
    const rows = await queryAll(
      ctx,
      {
        TableName: ctx.tables.zones,
        KeyConditionExpression: '#c = :c',
        ExpressionAttributeNames: { '#c': 'cluster' },
        ExpressionAttributeValues: { ':c': checkClusterName(cluster) },
        ConsistentRead: true,
      },
      signal,
    );
    return decodeZoneRows(ctx, cluster, rows);
  }

  /** Every zone's queue; with `previous`, only those whose stored version moved are read again. */
  private async readQueues(
    cluster: string,
    rows: ReadonlyMap<string, StoredItem>,
    previous: LoadedState | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ queues: Map<string, RateLimitedTimedQueue>; versions: Map<string, ZoneQueueVersion> }> {
    const queues = new Map<string, RateLimitedTimedQueue>();
    const versions = new Map<string, ZoneQueueVersion>();
    for (const [zone, row] of rows) {
      const known = previous?.versions.zoneQueues.get(zone);
      const cached = previous?.state.zoneQueues.get(zone);
      if (
        known !== undefined &&
        cached !== undefined &&
        row.queueVersion === known.version &&
        row.pendingOps === undefined
      ) {
        queues.set(zone, cached);
        versions.set(zone, known);
        continue;
      }
      const snapshot = await readZoneQueue(this.ctx, cluster, zone, row, signal);
      const queue = toDomainQueue(snapshot);
      if (queue === undefined) continue;
      // Another writer (a drainer's token) moved a queue this instance had only partly written.
      const kept =
        previous === undefined ? undefined : withEntriesBehind(zone, previous, queue, versionOf(snapshot));
      queues.set(zone, kept?.queue ?? queue);
      versions.set(zone, kept?.version ?? versionOf(snapshot));
    }
    return { queues, versions };
  }

  private async claimMeta(
    cluster: string,
    expected: number,
    meta: ClusterMeta,
    signal: AbortSignal | undefined,
    phase: 'fence' | 'processed' = 'processed',
    /** Health rows left lagging (CommitPlan.deferredHealth): a later load must know some do. */
    healthRowsBehind = 0,
  ): Promise<{ version: number; at: number }> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const e = new Expression();
    const metaVersionUnchanged =
      expected === 0
        ? `attribute_not_exists(${e.n('metaVersion')})`
        : `${e.n('metaVersion')} = ${e.v(expected)}`;
    const key = { cluster, zone: ClusterRowKey };
    if (phase === 'fence') {
      // Moves only the version (and when): updatedAtMs stays the last processed digest's commit time,
      // from which the schedule fallback measures relay silence.
      const fence = e.update({ metaVersion: expected + 1, commitStartedAtMs: now });
      await this.update(ctx.tables.zones, key, fence, metaVersionUnchanged, e, signal);
      return { version: expected + 1, at: now };
    }
    const update = e.update({
      metaVersion: expected + 1,
      lastSequence: meta.lastSequence,
      lastObservedAt: meta.lastObservedAt === undefined ? undefined : encodeInstant(meta.lastObservedAt),
      lastLeaderSince: meta.lastLeaderSince === undefined ? undefined : encodeInstant(meta.lastLeaderSince),
      lastRelayId: meta.lastRelayId,
      masterDisruption: meta.masterDisruption,
      relayLastSeen: meta.relayLastSeen === undefined ? undefined : encodeInstant(meta.relayLastSeen),
      lastObservingSince:
        meta.lastObservingSince === undefined ? undefined : encodeInstant(meta.lastObservingSince),
      nodeMonitorGracePeriodMs: meta.nodeMonitorGracePeriodMs,
      emulationVersion: meta.emulationVersion,
      dryRun: meta.dryRun,
      clusterVersion: meta.clusterVersion,
      clusterVersionReadAtMs: meta.clusterVersionReadAt,
      clockOffset: meta.clockOffset,
      clockCandidate: meta.clockCandidate,
      termVerified: meta.termVerified,
      leaseWrittenVersion: meta.leaseWrittenVersion,
      healthRowsBehind: healthRowsBehind > 0 ? healthRowsBehind : undefined,
      updatedAt: isoString(now),
      updatedAtMs: now,
    });
    await this.update(ctx.tables.zones, key, update, metaVersionUnchanged, e, signal);
    return { version: expected + 1, at: now };
  }

  private async writeHealth(
    cluster: string,
    name: string,
    row: HealthRow,
    expected: number | undefined,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    const now = this.ctx.clock.now();
    const e = new Expression();
    const healthVersionUnchanged =
      expected === undefined
        ? `attribute_not_exists(${e.n('healthVersion')})`
        : `${e.n('healthVersion')} = ${e.v(expected)}`;
    const version = (expected ?? 0) + 1;
    const update = e.update({
      ...encodeHealthRow(row),
      healthVersion: version,
      healthUpdatedAt: isoString(now),
      healthUpdatedAtMs: now,
    });
    await this.update(
      this.ctx.tables.nodes,
      { cluster, node: name },
      update,
      healthVersionUnchanged,
      e,
      signal,
    );
    return version;
  }

  private async writeZoneState(
    cluster: string,
    w: ZoneStateWrite,
    expected: number | undefined,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    const now = this.ctx.clock.now();
    const e = new Expression();
    const stateVersionUnchanged =
      expected === undefined
        ? `attribute_not_exists(${e.n('stateVersion')})`
        : `${e.n('stateVersion')} = ${e.v(expected)}`;
    const version = (expected ?? 0) + 1;
    const update = e.update({
      state: w.state,
      ...(w.gauge !== undefined && {
        size: w.gauge.zoneSize,
        unhealthyNodes: w.gauge.unhealthyNodes,
        // DynamoDB stores no NaN (upstream's empty-zone health): left out then.
        zoneHealth: Number.isFinite(w.gauge.zoneHealth) ? w.gauge.zoneHealth : undefined,
      }),
      stateVersion: version,
      stateUpdatedAt: isoString(now),
    });
    await this.update(
      this.ctx.tables.zones,
      { cluster, zone: encodeZone(w.zone) },
      update,
      stateVersionUnchanged,
      e,
      signal,
    );
    return version;
  }

  private async update(
    table: string,
    key: Record<string, string>,
    updateExpression: string,
    condition: string,
    e: Expression,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const { ctx } = this;
    await request(
      ctx,
      'UpdateItem',
      { table, key },
      (abortSignal) =>
        ctx.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: key,
            UpdateExpression: updateExpression,
            ConditionExpression: condition,
            ...e.params,
            ReturnConsumedCapacity: 'TOTAL',
          }),
          { abortSignal },
        ),
      signal,
    );
  }
}
