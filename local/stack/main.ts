// `npm start` / `nlc start`: starts the local stack (stack.ts), shows the live view (ui.ts) or, with
// --no-ui or without a terminal, logs what changes as JSON lines, and stops everything on q, Ctrl-C or
// SIGTERM. The flags are defined with the other commands in cli/commands/start.ts (`npm start` is
// `nlc start`); this module does not import the CLI.
import { relative, resolve as resolvePath } from 'node:path';
import { formatDuration } from '../../shared/duration.js';
import { jsonLinesLogger, type StackLogger } from './log.js';
import { DefaultDataDir, startLocalStack, type LocalStack, type LocalStackOptions } from './stack.js';
import { startLiveView, type LiveViewActions, type Terminal } from './ui.js';
import { snapshotChanges, snapshotReader, type StackSnapshot } from './view.js';

export interface RunLocalStackOptions {
  /** What to start (everything but the logger and the abort signal, which this module supplies). */
  readonly stack: Omit<LocalStackOptions, 'logger' | 'signal'>;
  /** The live view (true) or log lines (false). The view needs a terminal on stdin and stdout. */
  readonly ui: boolean;
}

/** The process's streams as the local stack uses them. */
export interface StackIo {
  readonly stdout: Terminal['output'] & { readonly isTTY?: boolean };
  readonly stderr: { write(chunk: string): unknown };
  readonly stdin: Terminal['input'];
  readonly env: Readonly<Record<string, string | undefined>>;
}

const Title = 'nlc local stack';

/** Start-up progress for people, on stderr, while the live view is not up yet. */
/** How often the start says it is still bundling: a minute of silence reads as a hang. */
export const StartProgressEveryMs = 10_000;

/**
 * The start's progress on stderr while the live view is to come: one line per part that is up, and
 * while the functions bundle (the longest step, a minute under load), a line every 10 s with the time
 * spent so far.
 */
export function progressLogger(stderr: StackIo['stderr'], dataDir: string): StackLogger {
  const shown = (path: string): string => {
    const rel = relative(process.cwd(), path);
    return rel === '' || rel.startsWith('..') ? path : rel;
  };
  let ticking: ReturnType<typeof setInterval> | undefined;
  const stopTicking = (): void => {
    if (ticking !== undefined) clearInterval(ticking);
    ticking = undefined;
  };
  return {
    log(level, component, message, fields = {}) {
      if (component === 'stack' && message === 'starting') {
        const started = Date.now();
        stopTicking();
        ticking = setInterval(() => {
          const spent = Math.round((Date.now() - started) / 1000) * 1000;
          stderr.write(`  still bundling and starting the functions… ${formatDuration(spent)}\n`);
        }, StartProgressEveryMs);
        ticking.unref();
      } else if (
        message === 'start failed' ||
        message === 'local stack ready' ||
        (component === 'stack' && message === 'functions ready (serverless-offline)')
      ) {
        stopTicking();
      }
      const line = ((): string | undefined => {
        // The error a failed start throws is printed once, by the CLI.
        if (message === 'start failed') return undefined;
        if (level === 'ERROR' || (level === 'WARN' && component === 'stack')) {
          const error = typeof fields.error === 'string' ? `: ${fields.error}` : '';
          return `  ${level.toLowerCase()}: ${message}${error}`;
        }
        if (component !== 'stack') return undefined;
        switch (message) {
          case 'starting':
            return `${Title}: starting (data directory ${shown(dataDir)}, log ${shown(`${dataDir}/logs/stack.log`)})\n  bundling the functions and starting serverless-offline (the longest step)…`;
          case 'DynamoDB-compatible server ready':
            return `  DynamoDB-compatible server  ${String(fields.endpoint)}${fields.persisted === true ? '' : ' (in memory)'}`;
          case 'Kubernetes API simulator ready':
            return `  Kubernetes API simulator    ${String(fields.url)}, ${String(fields.nodes)} nodes`;
          case 'functions ready (serverless-offline)':
            return `  functions (serverless-offline) ready after ${formatDuration(Math.round(Number(fields.startupMs) / 100) * 100)}`;
          case 'managed controller ready':
            return `  managed controller (stage ${String(fields.stage)}, active, grace period ${String(fields.nodeMonitorGracePeriod)}): this stack's controller runs in shadow mode beside it`;
          case 'local stack ready':
            return `  relay started; all up after ${formatDuration(Math.round(Number(fields.startupMs) / 100) * 100)}`;
          default:
            return undefined;
        }
      })();
      if (line !== undefined) stderr.write(`${line}\n`);
    },
  };
}

