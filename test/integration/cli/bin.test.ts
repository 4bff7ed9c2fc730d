// The `nlc` program as a whole: the real executable through npx (package.json "bin" → cli/bin.mjs →
// the build in dist/nlc/) against a seeded local stack, --help on every command, and the exit codes of
// usage errors.
import { execFile } from 'node:child_process';
import { copyFile, cp, mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../../shared/present/statusReport.js';
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
function exec(
  file: string,
  args: readonly string[],
  extraEnv: Readonly<Record<string, string>> = {},
): Promise<Exit> {
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('NLC_'))),
    ...extraEnv,
  };
  return new Promise((resolve) => {
    execFile(file, [...args], { cwd: root, env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

// Subprocesses (npx resolving the package's own bin) are slow on a busy machine: a generous bound, not
// a timing assertion.
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

describe('cli/bin.mjs and the build', { timeout: 60_000 }, () => {
  it('without a build, says what to run and exits 1', async () => {
    const checkout = await mkdtemp(join(tmpdir(), 'nlc-unbuilt-'));
    try {
      await mkdir(join(checkout, 'cli'));
      await copyFile(join(root, 'cli', 'bin.mjs'), join(checkout, 'cli', 'bin.mjs'));
      const run = await exec(process.execPath, [join(checkout, 'cli', 'bin.mjs'), '--help']);
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr: 'error: nlc is not built (no dist/nlc/main.js): run `npm run build` (npm ci does it too)\n',
      });
    } finally {
      await rm(checkout, { recursive: true, force: true });
    }
  });

  it('a source changed since the build: runs the build, with a warning naming the file', async () => {
    // A copy of the build whose record lists one input, older than that file.
    const checkout = await mkdtemp(join(tmpdir(), 'nlc-stale-'));
    try {
      await mkdir(join(checkout, 'cli'));
      await copyFile(join(root, 'cli', 'bin.mjs'), join(checkout, 'cli', 'bin.mjs'));
      await copyFile(join(root, 'package.json'), join(checkout, 'package.json'));
      await cp(join(root, 'dist', 'nlc'), join(checkout, 'dist', 'nlc'), { recursive: true });
      await writeFile(join(checkout, 'cli', 'main.ts'), '// edited\n');
      await writeFile(
        join(checkout, 'dist', 'nlc', 'build.json'),
        JSON.stringify({ builtAt: Date.now() - 60_000, inputs: ['cli/main.ts'] }),
      );
      const now = new Date();
      await utimes(join(checkout, 'cli', 'main.ts'), now, now);
      // node_modules stays the repository's: the bundle's external requires resolve from there.
      const run = await exec(process.execPath, [join(checkout, 'cli', 'bin.mjs'), '--version']);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('0.1.0\n');
      expect(run.stderr).toBe(
        'nlc: warning: cli/main.ts changed since the build in dist/nlc/; running the old build (`npm run build` updates it)\n',
      );
    } finally {
      await rm(checkout, { recursive: true, force: true });
    }
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

  it('nlc simulate runs in a process whose heap is sized for the scenario, printing what it prints in process', async () => {
    const example = 'examples/scenarios/single-node-failure.yaml';
    const run = await exec(process.execPath, ['cli/bin.mjs', 'simulate', '--verbose', '--json', example]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe((await runCli(['simulate', '--json', example])).stdout);
    // 3 nodes: the least heap a run gets (local/simulate/heapLimit.ts), 512 MB of old generation plus
    // the young generation (three 64 MB semi-spaces' worth: 704 MiB in all on Node 20); this test's own
    // process (vitest's) is not limited that way.
    const limit = Number(/heap limit (\d+) MiB/.exec(run.stderr)?.[1]);
    expect(limit).toBeGreaterThanOrEqual(512 + 3 * 64);
    expect(limit).toBeLessThan(800);
  });

  it('loads the AWS credential chain when a request needs it, and says when it finds nothing', async () => {
    // An AWS profile named: the bundled CLI signs through the SDK's default chain (cli/lazyCredentials.ts
    // loads it on the first request), which finds no such profile in an empty home.
    const home = await mkdtemp(join(tmpdir(), 'nlc-home-'));
    try {
      const run = await exec(
        process.execPath,
        ['cli/bin.mjs', 'status', '--endpoint', 'http://127.0.0.1:9'],
        {
          HOME: home,
          AWS_PROFILE: 'nlc-test-no-such-profile',
          AWS_ACCESS_KEY_ID: '',
          AWS_SECRET_ACCESS_KEY: '',
          AWS_EC2_METADATA_DISABLED: 'true',
        },
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('no AWS credentials found');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

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
