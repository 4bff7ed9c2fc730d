// A watch over HTTP: chunked newline-delimited JSON events, the watch timeout, a 410 as an ERROR event
// in a 200 stream, and the faults that cut or stall a stream. The events come from the registry.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultRule, Faults, RequestInfo } from './faults.js';
import type { Registry } from './registry.js';
import { boolParam, intParam, optional } from './requestParams.js';
import { sendError } from './responses.js';
import type { ResourceTarget } from './routing.js';
import { ApiStatusError } from './status.js';
import type { WatchEvent } from './watch.js';

/** What a watch stream needs from the server that serves it. */
export interface WatchServing {
  readonly registry: Registry;
  readonly faults: Faults;
  /** Watches without timeoutSeconds end after this long. */
  readonly defaultWatchTimeoutSeconds: number;
  /** The streams open now (each entry ends one), so closing the server ends them all. */
  readonly openWatches: Set<() => void>;
}

/** Serves a watch request; answers the HTTP status it sent. */
export function serveWatch(
  server: WatchServing,
  req: IncomingMessage,
  res: ServerResponse,
  target: ResourceTarget,
  params: URLSearchParams,
  info: RequestInfo,
  drop: Extract<FaultRule, { kind: 'dropWatch' }> | undefined,
): number {
  const { registry, faults } = server;
  // Mutable state of this stream, in one object: callbacks change it, so no narrowing applies.
  const stream: {
    started: boolean;
    closed: boolean;
    cutting: boolean;
    sent: number;
    buffered: string[];
    stopWatch?: () => void;
    timer?: NodeJS.Timeout;
    untrack?: () => void;
    /** The server ended the watch before the stream started: end it once it has. */
    endAfterStart?: boolean;
  } = { started: false, closed: false, cutting: false, sent: 0, buffered: [] };
  const finish = (mode: 'reset' | 'end') => {
    if (stream.closed) return;
    stream.closed = true;
    stream.stopWatch?.();
    if (stream.timer !== undefined) clearTimeout(stream.timer);
    stream.untrack?.();
    server.openWatches.delete(stopAll);
    if (mode === 'reset') res.destroy();
    else res.end();
  };
  const stopAll = () => {
    finish('end');
  };
  const send = (line: string) => {
    if (stream.closed || stream.cutting) return;
    stream.sent++;
    if (drop !== undefined && stream.sent >= (drop.afterEvents ?? 0)) {
      // Cut once this event is on the wire, so "after N events" means the client got N.
      stream.cutting = true;
      res.write(line, () => {
        finish(drop.mode ?? 'reset');
      });
      return;
    }
    res.write(line);
  };
  const write = (event: WatchEvent) => {
    // A stalled stream drops what it would have sent (faults.ts stallWatches): nothing is replayed. The
    // ERROR a watch ends with (a restore's 410) is sent all the same, as the stream is closed anyway.
    if (event.type !== 'ERROR' && faults.stalled(info)) return;
    const line = `${JSON.stringify(event)}\n`;
    if (stream.started) send(line);
    else stream.buffered.push(line);
  };
  const startStream = () => {
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    res.flushHeaders();
    stream.started = true;
  };

  let timeoutSeconds: number | undefined;
  try {
    timeoutSeconds = intParam(params, 'timeoutSeconds');
    const watch = registry.watch(
      target.def,
      {
        namespace: target.namespace,
        ...optional('labelSelector', params.get('labelSelector')),
        ...optional('fieldSelector', params.get('fieldSelector')),
        ...optional('resourceVersion', params.get('resourceVersion')),
        allowWatchBookmarks: boolParam(params.get('allowWatchBookmarks')),
        sendInitialEvents: boolParam(params.get('sendInitialEvents')),
      },
      write,
      // The server ends it (a restore): the ERROR is written, then the stream closes cleanly.
      () => {
        if (stream.started) finish('end');
        else stream.endAfterStart = true;
      },
    );
    stream.stopWatch = () => {
      watch.stop();
    };
  } catch (error) {
    // A resourceVersion the watch cache no longer has is an ERROR event in a 200 stream, as the
    // cacher's error watcher sends it; bad selectors and parameters are plain HTTP errors.
    if (error instanceof ApiStatusError && error.code === 410) {
      startStream();
      res.end(`${JSON.stringify({ type: 'ERROR', object: error.status })}\n`);
      return 200;
    }
    return sendError(res, error);
  }

  startStream();
  server.openWatches.add(stopAll);
  stream.untrack = faults.trackWatch({
    info,
    close: (mode) => {
      finish(mode);
    },
  });
  req.on('close', stopAll);
  res.on('close', stopAll);
  stream.timer = setTimeout(stopAll, (timeoutSeconds ?? server.defaultWatchTimeoutSeconds) * 1000);
  stream.timer.unref();
  if (drop !== undefined && (drop.afterEvents ?? 0) === 0) {
    finish(drop.mode ?? 'reset');
    return 200;
  }
  for (const line of stream.buffered.splice(0)) send(line);
  if (stream.endAfterStart === true) finish('end');
  return 200;
}
