// shared/adapters/kubernetes/mapping.ts: the one conversion between the API's objects and the domain's
// trimmed Node and Pod, which the cluster adapter and the watch relay share; and the write side.
import { describe, expect, it } from 'vitest';
import {
  formatKubeTime,
  kubeTimeToMillis,
  nodeConditionToJson,
  nodeFromV1,
  podFromV1,
  taintToJson,
} from '../../../../shared/adapters/kubernetes/mapping.js';
import { at, fromJson, mustNode, mustPod, trimmedNode, v1Node, v1Pod } from '../../../helpers/kubeObjects.js';

const t = (iso: string) => new Date(iso);

describe('formatKubeTime', () => {
  it('writes RFC 3339 in whole seconds, truncating like Go', () => {
    expect(formatKubeTime(Date.parse('2024-05-01T10:00:00.999Z'))).toBe('2024-05-01T10:00:00Z');
  });
});

describe('nodeFromV1', () => {
  it('reads the fields the controller uses', () => {
    const node = {
      metadata: {
        name: 'node-a',
        uid: 'u1',
        resourceVersion: '42',
        creationTimestamp: t('2024-01-01T00:00:00Z'),
        labels: { 'topology.kubernetes.io/zone': 'z1' },
      },
      spec: {
        unschedulable: true,
        taints: [
          {
            key: 'node.kubernetes.io/unreachable',
            effect: 'NoExecute',
            timeAdded: t('2024-01-01T00:01:00Z'),
          },
          { key: 'example.com/gpu', value: 'a100', effect: 'NoSchedule' },
        ],
      },
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'Unknown',
            reason: 'NodeStatusUnknown',
            lastHeartbeatTime: t('2024-01-01T00:00:30Z'),
            lastTransitionTime: t('2024-01-01T00:00:50Z'),
          },
        ],
      },
    };
    expect(nodeFromV1(node)).toEqual({
      ok: true,
      value: {
        name: 'node-a',
        uid: 'u1',
        resourceVersion: '42',
        creationTimestamp: Date.parse('2024-01-01T00:00:00Z'),
        labels: { 'topology.kubernetes.io/zone': 'z1' },
        unschedulable: true,
        taints: [
          {
            key: 'node.kubernetes.io/unreachable',
            effect: 'NoExecute',
            timeAdded: Date.parse('2024-01-01T00:01:00Z'),
          },
          { key: 'example.com/gpu', value: 'a100', effect: 'NoSchedule' },
        ],
        conditions: [
          {
            type: 'Ready',
            status: 'Unknown',
            reason: 'NodeStatusUnknown',
            lastHeartbeatTime: Date.parse('2024-01-01T00:00:30Z'),
            lastTransitionTime: Date.parse('2024-01-01T00:00:50Z'),
          },
        ],
      },
    });
  });

  it('keeps only the labels the controller reads', () => {
    const node = mustNode({
      metadata: {
        name: 'node-a',
        uid: 'u1',
        creationTimestamp: t('2024-01-01T00:00:00Z'),
        labels: {
          'kubernetes.io/hostname': 'node-a',
          'topology.kubernetes.io/zone': 'z1',
          'node.kubernetes.io/exclude-disruption': '',
          team: 'x',
        },
      },
    });
    expect(node.labels).toEqual({
      'topology.kubernetes.io/zone': 'z1',
      'node.kubernetes.io/exclude-disruption': '',
    });
  });

  it('drops a taint whose effect the API server would not admit, instead of failing the node', () => {
    const result = nodeFromV1({
      metadata: { name: 'node-b', uid: 'u', creationTimestamp: t('2024-01-01T00:00:00Z') },
      spec: {
        taints: [
          { key: 'k', effect: 'Sometimes' },
          { key: 'g', effect: 'NoSchedule' },
        ],
      },
    });
    expect(result.ok && result.value.taints).toEqual([{ key: 'g', effect: 'NoSchedule' }]);
  });
});

