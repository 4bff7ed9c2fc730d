// The local stack on the real clock, where upstream's timing matters (issue #5 §1):
// - a node that dies after its kubelet's periodic status post is marked Unknown one grace period after
//   its last lease renewal. The relay does not publish a heartbeat-only status post (the digest carries
//   it as a probe), so the controller's copy of the Node is older than the post, and its status write
//   conflicts: the re-read must not take the newer heartbeat as a fresh probe;
// - a failed zone is tainted NoExecute one node per 10 s (nodeEvictionRate 0.1/s, burst 1), the drainer
//   waiting in process for each token rather than running on the monitor's 5 s grid.
//
// Upstream's monitor period (5 s), a 10 s grace period (the kubelets renew their 10 s leases every 2.5 s
// and check their status as often) and a 10 s status report frequency, so a periodic post comes within
// seconds instead of 5 minutes. Times are measured on this process's clock, which the kubelets, the
// relay and the functions share: the kubelets' timestamps, the API simulator's write times (an
// in-process watch sees each write synchronously) and the Decisions trail.
import { CoreV1Api, type V1Node, type V1NodeCondition, type V1Pod } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTime } from '../../local/apiserver/timestamps.js';
import { demoNodeName } from '../../local/stack/demoCluster.js';
import type { LocalStack } from '../../local/stack/stack.js';
import { MonitorSource } from '../../shared/app/monitor.js';
import { formatZoneKey } from '../../shared/domain/zones.js';
import { eventually, startTestStack, type TestStack } from '../helpers/localStack.js';

const Period = 5_000;
const Grace = 10_000;
const ReportFrequency = 10_000;
const Unreachable = 'node.kubernetes.io/unreachable';

const Zones = { 'zone-a': 3, 'zone-b': 5, 'zone-c': 2 } as const;
const nodesOf = (zone: keyof typeof Zones): string[] =>
  Array.from({ length: Zones[zone] }, (_, i) => demoNodeName(zone, i + 1));
const FailingNode = demoNodeName('zone-a', 1);
const FailingZone = 'zone-b';

/**
 * When this process saw each node first carry a condition or taint, and each pod first marked for
 * deletion: the API simulator's write times, in milliseconds (the objects' own times are whole seconds).
 */
interface Seen {
  readonly unknown: Map<string, number>;
  readonly noSchedule: Map<string, number>;
  readonly noExecute: Map<string, number>;
  /** By pod name. */
  readonly deleted: Map<string, number>;
}

const readyOf = (node: V1Node): V1NodeCondition | undefined =>
  node.status?.conditions?.find((c) => c.type === 'Ready');
const hasTaint = (node: V1Node, effect: string): boolean =>
  (node.spec?.taints ?? []).some((t) => t.key === Unreachable && t.effect === effect);
const at = (time: string | Date | undefined): number => {
  const text = time instanceof Date ? time.toISOString() : (time ?? '');
  const ms = parseTime(text);
  if (ms === undefined) throw new Error(`not a timestamp: ${text}`);
  return ms;
};

let harness: TestStack;
let stack: LocalStack;
let core: CoreV1Api;
const seen: Seen = { unknown: new Map(), noSchedule: new Map(), noExecute: new Map(), deleted: new Map() };
const watches: { stop(): void }[] = [];

