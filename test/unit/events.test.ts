// shared/events.ts and shared/heartbeatDigest.ts: the event contracts (docs/events.md).
// Wire <-> domain round trips, errors that name the field, schemaVersion handling, Powertools parser
// compatibility, the digest's encoding, order, split and merge, and the documented examples.
import { readFileSync } from 'node:fs';
import { ParseError, parse } from '@aws-lambda-powertools/parser';
import { EventBridgeEnvelope } from '@aws-lambda-powertools/parser/envelopes/eventbridge';
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Node, Pod } from '../../shared/domain/types.js';
import { DigestPartsError, EventEncodeError, EventParseError, NlcError } from '../../shared/errors.js';
import {
  ControllerLabelKeys,
  encodeDetail,
  EventSchemaVersion,
  formatWireTime,
  formatZodIssues,
  HeartbeatDigestDetail,
  HeartbeatDigestDetailType,
  HeartbeatDigestEvent,
  MaxEpochMillis,
  MinEpochMillis,
  NodeChangedDetail,
  NodeChangedDetailType,
  NodeChangedEvent,
  nodeFromWire,
  nodeToWire,
  parseHeartbeatDigest,
  parseNodeChanged,
  parsePodChanged,
  parseRelayEvent,
  parseWireTime,
  PodChangedDetail,
  PodChangedDetailType,
  podFromWire,
  podToWire,
  RelaySource,
  utf8Bytes,
  type HeartbeatDigest,
  type HeartbeatDigestWire,
  type NodeChangedWire,
  type PodChangedWire,
} from '../../shared/events.js';
import {
  DefaultDigestPartMaxBytes,
  heartbeatDigestBytes,
  mergeDigestParts,
  splitDigest,
} from '../../shared/heartbeatDigest.js';
import * as arb from '../helpers/eventArbitraries.js';

const at = (iso: string): number => Date.parse(iso);

/** The JSON examples of docs/events.md, by the event named in the comment above each. */
function docExamples(): Map<string, unknown> {
  const text = readFileSync(new URL('../../docs/events.md', import.meta.url), 'utf8');
  const examples = new Map<string, unknown>();
  for (const m of text.matchAll(/<!-- example: ([\w ]+) -->\n```json\n([\s\S]*?)\n```/g)) {
    examples.set(m[1] ?? '', JSON.parse(m[2] ?? ''));
  }
  return examples;
}
const examples = docExamples();
const example = (name: string): Record<string, unknown> => {
  const value = examples.get(name);
  if (typeof value !== 'object' || value === null)
    throw new Error(`no example for ${name} in docs/events.md`);
  return value as Record<string, unknown>;
};

/** The lines of the EventParseError `fn` throws (fails the test if it throws anything else or nothing). */
function parseIssues(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(EventParseError);
    return (error as EventParseError).issues;
  }
  throw new Error('expected an EventParseError, nothing was thrown');
}

const node1: Node = {
  name: 'ip-10-0-12-7.eu-west-1.compute.internal',
  uid: 'uid-1',
  resourceVersion: '42',
  creationTimestamp: at('2026-11-02T08:15:04Z'),
  labels: { 'topology.kubernetes.io/zone': 'eu-west-1a' },
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason: 'KubeletReady',
      lastHeartbeatTime: at('2026-11-21T09:58:12Z'),
      lastTransitionTime: at('2026-11-02T08:16:00.250Z'),
    },
  ],
  taints: [
    { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: at('2026-11-21T10:00:00Z') },
  ],
  unschedulable: false,
};

const pod1: Pod = {
  namespace: 'shop',
  name: 'checkout-0',
  uid: 'pod-uid-1',
  nodeName: node1.name,
  tolerations: [
    {
      key: 'node.kubernetes.io/unreachable',
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: 300,
    },
  ],
  ownerKind: 'StatefulSet',
  ready: 'True',
};

