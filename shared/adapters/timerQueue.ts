// The timer queue both Scheduler implementations share (shared/ports/scheduler.ts): a binary heap in
// (time, priority, seq) order, with cancellation by id. Cancelled entries stay in the heap until they
// reach the top (lazy deletion), which keeps cancel O(1); a periodic entry goes back into the heap at
// its next time with its original seq, so it keeps its place among timers of the same instant.
import type { TimerCallback, TimerHandle } from '../ports/scheduler.js';
import type { EpochMillis, Millis } from '../domain/types.js';

export interface TimerEntry extends TimerHandle {
  /** When it is due next. */
  time: EpochMillis;
  readonly priority: number;
  /** Insertion order: breaks ties between equal (time, priority). */
  readonly seq: number;
  readonly fn: TimerCallback;
  /** Present for periodic timers. */
  readonly period?: Millis;
  cancelled: boolean;
}

function before(a: TimerEntry, b: TimerEntry): boolean {
  if (a.time !== b.time) return a.time < b.time;
  if (a.priority !== b.priority) return a.priority < b.priority;
  return a.seq < b.seq;
}

/** Throws when a timer argument is not a finite number (or, for a period, not positive). */
export function checkTimerArguments(time: EpochMillis, priority: number, period?: Millis): void {
  if (!Number.isFinite(time)) throw new RangeError(`timer time must be a finite number, got ${time}`);
  if (!Number.isFinite(priority))
    throw new RangeError(`timer priority must be a finite number, got ${priority}`);
  if (period !== undefined && !(Number.isFinite(period) && period > 0))
    throw new RangeError(`timer period must be a positive finite number, got ${period}`);
}

/** The first instant of the grid firstAt + k·period (k ≥ 0) that is not before `notBefore`. */
export function firstOnGrid(firstAt: EpochMillis, period: Millis, notBefore: EpochMillis): EpochMillis {
  if (firstAt >= notBefore) return firstAt;
  return firstAt + Math.ceil((notBefore - firstAt) / period) * period;
}

export class TimerQueue {
  private readonly heap: TimerEntry[] = [];
  private readonly live = new Map<number, TimerEntry>();
  private nextId = 1;
  private nextSeq = 1;

  /** Timers scheduled and not yet fired (periodic ones until cancelled). */
  get size(): number {
    return this.live.size;
  }

  add(time: EpochMillis, priority: number, fn: TimerCallback, period?: Millis): TimerEntry {
    const entry: TimerEntry = {
      id: this.nextId++,
      time,
      priority,
      seq: this.nextSeq++,
      fn,
      ...(period !== undefined && { period }),
      cancelled: false,
    };
    this.live.set(entry.id, entry);
    this.push(entry);
    return entry;
  }

  /** Whether the timer was live (false when already fired, cancelled, or unknown). */
  cancel(handle: TimerHandle): boolean {
    const entry = this.live.get(handle.id);
    if (entry === undefined) return false;
    entry.cancelled = true;
    this.live.delete(entry.id);
    return true;
  }

  /** The next live timer, without removing it. */
  peek(): TimerEntry | undefined {
    this.dropCancelled();
    return this.heap[0];
  }

  /**
   * Removes the next live timer. A periodic one is put back at `nextTime` (its next occurrence, which
   * the caller computes) before it is returned, so its callback may cancel it.
   */
  pop(nextTime?: (entry: TimerEntry) => EpochMillis): TimerEntry | undefined {
    this.dropCancelled();
    const top = this.removeTop();
    if (top === undefined) return undefined;
    if (top.period === undefined) {
      this.live.delete(top.id);
      return top;
    }
    const fired: TimerEntry = { ...top };
    top.time = nextTime === undefined ? top.time + top.period : nextTime(top);
    this.push(top);
    return fired;
  }

  /** Cancels everything. */
  clear(): void {
    for (const entry of this.live.values()) entry.cancelled = true;
    this.live.clear();
    this.heap.length = 0;
  }

  private dropCancelled(): void {
    while (this.heap[0]?.cancelled === true) this.removeTop();
  }

  private push(entry: TimerEntry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent];
      if (p === undefined || !before(entry, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = entry;
  }

  private removeTop(): TimerEntry | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = last;
      let at = -1;
      const l = heap[left];
      if (l !== undefined && before(l, smallest)) {
        smallest = l;
        at = left;
      }
      const r = heap[right];
      if (r !== undefined && before(r, smallest)) {
        smallest = r;
        at = right;
      }
      if (at === -1) break;
      heap[i] = smallest;
      i = at;
    }
    heap[i] = last;
    return top;
  }
}
