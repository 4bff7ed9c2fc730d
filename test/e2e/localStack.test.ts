// The local stack end to end, on the real clock (issue #5 §1): start it programmatically (API simulator,
// kubelets, dynalite, the functions under serverless-offline as a child process, the relay), stop one
// kubelet, and watch through the Kubernetes API what the controller does — Ready=Unknown, the unreachable
// NoSchedule and NoExecute taints, the deletion of the pod that tolerates unreachable for 3 s — and read
// its Decisions trail; then stop everything and check no process and no port is left.
//
// Short grace periods make it quick (monitor period 1 s, grace 4 s); the kubelets renew their leases
// every second. Nothing is asserted on timing: every check polls for its condition with a generous bound
// (localStackTimings.test.ts asserts the instants and intervals upstream would give).
import { CoreV1Api, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DrainerSource } from '../../shared/app/drainer.js';
import { MonitorSource } from '../../shared/app/monitor.js';
import { NodeTaintsSource } from '../../shared/app/nodeTaints.js';
import { TaintEvictionSource } from '../../shared/app/taintEviction.js';
import type { StoredDecision } from '../../shared/ports/stores.js';
import { demoCluster } from '../../local/stack/demoCluster.js';
import type { LocalStack } from '../../local/stack/stack.js';
import {
  eventually,
  groupExists,
  portClosed,
  startTestStack,
  type TestStack,
} from '../helpers/localStack.js';

const FailingNode = 'zone-a-1';
const Unreachable = 'node.kubernetes.io/unreachable';

const hasTaint = (node: V1Node, effect: string): boolean =>
  (node.spec?.taints ?? []).some((t) => t.key === Unreachable && t.effect === effect);

let harness: TestStack;
let stack: LocalStack;
let core: CoreV1Api;

beforeAll(async () => {
  const demo = demoCluster({ nodesPerZone: 2, podsPerNode: 1 });
  harness = await startTestStack({
    settings: { nodeMonitorPeriod: '1s', nodeMonitorGracePeriod: '4s', nodeStartupGracePeriod: '5s' },
    cluster: {
      nodes: demo.nodes,
      pods: [
        ...(demo.pods ?? []),
        {
          name: 'evict-me',
          node: FailingNode,
          tolerations: [{ key: Unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 3 }],
        },
      ],
    },
  });
  stack = harness.stack;
  core = stack.kubeConfig().makeApiClient(CoreV1Api);
}, 240_000);

afterAll(async () => {
  await harness.dispose();
}, 60_000);

describe('npm start: the local stack on the real clock', () => {
  it('comes up with every zone Normal', async () => {
    const zones = await eventually('three Normal zones', async () => {
      const loaded = await stack.stores.controllerState.load(stack.config.cluster);
      const states = [...loaded.state.zoneStates.values()];
      return states.length === 3 && states.every((s) => s === 'Normal') ? states : undefined;
    });
    expect(zones).toEqual(['Normal', 'Normal', 'Normal']);
  }, 90_000);

  it('marks a node whose kubelet stops Unknown, taints it and evicts the pod tolerating 3 s', async () => {
    stack.simulator?.stopKubelet(FailingNode);

    const unknown = await eventually('Ready=Unknown', async () => {
      const node = await core.readNode({ name: FailingNode });
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
      return ready?.status === 'Unknown' ? ready : undefined;
    });
    expect(unknown.reason).toBe('NodeStatusUnknown');

    const noSchedule = await eventually('unreachable:NoSchedule', async () => {
      const node = await core.readNode({ name: FailingNode });
      return hasTaint(node, 'NoSchedule') ? node : undefined;
    });
    expect(hasTaint(noSchedule, 'NoSchedule')).toBe(true);

    const noExecute = await eventually('unreachable:NoExecute', async () => {
      const node = await core.readNode({ name: FailingNode });
      return hasTaint(node, 'NoExecute') ? node : undefined;
    });
    expect(hasTaint(noExecute, 'NoExecute')).toBe(true);

    const evicted: V1Pod = await eventually('evict-me Terminating', async () => {
      const pod = await core.readNamespacedPod({ name: 'evict-me', namespace: 'default' });
      return pod.metadata?.deletionTimestamp === undefined ? undefined : pod;
    });
    expect(evicted.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'DeletionByTaintManager',
    });
    // Admission's 300 s toleration and the DaemonSet's forever toleration keep the others.
    const others = await core.listNamespacedPod({
      namespace: 'default',
      fieldSelector: `spec.nodeName=${FailingNode}`,
    });
    const web = others.items.find((p) => p.metadata?.name === `web-${FailingNode}-1`);
    expect(web?.metadata?.deletionTimestamp).toBeUndefined();
    const agent = await core.readNamespacedPod({
      name: `node-agent-${FailingNode}`,
      namespace: 'kube-system',
    });
    expect(agent.metadata?.deletionTimestamp).toBeUndefined();
    // The other nodes are untouched.
    const healthy = await core.readNode({ name: 'zone-a-2' });
    expect(healthy.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(healthy.spec?.taints ?? []).toEqual([]);
  }, 120_000);

  it('keeps the decision trail of the node', async () => {
    const has = (trail: readonly StoredDecision[], source: string, what: string): boolean =>
      trail.some((d) => d.source === source && d.what === what && d.result === 'ok');
    // Pods are filed under their node: the timed deletion is the drainer's, when the timer is due.
    const trail = await eventually('the Decisions trail of the failing node', async () => {
      const decisions = await stack.stores.decisions.query(stack.config.cluster, FailingNode, { limit: 200 });
      return has(decisions, DrainerSource, 'deletePodForTaintEviction') ? decisions : undefined;
    });
    expect(has(trail, MonitorSource, 'updateNodeStatus')).toBe(true);
    expect(has(trail, NodeTaintsSource, 'swapNodeTaints')).toBe(true);
    expect(has(trail, DrainerSource, 'swapNodeTaints')).toBe(true);
    expect(trail.some((d) => d.source === TaintEvictionSource && d.what === 'schedulePodEviction')).toBe(
      true,
    );
    expect(has(trail, DrainerSource, 'deletePodForTaintEviction')).toBe(true);
  }, 60_000);

  it('stops everything: no process and no port left', async () => {
    const pid = stack.functions.pid;
    expect(groupExists(pid)).toBe(true);
    await stack.stop();
    expect(stack.functions.running()).toBe(false);
    expect(groupExists(pid)).toBe(false);
    const ports = Object.values(stack.ports);
    const closed = await Promise.all(ports.map(portClosed));
    expect(closed).toEqual(ports.map(() => true));
  }, 60_000);
});
