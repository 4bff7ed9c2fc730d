// podSweepsDue (shared/app/reconcilePods.ts): which nodes' pods a pass decides again from the API.
import { describe, expect, it } from 'vitest';
import {
  MaxPodSweepsPerPass,
  PodSweepPeriod,
  podSweepsDue,
  type PodSweepMemo,
} from '../../../shared/app/reconcilePods.js';
import type { NodeHealthData } from '../../../shared/domain/nodeHealth.js';
import { TaintNodeUnreachable } from '../../../shared/domain/taints.js';
import type { Node } from '../../../shared/domain/types.js';

const now = Date.parse('2026-03-02T09:00:00Z');

function node(name: string, tainted = false): Node {
  return {
    name,
    uid: `uid-${name}`,
    creationTimestamp: now - 3_600_000,
    labels: {},
    taints: tainted ? [{ key: TaintNodeUnreachable, effect: 'NoExecute' }] : [],
    unschedulable: false,
    conditions: [],
  };
}

function health(ready: 'True' | 'False' | 'Unknown', since = now - 60_000): NodeHealthData {
  return {
    probeTimestamp: since,
    readyTransitionTimestamp: since,
    status: [{ type: 'Ready', status: ready }],
  };
}

describe('podSweepsDue', () => {
  it('sweeps each node whose pods matter once every PodSweepPeriod, its first sweep staggered within one', () => {
    const nodes = Array.from({ length: 40 }, (_, i) => node(`n${i}`, true));
    const memo: PodSweepMemo = new Map();
    const sweptAt = new Map<string, number[]>();
    for (let t = now; t < now + 3 * PodSweepPeriod; t += 5_000) {
      for (const sweep of podSweepsDue(nodes, { nodeHealth: new Map() }, 'taint', memo, t)) {
        memo.set(sweep.node.name, t);
        sweptAt.set(sweep.node.name, [...(sweptAt.get(sweep.node.name) ?? []), t]);
      }
    }
    for (const n of nodes) {
      const times = sweptAt.get(n.name) ?? [];
      expect(times[0], n.name).toBeLessThanOrEqual(now + PodSweepPeriod);
      for (let i = 1; i < times.length; i++)
        expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBe(PodSweepPeriod);
    }
    // Staggered: not all in one pass.
    const firsts = new Set(nodes.map((n) => sweptAt.get(n.name)?.[0]));
    expect(firsts.size).toBeGreaterThan(10);
  });

  it('tainted nodes matter only in taint mode; not-Ready nodes in both, with their transition time', () => {
    const memo: PodSweepMemo = new Map([
      ['t', now - PodSweepPeriod],
      ['u', now - PodSweepPeriod],
      ['r', now - PodSweepPeriod],
    ]);
    const state = {
      nodeHealth: new Map([
        ['u', health('Unknown', now - 90_000)],
        ['r', health('True')],
      ]),
    };
    const nodes = [node('t', true), node('u'), node('r')];
    expect(
      podSweepsDue(nodes, state, 'taint', new Map(memo), now).map((s) => [
        s.node.name,
        s.tainted,
        s.notReadySince,
      ]),
    ).toEqual([
      ['t', true, undefined],
      ['u', false, now - 90_000],
    ]);
    expect(podSweepsDue(nodes, state, 'legacy', new Map(memo), now).map((s) => s.node.name)).toEqual(['u']);
  });

  it(`sweeps at most ${MaxPodSweepsPerPass} nodes a pass, the longest waiting first, and forgets nodes that stopped mattering`, () => {
    const nodes = Array.from({ length: MaxPodSweepsPerPass + 10 }, (_, i) => node(`n${i}`, true));
    const memo: PodSweepMemo = new Map(nodes.map((n, i) => [n.name, now - PodSweepPeriod - i]));
    memo.set('gone', now - PodSweepPeriod);
    const due = podSweepsDue(nodes, { nodeHealth: new Map() }, 'taint', memo, now);
    expect(due).toHaveLength(MaxPodSweepsPerPass);
    expect(due[0]?.node.name).toBe(`n${MaxPodSweepsPerPass + 9}`);
    expect(memo.has('gone')).toBe(false);
  });
});
