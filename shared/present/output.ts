// What `nlc` prints: aligned tables for people (kubectl's layout: upper-case headers, columns three
// spaces apart, `-o wide` for more columns), and the full structured data for machines (`-o json`,
// `-o yaml`, stable field names documented per command). Colour only when stdout is a terminal and
// NO_COLOR is unset (https://no-color.org), so pipes, files and CI logs get plain text.
//
// Colour is a tiny SGR helper rather than node:util styleText: styleText checks process.stdout
// itself on Node 22 but not on Node 20, and the CLI writes to the stream it was given (tests pass
// their own), so the decision must be ours and the same on every Node version.
import { z } from 'zod';
import { formatDuration } from '../duration.js';
import type { EpochMillis } from '../domain/types.js';
import type { Clock } from '../ports/clock.js';

/** Where output goes: process.stdout/stderr, or a capturing stream in tests. */
export interface OutputStream {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
}

/** Everything a command touches outside itself (no globals: tests pass their own). */
export interface CliIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The wall clock (the drainer's and taint eviction's clock: queue and pod eviction due times). */
  readonly clock: Clock;
  /**
   * Only in the real process: runs this same command line again in a new Node process with
   * `nodeOptions` added (stdio inherited) and returns its exit code; undefined, running nothing, when
   * the process already has every option named (given on the command line or in NODE_OPTIONS).
   */
  readonly relaunch?: (nodeOptions: readonly string[]) => number | undefined;
}

/**
 * What main.ts hands each command: the io, and the slot its action stores its exit code in (commander
 * ignores what an action returns; commands never call process.exit).
 */
export interface CommandContext {
  readonly io: CliIo;
  exitCode: number;
}

/**
 * `-o` values. Absent: the human table. `wide`: the table with more columns. `json`, `yaml`: the full
 * structured data.
 */
export const OutputFormatSchema = z
  .enum(['json', 'yaml', 'wide'], {
    // The value is echoed (quoted, cut if long): "-o xml" is a typo people want to see next to the list.
    error: (issue) => `${quoted(issue.input)} is not an output format: expected json, yaml or wide`,
  })
  .optional();

/** A value for an error message: JSON-quoted, at most 40 characters of it. */
export function quoted(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value);
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}
export type OutputFormat = z.output<typeof OutputFormatSchema>;

/** The `-o` option as every command declares it. */
export const OUTPUT_FLAGS = '-o, --output <format>';
export const OUTPUT_HELP = 'output format: json, yaml or wide (default: a table)';

// ---------------------------------------------------------------------------------------------------
// Colour

export type Colour = 'red' | 'green' | 'yellow' | 'cyan' | 'dim' | 'bold';

const SGR: Readonly<Record<Colour, readonly [number, number]>> = {
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  dim: [2, 22],
  bold: [1, 22],
};

/** Colour is on when the stream is a terminal and NO_COLOR is unset or empty (no-color.org). */
export function colourEnabled(stream: OutputStream, env: CliIo['env']): boolean {
  return stream.isTTY === true && (env.NO_COLOR ?? '') === '';
}

/** Paints text, or returns it unchanged when colour is off. */
export type Paint = (colour: Colour | undefined, text: string) => string;

export function painter(enabled: boolean): Paint {
  return (colour, text) => {
    if (!enabled || colour === undefined || text === '') return text;
    const [open, close] = SGR[colour];
    return `\u001b[${open}m${text}\u001b[${close}m`;
  };
}

/** The painter for a command's stdout. */
export function stdoutPaint(io: CliIo): Paint {
  return painter(colourEnabled(io.stdout, io.env));
}

// ---------------------------------------------------------------------------------------------------
// Tables

export interface Column<R> {
  readonly header: string;
  readonly value: (row: R) => string;
  /** Numbers are right-aligned. */
  readonly align?: 'left' | 'right';
  readonly colour?: (row: R) => Colour | undefined;
  /** Only with `-o wide`. */
  readonly wide?: boolean;
}

const GAP = '   ';

/** The narrowest a cut last column gets: a table wider than asked rather than a column of stubs. */
const MinLastColumn = 30;

/**
 * Renders rows as an aligned table, one line per row, headers in upper case. Widths are measured on
 * the plain text and colour is applied after padding, so colour never shifts a column. With
 * `maxWidth`, the last column (free text) is cut with "…" so that a line fits, down to 30 characters.
 *
 * @example
 * renderTable([{ header: 'NODE', value: (n) => n.name }], nodes, { wide: false, paint });
 */
export function renderTable<R>(
  columns: readonly Column<R>[],
  rows: readonly R[],
  options: { readonly wide: boolean; readonly paint: Paint; readonly maxWidth?: number },
): string {
  const shown = columns.filter((c) => options.wide || c.wide !== true);
  const cells = rows.map((row) => shown.map((c) => c.value(row)));
  if (options.maxWidth !== undefined && shown.length > 1) {
    const last = shown.length - 1;
    const before = shown
      .slice(0, last)
      .map((c, i) => Math.max(c.header.length, ...cells.map((r) => (r[i] ?? '').length)))
      .reduce((sum, width) => sum + width + GAP.length, 0);
    const room = Math.max(MinLastColumn, options.maxWidth - before);
    for (const row of cells) {
      const text = row[last] ?? '';
      if (text.length > room) row[last] = `${text.slice(0, room - 1)}…`;
    }
  }
  const widths = shown.map((c, i) => Math.max(c.header.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (texts: readonly string[], colours: readonly (Colour | undefined)[]): string =>
    texts
      .map((text, i) => {
        const width = widths[i] ?? 0;
        const last = i === texts.length - 1;
        const padded = shown[i]?.align === 'right' ? text.padStart(width) : last ? text : text.padEnd(width);
        return options.paint(colours[i], padded);
      })
      .join(GAP)
      .trimEnd();
  const header = line(
    shown.map((c) => c.header.toUpperCase()),
    shown.map(() => undefined),
  );
  const body = rows.map((row, r) =>
    line(
      cells[r] ?? [],
      shown.map((c) => c.colour?.(row)),
    ),
  );
  return [header, ...body].join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------------
// Structured output and values

/** JSON (2-space indent) or YAML of plain data. */
export async function renderStructured(data: unknown, format: 'json' | 'yaml'): Promise<string> {
  if (format === 'json') return `${JSON.stringify(data, null, 2)}\n`;
  const { stringify } = await import('./yaml.js');
  return stringify(data, { lineWidth: 0 });
}

/**
 * Writes the command's data: the structured form for `-o json|yaml`, else the human text.
 *
 * @example
 * await writeOutput(io, options.output, data, () => renderStatus(data, options.output === 'wide', paint));
 */
export async function writeOutput(
  io: CliIo,
  format: OutputFormat,
  data: unknown,
  human: () => string,
): Promise<void> {
  io.stdout.write(format === 'json' || format === 'yaml' ? await renderStructured(data, format) : human());
}

/** An instant as ISO 8601 UTC (whole milliseconds), or null. */
export function isoTime(ms: EpochMillis | undefined): string | null {
  return ms === undefined ? null : new Date(Math.floor(ms)).toISOString();
}

/** A duration for people, to the second: "50s", "1m50s"; "-" when unknown. */
export function span(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '-';
  const rounded = Math.round(ms / 1000) * 1000;
  return formatDuration(rounded);
}

/** A number without float noise: 0.1, 0.01, 2, 0.35. */
export function decimal(n: number, digits = 4): string {
  return String(Number(n.toFixed(digits)));
}
