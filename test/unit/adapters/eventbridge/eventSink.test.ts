// shared/adapters/eventbridge/eventSink.ts: PutEvents in batches within EventBridge's limits, partial
// failures re-sent by index and only once per failure, throttling retried with backoff, and nothing
// dropped silently. aws-sdk-client-mock injects the faults (a local bus cannot answer a partial
// failure on demand); no request leaves the process.
import {
  AccessDeniedException,
  EventBridgeClient,
  PutEventsCommand,
  ThrottlingException,
  type PutEventsRequestEntry,
  type PutEventsResultEntry,
} from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createEventBridgeSink } from '../../../../shared/adapters/eventbridge/eventSink.js';
import type { Node } from '../../../../shared/domain/types.js';
import type { OutgoingEvent } from '../../../../shared/events.js';

const t0 = Date.parse('2026-01-29T09:00:00Z');
const eventBridge = mockClient(EventBridgeClient);

afterEach(() => {
  eventBridge.reset();
});
afterAll(() => {
  eventBridge.restore();
});

function node(name: string): Node {
  return {
    name,
    uid: `${name}-uid`,
    creationTimestamp: t0,
    labels: {},
    conditions: [],
    taints: [],
    unschedulable: false,
  };
}

function nodeEvent(name: string, cluster = 'prod'): OutgoingEvent {
  return {
    detailType: 'Node Changed',
    detail: { schemaVersion: 1, cluster, type: 'ADDED', node: node(name) },
  };
}

function digestEvent(nodes: number): OutgoingEvent {
  return {
    detailType: 'Heartbeat Digest',
    detail: {
      schemaVersion: 1,
      cluster: 'prod',
      relayId: 'relay-0',
      leaderSince: t0,
      observingSince: t0,
      sequence: 7,
      observedAt: t0 + 60_000,
      part: { index: 0, count: 1 },
      probes: new Map(
        Array.from({ length: nodes }, (_, i) => [
          `ip-10-0-${i >> 8}-${i & 255}.eu-west-1.compute.internal`,
          t0 + i,
        ]),
      ),
    },
  };
}

/** The node names of the entries a PutEvents call carried, in order. */
function names(entries: readonly PutEventsRequestEntry[] | undefined): string[] {
  return (entries ?? []).map(
    (entry) => (JSON.parse(entry.Detail ?? '{}') as { node?: { name: string } }).node?.name ?? '?',
  );
}

function calls(): PutEventsRequestEntry[][] {
  return eventBridge.commandCalls(PutEventsCommand).map((call) => call.args[0].input.Entries ?? []);
}

const ok = (n: number): PutEventsResultEntry[] =>
  Array.from({ length: n }, (_, i) => ({ EventId: `id-${i}` }));

/** A sink over a client the mock answers, with recorded, instant backoffs and no jitter. */
function sink(options: Partial<Parameters<typeof createEventBridgeSink>[0]> = {}) {
  const sleeps: number[] = [];
  const client = new EventBridgeClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  const created = createEventBridgeSink({
    busName: 'nlc-prod',
    client,
    concurrency: 1,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    random: () => 0,
    ...options,
  });
  return { sink: created, sleeps };
}

describe('batching', () => {
  it('sends at most 10 entries per PutEvents, to the bus, from nlc.relay, every event once', async () => {
    eventBridge.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ({
      FailedEntryCount: 0,
      Entries: ok(input.Entries.length),
    }));
    const events = Array.from({ length: 25 }, (_, i) => nodeEvent(`node-${i}`));
    const result = await sink().sink.publish(events);

    expect(result).toEqual({ sent: 25, failed: [], retried: 0, requests: 3 });
    expect(calls().map((entries) => entries.length)).toEqual([10, 10, 5]);
    expect(calls().flatMap(names)).toEqual(events.map((_, i) => `node-${i}`));
    expect(calls()[0]?.[0]).toMatchObject({
      EventBusName: 'nlc-prod',
      Source: 'nlc.relay',
      DetailType: 'Node Changed',
    });
  });
});

