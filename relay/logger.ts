// The logger the relay writes through: the shape of Powertools' Logger (relay/main.ts passes one), so
// messages are constant strings and data goes in keys (docs/contributing.md#logging-and-metrics).
export interface RelayLogger {
  debug(message: string, fields?: Readonly<Record<string, unknown>>): void;
  info(message: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(message: string, fields?: Readonly<Record<string, unknown>>): void;
  error(message: string, fields?: Readonly<Record<string, unknown>>): void;
}

/** Discards everything (tests, benchmarks). */
export const silentLogger: RelayLogger = Object.freeze({
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
});
