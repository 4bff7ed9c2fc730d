// relay/publishQueue.ts and relay/recentChanges.ts: what the leader keeps while the bus is
// unreachable (the latest digest, every change coalesced per object, a cap, the republish lane), and
// what a new leader republishes (its current view, node deletions, recent changes).
import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../../shared/domain/types.js';
import type { HeartbeatDigest } from '../../../shared/events.js';
import {
  changeKey,
  coalesceChanges,
  eventsOf,
  PublishQueue,
  type ChangeEvent,
} from '../../../relay/publishQueue.js';
import { currentView, nodeNeedsAction, RecentChanges } from '../../../relay/recentChanges.js';

const t0 = Date.parse('2026-01-29T09:00:00Z');

const node = (name: string, extra: Partial<Node> = {}): Node => ({
  name,
  uid: `${name}-uid`,
  creationTimestamp: t0,
  labels: {},
  conditions: [],
  taints: [],
  unschedulable: false,
  ...extra,
});
const pod = (name: string, nodeName: string): Pod => ({
  namespace: 'default',
  name,
  uid: `${name}-uid`,
  nodeName,
  tolerations: [],
});
type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';
const nodeChange = (type: ChangeType, n: Node): ChangeEvent => ({
  detailType: 'Node Changed',
  detail: { schemaVersion: 1, cluster: 'prod', type, node: n },
});
const podChange = (type: ChangeType, p: Pod, oldNodeName?: string): ChangeEvent => ({
  detailType: 'Pod Changed',
  detail: {
    schemaVersion: 1,
    cluster: 'prod',
    type,
    pod: p,
    ...(oldNodeName !== undefined && { oldNodeName }),
  },
});
const digest = (sequence: number, index = 0, count = 1): HeartbeatDigest => ({
  schemaVersion: 1,
  cluster: 'prod',
  relayId: 'relay-0',
  leaderSince: t0,
  observingSince: t0,
  sequence,
  observedAt: t0 + sequence * 5_000,
  part: { index, count },
  probes: new Map(),
});

