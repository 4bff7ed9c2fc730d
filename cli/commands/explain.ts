// `nlc explain NODE`: why the controller did what it did to a node. Prints the Decisions trail
// (DecisionStore.query, newest first) and, on top, a one-line verdict built only from that trail:
// the NoExecute taint in force and who placed it, the Ready status the controller wrote and why, and
// the queueing that came before. Nothing in the verdict is inferred beyond what a row says.
import { Command } from 'commander';
import { z } from 'zod';
import {
  ClusterSubject,
  formatPodRef,
  formatTaintInput,
  massDecisionAbout,
  podOfDecision,
  readWriteDecision,
  zoneSubject,
  zoneSubjectOfLabel,
  type TaintInput,
} from '../../shared/decisionContract.js';
import { NodeReady, type Node } from '../../shared/domain/types.js';
import { getZoneKey } from '../../shared/domain/zones.js';
import type { DecisionStore, JsonValue, StoredDecision } from '../../shared/ports/stores.js';
import { NodeNotFoundError, parseOptions } from '../errors.js';
import { closeNames } from '../../shared/present/names.js';
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
import { resultKind } from '../../shared/present/present.js';
import {
  addStoreOptions,
  resolveTarget,
  StoreOptionsSchema,
  withEnvDefaults,
  withStores,
  type RawStoreOptions,
} from '../stores.js';

export const ExplainOptionsSchema = StoreOptionsSchema.safeExtend({
  node: z.string().min(1, 'expected a node name'),
  limit: z.coerce
    .number({ error: 'expected a whole number of decisions, 1 to 1000' })
    .int('expected a whole number of decisions, 1 to 1000')
    .min(1, 'expected a whole number of decisions, 1 to 1000')
    .max(1000, 'expected a whole number of decisions, 1 to 1000')
    .default(30),
  output: OutputFormatSchema,
});
export type ExplainOptions = z.output<typeof ExplainOptionsSchema>;

// ---------------------------------------------------------------------------------------------------
// The report (`-o json|yaml`: a public interface)

export interface DecisionView {
  /** The row's sort key: `<ISO time>#<source>#<index>`. */
  readonly id: string;
  readonly at: string;
  readonly source: string;
  readonly what: string;
  /** The pod the decision was about (`namespace/name`), null for decisions about the node itself. */
  readonly pod: string | null;
  /**
   * `intended` (recorded before the write), `ok`, `dryRun`, or the failure (`NotFound: …`); for a
   * decision that is not a write, what came of it (`fires at …`), or null.
   */
  readonly result: string | null;
  readonly why: string;
  readonly inputs: Readonly<Record<string, JsonValue>> | null;
  readonly dryRun: boolean;
}

export interface ExplainReport {
  readonly cluster: string;
  readonly node: string;
  readonly verdict: string;
  /** Newest first. */
  readonly decisions: readonly DecisionView[];
}

// ---------------------------------------------------------------------------------------------------
// The verdict

// `what` of the monitor's queue decisions (docs/state.md "Decisions"; upstream markNodeForTainting).
const ENQUEUE = new Set(['enqueue', 'markNodeForTainting']);
const DEQUEUE = new Set(['dequeue', 'markNodeAsReachable']);

/** "tryUpdateNodeHealth: no heartbeat within …" → "no heartbeat within …": the function is in SOURCE. */
function reason(why: string): string {
  return why.replace(/^[A-Za-z]+: /, '');
}

// A write that took effect (or would have, in shadow mode); `ok (already so)` too: the state is as asked.
const wrote = (d: StoredDecision): boolean => {
  const kind = resultKind(d.result);
  return kind === 'ok' || kind === 'dryRun';
};
const failed = (d: StoredDecision): boolean => resultKind(d.result) === 'failed';
// The outcome row of a cluster write (not its `intended` row, not a decision that writes nothing).
const writeOutcome = (d: StoredDecision): boolean => wrote(d) || failed(d);
const when = (d: StoredDecision): string => isoTime(d.at) ?? '';

