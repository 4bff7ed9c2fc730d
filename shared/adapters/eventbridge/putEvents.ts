// PutEvents requests from outgoing events, within EventBridge's limits. Pure: the EventBridge event sink
// (eventSink.ts) sends the batches and retries the failed entries of a partial failure.
import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { encodeDetail, RelaySource, utf8Bytes, type OutgoingEvent } from '../../events.js';

/** PutEvents takes at most 10 entries per request. */
export const PutEventsMaxEntries = 10;
/**
 * Assumed PutEvents limit, in entry-size bytes (below), for one entry and for a whole request. AWS
 * raised the event size from 256 KB to 1 MB on 2026-01-29; we assume the request total is bounded by
 * the same 1 MB, and stay at 1,000,000 bytes so that neither reading of "MB" (10^6 or 2^20) nor of
 * "less than" can put a request over. Set lower (262,144) for a partition without the increase.
 */
export const PutEventsMaxBytes = 1_000_000;

/**
 * The size EventBridge counts for an entry: "If specified, the Time parameter is 14 bytes. The Source
 * and DetailType parameters are the number of bytes for their UTF-8 encoded forms. If specified, the
 * Detail parameter is the number of bytes for its UTF-8 encoded form. If specified, each entry of the
 * Resources parameter is the number of bytes for its UTF-8 encoded forms."
 * (Amazon EventBridge User Guide, "Calculating PutEvents event entry size",
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/calculate-putevents-entry-size.html).
 * EventBusName does not count.
 */
export function putEventsEntrySize(entry: PutEventsRequestEntry): number {
  let size = entry.Time === undefined ? 0 : 14;
  size += utf8Bytes(entry.Source ?? '') + utf8Bytes(entry.DetailType ?? '');
  if (entry.Detail !== undefined) size += utf8Bytes(entry.Detail);
  for (const resource of entry.Resources ?? []) size += utf8Bytes(resource);
  return size;
}

/**
 * One PutEvents entry per event, in order: the detail encoded to its wire form (throws
 * EventEncodeError, naming the field, if the relay built an invalid one). No Time: EventBridge stamps
 * the event on receipt, and the detail carries the times that matter.
 */
export function toPutEventsEntries(
  events: readonly OutgoingEvent[],
  options: { readonly busName: string; readonly source?: string },
): PutEventsRequestEntry[] {
  return events.map((event) => ({
    EventBusName: options.busName,
    Source: options.source ?? RelaySource,
    DetailType: event.detailType,
    Detail: JSON.stringify(encodeDetail(event)),
  }));
}

/** An entry no request can carry. It is reported, never dropped silently. */
export interface OversizedEntry {
  /** Position in the input. */
  readonly index: number;
  readonly entry: PutEventsRequestEntry;
  readonly bytes: number;
  /** Names the entry: detail type and what it is about (node, pod, digest sequence and part). */
  readonly message: string;
}

export interface EntryBatches {
  /** The requests to send, in input order, each within maxEntries and maxBytes. */
  readonly batches: PutEventsRequestEntry[][];
  readonly oversized: readonly OversizedEntry[];
}

/**
 * Groups entries into PutEvents requests, keeping their order: at most `maxEntries` per request and
 * at most `maxBytes` in total (putEventsEntrySize). An entry larger than `maxBytes` on its own is
 * returned in `oversized`, named, for the caller to log and count.
 */
export function batchEntries(
  entries: readonly PutEventsRequestEntry[],
  options: { readonly maxEntries?: number; readonly maxBytes?: number } = {},
): EntryBatches {
  const maxEntries = options.maxEntries ?? PutEventsMaxEntries;
  const maxBytes = options.maxBytes ?? PutEventsMaxBytes;
  const batches: PutEventsRequestEntry[][] = [];
  const oversized: OversizedEntry[] = [];
  let batch: PutEventsRequestEntry[] = [];
  let batchBytes = 0;
  entries.forEach((entry, index) => {
    const bytes = putEventsEntrySize(entry);
    if (bytes > maxBytes) {
      oversized.push({
        index,
        entry,
        bytes,
        message: `${describeEntry(entry)} is ${bytes} bytes, over the ${maxBytes}-byte PutEvents limit`,
      });
      return;
    }
    if (batch.length === maxEntries || batchBytes + bytes > maxBytes) {
      batches.push(batch);
      batch = [];
      batchBytes = 0;
    }
    batch.push(entry);
    batchBytes += bytes;
  });
  if (batch.length > 0) batches.push(batch);
  return { batches, oversized };
}

function field(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** "Pod Changed default/web-0 (cluster prod)", "Heartbeat Digest sequence 7 part 2/3 (cluster prod)". */
function describeEntry(entry: PutEventsRequestEntry): string {
  let detail: unknown;
  try {
    detail = JSON.parse(entry.Detail ?? '{}');
  } catch {
    detail = undefined;
  }
  const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '?');
  const subject =
    field(detail, 'node', 'name') !== undefined
      ? text(field(detail, 'node', 'name'))
      : field(detail, 'pod', 'name') !== undefined
        ? `${text(field(detail, 'pod', 'namespace'))}/${text(field(detail, 'pod', 'name'))}`
        : field(detail, 'sequence') !== undefined
          ? `sequence ${text(field(detail, 'sequence'))} part ${Number(field(detail, 'part', 'index')) + 1}/${text(field(detail, 'part', 'count'))}`
          : undefined;
  const cluster = field(detail, 'cluster');
  return [
    entry.DetailType ?? 'event',
    subject,
    cluster === undefined ? undefined : `(cluster ${text(cluster)})`,
  ]
    .filter((s) => s !== undefined)
    .join(' ');
}
