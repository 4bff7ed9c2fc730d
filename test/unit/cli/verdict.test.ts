// The verdict of `nlc explain`: derived from the trail only (newest first in, one line out).
import { describe, expect, it } from 'vitest';
import { verdict } from '../../../cli/commands/explain.js';
import type { StoredDecision } from '../../../shared/ports/stores.js';

const T = Date.parse('2026-01-29T09:00:00Z');
const at = (s: number): number => T + s * 1000;
const iso = (s: number): string => new Date(at(s)).toISOString();
let seq = 0;

function d(s: number, source: string, what: string, extra: Partial<StoredDecision> = {}): StoredDecision {
  return {
    cluster: 'prod',
    node: 'n1',
    id: `${iso(s)}#${source}#${String(seq++)}`,
    at: at(s),
    source,
    what,
    why: extra.why ?? `${what}: why`,
    expiresAt: 0,
    ...extra,
  };
}

const unknown = (s: number, result = 'ok'): StoredDecision =>
  d(s, 'monitor', 'updateNodeStatus', {
    result,
    why: 'tryUpdateNodeHealth: no heartbeat within the grace period (50s)',
    inputs: {
      conditions: ['Ready=Unknown (NodeStatusUnknown)', 'MemoryPressure=Unknown (NodeStatusUnknown)'],
    },
  });
const taint = (
  s: number,
  add: string[],
  remove: string[],
  result = 'ok',
  why = 'doNoExecuteTaintingPass: Ready=Unknown',
) => d(s, 'drainer', 'swapNodeTaints', { result, why, inputs: { add, remove } });
const UNREACHABLE = 'node.kubernetes.io/unreachable:NoExecute';
const NOT_READY = 'node.kubernetes.io/not-ready:NoExecute';
const newestFirst = (...trail: StoredDecision[]): StoredDecision[] => trail.reverse();

describe('verdict', () => {
  it('an empty trail', () => {
    expect(verdict('n1', [])).toBe(
      'no decisions recorded for n1 (rows expire 14 days after they are written)',
    );
  });

  it('tainted: the taint in force, who placed it, and the Ready status behind it', () => {
    const trail = newestFirst(
      unknown(55, 'intended'),
      unknown(55),
      d(60, 'monitor', 'enqueue'),
      taint(61, [UNREACHABLE], [NOT_READY], 'intended'),
      taint(61, [UNREACHABLE], [NOT_READY]),
    );
    expect(verdict('n1', trail)).toBe(
      `tainted ${UNREACHABLE} at ${iso(61)} by drainer because Ready=Unknown since ${iso(55)} ` +
        `(no heartbeat within the grace period (50s)); queued by monitor at ${iso(60)}`,
    );
  });

  it('a second Unknown write is a new episode: since then', () => {
    const trail = newestFirst(unknown(55), unknown(300), d(305, 'monitor', 'enqueue'));
    expect(verdict('n1', trail)).toBe(
      `Ready=Unknown since ${iso(300)}, set by monitor (no heartbeat within the grace period (50s)); ` +
        `queued for a NoExecute taint by monitor at ${iso(305)}`,
    );
  });

  it('in shadow mode the decision repeats every pass: since the first', () => {
    const trail = newestFirst(unknown(55, 'dryRun'), unknown(60, 'dryRun')).map((x) => ({
      ...x,
      dryRun: true,
    }));
    expect(verdict('n1', trail)).toBe(
      `Ready=Unknown since ${iso(55)}, set by monitor (no heartbeat within the grace period (50s))` +
        ' [dry run: decided, not written]',
    );
  });

  it('a swap to the opposite taint leaves that one in force', () => {
    const trail = newestFirst(
      unknown(55),
      taint(61, [UNREACHABLE], []),
      taint(
        90,
        [NOT_READY],
        [UNREACHABLE],
        'ok',
        'processTaintBaseEviction: Ready=False on a node tainted unreachable',
      ),
    );
    expect(verdict('n1', trail)).toMatch(
      new RegExp(`^tainted ${NOT_READY} at ${iso(90)} by drainer because`),
    );
  });

  it('recovered: the untaint after the Unknown wins (the kubelet, not the controller, writes Ready=True)', () => {
    const trail = newestFirst(
      unknown(55),
      taint(61, [UNREACHABLE], []),
      taint(200, [], [UNREACHABLE], 'ok', 'processTaintBaseEviction: Ready=True'),
    );
    expect(verdict('n1', trail)).toBe(`untainted ${UNREACHABLE} at ${iso(200)} by drainer (Ready=True)`);
  });

  it('a failed write is reported; the taint it did not place is not', () => {
    const trail = newestFirst(
      unknown(55),
      taint(61, [UNREACHABLE], [], 'Conflict: the object has been modified'),
    );
    expect(verdict('n1', trail)).toBe(
      `Ready=Unknown since ${iso(55)}, set by monitor (no heartbeat within the grace period (50s)); ` +
        `last write failed: swapNodeTaints at ${iso(61)} (Conflict: the object has been modified)`,
    );
  });

  it('shadow mode says nothing was written', () => {
    const trail = newestFirst(unknown(55, 'dryRun'), taint(61, [UNREACHABLE], [], 'dryRun'));
    expect(
      verdict(
        'n1',
        trail.map((x) => ({ ...x, dryRun: true })),
      ),
    ).toMatch(/^tainted .* \[dry run: decided, not written\]$/);
  });

  it('nothing about taints or Ready: the last decision', () => {
    const trail = newestFirst(
      d(10, 'taint-eviction', 'deletePod', { result: 'ok', why: 'processPodOnNode: not tolerated' }),
    );
    expect(verdict('n1', trail)).toBe(
      `no NoExecute taint in force; last decision: deletePod at ${iso(10)} by taint-eviction (not tolerated)`,
    );
  });

  it('a scheduled or cancelled pod deletion is no failed write', () => {
    const tainted = taint(61, [UNREACHABLE], []);
    const scheduled = d(62, 'taint-eviction', 'schedulePodEviction', {
      result: `fires at ${iso(362)}`,
      inputs: { pod: 'default/web-1' },
    });
    const cancelled = d(63, 'taint-eviction', 'cancelPodEviction', { result: 'cancelled' });
    for (const trail of [
      newestFirst(unknown(55), tainted, scheduled),
      newestFirst(unknown(55), tainted, cancelled),
    ]) {
      expect(verdict('n1', trail)).not.toContain('failed');
    }
  });

  it('a failed write stays reported behind a later scheduled deletion, not behind a later success', () => {
    const failedDelete = d(70, 'drainer', 'deletePodForTaintEviction', {
      result: 'NotFound: pods "web-2" not found (3 attempts)',
      inputs: { pod: 'default/web-2' },
    });
    const scheduled = d(71, 'taint-eviction', 'schedulePodEviction', { result: `fires at ${iso(371)}` });
    expect(verdict('n1', newestFirst(unknown(55), failedDelete, scheduled))).toMatch(
      /; last write failed: deletePodForTaintEviction at .* \(NotFound: pods "web-2" not found \(3 attempts\)\)$/,
    );
    const later = d(72, 'drainer', 'deletePodForTaintEviction', { result: 'ok (pod already gone)' });
    expect(verdict('n1', newestFirst(unknown(55), failedDelete, scheduled, later))).not.toContain('failed');
  });

  it('a taint swap that found the taint already there keeps it in force', () => {
    const trail = newestFirst(unknown(55), taint(61, [UNREACHABLE], [], 'ok (already so)'));
    expect(verdict('n1', trail)).toMatch(new RegExp(`^tainted ${UNREACHABLE} at ${iso(61)} by drainer`));
  });
});
