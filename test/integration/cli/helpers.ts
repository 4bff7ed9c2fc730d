// Runs `nlc` in process, the way cli/bin.mjs does, with captured output and a chosen environment.
import { main } from '../../../cli/main.js';
import type { CliIo, OutputStream } from '../../../shared/present/output.js';

class Capture implements OutputStream {
  text = '';

  constructor(readonly isTTY: boolean) {}

  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  /** Make stdout and stderr look like a terminal. */
  readonly tty?: boolean;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The wall clock. */
  readonly now?: number;
}

/** `nlc <args>` in process. The environment is only what `env` gives (no NLC_ leaks from the host). */
export async function runCli(args: readonly string[], options: RunOptions = {}): Promise<CliRun> {
  const stdout = new Capture(options.tty === true);
  const stderr = new Capture(options.tty === true);
  const io: CliIo = {
    stdout,
    stderr,
    env: options.env ?? {},
    clock: { now: () => options.now ?? Date.now() },
  };
  const code = await main(args, io);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** The rows of a printed table whose first cell is `first`, split on runs of 2+ spaces. */
export function tableRow(text: string, first: string): string[] | undefined {
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/))
    .find((cells) => cells[0] === first);
}

/** The header cells of the table whose header starts with `first`. */
export function tableHeader(text: string, first: string): string[] | undefined {
  return tableRow(text, first);
}
