// Realistic controller states for the store tests, produced by running the real passes (monitor,
// NoExecute tainting, legacy eviction) over a fake cluster: registered nodes in three zones, nodes
// marked Unknown, queued and processed queue entries, a retried MarkPodsNotReady, a tainting write that
// failed (so a queue entry is due at a fractional instant), and in legacy mode eviction statuses.
import type { ControllerConfig } from '../../../shared/config.js';
import type { ControllerState } from '../../../shared/domain/controllerState.js';
import { drive } from '../../../shared/domain/effects.js';
import { monitorNodeHealth } from '../../../shared/domain/monitorNodeHealth.js';
import { doNoExecuteTaintingPass } from '../../../shared/domain/taintBasedEviction.js';
import type { Lease, Node } from '../../../shared/domain/types.js';
import type { LoadedState } from '../../../shared/ports/stores.js';
import { Harness, testConfig } from '../../helpers/controllerHarness.js';
import { FakeCluster, newNode, newPod, ready, t, zoneLabels } from '../../helpers/fakeCluster.js';

export const t0 = t('2026-01-29T09:00:00Z');
export const allNodes = ['n1a', 'n1b', 'n1c', 'n1d', 'n2a', 'n2b', 'n2c', 'n3a', 'n3x'] as const;

function labelsOf(name: string): Record<string, string> {
  const zone = `zone${name.charAt(1)}`;
  return {
    ...zoneLabels('region1', zone),
    'kubernetes.io/hostname': name,
    ...(name === 'n3x' && { 'node.kubernetes.io/exclude-disruption': '' }),
  };
}

export function scenarioCluster(): FakeCluster {
  const nodes = allNodes.map((name) =>
    newNode(name, {
      created: t0 - 3_600_000,
      labels: labelsOf(name),
      conditions: [
        ready('True', t0 - 10_000, t0 - 3_600_000),
        {
          type: 'MemoryPressure',
          status: 'False',
          reason: 'KubeletHasSufficientMemory',
          lastHeartbeatTime: t0 - 10_000,
          lastTransitionTime: t0 - 3_600_000,
        },
      ],
    }),
  );
  return new FakeCluster(nodes, [newPod('p-n1a', 'n1a'), newPod('p-n1b', 'n1b'), newPod('p-n2a', 'n2a')]);
}

export interface Scenario {
  readonly harness: Harness;
  readonly cluster: FakeCluster;
  /** The instant of the last pass. */
  readonly now: number;
}

/** When the scenario's silent nodes last renewed their lease. */
export const deadSince: ReadonlyMap<string, number> = new Map([
  ['n1a', t0],
  ['n1b', t0],
  ['n2a', t0 + 40_000],
]);

/**
 * A digest's probes at `now`: every node renewed at `now`, except silent ones, whose last observed
 * probe stays where it was (`more` adds silent nodes).
 */
export function leasesAt(now: number, more: ReadonlyMap<string, number> = new Map()): Map<string, Lease> {
  return new Map(
    allNodes.map((name) => {
      const death = more.get(name) ?? deadSince.get(name);
      return [name, { renewTime: death === undefined ? now : Math.min(now, death) }];
    }),
  );
}

/**
 * Runs the passes. With `drain`, a last NoExecute tainting pass empties the queues (only processed
 * entries stay in the sets); without, that pass's write fails, so an entry waits for a retry due 1 ns
 * after the pass (a fractional instant).
 */
export function runScenario(mode: ControllerConfig['evictionMode'], drain = false): Scenario {
  const cluster = scenarioCluster();
  const config: ControllerConfig = { ...testConfig, evictionMode: mode, podEvictionTimeout: 20_000 };
  const h = new Harness(cluster, config);
  let now = t0;
  for (let step = 0; step <= 22; step++) {
    now = t0 + step * 5_000;
    h.leases = leasesAt(now);
    // n2a's pods cannot be marked NotReady: it stays in nodesToRetry.
    if (now === t0 + 95_000) cluster.fail('markPodsNotReady', 1_000);
    h.monitor(now);
    if (mode === 'taint' && now === t0 + 65_000) h.taintingPass(now);
    if (mode === 'legacy' && now === t0 + 80_000) h.evictionPass(now);
  }
  if (mode === 'taint') {
    if (!drain) cluster.fail('swapNodeTaints', 1);
    // A virtual-time drainer: the clock stands still, so a failed write is retried in a later pass.
    const nodes = new Map(cluster.list().map((n) => [n.name, n]));
    const result = drive(
      doNoExecuteTaintingPass(h.state.zoneQueues, nodes, () => now),
      cluster.execute,
    );
    h.state = { ...h.state, zoneQueues: result.zoneQueues };
  }
  return { harness: h, cluster, now };
}

/** The node cache as node-taints would have stored it. */
export function clusterNodes(cluster: FakeCluster): Node[] {
  return [...cluster.nodes.values()];
}

/**
 * One monitor pass from a stored state, as the monitor function runs it: the store's node cache is the
 * node list, the digest's probes are the leases, the fake cluster answers the effects.
 */
export function passFrom(
  loaded: LoadedState,
  cluster: FakeCluster,
  leases: ReadonlyMap<string, Lease>,
  now: number,
  config: ControllerConfig = testConfig,
): { state: ControllerState; effects: unknown[] } {
  const before = cluster.effects.length;
  const result = drive(
    monitorNodeHealth(loaded.state, { nodes: [...loaded.nodes.values()], leases }, now, config),
    cluster.execute,
  );
  return { state: result.state, effects: cluster.effects.slice(before) };
}
