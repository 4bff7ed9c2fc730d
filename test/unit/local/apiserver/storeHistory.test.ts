// A bucket's kept history after many trims (the kept events are a moving window of one array): a watch
// from any kept resourceVersion replays exactly the events after it, one from before the window gets
// 410, and a compaction or a restore drops everything, as before.
import { describe, expect, it } from 'vitest';
import { ObjectStore, type StoredEvent } from '../../../../local/apiserver/store.js';

function clock(): { now: () => number; set: (t: number) => void } {
  let time = 0;
  return { now: () => time, set: (t) => (time = t) };
}

function write(store: ObjectStore, n: number): void {
  store.put('leases', 'ns/lease', { metadata: { name: 'lease', namespace: 'ns' }, spec: { n } });
}

function replayed(store: ObjectStore, from: number): number[] {
  const seen: number[] = [];
  const stop = store.watch('leases', from, (event: StoredEvent) => seen.push(event.resourceVersion));
  stop();
  return seen;
}

describe('ObjectStore history', () => {
  it('keeps the newest historyMaxEvents events through thousands of trims', () => {
    const store = new ObjectStore({ clock: clock(), historyMaxEvents: 50, historyMinEvents: 10 });
    for (let n = 1; n <= 5000; n++) {
      write(store, n);
      if (n % 997 === 0 || n === 5000) {
        // Kept: resourceVersions n-49 .. n.
        expect(replayed(store, n - 50)).toEqual(Array.from({ length: 50 }, (_, i) => n - 49 + i));
        expect(replayed(store, n - 3)).toEqual([n - 2, n - 1, n]);
        expect(() => replayed(store, n - 52)).toThrow(/too old resource version/);
      }
    }
  });

  it('drops events older than the window once more than historyMinEvents are kept', () => {
    const time = clock();
    const store = new ObjectStore({ clock: time, historyWindowMs: 1000, historyMinEvents: 5 });
    for (let n = 1; n <= 3000; n++) {
      time.set(n * 10);
      write(store, n);
    }
    // At t = 30,000 the events of the last second (t ≥ 29,000: n ≥ 2900) are kept.
    expect(replayed(store, 2899)).toHaveLength(101);
    expect(() => replayed(store, 2897)).toThrow(/too old resource version/);
  });

  it('a compaction drops the history, and writes after it are kept again', () => {
    const store = new ObjectStore({ clock: clock(), historyMaxEvents: 20 });
    for (let n = 1; n <= 2100; n++) write(store, n);
    store.compact();
    expect(() => replayed(store, 2099)).toThrow(/too old resource version/);
    for (let n = 2101; n <= 2105; n++) write(store, n);
    expect(replayed(store, 2100)).toEqual([2101, 2102, 2103, 2104, 2105]);
  });
});
