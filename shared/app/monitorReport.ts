// What a monitor pass reports besides its summary line: upstream's metrics, and the decisions it made
// besides its cluster writes, for the Decisions trail (`nlc explain NODE`). The DecidingExecutor records
// every write itself (status updates, taint swaps, pods marked NotReady); the rest is read off the
// difference between the state before and after the pass, so the domain stays unaware of the trail.
// Subjects: the node, `#zone:<region:zone>` for zone states, `#cluster` for master disruption and
// observation gaps (formats: shared/decisionContract.ts).
import type { EvictionMode } from '../config.js';
import {
  ClusterSubject,
  massDecisionInputs,
  MassDecisionThreshold,
  zoneLabel,
  zoneStateInputs,
  zoneSubject,
} from '../decisionContract.js';
import type { ControllerState } from '../domain/controllerState.js';
import type { MonitorPassResult } from '../domain/monitorNodeHealth.js';
import type { Observer } from '../ports/observer.js';
import type { RateLimitedTimedQueue } from '../domain/rateLimitedTimedQueue.js';
import { getNodeCondition, NodeReady, type EpochMillis, type Node } from '../domain/types.js';
import { getZoneKey } from '../domain/zones.js';
import type { JsonValue, LoadedState } from '../ports/stores.js';
import type { DecisionDraft } from './decidedWrite.js';

function iso(ms: EpochMillis): string {
  return new Date(ms).toISOString();
}

/**
 * What the pass knew about a node when it decided: the Ready status it observed (the node cache, as the
 * relay last reported it), the one it had saved, the probe age against `now`, the zone and its state.
 */
export function nodeContext(
  before: ControllerState,
  node: Node | undefined,
  now: EpochMillis,
): Record<string, JsonValue> | undefined {
  if (node === undefined) return undefined;
  const zone = getZoneKey(node.labels);
  const health = before.nodeHealth.get(node.name);
  return {
    observedReady: getNodeCondition(node.conditions, NodeReady)?.status ?? 'none',
    zone: zoneLabel(zone),
    zoneState: before.zoneStates.get(zone) ?? 'Initial',
    ...(health !== undefined && {
      savedReady: getNodeCondition(health.status, NodeReady)?.status ?? 'none',
      lastProbe: iso(health.probeTimestamp),
      probeAgeSeconds: (now - health.probeTimestamp) / 1000,
    }),
  };
}

interface Membership {
  readonly queued: ReadonlySet<string>;
  readonly inSet: ReadonlySet<string>;
}

function membership(queue: RateLimitedTimedQueue | undefined): Membership {
  return { queued: new Set(queue?.queue.map((v) => v.value)), inSet: new Set(queue?.set) };
}

/** `names` by `key`, in the order each key first appears, each group in the order of `names`. */
function groupBy(names: readonly string[], key: (name: string) => string): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const name of names) {
    const k = key(name);
    const group = groups.get(k);
    if (group === undefined) groups.set(k, [name]);
    else group.push(name);
  }
  return groups;
}

/**
 * The decision `what` about each of `names`: a row under each node, its inputs `inputsOf` it; or, above
 * MassDecisionThreshold nodes, one mass decision per reason filed under `subject` (a zone, the cluster),
 * in rows of names with the `shared` inputs.
 */
function decisionsAbout(
  what: string,
  names: readonly string[],
  whyOf: (name: string) => string,
  mass: { readonly subject: string; readonly shared?: Readonly<Record<string, JsonValue>> },
  inputsOf?: (name: string) => Record<string, JsonValue>,
): DecisionDraft[] {
  if (names.length <= MassDecisionThreshold) {
    return names.map((node) => ({
      node,
      what,
      why: whyOf(node),
      ...(inputsOf !== undefined && { inputs: inputsOf(node) }),
    }));
  }
  return [...groupBy(names, whyOf)].flatMap(([why, group]) =>
    massDecisionInputs(group, mass.shared).map((inputs) => ({ node: mass.subject, what, why, inputs })),
  );
}

export interface PassDecisionsInput {
  readonly before: ControllerState;
  readonly pass: MonitorPassResult;
  readonly nodes: ReadonlyMap<string, Node>;
  readonly evictionMode: EvictionMode;
  readonly now: EpochMillis;
}

