// kube-apiserver --event-ttl: an Event disappears this long after its last write, as etcd's lease
// expiry removes it. Every write pushes (key, now + ttl) on a FIFO queue; only the newest expiry of a
// key counts, so a rewritten event's older queue entries are skipped when they come due.
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