function digest(probes: Record<string, number>, overrides: Partial<HeartbeatDigest> = {}): HeartbeatDigest {
  const observedAt = overrides.observedAt ?? at('2026-11-21T10:00:00.412Z');
  return {
    schemaVersion: 1,
    cluster: 'prod',
    relayId: 'nlc-relay-a',
    leaderSince: at('2026-11-20T10:00:03.114Z'),
    sequence: 7,
    observedAt,
    observingSince: at('2026-11-20T10:00:01.500Z'),
    part: { index: 0, count: 1 },
    probes: new Map(Object.entries(probes).map(([name, age]) => [name, observedAt - age])),
    ...overrides,
  };
}

const eventBridgeEvent = (
  detailType: string,
  detail: unknown,
  source = RelaySource,
): Record<string, unknown> => ({
  version: '0',
  id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
  'detail-type': detailType,
  source,
  account: '111122223333',
  time: '2026-11-21T10:00:01Z',
  region: 'eu-west-1',
  resources: [],
  detail,
});

describe('contract constants', () => {
  it('uses the source, detail-types and schemaVersion of docs/events.md', () => {
    expect([RelaySource, NodeChangedDetailType, HeartbeatDigestDetailType, PodChangedDetailType]).toEqual([
      'nlc.relay',
      'Node Changed',
      'Heartbeat Digest',
      'Pod Changed',
    ]);
    expect(EventSchemaVersion).toBe(1);
  });

  it('carries exactly the labels the controller reads', () => {
    expect([...ControllerLabelKeys].sort()).toEqual([
      'beta.kubernetes.io/arch',
      'beta.kubernetes.io/os',
      'failure-domain.beta.kubernetes.io/region',
      'failure-domain.beta.kubernetes.io/zone',
      'kubernetes.io/arch',
      'kubernetes.io/os',
      'node.kubernetes.io/exclude-disruption',
      'topology.kubernetes.io/region',
      'topology.kubernetes.io/zone',
    ]);
  });
});

describe('wire times', () => {
  it.each([
    { name: 'UTC, seconds', text: '2026-11-21T10:00:00Z', want: at('2026-11-21T10:00:00.000Z') },
    { name: 'UTC, milliseconds', text: '2026-11-21T10:00:00.412Z', want: at('2026-11-21T10:00:00.412Z') },
    { name: 'one fractional digit', text: '2026-11-21T10:00:00.5Z', want: at('2026-11-21T10:00:00.500Z') },
    { name: 'positive offset', text: '2026-11-21T11:00:00+01:00', want: at('2026-11-21T10:00:00Z') },
    { name: 'negative offset', text: '2026-11-21T05:30:00-04:30', want: at('2026-11-21T10:00:00Z') },
    { name: 'leap day of a leap year', text: '2024-02-29T00:00:00Z', want: at('2024-02-29T00:00:00Z') },
    { name: 'year 0000', text: '0000-01-01T00:00:00Z', want: MinEpochMillis },
    { name: 'year 9999', text: '9999-12-31T23:59:59.999Z', want: MaxEpochMillis },
  ])('accepts $name', ({ text, want }) => {
    expect(parseWireTime(text)).toBe(want);
  });

  it.each([
    { name: 'leap day of a common year', text: '2023-02-29T00:00:00Z' },
    { name: 'April 31st', text: '2026-04-31T00:00:00Z' },
    { name: 'hour 24', text: '2026-11-21T24:00:00Z' },
    { name: 'leap second', text: '2026-12-31T23:59:60Z' },
    { name: 'month 13', text: '2026-13-01T00:00:00Z' },
    { name: 'microseconds', text: '2026-11-21T10:00:00.123456Z' },
    { name: 'no time zone', text: '2026-11-21T10:00:00' },
    { name: 'no seconds', text: '2026-11-21T10:00Z' },
    { name: 'date only', text: '2026-11-21' },
    { name: 'lowercase separator', text: '2026-11-21t10:00:00z' },
    { name: 'offset without colon', text: '2026-11-21T10:00:00+0100' },
    { name: 'offset hour 24', text: '2026-11-21T10:00:00+24:00' },
    { name: 'past year 9999 after the offset', text: '9999-12-31T23:59:59-01:00' },
    { name: 'epoch number as text', text: '1763719200000' },
    { name: 'empty', text: '' },
  ])('rejects $name', ({ text }) => {
    expect(parseWireTime(text)).toBeUndefined();
  });

  it('writes UTC with seconds precision when exact, milliseconds otherwise', () => {
    expect(formatWireTime(at('2026-11-21T10:00:00Z'))).toBe('2026-11-21T10:00:00Z');
    expect(formatWireTime(at('2026-11-21T10:00:00.040Z'))).toBe('2026-11-21T10:00:00.040Z');
  });

  it('round-trips every representable instant', () => {
    fc.assert(
      fc.property(arb.epochMillis, (ms) => {
        expect(parseWireTime(formatWireTime(ms))).toBe(ms);
      }),
    );
  });

  it('reads the same instant whatever the offset it is written in', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: at('1000-01-01T00:00:00Z'), max: at('9000-01-01T00:00:00Z') }),
        fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }),
        (ms, offsetMinutes) => {
          const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, -1);
          const sign = offsetMinutes < 0 ? '-' : '+';
          const abs = Math.abs(offsetMinutes);
          const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
          expect(parseWireTime(`${local}${offset}`)).toBe(ms);
        },
      ),
    );
  });
});

