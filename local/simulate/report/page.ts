// The report as one self-contained HTML file: inline CSS, the inline SVG picture, the summary tables and a
// few lines of inline script for the hover texts. Nothing is fetched (no CDN, no web font), so the file
// opens anywhere, offline, and the same run gives the same bytes (no wall-clock time in it).
import { formatDuration } from '../../../shared/duration.js';
import { recordDetail, type SummaryRecord, type TimelineLine } from '../timeline.js';
import { naturalCompare, type ReportModel } from './model.js';
import { escapeXml, renderTimelineSvg } from './timelineSvg.js';

/** How many records the page lists in full; the rest are in `nlc simulate --json`. */
const TimelineRowsShown = 2000;

const style = `
:root { color-scheme: light; --fg: #1d2330; --muted: #5b6474; --line: #d9dde5; }
* { box-sizing: border-box; }
body { margin: 24px; font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg); background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 15px; margin: 28px 0 8px; }
.facts { color: var(--muted); margin: 0 0 14px; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 18px; margin: 0 0 10px; color: var(--muted); }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
.legend i { display: inline-block; width: 18px; height: 10px; border-radius: 2px; }
.legend svg { width: 14px; height: 14px; }
.chart { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; }
svg text { font: 11px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; fill: var(--fg); }
.label { font-weight: 500; }
.zone-label { font-weight: 700; }
.compact-label { font-size: 9px; fill: var(--muted); }
.zone-sub, .quiet, .axis-title { fill: var(--muted); }
.quiet { font-style: italic; }
.tick { text-anchor: middle; fill: var(--muted); }
.tick.end { text-anchor: end; }
.grid { stroke: #eceef2; stroke-width: 1; }
.zone-bg { fill: #f4f6f9; fill-opacity: 0.85; }
.node-bg { fill: transparent; }
.lane.node:hover .node-bg { fill: #eef3fb; }
.ready-True, .zstate-Normal, .legend .ready-True { fill: #9fd3a1; background: #9fd3a1; }
.ready-False, .legend .ready-False { fill: #f2a65a; background: #f2a65a; }
.ready-Unknown, .legend .ready-Unknown { fill: #7e6fc0; background: #7e6fc0; }
.ready-None { fill: #d0d4dc; }
.zstate-Initial { fill: #d0d4dc; }
.zstate-PartialDisruption, .legend .zstate-PartialDisruption { fill: #f2a65a; background: #f2a65a; }
.zstate-FullDisruption, .legend .zstate-FullDisruption { fill: #d64045; background: #d64045; }
.legend .zstate-Normal { background: #9fd3a1; }
.zstate-text { font-size: 10px; font-weight: 600; fill: #1d2330; pointer-events: none; }
.taint-NoSchedule, .legend .taint-NoSchedule { fill: #e9b824; background: #e9b824; }
.taint-PreferNoSchedule { fill: #f3dd8b; }
.taint-NoExecute, .legend .taint-NoExecute { fill: #c1121f; background: #c1121f; }
.rate { stroke: #2a6f97; stroke-width: 1.6; fill: none; pointer-events: none; }
.rate-hover { fill: transparent; }
.rate-text { font-size: 10px; fill: #2a6f97; pointer-events: none; }
.legend .rate-line { height: 2px; background: #2a6f97; }
.mark.eviction { fill: #7a0010; stroke: #fff; stroke-width: 0.8; }
.mark.podNotReady { fill: #fff; stroke: #c76b00; stroke-width: 1.4; }
.mark.action { fill: #1d2330; stroke: #fff; stroke-width: 0.8; }
svg.compact .mark { stroke-width: 0; }
[data-tip], [data-h] { cursor: default; }
rect[data-tip]:hover, rect[data-t0]:hover, path.mark:hover, circle.mark:hover { stroke: #1d2330; stroke-width: 1.2; }
#tip { position: fixed; z-index: 10; max-width: 640px; padding: 8px 10px; border-radius: 6px; background: #1d2330; color: #fff; font: 12px/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; white-space: pre-wrap; pointer-events: none; box-shadow: 0 4px 16px rgba(0,0,0,.25); }
table { border-collapse: collapse; margin: 0 0 8px; }
th, td { text-align: left; padding: 3px 12px 3px 0; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); text-transform: uppercase; font-size: 11px; }
td.num, th.num { text-align: right; }
td.Normal { color: #2d7a32; } td.PartialDisruption, td.FullDisruption { color: #b3261e; font-weight: 600; }
details summary { cursor: pointer; color: var(--muted); margin: 6px 0; }
.note { color: var(--muted); }
code { font: 12px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
`;

