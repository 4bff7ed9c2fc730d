// The nodes of the monitor benchmarks (monitorCost.ts, partitionThrottle.ts): as an EKS managed node
// group labels them, with the kubelet's four conditions, in 3 zones; a Nodes item with the monitor's
// health group is about 2.6 KB, so a health write costs 3 WRU.
import type { MonitorDeps } from '../shared/app/monitor.js';
import type { Effect, ResultOf } from '../shared/domain/effects.js';
import type { Node, NodeCondition } from '../shared/domain/types.js';
import type { HeartbeatDigest } from '../shared/events.js';
import { nodeFingerprint } from '../shared/nodeFingerprint.js';
import type { StateStores } from '../shared/ports/stores.js';

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
 * docs/architecture.md#level-triggered). `probe` turns each node's last renewal into the probe the
 * digest carries (a kubelet that stopped keeps its last one); `fingerprints` are kept up to date by
 * the caller when the API's nodes change.
 */
export function steadyDigests(
  cluster: string,
  nodes: readonly Node[],
  options: {
    readonly probe?: (name: string, renewed: number, i: number) => number;
    readonly fingerprints?: Map<string, string>;
  } = {},
): (now: number) => HeartbeatDigest {
  let sequence = 0;
  const probe = options.probe ?? ((_name: string, renewed: number) => renewed);
  const fingerprints = options.fingerprints ?? new Map(nodes.map((n) => [n.name, nodeFingerprint(n)]));
  return (now) => ({
    schemaVersion: 1,
    cluster,
    relayId: 'nlc-relay-6f9c7d8b5-x2k4q',
    leaderSince: t0 - 86_400_000,
    observingSince: t0 - 86_400_000,
    sequence: ++sequence,
    observedAt: now,
    part: { index: 0, count: 1 },
    probes: new Map(nodes.map((n, i) => [n.name, probe(n.name, now - ((i * 7919) % 10_000), i)])),
    fingerprints,
  });
}

/** The node cache as node-taints leaves it after each node's Node Changed: 32 writes at a time. */
export async function seedNodeCache(
  stores: Pick<StateStores, 'nodes'>,
  cluster: string,
  nodes: readonly Node[],
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < nodes.length) {
        const node = nodes[next++];
        if (node !== undefined) await stores.nodes.putNode(cluster, node);
      }
    }),
  );
}

/**
 * The monitor's cluster port over an in-memory `execute`: no leader election (every term is taken as it
 * comes), the server's version read once an hour; what a bench does not expect to be called rejects.
 */
export function benchClusterPort(
  execute: <E extends Effect>(effect: E) => Promise<ResultOf<E>>,
  what: string,
): MonitorDeps['cluster'] {
  const unused = (): Promise<never> => Promise.reject(new Error(`unused ${what}`));
  return {
    execute,
    getNode: (name: string) => execute({ kind: 'getNode', node: name }),
    addNodeLabels: unused,
    listPodsOnNode: (name: string) => execute({ kind: 'listPodsOnNode', node: name }),
    deletePodForTaintEviction: unused,
    getLeaderLease: () =>
      Promise.resolve({ ok: false as const, reason: 'NotFound' as const, message: 'no leader election' }),
    // Read only for a node about to be marked Unknown with a relay that sends lease versions: never here.
    getNodeLeaseVersion: unused,
    getServerVersion: () => Promise.resolve({ ok: true as const, value: 'v1.37.0' }),
  };
}
