// The changes every replica observed lately, leader or not, so that a replica taking over can publish
// what its predecessor may have observed but not published: the changes of the last `window` (a lease
// duration plus margins), and, when no leader was seen alive after this replica's first list, the
// whole first list (the state the functions may never have heard of, e.g. after both replicas were
// down). Duplicates are harmless: consumers handle at-least-once delivery.
//
// Bounded by the window and by `max` entries (the oldest go first).
import type { EpochMillis, Millis } from '../shared/domain/types.js';
import type { ChangeEvent } from './publishQueue.js';

export interface RecentChange {
  readonly event: ChangeEvent;
  readonly observedAt: EpochMillis;
  /** From this replica's first list (the initial state), not from a watch or a relist. */
  readonly initial: boolean;
}

export interface RecentChangesOptions {
  readonly window: Millis;
  readonly max: number;
}

export class RecentChanges {
  private items: RecentChange[] = [];
  private head = 0;

  constructor(private readonly options: RecentChangesOptions) {}

  /** Records a change; returns how many old entries were dropped to stay within `max`. */
  add(change: RecentChange): number {
    this.items.push(change);
    let dropped = 0;
    while (this.size > this.options.max) {
      this.head++;
      dropped++;
    }
    this.compact();
    return dropped;
  }

  /** Forgets the changes observed before now − window. */
  prune(now: EpochMillis): void {
    const from = now - this.options.window;
    while (this.head < this.items.length && (this.items[this.head]?.observedAt ?? from) < from) this.head++;
    this.compact();
  }

  /** The changes observed within the window before `now`, oldest first; initial ones only if asked. */
  replay(now: EpochMillis, includeInitial: boolean): RecentChange[] {
    const from = now - this.options.window;
    return this.items.slice(this.head).filter((c) => c.observedAt >= from && (includeInitial || !c.initial));
  }

  get size(): number {
    return this.items.length - this.head;
  }

  private compact(): void {
    // Amortized O(1): copy only when the dead prefix is most of the array.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
