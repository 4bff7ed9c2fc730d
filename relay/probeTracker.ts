// The relay's probe tracker: which node was last heard from, and when, on the relay's clock.
//
// A probe is upstream's "the node is alive" signal (tryUpdateNodeHealth's probeTimestamp): its node
// Lease's renewTime advanced, or its Ready condition's lastHeartbeatTime changed. The relay records the
// instant it *observed* the probe (its own `now`), never the kubelet's timestamps, so the functions
// compare probes with the digest's observedAt on one clock (docs/architecture.md#one-clock-per-comparison).
// Every nodeMonitorPeriod the relay sends the whole table as a Heartbeat Digest (buildDigest), so a lost
// digest loses nothing.
//
// The first sighting of a node or lease is a baseline, not a probe: the kubelet's timestamps cannot be
// compared with the relay's clock, and a dead node must not look alive because a relay restarted.
// When a node becomes known, pass its cached Lease to observeLease at once so the baseline is set
// without waiting for a renewal.
//
// Deviation from the house style (values, not mutation): the tracker is mutated in place. With 5,000
// nodes renewing every 10 s the relay handles 500 observations a second; copying a 5,000-entry map on
// each would cost more than the relay's whole CPU budget (docs/architecture.md#budgets). The functions stay
// deterministic: no I/O, no clock, `now` is an argument.
//
// For upstream's lease circuit breaker (KEP-5647) the digest also names, for each node going silent,
// the resourceVersion of the Lease the relay last saw (leaseVersions): the functions read the Lease live
// before marking the node Unknown, and a different version means the relay's view is stale.
import { getNodeCondition, NodeReady, type EpochMillis, type Node } from '../shared/domain/types.js';
import type { HeartbeatDigest } from '../shared/events.js';
import { isResourceVersion } from '../shared/eventPrimitives.js';
import { LeaseVersionsAfterMs } from '../shared/heartbeatDigestWire.js';
import { nodeFingerprint } from '../shared/nodeFingerprint.js';

export interface TrackedNode {
  /** The newest Lease spec.renewTime seen (kubelet clock). */
  leaseRenewTime?: EpochMillis;
  /** The Ready condition's lastHeartbeatTime last seen (kubelet clock). */
  readyHeartbeatTime?: EpochMillis;
  /** Relay-clock instant of the last observed probe; never moves back. Undefined before the first. */
  probedAt?: EpochMillis;
  /** The fingerprint of the relay's current copy of the node (shared/nodeFingerprint.ts). */
  fingerprint: string;
  /** metadata.resourceVersion of the node's Lease as last seen (whatever its renewTime). */
  leaseResourceVersion?: string;
  /** The node's Ready condition was `Unknown` when last seen (marked: nothing left to confirm). */
  readyUnknown: boolean;
  /** The node's Ready condition was not `True` (or absent) when last seen: the passes act on it. */
  notReady: boolean;
}

/** One entry per node currently known (seen by observeNodeStatus and not forgotten): bounded memory. */
export interface ProbeTracker {
  readonly nodes: Map<string, TrackedNode>;
  /**
   * Counts the changes the functions act on in a pass: a node added or forgotten, its copy's
   * fingerprint or its readiness changed. The digest loop compares it with its value at the last
   * digest sent (digestUrgency).
   */
  changes: number;
}

/** What an observation did: recorded a probe, set a baseline, nothing, or ignored an unknown node. */
export type ProbeObservation = 'probe' | 'baseline' | 'unchanged' | 'unknownNode';

export function newProbeTracker(): ProbeTracker {
  return { nodes: new Map(), changes: 0 };
}

function recordProbe(entry: TrackedNode, now: EpochMillis): 'probe' {
  // A relay clock stepped back must not move a probe back: consumers treat a later probe as a renewal.
  entry.probedAt = entry.probedAt === undefined ? now : Math.max(entry.probedAt, now);
  return 'probe';
}

/**
 * A node from the node informer (add or update). The node becomes known; a changed Ready
 * lastHeartbeatTime is a probe (upstream compares the saved and current heartbeat for inequality).
 * The controller's own writes keep the heartbeat, so marking a node Unknown is never a probe.
 */