/**
 * One line from the trail (newest first): the NoExecute taint in force and why, else the last Ready
 * status the controller wrote, else the last decision; then the queueing, and a failed write if the
 * newest outcome is one.
 *
 * @example
 * verdict(trail) // 'tainted node.kubernetes.io/unreachable:NoExecute at … by drainer because Ready=Unknown since … (no heartbeat within the grace period (50s)); queued by monitor at …'
 */
export function verdict(node: string, newestFirst: readonly StoredDecision[]): string {
  if (newestFirst.length === 0)
    return `no decisions recorded for ${node} (rows expire 14 days after they are written)`;
  const trail = [...newestFirst].reverse();
  // Replay the trail: the controller's NoExecute taints, the Ready status it wrote, its queueing.
  const taints = new Map<string, StoredDecision>();
  let untainted: { taint: string; decision: StoredDecision } | undefined;
  let ready: { status: string; decision: StoredDecision } | undefined;
  let queued: StoredDecision | undefined;
  for (const d of trail) {
    // A write whose inputs this version cannot read (readWriteDecision) tells nothing, as one without inputs.
    const write = wrote(d) ? readWriteDecision(d) : undefined;
    const written = write?.ok === true ? write.value : undefined;
    if (written?.what === 'swapNodeTaints') {
      const noExecute = (list: readonly TaintInput[]): string[] =>
        list.filter((t) => t.effect === 'NoExecute').map(formatTaintInput);
      for (const taint of noExecute(written.inputs.remove)) {
        taints.delete(taint);
        untainted = { taint, decision: d };
      }
      for (const taint of noExecute(written.inputs.add)) taints.set(taint, d);
    } else if (written?.what === 'updateNodeStatus') {
      const status = written.inputs.conditions.find((c) => c.type === NodeReady)?.status;
      // The monitor writes Unknown only when the kubelet had posted something else since: a repeat is a
      // new episode. In shadow mode nothing is written, so the same decision repeats: keep the first.
      const repeat = d.dryRun === true && status === ready?.status;
      if (status !== undefined && !repeat) ready = { status, decision: d };
    } else if (ENQUEUE.has(d.what) && resultKind(d.result) !== 'intended' && !failed(d)) {
      queued = d;
    } else if (DEQUEUE.has(d.what) && !failed(d)) {
      queued = undefined;
    }
  }

  const parts: string[] = [];
  const because =
    ready === undefined
      ? ''
      : ` because Ready=${ready.status} since ${when(ready.decision)} (${reason(ready.decision.why)})`;
  const inForce = [...taints].sort(([, a], [, b]) => b.at - a.at)[0];
  if (inForce !== undefined) {
    const [taint, d] = inForce;
    parts.push(`tainted ${taint} at ${when(d)} by ${d.source}${because || ` (${reason(d.why)})`}`);
    if (queued !== undefined && queued.at <= d.at)
      parts.push(`queued by ${queued.source} at ${when(queued)}`);
  } else if (untainted !== undefined && (ready === undefined || untainted.decision.at >= ready.decision.at)) {
    // The controller never writes Ready=True (the kubelet does): an untaint after the Unknown is the recovery.
    const d = untainted.decision;
    parts.push(`untainted ${untainted.taint} at ${when(d)} by ${d.source} (${reason(d.why)})`);
  } else if (ready !== undefined && ready.status !== 'True') {
    parts.push(
      `Ready=${ready.status} since ${when(ready.decision)}, set by ${ready.decision.source} (${reason(ready.decision.why)})`,
    );
    if (queued !== undefined)
      parts.push(`queued for a NoExecute taint by ${queued.source} at ${when(queued)}`);
  } else {
    const last = newestFirst[0];
    if (last !== undefined) {
      parts.push(
        `no NoExecute taint in force; last decision: ${last.what} at ${when(last)} by ${last.source} (${reason(last.why)})`,
      );
    }
  }
  // Only a write can fail: `fires at …` (a scheduled pod deletion) or `cancelled` is no failure.
  const newestOutcome = newestFirst.find(writeOutcome);
  if (newestOutcome !== undefined && failed(newestOutcome)) {
    parts.push(
      `last write failed: ${newestOutcome.what} at ${when(newestOutcome)} (${newestOutcome.result ?? ''})`,
    );
  }
  const shadow = newestFirst.some((d) => d.dryRun === true) ? ' [dry run: decided, not written]' : '';
  return parts.join('; ') + shadow;
}

