// DynamoDB read/write units of the monitor pass in steady state (docs/state.md, "Cost"), measured with
// the capacity dynalite reports for the real store code:
//   npx tsx bench/stateStoreCost.ts [nodes ...]     (default: 1000 5000)
// Healthy nodes renew their lease every 10 s; one digest (one pass) every 5 s. For each size it seeds
// the node cache as node-taints would, runs a first pass, then steady passes warm (refresh: the
// function kept its state) and cold (a full load after a cold start), a pass where one node changes,
// and the drainer's read of the queues.
//
// dynalite reports table units only: it bills no index writes, and 0 for a Query that returns nothing
// (DynamoDB bills every request at least one 4 KB unit). The "billed" columns add both back: every
// read request at least 1 RRU (0.5 would do for the eventually consistent index query: an upper bound)
// and one index write unit per node-group write.
import { CapacityCounter, type CapacitySnapshot } from '../shared/adapters/dynamodb/index.js';
import { drive } from '../shared/domain/effects.js';
import { monitorNodeHealth } from '../shared/domain/monitorNodeHealth.js';
import type { Lease, Node, NodeCondition } from '../shared/domain/types.js';
import type { ClusterMeta, LoadedState } from '../shared/ports/stores.js';
import { testConfig } from '../test/helpers/controllerHarness.js';
import { startDynamoDb } from '../test/helpers/dynamodb.js';
import { FakeCluster } from '../test/helpers/fakeCluster.js';

const PASSES_PER_MONTH = (30 * 86_400) / 5; // one digest per nodeMonitorPeriod
const USD_PER_MILLION_WRU = 0.625; // on-demand, us-east-1
const USD_PER_MILLION_RRU = 0.125;
const t0 = Date.parse('2026-11-21T10:00:00.000Z');
const config = {
  ...testConfig,
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
  largeClusterSizeThreshold: 50,
};

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

/** A node as an EKS managed node group labels it, with the kubelet's five conditions. */
function realisticNode(i: number): Node {
  const zone = ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'][i % 3] ?? 'eu-west-1a';
  const name = `ip-10-0-${(i >> 8) & 255}-${i & 255}.eu-west-1.compute.internal`;
  return {
    name,
    uid: `2d6f1c7e-${String(i).padStart(4, '0')}-4b1e-9a55-0c1f8e2d3a4b`,
    resourceVersion: String(1_000_000 + i),
    creationTimestamp: t0 - 7 * 86_400_000,
    labels: {
      'beta.kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/instance-type': 'm6i.xlarge',
      'beta.kubernetes.io/os': 'linux',
      'eks.amazonaws.com/capacityType': 'ON_DEMAND',
      'eks.amazonaws.com/nodegroup': 'general-purpose',
      'failure-domain.beta.kubernetes.io/region': 'eu-west-1',
      'failure-domain.beta.kubernetes.io/zone': zone,
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/hostname': name,
      'kubernetes.io/os': 'linux',
      'node.kubernetes.io/instance-type': 'm6i.xlarge',
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

interface Measured {
  readonly label: string;
  readonly reads: number;
  readonly writes: number;
  readonly billedReads: number;
  readonly billedWrites: number;
}

const READ_OPS = ['GetItem', 'Query', 'BatchGetItem'];

function measure(label: string, used: CapacitySnapshot, indexWrites = 0): Measured {
  const readRequests = READ_OPS.reduce((n, op) => n + (used.byOperation[op] ?? 0), 0);
  return {
    label,
    reads: used.readUnits,
    writes: used.writeUnits,
    billedReads: Math.max(used.readUnits, readRequests),
    billedWrites: used.writeUnits + indexWrites,
  };
}

async function run(nodeCount: number): Promise<Measured[]> {
  const db = await startDynamoDb(`nlc-bench-${nodeCount}`);
  // The store's wall clock follows the passes (virtual time): refresh windows and updatedAt stamps
  // then behave as in a deployment where passes are 5 s apart.
  let wall = t0;
  const stores = db.stores({ clock: { now: () => wall }, settings: { writeConcurrency: 32 } });
  const cluster = 'bench';
  const nodes = Array.from({ length: nodeCount }, (_, i) => realisticNode(i));
  const fake = new FakeCluster(nodes);
  const rows: Measured[] = [];
  const step = async <T>(label: string, fn: () => Promise<T>, indexWrites = 0): Promise<T> => {
    const before = stores.capacity.snapshot();
    const result = await fn();
    rows.push(measure(label, CapacityCounter.difference(stores.capacity.snapshot(), before), indexWrites));
    return result;
  };
  const meta = (sequence: number, now: number): ClusterMeta => ({
    lastSequence: sequence,
    lastObservedAt: now,
    masterDisruption: false,
    relayLastSeen: now,
  });
  // Leases renew every 10 s, spread over the period.
  const leases = (now: number): Map<string, Lease> =>
    new Map(nodes.map((n, i) => [n.name, { renewTime: now - ((i * 7919) % 10_000) }]));
  const pass = (loaded: LoadedState, now: number) =>
    drive(
      monitorNodeHealth(
        loaded.state,
        { nodes: [...loaded.nodes.values()], leases: leases(now) },
        now,
        config,
      ),
      fake.execute,
    ).state;

  await step(
    'seed the node cache (node-taints, once)',
    async () => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next < nodes.length) {
            const node = nodes[next++];
            if (node !== undefined) await stores.nodes.putNode(cluster, node);
          }
        }),
      );
    },
    nodeCount,
  );

  let sequence = 1;
  let now = t0;
  // A pass as a warm monitor runs it: refresh what it kept, run, commit the difference.
  const warmPass = async (kept: LoadedState): Promise<LoadedState> => {
    const loaded = await stores.controllerState.refresh(kept);
    return stores.controllerState.commit(loaded, { state: pass(loaded, now), meta: meta(sequence, now) });
  };
  let warm = await step('first pass (every node registered)', async () => {
    const loaded = await stores.controllerState.load(cluster);
    return stores.controllerState.commit(loaded, { state: pass(loaded, now), meta: meta(sequence, now) });
  });
  // Settle: zones become Normal on the second pass, and the seeding leaves the refresh window (60 s).
  for (let i = 0; i < 14; i++) {
    now += 5_000;
    wall = now;
    sequence++;
    warm = await warmPass(warm);
  }

  for (let i = 0; i < 3; i++) {
    now += 5_000;
    wall = now;
    sequence++;
    warm = await step('steady pass, warm (refresh + commit)', () => warmPass(warm));
  }
  now += 5_000;
  wall = now;
  sequence++;
  warm = await step('steady pass, cold (full load + commit)', async () => {
    const loaded = await stores.controllerState.load(cluster);
    return stores.controllerState.commit(loaded, { state: pass(loaded, now), meta: meta(sequence, now) });
  });
  now += 5_000;
  wall = now;
  sequence++;
  const changed = nodes[0];
  if (changed === undefined) throw new Error('no nodes');
  await step(
    'one node changed a label (node-taints write + warm pass)',
    async () => {
      const relabelled = {
        ...changed,
        resourceVersion: '9000000',
        labels: { ...changed.labels, team: 'blue' },
      };
      fake.put(relabelled);
      await stores.nodes.putNode(cluster, relabelled);
      warm = await warmPass(warm);
    },
    1,
  );
  await step('drainer run, nothing queued (loadZoneQueues)', async () => {
    await stores.zoneQueues.loadZoneQueues(cluster);
  });
  await db.stop();
  return rows;
}

