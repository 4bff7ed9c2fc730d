// Zones: port of upstream's zone handling in the NodeLifecycleController.
//   - getZoneKey: GetZoneKey (staging/src/k8s.io/component-helpers/node/topology/helpers.go)
//   - isNodeExcludedFromDisruptionChecks, ComputeZoneState, ReducedQPSFunc, HealthyQPSFunc,
//     setLimiterInZone, handleDisruption: pkg/controller/nodelifecycle/node_lifecycle_controller.go
//   - createZoneID: testutil.CreateZoneID (pkg/controller/testutil/test_utils.go)
// What differs: upstream mutates nc.zoneStates, swaps limiters on its zone queues, calls
// markNodeAsReachable on every node and resets nodeHealthMap itself. Here handleDisruption is a
// pure function that returns the new zone states plus what the caller must do (limiter swaps,
// master-disruption entry/exit, gauge values). Zones are visited in sorted key order instead of
// Go's random map order; each zone is handled on its own, so only the order of the lists changes.
import type { ControllerConfig } from '../ports/config.js';
import type { Node, NodeCondition, ZoneState } from './types.js';

/** Deprecated zone label; upstream's GetZoneKey still prefers it (docs/upstream.md#quirk-12). */
export const LabelZoneFailureDomain = 'failure-domain.beta.kubernetes.io/zone';
export const LabelZoneRegion = 'failure-domain.beta.kubernetes.io/region';
export const LabelTopologyZone = 'topology.kubernetes.io/zone';
export const LabelTopologyRegion = 'topology.kubernetes.io/region';
/** Presence (any value, even "") removes a node from the zone-health arithmetic only. */
export const LabelNodeExcludeDisruption = 'node.kubernetes.io/exclude-disruption';

// A NUL between region and zone keeps "a:b" + "c" apart from "a" + "b:c"; upstream assumes neither
// label contains a NUL.
const zoneKeySeparator = ':\x00:';

function labelIfPresent(labels: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}

/**
 * upstream GetZoneKey: a string unique per failure zone, "" for no zone. The beta label wins
 * whenever it is present, even with an empty value; the topology label is read only when the beta
 * label is absent. `undefined` stands for upstream's nil label map.
 *
 * @example getZoneKey({ 'topology.kubernetes.io/region': 'r1', 'topology.kubernetes.io/zone': 'z1' }) // 'r1:\x00:z1'
 */
export function getZoneKey(labels: Readonly<Record<string, string>> | undefined): string {
  if (labels === undefined) return '';
  // A node's labels are immutable: the key is computed once per labels object. Passes look it up
  // several times per node; the same string each time also hashes once as a Map key.
  let key = zoneKeys.get(labels);
  if (key === undefined) {
    key = computeZoneKey(labels);
    zoneKeys.set(labels, key);
  }
  return key;
}

const zoneKeys = new WeakMap<Readonly<Record<string, string>>, string>();

function computeZoneKey(labels: Readonly<Record<string, string>>): string {
  const zone = labelIfPresent(labels, LabelZoneFailureDomain) ?? labels[LabelTopologyZone] ?? '';
  const region = labelIfPresent(labels, LabelZoneRegion) ?? labels[LabelTopologyRegion] ?? '';
  if (region === '' && zone === '') return '';
  return region + zoneKeySeparator + zone;
}

/** testutil.CreateZoneID: the zone key for (region, zone), with no empty-key special case. */
export function createZoneID(region: string, zone: string): string {
  return region + zoneKeySeparator + zone;
}

/** A zone key for humans: 'region:zone' ('' stays ''). Not a key: it loses the NUL separator. */
export function formatZoneKey(key: string): string {
  return key.replace(zoneKeySeparator, ':');
}

/** upstream isNodeExcludedFromDisruptionChecks: the label's presence is enough (the old name-based master check is gone). */
export function isNodeExcludedFromDisruptionChecks(node: Pick<Node, 'labels'>): boolean {
  return Object.hasOwn(node.labels, LabelNodeExcludeDisruption);
}

/**
 * upstream ComputeZoneState. A zone is
 * - FullDisruption if it has no Ready node (and at least one node),
 * - PartialDisruption if more than 2 nodes are not Ready and they are at least
 *   `unhealthyZoneThreshold` of the zone,
 * - Normal otherwise.
 * A missing Ready condition (`undefined`, upstream nil) counts as not ready.
 */
