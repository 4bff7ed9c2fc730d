// The EventSink port (shared/ports/eventSink.ts) over Amazon EventBridge PutEvents.
//
// - Batching: one entry per event (putEvents.ts toPutEventsEntries), at most 10 entries and
//   PutEventsMaxBytes per request (batchEntries). An entry no request can carry is reported, named, as
//   a permanent failure (`EntryTooLarge`); so is a detail that breaks the contract (`EncodeError`).
// - Partial failure: PutEvents answers 200 with FailedEntryCount > 0 and an ErrorCode on each failed
//   entry, in request order. Only those entries are sent again (matched by index), never the whole
//   batch, so an event the bus accepted is never sent twice by us.
// - Retries: throttling, internal errors and broken connections, per entry and per request, with
//   capped exponential backoff and equal jitter, up to `retry.maxAttempts` sends of an entry. The SDK's
//   own retries are off on the client built here (maxAttempts 1), so every re-send is ours and counted.
// - Never silent: what is still unsent after the retry budget comes back in `failed`, each failure
//   naming its event, for the caller to keep for its next attempt.
import { setTimeout as sleepTimer } from 'node:timers/promises';
import {
  EventBridgeClient,
  PutEventsCommand,
  type EventBridgeClientConfig,
  type PutEventsRequestEntry,
} from '@aws-sdk/client-eventbridge';
import type { Millis } from '../../domain/types.js';
import { EventEncodeError } from '../../errors.js';
import { RelaySource, type OutgoingEvent } from '../../events.js';
import {
  describeEvent,
  type EventSink,
  type PublishFailure,
  type PublishOptions,
  type PublishResult,
} from '../../ports/eventSink.js';
import { batchEntries, PutEventsMaxBytes, PutEventsMaxEntries, toPutEventsEntries } from './putEvents.js';

export interface SinkRetryPolicy {
  /** Sends of one entry in all, the first included (1 = never retry). */
  readonly maxAttempts: number;
  /** Backoff before the first retry; doubles per retry. */
  readonly baseDelayMs: Millis;
  /** Backoff cap. */
  readonly maxDelayMs: Millis;
}

/** Four sends of an entry over about 0.7 s of backoff: the relay's own queue retries later. */
export const DefaultSinkRetryPolicy: SinkRetryPolicy = Object.freeze({
  maxAttempts: 4,
  baseDelayMs: 100,
  maxDelayMs: 2_000,
});

export interface EventBridgeSinkOptions {
  /** The bus name or ARN (NLC_EVENT_BUS_NAME). */
  readonly busName: string;
  /** `nlc.relay` by default. */
  readonly source?: string;
  /** A client to use as is (its own retry settings apply on top of ours). Built from the rest if absent. */
  readonly client?: EventBridgeClient;
  /** Endpoint override for a local bus (NLC_EVENTBRIDGE_ENDPOINT). */
  readonly endpoint?: string;
  readonly region?: string;
  readonly credentials?: EventBridgeClientConfig['credentials'];
  readonly maxEntries?: number;
  readonly maxBytes?: number;
  readonly retry?: Partial<SinkRetryPolicy>;
  /** PutEvents requests in flight at once (4). */
  readonly concurrency?: number;
  /** Waits between retries; rejects when the signal aborts. Injected so tests do not wait. */
  readonly sleep?: (ms: Millis, signal?: AbortSignal) => Promise<void>;
  /** Jitter source, uniform in [0, 1). */
  readonly random?: () => number;
}

/** Totals since the sink was made, for metrics. */
export interface SinkCounters {
  readonly sent: number;
  readonly failed: number;
  readonly retried: number;
  readonly requests: number;
}

export interface EventBridgeSink extends EventSink {
  readonly counters: SinkCounters;
}