describe('Node and Pod converters', () => {
  it('turns wire times into EpochMillis and back', () => {
    const wire = nodeToWire(node1);
    expect(wire.creationTimestamp).toBe('2026-11-02T08:15:04Z');
    expect(wire.conditions[0]?.lastTransitionTime).toBe('2026-11-02T08:16:00.250Z');
    expect(wire.taints[0]?.timeAdded).toBe('2026-11-21T10:00:00Z');
    expect(nodeFromWire(wire)).toEqual(node1);
    expect(podFromWire(podToWire({ ...pod1, deletionTimestamp: at('2026-11-21T10:05:13Z') }))).toEqual({
      ...pod1,
      deletionTimestamp: at('2026-11-21T10:05:13Z'),
    });
  });

  it('round-trips any node through JSON: nodeFromWire(nodeToWire(n)) equals n', () => {
    fc.assert(
      fc.property(arb.node, (node) => {
        const json: unknown = JSON.parse(JSON.stringify(nodeToWire(node)));
        expect(nodeFromWire(json as ReturnType<typeof nodeToWire>)).toEqual(node);
      }),
    );
  });

  it('round-trips any pod through JSON: podFromWire(podToWire(p)) equals p', () => {
    fc.assert(
      fc.property(arb.pod, (pod) => {
        const json: unknown = JSON.parse(JSON.stringify(podToWire(pod)));
        expect(podFromWire(json as ReturnType<typeof podToWire>)).toEqual(pod);
      }),
    );
  });

  it('normalizes wire times: toWire(fromWire(w)) writes the same instants in UTC', () => {
    const wire = { ...nodeToWire(node1), creationTimestamp: '2026-11-02T09:15:04.000+01:00' };
    expect(nodeToWire(nodeFromWire(wire)).creationTimestamp).toBe('2026-11-02T08:15:04Z');
  });

  it('refuses to encode a domain value the wire cannot carry, naming the field', () => {
    expect(() => nodeToWire({ ...node1, creationTimestamp: 1.5 })).toThrow(EventEncodeError);
    expect(() => nodeToWire({ ...node1, name: 'Not_A_Node' })).toThrow(
      /node\.name: expected a node name \(a DNS-1123 subdomain\), got "Not_A_Node"/,
    );
    expect(() => podToWire({ ...pod1, tolerations: [{ tolerationSeconds: 2 ** 60 }] })).toThrow(
      /pod\.tolerations\[0\]\.tolerationSeconds/,
    );
  });
});

