// The report's picture: one inline SVG, time left to right (virtual time, 0 … duration), a lane per zone
// (its state, its NoExecute limiter's rate) followed by the lanes of its nodes (Ready status, taints,
// evictions). Geometry is fixed and written into the SVG (`data-x0`, `data-x1`, `data-duration`), so a
// reader (or a test) can map an instant to its x. Above ~400 node lanes the lanes get compact (no
// names, thinner bars; the name is on hover), so a 5,000-node run stays a picture, not a scroll.
import { formatDuration } from '../../../shared/duration.js';
import { formatRate, type Mark, type NodeLane, type ReportModel, type ZoneLane } from './model.js';

export const Geometry = Object.freeze({
  width: 1280,
  /** x of t = 0. */
  x0: 190,
  /** x of t = duration. */
  x1: 1256,
  axis: 30,
  actionLane: 20,
  zoneLane: 46,
  nodeLane: 22,
  compactNodeLane: 7,
  quietRow: 18,
  /** More node lanes than this: compact lanes. */
  compactAbove: 400,
});

/** Escapes text for HTML and SVG, in content and in quoted attributes. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A coordinate, to a tenth of a pixel: short and the same on every run. */
const n = (v: number): string => String(Math.round(v * 10) / 10);

const niceSteps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

/** The axis step (seconds): the smallest nice step giving at most 12 intervals. */
export function tickStep(duration: number): number {
  return niceSteps.find((step) => duration / step <= 12) ?? Math.ceil(duration / 12);
}

function zoneName(zone: string): string {
  return zone === '' ? '""' : zone;
}

function tip(index: number): string {
  return ` data-tip="${index}"`;
}

function markShape(mark: Mark, x: number, y: number, size: number, hover: string): string {
  const s = size;
  switch (mark.kind) {
    case 'eviction': // a triangle pointing down, onto the bar
      return `<path class="mark eviction" d="M${n(x - s)} ${n(y - s)}h${n(2 * s)}l${n(-s)} ${n(1.6 * s)}z"${hover}/>`;
    case 'podNotReady':
      return `<circle class="mark podNotReady" cx="${n(x)}" cy="${n(y)}" r="${n(s * 0.7)}"${hover}/>`;
    case 'action': // a diamond
      return `<path class="mark action" d="M${n(x)} ${n(y - s)}l${n(s)} ${n(s)}l${n(-s)} ${n(s)}l${n(-s)} ${n(-s)}z"${hover}/>`;
  }
}

/**
 * The timeline picture of a model.
 *
 * @example
 * const svg = renderTimelineSvg(buildReportModel(run));
 */
