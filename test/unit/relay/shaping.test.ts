// relay/shaping.ts (with probeTracker.ts and putEvents.ts): trimming leases (nodes and pods: the shared
// conversion, tested in test/unit/adapters/kubernetes/mapping.test.ts), the watch
// filters (table tests that also check properties, docs/contributing.md#table-tests), the probe tracker, and
// PutEvents batching under EventBridge's entry-size rule.
import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { V1Lease } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ConditionStatus, Node, Pod } from '../../../shared/domain/types.js';
import { EventEncodeError } from '../../../shared/errors.js';
import {
  HeartbeatDigestDetailType,
  NodeChangedDetailType,
  parseHeartbeatDigest,
  parseNodeChanged,
  parsePodChanged,
  PodChangedDetailType,
  type OutgoingEvent,
} from '../../../shared/events.js';
import {
  batchEntries,
  buildDigest,
  forgetNode,
  newProbeTracker,
  nodeChanged,
  nodeChangeIsRelevant,
  observeLease,
  observeNodeStatus,
  podChanged,
  podChangeIsRelevant,
  PutEventsMaxBytes,
  PutEventsMaxEntries,
  putEventsEntrySize,
  toPutEventsEntries,
  trimLease,
} from '../../../relay/shaping.js';
import * as arb from '../../helpers/eventArbitraries.js';
import { at, fromJson, mustNode, mustPod, trimmedNode, v1Node, v1Pod } from '../../helpers/kubeObjects.js';

const pod0: Pod = {
  namespace: 'shop',
  name: 'checkout-0',
  uid: 'uid-0',
  nodeName: 'node-a',
  tolerations: [],
  ready: 'True',
};

describe('trimLease', () => {
  it('reads a node Lease as its node name and renewTime', () => {
    const lease = fromJson<V1Lease>({
      metadata: { name: 'node-a', namespace: 'kube-node-lease' },
      spec: { holderIdentity: 'node-a', renewTime: '2026-11-21T10:00:00.123456Z' }, // MicroTime, raw JSON
    });
    expect(trimLease(lease)).toEqual({ nodeName: 'node-a', renewTime: at('2026-11-21T10:00:00.123Z') });
    expect(trimLease(fromJson({ metadata: { name: 'node-b' } }))).toEqual({ nodeName: 'node-b' });
  });
});

