// The local stack's lifecycle: one stack per data directory, and its parts stopped in a fixed order.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDataDir, StopOrder, Teardown } from '../../../../local/stack/lifecycle.js';
import type { LogLevel } from '../../../../local/stack/log.js';
import { LocalStackStartError } from '../../../../shared/errors.js';

describe('claimDataDir', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nlc-claim-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes its pid and removes it on release', async () => {
    const release = await claimDataDir(dir);
    expect(await readFile(join(dir, 'stack.pid'), 'utf8')).toBe(`${process.pid}\n`);
    await release();
    await expect(readFile(join(dir, 'stack.pid'), 'utf8')).rejects.toThrow();
  });

  it('refuses a directory a running process holds, and takes over a stale claim', async () => {
    await writeFile(join(dir, 'stack.pid'), `${process.ppid}\n`);
    await expect(claimDataDir(dir)).rejects.toThrow(LocalStackStartError);
    await expect(claimDataDir(dir)).rejects.toThrow(/in use by another local stack \(pid \d+\)/);
    await writeFile(join(dir, 'stack.pid'), '2147483646\n');
    const release = await claimDataDir(dir);
    await release();
  });
});

describe('Teardown', () => {
  it('stops the parts in StopOrder whatever order they were added in, each once, going on after a failure', async () => {
    const stopped: string[] = [];
    const logged: { level: LogLevel; message: string; part: unknown }[] = [];
    const logger = {
      log: (
        level: LogLevel,
        _component: string,
        message: string,
        fields?: Readonly<Record<string, unknown>>,
      ) => {
        logged.push({ level, message, part: fields?.part });
      },
    };
    const teardown = new Teardown();
    for (const part of [...StopOrder].reverse()) {
      teardown.add(part, () => {
        stopped.push(part);
        if (part === 'functions') throw new Error('boom');
      });
    }
    await teardown.run(logger);
    await teardown.run(logger);
    expect(stopped).toEqual([...StopOrder]);
    expect(StopOrder.indexOf('relay')).toBeLessThan(StopOrder.indexOf('functions'));
    expect(StopOrder.indexOf('functions')).toBeLessThan(StopOrder.indexOf('dynamodb'));
    expect(logged.filter((l) => l.level === 'WARN')).toEqual([
      { level: 'WARN', message: 'stopping a part failed', part: 'functions' },
    ]);
  });
});
