// Not upstream: a pass registers at most MonitorOptions.registrationLimit new nodes; the others wait for
// later passes, counted in their zones as upstream's first pass counts them (docs/monitor.md#registration).
// Each case runs the same cluster through an unlimited controller (upstream) and a limited one.
import { describe, expect, it } from 'vitest';
import type { ControllerConfig } from '../../../shared/config.js';
import {
  admitNewNodes,
  nodesToMarkUnknown,
  type MonitorPassResult,
} from '../../../shared/domain/monitorNodeHealth.js';
import type { Lease, Node } from '../../../shared/domain/types.js';
import { createZoneID } from '../../../shared/domain/zones.js';
import { Harness, testConfig } from '../../helpers/controllerHarness.js';
import { FakeCluster, newNode, ready, t, zoneLabels } from '../../helpers/fakeCluster.js';

const now0 = t('2026-03-02T09:00:00Z');
const longAgo = t('2026-01-01T00:00:00Z');
const z1 = zoneLabels('region1', 'zone1');
const z2 = zoneLabels('region1', 'zone2');
const z1id = createZoneID('region1', 'zone1');
const z2id = createZoneID('region1', 'zone2');
// Zones counted as large (> 5 nodes) so that the unhealthy threshold gives PartialDisruption.
const config: ControllerConfig = { ...testConfig, largeClusterSizeThreshold: 5 };

/**
 * zone1: 10 nodes, 6 of them reporting Ready=False (60% > 55%: PartialDisruption). zone2: 3 Ready nodes,
 * one that never posted a Ready condition and has no Lease (its first look marks it Unknown), and one
 * excluded from disruption checks.
 */
function cluster(): FakeCluster {
  const nodes: Node[] = [];
  for (let i = 0; i < 10; i++) {
    const status = i % 5 < 3 ? 'False' : 'True';
    nodes.push(
      newNode(`z1-node-${i}`, { created: longAgo, labels: z1, conditions: [ready(status, now0, longAgo)] }),
    );
  }
  for (let i = 0; i < 3; i++) {
    nodes.push(
      newNode(`z2-node-${i}`, { created: longAgo, labels: z2, conditions: [ready('True', now0, longAgo)] }),
    );
  }
  nodes.push(newNode('z2-never-posted', { created: longAgo, labels: z2 }));
  nodes.push(
    newNode('z2-excluded', {
      created: longAgo,
      labels: { ...z2, 'node.kubernetes.io/exclude-disruption': '' },
      conditions: [ready('False', now0, longAgo)],
    }),
  );
  return new FakeCluster(nodes);
}

/** Every node but the one that never posted renews its Lease before each pass. */
function renewLeases(h: Harness, now: number): void {
  for (const name of h.cluster.nodes.keys()) {
    if (name !== 'z2-never-posted') h.leases.set(name, { renewTime: now - 1_000 } satisfies Lease);
  }
}

function registeredEvents(c: FakeCluster): string[] {
  return c.events.filter((e) => e.reason === 'RegisteredNode').map((e) => e.involvedObject.name);
}

const zoneFigures = (r: MonitorPassResult) => ({
  states: Object.fromEntries(r.state.zoneStates),
  gauges: r.disruption.gauges,
});

describe('admitNewNodes', () => {
  const nodes = ['a', 'b', 'c'].map((name) => newNode(name, { created: longAgo }));
  it.each([
    { limit: undefined, admitted: ['a', 'b', 'c'], waiting: [] },
    { limit: 5, admitted: ['a', 'b', 'c'], waiting: [] },
    { limit: 3, admitted: ['a', 'b', 'c'], waiting: [] },
    { limit: 2, admitted: ['a', 'b'], waiting: ['c'] },
    { limit: 0, admitted: [], waiting: ['a', 'b', 'c'] },
  ])('limit $limit admits $admitted, the first in list order', ({ limit, admitted, waiting }) => {
    const result = admitNewNodes(nodes, limit);
    expect(result.admitted.map((n) => n.name)).toEqual(admitted);
    expect([...result.waiting]).toEqual(waiting);
  });
});

