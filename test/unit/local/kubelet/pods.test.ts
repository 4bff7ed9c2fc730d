// isRunningAndReady: what the simulated kubelet checks of every pod every 10 s, remembered per stored
// (frozen) status and never for a status that can still change.
import type { V1PodStatus } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Wire } from '../../../../local/apiserver/index.js';
import { isRunningAndReady } from '../../../../local/kubelet/pods.js';

const status = (phase: string, ready?: string): Wire<V1PodStatus> => ({
  phase,
  conditions: [
    { type: 'Initialized', status: 'True' },
    ...(ready === undefined ? [] : [{ type: 'Ready', status: ready }]),
    { type: 'PodScheduled', status: 'True' },
  ],
});

describe('isRunningAndReady', () => {
  it.each([
    ['Running and Ready=True', status('Running', 'True'), true],
    ['Running and Ready=False', status('Running', 'False'), false],
    ['Running without a Ready condition', status('Running'), false],
    ['Pending with Ready=True', status('Pending', 'True'), false],
  ])('%s', (_name, podStatus, expected) => {
    expect(isRunningAndReady({ status: podStatus })).toBe(expected);
    expect(isRunningAndReady({ status: Object.freeze(podStatus) })).toBe(expected);
  });

  it('is false for a pod without status', () => {
    expect(isRunningAndReady({})).toBe(false);
  });

  it('answers each stored (frozen) status for itself', () => {
    const ready = Object.freeze(status('Running', 'True'));
    const notReady = Object.freeze(status('Running', 'False'));
    expect(isRunningAndReady({ status: ready })).toBe(true);
    expect(isRunningAndReady({ status: notReady })).toBe(false);
    expect(isRunningAndReady({ status: ready })).toBe(true);
  });

  it('reads a status that can still change every time', () => {
    const podStatus = status('Running', 'True');
    const pod = { status: podStatus };
    expect(isRunningAndReady(pod)).toBe(true);
    podStatus.phase = 'Failed';
    expect(isRunningAndReady(pod)).toBe(false);
  });
});
