import { describe, expect, it } from 'vitest';
import {
  addWork,
  cancelWork,
  completeWork,
  createWorkerQueue,
  dueWork,
  getEntry,
  getWorkerUnsafe,
  startFiring,
  type TimedWorkerQueue,
} from '../../../shared/domain/timedWorkerQueue.js';
import type { EpochMillis } from '../../../shared/domain/types.js';

const second = 1000;
const start: EpochMillis = Date.parse('2017-01-01T12:00:00Z');

/**
 * Upstream's tests count how often the work function runs. This harness plays the worker side in
 * virtual time: immediate work runs at once, timer-backed work runs when the fake clock reaches it.
 */
class Harness {
  queue: TimedWorkerQueue = createWorkerQueue();
  now: EpochMillis = start;
  executions: string[] = [];

  add(key: string, createdAt: EpochMillis, fireAt: EpochMillis): void {
    const result = addWork(this.queue, key, createdAt, fireAt, this.now);
    this.queue = result.queue;
    if (result.kind === 'firing') this.run(key, result.entry.token);
  }

  cancel(key: string): boolean {
    const { queue, cancelled } = cancelWork(this.queue, key);
    this.queue = queue;
    return cancelled;
  }

  /** testingclock.FakeClock.Step. */
  step(ms: number): void {
    this.now += ms;
    for (const entry of dueWork(this.queue, this.now)) {
      const { queue, started } = startFiring(this.queue, entry.key, entry.token);
      this.queue = queue;
      if (started) this.run(entry.key, entry.token);
    }
  }

  private run(key: string, token: number): void {
    this.executions.push(key);
    this.queue = completeWork(this.queue, key, token);
  }
}

const keys = ['1/1', '2/2', '3/3', '4/4', '5/5'];

describe('TestExecute', () => {
  it('runs five immediate works', () => {
    const h = new Harness();
    for (const key of keys) h.add(key, h.now, h.now);
    expect(h.executions).toHaveLength(5);
    expect(h.queue.workers).toEqual({});
  });
});

describe('TestExecuteDelayed', () => {
  it('runs each key once although added twice', () => {
    const h = new Harness();
    const then = h.now + 10 * second;
    for (const key of [...keys, ...keys]) h.add(key, h.now, then);
    expect(h.executions).toHaveLength(0);
    h.step(11 * second);
    expect(h.executions).toHaveLength(5);
    expect(h.queue.workers).toEqual({});
  });
});

describe('TestCancel', () => {
  it('runs only the works not cancelled', () => {
    const h = new Harness();
    const then = h.now + 10 * second;
    for (const key of [...keys, ...keys]) h.add(key, h.now, then);
    h.cancel('2/2');
    h.cancel('4/4');
    h.step(11 * second);
    expect(h.executions).toHaveLength(3);
    expect(h.executions.sort()).toEqual(['1/1', '3/3', '5/5']);
  });
});

describe('TestCancelAndRead', () => {
  it('a cancelled key can be added again', () => {
    const h = new Harness();
    const then = h.now + 10 * second;
    for (const key of [...keys, ...keys]) h.add(key, h.now, then);
    h.cancel('2/2');
    h.cancel('4/4');
    h.add('2/2', h.now, then);
    h.step(11 * second);
    expect(h.executions).toHaveLength(4);
  });
});

