// `nlc simulate --chaos`: the flag's parsing (a public interface: every bad key named) and the seeded
// draws (same seed, same run).
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../../shared/errors.js';
import { DefaultChaos, DeliveryChaos, formatChaos, parseChaos } from '../../../../local/simulate/chaos.js';

function issues(spec: string): string[] {
  try {
    parseChaos(spec);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

describe('parseChaos', () => {
  it('reads every key, in any order', () => {
    expect(parseChaos('duplicates=3,maxDelay=30s,failures=0.1,seed=7')).toEqual({
      duplicates: 3,
      maxDelayMs: 30_000,
      failures: 0.1,
      seed: 7,
    });
    expect(parseChaos('seed=9, failures=0 ,maxDelay=1m30s')).toEqual({
      duplicates: DefaultChaos.duplicates,
      maxDelayMs: 90_000,
      failures: 0,
      seed: 9,
    });
  });

  it('takes what a key leaves out from the defaults, and reads its own output back', () => {
    expect(parseChaos('')).toEqual(DefaultChaos);
    const settings = parseChaos('duplicates=4,maxDelay=250ms,failures=0.25,seed=3');
    expect(parseChaos(formatChaos(settings))).toEqual(settings);
  });

  it('names every bad key at once', () => {
    expect(issues('duplicates=0,maxDelay=soon,failures=1.5,seed=-1,colour=red,seed')).toEqual([
      '--chaos: expected key=value with a key among duplicates, maxDelay, failures, seed, got "colour=red"',
      '--chaos: expected key=value with a key among duplicates, maxDelay, failures, seed, got "seed"',
      '--chaos duplicates: expected an integer from 1 to 100, got "0"',
      '--chaos seed: expected an integer from 0 to 4294967295, got "-1"',
      '--chaos failures: expected a probability from 0 to 1, got "1.5"',
      expect.stringMatching(/^--chaos maxDelay: expected .*"soon"/),
    ]);
    expect(issues('seed=1,seed=2')).toEqual(['--chaos seed: given twice']);
    expect(issues('maxDelay=-5s')).toEqual([
      '--chaos maxDelay: expected a duration from 0s to 1h, got "-5s"',
    ]);
  });
});

describe('DeliveryChaos', () => {
  const draws = (chaos: DeliveryChaos) =>
    Array.from({ length: 200 }, () => [chaos.copies(), chaos.delay(), chaos.fails()] as const);

  it('draws the same sequence from the same seed, another from another seed', () => {
    const settings = { duplicates: 3, maxDelayMs: 10_000, failures: 0.2, seed: 42 };
    expect(draws(new DeliveryChaos(settings))).toEqual(draws(new DeliveryChaos(settings)));
    expect(draws(new DeliveryChaos({ ...settings, seed: 43 }))).not.toEqual(
      draws(new DeliveryChaos(settings)),
    );
  });

  it('stays within its bounds and reaches them', () => {
    const all = draws(new DeliveryChaos({ duplicates: 3, maxDelayMs: 10_000, failures: 0.2, seed: 5 }));
    expect(new Set(all.map(([copies]) => copies))).toEqual(new Set([1, 2, 3]));
    expect(all.every(([, delay]) => delay >= 0 && delay <= 10_000 && Number.isInteger(delay))).toBe(true);
    const failed = all.filter(([, , fails]) => fails).length;
    expect(failed).toBeGreaterThan(0);
    expect(failed).toBeLessThan(all.length / 2);
  });

  it('never fails and never duplicates without being asked to', () => {
    const calm = new DeliveryChaos({ duplicates: 1, maxDelayMs: 0, failures: 0, seed: 1 });
    expect(draws(calm).every(([copies, delay, fails]) => copies === 1 && delay === 0 && !fails)).toBe(true);
  });
});