describe('podFromV1', () => {
  it('reads the fields the controllers use', () => {
    const pod = {
      metadata: {
        name: 'p',
        namespace: 'ns',
        uid: 'pu',
        deletionTimestamp: t('2024-01-01T00:05:00Z'),
        deletionGracePeriodSeconds: 30,
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Other', name: 'o', uid: 'o' },
          { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', uid: 'd', controller: true },
        ],
      },
      spec: {
        nodeName: 'node-a',
        containers: [],
        tolerations: [
          {
            key: 'node.kubernetes.io/unreachable',
            operator: 'Exists',
            effect: 'NoExecute',
            tolerationSeconds: 300,
          },
        ],
      },
      status: { reason: 'NodeLost', conditions: [{ type: 'Ready', status: 'True' }] },
    };
    expect(podFromV1(pod)).toEqual({
      ok: true,
      value: {
        namespace: 'ns',
        name: 'p',
        uid: 'pu',
        nodeName: 'node-a',
        tolerations: [
          {
            key: 'node.kubernetes.io/unreachable',
            operator: 'Exists',
            effect: 'NoExecute',
            tolerationSeconds: 300,
          },
        ],
        ownerKind: 'DaemonSet',
        deletionTimestamp: Date.parse('2024-01-01T00:05:00Z'),
        deletionGracePeriodSeconds: 30,
        ready: 'True',
        statusReason: 'NodeLost',
      },
    });
  });

  it('reads the reason of a True DisruptionTarget condition only (taint eviction marks its deletions)', () => {
    const withConditions = (conditions: object[]) =>
      podFromV1({ metadata: { name: 'p', namespace: 'ns', uid: 'u' }, status: { conditions } });
    expect(
      withConditions([
        { type: 'Ready', status: 'False' },
        {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'DeletionByTaintManager',
          message: 'Taint manager: deleting due to NoExecute taint',
        },
      ]),
    ).toMatchObject({ ok: true, value: { ready: 'False', disruptionTarget: 'DeletionByTaintManager' } });
    expect(withConditions([{ type: 'DisruptionTarget', status: 'True' }])).toMatchObject({
      value: { disruptionTarget: '' },
    });
    const notDisrupted = withConditions([{ type: 'DisruptionTarget', status: 'False', reason: 'X' }]);
    expect(notDisrupted.ok && notDisrupted.value).not.toHaveProperty('disruptionTarget');
  });

  it('reads an unbound pod without a Ready condition', () => {
    expect(
      podFromV1({ metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec: { containers: [] } }),
    ).toEqual({
      ok: true,
      value: { namespace: 'ns', name: 'p', uid: 'u', nodeName: '', tolerations: [] },
    });
  });
});

describe('writing', () => {
  it('writes taints and conditions as the API expects them', () => {
    expect(
      taintToJson({
        key: 'k',
        value: '',
        effect: 'NoExecute',
        timeAdded: Date.parse('2024-01-01T00:00:00.5Z'),
      }),
    ).toEqual({
      key: 'k',
      effect: 'NoExecute',
      timeAdded: '2024-01-01T00:00:00Z',
    });
    expect(nodeConditionToJson({ type: 'Ready', status: 'Unknown', lastTransitionTime: 0 })).toEqual({
      type: 'Ready',
      status: 'Unknown',
      lastTransitionTime: '1970-01-01T00:00:00Z',
    });
  });
});

describe('kubeTimeToMillis', () => {
  it.each([
    {
      name: 'a Date (listed objects)',
      value: new Date('2026-11-21T10:00:00.123Z'),
      want: at('2026-11-21T10:00:00.123Z'),
    },
    {
      name: 'an RFC 3339 string (watched objects)',
      value: '2026-11-21T10:00:00Z',
      want: at('2026-11-21T10:00:00Z'),
    },
    {
      name: 'a MicroTime, truncated to the ms',
      value: '2026-11-21T10:00:00.123456Z',
      want: at('2026-11-21T10:00:00.123Z'),
    },
    { name: 'nanoseconds', value: '2026-11-21T10:00:00.999999999Z', want: at('2026-11-21T10:00:00.999Z') },
    { name: 'an offset', value: '2026-11-21T11:00:00.5+01:00', want: at('2026-11-21T10:00:00.500Z') },
    { name: 'null (JSON)', value: null, want: undefined },
    { name: 'undefined', value: undefined, want: undefined },
    { name: 'garbage', value: 'soon', want: undefined },
    { name: 'an invalid Date', value: new Date('nope'), want: undefined },
  ])('reads $name', ({ value, want }) => {
    expect(kubeTimeToMillis(value)).toBe(want);
  });
});

