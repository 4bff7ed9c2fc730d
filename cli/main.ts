// `nlc`, the operator CLI: wiring only. Each command lives in cli/commands/<name>.ts with its zod options
// schema and returns its exit code; errors from any of them reach handleError here, the one funnel.
// Nothing in a command calls process.exit: cli/bin.mjs sets process.exitCode from main().
//
// Commands load lazily: only the module of the command being run is imported (its help included), so
// `nlc --help` or `nlc config` never load the AWS SDK, the Kubernetes client or the simulator that other
// commands need. `nlc --help` lists the commands from the summaries below.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { systemClock } from '../shared/adapters/clock.js';
import { handleError } from './errors.js';
import { colourEnabled, type CliIo, type CommandContext } from '../shared/present/output.js';

/** The real terminal, environment and clock. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    clock: systemClock,
    relaunch: relaunchWith,
  };
}

/**
 * The Node arguments that run this command line again with those of `nodeOptions` it lacks added, or
 * undefined when the process already has every option named (on its command line or in NODE_OPTIONS).
 *
 * @example
 * relaunchArgs(['--max-old-space-size=900'], { execArgv: [], nodeOptions: '', argv: ['node', 'cli/bin.mjs', 'simulate', 'x.yaml'] })
 * // ['--max-old-space-size=900', 'cli/bin.mjs', 'simulate', 'x.yaml']
 */
export function relaunchArgs(
  nodeOptions: readonly string[],
  current: {
    readonly execArgv: readonly string[];
    readonly nodeOptions: string;
    readonly argv: readonly string[];
  },
): string[] | undefined {
  const named = (option: string): string => option.split('=')[0] ?? option;
  const given = new Set([...current.execArgv, ...current.nodeOptions.split(/\s+/)].map(named));
  // An option the user gave wins: only the others are added (the command line would override NODE_OPTIONS).
  const missing = nodeOptions.filter((o) => !given.has(named(o)));
  const script = current.argv[1];
  if (script === undefined || missing.length === 0) return undefined;
  return [...missing, ...current.execArgv, script, ...current.argv.slice(2)];
}

function relaunchWith(nodeOptions: readonly string[]): number | undefined {
  const args = relaunchArgs(nodeOptions, {
    execArgv: process.execArgv,
    nodeOptions: process.env.NODE_OPTIONS ?? '',
    argv: process.argv,
  });
  if (args === undefined) return undefined;
  const child = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (child.error !== undefined) throw child.error;
  return child.status ?? 1;
}

type CommandFactory = (ctx: CommandContext) => Command;

/**
 * Every command, in `nlc --help` order: the one-line summary `nlc --help` shows (equal to the command's
 * own description, test/unit/cli/main.test.ts checks it) and how to load the command.
 */
export const COMMANDS: Readonly<
  Record<string, { readonly summary: string; readonly load: () => Promise<CommandFactory> }>
> = {
  status: {
    summary: 'zones and nodes as the controller sees them, from the state tables',
    load: async () => (await import('./commands/status.js')).statusCommand,
  },
  explain: {
    summary: "the decision trail for a node, newest first, with the controller's reasons",
    load: async () => (await import('./commands/explain.js')).explainCommand,
  },
  agreement: {
    summary: "how far the shadow's decisions agree with the cluster's own controller",
    load: async () => (await import('./commands/agreement.js')).agreementCommand,
  },
  queue: {
    summary: 'per-zone eviction queues and pending pod evictions',
    load: async () => (await import('./commands/queue.js')).queueCommand,
  },
  config: {
    summary: 'the effective controller settings, with their sources and upstream defaults',
    load: async () => (await import('./commands/config.js')).configCommand,
  },
  relay: {
    summary: 'run the watch relay in the foreground (the in-cluster Deployment runs the same)',
    load: async () => (await import('./commands/relay.js')).relayCommand,
  },
  simulate: {
    summary: 'run a scenario in virtual time and print what the controller would do',
    load: async () => (await import('./commands/simulate.js')).simulateCommand,
  },
  start: {
    summary:
      'run the whole system on this machine (API simulator, kubelets, DynamoDB, functions, relay) with a live view',
    load: async () => (await import('./commands/start.js')).startCommand,
  },
};

function packageVersion(): string {
  const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
  const version: unknown = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : '0.0.0';
}

/**
 * The command `args` run, if any: the first operand (the global options take no value), or the one
 * after `help`.
 *
 * @example invokedCommand(['--verbose', 'status', '-o', 'json']) // 'status'
 */
export function invokedCommand(args: readonly string[]): string | undefined {
  const operands = args.filter((arg) => !arg.startsWith('-'));
  const name = operands[0] === 'help' ? operands[1] : operands[0];
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? name : undefined;
}

/**
 * The program, its output and errors routed to `io`, exits turned into throws. `load` names the
 * commands to build for real (every one by default); the others are placeholders with their summary,
 * enough for `nlc --help` and for suggestions after a typo.
 */
export async function buildProgram(
  ctx: CommandContext,
  load: readonly string[] = Object.keys(COMMANDS),
): Promise<Command> {
  const { io } = ctx;
  const program = new Command('nlc')
    .description(
      'operate the serverless node lifecycle controller: read its state tables, explain its decisions, check its settings',
    )
    .version(packageVersion(), '--version')
    .option('--verbose', 'print stack traces with errors')
    .showSuggestionAfterError();
  for (const [name, { summary, load: factory }] of Object.entries(COMMANDS)) {
    program.addCommand(load.includes(name) ? (await factory())(ctx) : new Command(name).description(summary));
  }

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
 * invalid input (naming the field), 1 for any other failure.
 *
 * @example
 * process.exitCode = await main(process.argv.slice(2));
 */
export async function main(args: readonly string[], io: CliIo = processIo()): Promise<number> {
  const ctx: CommandContext = { io, exitCode: 0 };
  const verbose = args.includes('--verbose');
  let program: Command | undefined;
  try {
    const invoked = invokedCommand(args);
    program = await buildProgram(ctx, invoked === undefined ? [] : [invoked]);
    await program.parseAsync([...args], { from: 'user' });
    return ctx.exitCode;
  } catch (error) {
    return handleError(error, io.stderr, {
      verbose: verbose || program?.opts<{ verbose?: boolean }>().verbose === true,
    });
  }
}