// ---------------------------------------------------------------------------------------------------
// Output

export function buildExplain(cluster: string, node: string, trail: readonly StoredDecision[]): ExplainReport {
  return {
    cluster,
    node,
    verdict: verdict(node, trail),
    decisions: trail.map((d) => ({
      id: d.id,
      at: isoTime(d.at) ?? '',
      source: d.source,
      what: d.what,
      pod: podRefOrNull(d),
      result: d.result ?? null,
      why: d.why,
      inputs: d.inputs ?? null,
      dryRun: d.dryRun === true,
    })),
  };
}

function podRefOrNull(d: StoredDecision): string | null {
  const pod = podOfDecision(d);
  return pod === undefined ? null : formatPodRef(pod);
}

function inputsCell(inputs: DecisionView['inputs']): string {
  if (inputs === null) return '-';
  return Object.entries(inputs)
    .map(([key, value]) => {
      if (!Array.isArray(value)) return `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`;
      return `${key}=${value.length === 0 ? '[]' : value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(',')}`;
    })
    .join(' ');
}

/** A row of the table: the decision, and whether a retry of its failed write then succeeded. */
export interface ExplainRow extends DecisionView {
  readonly retried: boolean;
}

/** How far apart a write's rows may be: its intended row, its outcome, and a retry within the pass. */
const SameWriteWindowMs = 60_000;

const sameWrite = (a: DecisionView, b: DecisionView): boolean =>
  a.source === b.source && a.what === b.what && a.pod === b.pod && a.dryRun === b.dryRun;

/**
 * The table's rows from a trail (newest first). Each write is recorded twice, `intended` before it and
 * its outcome after: without -o wide the intended row of a write whose outcome follows is folded into
 * it, so the rows are decisions. A failed write retried with success within the window (a 409 Conflict
 * after a kubelet's status report, read again and written: upstream's tryUpdateNodeHealth loop) is
 * marked `retried`, not shown as a failure. Returns the rows and how many were folded.
 *
 * @example
 * explainRows(report.decisions, false).rows.length; // about half of the trail: one row per write
 */
export function explainRows(
  newestFirst: readonly DecisionView[],
  wide: boolean,
): { rows: ExplainRow[]; folded: number } {
  const at = newestFirst.map((d) => Date.parse(d.at));
  // A newer row (a smaller index) of the same write, within the window, that `matches`.
  const followedBy = (i: number, matches: (d: DecisionView) => boolean): boolean => {
    const row = newestFirst[i];
    if (row === undefined) return false;
    for (let j = i - 1; j >= 0; j--) {
      const newer = newestFirst[j];
      if (newer === undefined || (at[j] ?? 0) - (at[i] ?? 0) > SameWriteWindowMs) break;
      if (sameWrite(newer, row) && matches(newer)) return true;
    }
    return false;
  };
  const rows: ExplainRow[] = [];
  let folded = 0;
  newestFirst.forEach((d, i) => {
    const kind = resultKind(d.result);
    if (!wide && kind === 'intended' && followedBy(i, (n) => resultKind(n.result) !== 'intended')) {
      folded++;
      return;
    }
    const retried = kind === 'failed' && followedBy(i, (n) => resultKind(n.result) === 'ok');
    rows.push({ ...d, retried });
  });
  return { rows, folded };
}

/** An API error's message cut in the table; -o wide and -o json show it whole. */
const ResultWidth = 32;

/** The table's width without -o wide: the last column (WHY) is cut to fit. */
export const ExplainWidth = 160;

/**
 * Instants in the table: whole, or, when every row shown is of one UTC day (`day`), its time of day
 * alone (the day goes in the column's header): 12 characters a row for WHY.
 */
const instant = (iso: string, day: string | undefined): string =>
  day !== undefined && iso.startsWith(day) ? iso.slice(11, 23) : iso;