describe('the documented examples (docs/events.md)', () => {
  it.each([
    { name: NodeChangedDetailType, schema: NodeChangedDetail },
    { name: HeartbeatDigestDetailType, schema: HeartbeatDigestDetail },
    { name: PodChangedDetailType, schema: PodChangedDetail },
  ])('$name parses and encodes back to the same JSON', ({ name, schema }) => {
    const wire = example(name);
    const parsed: unknown = schema.parse(wire);
    expect(z.encode(schema as z.ZodType, parsed)).toEqual(wire);
  });

  it('Node Changed decodes to a domain node with epoch-millisecond times', () => {
    const detail = parseNodeChanged(example(NodeChangedDetailType));
    expect(detail.type).toBe('MODIFIED');
    expect(detail.node.creationTimestamp).toBe(at('2026-11-02T08:15:04Z'));
    expect(detail.node.taints[1]).toEqual({
      key: 'node.kubernetes.io/not-ready',
      effect: 'NoExecute',
      timeAdded: at('2026-11-21T09:58:13.250Z'),
    });
  });

  it('Heartbeat Digest decodes ages into relay-clock probe instants per node name', () => {
    const detail = parseHeartbeatDigest(example(HeartbeatDigestDetailType));
    const observedAt = at('2026-11-21T10:00:00.412Z');
    expect(detail.observedAt).toBe(observedAt);
    expect(detail.leaderSince).toBe(at('2026-11-20T10:00:03.114Z'));
    expect(Object.fromEntries(detail.probes)).toEqual({
      'ip-10-0-12-7.eu-west-1.compute.internal': observedAt - 1830,
      'ip-10-0-12-45.eu-west-1.compute.internal': observedAt - 7212,
      'ip-10-0-13-101.eu-west-1.compute.internal': observedAt - 412,
      'gke-prod-pool-1-4f3a2b1c-x7k2': observedAt - 9950,
    });
  });

  it('Pod Changed decodes to a domain pod', () => {
    const detail = parsePodChanged(example(PodChangedDetailType));
    expect(detail.pod.deletionTimestamp).toBe(at('2026-11-21T10:05:13Z'));
    expect(detail.pod.tolerations).toHaveLength(2);
  });
});