/**
 * The non-write decisions of a pass, in a stable order: registrations and removals, queue changes per
 * zone (enqueued / dequeued for NoExecute tainting, or for pod eviction in legacy mode), zone state
 * transitions, and master disruption entered or left. More than MassDecisionThreshold nodes of a zone
 * enqueued or dequeued in one pass (or removed from the cluster) are one decision filed under the zone
 * (the cluster), in rows of names (shared/decisionContract.ts), which `nlc explain NODE` reads back.
 */
export function passDecisions({
  before,
  pass,
  nodes,
  evictionMode,
  now,
}: PassDecisionsInput): DecisionDraft[] {
  const drafts: DecisionDraft[] = [];
  const removed = new Set(pass.removed);
  const ctx = (name: string): Record<string, JsonValue> => nodeContext(before, nodes.get(name), now) ?? {};

  for (const name of pass.registered) {
    drafts.push({
      node: name,
      what: 'register',
      why: 'monitorNodeHealth: node seen for the first time (RegisteredNode)',
      inputs: ctx(name),
    });
  }
  const forgetWhy =
    'monitorNodeHealth: node gone from the node cache (RemovingNode); its health and queue entries are dropped';
  drafts.push(...decisionsAbout('forget', pass.removed, () => forgetWhy, { subject: ClusterSubject }));

  const purpose = evictionMode === 'taint' ? 'NoExecute tainting' : 'pod eviction';
  const masterEnter = pass.disruption.masterDisruption === 'enter';
  const zones = [...new Set([...before.zoneQueues.keys(), ...pass.state.zoneQueues.keys()])].sort();
  for (const zone of zones) {
    const was = membership(before.zoneQueues.get(zone));
    const is = membership(pass.state.zoneQueues.get(zone));
    const zoneState = pass.state.zoneStates.get(zone) ?? before.zoneStates.get(zone) ?? 'Initial';
    const decidedReady = (name: string): { observed: string; decided: string; current: string } => {
      const readiness = pass.readiness.get(name);
      const observed = readiness?.observed.status ?? 'none';
      const current = readiness?.current?.status ?? 'none';
      return { observed, current, decided: pass.taintDecidedOn === 'current' ? current : observed };
    };
    const enqueued = [...is.queued].sort().filter((name) => !was.queued.has(name));
    const enqueueWhy = (name: string): string => {
      const { observed, decided } = decidedReady(name);
      return evictionMode === 'taint'
        ? `processTaintBaseEviction: ${pass.taintDecidedOn} Ready=${decided}: queued for NoExecute tainting, rate-limited in zone ${zoneLabel(zone)}`
        : `processNoTaintBaseEviction: Ready=${observed} for longer than podEvictionTimeout: queued for pod eviction, rate-limited in zone ${zoneLabel(zone)}`;
    };
    drafts.push(
      ...decisionsAbout(
        'enqueue',
        enqueued,
        enqueueWhy,
        {
          subject: zoneSubject(zone),
          shared: { zone: zoneLabel(zone), zoneState, queueLength: is.queued.size },
        },
        (name) => ({
          ...ctx(name),
          zoneState,
          currentReady: decidedReady(name).current,
          queueLength: is.queued.size,
        }),
      ),
    );
    const dequeued = [...new Set([...was.queued, ...was.inSet])]
      .sort()
      .filter((name) => !is.inSet.has(name) && !removed.has(name));
    const dequeueWhy = (name: string): string => {
      const { observed, decided } = decidedReady(name);
      return masterEnter
        ? `handleDisruption: entering master disruption mode: removed from ${purpose}`
        : evictionMode === 'taint'
          ? `markNodeAsReachable: ${pass.taintDecidedOn} Ready=${decided}: removed from ${purpose}`
          : `cancelPodEviction: observed Ready=${observed}: removed from ${purpose}`;
    };
    drafts.push(
      ...decisionsAbout(
        'dequeue',
        dequeued,
        dequeueWhy,
        { subject: zoneSubject(zone), shared: { zone: zoneLabel(zone), zoneState } },
        (name) => ({ ...ctx(name), wasQueued: was.queued.has(name) }),
      ),
    );
  }

  const gauges = new Map(pass.disruption.gauges.map((g) => [g.zone, g]));
  const qps = new Map(pass.disruption.limiterSwaps.map((s) => [s.zone, s.qps]));
  for (const { zone, from, to } of pass.disruption.transitions) {
    const gauge = gauges.get(zone);
    const rate = qps.get(zone);
    drafts.push({
      node: zoneSubject(zone),
      what: 'zoneState',
      why: `handleDisruption: zone ${zoneLabel(zone)} ${from} → ${to}`,
      inputs: zoneStateInputs({
        from,
        to,
        zoneSize: gauge?.zoneSize,
        unhealthyNodes: gauge?.unhealthyNodes,
        zoneHealthPercent:
          gauge !== undefined && Number.isFinite(gauge.zoneHealth) ? gauge.zoneHealth : undefined,
        evictionRate: rate,
      }),
    });
  }
  for (const zone of pass.disruption.removedZones) {
    drafts.push({
      node: zoneSubject(zone),
      what: 'zoneRemoved',
      why: `handleDisruption: no counted node is in zone ${zoneLabel(zone)} any more`,
    });
  }
  if (masterEnter) {
    drafts.push({
      node: ClusterSubject,
      what: 'masterDisruption',
      why: 'handleDisruption: every zone is FullDisruption: the control plane is more likely cut off than the nodes; evictions stop and NoExecute taints are lifted',
      inputs: { zones: zones.length },
    });
  }
  if (pass.disruption.masterDisruption === 'exit') {
    drafts.push({
      node: ClusterSubject,
      what: 'masterDisruption',
      why: 'handleDisruption: some zone is no longer FullDisruption: leaving master disruption mode; every node gets a fresh probe',
      inputs: { zones: zones.length },
    });
  }
  return drafts;
}

