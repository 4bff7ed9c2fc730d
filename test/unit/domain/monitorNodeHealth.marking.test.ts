// Not upstream: a pass starts at most MonitorOptions.markingLimit markings (nodes and API requests); the
// others wait for later passes, counted in their zones as the write would leave them
// (docs/monitor.md#marking). Each case runs the same mass failure through an unlimited controller
// (upstream) and a limited one.
import { describe, expect, it } from 'vitest';
import type { ControllerConfig } from '../../../shared/config.js';
import {
  effectRequests,
  nodesToMarkUnknown,
  type MonitorOptions,
  type MonitorPassResult,
} from '../../../shared/domain/monitorNodeHealth.js';
import type { Lease, Node, Pod } from '../../../shared/domain/types.js';
import { createZoneID } from '../../../shared/domain/zones.js';
import { Harness, testConfig } from '../../helpers/controllerHarness.js';
import { FakeCluster, newNode, newPod, ready, t, zoneLabels } from '../../helpers/fakeCluster.js';

const now0 = t('2026-03-02T09:00:00Z');
const longAgo = t('2026-01-01T00:00:00Z');
const z1 = zoneLabels('region1', 'zone1');
const z2 = zoneLabels('region1', 'zone2');
const z1id = createZoneID('region1', 'zone1');
const z2id = createZoneID('region1', 'zone2');
const config: ControllerConfig = { ...testConfig, largeClusterSizeThreshold: 5 };
const PASSES = 20;
/** zone1 goes silent after the first pass: its nodes are due at the first pass past the grace period. */
const firstDuePass = Math.floor(config.nodeMonitorGracePeriod / 5_000) + 1;

/** zone1: 12 nodes (one excluded from disruption checks), zone2: 4; two pods on every node. */
function cluster(): FakeCluster {
  const nodes: Node[] = [];
  const pods: Pod[] = [];
  const add = (name: string, labels: Record<string, string>) => {
    nodes.push(newNode(name, { created: longAgo, labels, conditions: [ready('True', now0, longAgo)] }));
    pods.push(newPod(`${name}-a`, name), newPod(`${name}-b`, name));
  };
  for (let i = 0; i < 11; i++) add(`z1-node-${String(i).padStart(2, '0')}`, z1);
  add('z1-node-excluded', { ...z1, 'node.kubernetes.io/exclude-disruption': '' });
  for (let i = 0; i < 4; i++) add(`z2-node-${i}`, z2);
  return new FakeCluster(nodes, pods);
}

const zone1 = (c: FakeCluster): string[] => [...c.nodes.keys()].filter((n) => n.startsWith('z1-'));

/** zone2 renews before every pass; zone1 only before the first (`silentFrom` passes later it stops). */
function renewLeases(
  h: Harness,
  pass: number,
  now: number,
  recovered: ReadonlySet<string> = new Set(),
): void {
  for (const name of h.cluster.nodes.keys()) {
    if (pass === 0 || name.startsWith('z2-') || recovered.has(name))
      h.leases.set(name, { renewTime: now - 1_000 } satisfies Lease);
  }
}

const statusWrites = (c: FakeCluster, name?: string): string[] =>
  c.effects
    .filter((e) => e.kind === 'updateNodeStatus' && (name === undefined || e.node === name))
    .map((e) => (e.kind === 'updateNodeStatus' ? e.node : ''));

const readyOf = (c: FakeCluster, name: string): string | undefined =>
  c.node(name).conditions.find((x) => x.type === 'Ready')?.status;

const zoneFigures = (r: MonitorPassResult) => ({
  states: Object.fromEntries(r.state.zoneStates),
  gauges: r.disruption.gauges,
});

function run(options: MonitorOptions, recovered: ReadonlySet<string> = new Set()) {
  const c = cluster();
  const h = new Harness(c, config, options);
  const passes: MonitorPassResult[] = [];
  for (let i = 0; i < PASSES; i++) {
    const now = now0 + i * 5_000;
    renewLeases(h, i, now, i > firstDuePass ? recovered : new Set());
    passes.push(h.monitor(now));
  }
  return { c, h, passes };
}

describe('effectRequests', () => {
  it('counts one request per call and one per pod for MarkPodsNotReady', () => {
    const pods = [newPod('a', 'n'), newPod('b', 'n'), newPod('c', 'n')];
    expect(effectRequests({ kind: 'markPodsNotReady', node: 'n', pods, why: 'x' })).toBe(3);
    expect(effectRequests({ kind: 'listPodsOnNode', node: 'n' })).toBe(1);
    expect(effectRequests({ kind: 'getNode', node: 'n' })).toBe(1);
  });
});