describe('nodeChangeIsRelevant', () => {
  const cond = trimmedNode.conditions[0];
  if (cond === undefined) throw new Error('fixture');
  const later = at('2026-11-21T10:03:12Z');
  it.each<{ name: string; old: Node | undefined; next: Node | undefined; want: boolean }>([
    { name: 'node added', old: undefined, next: trimmedNode, want: true },
    { name: 'node deleted', old: trimmedNode, next: undefined, want: true },
    { name: 'no node at all', old: undefined, next: undefined, want: false },
    { name: 'same node', old: trimmedNode, next: trimmedNode, want: false },
    {
      name: 'only resourceVersion changed',
      old: trimmedNode,
      next: { ...trimmedNode, resourceVersion: '81237999' },
      want: false,
    },
    {
      name: 'only the Ready heartbeat changed (a probe)',
      old: trimmedNode,
      next: { ...trimmedNode, conditions: [{ ...cond, lastHeartbeatTime: later }] },
      want: false,
    },
    {
      name: 'only another condition heartbeat changed',
      old: {
        ...trimmedNode,
        conditions: [cond, { type: 'DiskPressure', status: 'False', lastHeartbeatTime: 1 }],
      },
      next: {
        ...trimmedNode,
        conditions: [cond, { type: 'DiskPressure', status: 'False', lastHeartbeatTime: 2 }],
      },
      want: false,
    },
    {
      name: 'heartbeat and status changed (kubelet reports NotReady)',
      old: trimmedNode,
      next: {
        ...trimmedNode,
        conditions: [{ ...cond, status: 'False', lastHeartbeatTime: later, lastTransitionTime: later }],
      },
      want: true,
    },
    {
      name: 'controller marked Ready Unknown (heartbeat kept)',
      old: trimmedNode,
      next: {
        ...trimmedNode,
        conditions: [{ ...cond, status: 'Unknown', reason: 'NodeStatusUnknown', lastTransitionTime: later }],
      },
      want: true,
    },
    {
      name: 'condition message changed',
      old: trimmedNode,
      next: { ...trimmedNode, conditions: [{ ...cond, message: 'x' }] },
      want: true,
    },
    {
      name: 'condition added',
      old: trimmedNode,
      next: { ...trimmedNode, conditions: [cond, { type: 'PIDPressure', status: 'False' }] },
      want: true,
    },
    {
      name: 'absent reason and empty reason are the same',
      old: { ...trimmedNode, conditions: [{ type: 'Ready', status: 'True' }] },
      next: { ...trimmedNode, conditions: [{ type: 'Ready', status: 'True', reason: '' }] },
      want: false,
    },
    {
      name: 'taint added',
      old: trimmedNode,
      next: { ...trimmedNode, taints: [...trimmedNode.taints, { key: 'x', effect: 'NoSchedule' as const }] },
      want: true,
    },
    {
      name: 'taint timeAdded changed (re-added taint)',
      old: trimmedNode,
      next: { ...trimmedNode, taints: trimmedNode.taints.map((t) => ({ ...t, timeAdded: later })) },
      want: true,
    },
    {
      name: 'taints reordered',
      old: trimmedNode,
      next: { ...trimmedNode, taints: [...trimmedNode.taints].reverse() },
      want: true,
    },
    { name: 'cordoned', old: trimmedNode, next: { ...trimmedNode, unschedulable: true }, want: true },
    {
      name: 'zone label changed',
      old: trimmedNode,
      next: {
        ...trimmedNode,
        labels: { ...trimmedNode.labels, 'topology.kubernetes.io/zone': 'eu-west-1b' },
      },
      want: true,
    },
    {
      name: 'exclusion label added with empty value',
      old: trimmedNode,
      next: {
        ...trimmedNode,
        labels: { ...trimmedNode.labels, 'node.kubernetes.io/exclude-disruption': '' },
      },
      want: true,
    },
    {
      name: 'labels reordered',
      old: trimmedNode,
      next: { ...trimmedNode, labels: Object.fromEntries(Object.entries(trimmedNode.labels).reverse()) },
      want: false,
    },
    {
      name: 're-created with the same name',
      old: trimmedNode,
      next: { ...trimmedNode, uid: 'new-uid' },
      want: true,
    },
  ])('$name', ({ old, next, want }) => {
    expect(nodeChangeIsRelevant(old, next)).toBe(want);
    // The filter is symmetric: it asks whether the two differ in what the controller reads.
    expect(nodeChangeIsRelevant(next, old)).toBe(want);
  });

  it('is false for a node compared with itself, and symmetric', () => {
    fc.assert(
      fc.property(arb.node, arb.node, (a, b) => {
        expect(nodeChangeIsRelevant(a, a)).toBe(false);
        expect(nodeChangeIsRelevant(a, { ...a })).toBe(false);
        expect(nodeChangeIsRelevant(a, b)).toBe(nodeChangeIsRelevant(b, a));
      }),
    );
  });

  it('ignores heartbeats and resourceVersion, and nothing else', () => {
    fc.assert(
      fc.property(arb.node, fc.array(arb.epochMillis, { minLength: 6, maxLength: 6 }), (node, beats) => {
        const probed = {
          ...node,
          resourceVersion: 'other',
          conditions: node.conditions.map((c, i) => ({ ...c, lastHeartbeatTime: beats[i] })),
        };
        expect(nodeChangeIsRelevant(node, probed)).toBe(false);
        expect(nodeChangeIsRelevant(node, { ...node, unschedulable: !node.unschedulable })).toBe(true);
      }),
    );
  });

  it('never sees changes trimming drops (images, capacity, other labels, annotations)', () => {
    const base = mustNode(v1Node((iso) => iso));
    fc.assert(
      fc.property(
        fc.array(fc.string(), { maxLength: 3 }),
        fc.string(),
        fc.dictionary(fc.stringMatching(/^example\.com\/[a-z]{1,8}$/), fc.string()),
        (images, cpu, labels) => {
          const changed = v1Node((iso) => iso, {
            resourceVersion: '99',
            labels,
            annotations: { a: cpu },
            images,
            cpu,
          });
          expect(nodeChangeIsRelevant(base, mustNode(changed))).toBe(false);
        },
      ),
    );
  });
});

