// The timer heap against a sorted reference: for any timers and cancellations, timers come out in
// (time, priority, insertion) order and cancelled ones never come out.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TimerQueue, firstOnGrid } from '../../../shared/adapters/timerQueue.js';

describe('TimerQueue', () => {
  it('pops live timers in (time, priority, insertion) order', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            time: fc.integer({ min: 0, max: 50 }),
            priority: fc.integer({ min: 0, max: 3 }),
            cancel: fc.boolean(),
          }),
          { maxLength: 200 },
        ),
        (specs) => {
          const queue = new TimerQueue();
          const entries = specs.map((spec, i) => ({
            ...spec,
            i,
            id: queue.add(spec.time, spec.priority, () => undefined).id,
          }));
          for (const entry of entries) if (entry.cancel) queue.cancel({ id: entry.id });
          const want = entries
            .filter((e) => !e.cancel)
            .sort((a, b) => a.time - b.time || a.priority - b.priority || a.i - b.i)
            .map((e) => e.id);
          expect(queue.size).toBe(want.length);
          const got: number[] = [];
          for (let next = queue.pop(); next !== undefined; next = queue.pop()) got.push(next.id);
          expect(got).toEqual(want);
          expect(queue.size).toBe(0);
        },
      ),
    );
  });

  it('puts a periodic timer back at its next occurrence until cancelled', () => {
    const queue = new TimerQueue();
    const periodic = queue.add(0, 1, () => undefined, 10);
    queue.add(15, 0, () => undefined);
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      const entry = queue.pop();
      order.push(`${entry?.id === periodic.id ? 'p' : 'o'}@${entry?.time ?? -1}`);
    }
    expect(order).toEqual(['p@0', 'p@10', 'o@15', 'p@20']);
    expect(queue.cancel(periodic)).toBe(true);
    expect(queue.pop()).toBeUndefined();
  });

  it.each([
    { name: 'a first time in the future stays', firstAt: 100, notBefore: 50, want: 100 },
    { name: 'on the grid stays', firstAt: 0, notBefore: 30, want: 30 },
    { name: 'between grid points moves to the next', firstAt: 0, notBefore: 31, want: 40 },
  ])('firstOnGrid: $name', ({ firstAt, notBefore, want }) => {
    expect(firstOnGrid(firstAt, 10, notBefore)).toBe(want);
  });
});