describe('TestRunningWorkerCompletionDoesNotRemoveReplacement', () => {
  const key = 'namespace/pod';
  it.each<{
    name: string;
    startFirstWorker: (
      q: TimedWorkerQueue,
      now: EpochMillis,
    ) => { queue: TimedWorkerQueue; token: number; clock: EpochMillis };
    expectCancelToSucceed: boolean;
  }>([
    {
      name: 'immediate worker',
      startFirstWorker: (q, now) => {
        const added = addWork(q, key, now, now, now);
        if (added.kind !== 'firing') throw new Error('expected immediate work');
        // The work function blocks: no completeWork yet.
        return { queue: added.queue, token: added.entry.token, clock: now };
      },
      expectCancelToSucceed: false,
    },
    {
      name: 'scheduled worker already firing',
      startFirstWorker: (q, now) => {
        const added = addWork(q, key, now, now + second, now);
        const clock = now + second; // fakeClock.Step(time.Second)
        const [due] = dueWork(added.queue, clock);
        if (due === undefined) throw new Error('expected the timer to fire');
        const { queue, started } = startFiring(added.queue, key, due.token);
        expect(started).toBe(true);
        return { queue, token: due.token, clock };
      },
      expectCancelToSucceed: true,
    },
  ])('$name', ({ startFirstWorker, expectCancelToSucceed }) => {
    const now = start;
    const first = startFirstWorker(createWorkerQueue(), now);

    const cancelled = cancelWork(first.queue, key);
    expect(cancelled.cancelled).toBe(expectCancelToSucceed);

    const replacementFireAt = now + 10 * second;
    const replacementAdded = addWork(cancelled.queue, key, now + 2 * second, replacementFireAt, first.clock);
    expect(replacementAdded.kind).toBe('scheduled');
    let replacement = getWorkerUnsafe(replacementAdded.queue, key);
    expect(replacement?.fireAt).toBe(replacementFireAt);
    // docs/upstream.md#quirk-22: the timer runs fireAt - createdAt = 8s from the AddWork call, not until
    // fireAt.
    expect(replacement?.firesAt).toBe(first.clock + 8 * second);

    // close(release): the first work completes with its own token.
    const afterCompletion = completeWork(replacementAdded.queue, key, first.token);
    replacement = getWorkerUnsafe(afterCompletion, key);
    expect(replacement).toBeDefined();
    expect(replacement?.fireAt).toBe(replacementFireAt);

    const cancelReplacement = cancelWork(afterCompletion, key);
    expect(cancelReplacement.cancelled).toBe(true);
    expect(getWorkerUnsafe(cancelReplacement.queue, key)).toBeUndefined();
  });
});

