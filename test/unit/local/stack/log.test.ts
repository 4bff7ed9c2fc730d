// The local stack's log lines: one JSON stream, the functions' Powertools lines kept, serverless-offline's
// text wrapped.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  fileLogger,
  jsonLinesLogger,
  logChildLine,
  relayLoggerOf,
  type LogLevel,
} from '../../../../local/stack/log.js';

function recorder() {
  const records: {
    level: LogLevel;
    component: string;
    message: string;
    fields?: Readonly<Record<string, unknown>>;
  }[] = [];
  return {
    records,
    logger: {
      log: (
        level: LogLevel,
        component: string,
        message: string,
        fields?: Readonly<Record<string, unknown>>,
      ) => {
        records.push({ level, component, message, ...(fields !== undefined && { fields }) });
      },
    },
  };
}

describe('logChildLine', () => {
  it("keeps a function's Powertools line: its level, message and keys", () => {
    const { records, logger } = recorder();
    logChildLine(
      logger,
      '{"level":"WARN","message":"monitor pass","timestamp":"2026-01-01T00:00:00.000Z","cluster":"default","nodes":30}',
      'stdout',
    );
    expect(records).toEqual([
      {
        level: 'WARN',
        component: 'functions',
        message: 'monitor pass',
        fields: { cluster: 'default', nodes: 30 },
      },
    ]);
  });

  it("wraps serverless-offline's text; its per-invocation lines are DEBUG, trouble WARN", () => {
    const { records, logger } = recorder();
    logChildLine(
      logger,
      '(λ: nodeTaints) RequestId: 1  Duration: 12.00 ms  Billed Duration: 12 ms',
      'stdout',
    );
    logChildLine(logger, 'Offline [http for lambda] listening on http://127.0.0.1:3002', 'stdout');
    logChildLine(logger, 'something went wrong', 'stderr');
    logChildLine(logger, '   ', 'stdout');
    logChildLine(logger, '{not json', 'stdout');
    expect(records.map((r) => [r.level, r.component])).toEqual([
      ['DEBUG', 'offline'],
      ['INFO', 'offline'],
      ['WARN', 'offline'],
      ['INFO', 'offline'],
    ]);
  });

  it('logs the start-up banner osls prints on stderr as INFO, problems on stderr as WARN', () => {
    const { records, logger } = recorder();
    const banner = [
      'serverless-offline-aws-eventbridge :: Plugin ready',
      'Starting Offline at stage dev (us-east-1)',
      'Offline [http for lambda] listening on http://127.0.0.1:3002',
      'Function names exposed for local invocation by aws-sdk:',
      '   * nodeTaints: nlc-dev-nodeTaints',
    ];
    const trouble = [
      'Error: Cannot find module ./x',
      '✖ Compilation failed for function alias nodeTaints',
      'Warning: a deprecated option',
    ];
    for (const line of [...banner, ...trouble]) logChildLine(logger, line, 'stderr');
    expect(records.map((r) => r.level)).toEqual([...banner.map(() => 'INFO'), ...trouble.map(() => 'WARN')]);
  });
});

describe('loggers', () => {
  it('writes JSON lines from a minimum level', () => {
    const lines: string[] = [];
    const logger = jsonLinesLogger({ write: (chunk: string) => lines.push(chunk) }, 'INFO', () => 0);
    logger.log('DEBUG', 'stack', 'hidden');
    logger.log('INFO', 'stack', 'shown', { port: 8000 });
    expect(lines).toEqual([
      '{"level":"INFO","timestamp":"1970-01-01T00:00:00.000Z","component":"stack","message":"shown","port":8000}\n',
    ]);
  });

  it("gives the relay's four levels to the stack's log", () => {
    const { records, logger } = recorder();
    const relay = relayLoggerOf(logger);
    relay.info('relay starting', { relayId: 'r' });
    relay.error('informer failed');
    expect(records).toEqual([
      { level: 'INFO', component: 'relay', message: 'relay starting', fields: { relayId: 'r' } },
      { level: 'ERROR', component: 'relay', message: 'informer failed' },
    ]);
  });

  it('appends to the log file and drops what comes after close', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nlc-log-'));
    try {
      const file = fileLogger(join(dir, 'stack.log'));
      file.log('INFO', 'stack', 'one');
      await file.close();
      file.log('INFO', 'stack', 'two');
      const text = await readFile(join(dir, 'stack.log'), 'utf8');
      expect(
        text
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { message: string }).message),
      ).toEqual(['one']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
