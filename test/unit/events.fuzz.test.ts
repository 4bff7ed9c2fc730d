// Fuzzing the event schemas (docs/contributing.md#fuzzing): for any input, parsing throws nothing but our
// EventParseError (or Powertools' ParseError through its envelope), and an input made invalid in a known
// field is never accepted, always with a line naming that field. Valid events with fields added anywhere
// still parse to the same values (readers are tolerant, so additive changes keep v1).
import { ParseError, parse } from '@aws-lambda-powertools/parser';
import { EventBridgeEnvelope } from '@aws-lambda-powertools/parser/envelopes/eventbridge';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventParseError } from '../../shared/errors.js';
import {
  encodeDetail,
  HeartbeatDigestDetail,
  HeartbeatDigestDetailType,
  NodeChangedDetail,
  NodeChangedDetailType,
  parseHeartbeatDigest,
  parseNodeChanged,
  parsePodChanged,
  parseRelayEvent,
  parseWireTime,
  PodChangedDetail,
  PodChangedDetailType,
  RelaySource,
  type OutgoingEvent,
} from '../../shared/events.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../shared/wireFormat.js';
import * as arb from '../helpers/eventArbitraries.js';

const runs = { numRuns: 3000 };

const parsers = [
  { name: NodeChangedDetailType, parse: parseNodeChanged, schema: NodeChangedDetail },
  { name: HeartbeatDigestDetailType, parse: parseHeartbeatDigest, schema: HeartbeatDigestDetail },
  { name: PodChangedDetailType, parse: parsePodChanged, schema: PodChangedDetail },
] as const;

/** Runs `fn`; anything thrown must be an EventParseError. True when it returned a value. */
function acceptsOrRejectsCleanly(fn: () => unknown): boolean {
  try {
    fn();
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(EventParseError);
    return false;
  }
}

/** Valid wire details of each type (as JSON would deliver them). */
const validWire: fc.Arbitrary<{ type: OutgoingEvent['detailType']; wire: Record<string, unknown> }> = fc
  .oneof(
    fc
      .record({
        cluster: arb.dnsLabel,
        type: fc.constantFrom('ADDED' as const, 'MODIFIED' as const),
        node: arb.node,
      })
      .map(
        (d) => ({ detailType: NodeChangedDetailType, detail: { schemaVersion: 1 as const, ...d } }) as const,
      ),
    arb.heartbeatDigest(8).map((detail) => ({ detailType: HeartbeatDigestDetailType, detail }) as const),
    fc
      .record(
        {
          cluster: arb.dnsLabel,
          type: fc.constantFrom('ADDED' as const, 'MODIFIED' as const, 'DELETED' as const),
          pod: arb.pod,
          oldReady: fc.constantFrom('True' as const, 'False' as const, 'Unknown' as const),
          oldDeletionTimestamp: fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
          nodeReady: fc.constantFrom('True' as const, 'False' as const, 'Unknown' as const),
        },
        { requiredKeys: ['cluster', 'type', 'pod'] },
      )
      .map(
        (d) => ({ detailType: PodChangedDetailType, detail: { schemaVersion: 1 as const, ...d } }) as const,
      ),
  )
  .map((event: OutgoingEvent) => ({
    type: event.detailType,
    wire: JSON.parse(JSON.stringify(encodeDetail(event))) as Record<string, unknown>,
  }));

const parserFor = (type: OutgoingEvent['detailType']): ((detail: unknown) => unknown) => {
  const found = parsers.find((p) => p.name === type);
  if (found === undefined) throw new Error(type);
  return found.parse;
};

