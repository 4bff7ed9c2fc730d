// The `nlc status` report (`-o json|yaml` prints it as is: its field names are a public interface),
// built from one consistent load of the controller state. The live view of `npm start` shows the same
// report, so it lives apart from the command.
import { getNodeCondition, type EpochMillis, type ZoneState } from '../domain/types.js';
import { ownedByNodeController } from '../domain/taints.js';
import { getZoneKey, isNodeExcludedFromDisruptionChecks } from '../domain/zones.js';
import type { LoadedState } from '../ports/stores.js';
import { naturalCompare } from './names.js';
import { isoTime } from './output.js';
import {
  abbreviateTaint,
  limiterView,
  probeAge,
  probeAgeFields,
  queuePlaces,
  zoneName,
  type LimiterView,
  type ProbeAge,
} from './present.js';

export interface ZoneStatus {
  /** `region:zone`; "" for nodes without zone labels. */
  readonly zone: string;
  /** Upstream ZoneState; null when the zone has no counted node any more (its queue stays). */
  readonly state: ZoneState | null;
  /** Counted nodes (node_collector_zone_size); null before the first pass that counted the zone. */
  readonly size: number | null;
  /** Not-ready counted nodes (node_collector_unhealthy_nodes_in_zone). */
  readonly unhealthy: number | null;
  /** unhealthy / size, in percent (0–100, rounded). */
  readonly unhealthyPercent: number | null;
  readonly limiter: LimiterView | null;
  /** Nodes waiting in the zone's NoExecute tainting queue (zonePodEvictor in legacy mode). */
  readonly queueLength: number;
  /** Nodes in the processed-once set only (tainted, or evicted in legacy mode). */
  readonly processedOnce: number;
}

export interface NodeEvictionView {
  /** 1-based place in the zone queue, null when not queued. */
  readonly position: number | null;
  /** When the queue will process it (the functions' clock). */
  readonly processAt: string | null;
  /** In the processed-once set without being queued: already processed. */
  readonly processed: boolean;
  /** Legacy mode only (upstream nodeEvictionMap): unmarked, toBeEvicted, evicted. */
  readonly status: string | null;
}

export interface NodeStatus {
  readonly name: string;
  readonly uid: string | null;
  readonly zone: string;
  /** Ready as the monitor last saved it (the health row), not as the kubelet last posted it. */
  readonly ready: string | null;
  /**
   * Upstream's readyTransitionTimestamp: when the controller saw Ready change, on its clock. Its own
   * Unknown mark is seen in the pass that writes it; a kubelet's change at the next pass, up to a
   * monitor period after the condition's own lastTransitionTime (what the API shows).
   */
  readonly readyTransition: string | null;
  /** The taints this controller owns, abbreviated (`unreachable:NoExecute`). */
  readonly taints: readonly string[];
  /** Every taint on the node copy the controller holds. */
  readonly allTaints: readonly { key: string; value?: string; effect: string; timeAdded?: string | null }[];
  /** The last probe the controller stored (moved onto the functions' clock; only stored when it decides, see probeAge). */
  readonly probeTime: string | null;
  /**
   * How long the node has been silent as the controller sees it (present.ts probeAge): the last
   * digest's observedAt minus probeTime, for a node it holds Ready=Unknown; null otherwise.
   */
  readonly probeAgeSeconds: number | null;
  /** `silent` (probeAgeSeconds is its age), `live` (heard from within the grace period), `unknown`. */
  readonly probe: ProbeAge['kind'];
  readonly leaseRenewTime: string | null;
  readonly eviction: NodeEvictionView;
  /** node.kubernetes.io/exclude-disruption: not counted in zone health. */
  readonly excluded: boolean;
  /** Registered by the controller (RegisteredNode recorded). */
  readonly registered: boolean;
  /** In nodesToRetry (MarkPodsNotReady to retry). */
  readonly retry: boolean;
  /** Gone from the node cache; the controller still holds its health until its next pass. */
  readonly deleted: boolean;
}

export interface StatusReport {
  readonly cluster: string;
  /**
   * The last Heartbeat Digest processed: its observedAt on the functions' clock (the relay's, moved by
   * its term's offset: docs/architecture.md#digest-time) and sequence.
   */
  readonly observedAt: string | null;
  readonly lastSequence: number | null;
  /**
   * Seconds since that digest was committed: the reader's clock against the committing function's, as
   * the schedule's nlc_observation_gap_seconds. A monitor period or so while the relay runs; growing
   * while it is down (no node is marked Unknown meanwhile: docs/architecture.md#observation-gap).
   */
  readonly lastDigestAgeSeconds: number | null;
  /**
   * That age is more than the grace period the monitor runs with (as stored with the digest): the
   * controller is blind, as upstream's would be with its informers stalled. Null when either is unknown.
   */
  readonly lastDigestLate: boolean | null;
  readonly nodeMonitorGracePeriodSeconds: number | null;
  /** The relay term whose digests are accepted (`relayId@leaderSince`), and whether its Lease vouched for it. */
  readonly relayTerm: string | null;
  readonly relayTermVerified: boolean | null;
  /**
   * Digests refused (a deposed leader's, a forged one, a clock beyond tolerance: shared/digestClock.ts),
   * the last one's reason, and how long ago (the reader's clock against the refusing function's).
   */
  readonly refusedDigests: number;
  readonly lastRefusal: string | null;
  readonly lastRefusalAgeSeconds: number | null;
  readonly relayLastSeen: string | null;
  /** The upstream minor the monitor emulates, whether it runs in shadow mode, the API server's /version. */
  readonly emulationVersion: string | null;
  readonly mode: 'shadow' | 'active' | null;
  readonly clusterVersion: string | null;
  readonly masterDisruption: boolean;
  readonly zones: readonly ZoneStatus[];
  readonly nodes: readonly NodeStatus[];
}