describe('coalesceChanges', () => {
  const cordoned = node('node-a', { unschedulable: true });
  it.each<{ name: string; older: ChangeEvent; newer: ChangeEvent; want: ChangeEvent }>([
    {
      name: 'added then modified: one ADDED with the latest state',
      older: nodeChange('ADDED', node('node-a')),
      newer: nodeChange('MODIFIED', cordoned),
      want: nodeChange('ADDED', cordoned),
    },
    {
      name: 'modified twice: one MODIFIED with the latest state',
      older: nodeChange('MODIFIED', node('node-a')),
      newer: nodeChange('MODIFIED', cordoned),
      want: nodeChange('MODIFIED', cordoned),
    },
    {
      name: 'added then deleted: DELETED (consumers ignore a delete of what they never had)',
      older: nodeChange('ADDED', node('node-a')),
      newer: nodeChange('DELETED', cordoned),
      want: nodeChange('DELETED', cordoned),
    },
    {
      name: 'a pod moved twice: the node the consumers last knew',
      older: podChange('MODIFIED', pod('web-0', 'node-b'), 'node-a'),
      newer: podChange('MODIFIED', pod('web-0', 'node-c'), 'node-b'),
      want: podChange('MODIFIED', pod('web-0', 'node-c'), 'node-a'),
    },
    {
      name: 'a pod moved away and back: no oldNodeName',
      older: podChange('MODIFIED', pod('web-0', 'node-b'), 'node-a'),
      newer: podChange('MODIFIED', pod('web-0', 'node-a'), 'node-b'),
      want: podChange('MODIFIED', pod('web-0', 'node-a')),
    },
    {
      name: 'a pod added then moved: ADDED on its latest node, no oldNodeName',
      older: podChange('ADDED', pod('web-0', 'node-a')),
      newer: podChange('MODIFIED', pod('web-0', 'node-b'), 'node-a'),
      want: podChange('ADDED', pod('web-0', 'node-b')),
    },
  ])('$name', ({ older, newer, want }) => {
    const merged = coalesceChanges(older, newer);
    expect(merged).toEqual(want);
    // Whatever the types, the state sent is always the newest.
    expect('node' in merged.detail ? merged.detail.node : merged.detail.pod).toEqual(
      'node' in newer.detail ? newer.detail.node : newer.detail.pod,
    );
  });

  it("takes an update's before-fields from the older change: what the consumers last heard", () => {
    const before = pod('web-0', 'node-a');
    const tolerating: Pod = { ...before, tolerations: [{ key: 'k', operator: 'Exists' }] };
    const podUpdate = (
      p: Pod,
      old: { oldTolerations: Pod['tolerations']; oldReady: 'True' },
    ): ChangeEvent => ({
      detailType: 'Pod Changed',
      detail: { schemaVersion: 1, cluster: 'prod', type: 'MODIFIED', pod: p, ...old },
    });
    const older = podUpdate({ ...tolerating, ready: 'True' }, { oldTolerations: [], oldReady: 'True' });
    const newerPod: Pod = { ...tolerating, ready: 'False', deletionTimestamp: t0 };
    const newer = podUpdate(newerPod, { oldTolerations: tolerating.tolerations, oldReady: 'True' });
    // Tolerations changed, then the pod marked NotReady and deleted: the merged update still says the
    // tolerations changed (from none) and Ready was True before it.
    const merged = coalesceChanges(older, newer).detail;
    expect(merged).toMatchObject({ type: 'MODIFIED', pod: newerPod, oldTolerations: [], oldReady: 'True' });
    expect(merged).not.toHaveProperty('oldDeletionTimestamp');
    // Added then updated: no before-fields at all.
    expect(coalesceChanges(podChange('ADDED', before), newer).detail).not.toHaveProperty('oldTolerations');

    const taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' as const };
    const nodeUpdate = (n: Node, oldNoExecuteTaints: Node['taints']): ChangeEvent => ({
      detailType: 'Node Changed',
      detail: { schemaVersion: 1, cluster: 'prod', type: 'MODIFIED', node: n, oldNoExecuteTaints },
    });
    const mergedNode = coalesceChanges(
      nodeUpdate(node('node-a'), []),
      nodeUpdate(node('node-a', { taints: [taint] }), [taint]),
    );
    expect(mergedNode.detail).toMatchObject({ oldNoExecuteTaints: [] });
  });

  it('keys objects by kind, name and uid: a re-created node is another object', () => {
    expect(changeKey(nodeChange('ADDED', node('node-a')))).not.toBe(
      changeKey(nodeChange('ADDED', node('node-a', { uid: 'other' }))),
    );
    expect(changeKey(podChange('ADDED', pod('node-a', 'x')))).not.toBe(
      changeKey(nodeChange('ADDED', node('node-a'))),
    );
  });
});