// The hover texts. An element with data-tip="i" shows texts[i]. A node lane's elements (data-h) show
// what happened to the node at their instant, from the lane's notes (lanes[data-lane]): a header made
// from the element's data, then the notes of that instant; the lane's name shows all its notes. `time`
// is formatDuration's spelling (shared/config.ts), which the notes' other times use.
const script = `
(() => {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const box = document.getElementById('tip');
  const svg = document.getElementById('timeline').dataset;
  // Pixels per second of virtual time (timelineSvg.ts draws a run of no length as one second).
  const scale = (Number(svg.x1) - Number(svg.x0)) / (Number(svg.duration) > 0 ? Number(svg.duration) : 1);
  const time = (s) => {
    const ms = Math.round(Math.abs(s * 1000));
    if (ms === 0) return '0s';
    const parts = [[Math.floor(ms / 3600000), 'h'], [Math.floor(ms / 60000) % 60, 'm'], [Math.floor(ms / 1000) % 60, 's'], [ms % 1000, 'ms']];
    return parts.filter(([n]) => n > 0).map(([n, unit]) => n + unit).join('');
  };
  const capped = (lines, limit) => lines.length <= limit ? lines : [...lines.slice(0, limit), '… ' + (lines.length - limit) + ' more'];
  const plural = (n, what) => n + ' pod' + (n === 1 ? '' : 's') + ' ' + what;
  const nodeText = (el) => {
    const [node, zone, flat] = data.lanes[Number(el.closest('.lane.node').getAttribute('data-lane'))];
    const notes = [];
    for (let i = 0; i < flat.length; i += 2) notes.push([flat[i], data.texts[flat[i + 1]]]);
    if (!el.hasAttribute('data-t0')) {
      return [node + ' (zone ' + (zone === '' ? '""' : zone) + ')', ...capped(notes.map(([t, text]) => time(t) + '  ' + text), 40)].join('\\n');
    }
    const t0 = Number(el.getAttribute('data-t0'));
    const span = () => ' from ' + time(t0) + ' to ' + time(Number(el.getAttribute('data-t1')));
    const [what, kind] = el.getAttribute('class').split(' ');
    const n = Number(el.getAttribute('data-n'));
    const header =
      what === 'ready' ? node + ': Ready=' + (kind === 'ready-None' ? '(none)' : kind.slice(6)) + span()
      : what === 'taint' ? node + ': ' + el.getAttribute('data-key') + ':' + kind.slice(6) + span()
      : time(t0) + '  ' + node + (kind === 'eviction' ? ': ' + plural(n, 'evicted') : kind === 'podNotReady' ? ': ' + plural(n, 'marked NotReady') : '');
    const own = notes.filter(([t]) => t === t0).map(([, text]) => text);
    if (what !== 'mark') return [header, ...capped(own, 24)].join('\\n');
    // Instants closer than a mark's width share its pixels (on an hour's axis 5 s is 1.5 px), and the
    // mark drawn last hides the others: a mark also tells, with their times, the notes of every other
    // instant it covers.
    const reach = el.getBBox().width / 2 / scale;
    const near = notes.filter(([t]) => t !== t0 && Math.abs(t - t0) <= reach).map(([t, text]) => time(t) + '  ' + text);
    return [header, ...capped([...own, ...near], 24)].join('\\n');
  };
  let shown = null;
  const place = (e) => {
    const pad = 14, w = box.offsetWidth, h = box.offsetHeight;
    let left = e.clientX + pad, top = e.clientY + pad;
    if (left + w > innerWidth - 4) left = Math.max(4, e.clientX - w - pad);
    if (top + h > innerHeight - 4) top = Math.max(4, e.clientY - h - pad);
    box.style.left = left + 'px';
    box.style.top = top + 'px';
  };
  document.addEventListener('mouseover', (e) => {
    const el = e.target instanceof Element ? e.target.closest('[data-tip], [data-h]') : null;
    if (el === shown) return;
    shown = el;
    if (el === null) { box.hidden = true; return; }
    box.textContent = el.hasAttribute('data-h') ? nodeText(el) : (data.texts[Number(el.getAttribute('data-tip'))] ?? '');
    box.hidden = false;
    place(e);
  });
  document.addEventListener('mousemove', (e) => { if (shown !== null) place(e); });
})();
`;

