// docs/architecture.md#budgets: a monitor pass over 5,000 nodes costs handler CPU linear in the nodes.
// Steady state: every node renewed its lease since the last pass, nothing to write.
// Run: npm run bench (reports ops/s per cluster size; compare per-node cost across sizes).
import { bench, describe } from 'vitest';
import { UPSTREAM_DEFAULTS } from '../shared/config.js';
import { type ControllerState, emptyControllerState } from '../shared/domain/controllerState.js';
import { drive, type Effect, type EffectResult } from '../shared/domain/effects.js';
import { monitorNodeHealth } from '../shared/domain/monitorNodeHealth.js';
import type { Lease, Node } from '../shared/domain/types.js';

const start = Date.parse('2026-01-01T00:00:00Z');
const zones = ['a', 'b', 'c'];

function cluster(size: number): Node[] {
  return Array.from({ length: size }, (_, i) => ({
    name: `ip-10-0-${Math.floor(i / 250)}-${i % 250}.eu-west-1.compute.internal`,
    uid: `uid-${i}`,
    creationTimestamp: start - 86_400_000,
    labels: {
      'topology.kubernetes.io/region': 'eu-west-1',
      'topology.kubernetes.io/zone': `eu-west-1${zones[i % 3] ?? 'a'}`,
    },
    taints: [],
    unschedulable: false,
    conditions: [
      { type: 'Ready', status: 'True', lastHeartbeatTime: start, lastTransitionTime: start - 86_400_000 },
    ],
  }));
}

// Answers every effect with success: in steady state the only effects are pod lists.
const execute = (effect: Effect): EffectResult =>
  effect.kind === 'listPodsOnNode'
    ? { ok: true, value: [] }
    : effect.kind === 'getNode'
      ? { ok: false, reason: 'NotFound', message: '' }
      : { ok: true };

for (const size of [1_000, 2_000, 5_000]) {
  describe(`monitorNodeHealth steady state, ${size} nodes`, () => {
    const nodes = cluster(size);
    let state: ControllerState = emptyControllerState();
    let now = start;
    const leases = new Map<string, Lease>(nodes.map((n) => [n.name, { renewTime: now }]));
    state = drive(monitorNodeHealth(state, { nodes, leases }, now, UPSTREAM_DEFAULTS), execute).state;

    bench(`${size} nodes`, () => {
      now += 5_000;
      for (const n of nodes) leases.set(n.name, { renewTime: now });
      state = drive(monitorNodeHealth(state, { nodes, leases }, now, UPSTREAM_DEFAULTS), execute).state;
    });
  });
}
