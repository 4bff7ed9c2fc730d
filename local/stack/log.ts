// Where the local stack's parts log: one stream of JSON lines (Powertools' shape, plus `component`),
// written to a file in the data directory and, with --no-ui, to stdout. The functions already log JSON
// lines through Powertools; serverless-offline's own lines are plain text and are wrapped.
import { createWriteStream, type WriteStream } from 'node:fs';
import type { RelayLogger } from '../../relay/logger.js';

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

const rank: Readonly<Record<LogLevel, number>> = { DEBUG: 0, INFO: 1, WARN: 2, ERROR: 3 };

export interface StackLogger {
  log(level: LogLevel, component: string, message: string, fields?: Readonly<Record<string, unknown>>): void;
}

export const silentStackLogger: StackLogger = { log: () => undefined };

/** One JSON line per record to `out`, from `minLevel` up. */
export function jsonLinesLogger(
  out: { write(chunk: string): unknown },
  minLevel: LogLevel = 'DEBUG',
  now: () => number = Date.now,
): StackLogger {
  return {
    log(level, component, message, fields) {
      if (rank[level] < rank[minLevel]) return;
      out.write(
        `${JSON.stringify({ level, timestamp: new Date(now()).toISOString(), component, message, ...fields })}\n`,
      );
    },
  };
}

/** Every record to each logger. */
export function teeLogger(...loggers: readonly StackLogger[]): StackLogger {
  return {
    log(level, component, message, fields) {
      for (const logger of loggers) logger.log(level, component, message, fields);
    },
  };
}

/** A log file (appended to); `close` flushes it. */
export function fileLogger(path: string): StackLogger & { close(): Promise<void> } {
  const stream: WriteStream = createWriteStream(path, { flags: 'a' });
  const logger = jsonLinesLogger(stream);
  let closed = false;
  return {
    // Parts may still log while the stack stops; after the file is closed those records are dropped.
    log: (...args) => {
      if (!closed) logger.log(...args);
    },
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        stream.end(resolve);
      }),
  };
}

/** The relay's logger interface over a StackLogger. */
export function relayLoggerOf(logger: StackLogger): RelayLogger {
  const at =
    (level: LogLevel) =>
    (message: string, fields?: Readonly<Record<string, unknown>>): void => {
      logger.log(level, 'relay', message, fields);
    };
  return { debug: at('DEBUG'), info: at('INFO'), warn: at('WARN'), error: at('ERROR') };
}

const levels: ReadonlySet<string> = new Set(['DEBUG', 'INFO', 'WARN', 'ERROR']);

// osls logs everything on stderr, its start-up banner ("Starting Offline at stage dev", the endpoints,
// the function names) included: stderr alone says nothing about trouble, the words do.
const Trouble =
  /\b(warn(ing)?|errors?|fail(s|ed|ure)?|exception|deprecated|wrong|cannot|unable|invalid|denied|refused|timed? ?out|uncaught)\b|[✖⚠]/i;

/**
 * A line serverless-offline printed, as a record: the functions' Powertools JSON lines keep their level
 * and fields; the emulator's own text becomes a message (its per-invocation "(λ: fn) RequestId … Duration"
 * lines at DEBUG, lines that speak of trouble at WARN, the rest, its banner included, at INFO).
 */
export function logChildLine(logger: StackLogger, line: string, stream: 'stdout' | 'stderr'): void {
  const text = line.trimEnd();
  if (text === '') return;
  if (text.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        const { level, message, timestamp: _timestamp, ...fields } = parsed as Record<string, unknown>;
        const upper = typeof level === 'string' ? level.toUpperCase() : 'INFO';
        logger.log(
          (levels.has(upper) ? upper : 'INFO') as LogLevel,
          'functions',
          typeof message === 'string' ? message : text,
          fields,
        );
        return;
      }
    } catch {
      // Not JSON after all: logged as text below.
    }
  }
  const level: LogLevel = /^\(λ: /.test(text)
    ? 'DEBUG'
    : stream === 'stderr' && Trouble.test(text)
      ? 'WARN'
      : 'INFO';
  logger.log(level, 'offline', text);
}

/**
 * Every record under `prefix` + its component (`managed:relay`): the local stack's second controller
 * (--managed-controller) logs through the same file without its lines passing for the shadow's.
 */
export function prefixedLogger(logger: StackLogger, prefix: string): StackLogger {
  return {
    log(level, component, message, fields) {
      logger.log(level, `${prefix}${component}`, message, fields);
    },
  };
}
