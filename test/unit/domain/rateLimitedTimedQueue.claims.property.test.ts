// Several drainers on one zone queue, as they run at once in production: each takes an item with tryNext
// (one conditional write: the queue state below is the stored one), writes for as long as it takes, and
// completes it, or crashes on the way and is retried by Lambda as a new run; meanwhile the monitor
// queues nodes (markNodeForTainting, re-created ones under a new UID included) and forgets recovered
// ones. For any interleaving: no token is spent on an item whose token is spent and not completed, the
// zone never spends more than burst + qps × elapsed, and a due item is handed out as soon as a token
// is there, whatever the items ahead of it are waiting for.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptyControllerState, freeze, workingCopy } from '../../../shared/domain/controllerState.js';
import {
  completeTry,
  newRateLimitedTimedQueue,
  nextHandOutAt,
  type RateLimitedTimedQueue,
  remove,
  type TimedValue,
  tryNext,
} from '../../../shared/domain/rateLimitedTimedQueue.js';
import { markNodeForTainting } from '../../../shared/domain/taintBasedEviction.js';
import { newTokenBucketRateLimiter, tryAccept } from '../../../shared/domain/tokenBucket.js';
import type { Node } from '../../../shared/domain/types.js';

const T0 = Date.parse('2026-03-02T09:00:00Z');
const TTL = 15_000;
// Float slack: x/time accepts a deficit refilled in under 1ns, and qps × w is a float product.
const EPSILON = 1e-6;
const ZONE = ''; // nodes without zone labels
const DRAINERS = [0, 1, 2, 3];

type Op =
  | { readonly kind: 'try'; readonly drainer: number }
  | { readonly kind: 'complete'; readonly drainer: number; readonly done: boolean; readonly wait: number }
  | { readonly kind: 'crash'; readonly drainer: number }
  | { readonly kind: 'monitor'; readonly value: string; readonly uid: string }
  | { readonly kind: 'forget'; readonly value: string }
  | { readonly kind: 'advance'; readonly by: number };

const drainerArb = fc.constantFrom(...DRAINERS);
const valueArb = fc.constantFrom('node-a', 'node-b', 'node-c', 'node-d', 'node-e');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('try' as const), drainer: drainerArb }), weight: 4 },
  {
    arbitrary: fc.record({
      kind: fc.constant('complete' as const),
      drainer: drainerArb,
      done: fc.boolean(),
      wait: fc.constantFrom(0, 50, 20_000),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('crash' as const), drainer: drainerArb }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('monitor' as const),
      value: valueArb,
      uid: fc.constantFrom('1', '2'), // '2': the node was re-created under its name
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('forget' as const), value: valueArb }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      // Often nothing (several drainers at one instant), sometimes a slow write or a whole claim.
      by: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 1, max: 3_000 }),
        fc.integer({ min: TTL - 1_000, max: 2 * TTL }),
      ),
    }),
    weight: 3,
  },
);
const qpsArb = fc.constantFrom(0, 0.1, 0.5, 2, 40);

/** A node the monitor observed Ready=Unknown without a NoExecute taint: markNodeForTainting queues it. */
function unknownNode(name: string, uid: string): Node {
  return {
    name,
    uid: `${name}-${uid}`,
    creationTimestamp: T0,
    labels: {},
    taints: [],
    unschedulable: false,
    conditions: [{ type: 'Ready', status: 'Unknown' }],
  };
}

/** One monitor pass's queue change, through the monitor's own code and working copy. */
function monitorPass(q: RateLimitedTimedQueue, node: Node, now: number): RateLimitedTimedQueue {
  const state = workingCopy({ ...emptyControllerState(), zoneQueues: new Map([[ZONE, q]]) });
  markNodeForTainting(state, node, 'Unknown', now);
  return freeze(state).zoneQueues.get(ZONE)!;
}

/** Every window between two token instants holds at most burst + qps × w of them. */
function assertWindowBound(instants: readonly number[], burst: number, qps: number): void {
  for (let i = 0; i < instants.length; i++) {
    for (let j = i; j < instants.length; j++) {
      expect(j - i + 1).toBeLessThanOrEqual(burst + (qps * (instants[j]! - instants[i]!)) / 1000 + EPSILON);
    }
  }
}

