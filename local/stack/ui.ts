// The live view of `npm start`: a full-screen terminal view redrawn about once a second, with no
// dependency beyond ANSI escape sequences (alternate screen, cursor home, erase to end of line):
//
//   nlc local stack · cluster default · relay running (next digest #42) · functions up · last digest 09:44:11 UTC (1s ago) · 09:44:12 UTC
//   ZONE              STATE    SIZE   UNHEALTHY   LIMITER QPS   TOKENS   QUEUE
//   NODE   ZONE   KUBELET   READY   TAINTS   PROBE AGE   QUEUE          (the selected node highlighted)
//   RECENT DECISIONS (the newest first: time, subject, pod, function, what, result, why)
//   a status line (what the last key did), then the keys
//
// Keys: ↑/↓ or k/j select a node, s stops/starts its kubelet, z fails/restores its whole zone, r
// stops/starts the relay, q or Ctrl-C quits. The terminal is restored on every way out (quit, a signal,
// an exception: `process.on('exit')`).
import { renderTable, painter, span, type Column, type Paint } from '../../shared/present/output.js';
import { probeAgeCell, qpsCell, resultKind, tokensCell, zoneCell } from '../../shared/present/present.js';
import type { EpochMillis, ZoneState } from '../../shared/domain/types.js';
import type { DecisionRow, NodeRow, StackSnapshot, ZoneRow } from './view.js';

const ESC = '\u001b';
const EnterScreen = `${ESC}[?1049h${ESC}[?25l`;
const LeaveScreen = `${ESC}[?25h${ESC}[?1049l`;
const Home = `${ESC}[H`;
const EraseLine = `${ESC}[K`;
const EraseBelow = `${ESC}[J`;

export const HelpLine =
  '↑/↓ j/k select · s stop/start kubelet · z fail/restore zone · r stop/start relay · q quit';

/** What the keys do; each returns the status line to show. */
export interface LiveViewActions {
  /** Absent with a real cluster (no simulated kubelets). */
  readonly toggleKubelet?: (node: string) => string;
  readonly toggleZone?: (node: string) => string;
  readonly toggleRelay: () => Promise<string>;
  readonly quit: () => void;
}

export interface ScreenState {
  /** Index into the snapshot's nodes. */
  readonly selected: number;
  readonly message: string;
}

export interface ScreenSize {
  readonly columns: number;
  readonly rows: number;
}

function clock(at: EpochMillis): string {
  return new Date(at).toISOString().slice(11, 19);
}

function stateColour(state: ZoneState | null): 'green' | 'yellow' | 'red' | undefined {
  if (state === 'Normal') return 'green';
  if (state === 'PartialDisruption') return 'yellow';
  if (state === 'FullDisruption') return 'red';
  return undefined;
}

const ZoneColumns: readonly Column<ZoneRow>[] = [
  { header: 'zone', value: (z) => zoneCell(z.zone) },
  {
    header: 'state',
    // '-': the controller's first pass has not counted the zone yet (its nodes are counted from the API).
    value: (z) => `${z.state ?? '-'}${z.lastPass === null ? '' : '*'}`,
    colour: (z) => stateColour(z.state),
  },
  { header: 'size', value: (z) => (z.size === null ? '-' : String(z.size)), align: 'right' },
  {
    header: 'unhealthy',
    value: (z) => (z.unhealthy === null ? '-' : `${z.unhealthy} (${z.unhealthyPercent ?? 0}%)`),
    align: 'right',
  },
  { header: 'limiter qps', value: (z) => qpsCell(z.limiter), align: 'right' },
  { header: 'tokens', value: (z) => tokensCell(z.limiter), align: 'right' },
  { header: 'queue', value: (z) => String(z.queueLength), align: 'right' },
];

type NodeLine = NodeRow & { readonly isSelected: boolean };