describe('any input', () => {
  it.each(parsers)(
    '$name: any JSON value is parsed or rejected with an EventParseError',
    ({ parse: parseDetail }) => {
      fc.assert(
        fc.property(fc.jsonValue(), (input) => {
          acceptsOrRejectsCleanly(() => parseDetail(input));
        }),
        runs,
      );
    },
  );

  it.each(parsers)(
    '$name: any JavaScript value (not only JSON) is rejected cleanly',
    ({ parse: parseDetail }) => {
      fc.assert(
        fc.property(
          fc.anything({ withBigInt: true, withMap: true, withSet: true, withNullPrototype: true }),
          (input) => {
            acceptsOrRejectsCleanly(() => parseDetail(input));
          },
        ),
        runs,
      );
    },
  );

  it('any JSON object with the right schemaVersion and random fields is parsed or rejected cleanly', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...parsers),
        fc.dictionary(fc.string(), fc.jsonValue()),
        ({ parse: parseDetail }, fields) => {
          acceptsOrRejectsCleanly(() => parseDetail({ ...fields, schemaVersion: 1 }));
        },
      ),
      runs,
    );
  });

  it('any whole event is parsed or rejected cleanly, by our parser and by Powertools with its envelope', () => {
    const envelope = fc.record({
      version: fc.constant('0'),
      id: fc.uuid(),
      'detail-type': fc.constantFrom(
        NodeChangedDetailType,
        HeartbeatDigestDetailType,
        PodChangedDetailType,
        'x',
      ),
      source: fc.constantFrom(RelaySource, 'aws.ec2'),
      account: fc.constant('111122223333'),
      time: fc.constant('2026-11-21T10:00:00Z'),
      region: fc.constant('eu-west-1'),
      resources: fc.constant([]),
      detail: fc.oneof(
        fc.jsonValue(),
        validWire.map(({ wire }) => wire),
      ),
    });
    fc.assert(
      fc.property(fc.oneof(envelope, fc.jsonValue()), fc.constantFrom(...parsers), (event, { schema }) => {
        acceptsOrRejectsCleanly(() => parseRelayEvent(event));
        try {
          parse(event, EventBridgeEnvelope, schema);
        } catch (error) {
          expect(error).toBeInstanceOf(ParseError);
        }
      }),
      runs,
    );
  });

  it('every valid event is accepted, and stays accepted with unknown fields added to its objects', () => {
    fc.assert(
      fc.property(validWire, fc.string(), fc.jsonValue(), ({ type, wire }, key, value) => {
        const parseDetail = parserFor(type);
        const plain = parseDetail(wire);
        // Only fixed-shape objects: a key added to a map (labels, probeAges) would be a new entry.
        if (
          ['schemaVersion', 'cluster', 'type', 'node', 'pod', 'part', 'probeAges', 'sequence'].includes(key)
        )
          return;
        const widened: Record<string, unknown> = { ...wire, [key]: value };
        for (const inner of ['node', 'pod']) {
          const object = wire[inner];
          if (typeof object === 'object' && object !== null && !(key in object)) {
            widened[inner] = { ...object, [key]: value };
          }
        }
        if (['labels', 'conditions', 'taints', 'tolerations', 'name', 'uid', 'nodeName'].includes(key))
          return;
        expect(parseDetail(widened)).toEqual(plain);
      }),
      runs,
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// Inputs made invalid in one known field: always rejected, with a line naming that field.

const notJsonOne = fc.jsonValue().filter((v) => v !== 1);
const notATime = fc.oneof(
  fc.string().filter((s) => parseWireTime(s) === undefined),
  // Near misses: a valid time with one character replaced.
  fc
    .tuple(arb.epochMillis, fc.nat(), fc.constantFrom(...'0123456789:-.TZ+ x'.split('')))
    .map(([ms, i, c]) => {
      const text = new Date(ms).toISOString();
      const at = i % text.length;
      return text.slice(0, at) + c + text.slice(at + 1);
    })
    .filter((s) => parseWireTime(s) === undefined),
  fc.integer(),
  fc.constant(null),
  fc.boolean(),
);
const notANonNegativeInt = fc.oneof(
  fc.integer({ max: -1 }),
  fc.double({ noNaN: true }).filter((d) => !Number.isSafeInteger(d)),
  fc.string(),
  fc.constant(null),
);
const notInEnum = (values: readonly string[]): fc.Arbitrary<unknown> =>
  fc.oneof(
    fc.string().filter((s) => !values.includes(s)),
    fc.integer(),
    fc.constant(null),
  );
const notADnsLabel = fc.oneof(
  fc.string().filter((s) => !isDNS1123Label(s)),
  fc.integer(),
);
const notANodeName = fc.oneof(
  fc.string().filter((s) => s !== '' && !isDNS1123Subdomain(s)),
  fc.integer(),
);

interface Target {
  readonly name: string;
  readonly type: OutgoingEvent['detailType'];
  /** The field as error lines name it. */
  readonly field: string;
  readonly invalid: fc.Arbitrary<unknown>;
  readonly set: (wire: Record<string, unknown>, value: unknown) => Record<string, unknown>;
}

const at = (key: string) => (wire: Record<string, unknown>, value: unknown) => ({ ...wire, [key]: value });
const atIn =
  (outer: string, key: string) =>
  (wire: Record<string, unknown>, value: unknown): Record<string, unknown> => ({
    ...wire,
    [outer]: { ...(wire[outer] as object), [key]: value },
  });
const missing = fc.constant(undefined);

const targets: readonly Target[] = [
  ...parsers.map(({ name }): Target => ({
    name: 'schemaVersion',
    type: name,
    field: 'detail.schemaVersion',
    invalid: notJsonOne,
    set: at('schemaVersion'),
  })),
  ...parsers.map(({ name }): Target => ({
    name: 'cluster',
    type: name,
    field: 'detail.cluster',
    invalid: fc.oneof(notADnsLabel, missing),
    set: at('cluster'),
  })),
  {
    name: 'type',
    type: NodeChangedDetailType,
    field: 'detail.type',
    invalid: notInEnum(['ADDED', 'MODIFIED', 'DELETED']),
    set: at('type'),
  },
  {
    name: 'node',
    type: NodeChangedDetailType,
    field: 'detail.node',
    invalid: fc.oneof(
      missing,
      fc.jsonValue().filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)),
    ),
    set: at('node'),
  },
  {
    name: 'node.name',
    type: NodeChangedDetailType,
    field: 'detail.node.name',
    invalid: fc.oneof(notANodeName, fc.constant('')),
    set: atIn('node', 'name'),
  },
  {
    name: 'node.creationTimestamp',
    type: NodeChangedDetailType,
    field: 'detail.node.creationTimestamp',
    invalid: fc.oneof(notATime, missing),
    set: atIn('node', 'creationTimestamp'),
  },
  {
    name: 'node.unschedulable',
    type: NodeChangedDetailType,
    field: 'detail.node.unschedulable',
    invalid: fc.jsonValue().filter((v) => typeof v !== 'boolean'),
    set: atIn('node', 'unschedulable'),
  },
  {
    name: 'a condition heartbeat',
    type: NodeChangedDetailType,
    field: 'detail.node.conditions[0].lastHeartbeatTime',
    invalid: notATime,
    set: (wire, value) =>
      atIn('node', 'conditions')(wire, [{ type: 'Ready', status: 'True', lastHeartbeatTime: value }]),
  },
  {
    name: 'a condition status',
    type: NodeChangedDetailType,
    field: 'detail.node.conditions[0].status',
    invalid: notInEnum(['True', 'False', 'Unknown']),
    set: (wire, value) => atIn('node', 'conditions')(wire, [{ type: 'Ready', status: value }]),
  },
  {
    name: 'a taint effect',
    type: NodeChangedDetailType,
    field: 'detail.node.taints[0].effect',
    invalid: notInEnum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
    set: (wire, value) => atIn('node', 'taints')(wire, [{ key: 'k', effect: value }]),
  },
  {
    name: 'a taint timeAdded',
    type: NodeChangedDetailType,
    field: 'detail.node.taints[0].timeAdded',
    invalid: notATime,
    set: (wire, value) => atIn('node', 'taints')(wire, [{ key: 'k', effect: 'NoExecute', timeAdded: value }]),
  },
  {
    name: 'relayId',
    type: HeartbeatDigestDetailType,
    field: 'detail.relayId',
    invalid: fc.oneof(fc.constant(''), fc.integer(), missing),
    set: at('relayId'),
  },
  {
    name: 'observedAt',
    type: HeartbeatDigestDetailType,
    field: 'detail.observedAt',
    invalid: fc.oneof(notATime, missing),
    set: at('observedAt'),
  },
  {
    name: 'leaderSince',
    type: HeartbeatDigestDetailType,
    field: 'detail.leaderSince',
    invalid: fc.oneof(notATime, missing),
    set: at('leaderSince'),
  },
  {
    name: 'sequence',
    type: HeartbeatDigestDetailType,
    field: 'detail.sequence',
    invalid: fc.oneof(notANonNegativeInt, missing),
    set: at('sequence'),
  },
  {
    name: 'part index at or past count',
    type: HeartbeatDigestDetailType,
    field: 'detail.part.index',
    invalid: fc
      .integer({ min: 1, max: 5 })
      .chain((count) => fc.record({ index: fc.integer({ min: count, max: 9 }), count: fc.constant(count) })),
    set: at('part'),
  },
  {
    name: 'a probe age',
    type: HeartbeatDigestDetailType,
    field: 'detail.probeAges',
    invalid: notANonNegativeInt,
    set: (wire, value) => ({
      ...wire,
      probeAges: { 'eu-west-1.compute.internal': { 'ip-10-0-1': { '2': value } } },
    }),
  },
  {
    name: 'a probe name level',
    type: HeartbeatDigestDetailType,
    field: 'detail.probeAges',
    invalid: fc.oneof(
      fc
        .string()
        .filter((s) => s !== '' && !isDNS1123Subdomain(s))
        .map((domain) => ({ [domain]: { '': { a: 1 } } })),
      fc
        .string()
        .filter((s) => s !== '' && !/^[a-z0-9][-a-z0-9]*$/.test(s))
        .map((prefix) => ({ '': { [prefix]: { a: 1 } } })),
      fc
        .string()
        .filter((s) => !/^[a-z0-9]{1,253}$/.test(s))
        .map((suffix) => ({ '': { '': { [suffix]: 1 } } })),
      fc.constant({
        ['a'.repeat(63) + '.' + 'b'.repeat(63) + '.' + 'c'.repeat(63) + '.' + 'd'.repeat(61)]: {
          x: { y: 1 },
        },
      }),
    ),
    set: at('probeAges'),
  },
  {
    name: 'pod.namespace',
    type: PodChangedDetailType,
    field: 'detail.pod.namespace',
    invalid: fc.oneof(notADnsLabel, missing),
    set: atIn('pod', 'namespace'),
  },
  {
    name: 'pod.nodeName',
    type: PodChangedDetailType,
    field: 'detail.pod.nodeName',
    invalid: fc.oneof(notANodeName, missing),
    set: atIn('pod', 'nodeName'),
  },
  {
    name: 'pod.deletionTimestamp',
    type: PodChangedDetailType,
    field: 'detail.pod.deletionTimestamp',
    invalid: notATime,
    set: atIn('pod', 'deletionTimestamp'),
  },
  {
    name: 'pod.deletionGracePeriodSeconds',
    type: PodChangedDetailType,
    field: 'detail.pod.deletionGracePeriodSeconds',
    invalid: notANonNegativeInt,
    set: atIn('pod', 'deletionGracePeriodSeconds'),
  },
  {
    name: 'pod.ready',
    type: PodChangedDetailType,
    field: 'detail.pod.ready',
    invalid: notInEnum(['True', 'False', 'Unknown']),
    set: atIn('pod', 'ready'),
  },
  {
    name: 'a toleration operator',
    type: PodChangedDetailType,
    field: 'detail.pod.tolerations[0].operator',
    invalid: notInEnum(['Exists', 'Equal', 'Lt', 'Gt', '']),
    set: (wire, value) => atIn('pod', 'tolerations')(wire, [{ operator: value }]),
  },
  {
    name: 'a toleration seconds',
    type: PodChangedDetailType,
    field: 'detail.pod.tolerations[0].tolerationSeconds',
    invalid: fc.oneof(
      fc.double({ noNaN: true }).filter((d) => !Number.isSafeInteger(d)),
      fc.string(),
    ),
    set: (wire, value) => atIn('pod', 'tolerations')(wire, [{ tolerationSeconds: value }]),
  },
  {
    name: 'oldNodeName',
    type: PodChangedDetailType,
    field: 'detail.oldNodeName',
    invalid: fc.oneof(notANodeName, fc.constant('')),
    set: at('oldNodeName'),
  },
];

describe('inputs invalid in one known field', () => {
  const validOf = (type: OutgoingEvent['detailType']) => validWire.filter((v) => v.type === type);

  it.each(targets)(
    '$type, $name: never accepted, and the error names $field',
    ({ type, field, invalid, set }) => {
      fc.assert(
        fc.property(validOf(type), invalid, ({ wire }, value) => {
          const input = set(wire, value);
          let issues: readonly string[] = [];
          try {
            parserFor(type)(input);
          } catch (error) {
            expect(error).toBeInstanceOf(EventParseError);
            issues = (error as EventParseError).issues;
          }
          expect(issues.some((line) => line.startsWith(field))).toBe(true);
        }),
        { numRuns: 300 },
      );
    },
  );
});
