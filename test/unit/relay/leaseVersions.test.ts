// The relay's side of the lease circuit breaker (KEP-5647): trimLease keeps a Lease's resourceVersion,
// the probe tracker keeps the last one seen per node and whether the node's Ready was seen Unknown,
// buildDigest names the versions of the nodes going silent (LeaseVersionsAfterMs), and the digest
// loop passes the lease informer's synced resourceVersion along.
import type { V1Lease } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { EpochMillis, Node, NodeCondition } from '../../../shared/domain/types.js';
import { encodeDetail, HeartbeatDigestDetailType, parseHeartbeatDigest } from '../../../shared/events.js';
import type { HeartbeatDigest } from '../../../shared/events.js';
import { LeaseVersionsAfterMs } from '../../../shared/heartbeatDigestWire.js';
import { DigestLoop } from '../../../relay/digestLoop.js';
import { silentLogger } from '../../../relay/logger.js';
import { RelayMetrics } from '../../../relay/metrics.js';
import type { ReflectorStatus } from '../../../relay/reflector.js';
import {
  buildDigest,
  forgetNode,
  newProbeTracker,
  observeLease,
  observeNodeStatus,
  trimLease,
  type ProbeTracker,
} from '../../../relay/shaping.js';
import { fromJson } from '../../helpers/kubeObjects.js';

const t0 = Date.parse('2026-11-21T10:00:00Z');
const identity = {
  cluster: 'prod',
  relayId: 'relay-a',
  leaderSince: t0 - 60_000,
  sequence: 3,
  observingSince: t0 - 60_000,
};

function node(name: string, ready?: Partial<NodeCondition>): Node {
  return {
    name,
    uid: `uid-${name}`,
    creationTimestamp: 0,
    labels: {},
    taints: [],
    unschedulable: false,
    conditions:
      ready === undefined ? [] : [{ type: 'Ready', status: 'True', lastHeartbeatTime: 500, ...ready }],
  };
}

/** A known node whose Lease was last renewed (a probe) at `renewedAt`, the Lease then at `rv`. */
function leasedNode(tracker: ProbeTracker, name: string, renewedAt: EpochMillis, rv: string): void {
  observeNodeStatus(tracker, node(name, {}), t0 - 120_000);
  observeLease(tracker, name, 1, t0 - 120_000, String(Number(rv) - 1)); // baseline
  expect(observeLease(tracker, name, 2, renewedAt, rv)).toBe('probe');
}

const digestAt = (tracker: ProbeTracker, observedAt: EpochMillis, leaseResourceVersion?: string) =>
  buildDigest(tracker, {
    ...identity,
    observedAt,
    ...(leaseResourceVersion !== undefined && { leaseResourceVersion }),
  });

describe('trimLease', () => {
  it('keeps the Lease resourceVersion, and leaves out an empty one', () => {
    const lease = fromJson<V1Lease>({
      metadata: { name: 'node-a', namespace: 'kube-node-lease', resourceVersion: '81237645' },
      spec: { holderIdentity: 'node-a', renewTime: '2026-11-21T10:00:00.123456Z' },
    });
    expect(trimLease(lease)).toEqual({
      nodeName: 'node-a',
      renewTime: Date.parse('2026-11-21T10:00:00.123Z'),
      resourceVersion: '81237645',
    });
    expect(trimLease(fromJson({ metadata: { name: 'node-b', resourceVersion: '' } }))).toEqual({
      nodeName: 'node-b',
    });
  });
});

