// The relay's terms and clock as a scenario changes them, observed on the bus (the digests the functions
// get), not in the controller: restartRelay starts a new relay with a new relayId and its own clock;
// relayClockStep moves the relay host's clock, which a running relay does not see (it reads the clock once
// at start and moves it on by the monotonic clock, as deployed): a relay started after it does.
// What the controller makes of it is not asserted here: some of it is not handled yet.
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../../local/simulate/scenario.js';
import { runSimulation, type SimulationResult } from '../../../local/simulate/simulation.js';

const start = Date.parse('2026-01-01T00:00:00Z');

interface SeenDigest {
  /** Virtual time it was published, in seconds. */
  readonly t: number;
  readonly relayId: string;
  /** observedAt − the virtual time it was published, in seconds: the relay's clock offset. */
  readonly offset: number;
  /** leaderSince − start, in seconds. */
  readonly leaderSince: number;
  readonly sequence: number;
}

async function digestsOf(text: string): Promise<{ result: SimulationResult; digests: SeenDigest[] }> {
  const digests: SeenDigest[] = [];
  const result = await runSimulation(parseScenario(text, 'relayTerms.yaml'), {
    onBusEvent: (t, event) => {
      if (event.detailType !== 'Heartbeat Digest') return;
      const detail = event.detail as {
        relayId: string;
        observedAt: string;
        leaderSince: string;
        sequence: number;
      };
      expect(event.targets).toEqual(['monitorNodeHealth']);
      digests.push({
        t,
        relayId: detail.relayId,
        offset: (Date.parse(detail.observedAt) - start) / 1000 - t,
        leaderSince: (Date.parse(detail.leaderSince) - start) / 1000,
        sequence: detail.sequence,
      });
    },
  });
  return { result, digests };
}

const scenario = (extra: string, timeline: string): string => `
duration: 3m
${extra}
nodes:
  - generate: { prefix: a-, count: 3, zone: zone-a, region: region-1 }
timeline:
${timeline}
`;

/** 0, 5, 10, … up to `to` (included), from `from`. */
const every5 = (from: number, to: number): number[] =>
  Array.from({ length: Math.floor((to - from) / 5) + 1 }, (_, i) => from + 5 * i);

