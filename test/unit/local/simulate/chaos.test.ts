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
      '--chaos: expected key=value with a key among duplicates, maxDelay, failures, deadLetter, seed, got "colour=red"',
      '--chaos: expected key=value with a key among duplicates, maxDelay, failures, deadLetter, seed, got "seed"',
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

describe('parseChaos deadLetter', () => {
  it('is a probability, 0 unless given', () => {
    expect(parseChaos('deadLetter=0.05')).toEqual({ ...DefaultChaos, deadLetter: 0.05 });
    expect(parseChaos('deadLetter=1,failures=0')).toEqual({ ...DefaultChaos, failures: 0, deadLetter: 1 });
    expect(parseChaos('deadLetter=0').deadLetter).toBe(0);
    expect(parseChaos('seed=3').deadLetter).toBeUndefined();
  });

  it.each(['1.5', '-0.1', '', 'often', 'NaN', 'Infinity'])('names the key of a bad value: %j', (value) => {
    expect(issues(`deadLetter=${value}`)).toEqual([
      `--chaos deadLetter: expected a probability from 0 to 1, got ${JSON.stringify(value)}`,
    ]);
  });

  it('is given once', () => {
    expect(issues('deadLetter=0.1,deadLetter=0.2')).toEqual(['--chaos deadLetter: given twice']);
  });

  it('is printed only when not 0, so the line of a run without it does not change', () => {
    const base = parseChaos('duplicates=3,maxDelay=5s,failures=0.05,seed=7');
    expect(formatChaos(base)).toBe('duplicates=3,maxDelay=5s,failures=0.05,seed=7');
    expect(formatChaos({ ...base, deadLetter: 0 })).toBe('duplicates=3,maxDelay=5s,failures=0.05,seed=7');
    const dead = parseChaos('deadLetter=0.25,seed=2');
    expect(formatChaos(dead)).toBe('duplicates=2,maxDelay=5s,failures=0.05,deadLetter=0.25,seed=2');
    expect(parseChaos(formatChaos(dead))).toEqual(dead);
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

  it('dead-letters as often as asked, and draws nothing for it at 0', () => {
    const settings = { duplicates: 3, maxDelayMs: 10_000, failures: 0.2, seed: 42 };
    const all = new DeliveryChaos({ ...settings, deadLetter: 0.3 });
    const dead = Array.from({ length: 1000 }, () => all.deadLetters()).filter(Boolean).length;
    expect(dead).toBeGreaterThan(200);
    expect(dead).toBeLessThan(400);
    expect(
      Array.from({ length: 50 }, () => new DeliveryChaos({ ...settings, deadLetter: 1 }).deadLetters()),
    ).toEqual(Array.from({ length: 50 }, () => true));
    // At 0 the draws interleaved with deadLetters() are the draws of a run without the key.
    const zero = new DeliveryChaos({ ...settings, deadLetter: 0 });
    const interleaved = Array.from({ length: 200 }, () => {
      expect(zero.deadLetters()).toBe(false);
      return [zero.copies(), zero.delay(), zero.fails()] as const;
    });
    expect(interleaved).toEqual(draws(new DeliveryChaos(settings)));
  });

  it('never fails and never duplicates without being asked to', () => {
    const calm = new DeliveryChaos({ duplicates: 1, maxDelayMs: 0, failures: 0, seed: 1 });
    expect(draws(calm).every(([copies, delay, fails]) => copies === 1 && delay === 0 && !fails)).toBe(true);
  });
});