describe('timedWorkerQueue (own cases)', () => {
  it('addWork with delay <= 0 (fireAt before createdAt) is immediate', () => {
    const r = addWork(createWorkerQueue(), 'a/b', start, start - second, start);
    expect(r.kind).toBe('firing');
    expect(getWorkerUnsafe(r.queue, 'a/b')).toBeUndefined();
    expect(getEntry(r.queue, 'a/b')).toMatchObject({ timerBacked: false, firing: true, firesAt: start });
  });

  it('running immediate work makes a later addWork skip (until it completes)', () => {
    const first = addWork(createWorkerQueue(), 'a/b', start, start, start);
    if (first.kind !== 'firing') throw new Error('expected immediate work');
    const skipped = addWork(first.queue, 'a/b', start + 1, start + 60 * second, start + 1);
    expect(skipped.kind).toBe('skipped');
    expect(skipped.queue).toBe(first.queue);
    const done = completeWork(first.queue, 'a/b', first.entry.token);
    expect(addWork(done, 'a/b', start + 1, start + 60 * second, start + 1).kind).toBe('scheduled');
  });

  it('firesAt counts the delay from the addWork call (docs/upstream.md#quirk-22), dueWork honours it', () => {
    // createdAt 10s in the past, fireAt 20s ahead: the timer runs 30s after the call.
    const r = addWork(createWorkerQueue(), 'a/b', start - 10 * second, start + 20 * second, start);
    expect(r.kind).toBe('scheduled');
    expect(getEntry(r.queue, 'a/b')?.firesAt).toBe(start + 30 * second);
    expect(dueWork(r.queue, start + 20 * second)).toEqual([]);
    expect(dueWork(r.queue, start + 30 * second).map((e) => e.key)).toEqual(['a/b']);
  });

  it('a timer fires exactly at its instant, not a millisecond earlier', () => {
    const r = addWork(createWorkerQueue(), 'a/b', start, start + second, start);
    expect(dueWork(r.queue, start + second - 1)).toEqual([]);
    expect(dueWork(r.queue, start + second)).toHaveLength(1);
  });

  it('dueWork is ordered by fire time, then key, and skips firing entries', () => {
    let q = createWorkerQueue();
    q = addWork(q, 'ns/c', start, start + 2 * second, start).queue;
    q = addWork(q, 'ns/b', start, start + 1 * second, start).queue;
    q = addWork(q, 'ns/a', start, start + 2 * second, start).queue;
    q = addWork(q, 'ns/d', start, start + 2 * second, start).queue;
    expect(dueWork(q, start + 5 * second).map((e) => e.key)).toEqual(['ns/b', 'ns/a', 'ns/c', 'ns/d']);
    const d = getEntry(q, 'ns/d');
    q = startFiring(q, 'ns/d', d?.token ?? -1).queue;
    expect(dueWork(q, start + 5 * second).map((e) => e.key)).toEqual(['ns/b', 'ns/a', 'ns/c']);
  });

  it('startFiring refuses a cancelled, replaced or already running entry', () => {
    const first = addWork(createWorkerQueue(), 'a/b', start, start + second, start);
    if (first.kind !== 'scheduled') throw new Error('expected a timer');
    const token = first.entry.token;
    // cancelled
    const gone = cancelWork(first.queue, 'a/b').queue;
    expect(startFiring(gone, 'a/b', token)).toEqual({ queue: gone, started: false });
    // replaced
    const replaced = addWork(gone, 'a/b', start, start + 5 * second, start);
    expect(startFiring(replaced.queue, 'a/b', token).started).toBe(false);
    // already running
    const running = startFiring(first.queue, 'a/b', token);
    expect(running.started).toBe(true);
    expect(startFiring(running.queue, 'a/b', token).started).toBe(false);
    expect(getWorkerUnsafe(running.queue, 'a/b')).toMatchObject({ firing: true, timerBacked: true });
  });

  it('cancelWork of an absent key reports false and changes nothing', () => {
    const q = createWorkerQueue();
    expect(cancelWork(q, 'a/b')).toEqual({ queue: q, cancelled: false });
  });

  it('cancelWork removes running immediate work but reports false', () => {
    const r = addWork(createWorkerQueue(), 'a/b', start, start, start);
    const c = cancelWork(r.queue, 'a/b');
    expect(c.cancelled).toBe(false);
    expect(getEntry(c.queue, 'a/b')).toBeUndefined();
  });

  it('completeWork with a stale token or an absent key changes nothing', () => {
    const r = addWork(createWorkerQueue(), 'a/b', start, start + second, start);
    expect(completeWork(r.queue, 'a/b', 999)).toBe(r.queue);
    expect(completeWork(r.queue, 'x/y', 1)).toBe(r.queue);
  });

  it('tokens: the counter by default, a supplied token moves the counter past it', () => {
    let q = createWorkerQueue();
    const a = addWork(q, 'ns/a', start, start + second, start);
    q = a.queue;
    const b = addWork(q, 'ns/b', start, start + second, start, 41);
    q = b.queue;
    const c = addWork(q, 'ns/c', start, start, start);
    expect([a, b, c].map((r) => (r.kind === 'skipped' ? undefined : r.entry.token))).toEqual([1, 41, 42]);
    expect(c.queue.nextToken).toBe(43);
  });

  it('keys named like Object.prototype members are ordinary keys', () => {
    const q = createWorkerQueue();
    expect(getEntry(q, 'toString')).toBeUndefined();
    expect(getEntry(q, '__proto__')).toBeUndefined();
    const r = addWork(q, 'constructor', start, start + second, start);
    expect(r.kind).toBe('scheduled');
    expect(getWorkerUnsafe(r.queue, 'constructor')?.key).toBe('constructor');
    const p = addWork(r.queue, '__proto__', start, start + second, start);
    expect(getWorkerUnsafe(p.queue, '__proto__')?.key).toBe('__proto__');
    expect(dueWork(p.queue, start + second).map((e) => e.key)).toEqual(['__proto__', 'constructor']);
    expect(getEntry(cancelWork(p.queue, '__proto__').queue, '__proto__')).toBeUndefined();
  });

  it('never mutates its input queue', () => {
    const q = createWorkerQueue();
    const frozen = Object.freeze({ ...q, workers: Object.freeze({}) });
    const r = addWork(frozen, 'a/b', start, start + second, start);
    expect(frozen.workers).toEqual({});
    const s = startFiring(r.queue, 'a/b', 1);
    expect(getEntry(r.queue, 'a/b')?.firing).toBe(false);
    expect(getEntry(s.queue, 'a/b')?.firing).toBe(true);
  });
});
