import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type RateLimitedTimedQueue,
  EvictionRateLimiterBurst,
  add,
  completeTry,
  newRateLimitedTimedQueue,
  remove,
  swapLimiter,
  tryNext,
  WorkingQueue,
} from '../../../shared/domain/rateLimitedTimedQueue.js';
import {
  type RateLimiter,
  fakeNeverRateLimiter,
  newTokenBucketRateLimiter,
  tryAccept,
} from '../../../shared/domain/tokenBucket.js';

// Float slack: x/time accepts a deficit refilled in under 1ns, and qps × w is a float product.
const EPSILON = 1e-6;

const T0 = Date.parse('2024-06-01T00:00:00Z');

/** Time steps in ms, often 0 (several calls at one instant), sometimes long. */
const step = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 1, max: 200 }),
  fc.integer({ min: 1, max: 30_000 }),
  fc.double({ min: 0, max: 5_000, noNaN: true }),
);
const qpsArb = fc.oneof(fc.constantFrom(0, 0.01, 0.1, 1, 5.5), fc.double({ min: 0, max: 50, noNaN: true }));

/** Every window [a_i, a_j] over accepted instants holds at most burst + qps × w events. */
function assertWindowBound(instants: readonly number[], burst: number, qps: number): void {
  for (let i = 0; i < instants.length; i++) {
    for (let j = i; j < instants.length; j++) {
      const count = j - i + 1;
      const width = instants[j]! - instants[i]!;
      expect(count).toBeLessThanOrEqual(burst + (qps * width) / 1000 + EPSILON);
    }
  }
}

describe('token bucket', () => {
  it('(a) no window [t, t+w] accepts more than burst + qps × w', () => {
    fc.assert(
      fc.property(
        qpsArb,
        fc.integer({ min: 0, max: 5 }),
        fc.array(step, { maxLength: 150, size: 'max' }),
        (qps, burst, steps) => {
          let limiter = newTokenBucketRateLimiter(qps, burst, T0);
          let now = T0;
          const accepted: number[] = [];
          for (const d of steps) {
            now += d;
            const result = tryAccept(limiter, now);
            limiter = result.limiter;
            if (result.accepted) accepted.push(now);
          }
          assertWindowBound(accepted, burst, qps);
        },
      ),
    );
  });
});

type Op =
  | { readonly kind: 'add'; readonly value: string }
  | { readonly kind: 'remove'; readonly value: string }
  | { readonly kind: 'try'; readonly done: boolean; readonly wait: number; readonly removeMeanwhile?: string }
  | { readonly kind: 'advance'; readonly by: number };

const valueArb = fc.constantFrom('node-a', 'node-b', 'node-c', 'node-d');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('add' as const), value: valueArb }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('remove' as const), value: valueArb }), weight: 1 },
  {
    arbitrary: fc.record(
      {
        kind: fc.constant('try' as const),
        done: fc.boolean(),
        wait: fc.integer({ min: 0, max: 100 }),
        removeMeanwhile: valueArb,
      },
      { requiredKeys: ['kind', 'done', 'wait'] },
    ),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('advance' as const), by: step }), weight: 2 },
);

