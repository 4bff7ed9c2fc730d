// `nlc status | explain | queue` with no store flags find a running local stack as kubectl finds its
// cluster: through the stack's record (stack.json) in the data directory under the working directory.
// The real executable, run from a directory that holds such a record, against seeded tables (dynalite);
// a record whose process is gone is ignored; with nothing found, the error says what to pass.
import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../../shared/present/statusReport.js';
import { findStack, StackRecordFile, type StackRecord } from '../../../local/stack/stackRecord.js';
import { CLUSTER, seedStack, type SeededStack } from './seed.js';

const bin = fileURLToPath(new URL('../../../cli/bin.mjs', import.meta.url));

let seeded: SeededStack;
let project: string;
beforeAll(async () => {
  seeded = await seedStack();
  project = await mkdtemp(join(tmpdir(), 'nlc-context-'));
});
afterAll(async () => {
  await seeded.stop();
  await rm(project, { recursive: true, force: true });
});

interface Exit {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `nlc ARGS` from `cwd`, with no NLC_ or AWS_ variable and a HOME without an AWS config file: nothing
 * but the directory says where the tables are.
 */
function nlc(cwd: string, args: readonly string[]): Promise<Exit> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('NLC_') && !name.startsWith('AWS_')),
  );
  env.HOME = cwd;
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd, env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      // A source edited while the tests run makes bin.mjs warn that the build is older: not this test's subject.
      resolve({ code, stdout, stderr: stderr.replace(/^nlc: warning: .* changed since the build.*\n/m, '') });
    });
  });
}

function record(pid: number): StackRecord {
  return {
    pid,
    startedAt: new Date().toISOString(),
    cluster: CLUSTER,
    stage: 'dev',
    region: 'us-east-1',
    tables: seeded.db.tables,
    endpoints: {
      dynamodb: seeded.endpoint,
      eventBridge: 'http://127.0.0.1:4010',
      lambda: 'http://127.0.0.1:3002',
      relay: 'http://127.0.0.1:18080',
    },
    kubeconfig: join(project, '.nlc-data', 'kubeconfig'),
  };
}

async function writeRecord(dir: string, pid: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, StackRecordFile), JSON.stringify(record(pid)));
}

/** A pid no process has any more: a child that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid;
}

describe('finding the local stack', { timeout: 60_000 }, () => {
  it('status with no flags reads the stack recorded in .nlc-data/stack.json (its tables, its cluster)', async () => {
    // This test's process stands in for the stack's: alive, so the record is current.
    await writeRecord(join(project, '.nlc-data'), process.pid);
    const status = await nlc(project, ['status', '-o', 'json']);
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout) as StatusReport;
    expect(report.nodes.map((n) => n.name)).toContain('a-1');

    const explain = await nlc(project, ['explain', 'a-1']);
    expect(explain.code).toBe(0);
    expect(explain.stdout).toContain('a-1');
    const queue = await nlc(project, ['queue']);
    expect(queue.code).toBe(0);
  });

  it('--data-dir names another data directory; flags still win (--cluster)', async () => {
    const other = join(project, 'elsewhere');
    await writeRecord(other, process.pid);
    const status = await nlc(project, ['status', '--data-dir', other, '--cluster', 'nobody']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('No zones or nodes stored for cluster nobody');
  });

  it('ignores a record whose process is gone, and says what to pass', async () => {
    const stale = join(project, 'stale');
    const pid = deadPid();
    await writeRecord(join(stale, '.nlc-data'), pid);
    expect((await findStack(join(stale, '.nlc-data'))).state).toBe('stale');
    const status = await nlc(stale, ['status']);
    expect(status.code).toBe(1);
    expect(status.stderr).toBe(
      `error: the local stack recorded in .nlc-data/stack.json (pid ${pid}) is no longer running and no AWS region is configured: ` +
        'start one with `npm start` (or give its --data-dir), or pass --endpoint URL for a DynamoDB-compatible server, ' +
        'or --region REGION [--stage STAGE] for AWS\n',
    );
  });

  it('with no stack and no AWS region, the error names the file it looked for and every way out', async () => {
    const empty = join(project, 'empty');
    await mkdir(empty, { recursive: true });
    for (const command of [['status'], ['explain', 'a-1'], ['queue']]) {
      const run = await nlc(empty, command);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        'error: no local stack is running here (.nlc-data/stack.json) and no AWS region is configured: ' +
          'start one with `npm start` (or give its --data-dir), or pass --endpoint URL for a DynamoDB-compatible server, ' +
          'or --region REGION [--stage STAGE] for AWS\n',
      );
    }
  });

  it('an explicit --endpoint wins over the recorded stack', async () => {
    await writeRecord(join(project, '.nlc-data'), process.pid);
    const status = await nlc(project, ['status', '--endpoint', 'http://127.0.0.1:9', '--cluster', CLUSTER]);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain('cannot read the state tables at http://127.0.0.1:9');
  });
});
