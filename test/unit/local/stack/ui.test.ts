// The live view: what a screen shows for a snapshot, how it fits a terminal, and what the keys do.
import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import {
  fitLine,
  HelpLine,
  parseKeys,
  renderScreen,
  startLiveView,
  visibleLength,
  type LiveViewActions,
} from '../../../../local/stack/ui.js';
import type { NodeRow, StackSnapshot } from '../../../../local/stack/view.js';
import { painter } from '../../../../shared/present/output.js';

const at = Date.parse('2026-01-29T09:00:10Z');

function node(name: string, overrides: Partial<NodeRow> = {}): NodeRow {
  return {
    name,
    zone: 'region-1:zone-a',
    kubelet: 'running',
    ready: 'True',
    taints: [],
    probe: 'live',
    probeAgeSeconds: null,
    queuePosition: null,
    ...overrides,
  };
}

function snapshot(nodes: NodeRow[], overrides: Partial<StackSnapshot> = {}): StackSnapshot {
  return {
    at,
    cluster: 'default',
    relay: { running: true, synced: true, nextSequence: 7 },
    functionsRunning: true,
    observedAt: at - 1_000,
    digestAgeSeconds: 1,
    digestLate: false,
    masterDisruption: false,
    zones: [
      {
        zone: 'region-1:zone-a',
        state: 'Normal',
        size: nodes.length,
        unhealthy: 1,
        unhealthyPercent: 10,
        // Stored drained 5 s before now: half a token at qps 0.1, which is what is shown.
        limiter: {
          kind: 'tokenBucket',
          qps: 0.1,
          burst: 1,
          tokens: 0,
          last: '2026-01-29T09:00:05.000Z',
          tokensNow: 0.5,
          at: '2026-01-29T09:00:10.000Z',
        },
        queueLength: 1,
        processedOnce: 0,
        lastPass: null,
      },
    ],
    nodes,
    decisions: [
      {
        at: at - 2_000,
        subject: 'a-1',
        pod: null,
        source: 'drainer',
        what: 'swapNodeTaints',
        result: 'ok',
        why: 'doNoExecuteTaintingPass: Ready=Unknown',
        key: 'a-1#1',
      },
      {
        at: at - 3_000,
        subject: 'a-2',
        pod: 'default/web-1',
        source: 'taint-eviction',
        what: 'schedulePodEviction',
        result: 'fires at 2026-01-29T09:05:07.123Z',
        why: 'processPodOnNode',
        key: 'a-2#2',
      },
      {
        at: at - 4_000,
        subject: 'a-2',
        pod: null,
        source: 'node-taints',
        what: 'swapNodeTaints',
        result: 'Conflict: the object has been modified',
        why: 'doNoScheduleTaintingPass',
        key: 'a-2#1',
      },
    ],
    error: null,
    ...overrides,
  };
}

const plain = painter(false);

