import { describe, expect, it } from 'vitest';
import {
  addOrUpdateDaemonPodTolerations,
  addOrUpdateTolerationInPodSpec,
  daemonPodTolerations,
  matchToleration,
} from '../../../shared/domain/daemonSetTolerations.js';
import { defaultTolerationSeconds } from '../../../shared/domain/tolerations.js';
import type { Toleration } from '../../../shared/domain/types.js';

const notReady = 'node.kubernetes.io/not-ready';
const unreachable = 'node.kubernetes.io/unreachable';
const foreverNotReady: Toleration = { key: notReady, operator: 'Exists', effect: 'NoExecute' };
const foreverUnreachable: Toleration = { key: unreachable, operator: 'Exists', effect: 'NoExecute' };

describe('matchToleration', () => {
  it.each<{ name: string; a: Toleration; b: Toleration; want: boolean }>([
    { name: 'identical', a: foreverNotReady, b: foreverNotReady, want: true },
    {
      name: 'tolerationSeconds is not compared',
      a: foreverNotReady,
      b: { ...foreverNotReady, tolerationSeconds: 300 },
      want: true,
    },
    { name: 'different key', a: foreverNotReady, b: foreverUnreachable, want: false },
    {
      name: 'different effect',
      a: foreverNotReady,
      b: { ...foreverNotReady, effect: 'NoSchedule' },
      want: false,
    },
    {
      name: 'Exists is not the empty operator',
      a: foreverNotReady,
      b: { key: notReady, effect: 'NoExecute' },
      want: false,
    },
    {
      name: 'absent and empty strings are the same (Go zero values)',
      a: { key: 'k', operator: 'Exists' },
      b: { key: 'k', operator: 'Exists', effect: '', value: '' },
      want: true,
    },
    { name: 'different value', a: { key: 'k', value: 'a' }, b: { key: 'k', value: 'b' }, want: false },
  ])('$name', ({ a, b, want }) => {
    expect(matchToleration(a, b)).toBe(want);
    // The relation is symmetric.
    expect(matchToleration(b, a)).toBe(want);
  });
});

describe('addOrUpdateTolerationInPodSpec', () => {
  it.each<{ name: string; tolerations: Toleration[]; add: Toleration; want: Toleration[]; updated: boolean }>(
    [
      {
        name: 'appends to an empty list',
        tolerations: [],
        add: foreverNotReady,
        want: [foreverNotReady],
        updated: true,
      },
      {
        name: 'appends after tolerations that do not match',
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
        add: foreverNotReady,
        want: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }, foreverNotReady],
        updated: true,
      },
      {
        name: 'replaces a matching toleration in place (its tolerationSeconds goes)',
        tolerations: [
          { ...foreverNotReady, tolerationSeconds: 300 },
          { key: 'x', operator: 'Exists' },
        ],
        add: foreverNotReady,
        want: [foreverNotReady, { key: 'x', operator: 'Exists' }],
        updated: true,
      },
      {
        name: 'nothing changes when an equal toleration is present',
        tolerations: [foreverUnreachable, foreverNotReady],
        add: foreverNotReady,
        want: [foreverUnreachable, foreverNotReady],
        updated: false,
      },
      {
        name: 'an equal duplicate after a different match cancels the whole update (upstream returns false)',
        tolerations: [{ ...foreverNotReady, tolerationSeconds: 60 }, foreverNotReady],
        add: foreverNotReady,
        want: [{ ...foreverNotReady, tolerationSeconds: 60 }, foreverNotReady],
        updated: false,
      },
    ],
  )('$name', ({ tolerations, add, want, updated }) => {
    const before = structuredClone(tolerations);
    const result = addOrUpdateTolerationInPodSpec(tolerations, add);
    expect(result.tolerations).toEqual(want);
    expect(result.updated).toBe(updated);
    expect(tolerations).toEqual(before); // pure
    // Idempotent: adding it again changes nothing.
    expect(addOrUpdateTolerationInPodSpec(result.tolerations, add)).toEqual({
      tolerations: want,
      updated: false,
    });
  });
});

describe('AddOrUpdateDaemonPodTolerations', () => {
  const keysOf = (tolerations: readonly Toleration[]) =>
    tolerations.map((t) => `${t.key ?? ''}:${t.effect ?? ''}`);

  it('adds the forever NoExecute tolerations first, then the TaintNodesByCondition NoSchedule ones', () => {
    const result = addOrUpdateDaemonPodTolerations([]);
    expect(keysOf(result)).toEqual([
      'node.kubernetes.io/not-ready:NoExecute',
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/disk-pressure:NoSchedule',
      'node.kubernetes.io/memory-pressure:NoSchedule',
      'node.kubernetes.io/pid-pressure:NoSchedule',
      'node.kubernetes.io/unschedulable:NoSchedule',
    ]);
    expect(result.every((t) => t.operator === 'Exists' && t.tolerationSeconds === undefined)).toBe(true);
  });

  it('adds network-unavailable only for host-network pods', () => {
    expect(keysOf(addOrUpdateDaemonPodTolerations([], { hostNetwork: true }))).toContain(
      'node.kubernetes.io/network-unavailable:NoSchedule',
    );
    expect(keysOf(daemonPodTolerations(false))).not.toContain(
      'node.kubernetes.io/network-unavailable:NoSchedule',
    );
  });

  it("keeps the template's own tolerations first and makes a timed not-ready toleration forever", () => {
    const own: Toleration[] = [
      { key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' },
      { key: notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
    ];
    const result = addOrUpdateDaemonPodTolerations(own);
    expect(result.slice(0, 2)).toEqual([own[0], foreverNotReady]);
    expect(result).toHaveLength(7);
  });

  it('leaves DefaultTolerationSeconds nothing to add (docs/simulate.md: forever tolerations come first)', () => {
    const result = addOrUpdateDaemonPodTolerations([]);
    expect(defaultTolerationSeconds(result)).toEqual(result);
  });

  it('is idempotent', () => {
    const once = addOrUpdateDaemonPodTolerations([{ key: 'a', operator: 'Exists' }], { hostNetwork: true });
    expect(addOrUpdateDaemonPodTolerations(once, { hostNetwork: true })).toEqual(once);
  });
});
