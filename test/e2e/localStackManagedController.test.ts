// `npm start --managed-controller` (issue #20): the local stack with a second, active controller standing
// in for a managed control plane's own (stage "managed": its own serverless-offline, relay, bus and
// tables), while the stack's controller runs in shadow mode beside it. A node's kubelet stops and comes
// back; its pod is marked NotReady and evicted; only the managed controller writes to the cluster; the shadow records its own dry-run decisions
// and what the managed one did (source `cluster`); `nlc agreement` against the running stack (found by
// its data directory, no other flag) matches them, each within a monitor period.
//
// Both controllers run upstream's 5 s monitor period with a 10 s grace period here (the kubelets renew
// their leases every 2.5 s): same settings, so every compared decision should agree. Their passes run
// on their own 5 s grids, so one may decide up to a period after the other: --tolerance 6s.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, type V1Node } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgreementView } from '../../cli/commands/agreement.js';
import { demoNodeName } from '../../local/stack/demoCluster.js';
import type { LocalStack } from '../../local/stack/stack.js';
import { StackRecordFile, StackRecordSchema } from '../../local/stack/stackRecord.js';
import { createDynamoDbStores, type DynamoDbStores } from '../../shared/adapters/dynamodb/index.js';
import { runCli } from '../integration/cli/helpers.js';
import { eventually, startTestStack, type TestStack } from '../helpers/localStack.js';

const Timing = { nodeMonitorPeriod: '5s', nodeMonitorGracePeriod: '10s' } as const;
const Unreachable = 'node.kubernetes.io/unreachable';
const Zones = ['zone-a', 'zone-b', 'zone-c'] as const;
const FailingNode = demoNodeName('zone-a', 1);
/** The Decisions that stand for writes to the cluster (the rest are reads and bookkeeping). */
const Writes: ReadonlySet<string> = new Set([
  'updateNodeStatus',
  'swapNodeTaints',
  'markPodsNotReady',
  'deletePod',
  'deletePodForTaintEviction',
]);

let harness: TestStack;
let stack: LocalStack;
let core: CoreV1Api;
let managedStores: DynamoDbStores;