/**
 * Upstream's gauges and durations. Zone gauges go out when they changed or once a minute of relay time
 * (CloudWatch's standard resolution): every zone-labelled value is a log line of its own in EMF, 3 per
 * zone, so sending them on every 5 s pass would cost twelve times as much for the same graphs.
 * node_collector_update_node_health_duration_seconds is upstream's per-node histogram; an EMF
 * distribution per node would be one value per node per pass, so the mean per node of the pass is sent
 * instead (the pass time divided by the node count).
 */
export function reportMetrics(
  observer: Observer,
  loaded: LoadedState,
  pass: MonitorPassResult,
  m: { gapMs: number | undefined; passMs: number; nodes: number; now: EpochMillis; passMetrics: boolean },
): void {
  const last = loaded.meta.lastObservedAt;
  const newMinute = last === undefined || Math.floor(last / 60_000) !== Math.floor(m.now / 60_000);
  for (const gauge of pass.disruption.gauges) {
    const stored = loaded.zones.get(gauge.zone);
    const changed =
      stored === undefined ||
      stored.zoneSize !== gauge.zoneSize ||
      stored.unhealthyNodes !== gauge.unhealthyNodes ||
      !(
        stored.zoneHealth === gauge.zoneHealth ||
        (Number.isNaN(stored.zoneHealth) && Number.isNaN(gauge.zoneHealth))
      );
    if (!changed && !newMinute) continue;
    const zone = { zone: gauge.zone };
    if (Number.isFinite(gauge.zoneHealth))
      observer.metric('node_collector_zone_health', 'Percent', gauge.zoneHealth, zone);
    observer.metric('node_collector_zone_size', 'Count', gauge.zoneSize, zone);
    observer.metric('node_collector_unhealthy_nodes_in_zone', 'Count', gauge.unhealthyNodes, zone);
  }
  // A quiet pass sends none (one EMF document each, 12 a minute): the first pass of each minute and
  // every pass that changed or saw something do (summaryReason, monitorSteps.ts), so a digest gap over
  // two periods is always sent.
  if (!m.passMetrics) return;
  observer.metric('node_collector_update_all_nodes_health_duration_seconds', 'Seconds', m.passMs / 1000);
  if (m.nodes > 0) {
    observer.metric(
      'node_collector_update_node_health_duration_seconds',
      'Seconds',
      m.passMs / 1000 / m.nodes,
    );
  }
  if (m.gapMs !== undefined) observer.metric('nlc_observation_gap_seconds', 'Seconds', m.gapMs / 1000);
}
