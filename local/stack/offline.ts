// The functions, run by serverless-offline as a child process: `osls offline start` on the repository's
// serverless.yml, so the handlers are the esbuild bundles the deployment ships, routed by the rules and
// schedules serverless.yml declares (infra/serverless/offline-eventbridge.cjs matches them and fires the
// schedules). The child runs in its own process group: the stack stops the whole group (osls and its
// worker threads) and waits for it to exit, and the plugin exits by itself if the stack dies first.
//
// Readiness: the EventBridge endpoint and the Lambda endpoint both accept connections. The plugin opens
// the EventBridge endpoint only once its rule matching is subscribed, so an event accepted is an event
// routed. The bundling at start (five functions) takes most of the start-up time (docs/local.md).
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalStackStartError } from '../../shared/errors.js';
import { LocalHost } from './ports.js';

const oslsBin = createRequire(import.meta.url).resolve('osls/bin/serverless.js');

export interface StartOfflineOptions {
  /** Where serverless.yml is (the repository root). */
  readonly serviceDir: string;
  /** serverless.yml's stage (`--stage`): the tables' and the bus's names follow it. osls's `dev` when absent. */
  readonly stage?: string;
  readonly eventBridgePort: number;
  readonly eventBridgePubSubPort: number;
  readonly lambdaPort: number;
  /** Every function's DynamoDB endpoint. */
  readonly dynamodbEndpoint: string;
  /** Every function's kubeconfig file. */
  readonly kubeconfig: string;
  /** serverless.yml parameters (`--param=key=value`): the controller settings. */
  readonly params: Readonly<Record<string, string>>;
  /** serverless-esbuild's work folder, relative to serviceDir. */
  readonly workFolder: string;
  /** Each line the child prints. */
  readonly onLine: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Called when the child exits without being asked to. */
  readonly onExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
  /** How long bundling and start-up may take (180 s). */
  readonly readyTimeoutMs?: number;
  /** Aborting stops the child and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

export interface OfflineProcess {
  /** The child's pid, which is also its process group id. */
  readonly pid: number;
  /** Whether it still runs. */
  running(): boolean;
  /** SIGTERM to the group, then SIGKILL after `graceMs` (10 s); resolves once the child exited. */
  stop(graceMs?: number): Promise<void>;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: LocalHost });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Signals the whole process group; false when it no longer exists. */
function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** The child's environment: only what osls and the plugin need, never the caller's AWS credentials. */
function childEnv(options: StartOfflineOptions): NodeJS.ProcessEnv {
  const pass = ['PATH', 'HOME', 'LANG', 'TMPDIR', 'SystemRoot'];
  const env: NodeJS.ProcessEnv = {};
  for (const name of pass) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return {
    ...env,
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    NLC_DYNAMODB_ENDPOINT: options.dynamodbEndpoint,
    NLC_KUBECONFIG: options.kubeconfig,
    NLC_LAMBDA_ENDPOINT: `http://${LocalHost}:${options.lambdaPort}`,
    NLC_OFFLINE_EVENTBRIDGE_PORT: String(options.eventBridgePort),
    NLC_OFFLINE_PUBSUB_PORT: String(options.eventBridgePubSubPort),
    NLC_OFFLINE_WORK_FOLDER: options.workFolder,
    NLC_OFFLINE_PARENT_PID: String(process.pid),
  };
}

/**
 * Starts `osls offline start` and resolves once its endpoints accept connections. Rejects with
 * LocalStackStartError (the child's last lines in the message) if it exits or times out first; the
 * child is stopped then.
 *
 * @example
 * const offline = await startOffline({ serviceDir, eventBridgePort: 4010, eventBridgePubSubPort: 4011,
 *   lambdaPort: 3002, dynamodbEndpoint, kubeconfig, params: {}, workFolder: '.nlc-data/esbuild', onLine });
 * await offline.stop();
 */
export async function startOffline(options: StartOfflineOptions): Promise<OfflineProcess> {
  const args = [
    oslsBin,
    'offline',
    'start',
    '--host',
    LocalHost,
    '--lambdaPort',
    String(options.lambdaPort),
    '--noSponsor',
    ...(options.stage !== undefined ? ['--stage', options.stage] : []),
    ...Object.entries(options.params).map(([key, value]) => `--param=${key}=${value}`),
  ];
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: options.serviceDir,
    env: childEnv(options),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid === undefined) {
    throw new LocalStackStartError('serverless-offline', `could not spawn ${process.execPath} ${oslsBin}`);
  }
  const lastLines: string[] = [];
  const remember = (line: string, stream: 'stdout' | 'stderr'): void => {
    lastLines.push(line);
    if (lastLines.length > 30) lastLines.shift();
    options.onLine(line, stream);
  };
  if (child.stdout !== null)
    createInterface({ input: child.stdout }).on('line', (l) => {
      remember(l, 'stdout');
    });
  if (child.stderr !== null)
    createInterface({ input: child.stderr }).on('line', (l) => {
      remember(l, 'stderr');
    });

  // Written by the child's exit handler and by stop(), read by the loop below.
  const state = { exited: false, stopping: false };
  const exit = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      state.exited = true;
      if (!state.stopping) options.onExit?.(code, signal);
      resolve();
    });
  });

  let stopped: Promise<void> | undefined;
  const stop = (graceMs = 10_000): Promise<void> =>
    (stopped ??= (async () => {
      state.stopping = true;
      if (!state.exited) signalGroup(pid, 'SIGTERM');
      const grace = new AbortController();
      const timedOut = await Promise.race([
        exit.then(() => false),
        sleep(graceMs, true, { signal: grace.signal }).catch(() => false),
      ]);
      grace.abort(); // the timer must not keep the process alive once the child is gone
      if (timedOut) signalGroup(pid, 'SIGKILL');
      await exit;
      // What osls started in its group (esbuild's service process) goes too; wait until it is gone.
      for (let i = 0; i < 100 && signalGroup(pid, 'SIGKILL'); i++) await sleep(50);
    })());

  const deadline = Date.now() + (options.readyTimeoutMs ?? 180_000);
  for (;;) {
    if (options.signal?.aborted === true) {
      await stop();
      options.signal.throwIfAborted();
    }
    if (state.exited) {
      await stop();
      throw new LocalStackStartError(
        'serverless-offline',
        `exited with code ${String(child.exitCode)} before it was ready; its last lines:\n${lastLines.join('\n')}`,
      );
    }
    if (Date.now() > deadline) {
      await stop();
      throw new LocalStackStartError(
        'serverless-offline',
        `not ready after ${Math.round((options.readyTimeoutMs ?? 180_000) / 1000)} s; its last lines:\n${lastLines.join('\n')}`,
      );
    }
    if ((await canConnect(options.eventBridgePort)) && (await canConnect(options.lambdaPort))) break;
    await sleep(250);
  }
  return { pid, running: () => !state.exited, stop };
}
