// injectEvent: an event published on the bus as the relay's role could, its detail the scenario's fields
// merged over what the relay would send now. Observed from outside the controller: what the bus carried
// (onBusEvent) and which functions ran for it (onInvocation); what they decide is not asserted (a forged
// event is a fault the controller does not all handle yet).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseChaos, type ChaosSettings } from '../../../local/simulate/chaos.js';
import { parseScenario } from '../../../local/simulate/scenario.js';
import {
  runSimulation,
  type BusEvent,
  type Invocation,
  type SimulationResult,
} from '../../../local/simulate/simulation.js';
import { ScenarioError } from '../../../shared/errors.js';
import { runCli } from '../../integration/cli/helpers.js';

interface Run {
  readonly result: SimulationResult;
  readonly bus: (BusEvent & { t: number })[];
  readonly invocations: (Invocation & { t: number })[];
}

async function run(
  timeline: string,
  options: { duration?: string; chaos?: ChaosSettings } = {},
): Promise<Run> {
  const bus: (BusEvent & { t: number })[] = [];
  const invocations: (Invocation & { t: number })[] = [];
  const result = await runSimulation(
    parseScenario(
      `
duration: ${options.duration ?? '2m'}
nodes:
  - generate: { prefix: a-, count: 3, zone: zone-a, region: region-1 }
pods:
  - { name: web-1, node: a-1 }
  - { name: batch-1, node: a-2, defaultTolerations: false }
timeline:
${timeline}
`,
      'injectEvent.yaml',
    ),
    {
      ...(options.chaos !== undefined && { chaos: options.chaos }),
      onBusEvent: (t, event) => bus.push({ t, ...event }),
      onInvocation: (t, invocation) => invocations.push({ t, ...invocation }),
    },
  );
  return { result, bus, invocations };
}

const injected = (r: Run) => r.bus.filter((e) => e.origin === 'injected');
const ranFor = (r: Run) =>
  r.invocations
    .filter((i) => i.origin === 'injected')
    .map((i) => `${i.t} ${i.function} ${i.detailType ?? ''} #${i.attempt}`);

describe('injectEvent Node Changed', () => {
  it('publishes the node as the API holds it, the forged fields merged in, to nodeTaints and taintEviction', async () => {
    const forged = {
      key: 'node.kubernetes.io/unreachable',
      effect: 'NoExecute',
      timeAdded: '2026-01-01T00:00:30Z',
    };
    const r = await run(`  - at: 30s
    injectEvent:
      detailType: Node Changed
      detail:
        node:
          name: a-1
          taints: [${JSON.stringify(forged)}]
          labels: { example.com/forged: "yes" }`);
    const [event, ...more] = injected(r);
    expect(more).toEqual([]);
    expect(event?.t).toBe(30);
    expect(event?.detailType).toBe('Node Changed');
    expect(event?.targets).toEqual(['nodeTaints', 'taintEviction']);
    const relays = r.bus.filter((e) => e.origin === 'relay' && e.detailType === 'Node Changed');
    const detail = event?.detail as {
      type: string;
      node: {
        name: string;
        uid: string;
        taints: unknown[];
        labels: Record<string, string>;
        conditions: unknown[];
      };
      oldNoExecuteTaints: unknown[];
      cluster: string;
      schemaVersion: number;
    };
    expect(detail).toMatchObject({
      schemaVersion: 1,
      cluster: 'default',
      type: 'MODIFIED',
      oldNoExecuteTaints: [],
    });
    expect(detail.node.name).toBe('a-1');
    expect(detail.node.taints).toEqual([forged]);
    // Objects merge: the API's labels stay, the forged one is added.
    expect(detail.node.labels).toMatchObject({
      'topology.kubernetes.io/zone': 'zone-a',
      'topology.kubernetes.io/region': 'region-1',
      'example.com/forged': 'yes',
    });
    expect(detail.node.conditions.length).toBeGreaterThan(0);
    // The relay's own Node Changed for a-1 (the view it republished at its start): the same node.
    const relayed = relays.find((e) => (e.detail as typeof detail).node.name === 'a-1')?.detail as
      typeof detail | undefined;
    expect(relayed?.node.uid).toBe(detail.node.uid);
    expect(relayed?.node.conditions).toEqual(detail.node.conditions);
    expect(ranFor(r)).toEqual(['30 nodeTaints Node Changed #1', '30 taintEviction Node Changed #1']);
  }, 60_000);

  it('is delivered as the relay’s events are: chaos duplicates it too', async () => {
    const r = await run(
      `  - { at: 30s, injectEvent: { detailType: Node Changed, detail: { node: { name: a-3 } } } }`,
      { chaos: parseChaos('duplicates=100,maxDelay=0s,failures=0,seed=4') },
    );
    const copies = ranFor(r).filter((i) => i.includes('nodeTaints'));
    expect(copies.length).toBeGreaterThan(1);
    expect(new Set(copies)).toEqual(new Set(['30 nodeTaints Node Changed #1']));
  }, 60_000);

  it('is not validated: a detail the functions cannot read is refused by each, retried and dropped', async () => {
    const r = await run(
      `  - { at: 60s, injectEvent: { detailType: Node Changed, detail: { schemaVersion: 2, node: { name: a-2 } } } }`,
      { duration: '5m' },
    );
    expect(ranFor(r)).toEqual([
      '60 nodeTaints Node Changed #1',
      '60 taintEviction Node Changed #1',
      '120 nodeTaints Node Changed #2',
      '120 taintEviction Node Changed #2',
      '240 nodeTaints Node Changed #3',
      '240 taintEviction Node Changed #3',
    ]);
    const refused = r.result.diagnostics.filter((d) => d.level === 'error');
    expect(refused.map((d) => `${d.t} ${d.source}`)).toEqual([
      '60 nodeTaints',
      '60 taintEviction',
      '120 nodeTaints',
      '120 taintEviction',
      '240 nodeTaints',
      '240 taintEviction',
    ]);
    expect(new Set(refused.map((d) => d.message))).toEqual(
      new Set([
        'EventParseError: Invalid relay event (1 problem):\n- detail.schemaVersion: unsupported schemaVersion 2: this consumer reads schemaVersion 1',
      ]),
    );
    expect(r.result.stats.deliveries.deadLettered).toBe(2);
  }, 60_000);
});

