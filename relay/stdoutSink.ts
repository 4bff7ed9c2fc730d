// An EventSink that prints each event as one JSON line, in the shape EventBridge delivers it (source,
// detail-type, detail): what `nlc relay` does when no bus is configured, to watch the relay work.
import type { Writable } from 'node:stream';
import { EventEncodeError } from '../shared/errors.js';
import { encodeDetail, RelaySource } from '../shared/events.js';
import { describeEvent, type EventSink, type PublishFailure } from '../shared/ports/eventSink.js';

/**
 * Prints events to a stream (stdout by default), one JSON object per line.
 *
 * @example
 * const sink = createStdoutSink();
 * // {"source":"nlc.relay","detail-type":"Node Changed","detail":{"schemaVersion":1,…}}
 */
export function createStdoutSink(out: Pick<Writable, 'write'> = process.stdout): EventSink {
  return {
    publish(events) {
      const failed: PublishFailure[] = [];
      let text = '';
      events.forEach((event, index) => {
        try {
          const detail = encodeDetail(event);
          text += `${JSON.stringify({ source: RelaySource, 'detail-type': event.detailType, detail })}\n`;
        } catch (error) {
          if (!(error instanceof EventEncodeError)) throw error;
          failed.push({
            index,
            event,
            code: 'EncodeError',
            message: `${describeEvent(event)}: ${error.message}`,
            permanent: true,
          });
        }
      });
      if (text !== '') out.write(text);
      return Promise.resolve({ sent: events.length - failed.length, failed, retried: 0, requests: 0 });
    },
  };
}