describe('errors name the field', () => {
  const nodeWire = example(NodeChangedDetailType) as NodeChangedWire;
  const podWire = example(PodChangedDetailType) as PodChangedWire;
  const digestWire = example(HeartbeatDigestDetailType) as HeartbeatDigestWire;
  const withNode = (patch: Record<string, unknown>): Record<string, unknown> => ({
    ...nodeWire,
    node: { ...nodeWire.node, ...patch },
  });

  it.each([
    {
      name: 'a heartbeat that is not a date',
      parse: parseNodeChanged,
      input: withNode({
        conditions: [
          nodeWire.node.conditions[0],
          { ...nodeWire.node.conditions[1], lastHeartbeatTime: 'yesterday' },
        ],
      }),
      want: ['detail.node.conditions[1].lastHeartbeatTime: expected an ISO 8601 date, got "yesterday"'],
    },
    {
      name: 'a time given as a number',
      parse: parseNodeChanged,
      input: withNode({ creationTimestamp: 1763719200000 }),
      want: ['detail.node.creationTimestamp: expected an ISO 8601 date, got 1763719200000'],
    },
    {
      name: 'an unknown taint effect',
      parse: parseNodeChanged,
      input: withNode({ taints: [{ key: 'k', effect: 'Evict' }] }),
      want: [
        'detail.node.taints[0].effect: Invalid option: expected one of "NoSchedule"|"PreferNoSchedule"|"NoExecute"',
      ],
    },
    {
      name: 'a missing field',
      parse: parseNodeChanged,
      input: withNode({ unschedulable: undefined }),
      want: ['detail.node.unschedulable: expected boolean, received undefined'],
    },
    {
      name: 'a bad label key',
      parse: parseNodeChanged,
      input: withNode({ labels: { 'a b': 'x' } }),
      want: ['detail.node.labels["a b"]: invalid key: expected a label key, got "a b"'],
    },
    {
      name: 'every problem at once',
      parse: parseNodeChanged,
      input: { ...withNode({ uid: '' }), cluster: 'Prod', type: 'UPDATED' },
      want: [
        'detail.cluster: expected a cluster name (a DNS-1123 label), got "Prod"',
        'detail.type: Invalid option: expected one of "ADDED"|"MODIFIED"|"DELETED"',
        'detail.node.uid: Too small: expected string to have >=1 characters',
      ],
    },
    {
      name: 'a negative probe age',
      parse: parseHeartbeatDigest,
      input: {
        ...digestWire,
        probeAges: { 'eu-west-1.compute.internal': { 'ip-10-0-12': { '7': -5 } } },
      },
      want: [
        'detail.probeAges["eu-west-1.compute.internal"]["ip-10-0-12"]["7"]: expected an integer >= 0, got -5',
      ],
    },
    {
      name: 'a probe suffix with a dash (not a canonical split)',
      parse: parseHeartbeatDigest,
      input: { ...digestWire, probeAges: { '': { ip: { '10-0': 1 } } } },
      want: [
        `detail.probeAges[""].ip["10-0"]: invalid key: expected the end of a node name's first label, got "10-0"`,
      ],
    },
    {
      name: 'a "__proto__" name level (JSON.parse keeps it; a record would drop it silently)',
      parse: parseHeartbeatDigest,
      input: { ...digestWire, probeAges: JSON.parse('{"": {"ip": {"__proto__": 1}}}') as unknown },
      want: ['detail.probeAges[""].ip: expected a node name level, got "__proto__"'],
    },
    {
      name: 'a "__proto__" domain (the fuzz test’s counterexample)',
      parse: parseHeartbeatDigest,
      input: { ...digestWire, probeAges: JSON.parse('{"__proto__": {"": {"a": 1}}}') as unknown },
      want: ['detail.probeAges: expected a node name level, got "__proto__"'],
    },
    {
      name: 'a part index past the count',
      parse: parseHeartbeatDigest,
      input: { ...digestWire, part: { index: 2, count: 2 } },
      want: ['detail.part.index: expected an index below count'],
    },
    {
      name: 'a fractional sequence',
      parse: parseHeartbeatDigest,
      input: { ...digestWire, sequence: 1.5 },
      want: ['detail.sequence: expected int, received number'],
    },
    {
      name: 'a pod bound to a bad node name',
      parse: parsePodChanged,
      input: { ...podWire, pod: { ...podWire.pod, nodeName: 'Node 1' } },
      want: ['detail.pod.nodeName: expected a node name or "" (not bound), got "Node 1"'],
    },
    {
      name: 'a detail that is not an object',
      parse: parsePodChanged,
      input: 'hello',
      want: ['detail: expected object, received string'],
    },
  ])('$name', ({ parse: parseDetail, input, want }) => {
    expect(parseIssues(() => parseDetail(input))).toEqual(want);
  });

  it('names the event and lists the problems in the message', () => {
    expect(() => parseHeartbeatDigest({ ...digestWire, sequence: -1 })).toThrow(
      'Invalid Heartbeat Digest (1 problem):\n- detail.sequence: expected an integer >= 0, got -1',
    );
  });

  it('formats any zod error with bracketed keys where a key is not an identifier', () => {
    const result = z
      .object({ a: z.array(z.record(z.string(), z.number())) })
      .safeParse({ a: [{ 'x.y': 'no' }] });
    expect(result.success).toBe(false);
    if (!result.success)
      expect(formatZodIssues(result.error, 'detail')).toEqual([
        'detail.a[0]["x.y"]: expected number, received string',
      ]);
  });
});

