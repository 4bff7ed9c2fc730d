// What the live view shows, read once a second: the cluster as the API server has it (each node's Ready
// condition and taints, which is what the controller writes), the controller's own state from the
// tables (zone states, limiters at now, eviction queues, each node's probe age: `nlc status`'s
// buildStatus on one consistent load, read-only), the newest decisions of the Decisions trail, and the
// local parts (kubelets, relay, functions). The same snapshots, diffed, are the log lines of `--no-ui`.
// A zone's size and unhealthy count are those of the nodes the same frame shows (zoneRows): the
// controller writes a pass's Ready=Unknown marks (and its pods' Ready=False) before it commits the
// pass's counts, for seconds when many nodes go at once, and a frame must not show ten Unknown nodes in
// a zone counted healthy.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { buildStatus, type ZoneStatus } from '../../shared/present/statusReport.js';
import { naturalCompare } from '../../shared/present/names.js';
import { abbreviateTaint, resultKind, zoneName, type ProbeAgeFields } from '../../shared/present/present.js';
import { isTaintEffect } from '../../shared/adapters/kubernetes/mapping.js';
import { ClusterSubject, formatPodRef, podOfDecision, zoneSubject } from '../../shared/decisionContract.js';
import type { EpochMillis } from '../../shared/domain/types.js';
import { getZoneKey, isNodeExcludedFromDisruptionChecks } from '../../shared/domain/zones.js';
import type { StateStores, StoredDecision } from '../../shared/ports/stores.js';
import type { KubeletState } from '../kubelet/index.js';

export interface NodeRow extends ProbeAgeFields {
  readonly name: string;
  /** `region:zone` as the controller keys it. */
  readonly zone: string;
  /** The simulated kubelet's state; null with a real cluster. */
  readonly kubelet: KubeletState | null;
  /** The node's Ready condition in the API (True, False, Unknown), null when it has none. */
  readonly ready: string | null;
  /** Every taint on the Node, abbreviated (`unreachable:NoExecute`). */
  readonly taints: readonly string[];
  // probe, probeAgeSeconds: how long the node has been silent as the controller sees it, the same
  // definition as `nlc status` (shared/present/present.ts probeAge), not the Lease as the API has it.
  /** Place in the zone's NoExecute queue (1-based), 0 once processed (tainted), null when not queued. */
  readonly queuePosition: number | null;
}

export interface DecisionRow {
  readonly at: EpochMillis;
  readonly subject: string;
  /** The pod a pod decision is about (`namespace/name`, from its inputs), null for the rest. */
  readonly pod: string | null;
  readonly source: string;
  readonly what: string;
  readonly result: string | null;
  readonly why: string;
  /** Stable identity (subject and stored id), for telling new decisions from seen ones. */
  readonly key: string;
}

export interface StackSnapshot {
  readonly at: EpochMillis;
  readonly cluster: string;
  readonly relay: {
    readonly running: boolean;
    readonly synced: boolean;
    readonly nextSequence: number | null;
  };
  readonly functionsRunning: boolean;
  /** The relay clock of the last digest the monitor processed. */
  readonly observedAt: EpochMillis | null;
  /** How long ago it was committed, and whether that is more than the grace period (nlc status's). */
  readonly digestAgeSeconds: number | null;
  readonly digestLate: boolean;
  readonly masterDisruption: boolean;
  readonly zones: readonly ZoneRow[];
  readonly nodes: readonly NodeRow[];
  /** Newest first. */
  readonly decisions: readonly DecisionRow[];
  /** The last read failure, if the last read failed (the rest is then the previous snapshot's). */
  readonly error: string | null;
}

export interface SnapshotSource {
  readonly cluster: string;
  readonly stores: Pick<StateStores, 'controllerState' | 'decisions'>;
  readonly kubeConfig: KubeConfig;
  readonly kubeletState?: (node: string) => KubeletState | undefined;
  readonly relay: () => {
    readonly running: boolean;
    readonly synced: boolean;
    readonly nextSequence: number | null;
  };
  readonly functionsRunning: () => boolean;
  /** Decisions kept: the newest of all subjects (12). */
  readonly decisionLimit?: number;
  /**
   * Decisions kept per subject (default: decisionLimit, so the newest `decisionLimit` of all subjects
   * are always among them, even when one node made all of them). Fewer only for the log, which reads
   * every second and keeps its own record of what it has seen.
   */
  readonly decisionsPerSubject?: number;
  /**
   * Leave out the rows a write records before it is attempted (result `intended`): the row with its
   * outcome follows at once, and a screen has room for few rows.
   */
  readonly outcomesOnly?: boolean;
}

/**
 * A zone as the view shows it: the controller's state, limiter and queue, with size and unhealthy
 * counted from the API's nodes in the same frame, as upstream's handleDisruption counts them (nodes
 * with the exclude-disruption label left out; unhealthy: Ready missing or not True).
 */
export interface ZoneRow extends ZoneStatus {
  /**
   * What the controller's last committed pass counted, when it differs from the frame's count: the
   * pass that wrote the difference has not committed yet, or the next pass has still to see it. The
   * state is that pass's; the next one decides on what the API shows. Null when they agree.
   */
  readonly lastPass: { readonly size: number | null; readonly unhealthy: number | null } | null;
}