describe('restartRelay', () => {
  it('stops the relay and starts a new one at once, with a new relayId and the clock it is given', async () => {
    const { result, digests } = await digestsOf(
      scenario(
        'relayClockSkew: +2m',
        `  - { at: 62s, restartRelay: {} }
  - { at: 2m, restartRelay: { clockSkew: -90s } }`,
      ),
    );
    expect(result.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
    const first = digests.filter((d) => d.relayId === 'nlc-relay-simulated');
    const second = digests.filter((d) => d.relayId === 'nlc-relay-simulated-2');
    const third = digests.filter((d) => d.relayId === 'nlc-relay-simulated-3');
    expect(first.length + second.length + third.length).toBe(digests.length);
    // The first relay: from 0 until its stop at 62 s, its clock 2 minutes ahead (relayClockSkew).
    expect(first.map((d) => d.t)).toEqual(every5(0, 60));
    expect(new Set(first.map((d) => d.offset))).toEqual(new Set([120]));
    expect(new Set(first.map((d) => d.leaderSince))).toEqual(new Set([120]));
    // The second: a digest at once at 62 s, then every 5 s; restartRelay {} means a clock that is right.
    expect(second.map((d) => d.t)).toEqual(every5(62, 117));
    expect(new Set(second.map((d) => d.offset))).toEqual(new Set([0]));
    expect(new Set(second.map((d) => d.leaderSince))).toEqual(new Set([62]));
    expect(second.map((d) => d.sequence)).toEqual(second.map((_, i) => i));
    // The third: 90 s behind from its start at 2 minutes.
    expect(third.map((d) => d.t)).toEqual(every5(120, 180));
    expect(new Set(third.map((d) => d.offset))).toEqual(new Set([-90]));
    expect(new Set(third.map((d) => d.leaderSince))).toEqual(new Set([120 - 90]));
  }, 60_000);

  it('starts a relay when none runs, as a new term; `true` is `{}`', async () => {
    const { digests } = await digestsOf(
      scenario(
        '',
        `  - { at: 30s, stopRelay: true }
  - { at: 47s, restartRelay: true }`,
      ),
    );
    expect(digests.filter((d) => d.relayId === 'nlc-relay-simulated').map((d) => d.t)).toEqual(every5(0, 25));
    const second = digests.filter((d) => d.relayId === 'nlc-relay-simulated-2');
    expect(second.map((d) => d.t)).toEqual(every5(47, 177));
    expect(new Set(second.map((d) => `${d.offset} ${d.leaderSince}`))).toEqual(new Set(['0 47']));
  }, 60_000);
});

/**
 * The relay's own reaction to a forward jump of its clock (relay/digestLoop.ts): the timer of the digest
 * due at the step's instant looks more than two periods late, so it sends none then ('late_timer'), as
 * after a paused process. Asserted so that a test shows the timer fired at its instant of virtual time
 * while the clock it read had jumped.
 */
function skippedDigests(result: SimulationResult): string[] {
  return result.diagnostics
    .filter((d) => d.source === 'relay' && d.message.startsWith('digest skipped'))
    .map((d) => `${d.t} ${String(d.fields?.reason)}`);
}

describe('relayClockStep', () => {
  it('moves the host’s clock, which the running relay never sees: its digests keep their period and offset', async () => {
    const { result, digests } = await digestsOf(
      scenario(
        'relayClockSkew: 10s',
        `  - { at: 45s, relayClockStep: +30s }
  - { at: 81s, relayClockStep: -45s }`,
      ),
    );
    expect(result.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
    // Every 5 s of virtual time from 0, one relay, one term, none skipped: the steps never reach it.
    expect(skippedDigests(result)).toEqual([]);
    expect(digests.map((d) => d.t)).toEqual(every5(0, 180));
    expect(new Set(digests.map((d) => d.relayId))).toEqual(new Set(['nlc-relay-simulated']));
    expect(digests.map((d) => d.sequence)).toEqual(digests.map((_, i) => i));
    expect(new Set(digests.map((d) => d.leaderSince))).toEqual(new Set([10]));
    expect(new Set(digests.map((d) => d.offset))).toEqual(new Set([10]));
  }, 60_000);

  it('stays with the host: a relay started after a step reads it, restartRelay’s clockSkew replaces it', async () => {
    const { result, digests } = await digestsOf(
      scenario(
        '',
        `  - { at: 20s, relayClockStep: -15s }
  - { at: 40s, stopRelay: true }
  - { at: 50s, relayClockStep: -5s }
  - { at: 60s, startRelay: true }
  - { at: 2m, restartRelay: { clockSkew: 3s } }
  - { at: 150s, relayClockStep: +1m }`,
      ),
    );
    expect(skippedDigests(result)).toEqual([]);
    const seen = digests.map((d) => `${d.t} ${d.relayId} ${d.offset} ${d.leaderSince}`);
    expect(seen).toEqual([
      // The step at 20 s moves the host's clock; the running relay does not see it.
      ...every5(0, 35).map((t) => `${t} nlc-relay-simulated 0 0`),
      // Stopped at 40 s (before its 40 s digest); started again at 60 s, it reads the host's clock,
      // moved by both steps: -20 s.
      ...every5(60, 115).map((t) => `${t} nlc-relay-simulated -20 ${60 - 20}`),
      // Another host (another pod) 3 s ahead; the step at 150 s moves its clock, unseen by the relay.
      ...every5(120, 180).map((t) => `${t} nlc-relay-simulated-2 3 ${120 + 3}`),
    ]);
  }, 60_000);
});
