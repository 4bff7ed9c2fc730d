// The heap a simulation runs with. A run allocates fast and keeps little: at 5,000 nodes the live set is
// about 300 MB, but V8 lets garbage grow to three or four times the live set before a full collection,
// so an unbounded run peaked at 1.1 GB of memory. Capped at 900 MB it peaks at 600-670 MB in the same
// wall time (docs/simulate.md "Performance"). The cap grows with the cluster so a large scenario never
// runs out of heap: 400 MB plus 50 KB per node and pod, at least 512 MB.
//
// Most of what a run allocates lives for one event or one monitor pass. With V8's default young
// generation (16 MB semi-spaces at most) a pass's working set outlives several scavenges and is copied
// each time: 64 MB semi-spaces cut the scavengers' time at 5,000 nodes from 4.1 s to 2.6 s, for about
// 140 MB more memory (docs/simulate.md "Performance").

/** Old-generation size (MB) for a simulation of `nodes` nodes and `pods` pods. */
export function simulationHeapLimitMb(nodes: number, pods: number): number {
  return Math.max(512, 400 + Math.ceil((nodes + pods) * 0.05));
}

/** Young-generation semi-space size (MB) for a simulation. */
export const SimulationSemiSpaceMb = 64;

/** The Node options a simulation of `nodes` nodes and `pods` pods runs with. */
export function simulationNodeOptions(nodes: number, pods: number): string[] {
  return [
    `--max-old-space-size=${simulationHeapLimitMb(nodes, pods)}`,
    `--max-semi-space-size=${SimulationSemiSpaceMb}`,
  ];
}