describe('podChangeIsRelevant', () => {
  const later = at('2026-11-21T10:05:13Z');
  it.each<{ name: string; old: Pod | undefined; next: Pod | undefined; want: boolean }>([
    { name: 'bound pod added', old: undefined, next: pod0, want: true },
    { name: 'unbound pod added', old: undefined, next: { ...pod0, nodeName: '' }, want: false },
    { name: 'pod bound (scheduled)', old: { ...pod0, nodeName: '' }, next: pod0, want: true },
    { name: 'pod rebound to another node', old: pod0, next: { ...pod0, nodeName: 'node-b' }, want: true },
    { name: 'bound pod deleted', old: pod0, next: undefined, want: true },
    { name: 'unbound pod deleted', old: { ...pod0, nodeName: '' }, next: undefined, want: false },
    { name: 'no pod at all', old: undefined, next: undefined, want: false },
    {
      name: 'tolerations changed',
      old: pod0,
      next: { ...pod0, tolerations: [{ operator: 'Exists' as const }] },
      want: true,
    },
    {
      name: 'tolerationSeconds changed',
      old: { ...pod0, tolerations: [{ operator: 'Exists' as const, tolerationSeconds: 1 }] },
      next: { ...pod0, tolerations: [{ operator: 'Exists' as const, tolerationSeconds: 2 }] },
      want: true,
    },
    {
      name: 'empty and absent toleration fields are the same',
      old: { ...pod0, tolerations: [{ key: '' }] },
      next: { ...pod0, tolerations: [{}] },
      want: false,
    },
    {
      name: 'deletionTimestamp newly set',
      old: pod0,
      next: { ...pod0, deletionTimestamp: later, deletionGracePeriodSeconds: 30 },
      want: true,
    },
    {
      name: 'already terminating, grace shortened',
      old: { ...pod0, deletionTimestamp: later },
      next: { ...pod0, deletionTimestamp: later, deletionGracePeriodSeconds: 0 },
      want: false,
    },
    { name: 'Ready changed only', old: pod0, next: { ...pod0, ready: 'False' as const }, want: false },
    {
      name: 'status.reason changed only',
      old: pod0,
      next: { ...pod0, statusReason: 'NodeLost' },
      want: false,
    },
    { name: 'same pod', old: pod0, next: pod0, want: false },
  ])('$name', ({ old, next, want }) => {
    expect(podChangeIsRelevant(old, next)).toBe(want);
  });

  it('Ready newly False counts on a node known not to be Ready only (MarkPodsNotReady, for a shadow)', () => {
    const readyPod = { ...pod0, ready: 'True' as const };
    const notReady = { ...pod0, ready: 'False' as const };
    const node = (status: ConditionStatus | undefined) => (name: string) =>
      name === pod0.nodeName ? status : 'True';
    expect(podChangeIsRelevant(readyPod, notReady, node('Unknown'))).toBe(true);
    expect(podChangeIsRelevant(readyPod, notReady, node('False'))).toBe(true);
    expect(podChangeIsRelevant(readyPod, notReady, node('True'))).toBe(false);
    expect(podChangeIsRelevant(readyPod, notReady, node(undefined))).toBe(false);
    // Not a loss of readiness: False again, or regained.
    expect(podChangeIsRelevant(notReady, notReady, node('Unknown'))).toBe(false);
    expect(podChangeIsRelevant(notReady, readyPod, node('Unknown'))).toBe(false);
    expect(podChangeIsRelevant({ ...pod0, ready: undefined }, notReady, node('Unknown'))).toBe(false);
  });

  it('is false for a pod compared with itself; adds and deletes of bound pods always count', () => {
    fc.assert(
      fc.property(arb.pod, (pod) => {
        expect(podChangeIsRelevant(pod, pod)).toBe(false);
        expect(podChangeIsRelevant(undefined, pod)).toBe(pod.nodeName !== '');
        expect(podChangeIsRelevant(pod, undefined)).toBe(pod.nodeName !== '');
      }),
    );
  });
});