// Entry error codes a later send can fix at once (AWS: "retry the failed entries").
const retryableCodes: ReadonlySet<string> = new Set([
  'ThrottlingException',
  'InternalFailure',
  'InternalException',
  'ServiceUnavailable',
  'ServiceUnavailableException',
]);
// Entry error codes about the entry itself: no send of the same entry can succeed.
const permanentCodes: ReadonlySet<string> = new Set([
  'MalformedDetail',
  'InvalidArgument',
  'ValidationException',
  'EntryTooLarge',
  'EncodeError',
]);

/** What the SDK (or the network under it) threw, as a code and whether to retry at once. */
function classifyThrown(error: unknown): { code: string; message: string; retryable: boolean } {
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: unknown;
    message?: unknown;
    $fault?: unknown;
    $retryable?: unknown;
    $metadata?: { httpStatusCode?: number };
  };
  const code = typeof e.name === 'string' && e.name !== '' ? e.name : 'Error';
  const message = typeof e.message === 'string' ? e.message : String(error);
  const status = e.$metadata?.httpStatusCode;
  // An answer from the service says whose fault it is; anything else (a refused or reset connection,
  // a timeout) never reached it, and is worth another try.
  const answered = e.$fault === 'client' || e.$fault === 'server';
  const retryable =
    retryableCodes.has(code) ||
    e.$retryable !== undefined ||
    !answered ||
    e.$fault === 'server' ||
    status === 429 ||
    (status !== undefined && status >= 500);
  return { code, message, retryable };
}

function backoff(retry: number, policy: SinkRetryPolicy, random: () => number): Millis {
  const capped = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(capped / 2 + (random() * capped) / 2);
}

const abortableSleep = (ms: Millis, signal?: AbortSignal): Promise<void> =>
  sleepTimer(ms, undefined, signal === undefined ? {} : { signal });

interface Pending {
  readonly index: number;
  readonly entry: PutEventsRequestEntry;
  /** Sends so far. */
  attempts: number;
  lastCode?: string;
  lastMessage?: string;
}

/**
 * An EventSink that sends to an EventBridge bus.
 *
 * @example
 * const sink = createEventBridgeSink({ busName: 'nlc-prod', region: 'eu-west-1' });
 * const { failed } = await sink.publish(events);
 */
