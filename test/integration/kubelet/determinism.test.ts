// Two identical runs of a busy scenario commit the identical sequence of store events: same order,
// same resourceVersions, same objects (uids, IPs, timestamps included).
import { describe, expect, it } from 'vitest';
import { simulation } from './helpers.js';

async function run(): Promise<string[]> {
  const sim = simulation();
  try {
    sim.fleet.seed({
      nodes: [
        { name: 'a-1', zone: 'zone-a' },
        { name: 'a-2', zone: 'zone-a', conditions: { PIDPressure: 'True' } },
        { name: 'b-1', zone: 'zone-b', kubelet: 'stopped' },
        { name: 'b-2', zone: 'zone-b', kubelet: 'unregistered' },
      ],
      pods: [
        { name: 'web-1', node: 'a-1' },
        { name: 'web-2', node: 'a-2' },
        { name: 'web-3', node: 'b-1' },
        { name: 'agent-a-1', node: 'a-1', daemonSet: 'agent' },
      ],
    });
    sim.at(5, () => sim.fleet.addNode({ name: 'c-1', zone: 'zone-c' }));
    sim.at(7, () => sim.fleet.addPod({ name: 'late-1', node: 'c-1' }));
    sim.at(30, () => {
      sim.fleet.stopKubelet('a-1');
    });
    sim.at(35, () => sim.fleet.deletePod('default', 'web-1'));
    sim.at(40, () => sim.fleet.deletePod('default', 'web-2'));
    sim.at(60, () => {
      sim.fleet.setCondition('a-2', 'Ready', 'False', 'KubeletNotReady');
    });
    sim.at(90, () => {
      sim.fleet.cordon('c-1');
    });
    sim.at(120, () => {
      sim.fleet.startKubelet('b-1');
    });
    sim.at(200, () => {
      sim.fleet.deleteNode('a-2');
    });
    sim.at(400, () => {
      sim.fleet.startKubelet('a-1');
    });
    await sim.runUntil(15 * 60);
    expect(sim.apiErrors).toEqual([]);
    return sim.recorder.events.map((e) => `${e.t} ${e.kind} ${e.type} ${e.name} ${JSON.stringify(e.object)}`);
  } finally {
    sim.close();
  }
}

describe('determinism', () => {
  it('two identical runs produce the identical sequence of store events', async () => {
    const first = await run();
    expect(first.length).toBeGreaterThan(100);
    const second = await run();
    expect(second).toEqual(first);
  });
});
