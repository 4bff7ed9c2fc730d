// `nlc simulate --chaos`: delivery as AWS does it on a bad day, seeded so a run repeats byte for byte.
// Every event the bus delivers to a function, every schedule firing and every invocation the monitor
// makes of the drainer is delivered 1..duplicates times (EventBridge and asynchronous Lambda invokes are
// at-least-once), each copy after a random delay up to maxDelay (delivery latency, retries upstream of
// the function), and each delivery attempt fails with probability `failures` before the function runs
// (a throttle, a crashed sandbox); a failed delivery is retried as Lambda retries an asynchronous
// invocation (1 and 2 minutes later), then goes to the dead-letter queue. With `deadLetter`, a delivery
// goes to the dead-letter queue outright, without a run or a retry (a target EventBridge could not
// invoke, an event older than the target's maximum age). What happens inside a run (the drainer's
// waits) is not a delivery.
import { ConfigError, type ConfigIssue } from '../../shared/errors.js';
import { formatDuration, parseDuration } from '../../shared/duration.js';
import type { Millis } from '../../shared/domain/types.js';

export interface ChaosSettings {
  /** Each delivery happens 1..duplicates times (uniformly). */
  readonly duplicates: number;
  /** Each copy is delayed by 0..maxDelayMs (uniformly, whole milliseconds). */
  readonly maxDelayMs: Millis;
  /** Probability that a delivery attempt fails before the function runs. */
  readonly failures: number;
  /**
   * Probability that a delivery is dead-lettered outright: no run, no retry. Absent: 0 (added after
   * the other keys; a run without it draws exactly as before).
   */
  readonly deadLetter?: number;
  readonly seed: number;
}

/** What a `--chaos` key left out means: some of every kind of trouble. */
export const DefaultChaos: ChaosSettings = Object.freeze({
  duplicates: 2,
  maxDelayMs: 5_000,
  failures: 0.05,
  seed: 1,
});

const keys = ['duplicates', 'maxDelay', 'failures', 'deadLetter', 'seed'] as const;

/**
 * Parses `duplicates=N,maxDelay=D,failures=P,deadLetter=Q,seed=S` (any subset, any order; the rest from
 * DefaultChaos, deadLetter 0). Throws one ConfigError naming every bad key.
 *
 * @example parseChaos('duplicates=3,maxDelay=30s,failures=0.1,seed=7')
 */
export function parseChaos(spec: string, flag = '--chaos'): ChaosSettings {
  const issues: ConfigIssue[] = [];
  const values = new Map<string, string>();
  for (const part of spec.split(',').map((p) => p.trim())) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq).trim();
    if (eq < 0 || !(keys as readonly string[]).includes(key)) {
      issues.push({
        path: flag,
        message: `expected key=value with a key among ${keys.join(', ')}, got ${JSON.stringify(part)}`,
      });
      continue;
    }
    if (values.has(key)) issues.push({ path: `${flag} ${key}`, message: 'given twice' });
    values.set(key, part.slice(eq + 1).trim());
  }
  const integer = (key: string, min: number, max: number, fallback: number): number => {
    const raw = values.get(key);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (raw === '' || !Number.isInteger(n) || n < min || n > max) {
      issues.push({
        path: `${flag} ${key}`,
        message: `expected an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`,
      });
      return fallback;
    }
    return n;
  };
  const duplicates = integer('duplicates', 1, 100, DefaultChaos.duplicates);
  const seed = integer('seed', 0, 2 ** 32 - 1, DefaultChaos.seed);
  const probability = (key: string): number | undefined => {
    const raw = values.get(key);
    if (raw === undefined) return undefined;
    const p = Number(raw);
    if (raw === '' || !Number.isFinite(p) || p < 0 || p > 1) {
      issues.push({
        path: `${flag} ${key}`,
        message: `expected a probability from 0 to 1, got ${JSON.stringify(raw)}`,
      });
      return undefined;
    }
    return p;
  };
  const failures = probability('failures') ?? DefaultChaos.failures;
  const deadLetter = probability('deadLetter');
  let maxDelayMs = DefaultChaos.maxDelayMs;
  const rawDelay = values.get('maxDelay');
  if (rawDelay !== undefined) {
    try {
      maxDelayMs = parseDuration(rawDelay, `${flag} maxDelay`);
      if (maxDelayMs < 0 || maxDelayMs > 3_600_000) {
        issues.push({
          path: `${flag} maxDelay`,
          message: `expected a duration from 0s to 1h, got ${JSON.stringify(rawDelay)}`,
        });
        maxDelayMs = DefaultChaos.maxDelayMs;
      }
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.push(...error.issues);
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return { duplicates, maxDelayMs, failures, ...(deadLetter !== undefined && { deadLetter }), seed };
}

/** The settings as `--chaos` reads them back; deadLetter only when not 0 (as printed before it existed). */
export function formatChaos(settings: ChaosSettings): string {
  const deadLetter = (settings.deadLetter ?? 0) > 0 ? `,deadLetter=${settings.deadLetter ?? 0}` : '';
  return `duplicates=${settings.duplicates},maxDelay=${formatDuration(settings.maxDelayMs)},failures=${settings.failures}${deadLetter},seed=${settings.seed}`;
}

/** mulberry32: a small seeded PRNG, so a run repeats from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Counts of what the bus and Lambda did (with or without chaos). */
export interface DeliveryStats {
  /** Delivery attempts: copies and retries, failed ones included (not the outright dead-lettered). */
  readonly deliveries: number;
  /** Attempts that failed (injected, or the function threw). */
  readonly failures: number;
  /**
   * Deliveries given up on after Lambda's retries, and (`deadLetter`) those dead-lettered outright:
   * what the dead-letter queue would hold.
   */
  readonly deadLettered: number;
}

/** The draws of one run, in the order the (deterministic) simulation asks for them. */
export class DeliveryChaos {
  private readonly random: () => number;

  constructor(readonly settings: ChaosSettings) {
    this.random = seededRandom(settings.seed);
  }

  /** How many copies of a delivery arrive (1..duplicates). */
  copies(): number {
    return 1 + Math.floor(this.random() * this.settings.duplicates);
  }

  /** The delay of one copy (0..maxDelayMs). */
  delay(): Millis {
    return Math.round(this.random() * this.settings.maxDelayMs);
  }

  /** Whether this attempt fails before the function runs. */
  fails(): boolean {
    return this.settings.failures > 0 && this.random() < this.settings.failures;
  }

  /**
   * Whether this delivery goes to the dead-letter queue outright. Draws nothing when deadLetter is 0,
   * so such a run draws (and prints) exactly what a run without the key does.
   */
  deadLetters(): boolean {
    const p = this.settings.deadLetter ?? 0;
    return p > 0 && this.random() < p;
  }
}