export function createEventBridgeSink(options: EventBridgeSinkOptions): EventBridgeSink {
  const client =
    options.client ??
    new EventBridgeClient({
      maxAttempts: 1,
      ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
      ...(options.region !== undefined && { region: options.region }),
      ...(options.credentials !== undefined && { credentials: options.credentials }),
    });
  const policy: SinkRetryPolicy = { ...DefaultSinkRetryPolicy, ...options.retry };
  const sleep = options.sleep ?? abortableSleep;
  const random = options.random ?? Math.random;
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const counters = { sent: 0, failed: 0, retried: 0, requests: 0 };

  async function publish(
    events: readonly OutgoingEvent[],
    opts: PublishOptions = {},
  ): Promise<PublishResult> {
    const { signal } = opts;
    // A function, not a narrowed property: the signal can abort while we await.
    const aborted = (): boolean => signal?.aborted === true;
    const failed: PublishFailure[] = [];
    const fail = (index: number, code: string, message: string, permanent: boolean) => {
      const event = events[index];
      if (event !== undefined) failed.push({ index, event, code, message, permanent });
    };
    let sent = 0;
    let retried = 0;
    let requests = 0;

    // Encode each event on its own, so one bad detail fails alone.
    const entries: PutEventsRequestEntry[] = [];
    const indexOf = new Map<PutEventsRequestEntry, number>();
    events.forEach((event, index) => {
      try {
        const [entry] = toPutEventsEntries([event], {
          busName: options.busName,
          source: options.source ?? RelaySource,
        });
        if (entry === undefined) return;
        entries.push(entry);
        indexOf.set(entry, index);
      } catch (error) {
        if (!(error instanceof EventEncodeError)) throw error;
        fail(index, 'EncodeError', `${describeEvent(event)}: ${error.message}`, true);
      }
    });
    const { batches, oversized } = batchEntries(entries, {
      maxEntries: options.maxEntries ?? PutEventsMaxEntries,
      maxBytes: options.maxBytes ?? PutEventsMaxBytes,
    });
    for (const big of oversized) {
      const index = indexOf.get(big.entry) ?? -1;
      const event = events[index];
      if (event !== undefined) {
        fail(
          index,
          'EntryTooLarge',
          `${describeEvent(event)} is ${big.bytes} bytes, over the PutEvents limit`,
          true,
        );
      }
    }

    /** Sends one batch until every entry is accepted, failed for good, or out of attempts. */
    async function sendBatch(batch: readonly PutEventsRequestEntry[]): Promise<void> {
      let pending: Pending[] = batch.map((entry) => ({
        index: indexOf.get(entry) ?? -1,
        entry,
        attempts: 0,
      }));
      for (let round = 1; pending.length > 0; round++) {
        if (aborted()) {
          for (const p of pending)
            fail(p.index, 'Aborted', 'publishing was aborted before it was sent', false);
          return;
        }
        if (round > 1) retried += pending.length;
        for (const p of pending) p.attempts++;
        requests++;
        const retry: Pending[] = [];
        try {
          const out = await client.send(
            new PutEventsCommand({ Entries: pending.map((p) => p.entry) }),
            signal === undefined ? {} : { abortSignal: signal },
          );
          const results = out.Entries ?? [];
          pending.forEach((p, i) => {
            const result = results[i];
            if (result !== undefined && result.ErrorCode === undefined && result.EventId !== undefined) {
              sent++;
              return;
            }
            // No result for the entry at all would break the API's contract: keep it, as not sent.
            const code = result?.ErrorCode ?? 'NoResult';
            p.lastCode = code;
            p.lastMessage = result?.ErrorMessage ?? 'PutEvents returned no result for this entry';
            if (permanentCodes.has(code) || !retryableCodes.has(code)) {
              const event = events[p.index];
              fail(
                p.index,
                code,
                `${event === undefined ? 'event' : describeEvent(event)}: ${p.lastMessage}`,
                permanentCodes.has(code),
              );
            } else {
              retry.push(p);
            }
          });
        } catch (error) {
          if (aborted()) {
            for (const p of pending)
              fail(p.index, 'Aborted', 'publishing was aborted while it was sent', false);
            return;
          }
          const { code, message, retryable } = classifyThrown(error);
          for (const p of pending) {
            p.lastCode = code;
            p.lastMessage = message;
            if (retryable) retry.push(p);
            else {
              const event = events[p.index];
              fail(
                p.index,
                code,
                `${event === undefined ? 'event' : describeEvent(event)}: ${message}`,
                false,
              );
            }
          }
        }
        const exhausted = retry.filter((p) => p.attempts >= policy.maxAttempts);
        for (const p of exhausted) {
          const event = events[p.index];
          fail(
            p.index,
            p.lastCode ?? 'Error',
            `${event === undefined ? 'event' : describeEvent(event)}: ${p.lastMessage ?? 'failed'} (after ${p.attempts} attempts)`,
            false,
          );
        }
        pending = retry.filter((p) => p.attempts < policy.maxAttempts);
        if (pending.length > 0) {
          try {
            await sleep(backoff(round, policy, random), signal);
          } catch {
            for (const p of pending)
              fail(p.index, 'Aborted', 'publishing was aborted while backing off', false);
            return;
          }
        }
      }
    }

    // A few requests in flight at once: a relay's first list can mean thousands of events.
    let next = 0;
    const worker = async () => {
      for (let batch = batches[next++]; batch !== undefined; batch = batches[next++]) await sendBatch(batch);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));

    failed.sort((a, b) => a.index - b.index);
    counters.sent += sent;
    counters.failed += failed.length;
    counters.retried += retried;
    counters.requests += requests;
    return { sent, failed, retried, requests };
  }

  return {
    publish,
    get counters(): SinkCounters {
      return { ...counters };
    },
  };
}
