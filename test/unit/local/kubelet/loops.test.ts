// periodicLoops: the simulated kubelet's loops share a timer when neighbours have the same period,
// and still run in the order one timer each gave them.
import { describe, expect, it } from 'vitest';
import { periodicLoops } from '../../../../local/kubelet/simulatedKubelet.js';
import { VirtualScheduler } from '../../../../local/virtualScheduler.js';

const start = Date.parse('2026-01-01T00:00:00Z');

/** What runs, in order, over `duration` when each loop is scheduled as given by `timers`. */
async function trace(
  timers: (loops: Array<{ period: number; run: () => void }>) => Array<{ period: number; run: () => void }>,
  periods: readonly number[],
  duration: number,
): Promise<string[]> {
  const scheduler = new VirtualScheduler(start);
  const seen: string[] = [];
  const loops = periods.map((period, i) => ({
    period,
    run: () => seen.push(`${String((scheduler.now() - start) / 1000)}s:${String(i)}`),
  }));
  for (const { period, run } of timers(loops)) scheduler.every(period, start, 0, run);
  await scheduler.runUntil(start + duration);
  return seen;
}

describe('periodicLoops', () => {
  it('merges neighbours of the same period, in their order', () => {
    const calls: string[] = [];
    const loop = (period: number, name: string) => ({ period, run: () => calls.push(name) });
    const timers = periodicLoops([loop(10, 'a'), loop(10, 'b'), loop(40, 'c'), loop(10, 'd')]);
    expect(timers.map((t) => t.period)).toEqual([10, 40, 10]);
    for (const timer of timers) timer.run();
    expect(calls).toEqual(['a', 'b', 'c', 'd']);
  });

  it('keeps a single loop as it is', () => {
    const run = (): void => undefined;
    expect(periodicLoops([{ period: 10, run }])).toEqual([{ period: 10, run }]);
  });

  it.each([
    ['the kubelet default: all three every 10 s', [10_000, 10_000, 10_000]],
    ['a longer lease renewal in the middle', [10_000, 15_000, 10_000]],
    ['a longer pod sync last', [10_000, 10_000, 25_000]],
  ])('fires as one timer per loop would: %s', async (_name, periods) => {
    const separate = await trace((loops) => loops, periods, 60_000);
    const shared = await trace(periodicLoops, periods, 60_000);
    expect(shared).toEqual(separate);
    expect(shared.length).toBeGreaterThan(periods.length);
  });
});