/**
 * The zone rows of one frame: every zone of the controller's status or of the API's nodes, counted
 * from the nodes. A zone the controller has not seen yet has no state; one whose nodes are all gone
 * has size 0.
 *
 * @example zoneRows(buildStatus(loaded, now).zones, nodeList.items)
 */
export function zoneRows(controller: readonly ZoneStatus[], nodes: readonly ApiNode[]): ZoneRow[] {
  const counts = new Map<string, { size: number; unhealthy: number }>();
  for (const node of nodes) {
    if (isNodeExcludedFromDisruptionChecks({ labels: node.metadata?.labels ?? {} })) continue;
    const zone = nodeZone(node);
    const count = counts.get(zone) ?? { size: 0, unhealthy: 0 };
    counts.set(zone, {
      size: count.size + 1,
      unhealthy: count.unhealthy + (readyOf(node) === 'True' ? 0 : 1),
    });
  }
  const byZone = new Map(controller.map((z) => [z.zone, z]));
  const zones = [...new Set([...byZone.keys(), ...counts.keys()])].sort(naturalCompare);
  return zones.map((zone): ZoneRow => {
    const seen = byZone.get(zone);
    const { size, unhealthy } = counts.get(zone) ?? { size: 0, unhealthy: 0 };
    const agrees = seen === undefined || (seen.size === size && seen.unhealthy === unhealthy);
    return {
      zone,
      state: seen?.state ?? null,
      limiter: seen?.limiter ?? null,
      queueLength: seen?.queueLength ?? 0,
      processedOnce: seen?.processedOnce ?? 0,
      size,
      unhealthy,
      unhealthyPercent: size === 0 ? 0 : Math.round((100 * unhealthy) / size),
      lastPass: agrees ? null : { size: seen.size, unhealthy: seen.unhealthy },
    };
  });
}

/** What the view reads of a Node (V1Node has it; tests need no class instances). */
export interface ApiNode {
  readonly metadata?: { readonly name?: string; readonly labels?: Record<string, string> };
  readonly status?: { readonly conditions?: readonly { readonly type: string; readonly status: string }[] };
}

function nodeZone(node: ApiNode): string {
  return zoneName(getZoneKey(node.metadata?.labels));
}

function readyOf(node: ApiNode): string | null {
  return node.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? null;
}

/**
 * The newest `limit` decisions of all subjects, newest first, in an order that does not change between
 * frames: time, then subject in natural order, then the stored id (newest first within a pass).
 *
 * @example newestDecisions([trailOfA1, trailOfA2, trailOfCluster], 12)
 */
export function newestDecisions(trails: readonly (readonly DecisionRow[])[], limit: number): DecisionRow[] {
  return trails
    .flat()
    .sort(
      (a, b) =>
        b.at - a.at || naturalCompare(a.subject, b.subject) || (a.key < b.key ? 1 : a.key > b.key ? -1 : 0),
    )
    .slice(0, limit);
}

function podRefOf(d: StoredDecision): string | null {
  const pod = podOfDecision(d);
  return pod === undefined ? null : formatPodRef(pod);
}

function toDecisionRow(d: StoredDecision): DecisionRow {
  return {
    at: d.at,
    subject: d.node,
    pod: podRefOf(d),
    source: d.source,
    what: d.what,
    result: d.result ?? null,
    why: d.why,
    key: `${d.node}#${d.id}`,
  };
}

/**
 * Reads snapshots; `read` never throws: a failure comes back as `error` with the previous data.
 *
 * @example
 * const reader = snapshotReader(source);
 * const snapshot = await reader.read(Date.now());
 */