function money(perPass: Measured): number {
  return (
    (perPass.billedReads * PASSES_PER_MONTH * USD_PER_MILLION_RRU) / 1e6 +
    (perPass.billedWrites * PASSES_PER_MONTH * USD_PER_MILLION_WRU) / 1e6
  );
}

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
for (const nodeCount of sizes.length > 0 ? sizes : [1000, 5000]) {
  const rows = await run(nodeCount);
  console.log(`\n${nodeCount} nodes: units per step (measured / billed)`);
  for (const r of rows) {
    console.log(
      `  ${r.label.padEnd(58)} RRU ${r.reads.toFixed(1).padStart(8)} / ${r.billedReads.toFixed(1).padStart(8)}` +
        `   WRU ${r.writes.toFixed(1).padStart(8)} / ${r.billedWrites.toFixed(1).padStart(8)}`,
    );
  }
  const warm = rows.filter((r) => r.label.startsWith('steady pass, warm'));
  const cold = rows.find((r) => r.label.startsWith('steady pass, cold'));
  const average = (xs: Measured[], f: (m: Measured) => number): number =>
    xs.reduce((a, m) => a + f(m), 0) / xs.length;
  const warmPass: Measured = {
    label: 'warm',
    reads: average(warm, (m) => m.reads),
    writes: average(warm, (m) => m.writes),
    billedReads: average(warm, (m) => m.billedReads),
    billedWrites: average(warm, (m) => m.billedWrites),
  };
  const perThousand = (usd: number): string => (usd / (nodeCount / 1000)).toFixed(3);
  console.log(
    `  per month at one pass per 5 s: warm US$${money(warmPass).toFixed(2)} (US$${perThousand(money(warmPass))} per 1,000 nodes)` +
      (cold === undefined
        ? ''
        : `; if every pass were cold US$${money(cold).toFixed(2)} (US$${perThousand(money(cold))} per 1,000 nodes)`),
  );
}