export function observeNodeStatus(tracker: ProbeTracker, node: Node, now: EpochMillis): ProbeObservation {
  const ready = getNodeCondition(node.conditions, NodeReady);
  const heartbeat = ready?.lastHeartbeatTime;
  const readyUnknown = ready?.status === 'Unknown';
  const notReady = ready?.status !== 'True';
  const entry = tracker.nodes.get(node.name);
  const fingerprint = nodeFingerprint(node);
  if (entry === undefined) {
    tracker.changes++;
    tracker.nodes.set(
      node.name,
      heartbeat === undefined
        ? { fingerprint, readyUnknown, notReady }
        : { readyHeartbeatTime: heartbeat, fingerprint, readyUnknown, notReady },
    );
    return 'baseline';
  }
  if (entry.fingerprint !== fingerprint || entry.notReady !== notReady) tracker.changes++;
  entry.fingerprint = fingerprint;
  entry.readyUnknown = readyUnknown;
  entry.notReady = notReady;
  if (heartbeat === entry.readyHeartbeatTime) return 'unchanged';
  entry.readyHeartbeatTime = heartbeat;
  // The Ready condition (or its heartbeat) disappearing is not a sign of life.
  return heartbeat === undefined ? 'unchanged' : recordProbe(entry, now);
}

/**
 * A node Lease from the lease informer. Only a renewTime later than the newest seen is a probe, as
 * upstream's `savedLease.Spec.RenewTime.Before(observedLease.Spec.RenewTime)`; an earlier one (a
 * kubelet clock stepped back) is ignored and not saved, as upstream does. Leases of nodes not known
 * yet are ignored, which keeps the tracker bounded by the node count. The Lease's `resourceVersion` is
 * kept whatever the observation: the informer delivers each Lease's versions in order, so the last
 * seen is the newest, and it is what the functions compare with a live read (leaseVersions).
 */
export function observeLease(
  tracker: ProbeTracker,
  nodeName: string,
  renewTime: EpochMillis | undefined,
  now: EpochMillis,
  resourceVersion?: string,
): ProbeObservation {
  const entry = tracker.nodes.get(nodeName);
  if (entry === undefined) return 'unknownNode';
  entry.leaseResourceVersion = resourceVersion === '' ? undefined : resourceVersion;
  if (renewTime === undefined) return 'unchanged';
  if (entry.leaseRenewTime === undefined) {
    entry.leaseRenewTime = renewTime;
    return 'baseline';
  }
  if (renewTime <= entry.leaseRenewTime) return 'unchanged';
  entry.leaseRenewTime = renewTime;
  return recordProbe(entry, now);
}

/** The node was deleted: drop everything about it (a node re-created with the name starts afresh). */
export function forgetNode(tracker: ProbeTracker, nodeName: string): boolean {
  const forgotten = tracker.nodes.delete(nodeName);
  if (forgotten) tracker.changes++;
  return forgotten;
}

/** Why the next digest cannot wait for the quiet period (digestUrgency). */
export type DigestUrgency = 'nodeChanged' | 'nodeNotReady' | 'nodeSilent' | 'nodeUnprobed';

/**
 * Whether the functions' next pass has anything to do sooner than the quiet period: a change since the
 * last digest sent (`changesSent`: tracker.changes then), a node not Ready (its taints, queues and zone
 * state are the passes' work), a node without a renewal for LeaseVersionsAfterMs (going silent: from
 * then on the functions must see it every nodeMonitorPeriod, as upstream's loop does), or one never
 * probed. Undefined: every node is Ready and renewing, and nothing changed. Pure.
 */
export function digestUrgency(
  tracker: ProbeTracker,
  now: EpochMillis,
  changesSent: number,
): DigestUrgency | undefined {
  if (tracker.changes !== changesSent) return 'nodeChanged';
  const silentSince = now - LeaseVersionsAfterMs;
  for (const entry of tracker.nodes.values()) {
    if (entry.notReady) return 'nodeNotReady';
    if (entry.probedAt === undefined) return 'nodeUnprobed';
    if (entry.probedAt <= silentSince) return 'nodeSilent';
  }
  return undefined;
}