export function renderTimelineSvg(model: ReportModel): string {
  const { x0, x1, width } = Geometry;
  const duration = model.duration > 0 ? model.duration : 1;
  const x = (t: number): number => x0 + (Math.min(Math.max(t, 0), duration) / duration) * (x1 - x0);
  const lanes = model.zones.reduce((sum, z) => sum + z.nodes.length, 0);
  const compact = lanes > Geometry.compactAbove;
  const laneH = compact ? Geometry.compactNodeLane : Geometry.nodeLane;
  const maxRate = Math.max(0, ...model.zones.flatMap((z) => z.rates.map((r) => r.value)));
  const body: string[] = [];
  let y = Geometry.axis;

  // --- the scenario's actions ----------------------------------------------------------------------
  body.push(
    `<g class="lane actions" transform="translate(0 ${y})"><text class="label" x="8" y="14">scenario</text>`,
    ...model.actions.map((m) => markShape(m, x(m.t), 10, 5, tip(m.tip))),
    '</g>',
  );
  y += Geometry.actionLane;

  const zoneLane = (zone: ZoneLane): void => {
    const h = Geometry.zoneLane;
    const parts: string[] = [
      `<g class="lane zone" data-zone="${escapeXml(zone.zone)}" transform="translate(0 ${y})">`,
      `<rect class="zone-bg" x="0" y="0" width="${width}" height="${h}"/>`,
      `<text class="label zone-label" x="8" y="17">${escapeXml(zoneName(zone.zone))}</text>`,
      `<text class="label zone-sub" x="8" y="31">${zone.nodes.length + zone.quiet} nodes</text>`,
    ];
    for (const s of zone.states) {
      const w = x(s.to) - x(s.from);
      parts.push(
        `<rect class="zstate zstate-${s.value}" x="${n(x(s.from))}" y="4" width="${n(w)}" height="16" data-t0="${s.from}"${tip(s.tip)}/>`,
      );
      if (w > s.value.length * 6.6 + 8) {
        parts.push(`<text class="zstate-text" x="${n(x(s.from) + 5)}" y="16">${s.value}</text>`);
      }
    }
    // The rate as a step line under the state, scaled to the largest rate of the run, its value below.
    const rateY = (qps: number): number => 32 - (maxRate === 0 ? 0 : (qps / maxRate) * 8);
    for (const r of zone.rates) {
      const w = x(r.to) - x(r.from);
      parts.push(
        `<rect class="rate-hover" x="${n(x(r.from))}" y="21" width="${n(w)}" height="${h - 21}"${tip(r.tip)}/>`,
        `<path class="rate" d="M${n(x(r.from))} ${n(rateY(r.value))}H${n(x(r.to))}"/>`,
      );
      const label = formatRate(r.value);
      if (w > label.length * 6 + 8) {
        parts.push(`<text class="rate-text" x="${n(x(r.from) + 4)}" y="${h - 3}">${escapeXml(label)}</text>`);
      }
    }
    for (let i = 1; i < zone.rates.length; i++) {
      const prev = zone.rates[i - 1];
      const next = zone.rates[i];
      if (prev === undefined || next === undefined || prev.to !== next.from) continue;
      parts.push(
        `<path class="rate" d="M${n(x(next.from))} ${n(rateY(prev.value))}V${n(rateY(next.value))}"/>`,
      );
    }
    parts.push('</g>');
    body.push(parts.join(''));
    y += h;
  };

  // Node lanes' hover texts are made by the page's script from the lane's notes (`data-lane` indexes
  // them) and the element's own data: its instant (data-t0), its end (data-t1), its count (data-n).
  const nodeLane = (lane: NodeLane, index: number, nth: number): void => {
    const h = laneH;
    const bar = compact ? { y: 0.5, h: 4 } : { y: 4, h: 10 };
    const taintY = compact
      ? { NoSchedule: 4.5, PreferNoSchedule: 4.5, NoExecute: 4.5 }
      : { NoSchedule: 15, PreferNoSchedule: 15, NoExecute: 18.5 };
    const taintH = compact ? 2 : 3;
    const parts: string[] = [
      `<g class="lane node" data-node="${escapeXml(lane.node)}" data-lane="${index}" transform="translate(0 ${n(y)})">`,
      `<rect class="node-bg" x="0" y="0" width="${width}" height="${h}" data-h/>`,
    ];
    // Compact lanes are too thin for a name each: every fifth lane of a zone is named.
    if (compact && nth % 5 === 0) {
      parts.push(
        `<text class="label node-label compact-label" x="20" y="7" data-h>${escapeXml(lane.node)}</text>`,
      );
    }
    if (!compact)
      parts.push(`<text class="label node-label" x="20" y="14" data-h>${escapeXml(lane.node)}</text>`);
    for (const s of lane.ready) {
      parts.push(
        `<rect class="ready ready-${s.value === '' ? 'None' : s.value}" x="${n(x(s.from))}" y="${bar.y}" width="${n(x(s.to) - x(s.from))}" height="${bar.h}" data-t0="${s.from}" data-t1="${s.to}" data-h/>`,
      );
    }
    // NoExecute last: drawn over NoSchedule where compact lanes share one row.
    const order = { PreferNoSchedule: 0, NoSchedule: 1, NoExecute: 2 } as const;
    for (const t of [...lane.taints].sort((a, b) => order[a.value] - order[b.value])) {
      parts.push(
        `<rect class="taint taint-${t.value}" x="${n(x(t.from))}" y="${taintY[t.value]}" width="${n(Math.max(1, x(t.to) - x(t.from)))}" height="${taintH}" data-t0="${t.from}" data-t1="${t.to}" data-key="${escapeXml(t.key)}" data-h/>`,
      );
    }
    for (const m of lane.marks) {
      const hover = ` data-t0="${m.t}" data-n="${m.count}" data-h`;
      parts.push(compact ? markShape(m, x(m.t), 2.5, 2.5, hover) : markShape(m, x(m.t), 9, 5, hover));
    }
    parts.push('</g>');
    body.push(parts.join(''));
    y += h;
  };

  let index = 0;
  for (const zone of model.zones) {
    zoneLane(zone);
    zone.nodes.forEach((lane, nth) => {
      nodeLane(lane, index++, nth);
    });
    if (zone.quiet > 0) {
      body.push(
        `<text class="quiet" x="20" y="${n(y + 13)}">+ ${zone.quiet.toLocaleString('en-US')} more node${zone.quiet === 1 ? '' : 's'}: Ready=True throughout, nothing done to ${zone.quiet === 1 ? 'it' : 'them'}</text>`,
      );
      y += Geometry.quietRow;
    }
  }
  const height = y + 6;

  // --- the time axis and its grid, behind everything -------------------------------------------------
  const step = tickStep(duration);
  const axis: string[] = [`<g class="axis">`];
  for (let t = 0; t <= duration + 1e-9; t += step) {
    axis.push(
      `<path class="grid" d="M${n(x(t))} ${Geometry.axis - 6}V${n(height)}"/>`,
      `<text class="tick" x="${n(x(t))}" y="${Geometry.axis - 10}">${formatDuration(t * 1000)}</text>`,
    );
  }
  if (duration % step !== 0) {
    axis.push(
      `<path class="grid end" d="M${n(x1)} ${Geometry.axis - 6}V${n(height)}"/>`,
      `<text class="tick end" x="${n(x1)}" y="${Geometry.axis - 10}">${formatDuration(duration * 1000)}</text>`,
    );
  }
  axis.push(`<text class="axis-title" x="8" y="${Geometry.axis - 10}">virtual time</text></g>`);

  return [
    `<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${n(height)}" viewBox="0 0 ${width} ${n(height)}" data-x0="${x0}" data-x1="${x1}" data-duration="${model.duration}"${compact ? ' class="compact"' : ''} role="img" aria-label="timeline of ${escapeXml(model.name)}">`,
    axis.join(''),
    ...body,
    '</svg>',
  ].join('\n');
}