export function computeZoneState(
  readyConditions: readonly (NodeCondition | undefined)[],
  unhealthyZoneThreshold: number,
): { notReadyNodes: number; state: ZoneState } {
  let readyNodes = 0;
  let notReadyNodes = 0;
  for (const condition of readyConditions) {
    if (condition?.status === 'True') readyNodes++;
    else notReadyNodes++;
  }
  if (readyNodes === 0 && notReadyNodes > 0) return { notReadyNodes, state: 'FullDisruption' };
  // Upstream divides and compares in float32 (unhealthyZoneThreshold is a float32 flag), so a
  // threshold just above a ratio can round onto it. Both operands are exact float32 integers, so
  // rounding the float64 quotient once more gives the float32 quotient.
  if (
    notReadyNodes > 2 &&
    Math.fround(Math.fround(notReadyNodes) / Math.fround(notReadyNodes + readyNodes)) >=
      Math.fround(unhealthyZoneThreshold)
  ) {
    return { notReadyNodes, state: 'PartialDisruption' };
  }
  return { notReadyNodes, state: 'Normal' };
}

export type ZoneQPSConfig = Pick<
  ControllerConfig,
  'nodeEvictionRate' | 'secondaryNodeEvictionRate' | 'largeClusterSizeThreshold'
>;
export type DisruptionConfig = ZoneQPSConfig & Pick<ControllerConfig, 'unhealthyZoneThreshold'>;

/**
 * upstream ReducedQPSFunc: in a large zone evict more slowly, in a small one stop evicting.
 * "Large" compares the ZONE size, strictly, with the threshold (issue #102908).
 */
export function reducedQPSFunc(zoneSize: number, config: ZoneQPSConfig): number {
  return zoneSize > config.largeClusterSizeThreshold ? config.secondaryNodeEvictionRate : 0;
}

/** upstream HealthyQPSFunc: the normal rate; it takes the size only to match ReducedQPSFunc. */
export function healthyQPSFunc(_zoneSize: number, config: ZoneQPSConfig): number {
  return config.nodeEvictionRate;
}

/** upstream's enterPartialDisruptionFunc / enterFullDisruptionFunc fields, which tests override. */
export interface DisruptionQPSFuncs {
  enterPartialDisruptionFunc(zoneSize: number): number;
  enterFullDisruptionFunc(zoneSize: number): number;
}

/**
 * Upstream's wiring: PartialDisruption uses the reduced rate; FullDisruption of one zone keeps the
 * NORMAL rate (only "every zone is Full" stops evictions; issues #70501, #110114, #131314).
 */
export function defaultDisruptionQPSFuncs(config: ZoneQPSConfig): DisruptionQPSFuncs {
  return {
    enterPartialDisruptionFunc: (zoneSize) => reducedQPSFunc(zoneSize, config),
    enterFullDisruptionFunc: (zoneSize) => healthyQPSFunc(zoneSize, config),
  };
}

/**
 * upstream setLimiterInZone: the QPS to SwapLimiter the zone's queue to for `state`, or undefined
 * for Initial (upstream's switch has no case for it, so the limiter is left alone).
 */
export function setLimiterInZone(
  zoneSize: number,
  state: ZoneState,
  config: Pick<ControllerConfig, 'nodeEvictionRate'>,
  funcs: DisruptionQPSFuncs,
): number | undefined {
  switch (state) {
    case 'Normal':
      return config.nodeEvictionRate;
    case 'PartialDisruption':
      return funcs.enterPartialDisruptionFunc(zoneSize);
    case 'FullDisruption':
      return funcs.enterFullDisruptionFunc(zoneSize);
    case 'Initial':
      return undefined;
  }
}

/** The node_collector_zone_size, zone_health (percent healthy) and unhealthy_nodes_in_zone gauges. */
export interface ZoneGauge {
  zone: string;
  zoneSize: number;
  zoneHealth: number;
  unhealthyNodes: number;
}

export interface DisruptionResult {
  /** The new zone states (upstream nc.zoneStates after the pass). */
  zoneStates: ReadonlyMap<string, ZoneState>;
  /** SwapLimiter calls, in order; qps 0 means the never-limiter. */
  limiterSwaps: readonly { zone: string; qps: number }[];
  /**
   * enter: the caller must markNodeAsReachable on ALL nodes (excluded ones too).
   * exit: the caller resets probeTimestamp and readyTransitionTimestamp of every listed node to now.
   * stay / none: nothing more to do.
   */
  masterDisruption: 'none' | 'enter' | 'exit' | 'stay';
  /** Every zone whose state value changed, Initial→X included; removed zones are not listed. */
  transitions: readonly { zone: string; from: ZoneState; to: ZoneState }[];
  /** Zones deleted from zoneStates because no counted node is in them this pass. */
  removedZones: readonly string[];
  /** Gauge values to set: computed ones for every counted zone, then (0, 100, 0) for removed zones. */
  gauges: readonly ZoneGauge[];
}

function sortedKeys<V>(map: ReadonlyMap<string, V>): string[] {
  return [...map.keys()].sort();
}

function byZone<V>([a]: readonly [string, V], [b]: readonly [string, V]): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * upstream handleDisruption. `zoneToNodeConditions` holds, per zone, the current Ready condition of
 * every node that is not excluded and whose health update succeeded this pass (upstream never
 * creates an empty list). `zoneStates` is the state before the pass, with the Initial entries
 * addPodEvictorForNewZone added.
 */
