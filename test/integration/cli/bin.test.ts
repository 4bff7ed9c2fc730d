// The `nlc` program as a whole: the real executable through npx (package.json "bin" → cli/bin.mjs →
// tsx → cli/main.ts) against a seeded local stack, --help on every command, and the exit codes of
// usage errors.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../../cli/commands/status.js';
import { runCli } from './helpers.js';
import { CLUSTER, PREFIX, seedStack, type SeededStack } from './seed.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

let stack: SeededStack;
beforeAll(async () => {
  stack = await seedStack();
});
afterAll(async () => {
  await stack.stop();
});

interface Exit {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command in the project directory, without the host's NLC_ variables. */
function exec(file: string, args: readonly string[]): Promise<Exit> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('NLC_')));
  return new Promise((resolve) => {
    execFile(file, [...args], { cwd: root, env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

// Subprocesses (npx resolving the package's own bin, tsx compiling on first run) are slow on a busy
// machine: a generous bound, not a timing assertion.
describe('the nlc executable', { timeout: 60_000 }, () => {
  it('npx nlc status reads the seeded stack (a real subprocess, output to a pipe: no colour)', async () => {
    const target = ['--endpoint', stack.endpoint, '--tables-prefix', PREFIX, '--cluster', CLUSTER];
    const table = await exec('npx', ['nlc', 'status', ...target]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^Cluster: {12}prod\n/);
    expect(table.stdout).toMatch(
      /\na-1 +region1:zone-a +Unknown +unreachable:NoExecute +1m10s +processed +no\n/,
    );
    expect(table.stdout).not.toContain('\u001b[');
    // No SDK Node-version warning in an operator's terminal (bin.mjs silences it).
    expect(table.stderr).not.toContain('NodeVersionSupportWarning');

    const json = await exec(process.execPath, ['cli/bin.mjs', 'status', ...target, '-o', 'json']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as StatusReport;
    expect(report.nodes.map((n) => [n.name, n.ready])).toEqual([
      ['a-1', 'Unknown'],
      ['a-2', 'Unknown'],
      ['a-3', 'True'],
      ['a-4', 'True'],
      ['b-1', 'True'],
      ['b-2', 'True'],
    ]);
  });

  it('exits with the code main returns: 2 for a bad flag, through the real executable', async () => {
    const bad = await exec(process.execPath, [
      'cli/bin.mjs',
      'config',
      '--node-monitor-grace-period',
      'fourty',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('- --node-monitor-grace-period: expected a duration');
  });
});

describe('nlc', () => {
  it.each([[], ['status'], ['explain'], ['queue'], ['config']])(
    '%s --help exits 0 with usage',
    async (...command) => {
      const { code, stdout } = await runCli([...command, '--help']);
      expect(code).toBe(0);
      expect(stdout).toContain(`Usage: nlc${command.length > 0 ? ` ${command.join(' ')}` : ''} [options]`);
    },
  );

  it('help COMMAND and --version exit 0', async () => {
    const help = await runCli(['help', 'queue']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: nlc queue [options]');
    const version = await runCli(['--version']);
    expect(version).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
  });

  it('exits 2 for an unknown command or option, naming it', async () => {
    const command = await runCli(['stauts']);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("error: unknown command 'stauts'");
    expect(command.stderr).toContain('(Did you mean status?)');
    const option = await runCli(['status', '--bogus']);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("error: unknown option '--bogus'");
  });

  it('prints the stack only with --verbose', async () => {
    const target = ['--endpoint', stack.endpoint, '--tables-prefix', 'nope'];
    const quiet = await runCli(['status', ...target]);
    expect(quiet.code).toBe(1);
    expect(quiet.stderr.trim().split('\n')).toHaveLength(1);
    const verbose = await runCli(['--verbose', 'status', ...target]);
    expect(verbose.code).toBe(1);
    expect(verbose.stderr).toContain('StoreUnreachableError: cannot read the state tables');
    expect(verbose.stderr).toContain('Caused by:');
  });
});