function resultCell(d: ExplainRow, wide: boolean, day: string | undefined): string {
  const result = d.result ?? '-';
  // Only an API error's message is cut: a note (`fires at <time>`) keeps its instant.
  const long = resultKind(d.result) === 'failed' && result.length > ResultWidth;
  const cut = wide || !long ? result : `${result.slice(0, ResultWidth - 1)}…`;
  const shown = cut.replace(/^fires at (\S+)$/, (_all, at: string) => `fires at ${instant(at, day)}`);
  return d.retried ? `${shown} (retried: ok)` : shown;
}

const columns = (wide: boolean, day: string | undefined): readonly Column<ExplainRow>[] => [
  { header: day === undefined ? 'time' : `time (${day})`, value: (d) => instant(d.at, day) },
  { header: 'source', value: (d) => d.source },
  { header: 'what', value: (d) => d.what },
  { header: 'pod', value: (d) => d.pod ?? '-' },
  {
    header: 'result',
    value: (d) => resultCell(d, wide, day),
    colour: (d) => {
      const kind = resultKind(d.result);
      return kind === 'ok' ? 'green' : kind === 'failed' ? (d.retried ? 'yellow' : 'red') : undefined;
    },
  },
  { header: 'why', value: (d) => d.why },
  { header: 'inputs', value: (d) => inputsCell(d.inputs), wide: true },
];

export function renderExplain(report: ExplainReport, wide: boolean, paint: Paint, limit = Infinity): string {
  const head = `${paint('bold', `${report.node}:`)} ${report.verdict}\n`;
  if (report.decisions.length === 0) return head;
  const { rows, folded } = explainRows(report.decisions, wide);
  const shown = rows.slice(0, limit);
  const foot =
    folded === 0
      ? ''
      : paint('dim', `(${folded} intended rows folded into their outcomes: -o wide shows every row)\n`);
  // One UTC day for every row shown (and for the instants they name): times of day, the day once.
  const days = new Set(shown.map((d) => d.at.slice(0, 10)));
  const day = !wide && days.size === 1 ? [...days][0] : undefined;
  const table = renderTable(columns(wide, day), shown, {
    wide,
    paint,
    ...(!wide && { maxWidth: ExplainWidth }),
  });
  return `${head}\n${table}${foot}`;
}

/**
 * A subject's newest mass-decision rows read for one node: 60 decisions about a whole 33,000-node zone
 * (34 rows each), a few KB a row.
 */
const MassRowsRead = 2000;

/**
 * Where a node's mass decisions are filed (shared/decisionContract.ts): the cluster's subject, and the
 * zone subjects of the zone it is in now and of the zones its own rows name (a node's zone label may
 * have changed; a deleted node is in no zone now).
 */
export function massDecisionSubjects(own: readonly StoredDecision[], node: Node | undefined): string[] {
  const subjects = new Set<string>();
  if (node !== undefined) subjects.add(zoneSubject(getZoneKey(node.labels)));
  for (const d of own) {
    const zone = d.inputs?.zone;
    if (typeof zone === 'string') subjects.add(zoneSubjectOfLabel(zone));
  }
  subjects.add(ClusterSubject);
  return [...subjects];
}

/**
 * The node's own rows and the mass decisions naming it, newest first, at most `limit`: when its own
 * rows fill the limit, only mass decisions as recent as the oldest of them can be among the newest. The
 * table sends only a subject's mass decisions, so its other decisions, however many, hide none of them.
 */
export async function withMassDecisions(
  decisions: DecisionStore,
  cluster: string,
  name: string,
  own: readonly StoredDecision[],
  node: Node | undefined,
  limit: number,
): Promise<StoredDecision[]> {
  const since = own.length >= limit ? own.at(-1)?.at : undefined;
  const filed = await Promise.all(
    massDecisionSubjects(own, node).map((subject) =>
      decisions.query(cluster, subject, {
        limit: MassRowsRead,
        newestFirst: true,
        massOnly: true,
        ...(since !== undefined && { since }),
      }),
    ),
  );
  const about = filed.flat().flatMap((row) => massDecisionAbout(row, name) ?? []);
  if (about.length === 0) return [...own];
  // Ids are `<ISO time>#<source>#<index>`: the order of the stored rows.
  return [...own, ...about]
    .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .slice(0, limit);
}

