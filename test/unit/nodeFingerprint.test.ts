// The node fingerprint (shared/nodeFingerprint.ts) against the relay's watch filter it stands for:
// two copies have the same fingerprint exactly when the relay would send no Node Changed between them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Node } from '../../shared/domain/types.js';
import { FingerprintPattern, nodeFingerprint } from '../../shared/nodeFingerprint.js';
import { nodeChangeIsRelevant } from '../../relay/shaping.js';
import * as arb from '../helpers/eventArbitraries.js';

/** One field of `node` changed the way the cluster changes it (or not at all). */
const variant = (node: Node): fc.Arbitrary<Node> =>
  fc.oneof(
    fc.constant({ ...node }),
    fc.constant({ ...node, resourceVersion: `${node.resourceVersion ?? ''}9` }),
    arb.epochMillis.map((at) => ({
      ...node,
      conditions: node.conditions.map((c) => ({ ...c, lastHeartbeatTime: at })),
    })),
    fc.boolean().map((unschedulable) => ({ ...node, unschedulable })),
    fc.array(arb.taint, { maxLength: 3 }).map((taints) => ({ ...node, taints })),
    fc.array(arb.nodeCondition, { maxLength: 3 }).map((conditions) => ({ ...node, conditions })),
    fc.constant({ ...node, labels: Object.fromEntries(Object.entries(node.labels).reverse()) }),
    fc.constant({ ...node, labels: { ...node.labels, 'topology.kubernetes.io/zone': 'moved' } }),
    fc.constant({ ...node, uid: `${node.uid}-again` }),
    fc.constant({ ...node, truncated: ['status.conditions[Ready].message: cut'] }),
    fc.constant({ ...node, creationTimestamp: node.creationTimestamp + 1 }),
  );

describe('nodeFingerprint', () => {
  it('differs exactly when the relay sends a Node Changed (nodeChangeIsRelevant)', () => {
    fc.assert(
      fc.property(
        arb.node.chain((node) => fc.tuple(fc.constant(node), variant(node))),
        ([a, b]) => {
          expect(nodeFingerprint(a) !== nodeFingerprint(b)).toBe(nodeChangeIsRelevant(a, b));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('is six base64url characters, and the same for equal copies built apart', () => {
    fc.assert(
      fc.property(arb.node, (node) => {
        const fingerprint = nodeFingerprint(node);
        expect(fingerprint).toMatch(FingerprintPattern);
        expect(nodeFingerprint(structuredClone(node))).toBe(fingerprint);
      }),
    );
  });

  it('ignores what a heartbeat-only status post changes, and an absent reason is an empty one', () => {
    const node: Node = {
      name: 'n1',
      uid: 'u1',
      resourceVersion: '10',
      creationTimestamp: 1,
      labels: {},
      taints: [],
      unschedulable: false,
      conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: 5, lastTransitionTime: 2 }],
    };
    const posted: Node = {
      ...node,
      resourceVersion: '11',
      conditions: [
        { type: 'Ready', status: 'True', reason: '', lastHeartbeatTime: 305, lastTransitionTime: 2 },
      ],
    };
    expect(nodeFingerprint(posted)).toBe(nodeFingerprint(node));
  });

  it('no value can be forged into another field: the text hashed is a JSON array', () => {
    const base: Node = {
      name: 'n1',
      uid: 'u1',
      creationTimestamp: 1,
      labels: { a: 'b' },
      taints: [],
      unschedulable: false,
      conditions: [],
    };
    expect(nodeFingerprint({ ...base, labels: { 'a","b': '' } })).not.toBe(nodeFingerprint(base));
    expect(nodeFingerprint({ ...base, name: 'n1","u1' })).not.toBe(nodeFingerprint(base));
  });
});
