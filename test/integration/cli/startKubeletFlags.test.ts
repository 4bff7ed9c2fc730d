// `nlc start --node-status-report-frequency`: the simulated kubelets' status report frequency, its
// default (upstream's kubelet, 5 minutes) and its validation before anything starts. That the stack's
// kubelets then post at that frequency is test/e2e/localStackTimings.test.ts.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StartOptionsSchema } from '../../../cli/commands/start.js';
import { runCli } from './helpers.js';

let dir: string;
let kubeconfig: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nlc-start-kubelet-'));
  kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, 'apiVersion: v1\nkind: Config\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('nlc start --node-status-report-frequency', () => {
  it("--help lists it with upstream's kubelet default, 5m", async () => {
    const { code, stdout } = await runCli(['start', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/--node-status-report-frequency <duration>\s+simulated kubelets post unchanged/);
    expect(stdout).toContain("(default 5m, as upstream's kubelet)");
  });

  it('is a duration in milliseconds, and absent unless given (the fleet keeps 5 minutes)', () => {
    expect(StartOptionsSchema.parse({ settings: {} }).nodeStatusReportFrequency).toBeUndefined();
    expect(
      StartOptionsSchema.parse({ settings: {}, nodeStatusReportFrequency: '20s' }).nodeStatusReportFrequency,
    ).toBe(20_000);
    expect(
      StartOptionsSchema.parse({ settings: {}, nodeStatusReportFrequency: '1m30s' })
        .nodeStatusReportFrequency,
    ).toBe(90_000);
  });

  it.each([
    ['soon', 'expected a duration like "40s", "5m" or a number of seconds, got "soon"'],
    ['0s', 'expected a duration greater than 0, got "0s"'],
    ['-20s', 'expected a duration greater than 0, got "-20s"'],
  ])('rejects %s naming the flag, before starting anything (exit 2)', async (value, message) => {
    const { code, stderr } = await runCli([
      'start',
      '--no-ui',
      '--data-dir',
      dir,
      '--node-status-report-frequency',
      value,
    ]);
    expect(code).toBe(2);
    expect(stderr).toContain(`- --node-status-report-frequency: ${message}`);
  });

  it('is refused with a real cluster, which has no simulated kubelets (exit 2)', async () => {
    const { code, stderr } = await runCli([
      'start',
      '--no-ui',
      '--data-dir',
      dir,
      '--kubeconfig',
      kubeconfig,
      '--node-status-report-frequency',
      '20s',
    ]);
    expect(code).toBe(2);
    expect(stderr).toContain('- --node-status-report-frequency: sets the simulated kubelets');
  });
});