describe('the probe tracker’s lease resourceVersion and Ready=Unknown', () => {
  it('keeps the last Lease resourceVersion seen, whatever the observation', () => {
    const tracker = newProbeTracker();
    expect(observeLease(tracker, 'n1', 1000, t0, '10')).toBe('unknownNode'); // not kept: node unknown
    observeNodeStatus(tracker, node('n1', {}), t0);
    expect(tracker.nodes.get('n1')?.leaseResourceVersion).toBeUndefined();
    expect(observeLease(tracker, 'n1', 1000, t0, '11')).toBe('baseline');
    expect(tracker.nodes.get('n1')?.leaseResourceVersion).toBe('11');
    expect(observeLease(tracker, 'n1', 2000, t0 + 10_000, '12')).toBe('probe');
    expect(tracker.nodes.get('n1')?.leaseResourceVersion).toBe('12');
    // Another writer changed the Lease (holder, labels) without renewing it: not a probe, a new version.
    expect(observeLease(tracker, 'n1', 2000, t0 + 12_000, '13')).toBe('unchanged');
    expect(tracker.nodes.get('n1')?.leaseResourceVersion).toBe('13');
    // A kubelet clock stepped back: not a probe either, but it is the Lease as it is now.
    expect(observeLease(tracker, 'n1', 1500, t0 + 13_000, '14')).toBe('unchanged');
    expect(tracker.nodes.get('n1')?.leaseResourceVersion).toBe('14');
    expect(observeLease(tracker, 'n1', undefined, t0 + 14_000, '15')).toBe('unchanged');
    expect(tracker.nodes.get('n1')?.leaseResourceVersion).toBe('15');
  });

  it('forgets the version with the node', () => {
    const tracker = newProbeTracker();
    leasedNode(tracker, 'n1', t0, '20');
    forgetNode(tracker, 'n1');
    observeNodeStatus(tracker, node('n1', {}), t0 + 1);
    expect(tracker.nodes.get('n1')?.leaseResourceVersion).toBeUndefined();
  });

  it('records whether the node’s Ready condition was last seen Unknown', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('n1', { status: 'Unknown' }), t0);
    expect(tracker.nodes.get('n1')?.readyUnknown).toBe(true);
    observeNodeStatus(tracker, node('n1', { status: 'True', lastHeartbeatTime: 900 }), t0 + 1);
    expect(tracker.nodes.get('n1')?.readyUnknown).toBe(false);
    observeNodeStatus(tracker, node('n1', { status: 'Unknown', lastHeartbeatTime: 900 }), t0 + 2);
    expect(tracker.nodes.get('n1')?.readyUnknown).toBe(true);
    observeNodeStatus(tracker, node('n1', { status: 'False', lastHeartbeatTime: 900 }), t0 + 3);
    expect(tracker.nodes.get('n1')?.readyUnknown).toBe(false);
    observeNodeStatus(tracker, node('n1'), t0 + 4); // no Ready condition at all
    expect(tracker.nodes.get('n1')?.readyUnknown).toBe(false);
  });
});

describe('buildDigest lease versions', () => {
  it('is 15 s: one and a half kubelet renewal intervals', () => {
    expect(LeaseVersionsAfterMs).toBe(15_000);
  });

  it('names the Lease resourceVersion of a node silent 15 s or more, not one silent 14.999 s', () => {
    const tracker = newProbeTracker();
    leasedNode(tracker, 'silent', t0, '100');
    expect(digestAt(tracker, t0 + 14_999).leaseVersions).toBeUndefined();
    expect(digestAt(tracker, t0 + 15_000).leaseVersions).toEqual(new Map([['silent', '100']]));
    expect(digestAt(tracker, t0 + 300_000).leaseVersions).toEqual(new Map([['silent', '100']]));
  });

  it('names no healthy node, and only the silent ones among many', () => {
    const tracker = newProbeTracker();
    leasedNode(tracker, 'healthy-1', t0 + 20_000, '201');
    leasedNode(tracker, 'healthy-2', t0 + 29_000, '202');
    leasedNode(tracker, 'silent-1', t0, '203');
    leasedNode(tracker, 'silent-2', t0 + 14_000, '204');
    const digest = digestAt(tracker, t0 + 30_000);
    expect(digest.probes.size).toBe(4);
    expect(digest.leaseVersions).toEqual(
      new Map([
        ['silent-1', '203'],
        ['silent-2', '204'],
      ]),
    );
    // Once the silent nodes renew again, the field is gone: none in steady state.
    observeLease(tracker, 'silent-1', 3, t0 + 31_000, '205');
    observeLease(tracker, 'silent-2', 3, t0 + 31_000, '206');
    expect(digestAt(tracker, t0 + 32_000).leaseVersions).toBeUndefined();
  });

  it('leaves out a node whose Ready the relay saw Unknown (marked: nothing left to confirm)', () => {
    const tracker = newProbeTracker();
    leasedNode(tracker, 'marked', t0, '300');
    leasedNode(tracker, 'unmarked', t0, '301');
    // The controller marks it: its own write keeps the heartbeat, so no probe either.
    observeNodeStatus(tracker, node('marked', { status: 'Unknown' }), t0 + 50_000);
    expect(digestAt(tracker, t0 + 55_000).leaseVersions).toEqual(new Map([['unmarked', '301']]));
    // The kubelet posts Ready again (a probe), then goes silent once more: named again.
    observeNodeStatus(tracker, node('marked', { status: 'True', lastHeartbeatTime: 60_000 }), t0 + 60_000);
    expect(digestAt(tracker, t0 + 75_000).leaseVersions).toEqual(
      new Map([
        ['marked', '300'],
        ['unmarked', '301'],
      ]),
    );
  });

  it('goes by the probe as sent: a node with a baseline only counts from observingSince', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('n1', {}), t0);
    observeLease(tracker, 'n1', 1, t0, '400'); // baseline: sent as probed at observingSince
    const since = { ...identity, observingSince: t0 };
    expect(buildDigest(tracker, { ...since, observedAt: t0 + 14_999 }).leaseVersions).toBeUndefined();
    expect(buildDigest(tracker, { ...since, observedAt: t0 + 15_000 }).leaseVersions).toEqual(
      new Map([['n1', '400']]),
    );
  });

  it('names no node without a Lease version (Ready heartbeats only, or a Lease not seen)', () => {
    const tracker = newProbeTracker();
    observeNodeStatus(tracker, node('posting', { lastHeartbeatTime: 500 }), t0);
    observeNodeStatus(tracker, node('posting', { lastHeartbeatTime: 600 }), t0 + 1); // a probe
    observeNodeStatus(tracker, node('unversioned', {}), t0);
    observeLease(tracker, 'unversioned', 1, t0);
    observeLease(tracker, 'unversioned', 2, t0 + 1); // a probe, from a Lease without resourceVersion
    const digest = digestAt(tracker, t0 + 60_000);
    expect(digest.probes.size).toBe(2);
    expect(digest.leaseVersions).toBeUndefined();
  });

  it('leaves out a version the contract cannot carry rather than failing the digest', () => {
    const tracker = newProbeTracker();
    leasedNode(tracker, 'ok', t0, '500');
    observeNodeStatus(tracker, node('odd', {}), t0);
    observeLease(tracker, 'odd', 1, t0, '9'.repeat(65));
    const digest = digestAt(tracker, t0 + 60_000, '8'.repeat(65));
    expect(digest.leaseVersions).toEqual(new Map([['ok', '500']]));
    expect(digest.leaseResourceVersion).toBeUndefined();
    expect(() => encodeDetail({ detailType: HeartbeatDigestDetailType, detail: digest })).not.toThrow();
  });

  it('passes leaseResourceVersion through, and leaves out an empty one (not synced)', () => {
    const tracker = newProbeTracker();
    leasedNode(tracker, 'n1', t0, '600');
    expect(digestAt(tracker, t0 + 1000, '81240012').leaseResourceVersion).toBe('81240012');
    expect(digestAt(tracker, t0 + 1000, '')).not.toHaveProperty('leaseResourceVersion');
    expect(digestAt(tracker, t0 + 1000)).not.toHaveProperty('leaseResourceVersion');
  });

  it('builds a digest with lease versions that encodes and parses back', () => {
    const tracker = newProbeTracker();
    leasedNode(tracker, 'ip-10-0-1-2.eu-west-1.compute.internal', t0, '700');
    leasedNode(tracker, 'worker1', t0 + 20_000, '701');
    const digest = digestAt(tracker, t0 + 30_000, '81240012');
    expect(digest.leaseVersions?.size).toBe(1);
    const wire: unknown = JSON.parse(
      JSON.stringify(encodeDetail({ detailType: HeartbeatDigestDetailType, detail: digest })),
    );
    expect(wire).toMatchObject({
      leaseVersions: { 'ip-10-0-1-2.eu-west-1.compute.internal': '700' },
      leaseResourceVersion: '81240012',
    });
    expect(parseHeartbeatDigest(wire)).toEqual(digest);
  });
});

