// The --no-ui log: what changed between two snapshots of the live view.
import { describe, expect, it } from 'vitest';
import type { ZoneStatus } from '../../../../shared/present/statusReport.js';
import {
  newestDecisions,
  snapshotChanges,
  zoneRows,
  type ApiNode,
  type DecisionRow,
  type NodeRow,
  type StackSnapshot,
} from '../../../../local/stack/view.js';

const at = Date.parse('2026-01-29T09:00:00Z');

function node(overrides: Partial<NodeRow> = {}): NodeRow {
  return {
    name: 'a-1',
    zone: 'region-1:zone-a',
    kubelet: 'running',
    ready: 'True',
    taints: [],
    probe: 'live',
    probeAgeSeconds: null,
    queuePosition: null,
    ...overrides,
  };
}

function snapshot(overrides: Partial<StackSnapshot> = {}): StackSnapshot {
  return {
    at,
    cluster: 'default',
    relay: { running: true, synced: true, nextSequence: 1 },
    functionsRunning: true,
    observedAt: at,
    digestAgeSeconds: 0,
    digestLate: false,
    masterDisruption: false,
    zones: [
      {
        zone: 'region-1:zone-a',
        state: 'Normal',
        size: 1,
        unhealthy: 0,
        unhealthyPercent: 0,
        limiter: null,
        queueLength: 0,
        processedOnce: 0,
        lastPass: null,
      },
    ],
    nodes: [node()],
    decisions: [],
    error: null,
    ...overrides,
  };
}

const decision = (key: string, offset: number) => ({
  at: at + offset,
  subject: 'a-1',
  pod: null,
  source: 'monitor',
  what: 'updateNodeStatus',
  result: 'ok',
  why: 'tryUpdateNodeHealth',
  key,
});

describe('snapshotChanges', () => {
  it('reports the zones and decisions of the first snapshot, but no node as added', () => {
    const changes = snapshotChanges(undefined, snapshot({ decisions: [decision('d1', 0)] }));
    expect(changes.map((c) => c.message)).toEqual(['zone state', 'decision']);
    expect(changes[0]?.fields).toMatchObject({ zone: 'region-1:zone-a', state: 'Normal', was: null });
  });

  it('reports Ready, taints, kubelet, relay and zone changes', () => {
    const before = snapshot();
    const after = snapshot({
      relay: { running: false, synced: false, nextSequence: null },
      zones: [
        { ...(before.zones[0] as StackSnapshot['zones'][number]), state: 'FullDisruption', unhealthy: 1 },
      ],
      nodes: [
        node({ kubelet: 'stopped', ready: 'Unknown', taints: ['unreachable:NoSchedule'] }),
        node({ name: 'a-2' }),
      ],
    });
    expect(snapshotChanges(before, after).map((c) => [c.message, c.fields])).toEqual([
      [
        'zone state',
        { zone: 'region-1:zone-a', state: 'FullDisruption', was: 'Normal', size: 1, unhealthy: 1 },
      ],
      ['node Ready', { node: 'a-1', ready: 'Unknown', was: 'True' }],
      ['node taints', { node: 'a-1', taints: ['unreachable:NoSchedule'], was: [] }],
      ['kubelet', { node: 'a-1', kubelet: 'stopped', was: 'running' }],
      ['node added', { node: 'a-2', zone: 'region-1:zone-a' }],
      ['relay stopped', {}],
    ]);
  });

  it('reports each new decision once, oldest first, and a read failure', () => {
    const before = snapshot({ decisions: [decision('d1', 0)] });
    const after = snapshot({
      decisions: [decision('d3', 2), decision('d2', 1), decision('d1', 0)],
      error: 'boom',
    });
    const changes = snapshotChanges(before, after);
    expect(changes.map((c) => c.message)).toEqual(['reading the state failed', 'decision', 'decision']);
    expect(changes.slice(1).map((c) => c.fields.at)).toEqual([
      new Date(at + 1).toISOString(),
      new Date(at + 2).toISOString(),
    ]);
    expect(snapshotChanges(after, after)).toEqual([]);
  });
});