export function handleDisruption(
  zoneStates: ReadonlyMap<string, ZoneState>,
  zoneToNodeConditions: ReadonlyMap<string, readonly (NodeCondition | undefined)[]>,
  config: DisruptionConfig,
  funcs: DisruptionQPSFuncs = defaultDisruptionQPSFuncs(config),
): DisruptionResult {
  const known = new Map(zoneStates);
  const newZoneStates = new Map<string, ZoneState>();
  const gauges: ZoneGauge[] = [];
  let allAreFullyDisrupted = true;
  for (const zone of sortedKeys(zoneToNodeConditions)) {
    const conditions = zoneToNodeConditions.get(zone) ?? [];
    const { notReadyNodes, state } = computeZoneState(conditions, config.unhealthyZoneThreshold);
    // Float division as upstream's; NaN for an empty list, which upstream cannot produce.
    const zoneHealth = (100 * (conditions.length - notReadyNodes)) / conditions.length;
    gauges.push({ zone, zoneSize: conditions.length, zoneHealth, unhealthyNodes: notReadyNodes });
    if (state !== 'FullDisruption') allAreFullyDisrupted = false;
    newZoneStates.set(zone, state);
    // Upstream logs this at Error level ("Setting initial state for unseen zone"): normally
    // addPodEvictorForNewZone has already added the zone.
    if (!known.has(zone)) known.set(zone, 'Initial');
  }

  // Deviation: upstream walks zoneStates in random map order, deletes absent zones as it meets them
  // and stops at the first present zone that is not Full, so which absent zones go in this pass is
  // random; we delete all of them, which is one of upstream's possible outcomes and keeps passes
  // reproducible (see docs/upstream-deviations.md). allWasFullyDisrupted is the same either way.
  const removedZones = sortedKeys(known).filter((zone) => !zoneToNodeConditions.has(zone));
  for (const zone of removedZones) gauges.push({ zone, zoneSize: 0, zoneHealth: 100, unhealthyNodes: 0 });
  // From here on the zones are exactly those of zoneToNodeConditions, in sorted order (also in the result).
  const states = new Map([...known].filter(([zone]) => zoneToNodeConditions.has(zone)).sort(byZone));
  const zones = [...states.keys()];
  const allWasFullyDisrupted = zones.every((zone) => states.get(zone) === 'FullDisruption');

  const limiterSwaps: { zone: string; qps: number }[] = [];
  const transitions: { zone: string; from: ZoneState; to: ZoneState }[] = [];
  const moveTo = (zone: string, to: ZoneState): void => {
    const from = states.get(zone) ?? 'Initial';
    if (from !== to) transitions.push({ zone, from, to });
    states.set(zone, to);
  };
  const swapForState = (zone: string, state: ZoneState): void => {
    const qps = setLimiterInZone(zoneToNodeConditions.get(zone)?.length ?? 0, state, config, funcs);
    if (qps !== undefined) limiterSwaps.push({ zone, qps });
  };
  const result = (masterDisruption: DisruptionResult['masterDisruption']): DisruptionResult => ({
    zoneStates: states,
    limiterSwaps,
    masterDisruption,
    transitions,
    removedZones,
    gauges,
  });
  // Every zone's new state is set in the loops below; computeZoneState never yields Initial.
  const newStateOf = (zone: string): ZoneState => newZoneStates.get(zone) ?? 'Initial';

  // Every zone was and is fully disrupted: stay in master disruption mode, change nothing.
  // With an empty zoneToNodeConditions (no counted node at all, e.g. only excluded nodes) both flags
  // stay vacuously true and every zone was just removed, so upstream takes this same early return:
  // it neither enters nor exits master disruption, and the next pass starts from no zones.
  if (allAreFullyDisrupted && allWasFullyDisrupted) return result('stay');

  if (allAreFullyDisrupted) {
    // Entering master disruption mode ("all Nodes are not-Ready"): stop all evictions. The caller
    // strips the not-ready/unreachable NoExecute taints from every node (markNodeAsReachable).
    for (const zone of zones) limiterSwaps.push({ zone, qps: 0 });
    for (const zone of zones) moveTo(zone, 'FullDisruption');
    return result('enter');
  }

  if (allWasFullyDisrupted) {
    // Exiting master disruption mode ("some Nodes are Ready"): the caller gives every node a fresh
    // probe, and every zone's limiter is reset for its new state, changed or not.
    for (const zone of zones) {
      swapForState(zone, newStateOf(zone));
      moveTo(zone, newStateOf(zone));
    }
    return result('exit');
  }

  // At least one zone is not fully disrupted: default limiter behaviour, only for changed zones.
  for (const zone of zones) {
    if (states.get(zone) === newStateOf(zone)) continue;
    swapForState(zone, newStateOf(zone));
    moveTo(zone, newStateOf(zone));
  }
  return result('none');
}
