// Kubernetes objects whose own content is as large as the API server lets a node or pod make it, and
// the sizes the limits are counted in: EventBridge entries and DynamoDB items. Shared by the bounds
// tests (test/unit/adapters/kubernetes/bounds.test.ts) and the fault tests (test/faults/).
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { Buffer } from 'node:buffer';
import { putEventsEntrySize, toPutEventsEntries } from '../../shared/adapters/eventbridge/putEvents.js';
import type { OutgoingEvent } from '../../shared/events.js';

/** EventBridge's entry limit in every partition (1 MB since 2026 in some, 256 KB before). */
export const EventBridgeEntryLimit = 262_144;
/** DynamoDB's item limit. */
export const DynamoItemLimit = 409_600;

/** The size EventBridge counts for the event's PutEvents entry. */
export function entryBytes(event: OutgoingEvent): number {
  const [entry] = toPutEventsEntries([event], { busName: 'bus' });
  if (entry === undefined) throw new Error('no entry');
  return putEventsEntrySize(entry);
}

/**
 * An upper bound of the size DynamoDB counts for an item: attribute names and string values in UTF-8,
 * a number as its digits plus one, booleans and nulls 1 byte, lists and maps 3 bytes plus 1 per element
 * (Amazon DynamoDB Developer Guide, "Item sizes and formats").
 */
export function dynamoItemBytes(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + utf8(name) + valueBytes(value), 0);
}

/** dynamoItemBytes of a plain JavaScript item as the DocumentClient stores it (undefined left out). */
export function plainItemBytes(item: Readonly<Record<string, unknown>>): number {
  return Object.entries(item)
    .filter(([, value]) => value !== undefined)
    .reduce((sum, [name, value]) => sum + utf8(name) + plainValueBytes(value), 0);
}

function plainValueBytes(value: unknown): number {
  if (typeof value === 'string') return utf8(value);
  if (typeof value === 'number') return String(value).length + 1;
  if (typeof value === 'boolean' || value === null) return 1;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + plainValueBytes(v), 0);
  if (typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return 3 + entries.reduce((sum, [k, v]) => sum + 1 + utf8(k) + plainValueBytes(v), 0);
  }
  throw new Error(`cannot size ${typeof value}`);
}

const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return utf8(value.S);
  if (value.N !== undefined) return value.N.length + 1;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + 1 + valueBytes(v), 0);
  if (value.M !== undefined)
    return 3 + Object.entries(value.M).reduce((sum, [k, v]) => sum + 1 + utf8(k) + valueBytes(v), 0);
  if (value.SS !== undefined) return 3 + value.SS.reduce((sum, s) => sum + 1 + utf8(s), 0);
  throw new Error(`unexpected attribute value ${JSON.stringify(value)}`);
}

// ---------------------------------------------------------------------------------------------------
// Texts and names at their limits

/**
 * `bytes` UTF-8 bytes of kernel-log-like text with quotes and control characters (which JSON escapes
 * to up to 6 bytes each), and multi-byte characters unless `ascii`, different for each `seed`.
 * dynalite counts a string's UTF-16 length where DynamoDB counts its UTF-8 bytes: tests of the item
 * limit against dynalite use ASCII, where the two agree.
 */
export function noisyText(bytes: number, seed = 0, ascii = false): string {
  const symbols = ascii ? '-- "etat" ok !!' : '— "état" ✓ 🚨';
  const line = `[${seed}] kernel: task kworker/u16:${seed % 97} blocked for more than 120 s ${symbols}\t\u0001\n`;
  let out = '';
  let size = 0;
  for (const ch of line.repeat(Math.ceil(bytes / utf8(line)))) {
    const n = utf8(ch);
    if (size + n > bytes) break;
    out += ch;
    size += n;
  }
  return out + 'x'.repeat(bytes - size);
}

/** A DNS-1123 subdomain of exactly 253 characters, distinct per `seed`. */
export function longSubdomain(seed = 0): string {
  const head = `s${seed}`;
  const labels = [head.padEnd(63, 'a'), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)];
  return labels.join('.');
}

/** A qualified name (label or taint key) of exactly 317 characters, the API server's maximum. */
export function longQualifiedName(seed = 0): string {
  return `${longSubdomain()}/${`k${seed}`.padEnd(63, 'x')}`;
}