describe('DigestLoop', () => {
  function loop(leaseStatus: Partial<ReflectorStatus>) {
    const status = (resource: string, extra: Partial<ReflectorStatus> = {}): ReflectorStatus => ({
      resource,
      synced: true,
      syncedAt: t0 - 60_000,
      resourceVersion: '1',
      objects: 1,
      watching: true,
      interrupted: false,
      suspectedStall: false,
      ...extra,
    });
    const tracker = newProbeTracker();
    leasedNode(tracker, 'n1', t0, '800');
    const sent: HeartbeatDigest[][] = [];
    const digests = new DigestLoop({
      cluster: 'prod',
      relayId: 'relay-a',
      nodeMonitorPeriod: 5000,
      partMaxBytes: 255 * 1024,
      clock: { now: () => t0 + 20_000 },
      tracker,
      leases: { status: () => status('leases', leaseStatus) },
      nodes: { status: () => status('nodes') },
      publisher: {
        setDigest: (parts) => {
          sent.push([...parts]);
          return Promise.resolve();
        },
      },
      metrics: new RelayMetrics(),
      logger: silentLogger,
      leaderSince: () => t0 - 60_000,
    });
    return { digests, sent };
  }

  it('sends the lease informer’s synced resourceVersion with the lease versions', async () => {
    const { digests, sent } = loop({ resourceVersion: '81240012' });
    await digests.tick();
    expect(sent).toHaveLength(1);
    expect(sent[0]?.[0]).toMatchObject({
      leaseResourceVersion: '81240012',
      leaseVersions: new Map([['n1', '800']]),
    });
  });

  it('sends no leaseResourceVersion when the informer reports none', async () => {
    const { digests, sent } = loop({ resourceVersion: '' });
    await digests.tick();
    expect(sent[0]?.[0]).not.toHaveProperty('leaseResourceVersion');
  });
});
