// fast-check arbitraries for the event contracts: valid domain values (Node, Pod, HeartbeatDigest) and
// their wire forms. Shared by test/unit/events*.test.ts and test/unit/relay/shaping.test.ts.
import fc from 'fast-check';
import type { Node, NodeCondition, Pod, Taint, Toleration } from '../../shared/domain/types.js';
import {
  ControllerLabelKeys,
  MaxEpochMillis,
  MinEpochMillis,
  type HeartbeatDigest,
} from '../../shared/events.js';

const year2020 = Date.parse('2020-01-01T00:00:00Z');
const year2030 = Date.parse('2030-01-01T00:00:00Z');

/** Any representable instant, with realistic ones and whole seconds (metav1.Time) well represented. */
export const epochMillis: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: MinEpochMillis, max: MaxEpochMillis }),
  fc.integer({ min: year2020, max: year2030 }),
  fc.integer({ min: year2020 / 1000, max: year2030 / 1000 }).map((s) => s * 1000),
);

export const dnsLabel: fc.Arbitrary<string> = fc.stringMatching(/^[a-z0-9](?:[-a-z0-9]{0,8}[a-z0-9])?$/);

/** DNS-1123 subdomains, including cloud-style names and dashes in odd places ("a--b"). */
export const nodeName: fc.Arbitrary<string> = fc.oneof(
  fc.array(dnsLabel, { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.')),
  fc
    .tuple(fc.nat(255), fc.nat(255), fc.constantFrom('eu-west-1', 'us-east-1'))
    .map(([a, b, region]) => `ip-10-0-${a}-${b}.${region}.compute.internal`),
);

const labelValue = fc.stringMatching(/^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?)?$/);
const conditionStatus = fc.constantFrom('True' as const, 'False' as const, 'Unknown' as const);
const taintEffect = fc.constantFrom('NoSchedule' as const, 'PreferNoSchedule' as const, 'NoExecute' as const);

export const nodeCondition: fc.Arbitrary<NodeCondition> = fc.record(
  {
    type: fc.constantFrom(
      'Ready',
      'MemoryPressure',
      'DiskPressure',
      'PIDPressure',
      'NetworkUnavailable',
      'Custom',
    ),
    status: conditionStatus,
    reason: fc.string(),
    message: fc.string(),
    lastHeartbeatTime: epochMillis,
    lastTransitionTime: epochMillis,
  },
  { requiredKeys: ['type', 'status'] },
);

export const taint: fc.Arbitrary<Taint> = fc.record(
  {
    key: fc.constantFrom('node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable', 'example.com/gpu'),
    value: fc.string(),
    effect: taintEffect,
    timeAdded: epochMillis,
  },
  { requiredKeys: ['key', 'effect'] },
);

export const node: fc.Arbitrary<Node> = fc.record(
  {
    name: nodeName,
    uid: fc.uuid(),
    resourceVersion: fc.stringMatching(/^[0-9]{1,8}$/),
    creationTimestamp: epochMillis,
    labels: fc.dictionary(fc.constantFrom(...ControllerLabelKeys), labelValue),
    conditions: fc.array(nodeCondition, { maxLength: 6 }),
    taints: fc.array(taint, { maxLength: 4 }),
    unschedulable: fc.boolean(),
  },
  {
    requiredKeys: ['name', 'uid', 'creationTimestamp', 'labels', 'conditions', 'taints', 'unschedulable'],
  },
);

export const toleration: fc.Arbitrary<Toleration> = fc.record(
  {
    key: fc.string(),
    operator: fc.constantFrom('Exists' as const, 'Equal' as const, 'Lt' as const, 'Gt' as const, '' as const),
    value: fc.string(),
    effect: fc.constantFrom(
      'NoSchedule' as const,
      'PreferNoSchedule' as const,
      'NoExecute' as const,
      '' as const,
    ),
    tolerationSeconds: fc.oneof(fc.integer({ min: -600, max: 3600 }), fc.maxSafeInteger()),
  },
  { requiredKeys: [] },
);

export const pod: fc.Arbitrary<Pod> = fc.record(
  {
    namespace: dnsLabel,
    name: nodeName,
    uid: fc.uuid(),
    nodeName: fc.oneof(fc.constant(''), nodeName),
    tolerations: fc.array(toleration, { maxLength: 4 }),
    ownerKind: fc.constantFrom('ReplicaSet', 'DaemonSet', 'StatefulSet', 'Job'),
    deletionTimestamp: epochMillis,
    deletionGracePeriodSeconds: fc.nat(),
    ready: conditionStatus,
    statusReason: fc.string(),
    disruptionTarget: fc.constantFrom('DeletionByTaintManager', 'EvictionByEvictionAPI', ''),
  },
  { requiredKeys: ['namespace', 'name', 'uid', 'nodeName', 'tolerations'] },
);

/** A node fingerprint (shared/nodeFingerprint.ts): six base64url characters. */
export const fingerprint: fc.Arbitrary<string> = fc.stringMatching(/^[A-Za-z0-9_-]{6}$/);

/** A whole digest (part 0 of 1) with up to `maxNodes` probes, each at or before observedAt. */
export function heartbeatDigest(maxNodes = 40): fc.Arbitrary<HeartbeatDigest> {
  return fc
    .record({
      cluster: dnsLabel,
      relayId: fc.stringMatching(/^nlc-relay-[a-z0-9]{5}$/),
      leaderSince: fc.integer({ min: year2020, max: year2030 }),
      sequence: fc.nat(),
      observedAt: fc.integer({ min: year2020, max: year2030 }),
      observingSinceAge: fc.nat(86_400_000),
      ages: fc.uniqueArray(fc.tuple(nodeName, fc.nat(120_000)), {
        selector: ([name]) => name,
        maxLength: maxNodes,
      }),
      /** Fingerprints of the probed nodes, and of nodes the relay knows without a probe (or none at all). */
      fingerprints: fc.option(
        fc.record({
          probed: fc.array(fingerprint, { minLength: maxNodes, maxLength: maxNodes }),
          unprobed: fc.uniqueArray(fc.tuple(nodeName, fingerprint), {
            selector: ([name]) => name,
            maxLength: 5,
          }),
        }),
        { nil: undefined },
      ),
    })
    .map(({ ages, observingSinceAge, fingerprints, ...rest }) => {
      const digest = {
        schemaVersion: 1 as const,
        ...rest,
        observingSince: rest.observedAt - observingSinceAge,
        part: { index: 0, count: 1 },
        probes: new Map(ages.map(([name, age]) => [name, rest.observedAt - age])),
      };
      if (fingerprints === undefined) return digest;
      const known = new Map(ages.map(([name], i) => [name, fingerprints.probed[i] ?? 'AAAAAA']));
      for (const [name, value] of fingerprints.unprobed) if (!known.has(name)) known.set(name, value);
      return { ...digest, fingerprints: known };
    });
}
