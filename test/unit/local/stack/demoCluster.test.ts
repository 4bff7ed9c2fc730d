// The demo cluster of `npm start`: three zones of ten nodes, pods on every node, a DaemonSet pod on each
// node, and pods with their own tolerations.
import { describe, expect, it } from 'vitest';
import { DemoDaemonSet, demoCluster } from '../../../../local/stack/demoCluster.js';

describe('demoCluster', () => {
  const cluster = demoCluster();
  const pods = cluster.pods ?? [];

  it('has three zones of ten nodes in one region', () => {
    expect(cluster.nodes).toHaveLength(30);
    const zones = new Map<string, number>();
    for (const node of cluster.nodes) zones.set(node.zone ?? '', (zones.get(node.zone ?? '') ?? 0) + 1);
    expect([...zones]).toEqual([
      ['zone-a', 10],
      ['zone-b', 10],
      ['zone-c', 10],
    ]);
    expect(new Set(cluster.nodes.map((n) => n.region))).toEqual(new Set(['region-1']));
    expect(cluster.nodes[0]?.name).toBe('zone-a-1');
  });

  it('runs one node-agent DaemonSet pod on every node', () => {
    const agents = pods.filter((p) => p.daemonSet === DemoDaemonSet);
    expect(agents.map((p) => p.node).sort()).toEqual(cluster.nodes.map((n) => n.name).sort());
  });

  it('runs 2 ordinary pods per node (admission adds their tolerations) and pods with their own', () => {
    for (const node of cluster.nodes) {
      const plain = pods.filter(
        (p) => p.node === node.name && p.daemonSet === undefined && p.tolerations === undefined,
      );
      expect(plain).toHaveLength(2);
    }
    const seconds = pods.flatMap((p) => p.tolerations ?? []).map((t) => t.tolerationSeconds);
    expect(new Set(seconds)).toEqual(new Set([30, 0, undefined]));
    expect(pods.some((p) => p.tolerations?.some((t) => t.operator === 'Exists' && t.key === undefined))).toBe(
      true,
    );
  });

  it('names every pod once per namespace', () => {
    const keys = pods.map((p) => `${p.namespace ?? 'default'}/${p.name}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('scales for tests', () => {
    const small = demoCluster({ zones: ['z1', 'z2'], nodesPerZone: 1, podsPerNode: 0 });
    expect(small.nodes.map((n) => n.name)).toEqual(['z1-1', 'z2-1']);
    expect((small.pods ?? []).filter((p) => p.name.startsWith('web-'))).toHaveLength(0);
  });
});