describe('schemaVersion', () => {
  it.each([
    {
      name: 'version 2',
      version: 2,
      want: 'unsupported schemaVersion 2: this consumer reads schemaVersion 1',
    },
    {
      name: 'version as a string',
      version: '1',
      want: 'unsupported schemaVersion "1": this consumer reads schemaVersion 1',
    },
    {
      name: 'version 0',
      version: 0,
      want: 'unsupported schemaVersion 0: this consumer reads schemaVersion 1',
    },
    { name: 'no version', version: undefined, want: 'missing: this consumer reads schemaVersion 1' },
  ])('rejects $name with one clear line', ({ version, want }) => {
    for (const [name, parseDetail] of [
      [NodeChangedDetailType, parseNodeChanged],
      [HeartbeatDigestDetailType, parseHeartbeatDigest],
      [PodChangedDetailType, parsePodChanged],
    ] as const) {
      // Only the version line, even though the rest would be valid (or not) under that version.
      expect(parseIssues(() => parseDetail({ ...example(name), schemaVersion: version }))).toEqual([
        `detail.schemaVersion: ${want}`,
      ]);
    }
  });

  it('ignores fields it does not know (additive changes keep v1)', () => {
    const wire = example(NodeChangedDetailType) as NodeChangedWire;
    const detail = parseNodeChanged({ ...wire, addedInV1_1: true, node: { ...wire.node, newField: 'x' } });
    expect(detail).not.toHaveProperty('addedInV1_1');
    expect(detail.node).not.toHaveProperty('newField');
  });
});

describe('Powertools parser compatibility', () => {
  it('parses a detail through the EventBridge envelope into domain values', () => {
    const parsed = parse(
      eventBridgeEvent(HeartbeatDigestDetailType, example(HeartbeatDigestDetailType)),
      EventBridgeEnvelope,
      HeartbeatDigestDetail,
    );
    expect(parsed.probes.size).toBe(4);
    expect(parsed.observedAt).toBe(at('2026-11-21T10:00:00.412Z'));
  });

  it('throws its ParseError with our field-naming message as the cause', () => {
    const bad = { ...example(PodChangedDetailType), schemaVersion: 3 };
    expect(() =>
      parse(eventBridgeEvent(PodChangedDetailType, bad), EventBridgeEnvelope, PodChangedDetail),
    ).toThrow(ParseError);
    expect(() =>
      parse(eventBridgeEvent(PodChangedDetailType, bad), EventBridgeEnvelope, PodChangedDetail),
    ).toThrow(/unsupported schemaVersion 3: this consumer reads schemaVersion 1/);
  });

  it('checks source and detail-type with the whole-event schemas', () => {
    const detail = example(NodeChangedDetailType);
    expect(NodeChangedEvent.safeParse(eventBridgeEvent(NodeChangedDetailType, detail)).success).toBe(true);
    expect(NodeChangedEvent.safeParse(eventBridgeEvent(PodChangedDetailType, detail)).success).toBe(false);
    expect(
      NodeChangedEvent.safeParse(eventBridgeEvent(NodeChangedDetailType, detail, 'aws.ec2')).success,
    ).toBe(false);
  });

  it('routes any relay event by detail-type', () => {
    for (const name of [NodeChangedDetailType, HeartbeatDigestDetailType, PodChangedDetailType]) {
      expect(parseRelayEvent(eventBridgeEvent(name, example(name)))['detail-type']).toBe(name);
    }
    expect(parseIssues(() => parseRelayEvent(eventBridgeEvent('Node Deleted', {})))).toEqual([
      'detail-type: expected "Node Changed", "Heartbeat Digest" or "Pod Changed", got "Node Deleted"',
    ]);
  });

  it('works as middy middleware: the handler receives the decoded digest', async () => {
    const seen: HeartbeatDigest[] = [];
    const handler = middy()
      .use(parser({ schema: HeartbeatDigestEvent }))
      .handler(({ detail }) => {
        seen.push(detail);
        return Promise.resolve();
      });
    const event = eventBridgeEvent(HeartbeatDigestDetailType, example(HeartbeatDigestDetailType));
    await handler(event as never, {} as Context);
    expect(seen[0]?.sequence).toBe(17280);
    await expect(handler({ ...event, detail: { schemaVersion: 2 } } as never, {} as Context)).rejects.toThrow(
      ParseError,
    );
  });
});