/**
 * Reads the node's trail and prints verdict and trail. Returns the exit code.
 *
 * @example
 * await runExplain(parseOptions(ExplainOptionsSchema, { node: 'a-1', limit: '20' }), io); // 0
 */
export async function runExplain(options: ExplainOptions, io: CliIo): Promise<number> {
  const target = await resolveTarget(options, io.env);
  // The table folds a write's intended row into its outcome: twice the rows make `limit` decisions.
  const folding = options.output === undefined;
  const asked = folding ? Math.min(2 * options.limit, 2000) : options.limit;
  const trail = await withStores(target, io.env, async (stores) => {
    const own = await stores.decisions.query(target.cluster, options.node, {
      limit: asked,
      newestFirst: true,
    });
    const stored = await stores.nodes.getNode(target.cluster, options.node);
    const found = await withMassDecisions(stores.decisions, target.cluster, options.node, own, stored, asked);
    if (found.length > 0) return found;
    // No trail: a node the controller holds (its rows expired) is still an answer; an unknown name is
    // not. Only then is the whole state read, for names to suggest.
    if (stored !== undefined) return found;
    const loaded = await stores.controllerState.load(target.cluster);
    const known = [...loaded.nodes.keys(), ...loaded.state.nodeHealth.keys()];
    if (known.includes(options.node)) return found;
    throw new NodeNotFoundError(options.node, target.cluster, closeNames(options.node, known));
  });
  const report = buildExplain(target.cluster, options.node, trail);
  await writeOutput(io, options.output, report, () =>
    renderExplain(report, options.output === 'wide', stdoutPaint(io), options.limit),
  );
  return 0;
}

export const EXPLAIN_HELP = `
The first line is a verdict derived from the trail only: the NoExecute taint in force, who placed it
and when, the Ready status the controller wrote and why, and the queueing before it. Then the trail,
newest first: TIME (the decision's instant: the digest's observedAt for the monitor; its time of day,
UTC, when every row shown is of the day in its header), SOURCE (the
deciding function), WHAT, POD (the pod a decision was about; decisions about a pod are filed under
its node), RESULT (ok, dryRun, or the failure as REASON: message, its message cut at 32 characters; for
decisions that write nothing, what came of them, e.g. "fires at …") and WHY. Each write is recorded
twice, "intended" before it and its outcome after: the table folds the intended row into its outcome,
so --limit counts decisions. A failed write that a retry within the minute then made (a 409 Conflict
after a kubelet's status report, read again and written) shows "(retried: ok)" in yellow, not red.
The table fits 160 columns: WHY is cut to fit. -o wide shows every row and every cell whole and adds
the INPUTS the decision read. A queue decision the monitor took about more than 100 nodes of a zone
in one pass (a zone back from an outage) is filed once under the zone: it shows in each node's trail,
its inputs naming the subject it is filed under (filedUnder). A node with no decisions and unknown to
the controller is an error (exit 1), with the closest known names.
-o json|yaml: cluster, node, verdict, decisions[] {id, at, source, what, pod, result, why, inputs,
dryRun}.

Examples:
  nlc explain ip-10-0-1-17.eu-west-1.compute.internal --stage prod --region eu-west-1
  nlc explain a-1 --limit 10 -o wide            # next to a running npm start`;

export function explainCommand(ctx: CommandContext): Command {
  return addStoreOptions(new Command('explain'))
    .description("the decision trail for a node, newest first, with the controller's reasons")
    .argument('<NODE>', 'node name')
    .option('--limit <n>', 'at most this many decisions', '30')
    .option(OUTPUT_FLAGS, OUTPUT_HELP)
    .addHelpText('after', EXPLAIN_HELP)
    .action(async (node: string, opts: RawStoreOptions & { limit?: string; output?: string }) => {
      const options = parseOptions(
        ExplainOptionsSchema,
        { ...withEnvDefaults(opts, ctx.io.env), node },
        { node: 'NODE' },
      );
      ctx.exitCode = await runExplain(options, ctx.io);
    });
}