describe('monitorNodeHealth with a registration limit', () => {
  it('registers every node within ceil(n / limit) passes, in list order, each once', () => {
    const c = cluster();
    const h = new Harness(c, config, { registrationLimit: 4 });
    const passes: { registered: readonly string[]; waiting: number }[] = [];
    for (let i = 0; i < 5; i++) {
      const now = now0 + i * 5_000;
      renewLeases(h, now);
      const { registered, waiting } = h.monitor(now);
      passes.push({ registered, waiting });
    }
    // The list order (the service passes nodes in name order: monitor.ts passNodes).
    const names = [...c.nodes.keys()];
    expect(passes).toEqual([
      { registered: names.slice(0, 4), waiting: 11 },
      { registered: names.slice(4, 8), waiting: 7 },
      { registered: names.slice(8, 12), waiting: 3 },
      { registered: names.slice(12), waiting: 0 },
      { registered: [], waiting: 0 },
    ]);
    expect(registeredEvents(c)).toEqual(names);
    expect(new Set(h.state.knownNodes.keys())).toEqual(new Set(names));
  });

  it('counts the waiting nodes in their zones as upstream does: the same zone states and gauges, pass by pass', () => {
    const upstream = new Harness(cluster(), config);
    const limited = new Harness(cluster(), config, { registrationLimit: 4 });
    for (let i = 0; i < 5; i++) {
      const now = now0 + i * 5_000;
      renewLeases(upstream, now);
      renewLeases(limited, now);
      expect(zoneFigures(limited.monitor(now))).toEqual(zoneFigures(upstream.monitor(now)));
    }
    expect(limited.state.zoneStates).toEqual(
      new Map([
        [z1id, 'PartialDisruption'],
        [z2id, 'Normal'],
      ]),
    );
    // zone1: 10 nodes, 6 not ready; zone2: 4 counted (the excluded one is not), the never-posted one Unknown.
    expect(limited.last?.disruption.gauges).toEqual([
      { zone: z1id, zoneSize: 10, unhealthyNodes: 6, zoneHealth: 40 },
      { zone: z2id, zoneSize: 4, unhealthyNodes: 1, zoneHealth: 75 },
    ]);
  });

  it('decides nothing about a waiting node: no status write, no health entry, no taint queued, until registered', () => {
    const c = cluster();
    const h = new Harness(c, config, { registrationLimit: 4 });
    const decidedAbout = (name: string) =>
      c.effects.filter((e) => e.kind === 'updateNodeStatus' && e.node === name).length;
    for (let i = 0; i < 3; i++) {
      const now = now0 + i * 5_000;
      renewLeases(h, now);
      const before = {
        state: h.state,
        candidates: nodesToMarkUnknown(
          h.state,
          { nodes: [...c.nodes.values()], leases: h.leases },
          now,
          config,
          {
            registrationLimit: 4,
          },
        ),
      };
      // z2-never-posted is the 14th node listed: it waits for three passes.
      expect(before.candidates).not.toContain('z2-never-posted');
      h.monitor(now);
      expect(decidedAbout('z2-never-posted')).toBe(0);
      expect(h.state.nodeHealth.has('z2-never-posted')).toBe(false);
    }
    const queuedBefore = h.queued(z1id);
    // The pass that registers it marks it Unknown at once (it never posted, long ago), as upstream's first does.
    renewLeases(h, now0 + 15_000);
    const registering = h.monitor(now0 + 15_000);
    expect(registering.registered).toContain('z2-never-posted');
    expect(decidedAbout('z2-never-posted')).toBe(1);
    expect(c.node('z2-never-posted').conditions.find((x) => x.type === 'Ready')?.status).toBe('Unknown');
    // The not-ready nodes of zone1 are queued in the passes that register them, never before.
    expect(queuedBefore.every((name) => h.state.knownNodes.has(name))).toBe(true);
  });

  it('without a limit registers every node in the first pass (upstream)', () => {
    const c = cluster();
    const h = new Harness(c, config);
    renewLeases(h, now0);
    const first = h.monitor(now0);
    expect(first.registered).toHaveLength(c.nodes.size);
    expect(first.waiting).toBe(0);
  });
});
