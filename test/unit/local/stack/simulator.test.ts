// The simulated kubelets' timings for a grace period.
import { describe, expect, it } from 'vitest';
import { kubeletTimingsFor } from '../../../../local/stack/simulator.js';
import { UPSTREAM_DEFAULTS } from '../../../../shared/config.js';

describe('kubeletTimingsFor', () => {
  it("is upstream's kubelet (40 s lease renewed every 10 s, status every 10 s) with upstream's grace period", () => {
    expect(kubeletTimingsFor(UPSTREAM_DEFAULTS)).toEqual({
      nodeLeaseDurationSeconds: 40,
      nodeStatusUpdateFrequency: 10_000,
    });
  });

  it('renews at a quarter of a short grace period, so healthy nodes never look silent', () => {
    expect(kubeletTimingsFor({ ...UPSTREAM_DEFAULTS, nodeMonitorGracePeriod: 4_000 })).toEqual({
      nodeLeaseDurationSeconds: 4,
      nodeStatusUpdateFrequency: 1_000,
    });
  });

  it('takes what it is given over the derived values', () => {
    expect(
      kubeletTimingsFor(UPSTREAM_DEFAULTS, { nodeLeaseDurationSeconds: 8, podTerminationDelay: 0 }),
    ).toEqual({
      nodeLeaseDurationSeconds: 8,
      nodeStatusUpdateFrequency: 10_000,
      podTerminationDelay: 0,
    });
  });
});
