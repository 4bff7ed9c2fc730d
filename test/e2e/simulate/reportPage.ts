// Shared by the `nlc simulate --report` tests: the page as a browser draws it. Chromium from the npm
// registry (@sparticuz/chromium: a headless build inside the package, unpacked on first use), driven by
// playwright-core (which never downloads a browser), so `npm ci && npm test` needs nothing installed by
// hand. It opens the report from its file:// URL with every other request aborted and listed, and the
// helpers read what is drawn in the SVG's own coordinates.
import { pathToFileURL } from 'node:url';
import sparticuz from '@sparticuz/chromium';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { naturalCompare } from '../../../shared/present/names.js';
import { DrawEveryNodeUpTo } from '../../../local/simulate/report/model.js';
import type { TimelineLine } from '../../../local/simulate/timeline.js';

/**
 * What a self-contained page must not have: a stylesheet link, a `src`, an import, a `url(…)`, a
 * remote address (the SVG namespace is a name, never fetched).
 */
export const FetchesSomething = /<link\b|\bsrc=|@import|url\(|https?:\/\/(?!www\.w3\.org\/2000\/svg)/;

/** Starts the npm registry's Chromium headless, with nothing reaching out to the network. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await sparticuz.executablePath(),
    args: [
      // Its Lambda flags, but one process per page: a test opens several pages in one browser, which
      // --single-process does not survive.
      ...sparticuz.args.filter((arg) => arg !== '--single-process'),
      // Its own connections would be refused on a closed network, many at a time.
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** The page, opened from its file:// URL; any other request is aborted and listed in `blocked`. */
export async function openReport(
  browser: Browser | undefined,
  file: string,
): Promise<{ page: Page; blocked: string[] }> {
  if (browser === undefined) throw new Error('no browser: see the error of beforeAll');
  const page = await browser.newPage({ viewport: { width: 1340, height: 900 } });
  const blocked: string[] = [];
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (url === pathToFileURL(file).href) return route.continue();
    blocked.push(url);
    return route.abort();
  });
  await page.goto(pathToFileURL(file).href);
  return { page, blocked };
}

/**
 * The little of the DOM these helpers read in the page (the project's TypeScript has no DOM library:
 * nothing outside these page functions runs in a browser).
 */
interface PageElement {
  getAttribute(name: string): string | null;
  readonly textContent: string | null;
  querySelectorAll(selector: string): Iterable<PageElement>;
}

/** The given attributes of every element `selector` matches, in document order (one round trip). */
export async function attrs(page: Page, selector: string, ...names: string[]): Promise<(string | null)[][]> {
  return page
    .locator(selector)
    .evaluateAll(
      (elements: PageElement[], wanted: string[]) =>
        elements.map((element) => wanted.map((name) => element.getAttribute(name))),
      names,
    );
}

/** The cells' texts of each row of the `index`th table of the page. */
export async function tableRows(page: Page, index: number): Promise<(string | null)[][]> {
  return page
    .locator('table')
    .nth(index)
    .locator('tbody tr')
    .evaluateAll((rows: PageElement[]) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent)),
    );
}

/** The x (in the SVG's coordinates) of `t` seconds, from the geometry the SVG carries. */
export async function xOf(page: Page, t: number): Promise<number> {
  const [geometry = []] = await attrs(page, 'svg#timeline', 'data-x0', 'data-x1', 'data-duration');
  const [x0, x1, duration] = geometry.map(Number);
  if (x0 === undefined || x1 === undefined || duration === undefined || !(duration > 0)) {
    throw new Error('the SVG carries no geometry');
  }
  return x0 + (t / duration) * (x1 - x0);
}

async function boxOf(page: Page, target: string | Locator): Promise<{ x: number; width: number }> {
  const svg = await page.locator('svg#timeline').boundingBox();
  const box = await (typeof target === 'string' ? page.locator(target) : target).boundingBox();
  if (svg === null || box === null) throw new Error(`not drawn: ${String(target)}`);
  return { x: box.x - svg.x, width: box.width };
}

/** Where an element starts, in the SVG's coordinates (the SVG is drawn at scale 1). */
export async function leftOf(page: Page, target: string | Locator): Promise<number> {
  return (await boxOf(page, target)).x;
}

/** Where an element's middle is, in the SVG's coordinates: a mark's instant. */
export async function centreOf(page: Page, target: string | Locator): Promise<number> {
  const box = await boxOf(page, target);
  return box.x + box.width / 2;
}

/** The lines of `nlc simulate --json` output. */
export function parseJsonLines(stdout: string): TimelineLine[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as TimelineLine);
}

