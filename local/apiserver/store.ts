// The object store: etcd plus the watch cache, in memory. One resourceVersion counter for everything
// (like etcd's revision), one bucket per storage key, and per bucket a bounded event history that
// watches resume from. Watch delivery is synchronous and ordered: a write returns after every watcher
// got its event, and a watcher that writes from inside its callback has its event queued behind the
// current one, so every watcher sees events in resourceVersion order.
//
// History is kept like the real watch cache: every event younger than `historyWindowMs` (75 s upstream,
// eventFreshDuration) is kept, older ones only while the bucket holds fewer than `historyMinEvents`,
// and never more than `historyMaxEvents`. A watch from a resourceVersion older than the oldest kept
// event gets "too old resource version" (410 Expired).
//
// An etcd restore (`nlc simulate`'s restoreApiServer): `snapshot()` keeps every object (they are frozen,
// so a snapshot shares them) and the revision; `restore()` puts them back, the revision counter too, and
// drops every bucket's history, so no watch can resume across it. Its listeners (the watch cache's
// watchers) are told, and end their watches with 410 Gone.
import type { Clock } from '../../shared/ports/clock.js';
import { deepFreeze } from '../../shared/deepFreeze.js';
import type { EpochMillis } from '../../shared/domain/types.js';
import { clone, type JsonObject } from './json.js';
import { resourceExpired } from './status.js';

export type StoredEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change. Objects are frozen: the store shares them between history and readers. */
export interface StoredEvent {
  readonly type: StoredEventType;
  readonly resourceVersion: number;
  readonly key: string;
  /** The new state; for DELETED the last state, carrying the deletion's resourceVersion. */
  readonly object: Readonly<JsonObject>;
  /** The state before, for MODIFIED and DELETED. */
  readonly previous?: Readonly<JsonObject>;
  readonly at: EpochMillis;
}

export type StoreListener = (event: StoredEvent) => void;

/** The store's objects and revision at one instant (ObjectStore.snapshot). */
export interface StoreSnapshot {
  readonly revision: number;
  readonly buckets: ReadonlyMap<string, ReadonlyMap<string, Readonly<JsonObject>>>;
}

/** What a restore changed in one bucket: its objects before and after, by key. */
export interface RestoredBucket {
  readonly storage: string;
  readonly before: ReadonlyMap<string, Readonly<JsonObject>>;
  readonly after: ReadonlyMap<string, Readonly<JsonObject>>;
}

export type RestoreListener = (restored: readonly RestoredBucket[]) => void;

export interface StoreOptions {
  readonly clock: Clock;
  readonly historyWindowMs?: number;
  readonly historyMinEvents?: number;
  readonly historyMaxEvents?: number;
}

/** The keys of a bucket's objects by one value of theirs (a field a selector names). */
interface Index {
  readonly valueOf: (obj: Readonly<JsonObject>) => string;
  readonly keys: Map<string, Set<string>>;
}

interface Bucket {
  readonly objects: Map<string, Readonly<JsonObject>>;
  /** The keys in list order; dropped when a key comes or goes (not when an object changes). */
  sortedKeys: string[] | undefined;
  readonly indexes: Map<string, Index>;
  /**
   * The kept events are history[historyStart..]: trimming moves the start, and the array drops what
   * went before it only once that is half of it. Removing the oldest event from the front of the array
   * at every write moved every kept one: at 20,000 nodes the Lease bucket keeps 100,000 events (its
   * cap; 2,000 renewals a second over the 75 s window would be 150,000) and that was half of a run.
   */
  readonly history: StoredEvent[];
  historyStart: number;
  /** Events at or below this resourceVersion may be missing from history. */
  compactedRevision: number;
  readonly listeners: Set<StoreListener>;
}

/** Sorted like etcd keys, so lists come back in a stable order. */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function indexAdd(index: Index, value: string, key: string): void {
  let keys = index.keys.get(value);
  if (keys === undefined) {
    keys = new Set();
    index.keys.set(value, keys);
  }
  keys.add(key);
}

