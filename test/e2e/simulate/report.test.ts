// `nlc simulate --report out.html` as a user runs it, and the page as a browser draws it: the real
// command writes the file, Debian's Chromium (driven by playwright-core, which never downloads a browser)
// opens it from a file:// URL with every other request blocked, and the test checks what is drawn.
//
// Expected picture of examples/scenarios/single-node-failure.yaml (10m = 600 s; the derivation is in the
// example's comments and single-node-failure.test.ts): a lane for each of a-1, a-2, a-3; a-1 Ready=True
// until 85 s, then Unknown to the end; unreachable:NoSchedule and unreachable:NoExecute from 85 s (the
// marking pass queues the NoExecute taint: PR #120816, from v1.34; the default emulationVersion is 1.37);
// evictions at 85 s (batch-1, no toleration) and 385 s (web-1, 300 s toleration); zone Normal at 0.1/s.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../integration/cli/helpers.js';
import { examplesDir } from './helpers.js';
import { attrs, FetchesSomething, launchChromium, leftOf, openReport, xOf } from './reportPage.js';

const example = fileURLToPath(new URL('single-node-failure.yaml', examplesDir));

let dir = '';
let browser: Browser | undefined;
let report: string;
let withReport: Awaited<ReturnType<typeof runCli>>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nlc-report-'));
  report = join(dir, 'out.html');
  withReport = await runCli(['simulate', '--report', report, example]);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

const open = (file: string): ReturnType<typeof openReport> => openReport(browser, file);

describe('nlc simulate --report', () => {
  it('writes the report and otherwise prints what it prints without it', async () => {
    const without = await runCli(['simulate', example]);
    expect(withReport.code).toBe(0);
    expect(withReport.stdout).toBe(without.stdout);
    expect(withReport.stderr).toContain(`report written to ${report}\n`);
    const html = await readFile(report, 'utf8');
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    // Self-contained: nothing to fetch.
    expect(html).not.toMatch(FetchesSomething);
  }, 120_000);

  it('gives the same bytes for the same scenario', async () => {
    const again = join(dir, 'again.html');
    expect((await runCli(['simulate', '--json', '--report', again, example])).code).toBe(0);
    expect(await readFile(again, 'utf8')).toBe(await readFile(report, 'utf8'));
  }, 120_000);

  it('fails with exit 1 naming the file when it cannot be written, before running', async () => {
    const target = join(dir, 'no-such-dir', 'out.html');
    const run = await runCli(['simulate', '--report', target, example]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `error: cannot write the report to ${JSON.stringify(target)}: no such directory`,
    );
    expect(run.stdout).toBe('');

    const intoDir = await runCli(['simulate', '--report', dir, example]);
    expect(intoDir.code).toBe(1);
    expect(intoDir.stderr).toContain('it is a directory');
  });

  it('draws a lane per node, the dead node going Unknown, its taints and evictions, and the zone', async () => {
    const { page, blocked } = await open(report);
    try {
      expect(await attrs(page, '.lane.node', 'data-node')).toEqual([['a-1'], ['a-2'], ['a-3']]);

      // a-1: True until 85 s, then Unknown to the end, starting where 85 s is on the axis.
      const a1 = '.lane.node[data-node="a-1"]';
      expect(await attrs(page, `${a1} rect.ready`, 'class', 'data-t0')).toEqual([
        ['ready ready-True', '0'],
        ['ready ready-Unknown', '85'],
      ]);
      expect(Math.abs((await leftOf(page, `${a1} rect.ready-Unknown`)) - (await xOf(page, 85)))).toBeLessThan(
        1,
      );
      // a-2 and a-3 stay Ready=True throughout.
      for (const node of ['a-2', 'a-3']) {
        expect(await attrs(page, `.lane.node[data-node="${node}"] rect.ready`, 'class')).toEqual([
          ['ready ready-True'],
        ]);
      }

      // Taints: NoSchedule and NoExecute from 85 s, to the end.
      expect(await attrs(page, `${a1} rect.taint`, 'class', 'data-t0', 'data-key')).toEqual([
        ['taint taint-NoSchedule', '85', 'node.kubernetes.io/unreachable'],
        ['taint taint-NoExecute', '85', 'node.kubernetes.io/unreachable'],
      ]);
      expect(
        Math.abs((await leftOf(page, `${a1} rect.taint-NoExecute`)) - (await xOf(page, 85))),
      ).toBeLessThan(1);

      // Two eviction marks: 85 s and 385 s.
      const evictions = page.locator(`${a1} .mark.eviction`);
      expect(await evictions.count()).toBe(2);
      const centre = async (i: number): Promise<number> => {
        const svg = await page.locator('svg#timeline').boundingBox();
        const box = await evictions.nth(i).boundingBox();
        if (svg === null || box === null) throw new Error('eviction mark not drawn');
        return box.x + box.width / 2 - svg.x;
      };
      expect(Math.abs((await centre(0)) - (await xOf(page, 85)))).toBeLessThan(1);
      expect(Math.abs((await centre(1)) - (await xOf(page, 385)))).toBeLessThan(1);

      // The zone: Normal throughout, its limiter at 0.1/s.
      const zone = '.lane.zone[data-zone="region-1:zone-a"]';
      expect(await attrs(page, `${zone} rect.zstate`, 'class')).toEqual([['zstate zstate-Normal']]);
      await expect(page.locator(`${zone} .rate-text`).textContent()).resolves.toBe('0.1/s');

      // Hovering a decision shows what happened and why.
      const tip = page.locator('#tip');
      await expect(tip.isHidden()).resolves.toBe(true);
      await evictions.nth(1).hover();
      await expect(tip.isVisible()).resolves.toBe(true);
      const text = (await tip.textContent()) ?? '';
      expect(text).toContain('6m25s  a-1: 1 pod evicted');
      expect(text).toContain('PodDeleted default/web-1 (TaintManagerEviction)');
      expect(text).toMatch(/deletePodForTaintEviction \(pod default\/web-1\)/);

      await page.locator(`${a1} rect.ready-Unknown`).hover({ position: { x: 200, y: 4 } });
      expect(await tip.textContent()).toMatch(/^a-1: Ready=Unknown from 1m25s to 10m\n/);

      // The summary table is there too.
      expect(await page.locator('#summary').textContent()).toBe('At 10m (2026-01-01T00:10:00.000Z)');
      expect(
        await page.locator('table').first().locator('tbody tr').first().locator('td').allTextContents(),
      ).toEqual(['region-1:zone-a', 'Normal', '3', '1', '3', '1', '1']);

      expect(blocked).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