const swatch = (cls: string, text: string): string => `<span><i class="${cls}"></i>${text}</span>`;
const markSwatch = (cls: string, shape: string, text: string): string =>
  `<span><svg viewBox="-6 -6 12 12"><${shape} class="mark ${cls}"/></svg>${text}</span>`;

const legend = [
  swatch('ready-True', 'Ready=True'),
  swatch('ready-False', 'Ready=False'),
  swatch('ready-Unknown', 'Ready=Unknown'),
  swatch('taint-NoSchedule', 'NoSchedule taint'),
  swatch('taint-NoExecute', 'NoExecute taint'),
  markSwatch('eviction', 'path d="M-4 -4h8l-4 6.4z"', 'pods evicted'),
  markSwatch('podNotReady', 'circle r="3.2"', 'pods marked NotReady'),
  markSwatch('action', 'path d="M0 -4.5l4.5 4.5l-4.5 4.5l-4.5 -4.5z"', 'scenario action'),
  swatch('zstate-Normal', 'zone Normal'),
  swatch('zstate-PartialDisruption', 'PartialDisruption'),
  swatch('zstate-FullDisruption', 'FullDisruption'),
  swatch('rate-line', 'NoExecute limiter rate'),
].join('');

function table(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  numeric: ReadonlySet<number> = new Set(),
): string {
  const head = headers
    .map((h, i) => `<th${numeric.has(i) ? ' class="num"' : ''}>${escapeXml(h)}</th>`)
    .join('');
  const body = rows
    .map(
      (row) =>
        `<tr>${row.map((cell, i) => `<td${numeric.has(i) ? ' class="num"' : ''}>${cell}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

const zoneText = (zone: string): string => escapeXml(zone === '' ? '""' : zone);
const taintText = (t: { readonly key: string; readonly effect: string }): string =>
  `${t.key.replace(/^node\.kubernetes\.io\//, '')}:${t.effect}`;

/** The text summary's data: zones, then every node not Ready=True or tainted, then the evictions. */
function summarySection(summary: SummaryRecord & { readonly t: number; readonly time: string }): string {
  const out: string[] = [
    `<h2 id="summary">At ${formatDuration(summary.t * 1000)} (${escapeXml(summary.time)})</h2>`,
  ];
  const nodesIn = new Map<string, (typeof summary.nodes)[number][]>();
  for (const node of summary.nodes) nodesIn.set(node.zone, [...(nodesIn.get(node.zone) ?? []), node]);
  const zones = [...new Set([...summary.zones.map((z) => z.zone), ...nodesIn.keys()])].sort(naturalCompare);
  const byZone = new Map(summary.zones.map((z) => [z.zone, z]));
  out.push(
    table(
      ['zone', 'state', 'size', 'unhealthy', 'nodes', 'not Ready=True', 'tainted'],
      zones.map((zone) => {
        const z = byZone.get(zone);
        const nodes = nodesIn.get(zone) ?? [];
        return [
          zoneText(zone),
          z === undefined ? '-' : `<span class="${z.state}">${z.state}</span>`,
          String(z?.size ?? 0),
          String(z?.unhealthy ?? 0),
          String(nodes.length),
          String(nodes.filter((node) => node.ready !== 'True').length),
          String(nodes.filter((node) => node.taints.length > 0).length),
        ];
      }),
      new Set([2, 3, 4, 5, 6]),
    ).replace(/<td>(<span class="(\w+)">)/g, '<td class="$2">$1'),
  );
  const marked = summary.nodes
    .filter((node) => node.ready !== 'True' || node.taints.length > 0)
    .sort((a, b) => naturalCompare(a.zone, b.zone) || naturalCompare(a.node, b.node));
  const rest = summary.nodes.length - marked.length;
  const nodeTable = table(
    ['node', 'zone', 'ready', 'taints'],
    marked.map((node) => [
      escapeXml(node.node),
      zoneText(node.zone),
      node.ready === '' ? 'no Ready' : node.ready,
      escapeXml(node.taints.length === 0 ? '-' : node.taints.map(taintText).join(', ')),
    ]),
  );
  if (marked.length === 0) out.push(`<p>Every node is Ready=True with no taint.</p>`);
  else if (marked.length <= 100) out.push(nodeTable);
  else
    out.push(
      `<details><summary>${marked.length.toLocaleString('en-US')} nodes not Ready=True or tainted</summary>${nodeTable}</details>`,
    );
  if (rest > 0 && marked.length > 0) {
    out.push(
      `<p class="note">The other ${rest.toLocaleString('en-US')} node${rest === 1 ? ' is' : 's are'} Ready=True with no taint.</p>`,
    );
  }
  out.push(`<p>Pods evicted: <b>${summary.evictions}</b></p>`);
  if (summary.deliveries !== undefined) {
    const d = summary.deliveries;
    out.push(
      `<p>Chaos: ${d.deliveries} deliveries, ${d.failures} failed, ${d.deadLettered} dead-lettered.</p>`,
    );
  }
  if (summary.agreement !== undefined) {
    const a = summary.agreement;
    const share = a.decisions === 0 ? 100 : Math.round((100 * a.agreed) / a.decisions);
    out.push(
      `<p id="agreement">Agreement with the cluster's controller: <b>${a.agreed} of ${a.decisions}</b> decisions (${share}%), ` +
        `${a.disagreed} disagreed; median lag ${formatDuration(a.medianLagMs)}, largest ${formatDuration(a.maxLagMs)}.</p>`,
    );
  }
  return out.join('\n');
}

function recordObject(line: TimelineLine): string {
  switch (line.kind) {
    case 'NodeCondition':
    case 'TaintAdded':
    case 'TaintRemoved':
      return `node/${line.node}`;
    case 'PodNotReady':
    case 'PodDeleted':
      return `pod/${line.pod}`;
    case 'ZoneState':
      return `zone/${line.zone === '' ? '""' : line.zone}`;
    case 'Event':
      return line.object;
    case 'Summary':
      return '';
  }
}

function timelineSection(lines: readonly TimelineLine[]): string {
  const records = lines.filter((l) => l.kind !== 'Summary');
  if (records.length === 0) return '<h2>Timeline</h2><p>The controller did nothing to the cluster.</p>';
  const shown = records.slice(0, TimelineRowsShown);
  const rows = shown.map((l) => [
    formatDuration(l.t * 1000),
    l.kind,
    escapeXml(recordObject(l)),
    escapeXml(recordDetail(l)),
  ]);
  const more =
    records.length > shown.length
      ? `<p class="note">The first ${shown.length.toLocaleString('en-US')} of ${records.length.toLocaleString('en-US')} records; all of them: <code>nlc simulate --json</code>.</p>`
      : '';
  return `<details id="records"><summary>Timeline: ${records.length.toLocaleString('en-US')} records</summary>${table(['t', 'what', 'object', 'detail'], rows, new Set([0]))}${more}</details>`;
}

/** JSON inside a <script> element: `<` escaped so no text can close the element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/**
 * The whole HTML document of a run's report.
 *
 * @example
 * await writeFile('out.html', renderReportPage(buildReportModel(run), result.lines));
 */
export function renderReportPage(model: ReportModel, lines: readonly TimelineLine[]): string {
  const c = model.counts;
  const plural = (count: number, what: string): string =>
    `${count.toLocaleString('en-US')} ${what}${count === 1 ? '' : 's'}`;
  const facts = [
    `${formatDuration(model.duration * 1000)} of virtual time`,
    c.lanes < c.nodes
      ? `${plural(c.nodes, 'node')} (${c.lanes.toLocaleString('en-US')} drawn: the others were Ready=True throughout and nothing was done to them)`
      : plural(c.nodes, 'node'),
    plural(c.pods, 'pod'),
    `${plural(c.evictions, 'pod')} evicted`,
    plural(c.records, 'record'),
  ];
  const summary = lines.find((l): l is TimelineLine & SummaryRecord => l.kind === 'Summary');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeXml(model.name === '' ? 'nlc simulate report' : model.name)} · nlc simulate</title>
<style>${style}</style>
</head>
<body>
<h1>${escapeXml(model.name === '' ? 'nlc simulate' : model.name)}</h1>
<p class="facts">${facts.map(escapeXml).join(' · ')}. Hover over anything for what happened and why.</p>
<div class="legend">${legend}</div>
<div class="chart">
${renderTimelineSvg(model)}
</div>
${summary === undefined ? '' : summarySection(summary)}
${timelineSection(lines)}
<div id="tip" hidden></div>
<script type="application/json" id="report-data">${scriptJson({
    texts: model.texts,
    lanes: model.zones.flatMap((z) => z.nodes.map((l) => [l.node, l.zone, l.notes.flat()])),
  })}</script>
<script>${script}</script>
</body>
</html>
`;
}
