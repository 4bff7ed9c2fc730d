// The nodes of the monitor benchmarks (monitorCost.ts, partitionThrottle.ts): as an EKS managed node
// group labels them, with the kubelet's four conditions, in 3 zones; a Nodes item with the monitor's
// health group is about 2.6 KB, so a health write costs 3 WRU.
import type { Node, NodeCondition } from '../shared/domain/types.js';
import type { HeartbeatDigest } from '../shared/events.js';
import { nodeFingerprint } from '../shared/nodeFingerprint.js';

export const t0 = Date.parse('2026-11-21T10:00:00.000Z');

function condition(
  type: string,
  status: NodeCondition['status'],
  reason: string,
  message: string,
): NodeCondition {
  return {
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: t0 - 60_000,
    lastTransitionTime: t0 - 86_400_000,
  };
}

/** A node as an EKS managed node group labels it, with the kubelet's conditions, in one of 3 zones. */
export function eksNode(i: number): Node {
  const zone = ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'][i % 3] ?? 'eu-west-1a';
  const name = `ip-10-${(i >> 16) & 255}-${(i >> 8) & 255}-${i & 255}.eu-west-1.compute.internal`;
  return {
    name,
    uid: `2d6f1c7e-${String(i).padStart(6, '0')}-4b1e-9a55-0c1f8e2d3a4b`,
    resourceVersion: String(1_000_000 + i),
    creationTimestamp: t0 - 7 * 86_400_000,
    labels: {
      'failure-domain.beta.kubernetes.io/region': 'eu-west-1',
      'failure-domain.beta.kubernetes.io/zone': zone,
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
      // As node-taints' reconcileNodeLabels leaves every node of a steady cluster.
      'beta.kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'topology.kubernetes.io/region': 'eu-west-1',
      'topology.kubernetes.io/zone': zone,
    },
    taints: [],
    unschedulable: false,
    conditions: [
      condition(
        'MemoryPressure',
        'False',
        'KubeletHasSufficientMemory',
        'kubelet has sufficient memory available',
      ),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
    ],
  };
}

/**
 * A steady relay's digests for `nodes`: one term since a day before t0, each call the next sequence.
 * Leases renew every 10 s, spread over the period; the fingerprints are those of the relay's copies
 * (the same as the cache's in a steady cluster, so the monitor reads nothing:
 * docs/architecture.md#level-triggered).
 */
export function steadyDigests(cluster: string, nodes: readonly Node[]): (now: number) => HeartbeatDigest {
  let sequence = 0;
  return (now) => ({
    schemaVersion: 1,
    cluster,
    relayId: 'nlc-relay-6f9c7d8b5-x2k4q',
    leaderSince: t0 - 86_400_000,
    observingSince: t0 - 86_400_000,
    sequence: ++sequence,
    observedAt: now,
    part: { index: 0, count: 1 },
    probes: new Map(nodes.map((n, i) => [n.name, now - ((i * 7919) % 10_000)])),
    fingerprints: new Map(nodes.map((n) => [n.name, nodeFingerprint(n)])),
  });
}
