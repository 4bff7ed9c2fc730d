// `nlc agreement`: how far this controller, run in shadow mode (dryRun) beside a cluster's own
// NodeLifecycleController, agrees with it. Our side is each node's Decisions trail (the dry-run writes);
// theirs is what the functions recorded of the cluster's controller in shadow mode (source `cluster`):
// node-taints its Ready=Unknown marks and node-controller taints added and removed, pod-processing the
// pods it marked NotReady and the taint evictions it began. shared/agreement.ts matches them.
import { Command } from 'commander';
import { z } from 'zod';
import {
  AgreementKinds,
  actionsFromClusterDecisions,
  actionsFromDecisions,
  ClusterSource,
  matchActions,
  type AgreementKind,
  type AgreementRow,
  type AgreementVersions,
} from '../../shared/agreement.js';
import { minorOfServerVersion } from '../../shared/domain/upstreamVersion.js';
import { durationSchema, formatDuration } from '../../shared/duration.js';
import type { ClusterMeta, StoredDecision } from '../../shared/ports/stores.js';
import { parseOptions } from '../errors.js';
import {
  listed,
  versionLine,
  type AgreementControllerView,
  type AgreementRowView,
  type AgreementView,
} from './agreementView.js';
import {
  OUTPUT_FLAGS,
  OUTPUT_HELP,
  OutputFormatSchema,
  isoTime,
  renderTable,
  stdoutPaint,
  writeOutput,
  type CliIo,
  type Column,
  type CommandContext,
  type Paint,
} from '../../shared/present/output.js';
import {
  addStoreOptions,
  resolveTarget,
  StoreOptionsSchema,
  withEnvDefaults,
  withStores,
  type RawStoreOptions,
} from '../stores.js';

/** What the functions record of the cluster's own controller, and so what is compared. */
export const ComparedKinds: readonly AgreementKind[] = AgreementKinds;

/** Decisions read per node, newest first: a day of a flapping node's trail fits. */
const TrailLimit = 1000;

export const AgreementOptionsSchema = StoreOptionsSchema.safeExtend({
  since: durationSchema('positive').default(24 * 3_600_000),
  tolerance: durationSchema('positive').default(5_000),
  output: OutputFormatSchema,
  /** Also write the agreement as one self-contained HTML page. */
  report: z.string().min(1, 'expected a file name, e.g. agreement.html').optional(),
});
export type AgreementOptions = z.output<typeof AgreementOptionsSchema>;

// ---------------------------------------------------------------------------------------------------
// The report (`-o json|yaml`: a public interface)

export type { AgreementControllerView, AgreementRowView, AgreementView };

const rowView = (r: AgreementRow): AgreementRowView => ({
  kind: r.kind,
  subject: r.subject,
  detail: r.detail,
  ours: isoTime(r.ours),
  theirs: isoTime(r.theirs),
  lagMs: r.lagMs ?? null,
  agreed: r.agreed,
  why: r.why ?? null,
});

export interface AgreementInputs {
  readonly since: number;
  readonly toleranceMs: number;
  /** The cluster row: this controller's minor, mode and grace period, the cluster's version. */
  readonly meta?: ClusterMeta;
  /** Nodes this controller keeps health for. */
  readonly tracked?: ReadonlySet<string>;
}

/** Both minors, when the cluster row has both: the why of a version difference. */
function versionsOf(meta: ClusterMeta | undefined): AgreementVersions | undefined {
  const ours = meta?.emulationVersion === undefined ? undefined : minorOfServerVersion(meta.emulationVersion);
  const theirs = meta?.clusterVersion === undefined ? undefined : minorOfServerVersion(meta.clusterVersion);
  if (ours === undefined || theirs === undefined) return undefined;
  return {
    ours,
    theirs,
    // The cluster's own controller's flags are not shown by a managed control plane: compared with the
    // default of its minor.
    ...(meta?.nodeMonitorGracePeriodMs !== undefined && { ourGracePeriodMs: meta.nodeMonitorGracePeriodMs }),
  };
}

/**
 * Nodes the cluster's controller acted on that this controller has no trace of: no health row and no
 * decision of its own in the trail.
 */
function nodesNeverSeen(trails: readonly StoredDecision[], tracked: ReadonlySet<string>): string[] {
  const ours = new Set(trails.filter((d) => d.source !== ClusterSource).map((d) => d.node));
  const acted = new Set(trails.filter((d) => d.source === ClusterSource).map((d) => d.node));
  return [...acted].filter((node) => !tracked.has(node) && !ours.has(node)).sort();
}

