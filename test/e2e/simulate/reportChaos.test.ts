// `nlc simulate --report` of a run under `--chaos` (every delivery up to 3 times, up to 5 s late, 1 in 20
// failing and retried), as an operator would make one: the picture must still hold. One run writes both
// the --json lines and the report, and everything the page should draw is derived from those lines, not
// from the page: a lane per node, its Ready spans and taints, one eviction mark per deleted pod (a pod
// deleted at an instant is counted once, whatever the copies of the events that led to it), the zones'
// states and their limiters' rates (upstream's setLimiterInZone for each state the lines record), the
// summary tables. Chromium opens the page with every request but its own file aborted.
//
// zone-failure-after-30m.yaml: 12 nodes, all drawn, one zone FullDisruption. zone-partial-disruption.yaml:
// 60 nodes, more than are drawn whole, so only the nodes something happened to get a lane; two zones
// PartialDisruption at different rates (0 and 0.01/s).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { naturalCompare } from '../../../shared/present/names.js';
import type { TimelineLine } from '../../../local/simulate/timeline.js';
import { UPSTREAM_DEFAULTS } from '../../../shared/config.js';
import { formatDuration } from '../../../shared/duration.js';
import type { ZoneState } from '../../../shared/domain/types.js';
import { defaultDisruptionQPSFuncs, setLimiterInZone } from '../../../shared/domain/zones.js';
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
  tableRows,
  xOf,
} from './reportPage.js';

const ChaosSpec = 'duplicates=3,maxDelay=5s,failures=0.05,seed=1';

let dir = '';
let browser: Browser | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nlc-report-chaos-'));
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------------
// What the page should draw, from the --json lines alone.

