// The bounds of what one node or pod can make the controller carry (shared/eventBounds.ts), applied
// in the one mapping the relay and the functions share (shared/adapters/kubernetes/mapping.ts): texts cut
// with a marker, lists cut keeping what the controller reads, and the worst case, every field at or past
// its bound at once, measured against EventBridge's and DynamoDB's limits.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeInstant, encodeNodeObject } from '../../../../shared/adapters/dynamodb/codec.js';
import { encodeHealthRow } from '../../../../shared/adapters/dynamodb/healthRows.js';
import { isTruncatedText, truncateText } from '../../../../shared/adapters/kubernetes/bounds.js';
import { nodeConditionToPatch } from '../../../../shared/adapters/kubernetes/mapping.js';
import { getMatchingTolerations, getMinTolerationTime } from '../../../../shared/domain/tolerations.js';
import type { Node, NodeCondition, Taint, Toleration } from '../../../../shared/domain/types.js';
import {
  MaxConditionMessageBytes,
  MaxConditionReasonBytes,
  MaxNodeConditions,
  MaxNodeTaints,
  MaxPodTolerations,
  MaxTruncationNotes,
  wireBytes,
} from '../../../../shared/eventBounds.js';
import {
  encodeDetail,
  parseNodeChanged,
  parsePodChanged,
  type NodeChanged,
  type OutgoingEvent,
} from '../../../../shared/events.js';
import { nodeChangeIsRelevant, nodeChanged, podChanged } from '../../../../relay/shaping.js';
import {
  DynamoItemLimit,
  entryBytes,
  EventBridgeEntryLimit,
  longConditionType,
  longLabelValue,
  longQualifiedName,
  noisyText,
  oversizedV1Node,
  oversizedV1Pod,
  plainItemBytes,
} from '../../../helpers/oversized.js';
import { mustNode, mustPod, v1Node, v1Pod } from '../../../helpers/kubeObjects.js';

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');
const Marker = /… \[truncated ([\d,]+) bytes\]$/u;
const droppedOf = (text: string) => Number((Marker.exec(text)?.[1] ?? 'NaN').replaceAll(',', ''));

/** A watched node (raw JSON) with these conditions and taints, and its Ready condition first. */
function nodeWith(conditions: readonly object[], taints: readonly object[] = []): Record<string, unknown> {
  return {
    metadata: { name: 'node-a', uid: 'u1', resourceVersion: '7', creationTimestamp: '2026-11-02T08:15:04Z' },
    spec: { taints },
    status: { conditions },
  };
}
const ready = {
  type: 'Ready',
  status: 'True',
  reason: 'KubeletReady',
  message: 'kubelet is posting ready status',
};

describe('truncateText', () => {
  it('leaves a text within its bound as it is', () => {
    expect(truncateText('kubelet is posting ready status', 64)).toBeUndefined();
    expect(truncateText('é'.repeat(32), 64)).toBeUndefined();
  });

  it('cuts a longer one to its bound, on a code point, ending in a marker saying how many bytes went', () => {
    const text = noisyText(204_800);
    const cut = truncateText(text, MaxConditionMessageBytes);
    expect(cut).toBeDefined();
    const result = cut?.text ?? '';
    expect(wireBytes(result)).toBeLessThanOrEqual(MaxConditionMessageBytes);
    const kept = result.replace(Marker, '');
    expect(text.startsWith(kept)).toBe(true);
    expect(droppedOf(result)).toBe(204_800 - utf8(kept));
    expect(cut?.droppedBytes).toBe(204_800 - utf8(kept));
    expect(isTruncatedText(result)).toBe(true);
  });

  it('counts what JSON escapes: a control character is 6 bytes on the wire', () => {
    const cut = truncateText('\u0001'.repeat(1_000), 256)?.text ?? '';
    expect(wireBytes(cut)).toBeLessThanOrEqual(256);
    expect(cut.replace(Marker, '')).toBe(
      '\u0001'.repeat(Math.floor((256 - wireBytes('… [truncated 1,000 bytes]')) / 6)),
    );
  });

  it('for any text and bound: fits, keeps a prefix of whole code points, and counts the dropped bytes exactly', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.oneof(fc.constantFrom('binary', 'grapheme') as fc.Arbitrary<'binary'>),
          maxLength: 3_000,
        }),
        fc.integer({ min: 64, max: 2_048 }),
        (text, max) => {
          const cut = truncateText(text, max);
          if (cut === undefined) {
            expect(wireBytes(text)).toBeLessThanOrEqual(max);
            return;
          }
          expect(wireBytes(cut.text)).toBeLessThanOrEqual(max);
          const kept = cut.text.replace(Marker, '');
          const points = Array.from(kept);
          expect(Array.from(text).slice(0, points.length)).toEqual(points);
          expect(droppedOf(cut.text)).toBe(utf8(text) - utf8(kept));
        },
      ),
    );
  });
});