describe('injectEvent Heartbeat Digest', () => {
  it('replays the last digest the relay published, the forged fields merged in, to the monitor', async () => {
    const r =
      await run(`  - { at: 42s, injectEvent: { detailType: Heartbeat Digest, detail: { sequence: 1000000 } } }
  - { at: 47s, injectEvent: { detailType: Heartbeat Digest } }`);
    const lastBefore = (t: number) =>
      r.bus.filter((e) => e.origin === 'relay' && e.detailType === 'Heartbeat Digest' && e.t <= t).at(-1);
    const [forged, replayed] = injected(r);
    expect(lastBefore(42)?.t).toBe(40);
    expect(forged?.detail).toEqual({ ...(lastBefore(42)?.detail as object), sequence: 1000000 });
    // Without a detail: the relay's last digest (the 45 s one) as it was.
    expect(replayed?.detail).toEqual(lastBefore(47)?.detail);
    expect(forged?.targets).toEqual(['monitorNodeHealth']);
    expect(ranFor(r)).toEqual([
      '42 monitorNodeHealth Heartbeat Digest #1',
      '47 monitorNodeHealth Heartbeat Digest #1',
    ]);
  }, 60_000);

  it('needs a digest to start from', async () => {
    await expect(run(`  - { at: 0s, injectEvent: { detailType: Heartbeat Digest } }`)).rejects.toThrow(
      'timeline[0].injectEvent: no Heartbeat Digest published yet to start from at 0s',
    );
  }, 60_000);
});

describe('injectEvent Pod Changed', () => {
  it('publishes the pod as the API holds it (namespace default), merged, to taintEviction and podProcessing', async () => {
    const r = await run(
      `  - { at: 20s, injectEvent: { detailType: Pod Changed, detail: { type: DELETED, pod: { name: web-1, tolerations: [] } } } }`,
    );
    const [event] = injected(r);
    expect(event?.targets).toEqual(['taintEviction', 'podProcessing']);
    expect(event?.detail).toMatchObject({
      type: 'DELETED',
      pod: { namespace: 'default', name: 'web-1', nodeName: 'a-1', tolerations: [] },
    });
    // The tolerations before the change are the pod's own (admission's two), as the API holds them.
    expect((event?.detail as { oldTolerations: unknown[] }).oldTolerations).toHaveLength(2);
    expect(ranFor(r)).toEqual(['20 taintEviction Pod Changed #1', '20 podProcessing Pod Changed #1']);
  }, 60_000);

  it('fails the run, naming the field, when the pod is not in the API at that instant', async () => {
    // a-2's kubelet reports NotReady: the controller taints it not-ready:NoExecute and evicts batch-1,
    // which tolerates nothing; the kubelet runs, so the pod is gone soon after. The scenario cannot
    // know that: only the run can.
    const timeline = `  - { at: 5s, setCondition: { node: a-2, type: Ready, status: "False" } }
  - { at: 45s, injectEvent: { detailType: Pod Changed, detail: { pod: { name: batch-1 } } } }`;
    const failure = await run(timeline).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ScenarioError);
    expect((failure as ScenarioError).issues).toEqual([
      {
        path: 'timeline[1].injectEvent.detail.pod.name',
        message: 'no pod "default/batch-1" in the API at 45s',
      },
    ]);

    const dir = await mkdtemp(join(tmpdir(), 'nlc-inject-'));
    try {
      const file = join(dir, 'evicted.yaml');
      await writeFile(
        file,
        `duration: 2m\nnodes: [{name: a-1}, {name: a-2}]\npods: [{name: batch-1, node: a-2, defaultTolerations: false}]\ntimeline:\n${timeline}\n`,
      );
      const cli = await runCli(['simulate', file]);
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain(`Invalid scenario ${file}`);
      expect(cli.stderr).toContain(
        '- timeline[1].injectEvent.detail.pod.name: no pod "default/batch-1" in the API at 45s',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