describe('nodeFromV1: what the relay and the adapter read', () => {
  it('keeps what the controller reads and drops the rest (labels, images, capacity, ...)', () => {
    expect(mustNode(v1Node((iso) => new Date(iso)))).toEqual(trimmedNode);
  });

  it('gives the same node for a listed object (Dates) and a watched one (raw JSON strings)', () => {
    expect(mustNode(v1Node((iso) => iso))).toEqual(mustNode(v1Node((iso) => new Date(iso))));
  });

  it('reads an absent spec, status and labels as an empty, schedulable node', () => {
    const node = mustNode(fromJson({ metadata: { name: 'n1', uid: 'u1', creationTimestamp: new Date(0) } }));
    expect(node).toEqual({
      name: 'n1',
      uid: 'u1',
      creationTimestamp: 0,
      labels: {},
      conditions: [],
      taints: [],
      unschedulable: false,
    });
  });

  it('reads odd values the way the controller would', () => {
    const node = mustNode(
      fromJson({
        metadata: { name: 'n1', uid: 'u1', creationTimestamp: new Date(0), labels: { constructor: 'x' } },
        spec: { unschedulable: true, taints: [{ key: 'k', effect: 'Evict' }] },
        status: { conditions: [{ type: 'Custom', status: 'Maybe' }] },
      }),
    );
    expect(node.labels).toEqual({});
    expect(node.taints).toEqual([]); // an effect the API server would not admit
    expect(node.conditions).toEqual([{ type: 'Custom', status: 'Unknown' }]);
    expect(node.unschedulable).toBe(true);
  });

  it.each([
    {
      name: 'metadata.name',
      v1: { metadata: { uid: 'u', creationTimestamp: new Date(0) } },
      want: 'malformed node "": metadata.name: missing',
    },
    {
      name: 'metadata.uid',
      v1: { metadata: { name: 'n', creationTimestamp: new Date(0) } },
      want: 'malformed node "n": metadata.uid: missing',
    },
    {
      name: 'metadata.creationTimestamp',
      v1: { metadata: { name: 'n', uid: 'u' } },
      want: 'malformed node "n": metadata.creationTimestamp: missing or not a time',
    },
    {
      name: 'a readable creationTimestamp',
      v1: { metadata: { name: 'n', uid: 'u', creationTimestamp: 'yesterday' } },
      want: 'malformed node "n": metadata.creationTimestamp: missing or not a time',
    },
  ])('fails, naming the node and the field, without $name', ({ v1, want }) => {
    expect(nodeFromV1(v1)).toEqual({ ok: false, message: want });
  });

  it('fails on a structure the API server never sends, naming the field', () => {
    const result = nodeFromV1({
      metadata: { name: 'node-b', uid: 'u', creationTimestamp: new Date(0) },
      spec: { taints: [{ effect: 'NoSchedule' }] },
    });
    expect(result).toEqual({ ok: false, message: 'malformed node "node-b": spec.taints.0.key: missing' });
    expect(nodeFromV1('node-b')).toMatchObject({ ok: false });
  });
});

describe('podFromV1: what the relay and the adapter read', () => {
  it('keeps identity, node, tolerations, the controller owner kind and the Ready status', () => {
    expect(mustPod(v1Pod())).toEqual({
      namespace: 'shop',
      name: 'checkout-7c9d8f6b4-2xq9z',
      uid: '0b6e3c1a-3f2d-4c8e-9b7a-6d5e4f3a2b1c',
      nodeName: 'ip-10-0-12-7.eu-west-1.compute.internal',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      ownerKind: 'ReplicaSet',
      ready: 'True',
    });
  });

  it('reads deletion, status.reason, an unbound pod and a pod without Ready', () => {
    const pod = mustPod(
      v1Pod({
        metadata: {
          namespace: 'shop',
          name: 'p',
          uid: 'u',
          deletionTimestamp: '2026-11-21T10:05:13Z', // raw JSON from a watch
          deletionGracePeriodSeconds: 30,
        },
        spec: { containers: [] },
        status: { reason: 'NodeLost' },
      }),
    );
    expect(pod).toEqual({
      namespace: 'shop',
      name: 'p',
      uid: 'u',
      nodeName: '',
      tolerations: [],
      deletionTimestamp: at('2026-11-21T10:05:13Z'),
      deletionGracePeriodSeconds: 30,
      statusReason: 'NodeLost',
    });
  });

  it('clamps int64 tolerationSeconds and drops tolerations that can never tolerate', () => {
    const pod = mustPod(
      v1Pod({
        spec: {
          containers: [],
          tolerations: [
            { operator: 'Exists', tolerationSeconds: JSON.parse('9223372036854775807') as number },
            { key: 'k', operator: 'Matches' },
            { key: 'k', operator: 'Exists', effect: 'Evict' },
            { key: 'k', effect: '' },
          ],
        },
      }),
    );
    expect(pod.tolerations).toEqual([
      { operator: 'Exists', tolerationSeconds: Number.MAX_SAFE_INTEGER },
      { key: 'k', effect: '' },
    ]);
  });

  it('fails for a pod without a namespace or uid, naming the pod and the field', () => {
    expect(podFromV1({ metadata: { name: 'p', uid: 'u' } })).toEqual({
      ok: false,
      message: 'malformed pod "p": metadata.namespace: missing',
    });
    expect(podFromV1({ metadata: { name: 'p', namespace: 'ns' } })).toEqual({
      ok: false,
      message: 'malformed pod "ns/p": metadata.uid: missing',
    });
  });

  it('reads a Ready status it does not know as Unknown, and a negative grace as 0', () => {
    const pod = mustPod(
      v1Pod({
        metadata: { namespace: 'shop', name: 'p', uid: 'u', deletionGracePeriodSeconds: -5 },
        status: { conditions: [{ type: 'Ready', status: 'Perhaps' }] },
      }),
    );
    expect(pod).toMatchObject({ ready: 'Unknown', deletionGracePeriodSeconds: 0 });
  });
});