describe('nodeFromV1 within bounds', () => {
  it('maps a node within every bound exactly as before, with no notes', () => {
    const node = mustNode(v1Node((iso) => iso));
    expect(node.truncated).toBeUndefined();
    expect(node.conditions[0]?.message).toBe('kubelet is posting ready status');
  });

  it('cuts a long message and reason, says which and by how much, and keeps the rest of the condition', () => {
    const message = noisyText(204_800);
    const node = mustNode(
      nodeWith([ready, { type: 'KernelDeadlock', status: 'False', reason: 'x'.repeat(1_000), message }]),
    );
    const deadlock = node.conditions[1];
    expect(deadlock).toMatchObject({ type: 'KernelDeadlock', status: 'False' });
    expect(wireBytes(deadlock?.message ?? '')).toBeLessThanOrEqual(MaxConditionMessageBytes);
    expect(message.startsWith((deadlock?.message ?? '').replace(Marker, ''))).toBe(true);
    expect(wireBytes(deadlock?.reason ?? '')).toBeLessThanOrEqual(MaxConditionReasonBytes);
    expect(node.conditions[0]).toEqual(ready);
    expect(node.truncated).toEqual([
      'status.conditions[KernelDeadlock].reason: 1,000 bytes, truncated to 256',
      'status.conditions[KernelDeadlock].message: 204,800 bytes, truncated to 2,048',
    ]);
  });

  it('keeps the conditions the controller reads when there are too many, in the node’s order', () => {
    const custom = Array.from({ length: 60 }, (_, i) => ({ type: `Custom${i}`, status: 'False' }));
    const node = mustNode(
      nodeWith([
        ...custom,
        { type: 'MemoryPressure', status: 'False' },
        ready,
        { ...ready, status: 'False' },
      ]),
    );
    expect(node.conditions).toHaveLength(MaxNodeConditions);
    expect(node.conditions.slice(-2).map((c) => `${c.type}=${c.status}`)).toEqual([
      'MemoryPressure=False',
      'Ready=True',
    ]);
    expect(node.conditions.slice(0, 30).map((c) => c.type)).toEqual(custom.slice(0, 30).map((c) => c.type));
    expect(node.truncated).toEqual(['status.conditions: dropped 31 of 63 (at most 32 are kept)']);
  });

  it('drops a condition whose type is empty or over metav1.Condition’s 316 bytes', () => {
    const node = mustNode(
      nodeWith([{ type: longConditionType(0, 317), status: 'True' }, { type: '', status: 'True' }, ready]),
    );
    expect(node.conditions).toEqual([ready]);
    expect(node.truncated).toEqual(['status.conditions: dropped 2 whose type is empty or over 316 bytes']);
    expect(mustNode(nodeWith([{ type: longConditionType(0), status: 'True' }])).conditions).toHaveLength(1);
  });

  it('keeps the node controller’s own taints, then NoExecute ones, when there are too many', () => {
    const foreign = Array.from({ length: 500 }, (_, i) => ({
      key: `example.com/t${i}`,
      effect: 'NoSchedule',
    }));
    const node = mustNode(
      nodeWith(
        [ready],
        [
          ...foreign,
          { key: 'example.com/drain', effect: 'NoExecute' },
          { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
          { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
        ],
      ),
    );
    expect(node.taints).toHaveLength(MaxNodeTaints);
    expect(node.taints.slice(0, 61)).toEqual(foreign.slice(0, 61));
    expect(node.taints.slice(-3).map((t) => `${t.key}:${t.effect}`)).toEqual([
      'example.com/drain:NoExecute',
      'node.kubernetes.io/not-ready:NoSchedule',
      'node.kubernetes.io/unreachable:NoExecute',
    ]);
    expect(node.truncated).toEqual(['spec.taints: dropped 439 of 503 (at most 64 are kept)']);
  });

  it('drops what the API server would have refused: a taint key or value over its bounds, a bad label value', () => {
    const node = mustNode({
      ...nodeWith(
        [ready],
        [
          { key: `${longQualifiedName()}x`, effect: 'NoSchedule' },
          { key: 'example.com/a', value: `${longLabelValue()}x`, effect: 'NoSchedule' },
          { key: longQualifiedName(), value: longLabelValue(), effect: 'NoSchedule' },
        ],
      ),
      metadata: {
        name: 'node-a',
        uid: 'u1',
        creationTimestamp: '2026-11-02T08:15:04Z',
        labels: { 'topology.kubernetes.io/zone': 'not a value!', 'kubernetes.io/os': 'linux' },
      },
    });
    expect(node.taints).toEqual([
      { key: longQualifiedName(), value: longLabelValue(), effect: 'NoSchedule' },
    ]);
    expect(node.labels).toEqual({ 'kubernetes.io/os': 'linux' });
    expect(node.truncated).toEqual([
      'metadata.labels[topology.kubernetes.io/zone]: dropped, not a valid label value',
      "spec.taints: dropped 2 whose key or value is over the API's bounds",
    ]);
  });

  it('keeps at most 16 notes, the last one counting the rest', () => {
    const node = mustNode(oversizedV1Node());
    expect(node.truncated).toHaveLength(MaxTruncationNotes);
    expect(node.truncated?.at(-1)).toBe('and 51 more');
  });
});

describe('the largest node and pod the bounds allow', () => {
  const modified = (node: Node): NodeChanged | undefined => {
    // Every NoExecute taint before the change too: the event carries them twice.
    const old = {
      ...node,
      conditions: node.conditions.map((c, i) => (i === 0 ? { ...c, status: 'True' as const } : c)),
    };
    return nodeChanged('c'.repeat(63), old, node);
  };

  it('maps to a Node Changed under EventBridge’s 256 KB, that parses back to itself', () => {
    // 32 conditions, 64 taints (twice), nine 63-character labels and 16 notes: measured 153,742 bytes.
    const node = mustNode(oversizedV1Node());
    expect([node.conditions.length, node.taints.length, Object.keys(node.labels).length]).toEqual([
      32, 64, 9,
    ]);
    const detail = modified(node);
    expect(detail?.oldNoExecuteTaints).toHaveLength(MaxNodeTaints);
    if (detail === undefined) throw new Error('not relevant');
    const bytes = entryBytes({ detailType: 'Node Changed', detail });
    expect(bytes).toBeLessThan(160_000);
    expect(bytes).toBeLessThan(EventBridgeEntryLimit);
    expect(parseNodeChanged(wire({ detailType: 'Node Changed', detail }))).toEqual(detail);
  });

  it('stores in a Nodes item of about half DynamoDB’s 400 KB, with the monitor’s saved conditions', () => {
    // Plain text keeps the most raw bytes in a cut text. Measured: 211,586 bytes.
    const node = mustNode(oversizedV1Node({ plainText: true }));
    const added: NodeCondition[] = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({
      type,
      status: 'Unknown',
      reason: 'NodeStatusNeverUpdated',
      message: 'Kubelet never posted node status.',
      lastHeartbeatTime: node.creationTimestamp,
      lastTransitionTime: 1_800_000_000_123,
    }));
    const health = encodeHealthRow({
      registeredUid: node.uid,
      retry: true,
      evictionStatus: 'toBeEvicted',
      health: {
        probeTimestamp: 1_800_000_000_000.5,
        readyTransitionTimestamp: 1_800_000_000_000,
        status: [...node.conditions, ...added],
        lease: { renewTime: 1_800_000_000_000 },
      },
    });
    expect(health.statusConditions).toHaveLength(36);
    // Every attribute nodeStore.ts and controllerStateStore.ts write, at its longest.
    const item = {
      cluster: 'c'.repeat(63),
      node: node.name,
      object: encodeNodeObject(node),
      resourceVersion: node.resourceVersion,
      resourceVersionNum: 98_765_432_109_876,
      nodeVersion: 123_456,
      zone: 'z'.repeat(130),
      excluded: true,
      nodeUpdatedAt: encodeInstant(1_800_000_000_000),
      nodeUpdatedAtMs: 1_800_000_000_000,
      ...health,
      healthVersion: 123_456,
      healthUpdatedAt: encodeInstant(1_800_000_000_000),
      healthUpdatedAtMs: 1_800_000_000_000,
    };
    const bytes = plainItemBytes(item);
    expect(bytes).toBeGreaterThan(200_000);
    expect(bytes).toBeLessThan(DynamoItemLimit * 0.55);
  });

  it('maps a pod to a Pod Changed under EventBridge’s 256 KB', () => {
    // 128 tolerations of 317-character keys, twice, and every name at its maximum: measured 123,699 bytes.
    const next = mustPod(oversizedV1Pod());
    const old = mustPod(oversizedV1Pod({ seed: 1 }));
    expect(next.tolerations).toHaveLength(MaxPodTolerations);
    const detail = podChanged('c'.repeat(63), { ...old, nodeName: 'x'.repeat(253) }, next);
    if (detail === undefined) throw new Error('not relevant');
    expect(entryBytes({ detailType: 'Pod Changed', detail })).toBeLessThan(130_000);
    expect(parsePodChanged(wire({ detailType: 'Pod Changed', detail }))).toEqual(detail);
  });

  it('for any node past any bound: maps, encodes to a Node Changed within limits, and parses back to itself', () => {
    fc.assert(
      fc.property(
        fc.record({
          conditions: fc.integer({ min: 0, max: 80 }),
          taints: fc.integer({ min: 0, max: 150 }),
          reasonBytes: fc.integer({ min: 0, max: 3_000 }),
          messageBytes: fc.integer({ min: 0, max: 20_000 }),
          plainText: fc.boolean(),
          otherLabels: fc.integer({ min: 0, max: 50 }),
        }),
        (options) => {
          const node = mustNode(oversizedV1Node(options));
          const detail = nodeChanged('prod', undefined, node);
          if (detail === undefined) throw new Error('an add is always relevant');
          expect(entryBytes({ detailType: 'Node Changed', detail })).toBeLessThan(EventBridgeEntryLimit);
          expect(parseNodeChanged(wire({ detailType: 'Node Changed', detail }))).toEqual(detail);
        },
      ),
      { numRuns: 40 },
    );
    // 40 nodes of up to 150 taints and 20 KB messages: about 2.5 s alone, several times that on a
    // loaded machine. A bound against a hang, not a timing assertion.
  }, 60_000);
});

/** A detail as the functions receive it: encoded by the relay, through JSON. */
function wire(event: OutgoingEvent): unknown {
  return JSON.parse(JSON.stringify(encodeDetail(event)));
}

describe('a pod’s tolerations past their bound', () => {
  /** How long the taint eviction controller waits before deleting the pod: 0 now, Infinity never. */
  function evictionDelay(tolerations: readonly Toleration[], taints: readonly Taint[]): number {
    const { allTolerated, used } = getMatchingTolerations(taints, tolerations);
    if (!allTolerated) return 0;
    const min = getMinTolerationTime(used);
    return min < 0 ? Number.POSITIVE_INFINITY : min;
  }

  const podWith = (tolerations: readonly object[]) =>
    mustPod({ metadata: v1Pod().metadata, spec: { nodeName: 'node-a', tolerations } });

  it('are kept as they are within it', () => {
    const tolerations = Array.from({ length: MaxPodTolerations }, (_, i) => ({
      key: `k${i}`,
      operator: 'Exists',
      effect: 'NoSchedule',
    }));
    expect(podWith(tolerations).tolerations).toHaveLength(MaxPodTolerations);
  });

  it('lose first those no NoExecute taint can match, then repeats; then end in a toleration of everything', () => {
    const noSchedule = Array.from({ length: 200 }, (_, i) => ({
      key: `s${i}`,
      operator: 'Exists',
      effect: 'NoSchedule',
    }));
    const repeated = Array.from({ length: 100 }, () => ({
      key: 'r',
      operator: 'Exists',
      effect: 'NoExecute',
    }));
    expect(podWith([...noSchedule, ...repeated]).tolerations).toEqual([
      { key: 'r', operator: 'Exists', effect: 'NoExecute' },
    ]);
    const distinct = Array.from({ length: 200 }, (_, i) => ({
      key: `d${i}`,
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: 60,
    }));
    const bounded = podWith(distinct).tolerations;
    expect(bounded).toHaveLength(MaxPodTolerations);
    expect(bounded.slice(0, -1)).toEqual(distinct.slice(0, MaxPodTolerations - 1));
    expect(bounded.at(-1)).toEqual({ operator: 'Exists' });
  });

  it('never get a pod evicted sooner than its whole list would, whatever the taints', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'node.kubernetes.io/unreachable', longQualifiedName(1));
    const toleration = fc.record(
      {
        key: fc.oneof(key, fc.constant(`${longQualifiedName(2)}x`)),
        operator: fc.constantFrom('Exists', 'Equal', ''),
        value: fc.constantFrom('1', '2', longLabelValue(), `${longLabelValue()}x`),
        effect: fc.constantFrom('NoExecute', 'NoSchedule', ''),
        tolerationSeconds: fc.integer({ min: -5, max: 600 }),
      },
      { requiredKeys: ['key'] },
    );
    const taint = fc.record(
      { key, value: fc.constantFrom('1', '2'), effect: fc.constant('NoExecute' as const) },
      { requiredKeys: ['key', 'effect'] },
    );
    fc.assert(
      fc.property(
        fc.array(toleration, { maxLength: 400 }),
        fc.array(taint, { maxLength: 6 }),
        (raw, taints) => {
          const bounded = podWith(raw).tolerations;
          expect(bounded.length).toBeLessThanOrEqual(MaxPodTolerations);
          expect(evictionDelay(bounded, taints)).toBeGreaterThanOrEqual(evictionDelay(raw, taints));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('cuts a long status.reason and controller kind', () => {
    const pod = mustPod(oversizedV1Pod());
    expect(wireBytes(pod.statusReason ?? '')).toBeLessThanOrEqual(256);
    expect(isTruncatedText(pod.statusReason ?? '')).toBe(true);
    expect(wireBytes(pod.ownerKind ?? '')).toBeLessThanOrEqual(256);
  });
});

describe('the relay’s relevance filter on cut nodes', () => {
  const withMessage = (message: string, taints: readonly object[] = []) =>
    mustNode(nodeWith([{ ...ready, message }], taints));

  it('sees a message that grows past its bound, and one whose cut length changes', () => {
    const long = noisyText(10_000);
    expect(nodeChangeIsRelevant(withMessage('short'), withMessage(long))).toBe(true);
    expect(nodeChangeIsRelevant(withMessage(long), withMessage(`${long}!`))).toBe(true);
  });

  it('does not see a change past the cut that keeps the length: no decision reads a message, and the copy is the same', () => {
    const long = noisyText(10_000);
    const changedTail = `${long.slice(0, -1)}?`;
    expect(withMessage(changedTail)).toEqual(withMessage(long));
    expect(nodeChangeIsRelevant(withMessage(long), withMessage(changedTail))).toBe(false);
  });

  it('sees a node newly over its taint bound, even when the taints it keeps are the same', () => {
    const taints = Array.from({ length: MaxNodeTaints }, (_, i) => ({
      key: `example.com/t${i}`,
      effect: 'NoSchedule',
    }));
    const before = withMessage('ok', taints);
    const after = withMessage('ok', [...taints, { key: 'example.com/one-more', effect: 'NoSchedule' }]);
    expect(after.taints).toEqual(before.taints);
    expect(nodeChangeIsRelevant(before, after)).toBe(true);
  });
});

describe('nodeConditionToPatch', () => {
  it('leaves out a cut message or reason, so a status write keeps the real one on the server', () => {
    const node = mustNode(
      nodeWith([
        {
          ...ready,
          reason: 'r'.repeat(300),
          message: noisyText(5_000),
          lastTransitionTime: '2026-11-02T08:16:00Z',
        },
      ]),
    );
    const [condition] = node.conditions;
    if (condition === undefined) throw new Error('no condition');
    expect(nodeConditionToPatch(condition)).toEqual({
      type: 'Ready',
      status: 'True',
      lastTransitionTime: '2026-11-02T08:16:00Z',
    });
    expect(
      nodeConditionToPatch({
        ...condition,
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
      }),
    ).toEqual({
      type: 'Ready',
      status: 'True',
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
      lastTransitionTime: '2026-11-02T08:16:00Z',
    });
  });
});