const NodeColumns: readonly Column<NodeLine>[] = [
  { header: ' ', value: (n) => (n.isSelected ? '>' : ' ') },
  { header: 'node', value: (n) => n.name },
  { header: 'zone', value: (n) => zoneCell(n.zone) },
  {
    header: 'kubelet',
    value: (n) => n.kubelet ?? '-',
    colour: (n) => (n.kubelet === 'stopped' ? 'red' : undefined),
  },
  {
    header: 'ready',
    value: (n) => n.ready ?? '-',
    colour: (n) => (n.ready === 'True' ? 'green' : n.ready === null ? undefined : 'red'),
  },
  {
    header: 'taints',
    value: (n) => (n.taints.length === 0 ? '-' : n.taints.join(',')),
    colour: (n) => (n.taints.some((t) => t.endsWith(':NoExecute')) ? 'yellow' : undefined),
  },
  { header: 'probe age', value: probeAgeCell, align: 'right' },
  {
    header: 'queue',
    value: (n) =>
      n.queuePosition === null ? '-' : n.queuePosition === 0 ? 'tainted' : `#${n.queuePosition}`,
  },
];

/** Results and reasons mention instants in full ISO form; the screen shows them as clock times. */
function shortTimes(text: string): string {
  return text.replace(/\d{4}-\d{2}-\d{2}T(\d{2}:\d{2}:\d{2})(\.\d+)?Z/g, '$1');
}

const DecisionColumns: readonly Column<DecisionRow>[] = [
  { header: 'time', value: (d) => clock(d.at) },
  { header: 'subject', value: (d) => d.subject },
  { header: 'pod', value: (d) => d.pod ?? '-' },
  { header: 'function', value: (d) => d.source },
  { header: 'what', value: (d) => d.what },
  {
    header: 'result',
    value: (d) => shortTimes(d.result ?? '-'),
    colour: (d) => (resultKind(d.result) === 'failed' ? 'red' : undefined),
  },
  { header: 'why', value: (d) => shortTimes(d.why) },
];

/** The visible width of a line (escape sequences take none). */
export function visibleLength(line: string): number {
  let width = 0;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === ESC) {
      const end = line.indexOf('m', i);
      if (end !== -1) {
        i = end;
        continue;
      }
    }
    width++;
  }
  return width;
}

/** The line cut to `width` visible characters, its escape sequences kept (and reset if cut). */
export function fitLine(line: string, width: number): string {
  let out = '';
  let visible = 0;
  let styled = false;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === ESC) {
      const end = line.indexOf('m', i);
      if (end !== -1) {
        out += line.slice(i, end + 1);
        styled = true;
        i = end;
        continue;
      }
    }
    if (visible === width) return styled ? `${out}${ESC}[0m` : out;
    out += line[i] ?? '';
    visible++;
  }
  return out;
}

function tableLines(text: string): string[] {
  return text.replace(/\n$/, '').split('\n');
}

