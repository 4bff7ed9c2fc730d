// `nlc start --no-ui` as a process, the way npm start runs it: it logs JSON lines, the demo cluster's three
// zones come up Normal, the kubelets run with the timings its flags set, `nlc status` finds it through its
// stack.json, and SIGTERM stops everything — the process exits 0 and leaves no process (the functions'
// process group included), no port and no stack.json behind.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findStack } from '../../local/stack/stackRecord.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Line {
  readonly component?: string;
  readonly message?: string;
  readonly [key: string]: unknown;
}

function portClosed(port: number): Promise<boolean> {
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

function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

let dataDir: string;
let child: ChildProcess;
const lines: Line[] = [];
let stderr = '';
let exited: Promise<number | null>;

/** Resolves with the first line matching `test` (already seen or to come), or rejects after `ms`. */
function waitForLine(what: string, test: (line: Line) => boolean, ms = 120_000): Promise<Line> {
  return new Promise((resolve, reject) => {
    const seen = lines.find(test);
    if (seen !== undefined) {
      resolve(seen);
      return;
    }
    const timer = setTimeout(() => {
      clearInterval(poll);
      reject(new Error(`no log line "${what}" within ${ms} ms; stderr: ${stderr}`));
    }, ms);
    const poll = setInterval(() => {
      const line = lines.find(test);
      if (line === undefined) return;
      clearTimeout(timer);
      clearInterval(poll);
      resolve(line);
    }, 100);
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'nlc-start-process-'));
  const ports = ['apiserver', 'dynamodb', 'eventbridge', 'eventbridge-pubsub', 'lambda', 'relay'].flatMap(
    (p) => [`--port-${p}`, '0'],
  );
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('NLC_') && name !== 'KUBECONFIG'),
  );
  child = spawn(
    process.execPath,
    [
      'cli/bin.mjs',
      'start',
      '--no-ui',
      '--ephemeral',
      '--data-dir',
      dataDir,
      '--node-monitor-period',
      '1s',
      '--node-status-report-frequency',
      '20s',
      ...ports,
    ],
    { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  exited = new Promise((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
  });
  createInterface({ input: child.stdout! }).on('line', (text) => {
    try {
      lines.push(JSON.parse(text) as Line);
    } catch {
      // The summary for people: not a log record.
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
});

afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  await exited;
  await rm(dataDir, { recursive: true, force: true });
}, 30_000);

describe('nlc start --no-ui as a process', () => {
  it('logs JSON lines and brings three Normal zones up', async () => {
    await waitForLine(
      'local stack ready',
      (l) => l.component === 'stack' && l.message === 'local stack ready',
    );
    const normal = new Set<string>();
    await waitForLine('three Normal zones', (l) => {
      if (l.component === 'view' && l.message === 'zone state' && l.state === 'Normal')
        normal.add(String(l.zone));
      return normal.size === 3;
    });
    expect([...normal].sort()).toEqual(['region-1:zone-a', 'region-1:zone-b', 'region-1:zone-c']);
  }, 150_000);

  it('runs the simulated kubelets with --node-status-report-frequency', async () => {
    const simulator = await waitForLine(
      'Kubernetes API simulator ready',
      (l) => l.component === 'stack' && l.message === 'Kubernetes API simulator ready',
    );
    // The default grace period (50 s) keeps upstream's 40 s lease and 10 s status checks.
    expect(simulator.kubelets).toEqual({
      leaseDuration: '40s',
      statusUpdateFrequency: '10s',
      statusReportFrequency: '20s',
    });
  });

  it('records where it is in stack.json, and `nlc status` with only --data-dir reads it', async () => {
    const ready = await waitForLine(
      'local stack ready',
      (l) => l.component === 'stack' && l.message === 'local stack ready',
    );
    const found = await findStack(dataDir);
    expect(found.state).toBe('running');
    if (found.state !== 'running') return;
    expect(found.record).toMatchObject({
      pid: child.pid,
      cluster: 'default',
      stage: 'dev',
      endpoints: { dynamodb: ready.dynamodb, relay: ready.relay },
      tables: { nodes: 'nlc-dev-nodes' },
    });
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('NLC_') && !name.startsWith('AWS_')),
    );
    const status = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['cli/bin.mjs', 'status', '--data-dir', dataDir, '-o', 'json'],
        { cwd: root, env, timeout: 60_000 },
        (error, out, err) => {
          resolve({ code: error === null ? 0 : Number(error.code ?? -1), stdout: out, stderr: err });
        },
      );
    });
    // Only a build warning, if a source was edited while the tests ran.
    expect(status.stderr.replace(/^nlc: warning: .* changed since the build.*\n/m, '')).toBe('');
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout) as { cluster: string; nodes: unknown[] };
    expect(report.cluster).toBe('default');
    expect(report.nodes).toHaveLength(30);
  }, 150_000);

  it('stops everything on SIGTERM: exit 0, no process, no port', async () => {
    const functions = lines.find((l) => l.message === 'functions ready (serverless-offline)');
    const starting = lines.find((l) => l.message === 'starting');
    const ready = lines.find((l) => l.message === 'local stack ready');
    const simulator = lines.find((l) => l.message === 'Kubernetes API simulator ready');
    const pid = Number(functions?.pid);
    expect(groupExists(pid)).toBe(true);
    const reserved = (starting?.ports ?? {}) as Record<string, number | undefined>;
    const ports = [
      Number(reserved.dynamodb),
      Number(reserved.eventBridge),
      Number(reserved.eventBridgePubSub),
      Number(reserved.lambda),
      Number(new URL(String(ready?.relay)).port),
      Number(new URL(String(simulator?.url)).port),
    ];
    expect(ports.every((p) => Number.isInteger(p) && p > 0)).toBe(true);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toContain('nlc local stack: stopped; nothing left running');
    expect(groupExists(pid)).toBe(false);
    expect(await Promise.all(ports.map(portClosed))).toEqual(ports.map(() => true));
    // Nothing points at the stopped stack any more.
    expect((await findStack(dataDir)).state).toBe('none');
  }, 60_000);
});
