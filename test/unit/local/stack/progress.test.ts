// The start's progress lines (local/stack/main.ts progressLogger): while the functions bundle, a line
// every 10 s with the time spent, so a minute of bundling under load does not read as a hang.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { progressLogger, StartProgressEveryMs } from '../../../../local/stack/main.js';

describe('progressLogger', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: Date.parse('2026-11-28T00:00:00Z') });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('says every 10 s that it is still bundling, with the time spent, until the functions are up', () => {
    const lines: string[] = [];
    const logger = progressLogger({ write: (text: string) => lines.push(text) }, '/tmp/nlc-data');
    logger.log('INFO', 'stack', 'starting', {});
    expect(lines).toHaveLength(1);
    vi.advanceTimersByTime(2 * StartProgressEveryMs + 1);
    expect(lines.slice(1)).toEqual([
      '  still bundling and starting the functions… 10s\n',
      '  still bundling and starting the functions… 20s\n',
    ]);
    logger.log('INFO', 'stack', 'functions ready (serverless-offline)', { startupMs: 21_000 });
    vi.advanceTimersByTime(5 * StartProgressEveryMs);
    expect(lines.slice(3)).toEqual(['  functions (serverless-offline) ready after 21s\n']);
  });

  it('stops when the start fails', () => {
    const lines: string[] = [];
    const logger = progressLogger({ write: (text: string) => lines.push(text) }, '/tmp/nlc-data');
    logger.log('INFO', 'stack', 'starting', {});
    logger.log('ERROR', 'stack', 'start failed', { error: 'port in use' });
    vi.advanceTimersByTime(3 * StartProgressEveryMs);
    expect(lines).toHaveLength(1);
  });
});
