// The cluster `npm start` simulates: three zones of ten nodes in one region, each node running a few
// ordinary pods (admission gives them the 300 s not-ready/unreachable tolerations), one pod of the
// node-agent DaemonSet (its tolerations never run out), and, on some nodes, pods with their own
// tolerations, so failing a node shows every kind of eviction decision:
//   web-*      admission's defaults: deleted 300 s after the NoExecute taint
//   cache-*    tolerates unreachable for 30 s: deleted soon after the taint
//   batch-*    tolerates unreachable for 0 s: deleted at once
//   monitor-*  tolerates every taint (operator Exists): never deleted
//   node-agent DaemonSet pods: never deleted
import type { SeedCluster, SimulatedNode } from '../kubelet/index.js';
import type { SimulatedPod } from '../kubelet/pods.js';

export interface DemoClusterOptions {
  /** Zone names (3 by default: zone-a, zone-b, zone-c). */
  readonly zones?: readonly string[];
  readonly nodesPerZone?: number;
  readonly region?: string;
  /** Ordinary pods per node (2 by default). */
  readonly podsPerNode?: number;
}

/** The DaemonSet every node runs a pod of. */
export const DemoDaemonSet = 'node-agent';
const Unreachable = 'node.kubernetes.io/unreachable';

/** `zone-a` → `zone-a-1`, `zone-a-2`, … */
export function demoNodeName(zone: string, index: number): string {
  return `${zone}-${index}`;
}

/**
 * The demo cluster as a kubelet-fleet seed.
 *
 * @example
 * fleet.seed(demoCluster()); // 30 nodes, 60 web pods, 30 node-agent pods, 9 pods with own tolerations
 */
export function demoCluster(options: DemoClusterOptions = {}): SeedCluster {
  const zones = options.zones ?? ['zone-a', 'zone-b', 'zone-c'];
  const perZone = options.nodesPerZone ?? 10;
  const region = options.region ?? 'region-1';
  const podsPerNode = options.podsPerNode ?? 2;
  const nodes: SimulatedNode[] = [];
  const pods: SimulatedPod[] = [];
  for (const zone of zones) {
    for (let i = 1; i <= perZone; i++) {
      const node = demoNodeName(zone, i);
      nodes.push({ name: node, zone, region });
      for (let p = 1; p <= podsPerNode; p++) pods.push({ name: `web-${node}-${p}`, node });
      pods.push({
        name: `${DemoDaemonSet}-${node}`,
        namespace: 'kube-system',
        node,
        daemonSet: DemoDaemonSet,
      });
      // Every third node carries the pods with their own tolerations.
      if (i % 3 === 1) {
        pods.push({
          name: `cache-${node}`,
          node,
          tolerations: [{ key: Unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }],
        });
        pods.push({
          name: `batch-${node}`,
          node,
          tolerations: [{ key: Unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 }],
        });
        pods.push({
          name: `monitor-${node}`,
          namespace: 'monitoring',
          node,
          tolerations: [{ operator: 'Exists' }],
        });
      }
    }
  }
  return { nodes, pods };
}
