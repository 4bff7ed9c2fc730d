// Upstream kubelet's nodeConditionsHaveChanged (pkg/kubelet/kubelet_node_status.go): conditions matched
// by type after sorting both lists; only lastHeartbeatTime may differ.
import { describe, expect, it } from 'vitest';
import { nodeConditionsHaveChanged, type WireCondition } from '../../../../local/kubelet/nodeStatus.js';

const c = (type: string, status: string, extra: Partial<WireCondition> = {}): WireCondition => ({
  type,
  status,
  lastHeartbeatTime: '2026-01-01T00:00:00Z',
  lastTransitionTime: '2026-01-01T00:00:00Z',
  ...extra,
});

describe('nodeConditionsHaveChanged', () => {
  it.each([
    {
      name: 'only heartbeats moved: unchanged',
      before: [c('Ready', 'True'), c('DiskPressure', 'False')],
      after: [
        c('Ready', 'True', { lastHeartbeatTime: 'x' }),
        c('DiskPressure', 'False', { lastHeartbeatTime: 'y' }),
      ],
      changed: false,
    },
    {
      name: 'the same conditions in another order: unchanged (matched by type)',
      before: [c('Ready', 'True'), c('DiskPressure', 'False')],
      after: [c('DiskPressure', 'False'), c('Ready', 'True')],
      changed: false,
    },
    {
      name: 'a status changed',
      before: [c('Ready', 'True'), c('DiskPressure', 'False')],
      after: [c('Ready', 'False'), c('DiskPressure', 'False')],
      changed: true,
    },
    {
      name: 'a status changed, in another order',
      before: [c('Ready', 'True'), c('DiskPressure', 'False')],
      after: [c('DiskPressure', 'True'), c('Ready', 'True')],
      changed: true,
    },
    {
      name: 'a reason, a message or a transition time changed',
      before: [c('Ready', 'True', { reason: 'KubeletReady' })],
      after: [c('Ready', 'True', { reason: 'KubeletReady', message: 'ok' })],
      changed: true,
    },
    {
      name: 'another transition time',
      before: [c('Ready', 'True')],
      after: [c('Ready', 'True', { lastTransitionTime: '2026-01-01T00:01:00Z' })],
      changed: true,
    },
    {
      name: 'a condition more',
      before: [c('Ready', 'True')],
      after: [c('Ready', 'True'), c('X', 'True')],
      changed: true,
    },
    {
      name: 'one type swapped for another',
      before: [c('Ready', 'True'), c('A', 'True')],
      after: [c('Ready', 'True'), c('B', 'True')],
      changed: true,
    },
  ])('$name', ({ before, after, changed }) => {
    expect(nodeConditionsHaveChanged(before, after)).toBe(changed);
    expect(nodeConditionsHaveChanged(after, before)).toBe(changed);
  });
});
