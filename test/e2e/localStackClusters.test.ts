// `npm start -- --extra-cluster beta`: the local stack serving two clusters from one deployment (one
// serverless-offline, one bus, one set of tables), each its own API simulator, kubelets and relay, as
// one stage serves many clusters in AWS (docs/deploy.md, "Many clusters from one stage"). Both
// clusters' digests are passed; a node that dies in the second cluster is marked Unknown and tainted
// there, by the functions that also serve the first, which stays untouched.
import { CoreV1Api, type V1Node } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoNodeName } from '../../local/stack/demoCluster.js';
import type { ExtraCluster, LocalStack } from '../../local/stack/stack.js';
import { eventually, startTestStack, type TestStack } from '../helpers/localStack.js';

const Timing = { nodeMonitorPeriod: '5s', nodeMonitorGracePeriod: '10s' } as const;
const Unreachable = 'node.kubernetes.io/unreachable';
const FailingNode = demoNodeName('zone-a', 1);

let harness: TestStack;
let stack: LocalStack;
let beta: ExtraCluster;

const taintsOf = (node: V1Node): string[] =>
  (node.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();

beforeAll(async () => {
  harness = await startTestStack({ settings: Timing, extraClusters: ['beta'] });
  stack = harness.stack;
  const extra = stack.extraClusters[0];
  if (extra === undefined) throw new Error('the stack started no extra cluster');
  beta = extra;
}, 300_000);

afterAll(async () => {
  await harness.dispose();
}, 60_000);

describe('the local stack serving two clusters', () => {
  it('passes the digests of both clusters, each in its own keys of the shared tables', async () => {
    for (const cluster of [stack.config.cluster, 'beta']) {
      // A commit writes its zone rows before it records the digest processed (the cluster row's
      // position): wait for both, not for a commit half-way.
      const meta = await eventually(
        `${cluster}: three Normal zones, and a digest recorded processed`,
        async () => {
          const loaded = await stack.stores.controllerState.load(cluster);
          const states = [...loaded.state.zoneStates.values()];
          const normal = states.length === 3 && states.every((s) => s === 'Normal');
          return normal && loaded.meta.lastSequence !== undefined ? loaded.meta : undefined;
        },
        120_000,
      );
      expect(meta.committedAt).toBeDefined();
    }
  }, 250_000);

  it('a node dying in the second cluster is tainted there; the first cluster is untouched', async () => {
    const betaCore = beta.simulator.api.kubeConfig().makeApiClient(CoreV1Api);
    const alphaCore = stack.kubeConfig().makeApiClient(CoreV1Api);
    beta.simulator.stopKubelet(FailingNode);
    const tainted = await eventually(
      `beta's ${FailingNode} Unknown and tainted unreachable`,
      async () => {
        const node = await betaCore.readNode({ name: FailingNode });
        const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
        return ready?.status === 'Unknown' && taintsOf(node).includes(`${Unreachable}:NoExecute`)
          ? node
          : undefined;
      },
      90_000,
    );
    expect(tainted.status?.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('NodeStatusUnknown');
    const same = await alphaCore.readNode({ name: FailingNode });
    expect(same.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(taintsOf(same)).toEqual([]);
    const trail = await stack.stores.decisions.query('beta', FailingNode, { limit: 100 });
    expect(trail.some((d) => d.what === 'updateNodeStatus' && d.result === 'ok')).toBe(true);
  }, 120_000);
});