describe('newestDecisions', () => {
  const row = (subject: string, offset: number, id: string): DecisionRow => ({
    ...decision(`${subject}#${id}`, offset),
    subject,
  });

  it('keeps the newest of all subjects, newest first, whichever subject made them', () => {
    const busy = [row('a-1', 9, '9'), row('a-1', 8, '8'), row('a-1', 7, '7'), row('a-1', 1, '1')];
    const quiet = [row('a-2', 0, '0')];
    expect(newestDecisions([quiet, busy], 4).map((d) => d.key)).toEqual(['a-1#9', 'a-1#8', 'a-1#7', 'a-1#1']);
    expect(
      newestDecisions([quiet, busy], 5)
        .map((d) => d.key)
        .at(-1),
    ).toBe('a-2#0');
  });

  it('orders decisions of one instant by subject in natural order, then newest row first', () => {
    const trails = [
      [row('zone-a-10', 0, 'x#000000')],
      [row('zone-a-2', 0, 'x#000001'), row('zone-a-2', 0, 'x#000000')],
      [row('zone-a-1', 0, 'x#000000')],
    ];
    const keys = newestDecisions(trails, 10).map((d) => d.key);
    expect(keys).toEqual([
      'zone-a-1#x#000000',
      'zone-a-2#x#000001',
      'zone-a-2#x#000000',
      'zone-a-10#x#000000',
    ]);
    // Stable: the order does not depend on the order the trails were read in.
    expect(newestDecisions([...trails].reverse(), 10).map((d) => d.key)).toEqual(keys);
  });
});

describe('zone rows: counted from the nodes the same frame shows (zoneRows)', () => {
  const zoneA = 'region-1:zone-a';
  const labels = (zone: string, extra: Record<string, string> = {}) => ({
    'topology.kubernetes.io/region': 'region-1',
    'topology.kubernetes.io/zone': zone,
    ...extra,
  });
  function apiNode(name: string, ready: string | undefined, extra: Record<string, string> = {}): ApiNode {
    return {
      metadata: { name, labels: labels(name.replace(/-\d+$/, ''), extra) },
      status: { conditions: ready === undefined ? [] : [{ type: 'Ready', status: ready }] },
    };
  }
  function counted(zone: string, size: number | null, unhealthy: number | null): ZoneStatus {
    return {
      zone,
      state: 'Normal',
      size,
      unhealthy,
      unhealthyPercent: size === null || unhealthy === null ? null : Math.round((100 * unhealthy) / size),
      limiter: null,
      queueLength: 2,
      processedOnce: 1,
    };
  }

  it('a pass that wrote its Unknown marks but has not committed: the API count, the last pass kept apart', () => {
    // The monitor has marked all five nodes Unknown; its commit (state FullDisruption, 5 unhealthy) is
    // still to come, so the stored zone says Normal with 0 unhealthy.
    const nodes = ['1', '2', '3', '4', '5'].map((i) => apiNode(`zone-a-${i}`, 'Unknown'));
    expect(zoneRows([counted(zoneA, 5, 0)], nodes)).toEqual([
      {
        ...counted(zoneA, 5, 5),
        unhealthyPercent: 100,
        lastPass: { size: 5, unhealthy: 0 },
      },
    ]);
  });

  it('agrees with the last pass: nothing kept apart', () => {
    const nodes = [apiNode('zone-a-1', 'True'), apiNode('zone-a-2', 'False'), apiNode('zone-a-3', 'True')];
    expect(zoneRows([counted(zoneA, 3, 1)], nodes)).toEqual([{ ...counted(zoneA, 3, 1), lastPass: null }]);
  });

  it('counts as handleDisruption does: excluded nodes left out, a node without Ready unhealthy', () => {
    const nodes = [
      apiNode('zone-a-1', 'True'),
      apiNode('zone-a-2', undefined),
      apiNode('zone-a-3', 'Unknown', { 'node.kubernetes.io/exclude-disruption': '' }),
    ];
    const [row] = zoneRows([counted(zoneA, 2, 1)], nodes);
    expect([row?.size, row?.unhealthy, row?.unhealthyPercent, row?.lastPass]).toEqual([2, 1, 50, null]);
  });

  it('a zone the controller has not counted yet has no state; one without nodes left has size 0', () => {
    const rows = zoneRows([counted('region-1:zone-b', 2, 0)], [apiNode('zone-a-1', 'True')]);
    expect(rows).toEqual([
      {
        zone: zoneA,
        state: null,
        limiter: null,
        queueLength: 0,
        processedOnce: 0,
        size: 1,
        unhealthy: 0,
        unhealthyPercent: 0,
        lastPass: null,
      },
      { ...counted('region-1:zone-b', 0, 0), unhealthyPercent: 0, lastPass: { size: 2, unhealthy: 0 } },
    ]);
  });
});
