import { describe, expect, it } from 'vitest';
import {
  formatKubeTime,
  nodeConditionToJson,
  nodeFromV1,
  podFromV1,
  taintToJson,
} from '../../../../shared/adapters/kubernetes/mapping.js';

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

  it('names the node and the field when the object is malformed', () => {
    const result = nodeFromV1({
      metadata: { name: 'node-b', creationTimestamp: t('2024-01-01T00:00:00Z') },
      spec: { taints: [{ key: 'k', effect: 'Sometimes' }] },
    });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(/^malformed node "node-b": spec\.taints\.0\.effect: /);
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
