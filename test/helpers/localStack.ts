// The local stack's end-to-end harness (test/e2e/localStack*.test.ts): a stack on free ports with its
// tables in memory and its own temporary data directory, polling, and the checks that nothing is left
// running once it stops.
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AnyPorts } from '../../local/stack/ports.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/stack/stack.js';

/** Every port 0: stacks of concurrent test files never collide, nor with a developer's `npm start`. */
export const FreePorts = AnyPorts;

export interface TestStack {
  readonly stack: LocalStack;
  /** Stops the stack and deletes its data directory. */
  dispose(): Promise<void>;
}

/**
 * Starts a local stack for a test file: ephemeral tables, free ports, a temporary data directory.
 *
 * @example
 * const { stack, dispose } = await startTestStack({ settings: { nodeMonitorGracePeriod: '4s' } });
 */
export async function startTestStack(
  options: Omit<LocalStackOptions, 'dataDir' | 'ephemeral' | 'ports'>,
): Promise<TestStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'nlc-local-stack-'));
  let stack: LocalStack;
  try {
    stack = await startLocalStack({ ...options, dataDir, ephemeral: true, ports: FreePorts });
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    stack,
    dispose: async () => {
      await stack.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Polls `probe` every `intervalMs` until it returns a value (not undefined), or fails naming `what`
 * after `timeoutMs`, with the last error the probe threw.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`gave up waiting for ${what}${why}`);
    }
    await sleep(intervalMs);
  }
}

/** True when nothing accepts connections on 127.0.0.1:`port`. */
export function portClosed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => {
      resolve(true);
    });
  });
}

/** True while any process of the group `pgid` exists. */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
