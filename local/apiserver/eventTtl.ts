// kube-apiserver --event-ttl: an Event disappears this long after its last write, as etcd's lease
// expiry removes it. Every write pushes (key, now + ttl) on a FIFO queue; only the newest expiry of a
// key counts, so a rewritten event's older queue entries are skipped when they come due.

/** Every event's expiry at one instant (etcd keeps the leases with the keys: a restore brings both). */
export type EventTtlSnapshot = ReadonlyMap<string, number>;

export class EventTtl {
  private readonly queue: { key: string; at: number }[] = [];
  private readonly expiry = new Map<string, number>();

  constructor(private readonly ttlMs: number) {}

  /** The event stored under `key` was written at `now`. */
  written(key: string, now: number): void {
    const at = now + this.ttlMs;
    this.expiry.set(key, at);
    this.queue.push({ key, at });
  }

  /** The event under `key` was removed otherwise (deleted): it no longer expires. */
  forget(key: string): void {
    this.expiry.delete(key);
  }

  snapshot(): EventTtlSnapshot {
    return new Map(this.expiry);
  }

  /** Back to a snapshot: the expiries then, in expiry order. */
  restore(snapshot: EventTtlSnapshot): void {
    this.expiry.clear();
    this.queue.length = 0;
    const entries = [...snapshot].sort((a, b) => a[1] - b[1]);
    for (const [key, at] of entries) {
      this.expiry.set(key, at);
      this.queue.push({ key, at });
    }
  }

  /** Takes the keys whose TTL has passed at `now`, in expiry order; their owner removes them. */
  due(now: number): string[] {
    const due: string[] = [];
    while (this.queue.length > 0) {
      const head = this.queue[0];
      if (head === undefined || head.at > now) break;
      this.queue.shift();
      if (this.expiry.get(head.key) === head.at) {
        this.expiry.delete(head.key);
        due.push(head.key);
      }
    }
    return due;
  }
}
