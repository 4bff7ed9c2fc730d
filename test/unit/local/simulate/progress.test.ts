// nlc simulate's progress line: drawn in place on a terminal at most every interval of wall time,
// cleared at the end, and nothing at all when the stream is not a terminal.
import { describe, expect, it } from 'vitest';
import { formatProgress, progressLine } from '../../../../local/simulate/progress.js';

function terminal(isTTY: boolean): { isTTY: boolean; written: string[]; write(chunk: string): void } {
  const written: string[] = [];
  return {
    isTTY,
    written,
    write(chunk: string) {
      written.push(chunk);
    },
  };
}

const at = (elapsed: number, events: number) => ({ elapsed, duration: 900_000, events });

describe('formatProgress', () => {
  it('says the virtual time reached of the duration, the wall time and the events per second', () => {
    expect(formatProgress(at(400_000, 51_000), 12_400)).toBe(
      'simulating 6m40s of 15m (44%) · 12.4s wall · 4,113 events/s',
    );
  });

  it('counts no rate before any wall time has passed', () => {
    expect(formatProgress(at(0, 0), 0)).toBe('simulating 0s of 15m (0%) · 0.0s wall · 0 events/s');
  });
});

describe('progressLine', () => {
  it('rewrites one line in place, at most once per interval, and clears it', () => {
    const stream = terminal(true);
    let now = 1_000;
    const line = progressLine(stream, () => now, { intervalMs: 250 });
    line.update(at(0, 0));
    now += 100;
    line.update(at(10_000, 500)); // within the interval: not drawn
    now += 200;
    line.update(at(20_000, 900));
    line.clear();
    expect(stream.written).toEqual([
      '\rsimulating 0s of 15m (0%) · 0.0s wall · 0 events/s\u001b[K',
      '\rsimulating 20s of 15m (2%) · 0.3s wall · 3,000 events/s\u001b[K',
      '\r\u001b[K',
    ]);
  });

  it('draws again right after a clear (another message was written meanwhile)', () => {
    const stream = terminal(true);
    const line = progressLine(stream, () => 0);
    line.update(at(0, 0));
    line.clear();
    line.update(at(5_000, 10));
    line.clear();
    line.clear(); // nothing shown: nothing to clear
    expect(stream.written).toHaveLength(4);
  });

  it('writes nothing when the stream is not a terminal', () => {
    const stream = terminal(false);
    let now = 0;
    const line = progressLine(stream, () => now);
    for (let i = 0; i < 10; i++) {
      now += 1_000;
      line.update(at(i * 1_000, i));
    }
    line.clear();
    expect(stream.written).toEqual([]);
  });
});