/** A label value of exactly 63 characters, the API server's maximum. */
export function longLabelValue(seed = 0): string {
  return `v${seed}`.padEnd(63, 'z');
}

/** A condition type of `length` characters, distinct per `seed`. */
export function longConditionType(seed: number, length = 316): string {
  return `example.com/Condition${seed}`.padEnd(length, 'T');
}

// ---------------------------------------------------------------------------------------------------
// Objects past every bound

export interface OversizedNodeOptions {
  readonly name?: string;
  /** Conditions of custom types of 316 characters (none of the types the controller reads). */
  readonly conditions?: number;
  /** NoExecute taints with 317-character keys and 63-character values. */
  readonly taints?: number;
  readonly reasonBytes?: number;
  readonly messageBytes?: number;
  /** Text without characters JSON escapes: the most raw bytes a cut text can keep. */
  readonly plainText?: boolean;
  /** Labels the controller does not read, besides its nine (all at 63 characters). */
  readonly otherLabels?: number;
}

/**
 * A node as the API server would return it (plain JSON, as a watch gives it) whose own content is past
 * every bound the mapping sets, by default far past, while everything the API server validates is at
 * its maximum: a 253-character name, label and taint keys of 317 characters, values of 63.
 */
export function oversizedV1Node(options: OversizedNodeOptions = {}) {
  const text = (bytes: number, seed: number) =>
    options.plainText === true ? `${seed}:`.padEnd(bytes, 'm') : noisyText(bytes, seed);
  const controllerLabels = [
    'failure-domain.beta.kubernetes.io/zone',
    'failure-domain.beta.kubernetes.io/region',
    'topology.kubernetes.io/zone',
    'topology.kubernetes.io/region',
    'node.kubernetes.io/exclude-disruption',
    'kubernetes.io/os',
    'kubernetes.io/arch',
    'beta.kubernetes.io/os',
    'beta.kubernetes.io/arch',
  ];
  const labels: Record<string, string> = {};
  controllerLabels.forEach((key, i) => (labels[key] = longLabelValue(i)));
  for (let i = 0; i < (options.otherLabels ?? 1_000); i++) labels[longQualifiedName(i)] = longLabelValue(i);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: options.name ?? longSubdomain(7),
      uid: '5f0c2a0e-8d4b-4f5e-9a51-2d7c9c1e6b3a',
      resourceVersion: '98765432109876',
      creationTimestamp: '2026-11-02T08:15:04Z',
      labels,
    },
    spec: {
      unschedulable: true,
      taints: Array.from({ length: options.taints ?? 80 }, (_, i) => ({
        key: longQualifiedName(i),
        value: longLabelValue(i),
        effect: 'NoExecute',
        timeAdded: '2026-11-21T09:58:13Z',
      })),
    },
    status: {
      conditions: Array.from({ length: options.conditions ?? 40 }, (_, i) => ({
        type: longConditionType(i),
        status: 'False',
        reason: text(options.reasonBytes ?? 1_024, i),
        message: text(options.messageBytes ?? 3_000, i),
        lastHeartbeatTime: '2026-11-21T09:58:12Z',
        lastTransitionTime: '2026-11-02T08:16:00Z',
      })),
    },
  };
}

/**
 * A bound pod whose tolerations and free-text fields are past their bounds, with what the API server
 * validates at its maximum: 317-character keys, 63-character values, a 253-character name.
 */
export function oversizedV1Pod(options: { readonly tolerations?: number; readonly seed?: number } = {}) {
  const seed = options.seed ?? 0;
  return {
    metadata: {
      namespace: 'n'.repeat(63),
      name: longSubdomain(seed),
      uid: '0b6e3c1a-3f2d-4c8e-9b7a-6d5e4f3a2b1c',
      deletionTimestamp: '2026-11-21T10:05:13Z',
      deletionGracePeriodSeconds: 30,
      ownerReferences: [{ kind: noisyText(1_000, 1), controller: true }],
    },
    spec: {
      nodeName: longSubdomain(99),
      tolerations: Array.from({ length: options.tolerations ?? 300 }, (_, i) => ({
        key: longQualifiedName(i),
        operator: 'Equal',
        value: longLabelValue(i + seed),
        effect: 'NoExecute',
        tolerationSeconds: -9_007_199_254_740_991,
      })),
    },
    status: { reason: noisyText(5_000, 2), conditions: [{ type: 'Ready', status: 'Unknown' }] },
  };
}
