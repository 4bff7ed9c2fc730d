// `nlc`, the operator CLI: wiring only (STYLE 5.2). Each command lives in cli/commands/<name>.ts with
// its zod options schema and returns its exit code; errors from any of them reach handleError here, the
// one funnel. Nothing in a command calls process.exit: cli/bin.mjs sets process.exitCode from main().
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { systemClock } from '../shared/adapters/clock.js';
import { configCommand } from './commands/config.js';
import { explainCommand } from './commands/explain.js';
import { queueCommand } from './commands/queue.js';
import { relayCommand } from './commands/relay.js';
import { simulateCommand } from './commands/simulate.js';
import { startCommand } from './commands/start.js';
import { statusCommand } from './commands/status.js';
import { handleError } from './errors.js';
import { colourEnabled, type CliIo, type CommandContext } from './output.js';

/** The real terminal, environment and clock. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, clock: systemClock };
}

function packageVersion(): string {
  const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
  const version: unknown = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : '0.0.0';
}

/** The program with every command, its output and errors routed to `io`, exits turned into throws. */
export function buildProgram(ctx: CommandContext): Command {
  const { io } = ctx;
  const program = new Command('nlc')
    .description(
      'operate the serverless node lifecycle controller: read its state tables, explain its decisions, check its settings',
    )
    .version(packageVersion(), '--version')
    .option('--verbose', 'print stack traces with errors')
    .showSuggestionAfterError()
    .addCommand(statusCommand(ctx))
    .addCommand(explainCommand(ctx))
    .addCommand(queueCommand(ctx))
    .addCommand(configCommand(ctx))
    .addCommand(relayCommand(ctx))
    .addCommand(simulateCommand(ctx))
    .addCommand(startCommand(ctx));

  const output = {
    writeOut: (text: string) => void io.stdout.write(text),
    writeErr: (text: string) => void io.stderr.write(text),
    getOutHasColors: () => colourEnabled(io.stdout, io.env),
    getErrHasColors: () => colourEnabled(io.stderr, io.env),
  };
  for (const command of [program, ...program.commands]) {
    command.exitOverride().configureOutput(output);
  }
  return program;
}

/**
 * Runs `nlc` with the arguments after the program name and returns the exit code: 0 on success, 2 for
 * invalid input (naming the field), 1 for any other failure (SCENARIOS.md).
 *
 * @example
 * process.exitCode = await main(process.argv.slice(2));
 */
export async function main(args: readonly string[], io: CliIo = processIo()): Promise<number> {
  const ctx: CommandContext = { io, exitCode: 0 };
  const program = buildProgram(ctx);
  try {
    await program.parseAsync([...args], { from: 'user' });
    return ctx.exitCode;
  } catch (error) {
    const verbose = program.opts<{ verbose?: boolean }>().verbose === true || args.includes('--verbose');
    return handleError(error, io.stderr, { verbose });
  }
}
