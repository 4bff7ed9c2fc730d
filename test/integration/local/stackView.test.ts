// What the live view reads (local/stack/view.ts), against a real API simulator and dynalite: nodes as the
// API has them (Ready, taints, lease age), the kubelets' states, the decision trail newest first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServerHandle } from '../../../local/apiserver/index.js';
import { KubeletFleet } from '../../../local/kubelet/index.js';
import { snapshotReader } from '../../../local/stack/view.js';
import { VirtualScheduler } from '../../../local/virtualScheduler.js';
import { startDynamoDb, type DynamoFixture } from '../../helpers/dynamodb.js';

const t0 = Date.parse('2026-01-29T09:00:00Z');
const cluster = 'default';

let api: ApiServerHandle;
let db: DynamoFixture;
let fleet: KubeletFleet;

beforeAll(async () => {
  const scheduler = new VirtualScheduler(t0);
  api = await startApiServer({ clock: scheduler });
  db = await startDynamoDb('nlc-view');
  fleet = new KubeletFleet({ store: api.store, scheduler });
  fleet.seed({
    nodes: [
      { name: 'a-1', zone: 'zone-a', region: 'region-1' },
      { name: 'a-2', zone: 'zone-a', region: 'region-1', kubelet: 'stopped' },
    ],
  });
  api.store.nodes.patch(
    'a-2',
    { spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] } },
    { type: 'merge' },
  );
  const stores = db.stores();
  await stores.decisions.append(cluster, [
    {
      node: 'a-2',
      at: t0 + 1_000,
      source: 'drainer',
      what: 'swapNodeTaints',
      why: 'doNoExecuteTaintingPass',
      result: 'intended',
    },
    {
      node: 'a-2',
      at: t0 + 1_000,
      source: 'drainer',
      what: 'swapNodeTaints',
      why: 'doNoExecuteTaintingPass',
      result: 'ok',
      seq: 1,
    },
    { node: '#cluster', at: t0 + 2_000, source: 'monitor', what: 'observationGap', why: 'digests resumed' },
    { node: 'a-1', at: t0, source: 'monitor', what: 'register', why: 'node seen for the first time' },
    {
      node: 'a-2',
      at: t0 + 500,
      source: 'taint-eviction',
      what: 'schedulePodEviction',
      why: 'processPodOnNode',
      inputs: { pod: 'default/web-1' },
      result: 'fires at 2026-01-29T09:05:00.500Z',
    },
  ]);
}, 60_000);

afterAll(async () => {
  fleet.close();
  await api.close();
  await db.stop();
});

function reader(outcomesOnly: boolean) {
  return snapshotReader({
    cluster,
    stores: db.stores(),
    kubeConfig: api.kubeConfig(),
    kubeletState: (node) => fleet.kubelet(node)?.state,
    relay: () => ({ running: true, synced: true, nextSequence: 3 }),
    functionsRunning: () => true,
    outcomesOnly,
  });
}

describe('snapshotReader', () => {
  it('shows each node as the API has it, with its kubelet; no probe age before the first pass', async () => {
    const snapshot = await reader(true).read(t0 + 7_000);
    expect(snapshot.error).toBeNull();
    expect(snapshot.nodes).toEqual([
      {
        name: 'a-1',
        zone: 'region-1:zone-a',
        kubelet: 'running',
        ready: 'True',
        taints: [],
        probe: 'unknown',
        probeAgeSeconds: null,
        queuePosition: null,
      },
      {
        name: 'a-2',
        zone: 'region-1:zone-a',
        kubelet: 'stopped',
        ready: 'True',
        taints: ['unreachable:NoExecute'],
        probe: 'unknown',
        probeAgeSeconds: null,
        queuePosition: null,
      },
    ]);
    // Empty controller state: no digest, so no probe the controller saw. The zone is counted from the
    // nodes shown, with no state until the controller's first pass counts it.
    expect(snapshot.zones).toEqual([
      {
        zone: 'region-1:zone-a',
        state: null,
        size: 2,
        unhealthy: 0,
        unhealthyPercent: 0,
        limiter: null,
        queueLength: 0,
        processedOnce: 0,
        lastPass: null,
      },
    ]);
    expect(snapshot.observedAt).toBeNull();
  });

  it('reads the decisions of every node and of the cluster, newest first', async () => {
    const all = await reader(false).read(t0 + 7_000);
    expect(all.decisions.map((d) => `${d.subject} ${d.what} ${d.result ?? '-'}`)).toEqual([
      '#cluster observationGap -',
      'a-2 swapNodeTaints ok',
      'a-2 swapNodeTaints intended',
      'a-2 schedulePodEviction fires at 2026-01-29T09:05:00.500Z',
      'a-1 register -',
    ]);
    expect(all.decisions.find((d) => d.what === 'schedulePodEviction')?.pod).toBe('default/web-1');
    expect(all.decisions.find((d) => d.what === 'register')?.pod).toBeNull();
    const outcomes = await reader(true).read(t0 + 7_000);
    expect(outcomes.decisions.map((d) => d.result)).not.toContain('intended');
  });

  it('keeps the newest decisions of all subjects, even when one node made every recent one', async () => {
    // A node that fails: its Ready=Unknown write, its taint, then more pod decisions than anything
    // else; every node's start-up registration is older. The live view once read 4 rows per subject, so
    // the pod rows pushed the node's own writes out and old registrations filled the panel.
    const busy = 'busy';
    const stores = db.stores();
    const pods = ['web-1', 'web-2', 'web-3', 'batch-1'];
    await stores.decisions.append(busy, [
      { node: 'a-1', at: t0, source: 'monitor', what: 'register', why: 'node seen for the first time' },
      { node: 'a-2', at: t0, source: 'monitor', what: 'register', why: 'node seen for the first time' },
    ]);
    const write = (at: number, source: string, what: string, extra: object = {}) =>
      stores.decisions.append(busy, [
        { node: 'a-1', at, source, what, why: what, result: 'intended', ...extra },
        { node: 'a-1', at, source, what, why: what, result: 'ok', seq: 1, ...extra },
      ]);
    await write(t0 + 60_000, 'monitor', 'updateNodeStatus');
    await write(t0 + 61_000, 'drainer', 'swapNodeTaints');
    for (const [i, pod] of pods.entries()) {
      await write(t0 + 62_000 + i, 'taint-eviction', 'deletePodForTaintEviction', {
        inputs: { pod: `default/${pod}` },
      });
    }
    const read = () =>
      snapshotReader({
        cluster: busy,
        stores: db.stores(),
        kubeConfig: api.kubeConfig(),
        relay: () => ({ running: true, synced: true, nextSequence: 3 }),
        functionsRunning: () => true,
        decisionLimit: 7,
        outcomesOnly: true,
      }).read(t0 + 70_000);
    const first = await read();
    expect(first.error).toBeNull();
    expect(first.decisions.map((d) => `${d.subject} ${d.pod ?? '-'} ${d.what} ${d.result ?? '-'}`)).toEqual([
      'a-1 default/batch-1 deletePodForTaintEviction ok',
      'a-1 default/web-3 deletePodForTaintEviction ok',
      'a-1 default/web-2 deletePodForTaintEviction ok',
      'a-1 default/web-1 deletePodForTaintEviction ok',
      'a-1 - swapNodeTaints ok',
      'a-1 - updateNodeStatus ok',
      'a-1 - register -',
    ]);
    // The same rows in the same order on the next frame.
    expect((await read()).decisions).toEqual(first.decisions);
  });
});