/** The flag `nlc status` needs to find a stack in `dataDir` from the working directory (none: the default). */
function here(dataDir: string): string {
  return resolvePath(dataDir) === resolvePath(DefaultDataDir) ? '' : ` --data-dir ${dataDir}`;
}

/** How to look at the stack from another terminal (printed once it is up, and again after the view). */
function summary(stack: LocalStack): string {
  const rel = (path: string): string => {
    const r = relative(process.cwd(), path);
    return r === '' || r.startsWith('..') ? path : r;
  };
  return [
    `${Title} (cluster "${stack.config.cluster}", stage ${stack.stage}):`,
    `  kubectl --kubeconfig ${rel(stack.kubeconfig)} get nodes`,
    // From this directory the CLI finds the stack by itself (its data directory's stack.json).
    `  npx nlc status${here(stack.dataDir)}`,
    `  npx nlc explain NODE${here(stack.dataDir)}`,
    ...(stack.managed === undefined
      ? []
      : [
          // The shadow's dry-run decisions against what the managed controller did (docs/local.md).
          `  npx nlc agreement${here(stack.dataDir)}`,
          `  npx nlc status${here(stack.dataDir)} --stage ${stack.managed.stage}   (the managed controller's state)`,
        ]),
    `  relay metrics: ${stack.endpoints.relay}/metrics   log: ${rel(stack.dataDir)}/logs/stack.log`,
    '',
  ].join('\n');
}

/** The keys' actions over the stack. */
function viewActions(stack: LocalStack, quit: () => void): LiveViewActions {
  const sim = stack.simulator;
  const grace = formatDuration(stack.config.nodeMonitorGracePeriod);
  return {
    ...(sim !== undefined && {
      toggleKubelet: (node: string) => {
        if (sim.kubeletState(node) === 'running') {
          sim.stopKubelet(node);
          return `${node}: kubelet stopped. No lease renewals: Ready=Unknown after ${grace}, then the unreachable taints and evictions.`;
        }
        sim.startKubelet(node);
        return `${node}: kubelet started. It renews its lease and posts Ready=True; the controller removes its taints.`;
      },
      toggleZone: (node: string) => {
        const zone = sim.zoneOf.get(node) ?? '';
        const nodes = [...sim.zoneOf].filter(([, z]) => z === zone).map(([name]) => name);
        if (nodes.some((name) => sim.kubeletState(name) === 'running')) {
          sim.failZone(zone);
          return `${zone}: all ${nodes.length} kubelets stopped. A zone entirely down is FullDisruption and is still tainted at the normal rate; only with every zone down do evictions stop.`;
        }
        sim.restoreZone(zone);
        return `${zone}: all ${nodes.length} kubelets started.`;
      },
    }),
    toggleRelay: async () => {
      if (stack.relay.running()) {
        await stack.relay.stop();
        return 'Relay stopped: no digests. Nodes are not marked Unknown for that: without digests the monitor cannot tell a silent node from a silent relay.';
      }
      await stack.relay.start();
      return 'Relay started (a new relay identity): it lists everything and publishes a digest at once.';
    },
    quit,
  };
}

