// The EventSink port: where the relay's events go. In AWS an EventBridge bus
// (shared/adapters/eventbridge/eventSink.ts); locally the local bus, or stdout when no bus is configured;
// in tests a recording fake.
//
// The contract is "never drop silently": publish resolves with what was sent and, for every event that
// was not, a failure naming it. It rejects only for a bug, never for a failed delivery, so a caller
// always learns which events to keep for its next attempt.
import type { OutgoingEvent } from '../events.js';

/** Why one event was not delivered. */
export interface PublishFailure {
  /** Position of the event in the `events` given to publish. */
  readonly index: number;
  readonly event: OutgoingEvent;
  /** The bus's error code (e.g. `ThrottlingException`, `InternalFailure`) or ours (`EntryTooLarge`, …). */
  readonly code: string;
  /** Names the event and says what went wrong. */
  readonly message: string;
  /**
   * True when sending the same event again can never succeed (it is too large, or its detail breaks
   * the contract): report it, do not keep it. False for everything a later attempt may fix
   * (throttling, outages, permissions).
   */
  readonly permanent: boolean;
}

export interface PublishResult {
  /** Events the bus accepted. */
  readonly sent: number;
  /** The events it did not, after the sink's own retries; empty when all were sent. */
  readonly failed: readonly PublishFailure[];
  /** Events the sink sent again after a failure (each re-send counts once). */
  readonly retried: number;
  /** Requests made to the bus (PutEvents calls), retries included. */
  readonly requests: number;
}

export interface PublishOptions {
  /** Aborting stops further requests; the events not yet sent come back as failures (`Aborted`). */
  readonly signal?: AbortSignal;
}

/**
 * Publishes the relay's events.
 *
 * @example
 * const result = await sink.publish([{ detailType: 'Node Changed', detail }], { signal });
 * for (const failure of result.failed) if (!failure.permanent) keepForNextTick(failure.event);
 */
export interface EventSink {
  publish(events: readonly OutgoingEvent[], options?: PublishOptions): Promise<PublishResult>;
}

/**
 * Names an event for logs and failures: "Node Changed node-a (cluster prod)", "Pod Changed shop/web-0
 * (cluster prod)", "Heartbeat Digest sequence 7 part 1/2 (cluster prod)".
 */
export function describeEvent(event: OutgoingEvent): string {
  const { detail } = event;
  const subject =
    'node' in detail
      ? detail.node.name
      : 'pod' in detail
        ? `${detail.pod.namespace}/${detail.pod.name}`
        : `sequence ${detail.sequence} part ${detail.part.index + 1}/${detail.part.count}`;
  return `${event.detailType} ${subject} (cluster ${detail.cluster})`;
}
