// The fleet on the system clock (the local stack's set-up), with short periods. No timing assertions:
// it polls, with a generous bound, for renewals, a running pod and a confirmed deletion.
import { afterEach, describe, expect, it } from 'vitest';
import { createApiStore } from '../../../local/apiserver/index.js';
import { KubeletFleet } from '../../../local/kubelet/index.js';
import { RealScheduler } from '../../../shared/adapters/realScheduler.js';
import { systemClock } from '../../../shared/adapters/clock.js';

async function eventually(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('KubeletFleet on the real clock', () => {
  let scheduler: RealScheduler | undefined;
  let fleet: KubeletFleet | undefined;
  afterEach(() => {
    fleet?.close();
    scheduler?.close();
  });

  it('renews leases, runs pods and confirms deletions', async () => {
    const errors: unknown[] = [];
    scheduler = new RealScheduler({ onError: (error) => errors.push(error) });
    const store = createApiStore({ clock: systemClock });
    fleet = new KubeletFleet({
      store,
      scheduler,
      nodeStatusUpdateFrequency: 50,
      nodeLeaseDurationSeconds: 1, // renewals every 250 ms
      podTerminationDelay: 20,
    });
    fleet.addNode({ name: 'a-1', zone: 'zone-a' });
    const renewals = new Set<string>();
    const watch = store.leases.watch({ namespace: 'kube-node-lease' }, (event) => {
      renewals.add(event.object.spec?.renewTime ?? '');
    });
    try {
      await eventually(() => renewals.size >= 3);
      fleet.addPod({ name: 'web-1', node: 'a-1' });
      const phase = () => store.pods.get('web-1', { namespace: 'default' }).status?.phase;
      await eventually(() => phase() === 'Running');
      fleet.deletePod('default', 'web-1');
      await eventually(() => store.pods.list({ namespace: 'default' }).items.length === 0);

      fleet.stopKubelet('a-1');
      expect(fleet.kubelet('a-1')?.state).toBe('stopped');
      expect(errors).toEqual([]);
    } finally {
      watch.stop();
    }
  });
});