function indexRemove(index: Index, value: string, key: string): void {
  const keys = index.keys.get(value);
  keys?.delete(key);
  if (keys?.size === 0) index.keys.delete(value);
}

export function storageKey(namespace: string, name: string): string {
  return namespace === '' ? name : `${namespace}/${name}`;
}

export class ObjectStore {
  private revision = 0;
  private readonly buckets = new Map<string, Bucket>();
  private readonly queue: { event: StoredEvent; listeners: StoreListener[] }[] = [];
  private delivering = false;
  private readonly restoreListeners = new Set<RestoreListener>();
  /** Whether a snapshot was restored: resourceVersions past the revision then came from before it. */
  private restored = false;
  private readonly clock: Clock;
  private readonly historyWindowMs: number;
  private readonly historyMinEvents: number;
  private readonly historyMaxEvents: number;

  constructor(options: StoreOptions) {
    this.clock = options.clock;
    this.historyWindowMs = options.historyWindowMs ?? 75_000;
    this.historyMinEvents = options.historyMinEvents ?? 100;
    this.historyMaxEvents = options.historyMaxEvents ?? 100_000;
  }

  /** The newest resourceVersion (etcd's current revision). */
  get resourceVersion(): number {
    return this.revision;
  }

  private bucket(storage: string): Bucket {
    let bucket = this.buckets.get(storage);
    if (bucket === undefined) {
      bucket = {
        objects: new Map(),
        sortedKeys: undefined,
        indexes: new Map(),
        history: [],
        historyStart: 0,
        compactedRevision: 0,
        listeners: new Set(),
      };
      this.buckets.set(storage, bucket);
    }
    return bucket;
  }

  get(storage: string, key: string): Readonly<JsonObject> | undefined {
    return this.bucket(storage).objects.get(key);
  }

  /** Every object of the bucket, by key; `namespace` restricts to one namespace. */
  list(storage: string, namespace?: string): Readonly<JsonObject>[] {
    const bucket = this.bucket(storage);
    bucket.sortedKeys ??= [...bucket.objects.keys()].sort(compareKeys);
    return this.objectsAt(bucket, bucket.sortedKeys, namespace);
  }