describe('nodeChanged and podChanged', () => {
  it('builds Node Changed details with the change type, or nothing for an irrelevant change', () => {
    expect(nodeChanged('prod', undefined, trimmedNode)).toEqual({
      schemaVersion: 1,
      cluster: 'prod',
      type: 'ADDED',
      node: trimmedNode,
    });
    expect(nodeChanged('prod', trimmedNode, { ...trimmedNode, unschedulable: true })?.type).toBe('MODIFIED');
    expect(nodeChanged('prod', trimmedNode, undefined)).toEqual({
      schemaVersion: 1,
      cluster: 'prod',
      type: 'DELETED',
      node: trimmedNode,
    });
    expect(nodeChanged('prod', trimmedNode, { ...trimmedNode, resourceVersion: '1' })).toBeUndefined();
  });

  it('builds Pod Changed details, with oldNodeName on a rebind only', () => {
    expect(podChanged('prod', pod0, { ...pod0, nodeName: 'node-b' })).toEqual({
      schemaVersion: 1,
      cluster: 'prod',
      type: 'MODIFIED',
      pod: { ...pod0, nodeName: 'node-b' },
      oldNodeName: 'node-a',
      oldTolerations: pod0.tolerations,
      oldReady: 'True',
    });
    expect(podChanged('prod', { ...pod0, nodeName: '' }, pod0)).not.toHaveProperty('oldNodeName');
    // Upstream PodUpdated compares tolerations: a MODIFIED event carries the ones before the change.
    const tolerating = { ...pod0, tolerations: [{ key: 'k', operator: 'Exists' as const }] };
    expect(podChanged('prod', pod0, tolerating)).toMatchObject({
      type: 'MODIFIED',
      oldTolerations: pod0.tolerations,
    });
    expect(podChanged('prod', undefined, pod0)).not.toHaveProperty('oldTolerations');
    expect(podChanged('prod', pod0, undefined)).toMatchObject({ type: 'DELETED', pod: pod0 });
    expect(podChanged('prod', pod0, { ...pod0, ready: 'False' })).toBeUndefined();
  });

  it('carries the old Ready status and deletionTimestamp on an update (what a shadow records)', () => {
    const deleting = { ...pod0, deletionTimestamp: at('2026-11-21T10:05:13Z') };
    expect(podChanged('prod', { ...pod0, ready: 'True' }, { ...deleting, ready: 'True' })).toMatchObject({
      type: 'MODIFIED',
      oldReady: 'True',
    });
    expect(
      podChanged('prod', { ...pod0, ready: 'True' }, { ...pod0, ready: 'False' }, () => 'Unknown'),
    ).toMatchObject({ type: 'MODIFIED', oldReady: 'True', pod: { ready: 'False' }, nodeReady: 'Unknown' });
    // The node's Ready rides along only with a loss of the pod's own.
    expect(podChanged('prod', { ...pod0, ready: 'True' }, { ...deleting, ready: 'True' })).not.toHaveProperty(
      'nodeReady',
    );
    const moved = podChanged('prod', deleting, { ...deleting, nodeName: 'node-b' });
    expect(moved).toMatchObject({ oldDeletionTimestamp: deleting.deletionTimestamp });
    expect(podChanged('prod', undefined, deleting)).not.toHaveProperty('oldReady');
    expect(podChanged('prod', { ...pod0, ready: undefined }, deleting)).not.toHaveProperty('oldReady');
  });

  it('builds Node Changed details carrying the previous NoExecute taints on an update', () => {
    const node = mustNode(v1Node((iso) => iso));
    const tainted = {
      ...node,
      taints: [
        {
          key: 'node.kubernetes.io/unreachable',
          effect: 'NoExecute' as const,
          timeAdded: node.creationTimestamp,
        },
        { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' as const },
      ],
    };
    expect(nodeChanged('prod', tainted, node)).toMatchObject({
      type: 'MODIFIED',
      oldNoExecuteTaints: [tainted.taints[0]],
    });
    expect(nodeChanged('prod', undefined, node)).not.toHaveProperty('oldNoExecuteTaints');
  });

  it('builds details that encode and parse back to themselves', () => {
    const node = mustNode(v1Node((iso) => iso));
    const pod = mustPod(v1Pod());
    const events: OutgoingEvent[] = [
      { detailType: NodeChangedDetailType, detail: nodeChanged('prod', undefined, node)! },
      { detailType: PodChangedDetailType, detail: podChanged('prod', undefined, pod)! },
    ];
    const [nodeEntry, podEntry] = toPutEventsEntries(events, { busName: 'nlc' });
    expect(parseNodeChanged(JSON.parse(nodeEntry!.Detail!))).toEqual(events[0]!.detail);
    expect(parsePodChanged(JSON.parse(podEntry!.Detail!))).toEqual(events[1]!.detail);
  });
});

describe('ProbeTracker', () => {
  const t0 = at('2026-11-21T10:00:00Z');
  const node = (name: string, heartbeat?: number): Node => ({
    name,
    uid: `${name}-uid`,
    creationTimestamp: 0,
    labels: {},
    taints: [],
    unschedulable: false,
    conditions:
      heartbeat === undefined ? [] : [{ type: 'Ready', status: 'True', lastHeartbeatTime: heartbeat }],
  });
  const identity = {
    cluster: 'prod',
    relayId: 'relay-a',
    leaderSince: t0 - 60_000,
    sequence: 3,
    observingSince: t0 - 60_000,
  };

  it('takes the first sighting of a node and of its lease as a baseline, not a probe', () => {
    const tracker = newProbeTracker();
    expect(observeLease(tracker, 'n1', 1000, t0)).toBe('unknownNode'); // lease before node: ignored
    expect(observeNodeStatus(tracker, node('n1', 500), t0)).toBe('baseline');
    expect(observeLease(tracker, 'n1', 1000, t0 + 1)).toBe('baseline');
    // Not a probe: the digest counts the node from when this relay started observing (observingSince),
    // as upstream gives every node a fresh probe when its controller starts.
    expect(buildDigest(tracker, { ...identity, observedAt: t0 + 5000 }).probes).toEqual(
      new Map([['n1', identity.observingSince]]),
    );
  });

  it('leaves out a node with neither a Lease nor a Ready heartbeat (a kubelet that never came up)', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('never'), t0);
    observeNodeStatus(tracker, node('leased'), t0);
    observeLease(tracker, 'leased', 1000, t0);
    observeNodeStatus(tracker, node('posted', 500), t0);
    const digest = buildDigest(tracker, { ...identity, observedAt: t0 + 5000 });
    expect([...digest.probes.keys()].sort()).toEqual(['leased', 'posted']);
    expect(digest.observingSince).toBe(identity.observingSince);
  });

  it('never sends an observingSince (or a baseline probe) after observedAt', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('n1', 500), t0);
    const digest = buildDigest(tracker, { ...identity, observingSince: t0 + 9000, observedAt: t0 + 5000 });
    expect(digest.observingSince).toBe(t0 + 5000);
    expect(digest.probes.get('n1')).toBe(t0 + 5000);
  });

  it('records a probe at the relay time when the lease renewTime advances', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('n1'), t0);
    observeLease(tracker, 'n1', 1000, t0);
    expect(observeLease(tracker, 'n1', 11_000, t0 + 10_003)).toBe('probe');
    expect(observeLease(tracker, 'n1', 11_000, t0 + 12_000)).toBe('unchanged'); // resync, same lease
    expect(observeLease(tracker, 'n1', 9_000, t0 + 13_000)).toBe('unchanged'); // kubelet clock stepped back
    expect(observeLease(tracker, 'n1', 10_000, t0 + 14_000)).toBe('unchanged'); // still before the newest seen
    expect(observeLease(tracker, 'n1', undefined, t0 + 14_000)).toBe('unchanged');
    expect(buildDigest(tracker, { ...identity, observedAt: t0 + 15_000 }).probes).toEqual(
      new Map([['n1', t0 + 10_003]]),
    );
  });

  it('records a probe when the Ready heartbeat changes, and not when the controller marks it Unknown', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('n1', 1000), t0);
    expect(observeNodeStatus(tracker, node('n1', 1000), t0 + 1000)).toBe('unchanged');
    const markedUnknown: Node = {
      ...node('n1'),
      conditions: [{ type: 'Ready', status: 'Unknown', lastHeartbeatTime: 1000 }],
    };
    expect(observeNodeStatus(tracker, markedUnknown, t0 + 2000)).toBe('unchanged');
    expect(observeNodeStatus(tracker, node('n1', 301_000), t0 + 3000)).toBe('probe');
    expect(observeNodeStatus(tracker, node('n1'), t0 + 4000)).toBe('unchanged'); // Ready removed: no sign of life
    expect(buildDigest(tracker, { ...identity, observedAt: t0 + 5000 }).probes.get('n1')).toBe(t0 + 3000);
  });

  it('never moves a probe back, and never reports one after observedAt', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('n1'), t0);
    observeLease(tracker, 'n1', 1, t0);
    observeLease(tracker, 'n1', 2, t0 + 10_000);
    observeLease(tracker, 'n1', 3, t0 + 5_000); // relay clock stepped back
    expect(buildDigest(tracker, { ...identity, observedAt: t0 + 20_000 }).probes.get('n1')).toBe(t0 + 10_000);
    expect(buildDigest(tracker, { ...identity, observedAt: t0 + 6_000 }).probes.get('n1')).toBe(t0 + 6_000);
  });

  it('forgets deleted nodes, so a re-created node starts from a baseline', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('n1'), t0);
    observeLease(tracker, 'n1', 1, t0);
    observeLease(tracker, 'n1', 2, t0 + 1);
    expect(forgetNode(tracker, 'n1')).toBe(true);
    expect(forgetNode(tracker, 'n1')).toBe(false);
    expect(observeLease(tracker, 'n1', 3, t0 + 2)).toBe('unknownNode');
    expect(observeNodeStatus(tracker, node('n1'), t0 + 3)).toBe('baseline');
    expect(buildDigest(tracker, { ...identity, observedAt: t0 + 4 }).probes.size).toBe(0);
  });

  it('builds a whole digest that encodes and parses back', () => {
    const tracker = newProbeTracker();
    for (const name of ['ip-10-0-1-2.eu-west-1.compute.internal', 'worker1']) {
      observeNodeStatus(tracker, node(name), t0);
      observeLease(tracker, name, 1, t0);
      observeLease(tracker, name, 2, t0 + 1234);
    }
    const digest = buildDigest(tracker, { ...identity, observedAt: t0 + 5000 });
    expect(digest).toMatchObject({
      schemaVersion: 1,
      cluster: 'prod',
      sequence: 3,
      part: { index: 0, count: 1 },
    });
    const [entry] = toPutEventsEntries([{ detailType: HeartbeatDigestDetailType, detail: digest }], {
      busName: 'nlc',
    });
    expect(parseHeartbeatDigest(JSON.parse(entry!.Detail!))).toEqual(digest);
  });

  it('holds only nodes currently known, whatever the order of events', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('node' as const),
        name: fc.constantFrom('a', 'b', 'c'),
        beat: fc.nat(5),
      }),
      fc.record({
        kind: fc.constant('lease' as const),
        name: fc.constantFrom('a', 'b', 'c', 'd'),
        renew: fc.nat(5),
      }),
      fc.record({ kind: fc.constant('delete' as const), name: fc.constantFrom('a', 'b', 'c') }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const tracker = newProbeTracker();
        const known = new Set<string>();
        ops.forEach((o, now) => {
          if (o.kind === 'node') {
            observeNodeStatus(tracker, node(o.name, o.beat), now);
            known.add(o.name);
          } else if (o.kind === 'lease') {
            observeLease(tracker, o.name, o.renew, now);
          } else {
            forgetNode(tracker, o.name);
            known.delete(o.name);
          }
        });
        expect(new Set(tracker.nodes.keys())).toEqual(known);
        const digest = buildDigest(tracker, { ...identity, observedAt: ops.length });
        for (const [name, probedAt] of digest.probes) {
          expect(known.has(name)).toBe(true);
          expect(probedAt).toBeLessThanOrEqual(ops.length);
        }
      }),
    );
  });
});