/** The Summary line of a run's lines. */
export function summaryLine(lines: readonly TimelineLine[]): Extract<TimelineLine, { kind: 'Summary' }> {
  const last = lines.at(-1);
  if (last?.kind !== 'Summary') throw new Error('the last line is not the Summary');
  return last;
}

// ---------------------------------------------------------------------------------------------------
// What the page should draw, from a run's --json lines alone (not from the page).

type Line = TimelineLine;

export interface ExpectedLane {
  readonly node: string;
  /** [class, data-t0, data-t1] of each Ready span. */
  readonly ready: string[][];
  /** [class, data-t0, data-t1, data-key] of each taint bar, by start then key. */
  readonly taints: string[][];
  /** [data-t0, data-n] of each eviction mark, by time. */
  readonly evictions: string[][];
  /** [data-t0, data-n] of each NotReady mark, by time. */
  readonly notReady: string[][];
  /** Pods deleted, by instant. */
  readonly deletedAt: Map<number, string[]>;
}

/** Marks per instant: [t, how many]. */
function perInstant(ts: readonly number[]): string[][] {
  const counts = new Map<number, number>();
  for (const t of ts) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => a - b).map(([t, n]) => [String(t), String(n)]);
}

/**
 * The node lanes a run's lines call for, in the page's order (zones, then nodes, in natural order):
 * Ready spans from the controller's Ready writes, taint bars from TaintAdded/TaintRemoved, a mark per
 * instant at which pods were deleted or marked NotReady, with how many.
 */
export function expectedLanes(lines: readonly Line[]): ExpectedLane[] {
  const summary = summaryLine(lines);
  const end = summary.t;
  const zoneOf = new Map(summary.nodes.map((n) => [n.node, n.zone]));
  const nodeOf = (line: Line): string | undefined =>
    line.kind === 'NodeCondition' ||
    line.kind === 'TaintAdded' ||
    line.kind === 'TaintRemoved' ||
    line.kind === 'PodNotReady' ||
    line.kind === 'PodDeleted'
      ? line.node
      : undefined;
  // A small cluster is drawn whole; a large one, only the nodes the lines say something happened to.
  const drawn =
    summary.nodes.length <= DrawEveryNodeUpTo
      ? summary.nodes.map((n) => n.node)
      : [...new Set(lines.map(nodeOf).filter((n) => n !== undefined))];
  drawn.sort((a, b) => naturalCompare(zoneOf.get(a) ?? '', zoneOf.get(b) ?? '') || naturalCompare(a, b));
  return drawn.map((node) => {
    const own = lines.filter((l) => nodeOf(l) === node);
    // Every node of these examples registers Ready=True at 0; the controller's Ready writes follow.
    const changes: [number, string][] = [[0, 'True']];
    for (const l of own) {
      if (l.kind === 'NodeCondition' && l.type === 'Ready' && l.status !== changes.at(-1)?.[1]) {
        changes.push([l.t, l.status]);
      }
    }
    const ready = changes.map(([t, status], i) => [
      `ready ready-${status}`,
      String(t),
      String(changes[i + 1]?.[0] ?? end),
    ]);
    const taints: string[][] = [];
    const open = new Map<string, number>();
    for (const l of own) {
      if (l.kind === 'TaintAdded' && !open.has(`${l.key}:${l.effect}`)) open.set(`${l.key}:${l.effect}`, l.t);
      if (l.kind === 'TaintRemoved') {
        const from = open.get(`${l.key}:${l.effect}`) ?? 0;
        open.delete(`${l.key}:${l.effect}`);
        taints.push([`taint taint-${l.effect}`, String(from), String(l.t), l.key]);
      }
    }
    for (const [id, from] of open) {
      const [key = '', effect = ''] = id.split(/:(?=[^:]*$)/);
      taints.push([`taint taint-${effect}`, String(from), String(end), key]);
    }
    taints.sort((a, b) => Number(a[1]) - Number(b[1]) || naturalCompare(a[3] ?? '', b[3] ?? ''));
    const deletedAt = new Map<number, string[]>();
    for (const l of own) {
      if (l.kind === 'PodDeleted') deletedAt.set(l.t, [...(deletedAt.get(l.t) ?? []), l.pod]);
    }
    return {
      node,
      ready,
      taints,
      evictions: perInstant(own.filter((l) => l.kind === 'PodDeleted').map((l) => l.t)),
      notReady: perInstant(own.filter((l) => l.kind === 'PodNotReady').map((l) => l.t)),
      deletedAt,
    };
  });
}

/** What the hover box says once the pointer is on `selector`. */
export async function hoverText(page: Page, selector: string | Locator): Promise<string> {
  await (typeof selector === 'string' ? page.locator(selector) : selector).hover();
  const tip = page.locator('#tip');
  await expect(tip.isVisible()).resolves.toBe(true);
  return (await tip.textContent()) ?? '';
}
