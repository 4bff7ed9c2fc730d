// `nlc simulate` as a user runs it: the same scenario gives the same --json output byte for byte, the
// human output is a timeline and a summary per zone, and an invalid scenario exits 2 naming the field.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../integration/cli/helpers.js';
import { examplesDir } from './helpers.js';

const example = fileURLToPath(new URL('single-node-failure.yaml', examplesDir));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nlc-simulate-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function scenarioFile(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('nlc simulate --json', () => {
  it('prints the same JSON Lines, byte for byte, on every run', async () => {
    const first = await runCli(['simulate', '--json', example]);
    const second = await runCli(['simulate', '--json', example]);
    expect(first.code).toBe(0);
    expect(second.code).toBe(0);
    expect(first.stdout.length).toBeGreaterThan(0);
    expect(second.stdout).toBe(first.stdout);

    const lines = first.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // Every line leads with t, time and kind; times only go forward; the Summary is last.
    for (const line of lines) expect(Object.keys(line).slice(0, 3)).toEqual(['t', 'time', 'kind']);
    const ts = lines.map((line) => line.t as number);
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
    expect(lines.at(-1)).toMatchObject({ t: 600, time: '2026-01-01T00:10:00.000Z', kind: 'Summary' });
    expect(lines.filter((line) => line.kind === 'Summary')).toHaveLength(1);
  }, 60_000);
});

describe('nlc simulate --quiet-digests', () => {
  it('prints the same lines with fewer function invocations (the relay as deployed)', async () => {
    const healthy = await scenarioFile(
      'healthy.yaml',
      'name: five healthy minutes\nduration: 5m\nnodes:\n  - generate: { prefix: a-, count: 3, zone: zone-a, region: region-1 }\n',
    );
    const invocations = (stderr: string): number =>
      Number(/\((\d+) function invocations/.exec(stderr)?.[1] ?? Number.NaN);
    const everyPeriod = await runCli(['simulate', healthy]);
    const quiet = await runCli(['simulate', '--quiet-digests', healthy]);
    expect([everyPeriod.code, quiet.code]).toEqual([0, 0]);
    expect(quiet.stdout).toBe(everyPeriod.stdout);
    // A digest every 15 s instead of every 5 s: about a third of the monitor's passes.
    expect(invocations(quiet.stderr)).toBeLessThan(invocations(everyPeriod.stderr) * 0.6);
  }, 60_000);
});

describe('nlc simulate (human output)', () => {
  it('prints a timeline table and a summary per zone, coloured only on a terminal', async () => {
    const plain = await runCli(['simulate', example]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('single node failure with default tolerations');
    expect(plain.stdout).toMatch(/^\s+T\s+TIME\s+WHAT\s+OBJECT\s+DETAIL$/m);
    expect(plain.stdout).toMatch(
      // The marking pass taints NoExecute (PR #120816, from v1.34): 1m25s (singleNodeFailure.test.ts).
      /1m25s\s+2026-01-01T00:01:25.000Z\s+TaintAdded\s+node\/a-1\s+node.kubernetes.io\/unreachable:NoExecute/,
    );
    expect(plain.stdout).toMatch(/^ZONE\s+STATE\s+SIZE\s+UNHEALTHY\s+NODES/m);
    expect(plain.stdout).toMatch(
      /^region-1:zone-a\s+Normal\s+3\s+1\s+a-1 \(Unknown; unreachable:NoSchedule, unreachable:NoExecute\)/m,
    );
    expect(plain.stdout).toContain('Pods evicted: 2');
    expect(plain.stdout).not.toContain('\u001b[');
    expect(plain.stderr).toMatch(/simulated 10m of 3 nodes in [\d.]+s/);

    const tty = await runCli(['simulate', example], { tty: true });
    expect(tty.stdout).toContain('\u001b[');
  }, 60_000);
});

describe('nlc simulate with an invalid scenario', () => {
  it.each([
    {
      name: 'a glob that matches no node',
      text: 'duration: 5m\nnodes: [{name: a-1}]\ntimeline:\n  - {at: 30s, cordon: a-1}\n  - {at: 1m, stopKubelet: "c-*"}\n',
      field: 'timeline[1].stopKubelet: no node matches "c-*"',
    },
    {
      name: 'a bad duration',
      text: 'duration: 15 minutes\nnodes: [{name: a-1}]\n',
      field: 'duration: expected a duration like "40s", "5m" or a number of seconds, got "15 minutes"',
    },
    {
      name: 'an unknown action',
      text: 'duration: 5m\nnodes: [{name: a-1}]\ntimeline: [{at: 1m, stopKubelete: a-1}]\n',
      field: 'timeline[0].stopKubelete: unknown action "stopKubelete"; did you mean stopKubelet?',
    },
    {
      name: 'an unknown setting',
      text: 'duration: 5m\nconfig: {nodeMonitorGracePeriodd: 40s}\nnodes: [{name: a-1}]\n',
      field: 'config.nodeMonitorGracePeriodd: unknown setting; did you mean nodeMonitorGracePeriod?',
    },
    {
      name: 'a pod on a node that does not exist',
      text: 'duration: 5m\nnodes: [{name: a-1}]\npods: [{name: web-1, node: a-2}]\n',
      field: 'pods[0].node: no node "a-2"',
    },
    {
      name: 'broken YAML',
      text: 'duration: 5m\nnodes: [{name: a-1}\n',
      field: '(line 3, column 1): Flow sequence in block collection must be sufficiently indented',
    },
  ])('exits 2 naming the field: $name', async ({ name, text, field }) => {
    const file = await scenarioFile(`${name.replaceAll(' ', '-')}.yaml`, text);
    const run = await runCli(['simulate', file]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`Invalid scenario ${file}`);
    expect(run.stderr).toContain(field);
  });

  it('exits 2 for a file that does not exist', async () => {
    const run = await runCli(['simulate', join(dir, 'missing.yaml')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no such file');
  });
});