  /**
   * The objects after `afterKey` in key order (from the first when undefined), within `namespace`, read
   * one at a time: a page of a large list starts at its continue key and stops once full, instead of
   * selecting the whole bucket again for every page (1,000,000 pods are 2,000 pages).
   */
  *listAfter(
    storage: string,
    afterKey: string | undefined,
    namespace?: string,
  ): Generator<Readonly<JsonObject>> {
    const bucket = this.bucket(storage);
    const keys = (bucket.sortedKeys ??= [...bucket.objects.keys()].sort(compareKeys));
    const prefix = namespace === undefined || namespace === '' ? undefined : `${namespace}/`;
    // The first key past afterKey and not before the namespace's: both conditions hold from some index on.
    const inRange = (key: string): boolean =>
      (afterKey === undefined || key > afterKey) && (prefix === undefined || key >= prefix);
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (inRange(keys[mid] ?? '')) hi = mid;
      else lo = mid + 1;
    }
    for (let i = lo; i < keys.length; i++) {
      const key = keys[i] ?? '';
      if (prefix !== undefined && !key.startsWith(prefix)) return;
      const obj = bucket.objects.get(key);
      if (obj !== undefined) yield obj;
    }
  }

  /**
   * Keeps an index of the bucket's objects by `valueOf` (as the watch cache indexes pods by
   * spec.nodeName), so that listing the objects with one value does not go through all of them.
   */
  addIndex(storage: string, name: string, valueOf: (obj: Readonly<JsonObject>) => string): void {
    const bucket = this.bucket(storage);
    const index: Index = { valueOf, keys: new Map() };
    for (const [key, obj] of bucket.objects) indexAdd(index, valueOf(obj), key);
    bucket.indexes.set(name, index);
  }

  /**
   * The objects of the bucket whose indexed value is `value`, by key, as `list` orders them (a subset
   * of what it returns); undefined when the bucket has no such index.
   */
  listIndexed(
    storage: string,
    name: string,
    value: string,
    namespace?: string,
  ): Readonly<JsonObject>[] | undefined {
    const bucket = this.bucket(storage);
    const index = bucket.indexes.get(name);
    if (index === undefined) return undefined;
    const keys = [...(index.keys.get(value) ?? [])].sort(compareKeys);
    return this.objectsAt(bucket, keys, namespace);
  }

  private objectsAt(bucket: Bucket, keys: readonly string[], namespace?: string): Readonly<JsonObject>[] {
    const prefix = namespace === undefined || namespace === '' ? undefined : `${namespace}/`;
    const objects: Readonly<JsonObject>[] = [];
    for (const key of keys) {
      if (prefix !== undefined && !key.startsWith(prefix)) continue;
      const obj = bucket.objects.get(key);
      if (obj !== undefined) objects.push(obj);
    }
    return objects;
  }

  count(storage: string): number {
    return this.bucket(storage).objects.size;
  }

  /**
   * Writes `object` (created or replaced) at the next resourceVersion, records the event and delivers
   * it. Returns the stored (frozen) object.
   */
  put(storage: string, key: string, object: JsonObject): Readonly<JsonObject> {
    const bucket = this.bucket(storage);
    const previous = bucket.objects.get(key);
    const revision = ++this.revision;
    const meta = object.metadata;
    if (typeof meta === 'object' && meta !== null && !Array.isArray(meta))
      meta.resourceVersion = String(revision);
    const stored = deepFreeze(object);
    bucket.objects.set(key, stored);
    if (previous === undefined) bucket.sortedKeys = undefined;
    for (const index of bucket.indexes.values()) {
      const value = index.valueOf(stored);
      if (previous !== undefined) {
        const before = index.valueOf(previous);
        if (before === value) continue;
        indexRemove(index, before, key);
      }
      indexAdd(index, value, key);
    }
    const event: StoredEvent =
      previous === undefined
        ? { type: 'ADDED', resourceVersion: revision, key, object: stored, at: this.clock.now() }
        : {
            type: 'MODIFIED',
            resourceVersion: revision,
            key,
            object: stored,
            previous,
            at: this.clock.now(),
          };
    this.record(bucket, event);
    return stored;
  }

  /** Removes the object at the next resourceVersion; returns its last state (with that resourceVersion). */
  remove(storage: string, key: string): Readonly<JsonObject> | undefined {
    const bucket = this.bucket(storage);
    const previous = bucket.objects.get(key);
    if (previous === undefined) return undefined;
    const revision = ++this.revision;
    bucket.objects.delete(key);
    bucket.sortedKeys = undefined;
    for (const index of bucket.indexes.values()) indexRemove(index, index.valueOf(previous), key);
    const last = clone(previous as JsonObject);
    const meta = last.metadata;
    if (typeof meta === 'object' && meta !== null && !Array.isArray(meta))
      meta.resourceVersion = String(revision);
    const stored = deepFreeze(last);
    this.record(bucket, {
      type: 'DELETED',
      resourceVersion: revision,
      key,
      object: stored,
      previous,
      at: this.clock.now(),
    });
    return stored;
  }

  private record(bucket: Bucket, event: StoredEvent): void {
    bucket.history.push(event);
    this.trim(bucket);
    this.queue.push({ event, listeners: [...bucket.listeners] });
    this.drain();
  }

  private trim(bucket: Bucket): void {
    const now = this.clock.now();
    let drop = 0;
    const { history, historyStart } = bucket;
    while (historyStart + drop < history.length) {
      const oldest = history[historyStart + drop];
      if (oldest === undefined) break;
      const remaining = history.length - historyStart - drop;
      const tooMany = remaining > this.historyMaxEvents;
      const stale = remaining > this.historyMinEvents && oldest.at < now - this.historyWindowMs;
      if (!tooMany && !stale) break;
      bucket.compactedRevision = oldest.resourceVersion;
      drop++;
    }
    if (drop === 0) return;
    const start = historyStart + drop;
    // Amortized: the array is copied once for as many trims as it keeps events.
    if (start >= 1024 && start * 2 >= history.length) {
      history.splice(0, start);
      bucket.historyStart = 0;
    } else {
      // The dropped events are released now, as the splice did.
      history.fill(undefined as unknown as StoredEvent, historyStart, start);
      bucket.historyStart = start;
    }
  }

  private drain(): void {
    if (this.delivering) return;
    this.delivering = true;
    try {
      for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) {
        for (const listener of next.listeners) listener(next.event);
      }
    } finally {
      this.delivering = false;
    }
  }

  /**
   * Subscribes to a bucket. With `fromRevision`, first replays the kept events after it (410 Expired
   * when history no longer reaches back that far). Returns an unsubscribe function.
   */
  watch(storage: string, fromRevision: number | undefined, listener: StoreListener): () => void {
    const bucket = this.bucket(storage);
    if (fromRevision !== undefined) {
      if (fromRevision < bucket.compactedRevision) {
        throw resourceExpired(`too old resource version: ${fromRevision} (${bucket.compactedRevision})`);
      }
      // After a restore, a resourceVersion newer than the store's belongs to the history it undid.
      if (this.restored && fromRevision > this.revision) {
        throw resourceExpired(`too old resource version: ${fromRevision} (${this.revision})`);
      }
      const replay = bucket.history
        .slice(bucket.historyStart)
        .filter((event) => event.resourceVersion > fromRevision);
      this.queue.push(...replay.map((event) => ({ event, listeners: [listener] })));
    }
    bucket.listeners.add(listener);
    this.drain();
    return () => {
      bucket.listeners.delete(listener);
    };
  }

  /** Every object and the revision, now. Cheap: the objects are frozen and shared, not copied. */
  snapshot(): StoreSnapshot {
    const buckets = new Map<string, ReadonlyMap<string, Readonly<JsonObject>>>();
    for (const [storage, bucket] of this.buckets) buckets.set(storage, new Map(bucket.objects));
    return { revision: this.revision, buckets };
  }

  /**
   * Back to a snapshot, as after an etcd restore: every object as it was then (created since: gone;
   * deleted since: back; changed since: as before), the revision counter as it was, and no history, so
   * resuming any watch gets 410. No watch event is sent for it; the restore listeners are told, with
   * what changed in each bucket.
   */
  restore(snapshot: StoreSnapshot): void {
    if (this.delivering) throw new Error('ObjectStore: cannot restore a snapshot while delivering events');
    const restored: RestoredBucket[] = [];
    const storages = new Set([...this.buckets.keys(), ...snapshot.buckets.keys()]);
    for (const storage of storages) {
      const bucket = this.bucket(storage);
      const before = new Map(bucket.objects);
      bucket.objects.clear();
      for (const [key, obj] of snapshot.buckets.get(storage) ?? []) bucket.objects.set(key, obj);
      bucket.sortedKeys = undefined;
      for (const index of bucket.indexes.values()) {
        index.keys.clear();
        for (const [key, obj] of bucket.objects) indexAdd(index, index.valueOf(obj), key);
      }
      bucket.history.length = 0;
      bucket.historyStart = 0;
      bucket.compactedRevision = snapshot.revision;
      restored.push({ storage, before, after: new Map(bucket.objects) });
    }
    this.revision = snapshot.revision;
    this.restored = true;
    for (const listener of [...this.restoreListeners]) listener(restored);
  }

  /** Calls `listener` after each restore. Returns a function that stops it. */
  onRestore(listener: RestoreListener): () => void {
    this.restoreListeners.add(listener);
    return () => {
      this.restoreListeners.delete(listener);
    };
  }

  /** Drops all history (as an etcd compaction does): resuming any earlier watch gets 410. */
  compact(storage?: string): void {
    const buckets = storage === undefined ? [...this.buckets.values()] : [this.bucket(storage)];
    for (const bucket of buckets) {
      bucket.history.length = 0;
      bucket.historyStart = 0;
      bucket.compactedRevision = this.revision;
    }
  }
}