describe('token claims under concurrent drainers', () => {
  it('no item gets a second token before it is completed, the zone stays within burst + qps × elapsed, and a due item is handed out as soon as a token is there', () => {
    fc.assert(
      fc.property(
        qpsArb,
        fc.integer({ min: 1, max: 2 }),
        fc.array(opArb, { maxLength: 150, size: 'max' }),
        (qps, burst, ops) => {
          let q = newRateLimitedTimedQueue(newTokenBucketRateLimiter(qps, burst, T0));
          let now = T0;
          let runs = 0;
          const drainers = DRAINERS.map(() => ({
            run: `run-${runs++}`,
            holding: undefined as TimedValue | undefined,
          }));
          // Tokens spent on each value's current attempt: 1 from its token until it is completed or forgotten.
          const spent = new Map<string, number>();
          // The run that holds each held value: the last to be handed it out, until it completes it.
          const holder = new Map<string, string>();
          const tokenInstants: number[] = [];

          for (const op of ops) {
            switch (op.kind) {
              case 'advance':
                now += op.by;
                break;
              case 'monitor':
                q = monitorPass(q, unknownNode(op.value, op.uid), now);
                break;
              case 'forget': {
                const forgotten = remove(q, op.value);
                q = forgotten.queue;
                if (forgotten.removed) {
                  spent.delete(op.value);
                  holder.delete(op.value);
                }
                break;
              }
              case 'crash': {
                // Lambda retries the invocation: a new run, which knows nothing of the item it held.
                drainers[op.drainer] = { run: `run-${runs++}`, holding: undefined };
                break;
              }
              case 'complete': {
                const d = drainers[op.drainer]!;
                if (d.holding === undefined) break;
                const item = d.holding;
                d.holding = undefined;
                // `now` of completeTry is the instant of the tryNext that handed the item out (upstream's t).
                const after = completeTry(
                  q,
                  item,
                  op.done ? { done: true } : { done: false, wait: op.wait },
                  item.claim!.at,
                );
                if (holder.get(item.value) === d.run) {
                  expect(after).not.toBe(q);
                  spent.delete(item.value);
                  holder.delete(item.value);
                } else {
                  // Taken over (or forgotten) meanwhile: the late completion changes nothing.
                  expect(after).toBe(q);
                }
                q = after;
                break;
              }
              case 'try': {
                const d = drainers[op.drainer]!;
                if (d.holding !== undefined) break;
                const before = q;
                const runOut = before.queue.filter((v) => v.claim !== undefined && now >= v.claim.until);
                const dueUnclaimed = before.queue.some((v) => v.claim === undefined && v.processAt <= now);
                const tokenThere = tryAccept(before.limiter, now).accepted;
                const step = tryNext(before, now, { by: d.run, ttl: TTL });
                q = step.queue;
                const tokenSpent = step.queue.limiter !== before.limiter;
                if (tokenSpent) tokenInstants.push(now);

                // Handed out as soon as possible: an item whose claim ran out at once and without a
                // token; else the first due unclaimed item whenever the bucket has a token, however many
                // items ahead of it are held by runs still writing.
                if (runOut.length > 0) {
                  expect(step.takenOver).toBe(true);
                  expect(tokenSpent).toBe(false);
                } else {
                  expect(step.item !== undefined).toBe(dueUnclaimed && tokenThere);
                }
                if (step.item === undefined) break;
                const was = before.queue.find((v) => v.value === step.item!.value)!;
                // Never an item another run may still be writing.
                expect(was.claim === undefined || now >= was.claim.until).toBe(true);
                if (tokenSpent) {
                  expect(spent.get(step.item.value) ?? 0).toBe(0);
                  spent.set(step.item.value, 1);
                } else {
                  // Taken over: its token was spent when it was first handed out.
                  expect(spent.get(step.item.value)).toBe(1);
                }
                d.holding = step.item;
                holder.set(step.item.value, d.run);
                break;
              }
            }

            // Every held item carries the token spent on it and its holder's claim, and only those do.
            for (const [value, run] of holder)
              expect(q.queue.find((v) => v.value === value)?.claim?.by).toBe(run);
            for (const v of q.queue) expect(spent.get(v.value) === 1).toBe(v.claim !== undefined);
            for (const [value] of spent)
              expect(q.queue.some((v) => v.value === value && v.claim !== undefined)).toBe(true);
            // The zone's rate, however many drainers run.
            expect(tokenInstants.length).toBeLessThanOrEqual(burst + (qps * (now - T0)) / 1000 + EPSILON);
            // The drainer wakes when tryNext next hands out an item, not later.
            const wake = nextHandOutAt(q, now);
            if (wake !== undefined) {
              expect(tryNext(q, wake).item).toBeDefined();
              if (wake - 1 > now) expect(tryNext(q, wake - 1).item).toBeUndefined();
            } else {
              // Never: nothing queued, or a zone without tokens (rate 0) and nothing held.
              expect(tryNext(q, now + 100 * TTL).item).toBeUndefined();
            }
          }
          assertWindowBound(tokenInstants, burst, qps);
        },
      ),
      { numRuns: 500 },
    );
  });
});
