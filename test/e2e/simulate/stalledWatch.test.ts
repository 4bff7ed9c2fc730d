// A stalled watch: the relay's watch of a resource stays open and delivers nothing (not even bookmarks)
// for three minutes. examples/scenarios/stalled-lease-watch.yaml and variations of it.
//
// Derivation (relay/reflector.ts's watchdog; relay/probeTracker.ts; the monitor's upstream rules as in
// singleNodeFailure.test.ts):
// - Kubelets renew their leases at 0, 10, 20, … s. The stall starts at 90 s, before the kubelets' 90 s
//   renewals (a scenario's actions come first in an instant): the lease watch's last delivery is the
//   80 s renewals.
// - The relay takes a lease watch silent for 20 s (with leases to renew) for stalled: at 100 s it
//   abandons it, relists the Leases and watches again. The new watch is stalled too (the stall holds
//   every watch of the resource until it ends), so it is abandoned at 120, 140, … 260 s. The stall ends
//   at 270 s, between two relists: from then the 270 s renewals arrive on the watch.
// - A relist is authoritative: a Lease whose renewTime advanced since the relay last saw it is a probe
//   at the relist instant; one that did not advance keeps its probe. So a healthy node's probe is never
//   older than 20 s, and a node whose kubelet stops is probed when its last renewal was observed: live
//   before the stall, or at the first relist after it during the stall.
// - The watchdog's timer fires before the relay's digest of the same instant and, in process, the relist
//   is done before that digest: no digest is skipped. (A skipped digest would mark nobody: the monitor
//   decides only on the digests it gets.)
// - Unknown at the first monitor pass (every 5 s from 0) strictly after probe + 50 s grace; as in a
//   single node failure, unreachable:NoSchedule and unreachable:NoExecute in the same pass (the latter
//   decided on the Ready condition the pass leaves: PR #120816, from v1.34; the default
//   emulationVersion is 1.37), and the pod (300 s default toleration) deleted 300 s after that.
// - The node watch waits for the API server's bookmarks (every minute of virtual time from 1 m) and
//   takes 3 minutes of silence for a stall. Kubelets post an unchanged node status only every 5
//   minutes, so its last delivery before a stall at 90 s is the 60 s bookmark: relisted at 240 s.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseScenario, scenarioFromObject } from '../../../local/simulate/scenario.js';
import { runSimulation, type SimulationResult } from '../../../local/simulate/simulation.js';
import { WatchStalledMessage } from '../../../relay/reflector.js';
import {
  examplesDir,
  failures,
  firstPassAfter,
  lastRenewalAtOrBefore,
  linesOf,
  runExample,
} from './helpers.js';

const stallAt = 90;
const stallFor = 180;
const grace = 50;
const leaseStallTimeout = 20;
const watchStallTimeout = 180;
const tolerationSeconds = 300;

/** The lease relists: from the last delivery (the renewals before the stall), every 20 s while stalled. */
const leaseRelists: number[] = [];
for (
  let t = lastRenewalAtOrBefore(stallAt - 1) + leaseStallTimeout;
  t < stallAt + stallFor;
  t += leaseStallTimeout
) {
  leaseRelists.push(t);
}

function scenario(options: {
  readonly stall?: 'leases' | 'nodes';
  readonly stopAt?: number;
  readonly duration: number;
}): string {
  const timeline = [
    ...(options.stall === undefined
      ? []
      : [`  - { at: ${stallAt}s, stallWatch: { resource: ${options.stall}, for: ${stallFor}s } }`]),
    ...(options.stopAt === undefined ? [] : [`  - { at: ${options.stopAt}s, stopKubelet: a-6 }`]),
  ];
  return `
duration: ${options.duration}s
nodes:
  - generate: { prefix: a-, count: 6, zone: zone-a, region: region-1 }
pods:
  - generate: { prefix: app-, perNode: 1, nodes: '*' }
${timeline.length === 0 ? '' : `timeline:\n${timeline.join('\n')}\n`}`;
}

const run = (text: string): Promise<SimulationResult> =>
  runSimulation(parseScenario(text, 'stalledWatch.yaml'));

/** When the relay logged a stall of `resource`. */
const stallsOf = (result: SimulationResult, resource: string): number[] =>
  result.diagnostics
    .filter((d) => d.message === WatchStalledMessage && d.fields?.resource === resource)
    .map((d) => d.t);

const skippedDigests = (result: SimulationResult): string[] =>
  result.diagnostics.filter((d) => d.message.startsWith('digest skipped')).map((d) => `${d.t}`);

