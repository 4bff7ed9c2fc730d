// The nodes of the monitor benchmarks (monitorCost.ts, partitionThrottle.ts): as an EKS managed node
// group labels them, with the kubelet's four conditions, in 3 zones; a Nodes item with the monitor's
// health group is about 2.6 KB, so a health write costs 3 WRU.
import type { Node, NodeCondition } from '../shared/domain/types.js';

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