describe('PutEvents entries and batches', () => {
  const entry = (detail: string, extra: Partial<PutEventsRequestEntry> = {}): PutEventsRequestEntry => ({
    EventBusName: 'nlc-bus',
    Source: 'nlc.relay',
    DetailType: 'Node Changed',
    Detail: detail,
    ...extra,
  });

  it('sizes an entry by AWS rule: Source + DetailType + Detail + Resources in UTF-8, Time 14 bytes', () => {
    expect(putEventsEntrySize(entry('{}'))).toBe(9 + 12 + 2);
    expect(putEventsEntrySize(entry('{"n":"é"}'))).toBe(9 + 12 + 10); // é is 2 bytes
    expect(putEventsEntrySize(entry('{}', { Time: new Date(), Resources: ['arn:a', 'arn:bb'] }))).toBe(
      9 + 12 + 2 + 14 + 5 + 6,
    );
    expect(putEventsEntrySize(entry('{}', { EventBusName: 'a-much-longer-bus-name' }))).toBe(23); // the bus does not count
  });

  it('makes one entry per event, in order, on the bus, from nlc.relay, without Time', () => {
    const entries = toPutEventsEntries(
      [
        { detailType: NodeChangedDetailType, detail: nodeChanged('prod', undefined, trimmedNode)! },
        { detailType: PodChangedDetailType, detail: podChanged('prod', undefined, pod0)! },
      ],
      { busName: 'nlc-bus' },
    );
    expect(entries.map((e) => [e.EventBusName, e.Source, e.DetailType, e.Time])).toEqual([
      ['nlc-bus', 'nlc.relay', 'Node Changed', undefined],
      ['nlc-bus', 'nlc.relay', 'Pod Changed', undefined],
    ]);
    expect(toPutEventsEntries([], { busName: 'b', source: 'nlc.test' })).toEqual([]);
  });

  it('refuses to send a detail that breaks the contract, naming the field', () => {
    const bad = { ...nodeChanged('prod', undefined, trimmedNode)!, cluster: 'Not A Label' };
    expect(() =>
      toPutEventsEntries([{ detailType: NodeChangedDetailType, detail: bad }], { busName: 'b' }),
    ).toThrow(EventEncodeError);
    expect(() =>
      toPutEventsEntries([{ detailType: NodeChangedDetailType, detail: bad }], { busName: 'b' }),
    ).toThrow(/detail\.cluster/);
  });

  it('batches at most 10 entries per request by default', () => {
    const entries = Array.from({ length: 23 }, (_, i) => entry(`{"i":${i}}`));
    const { batches, oversized } = batchEntries(entries);
    expect(PutEventsMaxEntries).toBe(10);
    expect(batches.map((b) => b.length)).toEqual([10, 10, 3]);
    expect(batches.flat()).toEqual(entries);
    expect(oversized).toEqual([]);
  });

  it('starts a new request before the total would pass maxBytes', () => {
    const entries = [entry('x'.repeat(40)), entry('x'.repeat(40)), entry('x'.repeat(40))]; // 61 bytes each
    expect(batchEntries(entries, { maxBytes: 122 }).batches.map((b) => b.length)).toEqual([2, 1]);
    expect(batchEntries(entries, { maxBytes: 121 }).batches.map((b) => b.length)).toEqual([1, 1, 1]);
  });

  it('never drops an entry too large to send: it comes back named', () => {
    const digest = JSON.stringify({
      cluster: 'prod',
      sequence: 7,
      part: { index: 1, count: 3 },
      probeAges: {},
    });
    const huge = entry(digest + ' '.repeat(2000), { DetailType: 'Heartbeat Digest' });
    const pod = entry(
      JSON.stringify({ cluster: 'prod', pod: { namespace: 'shop', name: 'web-0' } }) + ' '.repeat(2000),
      {
        DetailType: 'Pod Changed',
      },
    );
    const { batches, oversized } = batchEntries([entry('{}'), huge, entry('{}'), pod], { maxBytes: 1000 });
    expect(batches).toEqual([[entry('{}'), entry('{}')]]);
    expect(oversized.map((o) => [o.index, o.message])).toEqual([
      [
        1,
        `Heartbeat Digest sequence 7 part 2/3 (cluster prod) is ${putEventsEntrySize(huge)} bytes, over the 1000-byte PutEvents limit`,
      ],
      [
        3,
        `Pod Changed shop/web-0 (cluster prod) is ${putEventsEntrySize(pod)} bytes, over the 1000-byte PutEvents limit`,
      ],
    ]);
    expect(batchEntries([entry('not json'.repeat(200))], { maxBytes: 100 }).oversized[0]?.message).toMatch(
      /^Node Changed is \d+ bytes/,
    );
  });

  it('keeps every entry exactly once, in order, within both limits', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 300 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 50, max: 2000 }),
        (details, maxEntries, maxBytes) => {
          const entries = details.map((d) => entry(d));
          const { batches, oversized } = batchEntries(entries, { maxEntries, maxBytes });
          for (const batch of batches) {
            expect(batch.length).toBeGreaterThan(0);
            expect(batch.length).toBeLessThanOrEqual(maxEntries);
            expect(batch.reduce((n, e) => n + putEventsEntrySize(e), 0)).toBeLessThanOrEqual(maxBytes);
          }
          const sent = batches.flat();
          expect(sent.length + oversized.length).toBe(entries.length);
          expect(sent).toEqual(entries.filter((e) => putEventsEntrySize(e) <= maxBytes));
        },
      ),
    );
  });

  it('assumes 1,000,000 bytes per request, under the 1 MB limit whichever way it is read', () => {
    expect(PutEventsMaxBytes).toBe(1_000_000);
  });
});