export interface DigestIdentity {
  readonly cluster: string;
  /** The relay instance (its leader-election identity). */
  readonly relayId: string;
  /** Relay-clock instant this relay became leader: the leadership term. */
  readonly leaderSince: EpochMillis;
  /** 0, 1, 2, … within the term. */
  readonly sequence: number;
  /** The relay's clock now: the digest's time and the functions' `now`. */
  readonly observedAt: EpochMillis;
  /**
   * Since when this relay has observed the node Leases (its lease informer's first list). Before that
   * it saw nothing, so the functions do not hold a node's silence before then against it: upstream
   * gives every node a fresh probe when its controller starts.
   */
  readonly observingSince: EpochMillis;
  /**
   * The resourceVersion the lease informer has synced up to (its Reflector's status().resourceVersion);
   * '' or undefined before its first list, and then left out of the digest (as is one over 64
   * characters, which the contract cannot carry).
   */
  readonly leaseResourceVersion?: string;
  /** The relay's quiet period, when it has one longer than nodeMonitorPeriod (digestLoop.ts). */
  readonly quietPeriodMs?: number;
}

/**
 * The whole probe table as one Heartbeat Digest (part 0 of 1; split it with splitDigest). A node with a
 * baseline (a Lease or a Ready heartbeat seen) but no probe observed yet is sent as probed at
 * `observingSince`: this relay cannot tell when it was last alive before it started watching, and
 * upstream gives every node a fresh probe when its controller starts (a relay restart or an outage
 * must not make a healthy node look silent). A node with neither (a kubelet that never came up) is left
 * out: the functions keep the probe they have, as upstream keeps the creation time. A probe later than
 * observedAt (the relay clock stepped back) is sent as observedAt, since ages cannot be negative. Every
 * known node's fingerprint goes along, probed or not, so the functions can tell a stale copy.
 *
 * A node whose probe (as sent) is LeaseVersionsAfterMs or more before observedAt, whose Lease's
 * resourceVersion the relay has seen and whose Ready it has not seen Unknown (once marked there is
 * nothing left to confirm) also gets that version in `leaseVersions`: the nodes the functions may be
 * about to mark. None in steady state, so the digest stays its size.
 */
export function buildDigest(tracker: ProbeTracker, identity: DigestIdentity): HeartbeatDigest {
  const probes = new Map<string, EpochMillis>();
  const fingerprints = new Map<string, string>();
  const leaseVersions = new Map<string, string>();
  const silentSince = identity.observedAt - LeaseVersionsAfterMs;
  for (const [name, entry] of tracker.nodes) {
    const baseline = entry.leaseRenewTime !== undefined || entry.readyHeartbeatTime !== undefined;
    const probe = entry.probedAt ?? (baseline ? identity.observingSince : undefined);
    if (probe !== undefined) {
      const sent = Math.min(probe, identity.observedAt);
      probes.set(name, sent);
      const version = entry.leaseResourceVersion;
      // A version the contract cannot carry (over 64 characters: no API server writes one) is left
      // out rather than failing the whole digest's encoding; the functions then act without it.
      if (sent <= silentSince && !entry.readyUnknown && version !== undefined && isResourceVersion(version)) {
        leaseVersions.set(name, version);
      }
    }
    fingerprints.set(name, entry.fingerprint);
  }
  const leaseResourceVersion = identity.leaseResourceVersion ?? '';
  const synced = isResourceVersion(leaseResourceVersion);
  return {
    schemaVersion: 1,
    cluster: identity.cluster,
    relayId: identity.relayId,
    leaderSince: identity.leaderSince,
    sequence: identity.sequence,
    observedAt: identity.observedAt,
    observingSince: Math.min(identity.observingSince, identity.observedAt),
    part: { index: 0, count: 1 },
    probes,
    fingerprints,
    ...(leaseVersions.size > 0 && { leaseVersions }),
    ...(synced && { leaseResourceVersion }),
    ...(identity.quietPeriodMs !== undefined && { quietPeriodMs: identity.quietPeriodMs }),
  };
}