describe('Heartbeat Digest encoding', () => {
  it("carries the relay's quiet period as it is, and refuses one that is not a positive whole number of ms", () => {
    const d = digest({ worker1: 5 }, { quietPeriodMs: 15_000 });
    const wire = encodeDetail({ detailType: HeartbeatDigestDetailType, detail: d });
    expect(wire).toMatchObject({ quietPeriodMs: 15_000 });
    expect(parseHeartbeatDigest(wire)).toEqual(d);
    for (const bad of [0, -1, 1.5, '15s', 3_600_001]) {
      const result = HeartbeatDigestDetail.safeParse({ ...(wire as object), quietPeriodMs: bad });
      expect(result.success, String(bad)).toBe(false);
      expect(result.error?.issues.map((i) => i.path.join('.'))).toContain('quietPeriodMs');
    }
  });

  it('groups names by domain, prefix and suffix, with ages before observedAt', () => {
    const d = digest({
      'ip-10-0-1-2.eu-west-1.compute.internal': 10,
      'ip-10-0-1-3.eu-west-1.compute.internal': 0,
      worker1: 5,
      'a--b.local': 7,
    });
    expect(encodeDetail({ detailType: HeartbeatDigestDetailType, detail: d })).toMatchObject({
      observedAt: '2026-11-21T10:00:00.412Z',
      probeAges: {
        'eu-west-1.compute.internal': { 'ip-10-0-1': { '2': 10, '3': 0 } },
        '': { '': { worker1: 5 } },
        local: { 'a-': { b: 7 } },
      },
    });
  });

  it('round-trips any digest, whatever its node names', () => {
    fc.assert(
      fc.property(arb.heartbeatDigest(), (d) => {
        const wire: unknown = JSON.parse(
          JSON.stringify(encodeDetail({ detailType: HeartbeatDigestDetailType, detail: d })),
        );
        expect(parseHeartbeatDigest(wire)).toEqual(d);
      }),
    );
  });

  it('carries names up to the 253-character limit, whatever the length of their first label', () => {
    const longest = `${'a'.repeat(120)}-${'b'.repeat(120)}.${'c'.repeat(11)}`;
    expect(longest).toHaveLength(253);
    const d = digest({ [longest]: 1 });
    const wire = encodeDetail({ detailType: HeartbeatDigestDetailType, detail: d }) as HeartbeatDigestWire;
    expect(parseHeartbeatDigest(wire)).toEqual(d);
    const tooLong = {
      ...wire,
      probeAges: { ['c'.repeat(12)]: { ['a'.repeat(120)]: { ['b'.repeat(120)]: 1 } } },
    };
    expect(parseIssues(() => parseHeartbeatDigest(tooLong))).toEqual([
      expect.stringMatching(
        /^detail\.probeAges\.c+\.a+\.b+: expected a node name of at most 253 characters$/,
      ),
    ]);
    // Without a domain: prefix, dash and the rest.
    const noDomain = (prefix: number, rest: number) => ({
      ...wire,
      probeAges: { '': { ['a'.repeat(prefix)]: { ['b'.repeat(rest)]: 1 } } },
    });
    expect(() => parseHeartbeatDigest(noDomain(126, 126))).not.toThrow();
    expect(parseIssues(() => parseHeartbeatDigest(noDomain(126, 127)))).toEqual([
      expect.stringMatching(
        /^detail\.probeAges\[""\]\.a+\.b+: expected a node name of at most 253 characters$/,
      ),
    ]);
  });

  it('refuses to encode a probe later than observedAt (ages are never negative)', () => {
    expect(() => encodeDetail({ detailType: HeartbeatDigestDetailType, detail: digest({ n1: -1 }) })).toThrow(
      EventEncodeError,
    );
  });

  // Measured sizes are in docs/events.md ("Size", bench/digestSize.ts); this guards the headline number.
  it('keeps a 5,000-node EC2 cluster in one 64 KB billing chunk and one part', () => {
    const probes: Record<string, number> = {};
    for (let i = 0; i < 5000; i++) {
      const ip = (i * 40_503) % 65_536; // distinct addresses spread over a /16
      probes[`ip-10-0-${ip >> 8}-${ip & 255}.eu-west-1.compute.internal`] = (i * 7_919) % 10_000;
    }
    const d = digest(probes);
    const entry = utf8Bytes(RelaySource) + utf8Bytes(HeartbeatDigestDetailType) + heartbeatDigestBytes(d);
    expect(entry).toBeLessThanOrEqual(64 * 1024);
    expect(splitDigest(d, DefaultDigestPartMaxBytes)).toEqual([d]);
  });
});