beforeAll(async () => {
  harness = await startTestStack({
    settings: {
      nodeMonitorPeriod: `${Period / 1000}s`,
      nodeMonitorGracePeriod: `${Grace / 1000}s`,
    },
    kubelet: { nodeStatusReportFrequency: ReportFrequency },
    cluster: {
      nodes: (Object.keys(Zones) as (keyof typeof Zones)[]).flatMap((zone) =>
        nodesOf(zone).map((name) => ({ name, zone, region: 'region-1' })),
      ),
      pods: [
        {
          name: `batch-${FailingNode}`,
          node: FailingNode,
          tolerations: [{ key: Unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 }],
        },
        {
          name: `cache-${FailingNode}`,
          node: FailingNode,
          tolerations: [{ key: Unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }],
        },
        {
          name: `node-agent-${FailingNode}`,
          namespace: 'kube-system',
          node: FailingNode,
          daemonSet: 'node-agent',
        },
      ],
    },
  });
  stack = harness.stack;
  const simulator = stack.simulator;
  if (simulator === undefined) throw new Error('the local stack has no simulator');
  core = stack.kubeConfig().makeApiClient(CoreV1Api);
  const first = (map: Map<string, number>, name: string, holds: boolean): void => {
    if (holds && !map.has(name)) map.set(name, Date.now());
  };
  watches.push(
    simulator.api.store.nodes.watch({}, (event) => {
      if (event.type !== 'ADDED' && event.type !== 'MODIFIED') return;
      const node = event.object as V1Node;
      const name = node.metadata?.name ?? '';
      first(seen.unknown, name, readyOf(node)?.status === 'Unknown');
      first(seen.noSchedule, name, hasTaint(node, 'NoSchedule'));
      first(seen.noExecute, name, hasTaint(node, 'NoExecute'));
    }),
    simulator.api.store.pods.watch({}, (event) => {
      if (event.type !== 'MODIFIED') return;
      const pod = event.object as V1Pod;
      first(seen.deleted, pod.metadata?.name ?? '', pod.metadata?.deletionTimestamp !== undefined);
    }),
  );
  await eventually(
    'three Normal zones',
    async () => {
      const loaded = await stack.stores.controllerState.load(stack.config.cluster);
      const states = [...loaded.state.zoneStates.values()];
      return states.length === 3 && states.every((s) => s === 'Normal') ? states : undefined;
    },
    90_000,
  );
}, 240_000);

afterAll(async () => {
  for (const watch of watches) watch.stop();
  await harness.dispose();
}, 60_000);