describe('PublishQueue', () => {
  it('keeps only the latest digest, and takes it before the changes', () => {
    const queue = new PublishQueue({ maxChanges: 10 });
    queue.addChange(nodeChange('ADDED', node('node-a')), t0);
    expect(queue.setDigest([digest(1)], t0)).toBe(0);
    expect(queue.setDigest([digest(2, 0, 2), digest(2, 1, 2)], t0)).toBe(1);
    const items = queue.take(10);
    expect(eventsOf(items).map((e) => e.detailType)).toEqual([
      'Heartbeat Digest',
      'Heartbeat Digest',
      'Node Changed',
    ]);
    expect(queue.size).toBe(0);
  });

  it('coalesces changes of one object and keeps every object', () => {
    const queue = new PublishQueue({ maxChanges: 10 });
    queue.addChange(nodeChange('ADDED', node('node-a')), t0);
    queue.addChange(nodeChange('ADDED', node('node-b')), t0 + 1);
    queue.addChange(nodeChange('MODIFIED', node('node-a', { unschedulable: true })), t0 + 2);
    expect(queue.pendingChanges).toBe(2);
    expect(queue.oldestObservedAt()).toBe(t0);
    expect(eventsOf(queue.take(10))).toEqual([
      nodeChange('ADDED', node('node-b')),
      nodeChange('ADDED', node('node-a', { unschedulable: true })),
    ]);
  });

  it('drops the oldest change beyond the cap and says which', () => {
    const queue = new PublishQueue({ maxChanges: 2 });
    expect(queue.addChange(nodeChange('ADDED', node('node-a')), t0)).toBeUndefined();
    expect(queue.addChange(nodeChange('ADDED', node('node-b')), t0)).toBeUndefined();
    expect(queue.addChange(nodeChange('ADDED', node('node-c')), t0)?.key).toBe('node/node-a/node-a-uid');
    expect(queue.pendingChanges).toBe(2);
  });

  it('takes back a failed change under a newer one of the same object, and never revives a superseded digest', () => {
    const queue = new PublishQueue({ maxChanges: 10 });
    queue.addChange(nodeChange('ADDED', node('node-a')), t0);
    queue.setDigest([digest(1)], t0);
    const [part, change] = queue.take(10);
    queue.addChange(nodeChange('MODIFIED', node('node-a', { unschedulable: true })), t0 + 1);
    queue.setDigest([digest(2)], t0 + 1);

    expect(change !== undefined && queue.giveBack(change)).toBe(true);
    expect(part !== undefined && queue.giveBack(part)).toBe(false);
    expect(eventsOf(queue.take(10))).toEqual([
      { detailType: 'Heartbeat Digest', detail: digest(2) },
      nodeChange('ADDED', node('node-a', { unschedulable: true })),
    ]);
  });

  it('takes at most the batch size of changes, oldest first', () => {
    const queue = new PublishQueue({ maxChanges: 10 });
    for (const name of ['a', 'b', 'c']) queue.addChange(nodeChange('ADDED', node(name)), t0);
    expect(queue.take(2).map((item) => (item.kind === 'change' ? item.key : ''))).toEqual([
      'node/a/a-uid',
      'node/b/b-uid',
    ]);
    expect(queue.pendingChanges).toBe(1);
  });

  it('forgets everything when cleared (leadership lost)', () => {
    const queue = new PublishQueue({ maxChanges: 10 });
    queue.addChange(nodeChange('ADDED', node('node-a')), t0);
    queue.setDigest([digest(1)], t0);
    const [part] = queue.take(10);
    queue.clear();
    expect(part !== undefined && queue.giveBack(part)).toBe(false);
    expect(queue.size).toBe(0);
    expect(queue.oldestObservedAt()).toBeUndefined();
  });
});