export function snapshotReader(source: SnapshotSource): { read(now: EpochMillis): Promise<StackSnapshot> } {
  const core = source.kubeConfig.makeApiClient(CoreV1Api);
  const limit = source.decisionLimit ?? 12;
  const perSubject = source.decisionsPerSubject ?? limit;
  const keep = (d: StoredDecision): boolean =>
    source.outcomesOnly !== true || resultKind(d.result) !== 'intended';

  /**
   * A subject's newest `perSubject` kept decisions. Without `intended` rows, twice as many are read
   * (each intended row has its outcome row), more when writes are still in flight.
   */
  async function newestOf(subject: string): Promise<DecisionRow[]> {
    let asked = source.outcomesOnly === true ? 2 * perSubject : perSubject;
    for (;;) {
      const rows = await source.stores.decisions.query(source.cluster, subject, {
        limit: asked,
        newestFirst: true,
      });
      const kept = rows.filter(keep);
      if (kept.length >= perSubject || rows.length < asked || asked >= 8 * perSubject) {
        return kept.slice(0, perSubject).map(toDecisionRow);
      }
      asked *= 2;
    }
  }

  let previous: StackSnapshot = {
    at: 0,
    cluster: source.cluster,
    relay: { running: false, synced: false, nextSequence: null },
    functionsRunning: false,
    observedAt: null,
    digestAgeSeconds: null,
    digestLate: false,
    masterDisruption: false,
    zones: [],
    nodes: [],
    decisions: [],
    error: null,
  };

  async function read(now: EpochMillis): Promise<StackSnapshot> {
    const relay = source.relay();
    const functionsRunning = source.functionsRunning();
    try {
      const [nodeList, loaded] = await Promise.all([
        core.listNode(),
        source.stores.controllerState.load(source.cluster),
      ]);
      const status = buildStatus(loaded, now);
      const controllerView = new Map(status.nodes.map((n) => [n.name, n]));
      const nodes = nodeList.items
        .map((node): NodeRow => {
          const name = node.metadata?.name ?? '';
          const seen = controllerView.get(name);
          const eviction = seen?.eviction;
          return {
            name,
            zone: nodeZone(node),
            kubelet: source.kubeletState?.(name) ?? null,
            ready: readyOf(node),
            taints: (node.spec?.taints ?? []).map((t) =>
              isTaintEffect(t.effect)
                ? abbreviateTaint({
                    key: t.key,
                    effect: t.effect,
                    ...(t.value !== undefined && { value: t.value }),
                  })
                : `${t.key}:${t.effect}`,
            ),
            probe: seen?.probe ?? 'unknown',
            probeAgeSeconds: seen?.probeAgeSeconds ?? null,
            queuePosition:
              eviction === undefined ? null : (eviction.position ?? (eviction.processed ? 0 : null)),
          };
        })
        .sort((a, b) => naturalCompare(a.zone, b.zone) || naturalCompare(a.name, b.name));

      const subjects = [
        ...nodes.map((n) => n.name),
        ...[...loaded.state.zoneStates.keys()].map(zoneSubject),
        ClusterSubject,
      ];
      const decisions = newestDecisions(await Promise.all(subjects.map(newestOf)), limit);

      previous = {
        at: now,
        cluster: source.cluster,
        relay,
        functionsRunning,
        observedAt: loaded.meta.lastObservedAt ?? null,
        digestAgeSeconds: status.lastDigestAgeSeconds,
        digestLate: status.lastDigestLate === true,
        masterDisruption: loaded.meta.masterDisruption,
        zones: zoneRows(status.zones, nodeList.items),
        nodes,
        decisions,
        error: null,
      };
    } catch (error) {
      previous = {
        ...previous,
        at: now,
        relay,
        functionsRunning,
        error: error instanceof Error ? error.message : String(error),
      };
    }
    return previous;
  }

  return { read };
}

/** A change between two snapshots, as a log record. */
export interface SnapshotChange {
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * What changed from `before` to `after`: zone states, nodes' Ready and taints, kubelets, the relay,
 * new decisions. The `--no-ui` log lines.
 */
export function snapshotChanges(before: StackSnapshot | undefined, after: StackSnapshot): SnapshotChange[] {
  const changes: SnapshotChange[] = [];
  const zonesBefore = new Map(before?.zones.map((z) => [z.zone, z]));
  for (const zone of after.zones) {
    const was = zonesBefore.get(zone.zone);
    if (was?.state !== zone.state) {
      changes.push({
        message: 'zone state',
        fields: {
          zone: zone.zone,
          state: zone.state,
          was: was?.state ?? null,
          size: zone.size,
          unhealthy: zone.unhealthy,
        },
      });
    }
  }
  const nodesBefore = new Map(before?.nodes.map((n) => [n.name, n]));
  for (const node of after.nodes) {
    const was = nodesBefore.get(node.name);
    if (was === undefined) {
      if (before !== undefined)
        changes.push({ message: 'node added', fields: { node: node.name, zone: node.zone } });
      continue;
    }
    if (was.ready !== node.ready) {
      changes.push({ message: 'node Ready', fields: { node: node.name, ready: node.ready, was: was.ready } });
    }
    if (was.taints.join(',') !== node.taints.join(',')) {
      changes.push({
        message: 'node taints',
        fields: { node: node.name, taints: node.taints, was: was.taints },
      });
    }
    if (was.kubelet !== node.kubelet) {
      changes.push({
        message: 'kubelet',
        fields: { node: node.name, kubelet: node.kubelet, was: was.kubelet },
      });
    }
  }
  if (before !== undefined && before.relay.running !== after.relay.running) {
    changes.push({ message: after.relay.running ? 'relay started' : 'relay stopped', fields: {} });
  }
  if (before !== undefined && before.error !== after.error && after.error !== null) {
    changes.push({ message: 'reading the state failed', fields: { error: after.error } });
  }
  const seen = new Set(before?.decisions.map((d) => d.key));
  const oldest = before?.decisions.at(-1)?.at ?? Number.NEGATIVE_INFINITY;
  for (const decision of [...after.decisions].reverse()) {
    if (seen.has(decision.key) || decision.at < oldest) continue;
    changes.push({
      message: 'decision',
      fields: {
        at: new Date(decision.at).toISOString(),
        subject: decision.subject,
        ...(decision.pod !== null && { pod: decision.pod }),
        source: decision.source,
        what: decision.what,
        result: decision.result,
        why: decision.why,
      },
    });
  }
  return changes;
}