describe('the local stack keeps upstream timing on the real clock', () => {
  it('marks a node Unknown one grace period after its last lease renewal when its kubelet stops after a periodic status post, then taints it NoSchedule and NoExecute and evicts its pods', async () => {
    const store = stack.simulator!.api.store;
    const readyNow = (): V1NodeCondition => {
      const ready = readyOf(store.nodes.get(FailingNode) as V1Node);
      if (ready === undefined) throw new Error(`${FailingNode} has no Ready condition`);
      return ready;
    };

    // A periodic post: the heartbeat moves although nothing changed. It comes after the relay listed the
    // nodes (the zones are Normal), so the controller's copy of the Node is older than it.
    const before = readyNow();
    const posted = await eventually(
      'a periodic status post (Ready lastHeartbeatTime moves)',
      () => {
        const ready = readyNow();
        return ready.lastHeartbeatTime === before.lastHeartbeatTime ? undefined : ready;
      },
      ReportFrequency + 5_000,
      50,
    );
    expect(posted.status).toBe('True');
    expect(posted.lastTransitionTime).toBe(before.lastTransitionTime);
    // No condition changed: the post is due to the report frequency, the first status check (every
    // 2.5 s) at least 10 s after the previous post. Heartbeats are whole seconds: ±1 s.
    const sincePrevious = at(posted.lastHeartbeatTime) - at(before.lastHeartbeatTime);
    expect(sincePrevious).toBeGreaterThanOrEqual(ReportFrequency - 1_000);
    expect(sincePrevious).toBeLessThanOrEqual(ReportFrequency + Grace / 4 + 1_000);

    // Stop between two posts, after a renewal or two, so the last sign of life is a lease renewal.
    await sleep(3_000);
    stack.simulator!.stopKubelet(FailingNode);
    const stoppedAt = Date.now();
    const lease = store.leases.get(FailingNode, { namespace: 'kube-node-lease' });
    const lastRenewal = at(lease.spec?.renewTime);
    expect(lastRenewal).toBeGreaterThan(at(posted.lastHeartbeatTime));
    expect(readyNow().lastHeartbeatTime).toBe(posted.lastHeartbeatTime);

    // Ready=Unknown, as the Decisions trail has it: the monitor decides on the first digest whose
    // observedAt (its `now`) is more than the grace period past the relay's observation of the last
    // renewal. Digests come every period, and the observation follows the renewal by the watch's
    // delivery, so the decision lies in (renewal + grace, renewal + grace + period + delivery];
    // 1 s covers delivery and a late digest timer on a loaded machine.
    const unknown = await eventually(
      'Ready=Unknown',
      () => {
        const ready = readyNow();
        return ready.status === 'Unknown' ? ready : undefined;
      },
      Grace + Period + 10_000,
    );
    expect(unknown.reason).toBe('NodeStatusUnknown');
    const trail = await stack.stores.decisions.query(stack.config.cluster, FailingNode, { limit: 200 });
    const statusWrites = trail
      .filter((d) => d.source === MonitorSource && d.what === 'updateNodeStatus' && d.at >= stoppedAt)
      .sort((a, b) => a.at - b.at);
    const marked = statusWrites.find((d) => d.result === 'ok');
    expect(marked).toBeDefined();
    // The pass that marked it first wrote from its copy of the Node, older than the periodic post, and
    // conflicted; it re-read the Node and wrote again. That the re-read's newer heartbeat was not taken
    // as a fresh probe is the instant below.
    expect(statusWrites.some((d) => d.at === marked!.at && (d.result ?? '').startsWith('Conflict'))).toBe(
      true,
    );
    const decidedAfter = marked!.at - lastRenewal;
    expect(decidedAfter).toBeGreaterThan(Grace);
    expect(decidedAfter).toBeLessThanOrEqual(Grace + Period + 1_000);
    // The API object's lastTransitionTime is that instant in whole seconds (metav1.Time truncates).
    const transitionAfter = at(unknown.lastTransitionTime) - lastRenewal;
    expect(transitionAfter).toBeGreaterThan(Grace - 1_000);
    expect(transitionAfter).toBeLessThanOrEqual(Grace + Period + 1_000);
    expect(at(unknown.lastHeartbeatTime)).toBe(at(posted.lastHeartbeatTime));

    // Then the taints. NoSchedule: node-taints, on the Node Changed event of the Unknown write.
    // NoExecute: the drainer, once the node is queued — in the marking pass itself, as upstream's
    // processTaintBaseEviction reads the Ready condition the pass leaves from v1.34 (PR #120816, the
    // default emulationVersion). zone-a is Normal with its token unused, so the drainer taints at once:
    // after the decision, the pass's commit and the drainer's invocation (2.5 s on a loaded machine).
    await eventually('unreachable:NoSchedule and NoExecute', async () => {
      const node = await core.readNode({ name: FailingNode });
      return hasTaint(node, 'NoSchedule') && hasTaint(node, 'NoExecute') ? node : undefined;
    });
    const unknownAt = seen.unknown.get(FailingNode)!;
    const noScheduleAt = seen.noSchedule.get(FailingNode)!;
    const noExecuteAt = seen.noExecute.get(FailingNode)!;
    expect(noScheduleAt).toBeGreaterThanOrEqual(unknownAt);
    expect(noExecuteAt - marked!.at).toBeGreaterThanOrEqual(0);
    expect(noExecuteAt - marked!.at).toBeLessThanOrEqual(2_500);

    // And the evictions: the pod tolerating unreachable for 0 s at once, the one tolerating it for 5 s
    // 5 s after the NoExecute taint; the DaemonSet's pod tolerates it forever. The taint eviction
    // controller starts a pod's timer when the Node Changed event of the taint reaches it, and the
    // drainer deletes the pod when it is due (waiting in process): 2 s cover that delivery and the
    // deletion's. (A pod's deletionTimestamp is no help: the deletion instant plus its 30 s grace period,
    // in whole seconds.)
    const terminating = async (name: string, namespace = 'default') => {
      const pod = await core.readNamespacedPod({ name, namespace });
      return pod.metadata?.deletionTimestamp === undefined ? undefined : pod;
    };
    const batch = await eventually(`batch-${FailingNode} Terminating`, () =>
      terminating(`batch-${FailingNode}`),
    );
    const cache = await eventually(`cache-${FailingNode} Terminating`, () =>
      terminating(`cache-${FailingNode}`),
    );
    for (const pod of [batch, cache]) {
      expect(pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
        status: 'True',
        reason: 'DeletionByTaintManager',
      });
    }
    const batchAfter = seen.deleted.get(`batch-${FailingNode}`)! - noExecuteAt;
    const cacheAfter = seen.deleted.get(`cache-${FailingNode}`)! - noExecuteAt;
    expect(batchAfter).toBeGreaterThanOrEqual(0);
    expect(batchAfter).toBeLessThanOrEqual(2_000);
    expect(cacheAfter).toBeGreaterThanOrEqual(5_000);
    expect(cacheAfter).toBeLessThanOrEqual(5_000 + 2_000);
    const agent = await core.readNamespacedPod({
      name: `node-agent-${FailingNode}`,
      namespace: 'kube-system',
    });
    expect(agent.metadata?.deletionTimestamp).toBeUndefined();

    console.log(
      `local stack: ${FailingNode} stopped ${((stoppedAt - at(posted.lastHeartbeatTime)) / 1000).toFixed(1)} s after a periodic post; ` +
        `Unknown decided ${(decidedAfter / 1000).toFixed(3)} s after its last renewal (grace ${Grace / 1000} s, period ${Period / 1000} s), ` +
        `NoSchedule ${((noScheduleAt - marked!.at) / 1000).toFixed(3)} s and NoExecute ${((noExecuteAt - marked!.at) / 1000).toFixed(3)} s after that; ` +
        `pods deleted ${(batchAfter / 1000).toFixed(3)} s (tolerating 0 s) and ${(cacheAfter / 1000).toFixed(3)} s (5 s) after NoExecute`,
    );
  }, 90_000);

  it('taints the nodes of a failed zone NoExecute 10 s apart (nodeEvictionRate 0.1/s, burst 1)', async () => {
    // The whole of zone-b down while zone-a and zone-c are healthy: FullDisruption, which keeps the
    // normal rate (only when every zone is down does tainting stop). zone-a's one Unknown node (of 3)
    // keeps it Normal: PartialDisruption needs more than 2 unhealthy nodes and 55 % of the zone.
    const nodes = nodesOf(FailingZone);
    stack.simulator!.failZone(FailingZone);
    const failedAt = Date.now();
    const taintedSoFar = (): number[] =>
      nodes.flatMap((n) => seen.noExecute.get(n) ?? []).sort((a, b) => a - b);
    const intervalsOf = (times: readonly number[]): number[] => times.slice(1).map((t, i) => t - times[i]!);
    // The last taint is due (nodes − 1) × 10 s after the first, which comes a grace period and up to two
    // monitor periods after the stop (Unknown, then queued on the next pass); 10 s more for delivery.
    // A slower cadence runs out of it (at 15 s per node the last comes 20 s later).
    await eventually(
      `every node of ${FailingZone} tainted NoExecute`,
      () => (taintedSoFar().length === nodes.length ? true : undefined),
      Grace + 2 * Period + 10_000 * (nodes.length - 1) + 10_000,
    ).catch((error: unknown) => {
      const sofar = intervalsOf(taintedSoFar()).map((ms) => `${ms} ms`);
      throw new Error(`${String(error)}; intervals so far: ${sofar.join(', ') || 'none'}`, { cause: error });
    });
    const times = taintedSoFar();
    const intervals = intervalsOf(times);
    console.log(
      `local stack: ${FailingZone} failed; first NoExecute ${((times[0]! - failedAt) / 1000).toFixed(3)} s later, ` +
        `then ${intervals.map((ms) => (ms / 1000).toFixed(3)).join(' s, ')} s apart`,
    );
    for (const interval of intervals) {
      expect(interval).toBeGreaterThanOrEqual(9_000);
      expect(interval).toBeLessThanOrEqual(11_000);
    }

    const loaded = await stack.stores.controllerState.load(stack.config.cluster);
    const states = Object.fromEntries(
      [...loaded.state.zoneStates].map(([zone, state]) => [formatZoneKey(zone), state]),
    );
    expect(states).toEqual({
      'region-1:zone-a': 'Normal',
      'region-1:zone-b': 'FullDisruption',
      'region-1:zone-c': 'Normal',
    });
    const limiter = [...loaded.state.zoneQueues].find(
      ([zone]) => formatZoneKey(zone) === 'region-1:zone-b',
    )?.[1].limiter;
    expect(limiter).toMatchObject({ kind: 'tokenBucket', qps: 0.1, burst: 1 });
  }, 90_000);
});
