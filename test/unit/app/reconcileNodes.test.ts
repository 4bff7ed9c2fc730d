// nodesToCheck (shared/app/reconcileNodes.ts): which stored node copies a pass reads from the API.
import { describe, expect, it } from 'vitest';
import {
  MaxNodeReadsPerPass,
  MissedWriteSettle,
  NodeReadMemoTtl,
  nodesToCheck,
  type NodeReadMemo,
} from '../../../shared/app/reconcileNodes.js';
import { TaintNodeNotReady } from '../../../shared/domain/taints.js';
import type { Node } from '../../../shared/domain/types.js';
import { fingerprintShardOf } from '../../../shared/events.js';
import { nodeFingerprint } from '../../../shared/nodeFingerprint.js';

const now = Date.parse('2026-03-02T09:00:00Z');

function node(name: string, extra: Partial<Node> = {}): Node {
  return {
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    creationTimestamp: now - 3_600_000,
    labels: {},
    taints: [],
    unschedulable: false,
    conditions: [{ type: 'Ready', status: 'True' }],
    ...extra,
  };
}

const byName = (...nodes: Node[]) => new Map(nodes.map((n) => [n.name, n]));
const fingerprints = (...nodes: Node[]) => new Map(nodes.map((n) => [n.name, nodeFingerprint(n)]));
/** A digest's fingerprints, and no probes: every node it names is one it fingerprints. */
const relayDigest = (relay: Map<string, string> | undefined) => ({ fingerprints: relay, probes: new Map() });
const kinds = (checks: { name: string; kind: string }[]) => checks.map((c) => `${c.name}:${c.kind}`);

describe('nodesToCheck', () => {
  const a = node('a');
  const b = node('b');
  const notReady = node('c', { conditions: [{ type: 'Ready', status: 'False' }] });
  const settled = () => now - MissedWriteSettle;

  it.each([
    { name: 'every copy matches the relay: nothing', stored: [a, b], relay: fingerprints(a, b), want: [] },
    {
      name: 'a digest without fingerprints: no stale-copy check',
      stored: [a, b],
      relay: undefined,
      want: [],
    },
    {
      name: 'a copy that differs from the relay',
      stored: [a, b],
      relay: fingerprints(a, { ...b, unschedulable: true }),
      want: ['b:fingerprint'],
    },
    {
      name: 'a copy the relay does not know',
      stored: [a, b],
      relay: fingerprints(a),
      want: ['b:unknownToRelay'],
    },
    {
      name: 'a current copy that calls for a NoSchedule taint never written',
      stored: [a, notReady],
      relay: fingerprints(a, notReady),
      want: ['c:missedWrite'],
    },
    {
      name: 'a copy the relay does not have that also misses a write: the stale copy first',
      stored: [notReady],
      relay: fingerprints(),
      want: ['c:unknownToRelay'],
    },
  ])('$name', ({ stored, relay, want }) => {
    expect(kinds(nodesToCheck(byName(...stored), relayDigest(relay), new Map(), now, settled))).toEqual(want);
  });

  it('a missed write counts only once the copy has been stored for MissedWriteSettle', () => {
    const digest = relayDigest(fingerprints(notReady));
    expect(nodesToCheck(byName(notReady), digest, new Map(), now, () => now - MissedWriteSettle + 1)).toEqual(
      [],
    );
    expect(
      kinds(nodesToCheck(byName(notReady), digest, new Map(), now, () => now - MissedWriteSettle)),
    ).toEqual(['c:missedWrite']);
  });

  it('a node read for the same relay fingerprint within NodeReadMemoTtl is not read again', () => {
    const relay = new Map([['a', 'AAAAAA']]);
    const memo: NodeReadMemo = new Map([['a', { reason: 'relay:AAAAAA', at: now - NodeReadMemoTtl + 1 }]]);
    expect(nodesToCheck(byName(a), relayDigest(relay), memo, now)).toEqual([]);
    expect(kinds(nodesToCheck(byName(a), relayDigest(new Map([['a', 'BBBBBB']])), memo, now))).toEqual([
      'a:fingerprint',
    ]);
    memo.set('a', { reason: 'relay:AAAAAA', at: now - NodeReadMemoTtl });
    expect(kinds(nodesToCheck(byName(a), relayDigest(relay), memo, now))).toEqual(['a:fingerprint']);
  });

  it(`reads at most ${MaxNodeReadsPerPass} nodes a pass, in name order`, () => {
    const many = Array.from({ length: MaxNodeReadsPerPass + 50 }, (_, i) =>
      node(`n${String(i).padStart(3, '0')}`),
    );
    const checks = nodesToCheck(byName(...many), relayDigest(new Map()), new Map(), now);
    expect(checks).toHaveLength(MaxNodeReadsPerPass);
    expect(checks.map((c) => c.name)).toEqual(many.slice(0, MaxNodeReadsPerPass).map((n) => n.name));
  });

  it('the NotReady copy with its taint written is not a missed write', () => {
    const tainted = { ...notReady, taints: [{ key: TaintNodeNotReady, effect: 'NoSchedule' as const }] };
    expect(
      nodesToCheck(byName(tainted), relayDigest(fingerprints(tainted)), new Map(), now, settled),
    ).toEqual([]);
  });

  describe('with a fingerprintShard (a digest that carries the fingerprints of some probed nodes)', () => {
    const nodes = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'].map((name) => node(name));
    const shard = { index: 0, count: 2 };
    const covered = nodes.filter((n) => fingerprintShardOf(n.name, 2) === 0);
    const outside = nodes.filter((n) => fingerprintShardOf(n.name, 2) !== 0);
    const probes = new Map(nodes.map((n) => [n.name, now]));

    it('has nodes on both sides of the shard', () => {
      expect(covered.length).toBeGreaterThan(0);
      expect(outside.length).toBeGreaterThan(0);
    });

    it('does not take a probed node outside the shard for one the relay does not know', () => {
      const digest = { fingerprints: fingerprints(...covered), fingerprintShard: shard, probes };
      expect(nodesToCheck(byName(...nodes), digest, new Map(), now, settled)).toEqual([]);
    });

    it('checks the copies of the nodes the shard covers', () => {
      const [first] = covered;
      if (first === undefined) throw new Error('no node in the shard');
      const stale = fingerprints(...covered).set(first.name, 'ZZZZZZ');
      const digest = { fingerprints: stale, fingerprintShard: shard, probes };
      expect(kinds(nodesToCheck(byName(...nodes), digest, new Map(), now, settled))).toEqual([
        `${first.name}:fingerprint`,
      ]);
    });

    it('still finds a stored node the relay does not know at all (no probe, no fingerprint)', () => {
      const gone = node('gone');
      const digest = { fingerprints: fingerprints(...covered), fingerprintShard: shard, probes };
      expect(kinds(nodesToCheck(byName(...nodes, gone), digest, new Map(), now, settled))).toEqual([
        'gone:unknownToRelay',
      ]);
    });

    it('still finds a missed write on a node outside the shard', () => {
      const [first] = outside;
      if (first === undefined) throw new Error('no node outside the shard');
      const notReadyOutside = { ...first, conditions: [{ type: 'Ready', status: 'False' as const }] };
      const stored = nodes.map((n) => (n.name === first.name ? notReadyOutside : n));
      const digest = { fingerprints: fingerprints(...covered), fingerprintShard: shard, probes };
      expect(kinds(nodesToCheck(byName(...stored), digest, new Map(), now, settled))).toEqual([
        `${first.name}:missedWrite`,
      ]);
    });
  });
});