describe('RateLimitedTimedQueue', () => {
  it('(b) a value is never processed twice without a remove in between', () => {
    fc.assert(
      fc.property(
        qpsArb,
        fc.integer({ min: 1, max: 3 }),
        fc.array(opArb, { maxLength: 120, size: 'max' }),
        (qps, burst, ops) => {
          let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(qps, burst, T0));
          let now = T0;
          const processed = new Set<string>(); // completed done, not removed since
          for (const op of ops) {
            switch (op.kind) {
              case 'add':
                q = add(q, op.value, `uid-${op.value}`, now).queue;
                break;
              case 'remove':
                q = remove(q, op.value).queue;
                processed.delete(op.value);
                break;
              case 'advance':
                now += op.by;
                break;
              case 'try': {
                const next = tryNext(q, now);
                q = next.queue;
                if (next.item === undefined) break;
                expect(processed.has(next.item.value)).toBe(false);
                // The caller's I/O happens here; another writer may remove a value meanwhile.
                if (op.removeMeanwhile !== undefined) {
                  q = remove(q, op.removeMeanwhile).queue;
                  processed.delete(op.removeMeanwhile);
                }
                q = completeTry(q, next.item, op.done ? { done: true } : { done: false, wait: op.wait }, now);
                // A remove of this very value during its I/O lies between this processing and any
                // later one (upstream: markNodeAsReachable while the taint is being written).
                if (op.done && op.removeMeanwhile !== next.item.value) processed.add(next.item.value);
                break;
              }
            }
          }
        },
      ),
    );
  });

  const limiterWithHistory: fc.Arbitrary<{ limiter: RateLimiter; now: number }> = fc.oneof(
    fc.constant({ limiter: fakeNeverRateLimiter, now: T0 }),
    fc
      .tuple(qpsArb, fc.integer({ min: 1, max: 3 }), fc.array(step, { maxLength: 20 }))
      .map(([qps, burst, steps]) => {
        let limiter = newTokenBucketRateLimiter(qps, burst, T0);
        let now = T0;
        for (const d of steps) {
          now += d;
          limiter = tryAccept(limiter, now).limiter;
        }
        return { limiter, now };
      }),
  );

  it('(c) swapLimiter never grants a token the old limiter would not have', () => {
    fc.assert(
      fc.property(
        limiterWithHistory,
        step,
        fc.oneof(fc.constantFrom(-1, 0, 1), qpsArb),
        ({ limiter, now }, after, newQPS) => {
          const at = now + after;
          const oldHadToken = tryAccept(limiter, at).accepted;
          const swapped = swapLimiter(newRateLimitedTimedQueue(limiter), newQPS, at);
          const newAccepts = tryAccept(swapped.limiter, at).accepted;
          expect(!newAccepts || oldHadToken).toBe(true);
        },
      ),
    );
  });

  type QueueOp = Op | { readonly kind: 'swap'; readonly qps: number };

  /** Runs ops on a queue with a burst-1 bucket at `qps`; returns the instants items were handed out. */
  function processedInstants(qps: number, ops: readonly QueueOp[]): number[] {
    let q: RateLimitedTimedQueue = newRateLimitedTimedQueue(
      newTokenBucketRateLimiter(qps, EvictionRateLimiterBurst, T0),
    );
    let now = T0;
    const instants: number[] = [];
    for (const op of ops) {
      switch (op.kind) {
        case 'add':
          q = add(q, op.value, `uid-${op.value}`, now).queue;
          break;
        case 'remove':
          q = remove(q, op.value).queue;
          break;
        case 'advance':
          now += op.by;
          break;
        case 'swap':
          q = swapLimiter(q, op.qps, now);
          break;
        case 'try': {
          const next = tryNext(q, now);
          q = next.queue;
          if (next.item === undefined) break;
          instants.push(now);
          q = completeTry(q, next.item, op.done ? { done: true } : { done: false, wait: op.wait }, now);
          break;
        }
      }
    }
    return instants;
  }

  it('(d) processed items obey burst + qps × w with no-op swaps to the same QPS', () => {
    fc.assert(
      fc.property(
        qpsArb,
        fc.array(fc.oneof(opArb, fc.constant({ kind: 'swap' as const })), { maxLength: 150, size: 'max' }),
        (qps, rawOps) => {
          const ops = rawOps.map((op): QueueOp => (op.kind === 'swap' ? { kind: 'swap', qps } : op));
          assertWindowBound(processedInstants(qps, ops), EvictionRateLimiterBurst, qps);
        },
      ),
    );
  });

  it('(d) with any swaps, no window processes more than 1 + max_qps × w', () => {
    fc.assert(
      fc.property(
        qpsArb,
        fc.array(
          fc.oneof(
            opArb,
            fc.record({
              kind: fc.constant('swap' as const),
              qps: fc.oneof(fc.constantFrom(-1, 0, 1), qpsArb),
            }),
          ),
          { maxLength: 150, size: 'max' },
        ),
        (qps, ops) => {
          const maxQPS = Math.max(qps, ...ops.map((op) => (op.kind === 'swap' ? op.qps : 0)));
          // The never-limiter reports QPS 1 but grants nothing, so it does not raise the bound.
          assertWindowBound(processedInstants(qps, ops), 1, maxQPS);
        },
      ),
    );
  });

  type WorkingOp =
    | { readonly kind: 'add'; readonly value: string; readonly at: number }
    | { readonly kind: 'remove'; readonly value: string }
    | { readonly kind: 'read' };
  const workingValueArb = fc.constantFrom('node-a', 'node-b', 'node-c', 'node-d', 'node-e', 'node-f');
  const workingOpArb: fc.Arbitrary<WorkingOp> = fc.oneof(
    fc.record({
      kind: fc.constant('add' as const),
      value: workingValueArb,
      // Often the same instant (one pass), sometimes before the queue's entries.
      at: fc.oneof(fc.constant(0), fc.integer({ min: -300, max: 300 })),
    }),
    fc.record({ kind: fc.constant('remove' as const), value: workingValueArb }),
    fc.record({ kind: fc.constant('read' as const) }),
  );

  it('(e) a WorkingQueue gives what the same add and remove calls give, the same object when unchanged', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 60 }),
        fc.array(workingOpArb, { maxLength: 80 }),
        (setup, ops) => {
          // A start with retries (later processAt) and processed values (in the set, not queued).
          let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(5.5, 2, T0));
          let now = T0;
          for (const op of setup) {
            if (op.kind === 'add') q = add(q, op.value, `uid-${op.value}`, now).queue;
            if (op.kind === 'remove') q = remove(q, op.value).queue;
            if (op.kind === 'advance') now += op.by;
            if (op.kind === 'try') {
              const next = tryNext(q, now);
              q = next.queue;
              if (next.item !== undefined) {
                q = completeTry(q, next.item, op.done ? { done: true } : { done: false, wait: op.wait }, now);
              }
            }
          }
          const working = new WorkingQueue(q);
          // The plain calls continue from each read's result, so an unchanged `q` is still that object.
          let last = q;
          for (const op of [...ops, { kind: 'read' as const }]) {
            if (op.kind === 'add') {
              const plain = add(q, op.value, `uid-${op.value}`, now + op.at);
              expect(working.add(op.value, `uid-${op.value}`, now + op.at)).toBe(plain.added);
              q = plain.queue;
            }
            if (op.kind === 'remove') {
              const plain = remove(q, op.value);
              expect(working.remove(op.value)).toBe(plain.removed);
              q = plain.queue;
            }
            if (op.kind === 'read') {
              const got = working.queue();
              expect(got).toEqual(q);
              if (q === last) expect(got).toBe(last);
              last = got;
              q = got;
            }
          }
        },
      ),
    );
  });
});