/**
 * The report over the trails of every node: ours (dry-run writes) against the cluster's recorded
 * actions, from `since` on.
 *
 * @example
 * buildAgreement('prod', trails, { since: now - 3_600_000, toleranceMs: 5_000, meta }).agreed;
 */
export function buildAgreement(
  cluster: string,
  trails: readonly StoredDecision[],
  { since, toleranceMs, meta, tracked = new Set() }: AgreementInputs,
): AgreementView {
  const recent = trails.filter((d) => d.at >= since);
  const compared = new Set<string>(ComparedKinds);
  const ours = actionsFromDecisions(recent).filter((a) => compared.has(a.kind));
  // Over the whole trail, then cut: a redelivered record is the same action even when the first
  // delivery is older than `since`.
  const theirs = actionsFromClusterDecisions(trails).filter((a) => a.at >= since && compared.has(a.kind));
  const neverSeen = nodesNeverSeen(recent, tracked);
  const versions = versionsOf(meta);
  const report = matchActions(ours, theirs, {
    toleranceMs,
    ...(versions !== undefined && { versions }),
    nodesNeverSeen: new Set(neverSeen),
  });
  const controller: AgreementControllerView = {
    emulationVersion: meta?.emulationVersion ?? null,
    mode: meta?.dryRun === undefined ? null : meta.dryRun ? 'shadow' : 'active',
    nodeMonitorGracePeriodMs: meta?.nodeMonitorGracePeriodMs ?? null,
  };
  return {
    cluster,
    since: new Date(since).toISOString(),
    toleranceMs,
    compared: ComparedKinds,
    decisions: report.decisions,
    agreed: report.agreed,
    disagreed: report.disagreed,
    medianLagMs: report.medianLagMs,
    maxLagMs: report.maxLagMs,
    byKind: report.byKind,
    controller,
    clusterVersion: meta?.clusterVersion ?? null,
    nodesNeverSeen: neverSeen,
    worst: report.worst.map(rowView),
    rows: report.rows.map(rowView),
  };
}

// ---------------------------------------------------------------------------------------------------
// Output

const COLUMNS: readonly Column<AgreementRowView>[] = [
  { header: 'kind', value: (r) => r.kind },
  { header: 'subject', value: (r) => r.subject },
  { header: 'taint', value: (r) => (r.detail === '' ? '-' : r.detail) },
  { header: 'ours', value: (r) => r.ours ?? '-' },
  { header: 'theirs', value: (r) => r.theirs ?? '-' },
  {
    header: 'lag',
    value: (r) => (r.lagMs === null ? '-' : `${r.lagMs < 0 ? '-' : ''}${formatDuration(Math.abs(r.lagMs))}`),
  },
  {
    header: 'agreed',
    value: (r) => (r.agreed ? 'yes' : 'no'),
    colour: (r) => (r.agreed ? 'green' : 'red'),
  },
  { header: 'why', value: (r) => r.why ?? '' },
];

export function renderAgreement(view: AgreementView, wide: boolean, paint: Paint): string {
  const share = view.decisions === 0 ? 0 : Math.round((100 * view.agreed) / view.decisions);
  const kinds = ComparedKinds.map((k) => `${k} ${view.byKind[k].agreed}/${view.byKind[k].decisions}`).join(
    ', ',
  );
  const head = [
    view.decisions === 0
      ? // No evidence either way: a share of 100 % would claim agreement nothing showed.
        `${paint('bold', `${view.cluster}:`)} no decision to compare since ${view.since}`
      : `${paint('bold', `${view.cluster}:`)} ${view.agreed} of ${view.decisions} decisions agree (${share}%) since ${view.since}; ` +
        `median lag ${formatDuration(view.medianLagMs)}, largest ${formatDuration(view.maxLagMs)} (within ${formatDuration(view.toleranceMs)} agrees)`,
    `by kind: ${kinds}`,
    versionLine(view),
    ...(view.controller.mode === 'active'
      ? [
          paint(
            'yellow',
            "this controller runs active (dryRun false): the cluster's own controller's actions are recorded only in shadow mode",
          ),
        ]
      : []),
    ...(view.nodesNeverSeen.length > 0
      ? [
          paint(
            'yellow',
            `the cluster's controller acted on ${view.nodesNeverSeen.length} node(s) this controller has no trace of: ${listed(view.nodesNeverSeen)}`,
          ),
        ]
      : []),
  ].join('\n');
  if (view.rows.length === 0) return `${head}\n`;
  // The table: every row with -o wide, else the disagreements and the worst lags.
  const shown = wide ? view.rows : view.rows.filter((r) => !r.agreed || view.worst.includes(r));
  return `${head}\n\n${renderTable(COLUMNS, shown, { wide, paint })}`;
}

