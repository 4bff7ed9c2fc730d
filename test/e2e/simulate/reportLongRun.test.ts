// `nlc simulate --report` of a long run: examples/scenarios/node-failure-after-an-hour.yaml, where the
// node fails 1h0m5s in and the run ends at 1h9m30s. An hour of quiet squeezes the failure into the last
// seventh of the picture: the axis must still cover the whole run, the failure must be drawn where its
// instants are (the SVG's data-x0/x1/duration geometry), what happened near it must still be on hover,
// and the page must not grow with the quiet hour. Expectations come from the --json lines of the same
// run and the scenario's timeline; the decisions' texts are the functions' (their names and reasons).
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScenario, type Scenario } from '../../../local/simulate/scenario.js';
import type { TimelineLine } from '../../../local/simulate/timeline.js';
import { formatDuration, parseDuration } from '../../../shared/duration.js';
import { runCli } from '../../integration/cli/helpers.js';
import { examplesDir } from './helpers.js';
import {
  attrs,
  centreOf,
  expectedLanes,
  FetchesSomething,
  hoverText,
  launchChromium,
  leftOf,
  openReport,
  parseJsonLines,
  summaryLine,
  xOf,
} from './reportPage.js';

const name = 'node-failure-after-an-hour';
const example = fileURLToPath(new URL(`${name}.yaml`, examplesDir));
const FailingNode = 'a-1';
/**
 * The page is about 18 KB: styles, script, a lane per node and what happened. A bound well above it
 * and far below what anything kept per monitor pass (800 passes in this run) would add.
 */
const MaxReportBytes = 48 * 1024;

let dir = '';
let browser: Browser | undefined;
let report = '';
let lines: TimelineLine[] = [];
let scenario: Scenario;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nlc-report-long-'));
  report = join(dir, `${name}.html`);
  const run = await runCli(['simulate', '--json', '--report', report, example]);
  expect({ code: run.code, stderr: run.stderr }).toEqual({
    code: 0,
    stderr: `report written to ${report}\n`,
  });
  lines = parseJsonLines(run.stdout);
  scenario = parseScenario(await readFile(example, 'utf8'), `${name}.yaml`);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

const time = (t: number): string => formatDuration(t * 1000);
const lane = `.lane.node[data-node="${FailingNode}"]`;

/** The failing node's lines at instant `t`, as its hover texts word them. */
function recordsAt(t: number): string[] {
  return lines.flatMap((l) => {
    if (l.t !== t) return [];
    switch (l.kind) {
      case 'NodeCondition':
        return l.node === FailingNode ? [`NodeCondition ${l.type}=${l.status} (${l.reason})`] : [];
      case 'TaintAdded':
        return l.node === FailingNode ? [`TaintAdded ${l.key}:${l.effect}`] : [];
      case 'PodNotReady':
        return l.node === FailingNode ? [`PodNotReady ${l.pod}`] : [];
      case 'PodDeleted':
        return l.node === FailingNode ? [`PodDeleted ${l.pod} (${l.reason})`] : [];
      default:
        return [];
    }
  });
}

/** The first instant of a line of the failing node that satisfies `where`. */
function firstT(where: (line: TimelineLine) => boolean): number {
  const line = lines.find(where);
  if (line === undefined) throw new Error('no such line in the run');
  return line.t;
}

async function within(page: Page, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } finally {
    await page.close();
  }
}