/**
 * The report from one consistent load of the controller state. `now` is the reader's wall clock: the
 * limiters' tokens are shown at it, since they refill on the functions' clock.
 */
export function buildStatus(loaded: LoadedState, now: EpochMillis): StatusReport {
  const { state, meta } = loaded;
  // The limiters refill on the functions' clock, which the reader's is taken for.
  const relayNow = now;
  const places = queuePlaces(state.zoneQueues);
  const zoneKeys = [
    ...new Set([...state.zoneStates.keys(), ...loaded.zones.keys(), ...state.zoneQueues.keys()]),
  ];
  const zones = zoneKeys
    .map((key): ZoneStatus => {
      const gauge = loaded.zones.get(key);
      const queue = state.zoneQueues.get(key);
      const queued = new Set(queue?.queue.map((v) => v.value));
      return {
        zone: zoneName(key),
        state: state.zoneStates.get(key) ?? null,
        size: gauge?.zoneSize ?? null,
        unhealthy: gauge?.unhealthyNodes ?? null,
        unhealthyPercent:
          gauge === undefined
            ? null
            : gauge.zoneSize === 0
              ? 0
              : Math.round((100 * gauge.unhealthyNodes) / gauge.zoneSize),
        limiter: queue === undefined ? null : limiterView(queue.limiter, relayNow),
        queueLength: queue?.queue.length ?? 0,
        processedOnce: queue?.set.filter((name) => !queued.has(name)).length ?? 0,
      };
    })
    .sort((a, b) => naturalCompare(a.zone, b.zone));

  const names = [
    ...new Set([...loaded.nodes.keys(), ...state.knownNodes.keys(), ...state.nodeHealth.keys()]),
  ].sort(naturalCompare);
  const nodes = names.map((name): NodeStatus => {
    const node = loaded.nodes.get(name);
    const health = state.nodeHealth.get(name);
    const place = places.get(name);
    const probe = health?.probeTimestamp;
    const ready = health === undefined ? null : (getNodeCondition(health.status, 'Ready')?.status ?? null);
    const age = probeAge({ probeTime: probe, ready }, meta.lastObservedAt);
    return {
      name,
      uid: node?.uid ?? state.knownNodes.get(name) ?? null,
      zone:
        node === undefined
          ? place === undefined
            ? ''
            : zoneName(place.zone)
          : zoneName(getZoneKey(node.labels)),
      ready,
      readyTransition: isoTime(health?.readyTransitionTimestamp),
      taints: (node?.taints ?? []).filter(ownedByNodeController).map(abbreviateTaint),
      allTaints: (node?.taints ?? []).map((t) => ({
        key: t.key,
        ...(t.value !== undefined && { value: t.value }),
        effect: t.effect,
        ...(t.timeAdded !== undefined && { timeAdded: isoTime(t.timeAdded) }),
      })),
      probeTime: isoTime(probe),
      ...probeAgeFields(age),
      leaseRenewTime: isoTime(health?.lease?.renewTime),
      eviction: {
        position: place?.position ?? null,
        processAt: isoTime(place?.processAt ?? undefined),
        processed: place !== undefined && place.position === null,
        status: state.nodeEvictionStatus.get(name) ?? null,
      },
      excluded: node !== undefined && isNodeExcludedFromDisruptionChecks(node),
      registered: state.knownNodes.has(name),
      retry: state.nodesToRetry.has(name),
      deleted: node === undefined,
    };
  });

  const ageMs = meta.committedAt === undefined ? undefined : Math.max(0, now - meta.committedAt);
  const grace = meta.nodeMonitorGracePeriodMs;
  return {
    cluster: loaded.cluster,
    observedAt: isoTime(meta.lastObservedAt),
    lastSequence: meta.lastSequence ?? null,
    lastDigestAgeSeconds: ageMs === undefined ? null : Math.round(ageMs / 1000),
    lastDigestLate: ageMs === undefined || grace === undefined ? null : ageMs > grace,
    nodeMonitorGracePeriodSeconds: grace === undefined ? null : grace / 1000,
    relayTerm:
      meta.lastRelayId === undefined || meta.lastLeaderSince === undefined
        ? null
        : `${meta.lastRelayId}@${isoTime(meta.lastLeaderSince) ?? ''}`,
    relayTermVerified: meta.termVerified ?? null,
    refusedDigests: meta.refusedDigests ?? 0,
    lastRefusal: meta.lastRefusal ?? null,
    lastRefusalAgeSeconds:
      meta.lastRefusedAt === undefined ? null : Math.round(Math.max(0, now - meta.lastRefusedAt) / 1000),
    relayLastSeen: isoTime(meta.relayLastSeen),
    emulationVersion: meta.emulationVersion ?? null,
    mode: meta.dryRun === undefined ? null : meta.dryRun ? 'shadow' : 'active',
    clusterVersion: meta.clusterVersion ?? null,
    masterDisruption: meta.masterDisruption,
    zones,
    nodes,
  };
}