const taintsOf = (node: V1Node): string[] =>
  (node.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();

beforeAll(async () => {
  harness = await startTestStack({
    settings: Timing,
    kubelet: { nodeStatusReportFrequency: 10_000 },
    managedController: { settings: Timing },
    cluster: {
      nodes: Zones.flatMap((zone) =>
        [1, 2, 3].map((i) => ({ name: demoNodeName(zone, i), zone, region: 'region-1' })),
      ),
      // Upstream's admission adds no tolerations here: the pod goes as soon as the node is tainted.
      pods: [
        {
          name: `web-${FailingNode}`,
          node: FailingNode,
          tolerations: [{ key: Unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 }],
        },
      ],
    },
  });
  stack = harness.stack;
  core = stack.kubeConfig().makeApiClient(CoreV1Api);
  const managed = stack.managed;
  if (managed === undefined) throw new Error('the stack started no managed controller');
  managedStores = createDynamoDbStores({
    tables: managed.tables,
    endpoint: stack.endpoints.dynamodb,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  // Both controllers have seen every zone healthy.
  for (const stores of [stack.stores, managedStores]) {
    await eventually(
      'three Normal zones',
      async () => {
        const loaded = await stores.controllerState.load(stack.config.cluster);
        const states = [...loaded.state.zoneStates.values()];
        return states.length === 3 && states.every((s) => s === 'Normal') ? states : undefined;
      },
      90_000,
    );
  }
}, 300_000);

afterAll(async () => {
  managedStores.client.destroy();
  await harness.dispose();
}, 60_000);

describe('the local stack beside a managed controller', () => {
  it('runs its own controller in shadow mode and the managed one active, each on its own stage', async () => {
    const record = StackRecordSchema.parse(
      JSON.parse(await readFile(join(stack.dataDir, StackRecordFile), 'utf8')),
    );
    const managed = stack.managed!;
    expect(stack.config.dryRun).toBe(true);
    expect(managed.config.dryRun).toBe(false);
    expect(managed.config.nodeMonitorGracePeriod).toBe(10_000);
    expect({ stage: stack.stage, busName: stack.busName, nodes: stack.tables.nodes }).toEqual({
      stage: 'dev',
      busName: 'nlc-dev',
      nodes: 'nlc-dev-nodes',
    });
    expect({ stage: managed.stage, busName: managed.busName, nodes: managed.tables.nodes }).toEqual({
      stage: 'managed',
      busName: 'nlc-managed',
      nodes: 'nlc-managed-nodes',
    });
    expect(managed.functions.running()).toBe(true);
    expect(managed.functions.pid).not.toBe(stack.functions.pid);
    expect(managed.relay.running()).toBe(true);
    expect(managed.endpoints.relay).not.toBe(stack.endpoints.relay);
    // Tools find both: `nlc status` the shadow's tables, `--stage managed` the other's.
    expect(record.tables).toEqual(stack.tables);
    expect(record.managed).toEqual({
      stage: 'managed',
      tables: managed.tables,
      endpoints: managed.endpoints,
    });
  });

  it('a node dies and recovers: the managed controller writes, the shadow records both sides, nlc agreement matches them', async () => {
    const startedAt = Date.now();
    stack.simulator!.stopKubelet(FailingNode);
    const tainted = await eventually(
      `${FailingNode} Unknown and tainted unreachable (by the managed controller)`,
      async () => {
        const node = await core.readNode({ name: FailingNode });
        const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
        return ready?.status === 'Unknown' &&
          taintsOf(node).includes(`${Unreachable}:NoExecute`) &&
          taintsOf(node).includes(`${Unreachable}:NoSchedule`)
          ? node
          : undefined;
      },
      60_000,
    );
    expect(tainted.status?.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('NodeStatusUnknown');

    // The writes were the managed controller's: its trail has them done (ok), the shadow's only as
    // dry-run decisions.
    const managedTrail = await managedStores.decisions.query(stack.config.cluster, FailingNode, {
      limit: 200,
    });
    expect(
      managedTrail.some((d) => d.what === 'updateNodeStatus' && d.result === 'ok' && d.at >= startedAt),
    ).toBe(true);
    expect(managedTrail.some((d) => d.result === 'dryRun')).toBe(false);
    expect(managedTrail.some((d) => d.source === 'cluster')).toBe(false);
    // The node stays down until the shadow has decided all it would: its mark, its NoExecute taint (its
    // drainer, a moment after the managed one's) and the pod's eviction. A node back sooner is one the
    // shadow rightly would not taint.
    const shadowOwn = await eventually('the shadow recorded its dry-run decisions', async () => {
      const trail = await stack.stores.decisions.query(stack.config.cluster, FailingNode, { limit: 200 });
      const own = trail.filter((d) => d.at >= startedAt && d.source !== 'cluster' && Writes.has(d.what));
      const noExecute = own.some(
        (d) => d.what === 'swapNodeTaints' && JSON.stringify(d.inputs?.add ?? []).includes('NoExecute'),
      );
      return own.some((d) => d.what === 'updateNodeStatus') &&
        noExecute &&
        own.some((d) => d.what === 'deletePodForTaintEviction')
        ? own
        : undefined;
    });
    expect(shadowOwn.every((d) => d.result === 'dryRun' || d.result === 'intended')).toBe(true);
    expect(shadowOwn.some((d) => d.result === 'ok')).toBe(false);

    // Back: the managed controller removes the taints, and the shadow records that too.
    stack.simulator!.startKubelet(FailingNode);
    await eventually(
      `${FailingNode} Ready and untainted`,
      async () => {
        const node = await core.readNode({ name: FailingNode });
        return taintsOf(node).length === 0 ? node : undefined;
      },
      60_000,
    );
    let lastView: AgreementView | undefined;
    const agreement = await eventually(
      'nlc agreement with the seven actions, each on both sides',
      async () => {
        const { code, stdout, stderr } = await runCli([
          'agreement',
          '--data-dir',
          stack.dataDir,
          '--since',
          '10m',
          '--tolerance',
          '6s',
          '-o',
          'json',
        ]);
        if (code !== 0) throw new Error(`nlc agreement exited ${code}: ${stderr}`);
        const view = JSON.parse(stdout) as AgreementView;
        lastView = view;
        // Settled: the seven actions of the story, each seen on both sides (each side's record of
        // an action comes a moment after it: its event, or its next pass).
        return view.rows.length >= 7 && view.rows.every((r) => r.ours !== null && r.theirs !== null)
          ? view
          : undefined;
      },
      30_000,
      1_000,
    ).catch((error: unknown) => {
      const rows = (lastView?.rows ?? []).map(
        (r) => `${r.kind} ${r.subject} ${r.detail} ${String(r.ours)} ${String(r.theirs)}`,
      );
      throw new Error(`${String(error)}; the last rows:\n${rows.join('\n')}`, { cause: error });
    });
    const rows = agreement.rows.filter((r) => r.subject === FailingNode);
    const podRows = agreement.rows.filter((r) => r.subject === `default/web-${FailingNode}`);
    console.log(
      `local stack beside a managed controller: ${agreement.agreed}/${agreement.decisions} agreed, ` +
        `median lag ${agreement.medianLagMs} ms, largest ${agreement.maxLagMs} ms; ` +
        [...rows, ...podRows]
          .map(
            (r) =>
              `${r.kind} ${r.subject} ${r.detail} ${r.lagMs === null ? `(ours ${String(r.ours)}, theirs ${String(r.theirs)})` : `${r.lagMs} ms`}`,
          )
          .join('; '),
    );
    expect(agreement.cluster).toBe(stack.config.cluster);
    // The shadow's monitor records its minor and mode, and the simulated cluster's /version (the minor
    // its controller runs): the same, so no disagreement can be a version difference.
    expect(agreement.controller).toMatchObject({
      emulationVersion: stack.config.emulationVersion,
      mode: 'shadow',
    });
    expect(agreement.clusterVersion).toBe(`v${stack.config.emulationVersion}.0`);
    expect(agreement.nodesNeverSeen).toEqual([]);
    expect(rows.every((r) => r.agreed)).toBe(true);
    expect(rows.map((r) => [r.kind, r.detail])).toEqual(
      expect.arrayContaining([
        ['markUnknown', ''],
        ['taintAdded', `${Unreachable}:NoSchedule`],
        ['taintAdded', `${Unreachable}:NoExecute`],
        ['taintRemoved', `${Unreachable}:NoExecute`],
      ]),
    );
    // And the pod: marked NotReady (MarkPodsNotReady) and its taint eviction begun, by both. Whichever
    // controller's pass comes first: the shadow decides as if the other's writes were not there.
    expect(podRows.map((r) => [r.kind, r.agreed])).toEqual([
      ['podNotReady', true],
      ['podDeleted', true],
    ]);
    expect(agreement.disagreed).toBe(0);
    for (const row of [...rows, ...podRows]) {
      expect(row.ours).not.toBeNull();
      expect(row.theirs).not.toBeNull();
      expect(Math.abs(row.lagMs ?? Infinity)).toBeLessThanOrEqual(6_000);
    }
  }, 180_000);
});
