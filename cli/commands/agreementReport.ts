// `nlc agreement --report out.html`: the agreement as one self-contained page for people who will not
// read JSON (an operator's evidence before switching a managed cluster to this controller): the summary,
// the totals per kind, the worst lags and every row, disagreements first. No script, no external asset:
// it opens from a mail attachment or an artifact store as it is.
import { formatDuration } from '../../shared/duration.js';
import { escapeXml } from '../../local/simulate/report/timelineSvg.js';
import { listed, versionLine, type AgreementRowView, type AgreementView } from './agreementView.js';

const Style = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #1b1f24; }
h1 { font-size: 1.4rem; margin-bottom: .2rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
.muted { color: #57606a; } .ok { color: #1a7f37; } .bad { color: #cf222e; }
table { border-collapse: collapse; width: 100%; margin-top: .5rem; }
th, td { text-align: left; padding: .25rem .6rem; border-bottom: 1px solid #d0d7de; vertical-align: top; }
th { background: #f6f8fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.disagreed td { background: #fff5f5; }
.summary { font-size: 1.15rem; margin: .8rem 0; }`;

const lag = (ms: number | null): string =>
  ms === null ? '–' : `${ms < 0 ? '−' : ms > 0 ? '+' : ''}${formatDuration(Math.abs(ms))}`;

function rowsTable(rows: readonly AgreementRowView[]): string {
  if (rows.length === 0) return '<p class="muted">None.</p>';
  const body = rows
    .map(
      (r) =>
        `<tr class="${r.agreed ? 'agreed' : 'disagreed'}"><td>${escapeXml(r.kind)}</td><td>${escapeXml(r.subject)}</td>` +
        `<td>${escapeXml(r.detail)}</td><td>${escapeXml(r.ours ?? '–')}</td><td>${escapeXml(r.theirs ?? '–')}</td>` +
        `<td class="num">${escapeXml(lag(r.lagMs))}</td><td class="${r.agreed ? 'ok' : 'bad'}">${r.agreed ? 'yes' : 'no'}</td>` +
        `<td>${escapeXml(r.why ?? '')}</td></tr>`,
    )
    .join('\n');
  return `<table><thead><tr><th>kind</th><th>node or pod</th><th>detail</th><th>ours (shadow)</th><th>theirs (cluster)</th><th>lag</th><th>agreed</th><th>why</th></tr></thead>\n<tbody>\n${body}\n</tbody></table>`;
}

/** What limits the comparison: an active controller records nothing of theirs; nodes never seen. */
function notes(view: AgreementView): string {
  const lines = [
    ...(view.controller.mode === 'active'
      ? [
          "This controller runs active (dryRun false): the cluster's own controller's actions are recorded only in shadow mode.",
        ]
      : []),
    ...(view.nodesNeverSeen.length > 0
      ? [
          `The cluster's controller acted on ${view.nodesNeverSeen.length} node(s) this controller has no trace of: ${listed(view.nodesNeverSeen)}.`,
        ]
      : []),
  ];
  return lines.map((line) => `<p class="bad">${escapeXml(line)}</p>`).join('\n');
}

/**
 * The page for an agreement view (`buildAgreement`). Every value from the trail is escaped.
 *
 * @example
 * await writeFile('agreement.html', renderAgreementPage(view));
 */
export function renderAgreementPage(view: AgreementView, generatedAt: Date = new Date()): string {
  const share = view.decisions === 0 ? 100 : Math.round((100 * view.agreed) / view.decisions);
  const kinds = view.compared
    .map((k) => {
      const t = view.byKind[k];
      return `<tr><td>${escapeXml(k)}</td><td class="num">${t.decisions}</td><td class="num ok">${t.agreed}</td><td class="num ${t.disagreed > 0 ? 'bad' : ''}">${t.disagreed}</td></tr>`;
    })
    .join('\n');
  const disagreed = view.rows.filter((r) => !r.agreed);
  const title = `Shadow agreement — ${view.cluster}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(title)}</title><style>${Style}</style></head>
<body>
<h1>${escapeXml(title)}</h1>
<p class="muted">This controller in shadow mode (dryRun) against the cluster's own NodeLifecycleController, from ${escapeXml(view.since)}; generated ${escapeXml(generatedAt.toISOString())}. A pair within ${escapeXml(formatDuration(view.toleranceMs))} agrees; lag is ours minus theirs.</p>
<p class="summary"><b>${view.agreed} of ${view.decisions}</b> decisions agree (${share}%), <span class="${view.disagreed > 0 ? 'bad' : 'ok'}">${view.disagreed} disagreed</span>; median lag ${escapeXml(formatDuration(view.medianLagMs))}, largest ${escapeXml(formatDuration(view.maxLagMs))}.</p>
<p>${escapeXml(versionLine(view))}.</p>
${notes(view)}
<h2>By kind</h2>
<table><thead><tr><th>kind</th><th>decisions</th><th>agreed</th><th>disagreed</th></tr></thead><tbody>
${kinds}
</tbody></table>
<h2>Disagreements (${disagreed.length})</h2>
${rowsTable(disagreed)}
<h2>Largest lags</h2>
${rowsTable(view.worst)}
<h2>Every decision (${view.rows.length})</h2>
${rowsTable(view.rows)}
</body></html>
`;
}
