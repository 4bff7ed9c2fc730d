// The local stack's lifecycle: the data directory claimed by one stack at a time, and the parts stopped
// in a fixed order whatever order they started in.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalStackStartError } from '../../shared/errors.js';
import type { StackLogger } from './log.js';
import { processAlive } from './stackRecord.js';

/**
 * Claims the data directory for this process (`stack.pid`): two stacks on one directory would share its
 * tables and bundles. A pid file whose process is gone is taken over.
 */
export async function claimDataDir(dataDir: string): Promise<() => Promise<void>> {
  const pidFile = join(dataDir, 'stack.pid');
  const held = await readFile(pidFile, 'utf8').then(
    (text) => Number(text.trim()),
    () => undefined,
  );
  if (held !== undefined && Number.isInteger(held) && held > 0 && held !== process.pid) {
    if (processAlive(held)) {
      throw new LocalStackStartError(
        'the data directory',
        `${dataDir} is in use by another local stack (pid ${held}): stop it, or give this one another --data-dir`,
      );
    }
  }
  await writeFile(pidFile, `${process.pid}\n`);
  return () => rm(pidFile, { force: true });
}

/**
 * The order parts stop in, whatever order they started in: nothing new enters (the live view's reads, the
 * relay), the kubelets stop, the functions finish with the servers they use still up, then the servers.
 */
export const StopOrder = [
  // First: from now on `nlc status` no longer finds a stack that is going away.
  'stackRecord',
  'stores',
  'relay',
  'managedRelay',
  'extraRelays',
  'kubelets',
  'extraKubelets',
  'functions',
  'managedFunctions',
  'apiServer',
  'extraApiServers',
  'dynamodb',
  'exitHook',
  'logFile',
  'dataDirLock',
] as const;
export type Part = (typeof StopOrder)[number];

/** What to stop, by part; stopped in StopOrder, each once, a failure logged and the rest stopped anyway. */
export class Teardown {
  private readonly parts = new Map<Part, () => Promise<void> | void>();

  add(part: Part, stop: () => Promise<void> | void): void {
    this.parts.set(part, stop);
  }

  async run(logger: StackLogger): Promise<void> {
    for (const part of StopOrder) {
      const stop = this.parts.get(part);
      if (stop === undefined) continue;
      this.parts.delete(part);
      const began = performance.now();
      try {
        await stop();
        logger.log('DEBUG', 'stack', 'part stopped', { part, ms: Math.round(performance.now() - began) });
      } catch (error) {
        logger.log('WARN', 'stack', 'stopping a part failed', {
          part,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
  }
}