/**
 * Reads every node's trail and prints the agreement. Returns the exit code.
 *
 * @example
 * await runAgreement(parseOptions(AgreementOptionsSchema, { since: '1h' }), io); // 0
 */
export async function runAgreement(options: AgreementOptions, io: CliIo): Promise<number> {
  // Checked before reading every trail: a report that cannot be written fails at once (exit 1).
  const reportFiles =
    options.report === undefined ? undefined : await import('../../local/simulate/report/index.js');
  if (options.report !== undefined) await reportFiles?.checkReportFile(options.report);
  const target = await resolveTarget(options, io.env);
  const since = Date.now() - options.since;
  const { trails, meta, tracked } = await withStores(target, io.env, async (stores) => {
    const loaded = await stores.controllerState.load(target.cluster);
    const names = [...new Set([...loaded.nodes.keys(), ...loaded.state.nodeHealth.keys()])].sort();
    const all: StoredDecision[] = [];
    for (const name of names) {
      const trail = await stores.decisions.query(target.cluster, name, {
        limit: TrailLimit,
        newestFirst: true,
      });
      all.push(...trail);
    }
    return { trails: all, meta: loaded.meta, tracked: new Set(loaded.state.nodeHealth.keys()) };
  });
  const view = buildAgreement(target.cluster, trails, {
    since,
    toleranceMs: options.tolerance,
    meta,
    tracked,
  });
  await writeOutput(io, options.output, view, () =>
    renderAgreement(view, options.output === 'wide', stdoutPaint(io)),
  );
  if (options.report !== undefined && reportFiles !== undefined) {
    const { renderAgreementPage } = await import('./agreementReport.js');
    await reportFiles.writeReport(options.report, renderAgreementPage(view));
    io.stderr.write(`report written to ${options.report}\n`);
  }
  return 0;
}

export const AGREEMENT_HELP = `
Run this controller in shadow mode (dryRun) beside the cluster's own NodeLifecycleController (a managed
control plane keeps its own: docs/deploy.md). In shadow mode node-taints records what the cluster's
controller does to each node (source "cluster": Ready=Unknown marks, not-ready/unreachable taints added
and removed) and pod-processing what it does to pods (marked NotReady on a node that is not Ready;
taint evictions begun, told by their DisruptionTarget condition, so from v1.26) beside this
controller's dry-run decisions. This command matches the two per node or pod, in time order: a pair
within --tolerance (default 5s, one monitor period) agrees; LAG is ours minus theirs. The first line
sums it up; the table lists the disagreements and the largest lags (-o wide: every row).

WHY says what the trail can tell: the lag and its direction; a version difference (the monitor records
the minor this controller emulates and the cluster's /version, read hourly, on the cluster row), with
the upstream change that accounts for the row where one does for certain; this controller's grace
period against the default of the cluster's minor; a node this controller never saw (no health row,
no decision of its own). A controller running active records nothing of the cluster's: the header says
so.

-o json|yaml: cluster, since, toleranceMs, compared, decisions, agreed, disagreed, medianLagMs,
maxLagMs, byKind, controller {emulationVersion, mode, nodeMonitorGracePeriodMs}, clusterVersion,
nodesNeverSeen[], worst[], rows[] {kind, subject, detail, ours, theirs, lagMs, agreed, why}.

--report FILE also writes it as one self-contained HTML page (the summary, the totals per kind, the
disagreements, the largest lags, every decision): evidence to pass on before switching to mode=active.

Examples:
  nlc agreement --stage prod --region eu-west-1 --since 6h
  nlc agreement -o json                      # next to a running npm start
  nlc agreement --since 7d --report agreement.html`;

export function agreementCommand(ctx: CommandContext): Command {
  return addStoreOptions(new Command('agreement'))
    .description("how far the shadow's decisions agree with the cluster's own controller")
    .option('--since <duration>', 'only decisions this recent (like 1h, 30m)', '24h')
    .option('--tolerance <duration>', 'largest lag that agrees', '5s')
    .option(OUTPUT_FLAGS, OUTPUT_HELP)
    .option('--report <file>', 'also write a self-contained HTML page')
    .addHelpText('after', AGREEMENT_HELP)
    .action(
      async (
        opts: RawStoreOptions & { since?: string; tolerance?: string; output?: string; report?: string },
      ) => {
        const options = parseOptions(AgreementOptionsSchema, withEnvDefaults(opts, ctx.io.env));
        ctx.exitCode = await runAgreement(options, ctx.io);
      },
    );
}
