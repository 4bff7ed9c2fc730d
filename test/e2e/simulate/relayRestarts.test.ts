// Relay outages and restarts of every length, with kubelets renewing in one or two phases: no healthy
// node is ever marked Unknown because the relay was away, and a node that really dies during (or just
// before) the outage is marked one grace period after the relay is back.
//
// Derivation (relay/probeTracker.ts buildDigest; docs/relay.md "Restarts and outages";
// docs/upstream.md#node-health):
// - The relay stops at 60 s, before its own 60 s digest: the functions' last digest is the 55 s one.
// - A relay started at R lists every node and Lease at R and sends a digest at once, then one every
//   5 s (R, R + 5, …). It has observed no renewal yet; every node it has a Lease for is sent as probed at
//   R (its observingSince), as upstream gives every node a fresh probe when its controller starts.
//   Renewals it observes after R are probes as usual.
// - So a healthy node's probe is never older than its renewal period (10 s) + the relay's restart,
//   whatever the outage length, and d-1 (which stops during the outage, or before it) counts from R:
//   Unknown at the first pass strictly after R + 50 s grace, that is R + 55 s.
// - Two renewal phases: b-* stop at 20 s and start again at 25 s, so they renew at 25, 35, 45, … while
//   a-* renew at 0, 10, 20, …; an outage then ends between two phases' renewals.
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../../local/simulate/scenario.js';
import { runSimulation, type SimulationResult } from '../../../local/simulate/simulation.js';
import { failures, linesOf } from './helpers.js';

const outageStart = 60;
const grace = 50;

function scenario(options: {
  readonly outage: number;
  readonly phases: 1 | 2;
  readonly dyingAt: number;
  readonly duration: number;
  readonly emulationVersion?: string;
}): string {
  const back = outageStart + options.outage;
  return `
name: relay outage of ${options.outage}s, ${options.phases} renewal phase(s)
duration: ${options.duration}s
${options.emulationVersion === undefined ? '' : `config: { emulationVersion: '${options.emulationVersion}' }\n`}nodes:
  - generate: { prefix: a-, count: 3, zone: zone-a, region: region-1 }
  - generate: { prefix: b-, count: 3, zone: zone-a, region: region-1 }
  - generate: { prefix: c-, count: 2, zone: zone-b, region: region-1 }
  - { name: d-1, zone: zone-b, region: region-1 }
pods:
  - generate: { prefix: app-, perNode: 1, nodes: '*' }
timeline:
${options.phases === 2 ? "  - { at: 20s, stopKubelet: 'b-*' }\n  - { at: 25s, startKubelet: 'b-*' }\n" : ''}  - { at: ${options.dyingAt}s, stopKubelet: d-1 }
  - { at: ${outageStart}s, stopRelay: true }
  - { at: ${back}s, startRelay: true }
`;
}

async function run(text: string): Promise<SimulationResult> {
  return runSimulation(parseScenario(text, 'relayRestarts.yaml'));
}

const unknownLines = (result: SimulationResult): string[] =>
  linesOf(result, 'NodeCondition').filter((l) => l.endsWith('Ready=Unknown'));

describe('relay outages: no healthy node is marked Unknown, a node that died meanwhile is', () => {
  const cases = [20, 41, 45, 49, 51, 600].flatMap((outage) =>
    ([1, 2] as const).map((phases) => ({ outage, phases })),
  );
  it.each(cases)(
    'outage of $outage s, $phases renewal phase(s)',
    async ({ outage, phases }) => {
      const back = outageStart + outage;
      const dyingAt = outageStart + Math.min(5, outage / 2); // during the outage
      const result = await run(scenario({ outage, phases, dyingAt, duration: back + 90 }));
      expect(failures(result)).toEqual([]);
      const unknownAt = back + grace + 5; // the first 5 s pass (from R) strictly after R + 50
      expect(unknownLines(result)).toEqual([`${unknownAt} NodeCondition d-1 Ready=Unknown`]);
      expect(linesOf(result, 'TaintAdded').filter((l) => !l.includes(' d-1 '))).toEqual([]);
      expect(linesOf(result, 'PodDeleted').filter((l) => !l.includes('app-d-1-1'))).toEqual([]);
    },
    60_000,
  );
});

describe('relay restarts while nodes are dying', () => {
  it('a node that stopped just before a 20 s outage is marked a grace period after the restart', async () => {
    // d-1 stops at 35 s (last renewal 30 s): Unknown at 85 s without the outage. The relay restarts at
    // 80 s, before that: like a controller restart upstream, d-1 gets a fresh probe at 80 s.
    const result = await run(scenario({ outage: 20, phases: 2, dyingAt: 35, duration: 240 }));
    expect(failures(result)).toEqual([]);
    expect(unknownLines(result)).toEqual([`${80 + grace + 5} NodeCondition d-1 Ready=Unknown`]);
  });

  it('a restart after the node was marked and tainted undoes nothing', async () => {
    // d-1 stops at 5 s (last renewal 0 s): Unknown at 55 s, and the same pass queues it (PR #120816,
    // from v1.34; the default emulationVersion is 1.37): zone-b's full bucket taints it at once, 55 s;
    // its pod (300 s toleration) is deleted at 355 s. The relay stops at 60 s and is back at 101 s: the
    // fresh probe the restart gives d-1 does not make it Ready again, nor lifts a taint.
    const result = await run(scenario({ outage: 41, phases: 1, dyingAt: 5, duration: 420 }));
    expect(failures(result)).toEqual([]);
    expect(unknownLines(result)).toEqual(['55 NodeCondition d-1 Ready=Unknown']);
    expect(linesOf(result, 'TaintAdded', 'TaintRemoved')).toEqual([
      '55 TaintAdded d-1 unreachable:NoSchedule',
      '55 TaintAdded d-1 unreachable:NoExecute',
    ]);
    expect(linesOf(result, 'PodDeleted')).toEqual(['355 PodDeleted default/app-d-1-1 TaintManagerEviction']);
  });

  it('at emulationVersion 1.33 (before PR #120816), a restart before the queuing pass: the taint comes at the first pass after it', async () => {
    // As above, but the pass that would queue d-1 is the one after the marking (upstream #120815), 60 s,
    // and the relay stops before it: the first pass after the restart, 101 s, queues it and zone-b's
    // full bucket taints it at once; its pod is deleted at 401 s. The grace period is 50 s at 1.33 too.
    const result = await run(
      scenario({ outage: 41, phases: 1, dyingAt: 5, duration: 420, emulationVersion: '1.33' }),
    );
    expect(failures(result)).toEqual([]);
    expect(unknownLines(result)).toEqual(['55 NodeCondition d-1 Ready=Unknown']);
    expect(linesOf(result, 'TaintAdded', 'TaintRemoved')).toEqual([
      '55 TaintAdded d-1 unreachable:NoSchedule',
      '101 TaintAdded d-1 unreachable:NoExecute',
    ]);
    expect(linesOf(result, 'PodDeleted')).toEqual(['401 PodDeleted default/app-d-1-1 TaintManagerEviction']);
  });
});
