// `nlc simulate` with a scenario of several clusters, as a user runs it (docs/simulate.md, "Several
// clusters"): a section per cluster, JSON Lines that name their cluster, a report page per cluster, and
// invalid input that exits 2 naming the cluster's field.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportFileOf } from '../../../cli/commands/simulate.js';
import { runCli } from '../../integration/cli/helpers.js';
import { examplesDir } from './helpers.js';

const example = fileURLToPath(new URL('two-clusters-one-zone-down.yaml', examplesDir));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nlc-simulate-clusters-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('nlc simulate with several clusters', () => {
  it('prints a section per cluster: its timeline and its summary', async () => {
    const run = await runCli(['simulate', example]);
    expect(run.code).toBe(0);
    const [eu, us] = run.stdout.split(/^cluster us$/m);
    expect(run.stdout.startsWith('two clusters, one loses a zone\n\ncluster eu\n')).toBe(true);
    expect(eu).toMatch(
      /^region-1:zone-b\s+FullDisruption\s+3\s+3\s+b-1 \(Unknown; unreachable:NoSchedule, unreachable:NoExecute\)/m,
    );
    expect(eu).toMatch(/6m55s\s+\S+\s+PodDeleted\s+pod\/default\/app-b-1-1/);
    expect(eu).toContain('Pods evicted: 3');
    expect(us).toMatch(/^region-1:zone-b\s+Normal\s+3\s+0\s+b-1 \(True\), b-2 \(True\), b-3 \(True\)$/m);
    expect(us).not.toContain('TaintAdded');
    expect(us).toContain('Pods evicted: 0');
    expect(run.stderr).toMatch(
      /^simulated 11m of 2 clusters \(18 nodes\) in [\d.]+s \(\d+ function invocations\)$/m,
    );
  }, 60_000);

  it('writes JSON Lines that name their cluster, the same bytes on every run', async () => {
    const first = await runCli(['simulate', '--json', example]);
    const second = await runCli(['simulate', '--json', example]);
    expect(first.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    const lines = first.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const line of lines) expect(Object.keys(line).slice(0, 4)).toEqual(['t', 'time', 'kind', 'cluster']);
    expect(lines.filter((line) => line.kind === 'Summary').map((line) => line.cluster)).toEqual(['eu', 'us']);
    expect(lines.filter((line) => line.kind === 'PodDeleted').map((line) => line.cluster)).toEqual([
      'eu',
      'eu',
      'eu',
    ]);
  }, 60_000);

  it('counts each cluster its deliveries under --chaos', async () => {
    const run = await runCli(['simulate', '--json', '--chaos', 'seed=3', example]);
    expect(run.code).toBe(0);
    const summaries = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; deliveries?: { deliveries: number } })
      .filter((line) => line.kind === 'Summary');
    expect(summaries).toHaveLength(2);
    for (const summary of summaries) expect(summary.deliveries?.deliveries).toBeGreaterThan(0);
  }, 60_000);

  it('writes a report page per cluster', async () => {
    const file = join(dir, 'out.html');
    const run = await runCli(['simulate', '--report', file, example]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`report written to ${join(dir, 'out-eu.html')}\n`);
    expect(run.stderr).toContain(`report written to ${join(dir, 'out-us.html')}\n`);
    const eu = await readFile(join(dir, 'out-eu.html'), 'utf8');
    const us = await readFile(join(dir, 'out-us.html'), 'utf8');
    // Each page's summary is its cluster's alone.
    const zoneB = '<tr><td>region-1:zone-b</td><td class=';
    expect(eu).toContain(`${zoneB}"FullDisruption">`);
    expect(us).toContain(`${zoneB}"Normal">`);
    expect(us).toContain('Every node is Ready=True with no taint.');
    expect(reportFileOf('out', 'eu')).toBe('out-eu');
    expect(reportFileOf('a.b/out.html', undefined)).toBe('a.b/out.html');
    expect(reportFileOf('a.b/out', 'us')).toBe('a.b/out-us');
  }, 60_000);

  it('exits 2 naming each bad field with its cluster', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(
      file,
      [
        'duration: 5m',
        'clusters:',
        '  - {name: a, nodes: [{name: a-1}], config: {nodeEvictionRate: fast}}',
        '  - {name: a, nodes: [{name: a-1}], timeline: [{at: 1m, stopKubelet: "c-*"}]}',
        '',
      ].join('\n'),
    );
    const run = await runCli(['simulate', file]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`Invalid scenario ${file}`);
    expect(run.stderr).toContain('- clusters[1].timeline[0].stopKubelet: no node matches "c-*"');
    expect(run.stderr).toContain('- clusters[1].name: cluster "a" is named already (clusters[0].name)');
    expect(run.stderr).toContain(
      '- clusters[0].config.nodeEvictionRate: expected a number of nodes per second, 0 or more (like 0.1), got "fast"',
    );
  });
});