describe('splitDigest and mergeDigestParts', () => {
  const big = digest(
    Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [`ip-10-0-${i >> 4}-${i & 15}.eu-west-1.compute.internal`, i]),
    ),
  );

  it('splits into parts within maxBytes that share the identity and partition the probes', () => {
    const parts = splitDigest(big, 1000);
    expect(parts.length).toBeGreaterThan(1);
    for (const [index, part] of parts.entries()) {
      expect(heartbeatDigestBytes(part)).toBeLessThanOrEqual(1000);
      expect(part.part).toEqual({ index, count: parts.length });
      expect(part).toMatchObject({
        sequence: big.sequence,
        observedAt: big.observedAt,
        leaderSince: big.leaderSince,
      });
    }
    expect(parts.reduce((n, p) => n + p.probes.size, 0)).toBe(300);
  });

  it('returns a digest that fits as it is', () => {
    expect(splitDigest(big, heartbeatDigestBytes(big))).toEqual([big]);
  });

  it('throws when not even one probe fits', () => {
    expect(() => splitDigest(big, 200)).toThrow(RangeError);
    expect(() => splitDigest({ ...big, part: { index: 0, count: 2 } }, 1000)).toThrow(RangeError);
  });

  it('merges parts in any order, with duplicate deliveries, back into the digest', () => {
    fc.assert(
      fc.property(
        arb.heartbeatDigest(60),
        fc.integer({ min: 400, max: 3000 }),
        fc.array(fc.nat(), { minLength: 200, maxLength: 200 }),
        (d, maxBytes, keys) => {
          fc.pre(d.probes.size > 0);
          const parts = splitDigest(d, maxBytes);
          const delivered = [...parts, ...parts.slice(0, 1)]
            .map((part, i) => ({ part, key: keys[i] ?? i }))
            .sort((a, b) => a.key - b.key)
            .map(({ part }) => part);
          expect(mergeDigestParts(delivered)).toEqual({ kind: 'complete', digest: d });
        },
      ),
      { numRuns: 50 },
    );
  });

  it('reports the missing parts until all have arrived', () => {
    const parts = splitDigest(big, 1000);
    expect(mergeDigestParts(parts.slice(1, 2))).toEqual({
      kind: 'incomplete',
      missing: parts.map((_, i) => i).filter((i) => i !== 1),
    });
  });

  it.each([
    {
      name: 'parts of different digests',
      tweak: (p: HeartbeatDigest) => ({ ...p, sequence: 8 }),
      want: /sequence 8/,
    },
    {
      name: 'parts with different counts',
      tweak: (p: HeartbeatDigest) => ({ ...p, part: { index: p.part.index, count: 99 } }),
      want: /count 99/,
    },
    {
      name: 'two different parts with one index',
      tweak: (p: HeartbeatDigest) => ({
        ...p,
        part: { index: 0, count: p.part.count },
        probes: new Map([['x', 1]]),
      }),
      want: /two different parts with index 0/,
    },
  ])('throws DigestPartsError for $name', ({ tweak, want }) => {
    const parts = splitDigest(big, 1000);
    const last = parts[parts.length - 1];
    if (last === undefined) throw new Error('no parts');
    const mixed = [...parts.slice(0, -1), tweak(last)];
    expect(() => mergeDigestParts(mixed)).toThrow(DigestPartsError);
    expect(() => mergeDigestParts(mixed)).toThrow(want);
  });

  it('throws DigestPartsError when two parts name the same node, or for no parts', () => {
    const a = digest({ n1: 1 }, { part: { index: 0, count: 2 } });
    const b = digest({ n1: 1 }, { part: { index: 1, count: 2 } });
    expect(() => mergeDigestParts([a, b])).toThrow(/node n1 appears in two parts/);
    expect(() => mergeDigestParts([])).toThrow(DigestPartsError);
    expect(new DigestPartsError('x')).toBeInstanceOf(NlcError);
  });
});
