// nlc simulate's human summary stays readable at thousands of nodes: a small zone names each node with
// its state; a large one is summed up per state (count, first names in natural order, "… and N
// more"); `-o wide` names every node.
import { describe, expect, it } from 'vitest';
import { describeZoneNodes, renderSimulation } from '../../../../cli/commands/simulate.js';
import { timelineLine, type SummaryRecord } from '../../../../local/simulate/timeline.js';

const unreachable = [
  { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
] as const;

function nodes(count: number, zone: string, down: (i: number) => boolean): SummaryRecord['nodes'] {
  // Listed out of natural order, as the API may list them.
  return Array.from({ length: count }, (_, i) => count - i).map((n) => ({
    node: `a-${n}`,
    zone,
    ready: down(n) ? ('Unknown' as const) : ('True' as const),
    taints: down(n) ? [...unreachable] : [],
  }));
}

describe('describeZoneNodes', () => {
  it('names each node of a small zone, in natural order', () => {
    expect(
      describeZoneNodes(
        nodes(3, 'z', (n) => n === 1),
        false,
      ),
    ).toBe('a-1 (Unknown; unreachable:NoSchedule, unreachable:NoExecute), a-2 (True), a-3 (True)');
  });

  it('sums up a large zone per state: a count, the first names, how many more', () => {
    expect(
      describeZoneNodes(
        nodes(1000, 'z', (n) => n <= 200),
        false,
      ),
    ).toBe(
      '200 nodes (Unknown; unreachable:NoSchedule, unreachable:NoExecute): a-1, a-2, a-3 … and 197 more; ' +
        '800 nodes (True): a-201, a-202, a-203 … and 797 more',
    );
  });

  it('names every node with -o wide', () => {
    const text = describeZoneNodes(
      nodes(1000, 'z', () => false),
      true,
    );
    expect(text.split(', ')).toHaveLength(1000);
    expect(text.startsWith('a-1 (True), a-2 (True), a-3 (True)')).toBe(true);
  });
});

describe('renderSimulation at 5,000 nodes', () => {
  const start = Date.parse('2026-01-01T00:00:00Z');
  const zones = ['a', 'b', 'c', 'd', 'e'];
  const summary: SummaryRecord = {
    kind: 'Summary',
    zones: zones.map((z) => ({ zone: `r:${z}`, state: 'Normal', size: 1000, unhealthy: 0 })),
    nodes: zones.flatMap((z) => nodes(1000, `r:${z}`, (n) => z === 'a' && n % 2 === 0)),
    evictions: 0,
  };
  const lines = [timelineLine(start, start + 900_000, summary)];

  it('keeps every line short, ends the summary with a newline', () => {
    const text = renderSimulation('', { lines }, (_colour, t) => t);
    expect(Math.max(...text.split('\n').map((l) => l.length))).toBeLessThan(250);
    expect(text.endsWith('Pods evicted: 0\n')).toBe(true);
  });

  it('lists every node with -o wide', () => {
    const text = renderSimulation('', { lines }, (_colour, t) => t, { wide: true });
    expect(text).toContain('a-999 (True), a-1000 (Unknown;');
  });
});
