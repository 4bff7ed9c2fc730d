// restoreApiServer: the API server's store goes back to its state at an earlier instant, as after an
// etcd restore, and every watch ends with 410 Gone. Observed from outside the controller: the API's
// objects (the Summary) and what the relay publishes after relisting (the bus). What the controller makes
// of a cluster that went back in time is not asserted (it is not all handled yet).
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../../local/simulate/scenario.js';
import { runSimulation, type BusEvent, type SimulationResult } from '../../../local/simulate/simulation.js';
import { summaryOf } from './helpers.js';

interface Run {
  readonly result: SimulationResult;
  readonly bus: (BusEvent & { t: number })[];
}

async function run(text: string): Promise<Run> {
  const bus: (BusEvent & { t: number })[] = [];
  const result = await runSimulation(parseScenario(text, 'restoreApiServer.yaml'), {
    onBusEvent: (t, event) => bus.push({ t, ...event }),
  });
  return { result, bus };
}

interface ChangeDetail {
  readonly type: string;
  readonly node?: {
    readonly name: string;
    readonly resourceVersion?: string;
    readonly unschedulable: boolean;
  };
  readonly pod?: { readonly namespace: string; readonly name: string; readonly deletionTimestamp?: string };
}

/** The relay's Node and Pod Changed from `from` to `to` seconds, compactly: `t type kind/name`. */
const changes = (r: Run, from: number, to = Infinity) =>
  r.bus
    .filter((e) => e.origin === 'relay' && e.detailType !== 'Heartbeat Digest' && e.t >= from && e.t <= to)
    .map((e) => {
      const d = e.detail as ChangeDetail;
      return `${e.t} ${d.type} ${d.node !== undefined ? `node/${d.node.name}` : `pod/${d.pod?.namespace ?? ''}/${d.pod?.name ?? ''}`}`;
    });

/** The probe ages (seconds) of a digest, by node name. */
function probeAges(event: BusEvent): Record<string, number> {
  const ages: Record<string, number> = {};
  const { probeAges: levels } = event.detail as {
    probeAges: Record<string, Record<string, Record<string, number>>>;
  };
  for (const [domain, prefixes] of Object.entries(levels))
    for (const [prefix, suffixes] of Object.entries(prefixes))
      for (const [suffix, age] of Object.entries(suffixes))
        ages[`${prefix === '' ? '' : `${prefix}-`}${suffix}${domain === '' ? '' : `.${domain}`}`] =
          age / 1000;
  return ages;
}

const cluster = `
nodes:
  - generate: { prefix: a-, count: 3, zone: zone-a, region: region-1 }
pods:
  - { name: web-1, node: a-1 }
  - { name: web-2, node: a-2 }
`;

describe('restoreApiServer', () => {
  it('reverts every object and its resourceVersion, and the relay relists and publishes what changed', async () => {
    const r = await run(`
duration: 3m
${cluster}
timeline:
  - { at: 30s, addNode: { name: b-1, zone: zone-a, region: region-1 } }
  - { at: 40s, deletePod: web-2 }
  - { at: 50s, cordon: a-3 }
  - { at: 60s, restoreApiServer: 35s }
`);
    expect(r.result.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
    // Before: the relay saw b-1 come, web-2 go (terminating, then confirmed by its kubelet) and a-3
    // cordoned, each on its watch. At 60 s no watch event says anything: its watches end with 410 and it
    // relists, and the differences are its changes: a-3 as it was, b-1 deleted, web-2 back.
    expect(changes(r, 1)).toEqual([
      '30 ADDED node/b-1',
      '30 MODIFIED node/b-1',
      '40 MODIFIED pod/default/web-2',
      '41 DELETED pod/default/web-2',
      '50 MODIFIED node/a-3',
      '50 MODIFIED node/a-3',
      '60 MODIFIED node/a-3',
      '60 DELETED node/b-1',
      '60 ADDED pod/default/web-2',
    ]);
    const nodeAt = (t: number, name: string) =>
      r.bus
        .filter((e) => e.t === t && e.detailType === 'Node Changed')
        .map((e) => (e.detail as ChangeDetail).node)
        .find((n) => n?.name === name);
    // a-3 is back as the relay first listed it: not cordoned, and its resourceVersion is the old one
    // (the counter went back with it), older than those of the changes the restore undid.
    const first = nodeAt(0, 'a-3');
    const restored = nodeAt(60, 'a-3');
    expect(restored?.unschedulable).toBe(false);
    expect(restored?.resourceVersion).toBe(first?.resourceVersion);
    expect(Number(restored?.resourceVersion)).toBeLessThan(Number(nodeAt(50, 'a-3')?.resourceVersion));
    // The API at the end: b-1 is gone.
    expect(summaryOf(r.result).nodes.map((n) => n.node)).toEqual(['a-1', 'a-2', 'a-3']);
    // The kubelets kept renewing on the restored Leases: every digest after the restore probes every
    // node within a renewal period; b-1 is no longer in them.
    const digests = r.bus.filter((e) => e.detailType === 'Heartbeat Digest' && e.t >= 60);
    expect(digests.length).toBeGreaterThan(20);
    for (const digest of digests) {
      const ages = probeAges(digest);
      expect(Object.keys(ages).sort()).toEqual(['a-1', 'a-2', 'a-3']);
      expect(Math.max(...Object.values(ages))).toBeLessThanOrEqual(10);
    }
  }, 60_000);

  it('goes back to the cluster the scenario describes from t = 0; a node deleted since is back, its kubelet stopped', async () => {
    const r = await run(`
duration: 4m
${cluster}
timeline:
  - { at: 20s, deleteNode: a-2 }
  - { at: 30s, addPod: { name: job-1, node: a-1 } }
  - { at: 1m, restoreApiServer: 1m }
  - { at: 2m, startKubelet: a-2 }
`);
    expect(r.result.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
    // (What the controller does to a-2 afterwards, silent until 2m, is its business.)
    expect(changes(r, 1, 60)).toEqual([
      '20 DELETED node/a-2',
      '30 ADDED pod/default/job-1',
      '60 ADDED node/a-2',
      '60 DELETED pod/default/job-1',
    ]);
    // a-2 is back, its machine gone with its Node: nothing renews its Lease until startKubelet at 2m.
    const a2 = r.bus
      .filter((e) => e.detailType === 'Heartbeat Digest' && e.t >= 65)
      .map((e) => [e.t, probeAges(e)['a-2']] as const);
    expect(a2.filter(([t, age]) => t < 120 && (age ?? 0) <= 10)).toEqual([]);
    expect(a2.filter(([t, age]) => t >= 120 && (age ?? Infinity) > 10)).toEqual([]);
    expect(summaryOf(r.result).nodes.map((n) => n.node)).toEqual(['a-1', 'a-2', 'a-3']);
  }, 60_000);

  it('0s back goes to the start of the instant: what the same instant did before it is undone', async () => {
    const r = await run(`
duration: 2m
${cluster}
timeline:
  - { at: 30s, cordon: a-1 }
  - { at: 30s, restoreApiServer: 0s }
`);
    // The relay saw the cordon on its watch and, relisting, the node back as it was: its publisher
    // keeps the newest change of a node it has not sent yet, so one Node Changed, not cordoned.
    expect(changes(r, 1)).toEqual(['30 MODIFIED node/a-1']);
    const [event] = r.bus.filter((e) => e.t === 30 && e.detailType === 'Node Changed');
    expect((event?.detail as ChangeDetail).node?.unschedulable).toBe(false);
  }, 60_000);
});