/** The header line: where the parts stand. */
function titleLine(snapshot: StackSnapshot, title: string, paint: Paint): string {
  const relay = snapshot.relay.running
    ? `relay ${snapshot.relay.synced ? 'running' : 'listing'}${snapshot.relay.nextSequence === null ? '' : ` (next digest #${snapshot.relay.nextSequence})`}`
    : paint('red', 'relay stopped');
  const functions = snapshot.functionsRunning ? 'functions up' : paint('red', 'functions down');
  const age = snapshot.digestAgeSeconds === null ? '' : ` (${span(snapshot.digestAgeSeconds * 1000)} ago)`;
  const digest =
    snapshot.observedAt === null
      ? 'no digest processed yet'
      : snapshot.digestLate
        ? paint('red', `last digest ${clock(snapshot.observedAt)} UTC${age}, late`)
        : `last digest ${clock(snapshot.observedAt)} UTC${age}`;
  const disruption = snapshot.masterDisruption ? ` · ${paint('red', 'master disruption')}` : '';
  return `${paint('bold', title)} · cluster ${snapshot.cluster} · ${relay} · ${functions} · ${digest}${disruption} · ${clock(snapshot.at)} UTC`;
}

/**
 * Under the zones, when a zone's counts (the API's, as the nodes below show them) differ from what the
 * controller's last pass counted: what that pass counted. Its state stands until the next pass.
 */
function lastPassNote(zones: readonly ZoneRow[], paint: Paint): string[] {
  const differing = zones.filter((z) => z.lastPass !== null);
  if (differing.length === 0) return [];
  const counted = differing
    .map((z) => `${zoneCell(z.zone)} ${z.lastPass?.unhealthy ?? '-'} of ${z.lastPass?.size ?? '-'}`)
    .join(', ');
  return [
    paint(
      'dim',
      `* state of the last pass, which counted unhealthy ${counted}; the next pass counts the nodes below`,
    ),
  ];
}

/**
 * The screen for a snapshot, one string per terminal row (at most `size.rows`, each cut to
 * `size.columns`). Nodes scroll to keep the selected one in view; decisions get what rows are left.
 *
 * @example
 * const lines = renderScreen(snapshot, { selected: 0, message: '' }, { columns: 160, rows: 50 }, painter(false), 'nlc');
 */
export function renderScreen(
  snapshot: StackSnapshot,
  state: ScreenState,
  size: ScreenSize,
  paint: Paint,
  title: string,
): string[] {
  const zones = [
    ...tableLines(renderTable(ZoneColumns, snapshot.zones, { wide: false, paint })),
    ...lastPassNote(snapshot.zones, paint),
  ];
  const selected = Math.min(Math.max(0, state.selected), Math.max(0, snapshot.nodes.length - 1));
  const nodeLines = tableLines(
    renderTable(
      NodeColumns,
      snapshot.nodes.map((n, i) => ({ ...n, isSelected: i === selected })),
      { wide: false, paint },
    ),
  );
  const [nodeHeader = '', ...nodeRows] = nodeLines;
  const decisions = tableLines(renderTable(DecisionColumns, snapshot.decisions, { wide: false, paint }));
  const [decisionHeader = '', ...decisionRows] = decisions;

  const status =
    snapshot.error === null ? state.message : paint('red', `reading the state failed: ${snapshot.error}`);
  // Fixed rows: title, blank, zones, blank, node header, blank, "recent decisions" + its header, status, help.
  const fixed = 2 + (snapshot.zones.length === 0 ? 1 : zones.length) + 1 + 1 + 1 + 2 + 2;
  const free = Math.max(2, size.rows - fixed);
  const decisionRowsShown = Math.min(
    decisionRows.length,
    Math.max(Math.min(3, free - 1), free - nodeRows.length),
  );
  const nodeRowsShown = Math.max(1, free - decisionRowsShown);
  // Scroll the node list so the selected row is visible, as centred as the list allows.
  const first = Math.min(
    Math.max(0, selected - Math.floor(nodeRowsShown / 2)),
    Math.max(0, nodeRows.length - nodeRowsShown),
  );
  const visibleNodes = nodeRows
    .slice(first, first + nodeRowsShown)
    .map((line, i) => (first + i === selected ? paint('bold', line) : line));
  const lines = [
    titleLine(snapshot, title, paint),
    '',
    ...(snapshot.zones.length === 0 ? ['No zone yet: the cluster has no node.'] : zones),
    '',
    nodeHeader,
    ...visibleNodes,
    '',
    paint('bold', 'RECENT DECISIONS') + (snapshot.decisions.length === 0 ? '  (none yet)' : ''),
    ...(snapshot.decisions.length === 0 ? [] : [decisionHeader, ...decisionRows.slice(0, decisionRowsShown)]),
    status,
    paint('dim', HelpLine),
  ];
  // One column spare: a line filling the last column leaves the cursor in the pending-wrap state.
  return lines.slice(0, size.rows).map((line) => fitLine(line, Math.max(1, size.columns - 1)));
}

/** The terminal the view draws on: process.stdin / process.stdout. */
export interface Terminal {
  readonly input: NodeJS.ReadableStream & { setRawMode?(mode: boolean): unknown; isTTY?: boolean };
  readonly output: NodeJS.WritableStream & {
    columns?: number;
    rows?: number;
    on(event: 'resize', fn: () => void): unknown;
    off(event: 'resize', fn: () => void): unknown;
  };
}

export interface LiveViewOptions {
  readonly terminal: Terminal;
  readonly read: (now: EpochMillis) => Promise<StackSnapshot>;
  readonly actions: LiveViewActions;
  readonly title: string;
  readonly colour: boolean;
  /** Redraw period (1 s). */
  readonly intervalMs?: number;
  readonly now?: () => EpochMillis;
}

export interface LiveView {
  /** Restores the terminal (idempotent). */
  stop(): void;
}

/** Splits raw-mode input into keys: arrows are escape sequences, the rest single characters. */
export function parseKeys(data: string): string[] {
  const keys: string[] = [];
  for (let i = 0; i < data.length;) {
    const arrow = data.startsWith(`${ESC}[`, i) && 'ABCD'.includes(data[i + 2] ?? '-');
    if (arrow) {
      keys.push(data.slice(i, i + 3));
      i += 3;
    } else {
      keys.push(data[i] ?? '');
      i++;
    }
  }
  return keys;
}

/**
 * Takes over the terminal and runs the view until `stop` (or a quit key, which calls `actions.quit`).
 *
 * @example
 * const view = startLiveView({ terminal: { input: process.stdin, output: process.stdout }, read, actions, title: 'nlc', colour: true });
 */
export function startLiveView(options: LiveViewOptions): LiveView {
  const { terminal, actions } = options;
  const now = options.now ?? Date.now;
  const paint = painter(options.colour);
  let snapshot: StackSnapshot | undefined;
  let selected = 0;
  let message =
    actions.toggleKubelet === undefined
      ? 'A real cluster: the view follows it; r stops and starts the relay.'
      : 'Select a node and press s to stop its kubelet: watch it go Unknown, get tainted, lose its pods.';
  let stopped = false;
  let reading = false;

  const draw = (): void => {
    if (stopped || snapshot === undefined) return;
    const size = { columns: terminal.output.columns ?? 120, rows: terminal.output.rows ?? 40 };
    const lines = renderScreen(snapshot, { selected, message }, size, paint, options.title);
    terminal.output.write(`${Home}${lines.map((l) => `${l}${EraseLine}`).join('\n')}${EraseBelow}`);
  };
  const refresh = async (): Promise<void> => {
    if (reading || stopped) return;
    reading = true;
    try {
      snapshot = await options.read(now());
      selected = Math.min(selected, Math.max(0, snapshot.nodes.length - 1));
      draw();
    } finally {
      reading = false;
    }
  };
  const selectedNode = (): string | undefined => snapshot?.nodes[selected]?.name;
  const onKey = (key: string): void => {
    const node = selectedNode();
    switch (key) {
      case '\u001b[A':
      case 'k':
        selected = Math.max(0, selected - 1);
        break;
      case '\u001b[B':
      case 'j':
        selected = Math.min(Math.max(0, (snapshot?.nodes.length ?? 1) - 1), selected + 1);
        break;
      case 's':
        message =
          actions.toggleKubelet === undefined
            ? 'No simulated kubelets with a real cluster.'
            : node === undefined
              ? 'No node selected.'
              : actions.toggleKubelet(node);
        break;
      case 'z':
        message =
          actions.toggleZone === undefined
            ? 'No simulated kubelets with a real cluster.'
            : node === undefined
              ? 'No node selected.'
              : actions.toggleZone(node);
        break;
      case 'r':
        message = 'Relay: working…';
        actions.toggleRelay().then(
          (text) => {
            message = text;
            void refresh();
          },
          (error: unknown) => {
            message = `Relay: ${error instanceof Error ? error.message : String(error)}`;
            draw();
          },
        );
        break;
      case 'q':
      case '\u0003':
        actions.quit();
        return;
      default:
        return;
    }
    draw();
    void refresh();
  };
  const onData = (data: Buffer | string): void => {
    for (const key of parseKeys(data.toString())) onKey(key);
  };
  const restore = (): void => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    terminal.input.off('data', onData);
    terminal.output.off('resize', draw);
    terminal.input.setRawMode?.(false);
    terminal.input.pause();
    terminal.output.write(LeaveScreen);
    process.off('exit', restore);
  };

  terminal.output.write(EnterScreen);
  terminal.input.setRawMode?.(true);
  terminal.input.resume();
  terminal.input.on('data', onData);
  terminal.output.on('resize', draw);
  process.on('exit', restore);
  const timer = setInterval(() => void refresh(), options.intervalMs ?? 1000);
  void refresh();
  return { stop: restore };
}