describe('a partial failure', () => {
  it('re-sends only the failed entries, matched by index, exactly once each', async () => {
    eventBridge
      .on(PutEventsCommand)
      .resolvesOnce({
        FailedEntryCount: 2,
        Entries: ok(10).map((entry, i) =>
          i === 3
            ? { ErrorCode: 'InternalFailure', ErrorMessage: 'Internal error' }
            : i === 7
              ? { ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' }
              : entry,
        ),
      })
      .callsFake((input: { Entries: unknown[] }) => ({
        FailedEntryCount: 0,
        Entries: ok(input.Entries.length),
      }));
    const { sink: s, sleeps } = sink();
    const events = Array.from({ length: 12 }, (_, i) => nodeEvent(`node-${i}`));
    const result = await s.publish(events);

    expect(result).toEqual({ sent: 12, failed: [], retried: 2, requests: 3 });
    expect(calls().map(names)).toEqual([
      events.slice(0, 10).map((_, i) => `node-${i}`),
      ['node-3', 'node-7'], // the retry: the failed entries only, before the next batch
      ['node-10', 'node-11'],
    ]);
    expect(sleeps).toEqual([50]); // half of the 100 ms base (equal jitter, random 0)
    expect(s.counters).toEqual({ sent: 12, failed: 0, retried: 2, requests: 3 });
  });

  it('gives up after the retry budget and returns the failures, each naming its event: never silent', async () => {
    eventBridge.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ({
      FailedEntryCount: 1,
      Entries: ok(input.Entries.length).map((entry, i) =>
        i === 0 ? { ErrorCode: 'InternalFailure', ErrorMessage: 'Internal error' } : entry,
      ),
    }));
    const { sink: s, sleeps } = sink({ retry: { maxAttempts: 3 } });
    const result = await s.publish([nodeEvent('node-a'), nodeEvent('node-b')]);

    expect(result.sent).toBe(1);
    expect(result.failed).toEqual([
      expect.objectContaining({
        index: 0,
        code: 'InternalFailure',
        permanent: false,
        message: 'Node Changed node-a (cluster prod): Internal error (after 3 attempts)',
      }),
    ]);
    expect(calls().map(names)).toEqual([['node-a', 'node-b'], ['node-a'], ['node-a']]);
    expect(sleeps).toEqual([50, 100]);
  });

  it('does not retry an entry error about the entry itself; it comes back as permanent', async () => {
    eventBridge.on(PutEventsCommand).resolves({
      FailedEntryCount: 1,
      Entries: [{ EventId: 'a' }, { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' }],
    });
    const result = await sink().sink.publish([nodeEvent('node-a'), nodeEvent('node-b')]);

    expect(result.failed).toEqual([
      expect.objectContaining({ index: 1, code: 'MalformedDetail', permanent: true }),
    ]);
    expect(calls()).toHaveLength(1);
  });
});

describe('a failed request', () => {
  it('is retried when throttled, with capped exponential backoff, then succeeds', async () => {
    const throttled = new ThrottlingException({
      message: 'Rate exceeded',
      $metadata: { httpStatusCode: 400 },
    });
    eventBridge
      .on(PutEventsCommand)
      .rejectsOnce(throttled)
      .rejectsOnce(throttled)
      .rejectsOnce(throttled)
      .resolves({ FailedEntryCount: 0, Entries: ok(2) });
    const { sink: s, sleeps } = sink({ retry: { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 300 } });
    const result = await s.publish([nodeEvent('node-a'), nodeEvent('node-b')]);

    expect(result).toEqual({ sent: 2, failed: [], retried: 6, requests: 4 });
    expect(sleeps).toEqual([50, 100, 150]); // 100, 200, then capped at 300; half of each with random 0
  });

  it('is retried when the connection fails, but not when access is denied (kept for later, not permanent)', async () => {
    eventBridge
      .on(PutEventsCommand)
      .rejectsOnce(Object.assign(new Error('socket hang up'), { name: 'Error', code: 'ECONNRESET' }))
      .resolvesOnce({ FailedEntryCount: 0, Entries: ok(1) })
      .rejects(
        new AccessDeniedException({
          message: 'not authorized to perform: events:PutEvents',
          $metadata: { httpStatusCode: 400 },
        }),
      );
    const { sink: s } = sink();
    expect(await s.publish([nodeEvent('node-a')])).toMatchObject({ sent: 1, failed: [], requests: 2 });

    const denied = await s.publish([nodeEvent('node-b')]);
    expect(denied.failed).toEqual([
      expect.objectContaining({ index: 0, code: 'AccessDeniedException', permanent: false }),
    ]);
    expect(denied.requests).toBe(1);
  });

  it('stops when aborted: what was not sent comes back as Aborted, to keep', async () => {
    eventBridge
      .on(PutEventsCommand)
      .rejects(new ThrottlingException({ message: 'Rate exceeded', $metadata: {} }));
    const abort = new AbortController();
    const { sink: s } = sink({
      sleep: (_ms, signal) => {
        abort.abort();
        return Promise.reject(signal?.reason as Error);
      },
    });
    const result = await s.publish([nodeEvent('node-a')], { signal: abort.signal });
    expect(result.failed).toEqual([expect.objectContaining({ index: 0, code: 'Aborted', permanent: false })]);
  });
});

describe('entries no request can carry', () => {
  it('are reported as permanent failures, named (too large, or breaking the contract); the rest is sent', async () => {
    eventBridge.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ({
      FailedEntryCount: 0,
      Entries: ok(input.Entries.length),
    }));
    const { sink: s } = sink({ maxBytes: 10_000 });
    const result = await s.publish([
      nodeEvent('node-a'),
      digestEvent(2_000),
      nodeEvent('node-b', 'Not_A_Label'),
    ]);

    expect(result.sent).toBe(1);
    expect(result.failed).toEqual([
      expect.objectContaining({
        index: 1,
        code: 'EntryTooLarge',
        permanent: true,
        message: expect.stringMatching(
          /^Heartbeat Digest sequence 7 part 1\/1 \(cluster prod\) is \d+ bytes/,
        ) as string,
      }),
      expect.objectContaining({
        index: 2,
        code: 'EncodeError',
        permanent: true,
        message: expect.stringContaining('detail.cluster') as string,
      }),
    ]);
    expect(calls().map(names)).toEqual([['node-a']]);
  });
});