describe('PublishQueue, republish lane', () => {
  it('takes republished events only after the digest and the live changes, and only as many as allowed', () => {
    const queue = new PublishQueue({ maxChanges: 10 });
    for (const name of ['r1', 'r2', 'r3']) queue.addRepublished(nodeChange('ADDED', node(name)), t0);
    queue.addChange(nodeChange('MODIFIED', node('live')), t0 + 1);
    queue.setDigest([digest(1)], t0 + 1);
    expect(queue.pendingRepublished).toBe(3);
    expect(queue.size).toBe(5);

    const names = (items: ReturnType<PublishQueue['take']>) =>
      eventsOf(items).map((e) => (e.detailType === 'Node Changed' ? e.detail.node.name : 'digest'));
    expect(names(queue.take(10, 2))).toEqual(['digest', 'live', 'r1', 'r2']);
    expect(names(queue.take(10, 0))).toEqual([]);
    expect(names(queue.take(1, 5))).toEqual(['r3']);
  });

  it('hands an object over to the live lane when it changes, with its newest state', () => {
    const queue = new PublishQueue({ maxChanges: 10 });
    queue.addRepublished(nodeChange('ADDED', node('node-a')), t0);
    queue.addChange(nodeChange('MODIFIED', node('node-a', { unschedulable: true })), t0 + 1);
    expect(queue.pendingRepublished).toBe(0);
    expect(eventsOf(queue.take(10, 0))).toEqual([
      nodeChange('ADDED', node('node-a', { unschedulable: true })),
    ]);
  });

  it('merges a republish into a pending live change of the object, in place', () => {
    const queue = new PublishQueue({ maxChanges: 10 });
    queue.addChange(nodeChange('MODIFIED', node('node-a')), t0);
    queue.addChange(nodeChange('MODIFIED', node('node-b')), t0);
    queue.addRepublished(nodeChange('ADDED', node('node-a', { unschedulable: true })), t0 + 1);
    expect(queue.pendingRepublished).toBe(0);
    expect(eventsOf(queue.take(10, 0))).toEqual([
      nodeChange('ADDED', node('node-a', { unschedulable: true })),
      nodeChange('MODIFIED', node('node-b')),
    ]);
  });

  it('gives a failed republished event back to its lane, or under a newer change of the object', () => {
    const queue = new PublishQueue({ maxChanges: 10 });
    queue.addRepublished(nodeChange('ADDED', node('node-a')), t0);
    queue.addRepublished(nodeChange('ADDED', node('node-b')), t0);
    const [a, b] = queue.take(10, 2);
    queue.addChange(nodeChange('MODIFIED', node('node-b', { unschedulable: true })), t0 + 1);

    expect(a !== undefined && queue.giveBack(a)).toBe(true);
    expect(b !== undefined && queue.giveBack(b)).toBe(true);
    expect(queue.pendingRepublished).toBe(1);
    expect(eventsOf(queue.take(10, 0))).toEqual([
      nodeChange('ADDED', node('node-b', { unschedulable: true })),
    ]);
    expect(eventsOf(queue.take(10, 1))).toEqual([nodeChange('ADDED', node('node-a'))]);
  });

  it('counts both lanes against the cap and drops the oldest change of either', () => {
    const queue = new PublishQueue({ maxChanges: 2 });
    expect(queue.addRepublished(nodeChange('ADDED', node('old')), t0)).toBeUndefined();
    expect(queue.addChange(nodeChange('ADDED', node('live')), t0 + 1)).toBeUndefined();
    expect(queue.addRepublished(nodeChange('ADDED', node('new')), t0 + 2)?.key).toBe('node/old/old-uid');
    expect(queue.pendingChanges).toBe(2);
  });

  it('forgets the republish lane when cleared (leadership lost)', () => {
    const queue = new PublishQueue({ maxChanges: 10 });
    queue.addRepublished(nodeChange('ADDED', node('node-a')), t0);
    queue.clear();
    expect(queue.size).toBe(0);
    expect(queue.oldestObservedAt()).toBeUndefined();
  });
});