describe(`nlc simulate --report, examples/scenarios/${name}.yaml (an hour of quiet, then a failure)`, () => {
  it('draws a time axis over the whole run, its ticks where their instants are', async () => {
    const { page, blocked } = await openReport(browser, report);
    await within(page, async () => {
      const duration = summaryLine(lines).t;
      expect(duration).toBe(scenario.duration / 1000);
      const [[x0, x1, declared] = []] = await attrs(
        page,
        'svg#timeline',
        'data-x0',
        'data-x1',
        'data-duration',
      );
      expect(Number(declared)).toBe(duration);

      const ticks = await attrs(page, 'svg#timeline .tick', 'x');
      const labels = await page.locator('svg#timeline .tick').allTextContents();
      // From 0 to the end of the run, the end labelled with the run's length, at the right edge.
      expect(labels[0]).toBe('0s');
      expect(labels.at(-1)).toBe(time(duration));
      expect(ticks[0]?.[0]).toBe(x0);
      expect(ticks.at(-1)?.[0]).toBe(x1);
      expect(labels.length).toBeGreaterThanOrEqual(6);
      for (const [i, label] of labels.entries()) {
        const x = Number(ticks[i]?.[0]);
        expect({ label, x: Math.abs(x - (await xOf(page, parseDuration(label) / 1000))) < 0.1 }).toEqual({
          label,
          x: true,
        });
      }
      // The nodes that stay up are Ready across the whole axis.
      for (const node of ['a-2', 'a-3']) {
        expect(
          await attrs(page, `.lane.node[data-node="${node}"] rect.ready`, 'class', 'data-t0', 'data-t1'),
        ).toEqual([['ready ready-True', '0', String(duration)]]);
      }
      expect(blocked).toEqual([]);
    });
  }, 60_000);

  it('draws the failure, its taints and evictions where their instants are', async () => {
    const { page } = await openReport(browser, report);
    await within(page, async () => {
      const [expected] = expectedLanes(lines).filter((l) => l.node === FailingNode);
      if (expected === undefined) throw new Error(`no lane expected for ${FailingNode}`);
      expect(await attrs(page, `${lane} rect.ready`, 'class', 'data-t0', 'data-t1')).toEqual(expected.ready);
      const taints = await attrs(page, `${lane} rect.taint`, 'class', 'data-t0', 'data-t1', 'data-key');
      expect(taints.sort((a, b) => Number(a[1]) - Number(b[1]))).toEqual(expected.taints);
      expect(await attrs(page, `${lane} .mark.eviction`, 'data-t0', 'data-n')).toEqual(expected.evictions);

      // An hour in: the Unknown span and each taint start where their instants are on the axis.
      const unknownAt = firstT(
        (l) => l.kind === 'NodeCondition' && l.type === 'Ready' && l.node === FailingNode,
      );
      expect(unknownAt).toBeGreaterThan(3600);
      expect(
        Math.abs((await leftOf(page, `${lane} rect.ready-Unknown`)) - (await xOf(page, unknownAt))),
      ).toBeLessThan(1);
      for (const effect of ['NoSchedule', 'NoExecute']) {
        const at = firstT((l) => l.kind === 'TaintAdded' && l.effect === effect && l.node === FailingNode);
        expect({
          effect,
          off: Math.abs((await leftOf(page, `${lane} rect.taint-${effect}`)) - (await xOf(page, at))) < 1,
        }).toEqual({ effect, off: true });
      }
      const evictions = page.locator(`${lane} .mark.eviction`);
      for (const [i, [t = '']] of expected.evictions.entries()) {
        expect(
          Math.abs((await centreOf(page, evictions.nth(i))) - (await xOf(page, Number(t)))),
        ).toBeLessThan(1);
      }
      // The scenario's stopKubelet, on the scenario lane and on the node's.
      const [stop] = scenario.timeline;
      if (stop === undefined) throw new Error('the scenario has no timeline');
      const stopAt = stop.at / 1000;
      expect(
        Math.abs((await centreOf(page, '.lane.actions .mark.action')) - (await xOf(page, stopAt))),
      ).toBeLessThan(1);
      expect(
        Math.abs((await centreOf(page, `${lane} .mark.action`)) - (await xOf(page, stopAt))),
      ).toBeLessThan(1);
    });
  }, 60_000);

  it('says on hover what happened near the failure, and why', async () => {
    const { page } = await openReport(browser, report);
    await within(page, async () => {
      const duration = summaryLine(lines).t;
      const unknownAt = firstT(
        (l) => l.kind === 'NodeCondition' && l.type === 'Ready' && l.node === FailingNode,
      );
      const noExecuteAt = firstT(
        (l) => l.kind === 'TaintAdded' && l.effect === 'NoExecute' && l.node === FailingNode,
      );
      const deletions = lines.filter(
        (l): l is Extract<TimelineLine, { kind: 'PodDeleted' }> => l.kind === 'PodDeleted',
      );

      const stop = await hoverText(page, '.lane.actions .mark.action');
      expect(stop).toBe(
        `${time((scenario.timeline[0]?.at ?? 0) / 1000)}  scenario: stopKubelet ${FailingNode}`,
      );

      // The Ready=Unknown span: the monitor's verdict and what it wrote with it.
      const unknown = await hoverText(page, `${lane} rect.ready-Unknown`);
      expect(unknown.split('\n')[0]).toBe(
        `${FailingNode}: Ready=Unknown from ${time(unknownAt)} to ${time(duration)}`,
      );
      for (const record of recordsAt(unknownAt)) expect(unknown).toContain(record);
      expect(unknown).toMatch(
        /monitor · updateNodeStatus: tryUpdateNodeHealth: no heartbeat within the grace period/,
      );
      expect(unknown).toMatch(/monitor · markPodsNotReady/);

      // The eviction of the pod without a toleration comes in the same instant as the NotReady marks
      // (the marking pass queues the NoExecute taint: PR #120816, from v1.34; the default
      // emulationVersion is 1.37), its mark drawn over theirs. Pointing at the NotReady mark must still
      // tell which pods were marked NotReady, and when: the mark on top is of that instant, its header
      // gives the time and its lines every record of the instant.
      expect(noExecuteAt).toBe(unknownAt);
      const ring = await page.locator(`${lane} .mark.podNotReady`).boundingBox();
      if (ring === null) throw new Error('no NotReady mark drawn');
      await page.mouse.move(ring.x + ring.width / 2, ring.y + ring.height / 2);
      const pointed = (await page.locator('#tip').textContent()) ?? '';
      expect(pointed.split('\n')[0]).toMatch(new RegExp(`^${time(unknownAt)}  ${FailingNode}: `));
      for (const record of recordsAt(unknownAt).filter((r) => r.startsWith('PodNotReady'))) {
        expect(pointed.split('\n')).toContain(record);
      }

      // The NoExecute taint: the drainer's taint, and what it did at once to the pod without a toleration.
      const noExecute = await hoverText(page, `${lane} rect.taint-NoExecute`);
      expect(noExecute.split('\n')[0]).toBe(
        `${FailingNode}: node.kubernetes.io/unreachable:NoExecute from ${time(noExecuteAt)} to ${time(duration)}`,
      );
      for (const record of recordsAt(noExecuteAt)) expect(noExecute).toContain(record);
      expect(noExecute).toMatch(/drainer · swapNodeTaints: doNoExecuteTaintingPass: Ready=Unknown/);

      // Each eviction mark: the pod, and the function that deleted it.
      expect(deletions.length).toBe(2);
      for (const deletion of deletions) {
        const text = await hoverText(page, `${lane} .mark.eviction[data-t0="${deletion.t}"]`);
        expect(text.split('\n')[0]).toBe(`${time(deletion.t)}  ${FailingNode}: 1 pod evicted`);
        expect(text).toContain(`PodDeleted ${deletion.pod} (TaintManagerEviction)`);
        expect(text).toContain(`deletePodForTaintEviction (pod ${deletion.pod})`);
      }
    });
  }, 60_000);

  it('stays small and self-contained: an hour of quiet adds nothing to it', async () => {
    const html = await readFile(report, 'utf8');
    expect(html).not.toMatch(FetchesSomething);
    expect((await stat(report)).size).toBeLessThan(MaxReportBytes);
  });
});