describe('monitorNodeHealth with a marking limit', () => {
  it('marks every silent node within ceil(n / limit) passes, in list order, each once with its pods', () => {
    const { c, passes } = run({ markingLimit: { nodes: 5, requests: 1_000 } });
    const names = zone1(c);
    const due = passes.slice(firstDuePass);
    expect(due.slice(0, 4).map((p) => p.waitingToMark)).toEqual([7, 2, 0, 0]);
    expect(statusWrites(c)).toEqual(names);
    for (const name of names) {
      expect(readyOf(c, name)).toBe('Unknown');
      expect(c.pods.filter((p) => p.nodeName === name).map((p) => p.ready)).toEqual(['False', 'False']);
    }
    // No pass before the grace period and none after the third marking pass has anything waiting.
    expect(passes.filter((p) => p.waitingToMark > 0)).toHaveLength(2);
  });

  it('counts the waiting nodes as the write would leave them: the same zone states and gauges, pass by pass', () => {
    const upstream = run({});
    const limited = run({ markingLimit: { nodes: 5, requests: 1_000 } });
    for (let i = 0; i < PASSES; i++)
      expect(zoneFigures(limited.passes[i] as MonitorPassResult)).toEqual(
        zoneFigures(upstream.passes[i] as MonitorPassResult),
      );
    expect(limited.h.state.zoneStates).toEqual(
      new Map([
        [z1id, 'FullDisruption'],
        [z2id, 'Normal'],
      ]),
    );
    // zone1: 11 counted (the excluded node is not), all Unknown.
    expect(limited.passes[firstDuePass]?.disruption.gauges).toEqual([
      { zone: z1id, zoneSize: 11, unhealthyNodes: 11, zoneHealth: 0 },
      { zone: z2id, zoneSize: 4, unhealthyNodes: 0, zoneHealth: 100 },
    ]);
    // Upstream wrote every status in the one pass.
    expect(upstream.passes[firstDuePass]?.waitingToMark).toBe(0);
    expect(statusWrites(upstream.c)).toEqual(zone1(upstream.c));
  });

  it('stops starting markings once the pass has made its requests: 5 per marking here (status, list, Event, 2 pods)', () => {
    const { c, passes } = run({ markingLimit: { nodes: 100, requests: 10 } });
    const first = passes[firstDuePass] as MonitorPassResult;
    // Marking 1 takes 0 → 5, marking 2 5 → 10; the third finds the budget spent.
    expect(first.apiRequests).toBe(10);
    expect(first.waitingToMark).toBe(10);
    expect(statusWrites(c)).toEqual(zone1(c));
    expect(passes.slice(firstDuePass, firstDuePass + 6).map((p) => p.waitingToMark)).toEqual([
      10, 8, 6, 4, 2, 0,
    ]);
  });

  it('decides nothing about a waiting node: no write, its health as it was, no taint queued, until its turn', () => {
    const c = cluster();
    const h = new Harness(c, config, { markingLimit: { nodes: 5, requests: 1_000 } });
    const last = 'z1-node-10';
    for (let i = 0; i <= firstDuePass + 1; i++) {
      const now = now0 + i * 5_000;
      renewLeases(h, i, now);
      const healthBefore = h.state.nodeHealth.get(last);
      const candidates = nodesToMarkUnknown(
        h.state,
        { nodes: [...c.nodes.values()], leases: h.leases },
        now,
        config,
        {
          markingLimit: { nodes: 5, requests: 1_000 },
        },
      );
      expect(candidates.length).toBeLessThanOrEqual(5);
      h.monitor(now);
      if (i >= firstDuePass) {
        // Due since firstDuePass, its turn is the third marking pass.
        expect(candidates).not.toContain(last);
        expect(statusWrites(c, last)).toEqual([]);
        expect(h.state.nodeHealth.get(last)).toBe(healthBefore);
        expect(h.queued(z1id)).not.toContain(last);
        expect(readyOf(c, last)).toBe('True');
      }
    }
    renewLeases(h, firstDuePass + 2, now0 + (firstDuePass + 2) * 5_000);
    h.monitor(now0 + (firstDuePass + 2) * 5_000);
    expect(statusWrites(c, last)).toEqual([last]);
    expect(readyOf(c, last)).toBe('Unknown');
    expect(h.queued(z1id)).toContain(last);
  });

  it('never marks a waiting node that renews before its turn', () => {
    // Due at firstDuePass with 9 others before them in list order; renewing from the next pass on.
    const late = new Set(['z1-node-09', 'z1-node-10']);
    const { c } = run({ markingLimit: { nodes: 5, requests: 1_000 } }, late);
    // Upstream marks them in the pass they are due.
    expect(statusWrites(run({}, late).c)).toEqual(zone1(c));
    for (const name of late) {
      expect(statusWrites(c, name)).toEqual([]);
      expect(readyOf(c, name)).toBe('True');
    }
    expect(statusWrites(c)).toEqual(zone1(c).filter((n) => !late.has(n)));
  });

  it('without a limit marks every silent node in the first pass past the grace period (upstream)', () => {
    const { c, passes } = run({});
    expect(passes.every((p) => p.waitingToMark === 0)).toBe(true);
    expect(statusWrites(c)).toEqual(zone1(c));
    expect(passes[firstDuePass]?.apiRequests).toBe(zone1(c).length * 5);
  });
});