describe('RecentChanges', () => {
  it('replays the window before now and forgets what is older', () => {
    const recent = new RecentChanges({ window: 30_000, max: 100 });
    recent.add({ event: nodeChange('ADDED', node('a')), observedAt: t0 });
    recent.add({ event: nodeChange('ADDED', node('b')), observedAt: t0 + 20_000 });
    recent.add({ event: nodeChange('ADDED', node('c')), observedAt: t0 + 40_000 });
    const names = (now: number) =>
      recent.replay(now).map((c) => (c.event.detailType === 'Node Changed' ? c.event.detail.node.name : ''));

    expect(names(t0 + 25_000)).toEqual(['a', 'b', 'c']);
    expect(names(t0 + 45_000)).toEqual(['b', 'c']);
    recent.prune(t0 + 45_000);
    expect(recent.size).toBe(2);
  });

  it('keeps at most `max` entries, dropping the oldest and saying how many', () => {
    const recent = new RecentChanges({ window: 30_000, max: 2 });
    const add = (name: string) => recent.add({ event: nodeChange('ADDED', node(name)), observedAt: t0 });
    expect([add('a'), add('b'), add('c')]).toEqual([0, 0, 1]);
    expect(recent.size).toBe(2);
  });

  it('keeps node deletions for their own window, far longer than the replay window, within a cap', () => {
    const hour = 3_600_000;
    const recent = new RecentChanges({
      window: 30_000,
      max: 100,
      deletedNodesWindow: 24 * hour,
      maxDeletedNodes: 2,
    });
    recent.add({ event: nodeChange('DELETED', node('gone-1')), observedAt: t0 });
    recent.add({ event: podChange('DELETED', pod('web-0', 'gone-1')), observedAt: t0 });
    recent.add({ event: nodeChange('DELETED', node('gone-2')), observedAt: t0 + hour });
    const deleted = (now: number) =>
      recent
        .nodeDeletions(now)
        .map((c) => (c.event.detailType === 'Node Changed' ? c.event.detail.node.name : ''));

    recent.prune(t0 + 2 * hour);
    expect(recent.replay(t0 + 2 * hour)).toEqual([]);
    expect(deleted(t0 + 2 * hour)).toEqual(['gone-1', 'gone-2']);
    recent.prune(t0 + 24 * hour + 1);
    expect(deleted(t0 + 24 * hour + 1)).toEqual(['gone-2']);
    expect(recent.add({ event: nodeChange('DELETED', node('gone-3')), observedAt: t0 + 25 * hour })).toBe(0);
    expect(recent.add({ event: nodeChange('DELETED', node('gone-4')), observedAt: t0 + 25 * hour })).toBe(1);
    expect(deleted(t0 + 25 * hour)).toEqual(['gone-3', 'gone-4']);
  });
});

describe('currentView', () => {
  const ready = (status: 'True' | 'False' | 'Unknown') => ({
    conditions: [{ type: 'Ready', status }],
  });
  const nodes = [
    node('healthy', ready('True')),
    node('not-ready', ready('False')),
    node('unknown', ready('Unknown')),
    node('never-reported'),
    node('drained', { ...ready('True'), taints: [{ key: 'example.com/drain', effect: 'NoExecute' }] }),
    node('cordoned', { ...ready('True'), taints: [{ key: 'example.com/x', effect: 'NoSchedule' }] }),
  ];

  it('is every node, those the functions act on first, and the pods bound to those only', () => {
    const pods = nodes.map((n) => pod(`on-${n.name}`, n.name));
    const view = currentView('prod', nodes, pods);
    const nodeNames = (events: readonly ChangeEvent[]) =>
      events.map((e) => (e.detailType === 'Node Changed' ? `${e.detail.type} ${e.detail.node.name}` : ''));
    expect(nodeNames(view.nodesNeedingAction)).toEqual([
      'ADDED not-ready',
      'ADDED unknown',
      'ADDED never-reported',
      'ADDED drained',
    ]);
    expect(nodeNames(view.otherNodes)).toEqual(['ADDED healthy', 'ADDED cordoned']);
    expect(
      view.pods.map((e) => (e.detailType === 'Pod Changed' ? `${e.detail.type} ${e.detail.pod.name}` : '')),
    ).toEqual(['ADDED on-not-ready', 'ADDED on-unknown', 'ADDED on-never-reported', 'ADDED on-drained']);
    // The state as cached, resourceVersion included: no oldNoExecuteTaints, which would let taint
    // eviction skip a node whose taints did not change.
    expect(view.nodesNeedingAction[3]).toEqual(nodeChange('ADDED', nodes[4] as Node));
  });

  it('tells the nodes the functions act on: not Ready or NoExecute-tainted', () => {
    expect(nodes.map((n) => [n.name, nodeNeedsAction(n)])).toEqual([
      ['healthy', false],
      ['not-ready', true],
      ['unknown', true],
      ['never-reported', true],
      ['drained', true],
      ['cordoned', false],
    ]);
  });
});
