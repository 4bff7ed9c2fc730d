// `nlc simulate SCENARIO --report out.html`: a run as one self-contained HTML page (docs/simulate.md
// "The HTML report"). recordReport collects, through the simulator's hooks, what the timeline records
// leave out (every node's Ready status, the decisions); renderReport draws the page; writeReport writes
// it, with an error that names the file.
import { access, constants, stat, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { NlcError } from '../../../shared/errors.js';
import type { SimulationOptions, SimulationResult } from '../simulation.js';
import { buildReportModel, type ReadyChange, type ReportRun, type TimedDecision } from './model.js';
import { renderReportPage } from './page.js';

export { buildReportModel, naturalCompare } from './model.js';
export type { ReportModel, ReportRun } from './model.js';
export { Geometry } from './timelineSvg.js';

/** The report could not be written (exit 1); the message names the file and the reason. */
export class ReportWriteError extends NlcError {
  readonly file: string;

  constructor(file: string, problem: string, options?: ErrorOptions) {
    super(`cannot write the report to ${JSON.stringify(file)}: ${problem}`, options);
    this.file = file;
  }
}

export interface ReportRecorder {
  /** The simulator options that feed the report. */
  readonly hooks: Required<Pick<SimulationOptions, 'onDecision' | 'onNodeReady'>>;
  /** What was recorded so far. */
  readonly readyChanges: readonly ReadyChange[];
  readonly decisions: readonly TimedDecision[];
}

/**
 * Collects, while a simulation runs, what the report draws besides the timeline records.
 *
 * @example
 * const recorder = recordReport();
 * const result = await runSimulation(scenario, { ...recorder.hooks });
 * const html = renderReport(scenario, result, recorder);
 */
export function recordReport(): ReportRecorder {
  const readyChanges: ReadyChange[] = [];
  const decisions: TimedDecision[] = [];
  return {
    hooks: {
      onNodeReady: (t, node, ready, cluster) => {
        readyChanges.push({ t, node, ready, ...(cluster !== undefined && { cluster }) });
      },
      onDecision: (t, decision, cluster) => {
        decisions.push({ t, decision, ...(cluster !== undefined && { cluster }) });
      },
    },
    readyChanges,
    decisions,
  };
}

/** The report's HTML for a finished run: the same run gives the same bytes. */
export function renderReport(
  scenario: ReportRun['scenario'],
  result: Pick<SimulationResult, 'lines'>,
  recorded: Pick<ReportRecorder, 'readyChanges' | 'decisions'>,
): string {
  const model = buildReportModel({
    scenario,
    lines: result.lines,
    readyChanges: recorded.readyChanges,
    decisions: recorded.decisions,
  });
  return renderReportPage(model, result.lines);
}

function problemOf(error: unknown): string {
  const code: unknown = error instanceof Error ? Reflect.get(error, 'code') : undefined;
  switch (code) {
    case 'ENOENT':
      return 'no such directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    case 'EROFS':
      return 'read-only file system';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Checks, before a long run, that `file` can be written: its directory exists and is writable, and it
 * is not a directory or a read-only file. Throws ReportWriteError otherwise.
 */
export async function checkReportFile(file: string): Promise<void> {
  const path = resolve(file);
  try {
    const existing = await stat(path).catch((error: unknown) => {
      if (error instanceof Error && Reflect.get(error, 'code') === 'ENOENT') return undefined;
      throw error;
    });
    if (existing?.isDirectory() === true) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
    await access(existing === undefined ? dirname(path) : path, constants.W_OK);
    if (existing === undefined && !(await stat(dirname(path))).isDirectory()) {
      throw Object.assign(new Error('ENOTDIR'), { code: 'ENOTDIR' });
    }
  } catch (error) {
    throw new ReportWriteError(file, problemOf(error), { cause: error });
  }
}

/** Writes the report; a failure is a ReportWriteError naming the file. */
export async function writeReport(file: string, html: string): Promise<void> {
  try {
    await writeFile(file, html, 'utf8');
  } catch (error) {
    throw new ReportWriteError(file, problemOf(error), { cause: error });
  }
}
