// Shared by the `nlc simulate --report` tests: the page as a browser draws it. Debian's Chromium, driven
// by playwright-core (which never downloads a browser), opens the report from its file:// URL with every
// other request aborted and listed, and the helpers read what is drawn in the SVG's own coordinates.
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import type { TimelineLine } from '../../../local/simulate/timeline.js';

export const ChromiumPath = '/usr/bin/chromium';

/**
 * What a self-contained page must not have: a stylesheet link, a `src`, an import, a `url(…)`, a
 * remote address (the SVG namespace is a name, never fetched).
 */
export const FetchesSomething = /<link\b|\bsrc=|@import|url\(|https?:\/\/(?!www\.w3\.org\/2000\/svg)/;

/** Starts Debian's Chromium headless; fails saying what to install when it is missing. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(ChromiumPath)) {
    throw new Error(
      `the report tests open the page in a real browser and found none at ${ChromiumPath}: install Debian's chromium (apt-get install chromium; .ci/run does)`,
    );
  }
  return chromium.launch({
    executablePath: ChromiumPath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
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
