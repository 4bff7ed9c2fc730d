// An update that sends back what it read with one field changed (a kubelet's Lease renewal, its Node
// status post) keeps the stored values it did not change instead of decoding them again. The answer and
// the stored object must be the ones a body fresh off the wire gives; anything else is decoded.
import { describe, expect, it } from 'vitest';
import { decodeObject } from '../../../../local/apiserver/codec.js';
import { createApiStore } from '../../../../local/apiserver/index.js';
import type { JsonObject } from '../../../../local/apiserver/json.js';
import { leases, pods } from '../../../../local/apiserver/resources.js';
import { deepFreeze } from '../../../../shared/deepFreeze.js';
import { VirtualClock } from '../../../integration/apiserver/helpers.js';

const storedLease = deepFreeze({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: {
    name: 'a-1',
    namespace: 'kube-node-lease',
    uid: 'u-1',
    resourceVersion: '7',
    creationTimestamp: '2026-01-01T00:00:00Z',
    ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'a-1', uid: 'n-1' }],
  },
  spec: { holderIdentity: 'a-1', leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z' },
}) as JsonObject;

const renewal = (renewTime: unknown): JsonObject =>
  ({ ...storedLease, spec: { ...(storedLease.spec as JsonObject), renewTime } }) as JsonObject;

describe('decodeObject with the stored object', () => {
  it('decodes a renewal as a body off the wire decodes, keeping the unchanged metadata', () => {
    const body = renewal('2026-01-01T00:00:10.000000Z');
    const kept = decodeObject(leases, body, 400, storedLease);
    const fresh = decodeObject(leases, JSON.parse(JSON.stringify(body)) as JsonObject, 400);
    expect(JSON.stringify(kept)).toBe(JSON.stringify(fresh));
    const meta = kept.metadata as JsonObject;
    const storedMeta = storedLease.metadata as JsonObject;
    // The top level of metadata is the update's own (it sets resourceVersion); below, stored values.
    expect(meta).not.toBe(storedMeta);
    expect(Object.isFrozen(meta)).toBe(false);
    expect(meta.ownerReferences).toBe(storedMeta.ownerReferences);
    expect(kept.spec).not.toBe(storedLease.spec);
  });

  it('still checks what changed', () => {
    expect(() => decodeObject(leases, renewal(12), 400, storedLease)).toThrow(
      /cannot unmarshal number into Go struct field spec.renewTime of type string/,
    );
    expect(() => decodeObject(leases, renewal('2026-01-01T00:00:10.5Z'), 400, storedLease)).toThrow(
      /parsing time "2026-01-01T00:00:10.5Z"/,
    );
  });

  it('decodes a frozen value that is not the stored one', () => {
    const metadata = deepFreeze({ ...(storedLease.metadata as JsonObject), labels: { a: 1 } });
    expect(() => decodeObject(leases, { ...storedLease, metadata }, 400, storedLease)).toThrow(
      /cannot unmarshal number into Go struct field metadata.labels/,
    );
  });

  it('decodes every field of a resource with defaults (a Pod)', () => {
    const storedPod = deepFreeze({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default', uid: 'u', resourceVersion: '3' },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    }) as JsonObject;
    const decoded = decodeObject(pods, { ...storedPod }, 400, storedPod);
    expect(decoded.spec).not.toBe(storedPod.spec);
    expect(decoded.metadata).not.toBe(storedPod.metadata);
  });
});

describe('an update that sends back what it read', () => {
  it('stores and answers what the same update off the wire does', () => {
    const run = (wire: boolean) => {
      const store = createApiStore({ clock: new VirtualClock() });
      const node = store.nodes.create({ metadata: { name: 'a-1' } });
      const created = store.leases.create({
        metadata: { name: 'a-1', namespace: 'kube-node-lease' },
        spec: { holderIdentity: 'a-1', leaseDurationSeconds: 40 },
      });
      const adopt = {
        ...created,
        metadata: {
          ...created.metadata,
          ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'a-1', uid: node.metadata?.uid ?? '' }],
        },
      };
      let lease = store.leases.update(wire ? (JSON.parse(JSON.stringify(adopt)) as typeof adopt) : adopt);
      const answers = [];
      for (let i = 1; i <= 3; i++) {
        const body = {
          ...lease,
          spec: { ...lease.spec, renewTime: `2026-01-01T00:00:${String(i)}0.000000Z` },
        };
        lease = store.leases.update(wire ? (JSON.parse(JSON.stringify(body)) as typeof body) : body);
        answers.push(JSON.stringify(lease));
      }
      // A stale body (the first answer's resourceVersion) is still a conflict.
      expect(() => store.leases.update({ ...adopt, spec: { holderIdentity: 'b' } })).toThrow(
        /conflict|modified/i,
      );
      return { answers, stored: JSON.stringify(store.leases.get('a-1', { namespace: 'kube-node-lease' })) };
    };
    expect(run(false)).toEqual(run(true));
  });
});

describe('a Lease update (ValidateLeaseUpdate)', () => {
  it('checks the metadata update, then the spec', () => {
    const store = createApiStore({ clock: new VirtualClock() });
    const lease = store.leases.create({
      metadata: { name: 'a-1', namespace: 'kube-node-lease' },
      spec: { holderIdentity: 'a-1', leaseDurationSeconds: 40 },
    });
    expect(() =>
      store.leases.update({
        ...lease,
        metadata: { ...lease.metadata, uid: 'other' },
        spec: { ...lease.spec, leaseDurationSeconds: 0, leaseTransitions: -1 },
      }),
    ).toThrow(
      'Lease.coordination.k8s.io "a-1" is invalid: [metadata.uid: Invalid value: "other": field is immutable, spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]',
    );
  });
});

describe('labels on an update (ValidateObjectMetaUpdate)', () => {
  const setUp = () => {
    const store = createApiStore({ clock: new VirtualClock() });
    const node = store.nodes.create({
      metadata: { name: 'a-1', labels: { 'topology.kubernetes.io/zone': 'z1' } },
    });
    return { store, node };
  };

  it('accepts the stored labels sent back with another change', () => {
    const { store, node } = setUp();
    const updated = store.nodes.update({ ...node, spec: { ...node.spec, unschedulable: true } });
    expect(updated.metadata?.labels).toEqual({ 'topology.kubernetes.io/zone': 'z1' });
    expect(updated.spec?.unschedulable).toBe(true);
  });

  it('checks labels that changed, whether frozen or not', () => {
    const { store, node } = setUp();
    const message =
      'Node "a-1" is invalid: metadata.labels: Invalid value: "-bad": name part must consist of alphanumeric characters';
    const bad = { 'topology.kubernetes.io/zone': 'z1', '-bad': 'x' };
    expect(() => store.nodes.update({ ...node, metadata: { ...node.metadata, labels: bad } })).toThrow(
      message,
    );
    expect(() =>
      store.nodes.update({ ...node, metadata: { ...node.metadata, labels: deepFreeze({ ...bad }) } }),
    ).toThrow(message);
  });
});