describe('a stalled lease watch', () => {
  it('marks no node Unknown and adds no taint: the timeline is the one without the stall', async () => {
    const stalled = await runExample('stalled-lease-watch');
    // The same scenario without its timeline.
    const doc = parseYaml(await readFile(new URL('stalled-lease-watch.yaml', examplesDir), 'utf8')) as Record<
      string,
      unknown
    >;
    const { timeline: _timeline, ...withoutStall } = doc;
    const baseline = await runSimulation(scenarioFromObject(withoutStall));

    expect(failures(stalled)).toEqual([]);
    expect(linesOf(stalled, 'NodeCondition', 'TaintAdded', 'PodNotReady', 'PodDeleted')).toEqual([]);
    expect(stalled.lines).toEqual(baseline.lines);
    expect(stallsOf(stalled, 'leases')).toEqual([100, 120, 140, 160, 180, 200, 220, 240, 260]);
    expect(stallsOf(stalled, 'leases')).toEqual(leaseRelists);
    expect(skippedDigests(stalled)).toEqual([]);
  }, 60_000);

  /** The instant the relay observes the last renewal of a node whose kubelet stops at `stopAt`. */
  function lastProbe(stopAt: number): number {
    const renewal = lastRenewalAtOrBefore(stopAt);
    if (renewal < stallAt) return renewal; // observed live, before the stall
    const relist = leaseRelists.find((t) => t >= renewal); // kubelets renew before the relay relists
    if (relist === undefined) throw new Error('no relist after the renewal');
    return relist;
  }

  const cases = [
    // Last renewal 80 s, observed live before the stall; every relist shows it did not advance: probe
    // 80 s, Unknown at 135 s, as without the stall.
    { stopAt: 85 },
    // Last renewal 110 s, hidden by the stall; the 120 s relist shows it advanced: probe 120 s, Unknown
    // at 175 s (165 s without the stall: the renewal was observed 10 s late).
    { stopAt: 115 },
    // Last renewal 120 s, just before the 120 s relist saw it: probe 120 s, Unknown at 175 s, as without.
    { stopAt: 125 },
  ].map((c) => {
    const probe = lastProbe(c.stopAt);
    return { ...c, probe, unknownAt: firstPassAfter(probe + grace) };
  });

  it.each(cases)(
    'a node whose kubelet stops at $stopAt s is marked Unknown at $unknownAt s: a grace period after its last renewal was observed ($probe s)',
    async ({ stopAt, unknownAt }) => {
      const result = await run(scenario({ stall: 'leases', stopAt, duration: 480 }));
      expect(failures(result)).toEqual([]);
      expect(linesOf(result, 'NodeCondition').filter((l) => l.endsWith('Ready=Unknown'))).toEqual([
        `${unknownAt} NodeCondition a-6 Ready=Unknown`,
      ]);
      const noExecuteAt = unknownAt; // the same pass from v1.34 (PR #120816)
      expect(linesOf(result, 'TaintAdded')).toEqual([
        `${unknownAt} TaintAdded a-6 unreachable:NoSchedule`,
        `${noExecuteAt} TaintAdded a-6 unreachable:NoExecute`,
      ]);
      const deletedAt = noExecuteAt + tolerationSeconds;
      expect(linesOf(result, 'PodDeleted')).toEqual(
        deletedAt <= 480 ? [`${deletedAt} PodDeleted default/app-a-6-1 TaintManagerEviction`] : [],
      );
      expect(stallsOf(result, 'leases')).toEqual(leaseRelists);
      expect(skippedDigests(result)).toEqual([]);
    },
    60_000,
  );
});

describe('a stalled node watch', () => {
  it('changes nothing in a healthy cluster', async () => {
    const stalled = await run(scenario({ stall: 'nodes', duration: 360 }));
    const baseline = await run(scenario({ duration: 360 }));
    expect(failures(stalled)).toEqual([]);
    expect(stalled.lines).toEqual(baseline.lines);
    expect(linesOf(stalled, 'NodeCondition', 'TaintAdded')).toEqual([]);
    // Last delivery: the 60 s bookmark. Relisted after 3 minutes of silence.
    expect(stallsOf(stalled, 'nodes')).toEqual([60 + watchStallTimeout]);
    expect(stallsOf(stalled, 'leases')).toEqual([]);
  }, 60_000);

  it('delays nothing the monitor can check against the API; health decisions come from the digests', async () => {
    // a-6 stops at 115 s (last renewal 110 s, observed live: the lease watch is fine): Unknown at 165 s
    // and, queued in that pass (PR #120816, from v1.34), unreachable:NoExecute at 165 s, as without the
    // stall, since the monitor decides on digests and the drainer reads the node it taints from the API.
    // The Node Changed that shows the node Unknown and tainted comes only at the relay's node relist
    // (240 s), but the next digest's fingerprint of a-6 is the stalled relay's, not the monitor's copy:
    // at 170 s the monitor reads the node from the API and runs the node-change path on it
    // (docs/architecture.md#level-triggered): node-taints makes the unreachable:NoSchedule write it could
    // not make at 165 s, and the taint eviction controller sees the NoExecute taint (on the API's node
    // since 165 s) and starts a-6's pod's 300 s toleration: deleted at 170 + 300 = 470 s, before the end
    // (480 s); one monitor period after the 465 s it would be without the stall.
    const noExecuteAt = 165;
    const readAt = noExecuteAt + 5; // the next digest's fingerprint check
    const relistAt = 60 + watchStallTimeout;
    const result = await run(scenario({ stall: 'nodes', stopAt: 115, duration: 480 }));
    expect(failures(result)).toEqual([]);
    expect(linesOf(result, 'NodeCondition').filter((l) => l.endsWith('Ready=Unknown'))).toEqual([
      '165 NodeCondition a-6 Ready=Unknown',
    ]);
    expect(linesOf(result, 'TaintAdded')).toEqual([
      `${noExecuteAt} TaintAdded a-6 unreachable:NoExecute`,
      `${readAt} TaintAdded a-6 unreachable:NoSchedule`,
    ]);
    expect(linesOf(result, 'PodDeleted')).toEqual([
      `${readAt + tolerationSeconds} PodDeleted default/app-a-6-1 TaintManagerEviction`,
    ]);
    expect(stallsOf(result, 'nodes')).toEqual([relistAt]);
  }, 60_000);
});
