// One `nlc simulate` run of a large cluster, for bench/simulate.bench.ts (which starts it in a process
// of its own, so its peak memory is the run's alone). NODES nodes (default 5,000) in five zones, one pod
// each; 15 virtual minutes; zone a's kubelets all stop at 1 minute, so the zone goes FullDisruption and
// its nodes are tainted NoExecute one every 10 s and their pods evicted 5 minutes later.
// Prints one JSON line: {nodes, virtualMinutes, wallMs, events, lines, maxRssMiB}.
import { scenarioFromObject } from '../local/simulate/scenario.js';
import { runSimulation } from '../local/simulate/simulation.js';

const nodes = Number(process.env.NODES ?? 5000);
const perZone = Math.max(1, Math.floor(nodes / 5));
const scenario = scenarioFromObject(
  {
    name: `${perZone * 5} nodes in five zones, one zone fails`,
    duration: '15m',
    nodes: ['a', 'b', 'c', 'd', 'e'].map((z) => ({
      generate: { prefix: `${z}-`, count: perZone, zone: `zone-${z}`, region: 'region-1' },
    })),
    pods: [{ generate: { prefix: 'app-', perNode: 1, nodes: '*' } }],
    timeline: [{ at: '1m', stopKubelet: 'a-*' }],
  },
  'bench/simulateRun.ts',
);
const result = await runSimulation(scenario);
process.stdout.write(
  `${JSON.stringify({
    nodes: perZone * 5,
    virtualMinutes: 15,
    wallMs: Math.round(result.stats.wallMs),
    events: result.stats.events,
    lines: result.lines.length,
    // resourceUsage().maxRSS is in KiB.
    maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  })}\n`,
);