type Line = TimelineLine;
const time = (t: number): string => formatDuration(t * 1000);
const rateText = (qps: number): string => (qps === 0 ? '0 (stopped)' : `${qps}/s`);
const short = (key: string): string => key.replace(/^node\.kubernetes\.io\//, '');

interface ExpectedZone {
  readonly zone: string;
  /** [class, data-t0] of each state span. */
  readonly states: string[][];
  /** The first line of each limiter span's hover text. */
  readonly rates: string[];
}

/** Zones, their states from the ZoneState lines, their rates as upstream's setLimiterInZone sets them. */
function expectedZones(lines: readonly Line[]): ExpectedZone[] {
  const summary = summaryLine(lines);
  const end = summary.t;
  const changes = lines.filter((l): l is Extract<Line, { kind: 'ZoneState' }> => l.kind === 'ZoneState');
  // Master disruption (every zone FullDisruption) stops every limiter: not derived here.
  const current = new Map<string, ZoneState>();
  for (const c of changes) {
    current.set(c.zone, c.to);
    if ([...current.values()].every((s) => s === 'FullDisruption')) {
      throw new Error('every zone FullDisruption: master disruption is not derived by this test');
    }
  }
  const funcs = defaultDisruptionQPSFuncs(UPSTREAM_DEFAULTS);
  const zones = [...new Set([...summary.nodes.map((n) => n.zone), ...changes.map((c) => c.zone)])].sort(
    naturalCompare,
  );
  return zones.map((zone) => {
    const own = changes.filter((c) => c.zone === zone);
    const size = summary.zones.find((z) => z.zone === zone)?.size ?? 0;
    const rates: { t: number; qps: number }[] = [];
    for (const c of own) {
      const qps = setLimiterInZone(size, c.to, UPSTREAM_DEFAULTS, funcs);
      if (qps !== undefined && qps !== rates.at(-1)?.qps) rates.push({ t: c.t, qps });
    }
    return {
      zone,
      states: own.map((c) => [`zstate zstate-${c.to}`, String(c.t)]),
      rates: rates.map(
        (r, i) =>
          `zone ${zone}: NoExecute limiter ${rateText(r.qps)} from ${time(r.t)} to ${time(rates[i + 1]?.t ?? end)}`,
      ),
    };
  });
}

const count = (text: string, part: string): number => text.split(part).length - 1;

// ---------------------------------------------------------------------------------------------------

describe.each(['zone-failure-after-30m', 'zone-partial-disruption'])(
  `nlc simulate --chaos ${ChaosSpec} --report, examples/scenarios/%s.yaml`,
  (name) => {
    const example = fileURLToPath(new URL(`${name}.yaml`, examplesDir));
    let report = '';
    let lines: Line[] = [];

    beforeAll(async () => {
      report = join(dir, `${name}.html`);
      const run = await runCli(['simulate', '--json', '--chaos', ChaosSpec, '--report', report, example]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({
        code: 0,
        stderr: `report written to ${report}\n`,
      });
      lines = parseJsonLines(run.stdout);
    }, 120_000);

    it('was a chaotic run, whose --json lines delete each pod once', () => {
      const deliveries = summaryLine(lines).deliveries;
      expect(deliveries?.failures).toBeGreaterThan(0);
      const deleted = lines.filter((l) => l.kind === 'PodDeleted').map((l) => l.pod);
      expect(deleted.length).toBeGreaterThan(0);
      expect(new Set(deleted).size).toBe(deleted.length);
    });

    it('draws the lanes, Ready spans, taints and marks the --json lines give, each eviction once', async () => {
      const { page, blocked } = await openReport(browser, report);
      try {
        const lanes = expectedLanes(lines);
        expect((await attrs(page, '.lane.node', 'data-node')).flat()).toEqual(lanes.map((l) => l.node));
        let marks = 0;
        for (const lane of lanes) {
          const at = `.lane.node[data-node="${lane.node}"]`;
          expect({
            node: lane.node,
            ready: await attrs(page, `${at} rect.ready`, 'class', 'data-t0', 'data-t1'),
          }).toEqual({ node: lane.node, ready: lane.ready });
          const taints = await attrs(page, `${at} rect.taint`, 'class', 'data-t0', 'data-t1', 'data-key');
          taints.sort((a, b) => Number(a[1]) - Number(b[1]) || naturalCompare(a[3] ?? '', b[3] ?? ''));
          expect({ node: lane.node, taints }).toEqual({ node: lane.node, taints: lane.taints });
          const evictions = await attrs(page, `${at} .mark.eviction`, 'data-t0', 'data-n');
          expect({ node: lane.node, evictions }).toEqual({ node: lane.node, evictions: lane.evictions });
          const notReady = await attrs(page, `${at} .mark.podNotReady`, 'data-t0', 'data-n');
          expect({ node: lane.node, notReady }).toEqual({ node: lane.node, notReady: lane.notReady });
          marks += lane.evictions.reduce((sum, [, n]) => sum + Number(n), 0);
        }
        // Every eviction of the lines is drawn, once.
        expect(marks).toBe(lines.filter((l) => l.kind === 'PodDeleted').length);
        expect(await page.locator('svg#timeline .mark.eviction').count()).toBe(
          lanes.reduce((sum, l) => sum + l.evictions.length, 0),
        );
        expect(blocked).toEqual([]);
      } finally {
        await page.close();
      }
    }, 120_000);

    it('puts each failure and eviction where its instant is on the axis', async () => {
      const { page } = await openReport(browser, report);
      try {
        for (const lane of expectedLanes(lines).filter((l) => l.ready.length > 1)) {
          const at = `.lane.node[data-node="${lane.node}"]`;
          const [, unknownFrom = ''] = lane.ready[1] ?? [];
          const left = await leftOf(page, page.locator(`${at} rect.ready`).nth(1));
          expect(Math.abs(left - (await xOf(page, Number(unknownFrom))))).toBeLessThan(1);
          const evictions = page.locator(`${at} .mark.eviction`);
          for (const [i, [t = '']] of lane.evictions.entries()) {
            const centre = await centreOf(page, evictions.nth(i));
            expect(Math.abs(centre - (await xOf(page, Number(t))))).toBeLessThan(1);
          }
        }
      } finally {
        await page.close();
      }
    }, 120_000);

    it('says on hover which pods each eviction mark stands for, each once', async () => {
      const { page } = await openReport(browser, report);
      try {
        for (const lane of expectedLanes(lines)) {
          for (const [t, pods] of lane.deletedAt) {
            const text = await hoverText(
              page,
              `.lane.node[data-node="${lane.node}"] .mark.eviction[data-t0="${t}"]`,
            );
            const n = pods.length;
            expect(text.split('\n')[0]).toBe(
              `${time(t)}  ${lane.node}: ${n} pod${n === 1 ? '' : 's'} evicted`,
            );
            for (const pod of pods) {
              expect({ pod, times: count(text, `PodDeleted ${pod} (`) }).toEqual({ pod, times: 1 });
            }
          }
        }
      } finally {
        await page.close();
      }
    }, 120_000);

    it('draws each zone state the lines record and the limiter rate upstream sets for it', async () => {
      const { page } = await openReport(browser, report);
      try {
        const zones = expectedZones(lines);
        expect((await attrs(page, '.lane.zone', 'data-zone')).flat()).toEqual(zones.map((z) => z.zone));
        for (const zone of zones) {
          const at = `.lane.zone[data-zone="${zone.zone}"]`;
          expect({
            zone: zone.zone,
            states: await attrs(page, `${at} rect.zstate`, 'class', 'data-t0'),
          }).toEqual({
            zone: zone.zone,
            states: zone.states,
          });
          const rates: string[] = [];
          const hovers = page.locator(`${at} rect.rate-hover`);
          for (let i = 0; i < (await hovers.count()); i++) {
            await hovers.nth(i).hover();
            rates.push(((await page.locator('#tip').textContent()) ?? '').split('\n')[0] ?? '');
          }
          expect({ zone: zone.zone, rates }).toEqual({ zone: zone.zone, rates: zone.rates });
        }
      } finally {
        await page.close();
      }
    }, 120_000);

    it("has the summary tables of the run's Summary line, and nothing to fetch", async () => {
      const summary = summaryLine(lines);
      const html = await readFile(report, 'utf8');
      expect(html).not.toMatch(FetchesSomething);
      const { page, blocked } = await openReport(browser, report);
      try {
        await expect(page.locator('#summary').textContent()).resolves.toBe(
          `At ${time(summary.t)} (${summary.time})`,
        );
        const zones = [
          ...new Set([...summary.zones.map((z) => z.zone), ...summary.nodes.map((n) => n.zone)]),
        ].sort(naturalCompare);
        const zoneRows = zones.map((zone) => {
          const z = summary.zones.find((s) => s.zone === zone);
          const nodes = summary.nodes.filter((n) => n.zone === zone);
          return [
            zone,
            z?.state ?? '-',
            String(z?.size ?? 0),
            String(z?.unhealthy ?? 0),
            String(nodes.length),
            String(nodes.filter((n) => n.ready !== 'True').length),
            String(nodes.filter((n) => n.taints.length > 0).length),
          ];
        });
        expect(await tableRows(page, 0)).toEqual(zoneRows);
        const marked = summary.nodes
          .filter((n) => n.ready !== 'True' || n.taints.length > 0)
          .sort((a, b) => naturalCompare(a.zone, b.zone) || naturalCompare(a.node, b.node));
        expect(await tableRows(page, 1)).toEqual(
          marked.map((n) => [
            n.node,
            n.zone,
            n.ready,
            n.taints.length === 0 ? '-' : n.taints.map((t) => `${short(t.key)}:${t.effect}`).join(', '),
          ]),
        );
        const text = (await page.locator('body').textContent()) ?? '';
        expect(text).toContain(`Pods evicted: ${summary.evictions}`);
        const d = summary.deliveries;
        if (d === undefined) throw new Error('a --chaos run without delivery counts in its Summary');
        expect(text).toContain(
          `Chaos: ${d.deliveries} deliveries, ${d.failures} failed, ${d.deadLettered} dead-lettered.`,
        );
        expect(blocked).toEqual([]);
      } finally {
        await page.close();
      }
    }, 120_000);
  },
);