function readerFor(stack: LocalStack, forLog: boolean): ReturnType<typeof snapshotReader> {
  return snapshotReader({
    cluster: stack.config.cluster,
    stores: stack.stores,
    kubeConfig: stack.kubeConfig(),
    ...(stack.simulator !== undefined && { kubeletState: stack.simulator.kubeletState }),
    relay: () => {
      const status = stack.relay.status();
      return {
        running: stack.relay.running(),
        synced: status?.synced ?? false,
        nextSequence: status?.nextSequence ?? null,
      };
    },
    functionsRunning: () => stack.functions.running(),
    // The log wants every new decision; the screen the newest outcomes.
    ...(forLog ? { decisionsPerSubject: 20, decisionLimit: 500 } : { outcomesOnly: true }),
  });
}

/** Logs what changes between snapshots, once a second, until stopped. */
function logChanges(stack: LocalStack, logger: StackLogger): { stop(): Promise<void> } {
  const reader = readerFor(stack, true);
  let previous: StackSnapshot | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = (): void => {
    running = running.then(async () => {
      const next = await reader.read(Date.now());
      for (const change of snapshotChanges(previous, next))
        logger.log('INFO', 'view', change.message, change.fields);
      previous = next;
    });
  };
  const timer = setInterval(tick, 1000);
  tick();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * Runs the local stack until `until` aborts (a signal) or the view quits. Returns the exit code: 0 after
 * a requested stop, including one during the start.
 *
 * @example
 * const stop = new AbortController();
 * process.once('SIGINT', () => stop.abort());
 * process.exitCode = await runLocalStack({ ui: true, stack: {} }, io, stop.signal);
 */
export async function runLocalStack(
  options: RunLocalStackOptions,
  io: StackIo,
  until: AbortSignal,
): Promise<number> {
  const dataDir = resolvePath(options.stack.dataDir ?? '.nlc-data');
  const terminal = io.stdin.isTTY === true && io.stdout.isTTY === true;
  const ui = options.ui && terminal;
  if (options.ui && !terminal) {
    io.stderr.write(
      `${Title}: stdin or stdout is not a terminal; logging instead of the live view (--no-ui)\n`,
    );
  }
  const logger: StackLogger = ui ? progressLogger(io.stderr, dataDir) : jsonLinesLogger(io.stdout, 'INFO');
  const quit = new AbortController();
  const stopRequested = AbortSignal.any([until, quit.signal]);

  let stack: LocalStack;
  try {
    stack = await startLocalStack({ ...options.stack, logger, signal: stopRequested });
  } catch (error) {
    if (stopRequested.aborted) {
      io.stderr.write(`${Title}: stopped during the start\n`);
      return 0;
    }
    throw error;
  }
  io.stderr.write(summary(stack));

  let view: { stop(): void | Promise<void> };
  if (ui) {
    const reader = readerFor(stack, false);
    view = startLiveView({
      terminal: { input: io.stdin, output: io.stdout },
      read: (now) => reader.read(now),
      actions: viewActions(stack, () => {
        quit.abort();
      }),
      title: `${Title}${stack.simulator === undefined ? ` (${stack.kubeconfig})` : ''}`,
      colour: (io.env.NO_COLOR ?? '') === '',
    });
  } else {
    view = logChanges(stack, logger);
  }

  // The functions' process exiting on its own ends the stack too: without it nothing is controlled.
  const outcome = { functionsDied: false };
  const watchFunctions = setInterval(() => {
    if (!stack.functions.running() || stack.managed?.functions.running() === false) {
      outcome.functionsDied = true;
      logger.log('ERROR', 'stack', 'the functions stopped; stopping the local stack');
      quit.abort();
    }
  }, 1000);
  if (!stopRequested.aborted) {
    await new Promise<void>((resolve) => {
      stopRequested.addEventListener(
        'abort',
        () => {
          resolve();
        },
        { once: true },
      );
    });
  }
  clearInterval(watchFunctions);
  await view.stop();
  io.stderr.write(`${Title}: stopping…\n`);
  await stack.stop();
  io.stderr.write(`${Title}: stopped; nothing left running\n`);
  return outcome.functionsDied ? 1 : 0;
}
