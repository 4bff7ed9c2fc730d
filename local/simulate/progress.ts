// `nlc simulate`'s progress line: on a terminal, one line on stderr rewritten in place while a run goes
// on (a 5,000-node scenario takes a while), cleared at the end so the output reads as without it.
//
//   simulating 6m40s of 15m (44%) · 12.4s wall · 38,200 events/s
//
// "Events" are the discrete events the simulator fired (kubelet ticks, relay timers, deliveries to the
// functions): what the simulator does, so events/s is its speed. The line is drawn at most every
// `intervalMs` of wall time (4 times a second by default); nothing is written when the stream is not a
// terminal. Wall time is read from the clock given, so tests drive it.
import { formatDuration } from '../../shared/duration.js';
import type { Millis } from '../../shared/domain/types.js';

/** Where the simulator is: virtual time reached and events fired so far. */
export interface SimulationProgress {
  /** Virtual time since the scenario's start. */
  readonly elapsed: Millis;
  /** The scenario's duration. */
  readonly duration: Millis;
  /** Discrete events fired so far. */
  readonly events: number;
}

/** The progress line's text (no control characters). */
export function formatProgress(progress: SimulationProgress, wallMs: Millis): string {
  const share = progress.duration > 0 ? Math.floor((100 * progress.elapsed) / progress.duration) : 100;
  const rate = wallMs > 0 ? Math.round((progress.events * 1000) / wallMs) : 0;
  return (
    `simulating ${formatDuration(progress.elapsed)} of ${formatDuration(progress.duration)} (${share}%)` +
    ` · ${(wallMs / 1000).toFixed(1)}s wall · ${rate.toLocaleString('en-US')} events/s`
  );
}

export interface ProgressStream {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
}

export interface ProgressLine {
  /** Called as the run goes; redraws the line when `intervalMs` has passed since the last drawing. */
  update(progress: SimulationProgress): void;
  /** Clears the line (before other output, and at the end); the next update draws it again. */
  clear(): void;
}

// Carriage return to the line's start, then erase to its end (ECMA-48 EL): the line is rewritten in place.
const RETURN = '\r';
const ERASE_LINE = '\u001b[K';

/**
 * A progress line on `stream` when it is a terminal; otherwise one that writes nothing.
 *
 * @example
 * const line = progressLine(process.stderr, () => performance.now());
 * await runSimulation(scenario, { onProgress: (p) => line.update(p) });
 * line.clear();
 */
export function progressLine(
  stream: ProgressStream,
  wallClock: () => number,
  options: { readonly intervalMs?: Millis } = {},
): ProgressLine {
  if (stream.isTTY !== true) return { update: () => undefined, clear: () => undefined };
  const intervalMs = options.intervalMs ?? 250;
  const started = wallClock();
  let drawnAt: number | undefined;
  let shown = false;
  return {
    update(progress) {
      const now = wallClock();
      if (drawnAt !== undefined && now - drawnAt < intervalMs) return;
      drawnAt = now;
      stream.write(`${RETURN}${formatProgress(progress, now - started)}${ERASE_LINE}`);
      shown = true;
    },
    clear() {
      if (!shown) return;
      stream.write(`${RETURN}${ERASE_LINE}`);
      shown = false;
      // Drawn again at the next update, whatever the interval: the line was just erased.
      drawnAt = undefined;
    },
  };
}