describe('renderScreen', () => {
  const nodes = [
    node('a-1', {
      kubelet: 'stopped',
      ready: 'Unknown',
      taints: ['unreachable:NoSchedule', 'unreachable:NoExecute'],
      probe: 'silent',
      probeAgeSeconds: 70,
      queuePosition: 0,
    }),
    node('a-2', { queuePosition: 1 }),
    node('a-3'),
  ];

  it('shows the parts, the zones, the nodes with the selected one marked, the decisions, a status and the keys', () => {
    const lines = renderScreen(
      snapshot(nodes),
      { selected: 0, message: 'hello' },
      { columns: 160, rows: 40 },
      plain,
      'nlc',
    );
    const text = lines.join('\n');
    expect(lines[0]).toBe(
      'nlc · cluster default · relay running (next digest #7) · functions up · last digest 09:00:09 UTC (1s ago) · 09:00:10 UTC',
    );
    expect(text).toMatch(/region-1:zone-a\s+Normal\s+3\s+1 \(10%\)\s+0\.1\s+0\.50\/1\s+1/);
    expect(text).toMatch(
      />\s+a-1\s+region-1:zone-a\s+stopped\s+Unknown\s+unreachable:NoSchedule,unreachable:NoExecute\s+1m10s\s+tainted/,
    );
    // A node the controller holds alive: its probe is newer than the stored one, so no stale age.
    expect(text).toMatch(/\n\s+a-2\s+.*\s+live\s+#1\n/);
    expect(text).toMatch(
      /09:00:08\s+a-1\s+-\s+drainer\s+swapNodeTaints\s+ok\s+doNoExecuteTaintingPass: Ready=Unknown/,
    );
    expect(text).toMatch(
      /09:00:07\s+a-2\s+default\/web-1\s+taint-eviction\s+schedulePodEviction\s+fires at 09:05:07\s/,
    );
    expect(lines.at(-2)).toBe('hello');
    expect(lines.at(-1)).toBe(HelpLine);
  });

  it('marks a zone whose last pass counted otherwise than the nodes shown, and says what it counted', () => {
    const base = snapshot(nodes);
    const zone = base.zones[0];
    if (zone === undefined) throw new Error('no zone');
    const lines = renderScreen(
      {
        ...base,
        zones: [
          { ...zone, size: 3, unhealthy: 3, unhealthyPercent: 100, lastPass: { size: 3, unhealthy: 1 } },
        ],
      },
      { selected: 0, message: '' },
      { columns: 160, rows: 40 },
      plain,
      'nlc',
    );
    const text = lines.join('\n');
    expect(text).toMatch(/region-1:zone-a\s+Normal\*\s+3\s+3 \(100%\)/);
    expect(text).toContain(
      '* state of the last pass, which counted unhealthy region-1:zone-a 1 of 3; the next pass counts the nodes below',
    );
    // Without a difference, no mark and no note.
    const plainText = renderScreen(
      base,
      { selected: 0, message: '' },
      { columns: 160, rows: 40 },
      plain,
      'nlc',
    ).join('\n');
    expect(plainText).not.toContain('Normal*');
    expect(plainText).not.toContain('state of the last pass');
  });

  it('never draws more rows or columns than the terminal has, keeping the selected node in view', () => {
    const many = Array.from({ length: 30 }, (_, i) => node(`n-${i + 1}`));
    const lines = renderScreen(
      snapshot(many),
      { selected: 25, message: '' },
      { columns: 60, rows: 20 },
      plain,
      'nlc',
    );
    expect(lines.length).toBeLessThanOrEqual(20);
    expect(lines.every((l) => visibleLength(l) <= 59)).toBe(true);
    expect(lines.some((l) => /^>\s+n-26\b/.test(l))).toBe(true);
    expect(lines.at(-1)).toBe(HelpLine.slice(0, 59));
  });

  it('marks a last digest older than the grace period late, in red', () => {
    const late = snapshot([], {
      relay: { running: false, synced: true, nextSequence: 7 },
      digestAgeSeconds: 75,
      digestLate: true,
    });
    const [title] = renderScreen(
      late,
      { selected: 0, message: '' },
      { columns: 200, rows: 40 },
      painter(true),
      'nlc',
    );
    expect(title).toContain('\u001b[31mlast digest 09:00:09 UTC (1m15s ago), late\u001b[');
  });

  it('says so when the state cannot be read, and when there is nothing yet', () => {
    const lines = renderScreen(
      snapshot([], {
        zones: [],
        decisions: [],
        error: 'connect ECONNREFUSED',
        observedAt: null,
        relay: { running: false, synced: false, nextSequence: null },
      }),
      { selected: 0, message: '' },
      { columns: 160, rows: 40 },
      plain,
      'nlc',
    );
    const text = lines.join('\n');
    expect(text).toContain('relay stopped');
    expect(text).toContain('no digest processed yet');
    expect(text).toContain('No zone yet');
    expect(text).toContain('RECENT DECISIONS  (none yet)');
    expect(text).toContain('reading the state failed: connect ECONNREFUSED');
  });

  it('colours states and failures when colour is on', () => {
    const lines = renderScreen(
      snapshot(nodes),
      { selected: 0, message: '' },
      { columns: 200, rows: 40 },
      painter(true),
      'nlc',
    );
    const text = lines.join('\n');
    expect(text).toContain('\u001b[32mNormal');
    expect(text).toContain('\u001b[31mConflict: the object has been modified');
    // A scheduled deletion's result is no failure.
    expect(text).not.toContain('\u001b[31mfires at');
  });
});

describe('fitLine and visibleLength', () => {
  it('count and cut visible characters only, keeping escape sequences', () => {
    const line = `ab\u001b[31mcdef\u001b[39mgh`;
    expect(visibleLength(line)).toBe(8);
    expect(fitLine(line, 4)).toBe('ab\u001b[31mcd\u001b[0m');
    expect(fitLine(line, 8)).toBe(line);
  });
});

describe('parseKeys', () => {
  it('splits arrows and characters', () => {
    expect(parseKeys('j\u001b[Bk\u001b[Aszrq\u0003')).toEqual([
      'j',
      '\u001b[B',
      'k',
      '\u001b[A',
      's',
      'z',
      'r',
      'q',
      '\u0003',
    ]);
  });
});

describe('startLiveView', () => {
  function fakeTerminal() {
    const input = Object.assign(new EventEmitter(), {
      isTTY: true,
      setRawMode: vi.fn(),
      resume: vi.fn(),
      pause: vi.fn(),
    });
    const written: string[] = [];
    const output = Object.assign(new EventEmitter(), {
      columns: 120,
      rows: 40,
      write: (chunk: string) => written.push(chunk),
    });
    return { input, output, written };
  }

  it('takes the terminal, acts on keys, and gives the terminal back', async () => {
    const terminal = fakeTerminal();
    const nodes = [node('a-1'), node('a-2')];
    const actions: LiveViewActions = {
      toggleKubelet: vi.fn((n: string) => `${n} toggled`),
      toggleZone: vi.fn((n: string) => `zone of ${n} toggled`),
      toggleRelay: vi.fn(() => Promise.resolve('relay toggled')),
      quit: vi.fn(),
    };
    const view = startLiveView({
      terminal: terminal as never,
      read: () => Promise.resolve(snapshot(nodes)),
      actions,
      title: 'nlc',
      colour: false,
      intervalMs: 60_000,
      now: () => at,
    });
    await vi.waitFor(() => {
      expect(terminal.written.join('')).toContain('a-2');
    });
    expect(terminal.written[0]).toBe('\u001b[?1049h\u001b[?25l');
    expect(terminal.input.setRawMode).toHaveBeenCalledWith(true);

    terminal.input.emit('data', Buffer.from('js'));
    expect(actions.toggleKubelet).toHaveBeenCalledWith('a-2');
    terminal.input.emit('data', 'kz');
    expect(actions.toggleZone).toHaveBeenCalledWith('a-1');
    terminal.input.emit('data', 'r');
    await vi.waitFor(() => {
      expect(terminal.written.join('')).toContain('relay toggled');
    });
    terminal.input.emit('data', '\u0003');
    expect(actions.quit).toHaveBeenCalledTimes(1);

    view.stop();
    view.stop();
    expect(terminal.written.filter((w) => w === '\u001b[?25h\u001b[?1049l')).toHaveLength(1);
    expect(terminal.input.setRawMode).toHaveBeenLastCalledWith(false);
    expect(terminal.input.listenerCount('data')).toBe(0);
  });

  it('says the kubelet keys do nothing with a real cluster', async () => {
    const terminal = fakeTerminal();
    const view = startLiveView({
      terminal: terminal as never,
      read: () => Promise.resolve(snapshot([node('a-1', { kubelet: null })])),
      actions: { toggleRelay: () => Promise.resolve(''), quit: () => undefined },
      title: 'nlc',
      colour: false,
      intervalMs: 60_000,
    });
    await vi.waitFor(() => {
      expect(terminal.written.join('')).toContain('a-1');
    });
    terminal.input.emit('data', 's');
    expect(terminal.written.at(-1)).toContain('No simulated kubelets with a real cluster.');
    view.stop();
  });
});
