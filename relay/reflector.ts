// One informer: a port of client-go's Reflector (tools/cache/reflector.go ListAndWatch) on
// @kubernetes/client-node's Watch and list calls, keeping a cache of *trimmed* objects.
//
// Why not client-node's makeInformer (ListWatch): it keeps every object whole (a real Pod or Node is
// 5-30 KB of JSON, 50,000 pods would not fit the relay's 256 MiB), it has no transform hook (client-go
// has SetTransform for exactly this), makeInformer cannot pass a field selector, its list is not paginated,
// and it stops for good on the first non-410 error. This class keeps its semantics otherwise: list,
// then watch from the list's resourceVersion with bookmarks; resume from the last resourceVersion when
// a watch ends; relist on 410 Gone; on a relist, diff against the cache (add / update / delete for what
// changed), so the consumer's relevance filters see a relist as the few real changes it contains.
//
// Errors: a failed list or a broken watch is retried with client-go's backoff (800 ms doubling to 30 s,
// jittered, reset after 2 minutes without failure) on the Scheduler; a watch the server ends normally
// (its timeout) is resumed at once. Watch timeouts are 5-10 minutes, as client-go picks them.
//
// Stalls (not in client-go): a watch can stay open and deliver nothing (a stuck stream, a stuck watch
// cache). client-go waits for the server's timeout; the relay cannot, because a silent lease watch
// looks exactly like every node going silent. So a watchdog records the last delivery (any event,
// BOOKMARK included, and the end of a list) and, when an open watch has been silent for the stall
// timeout, abandons it and relists. A list is authoritative and applied as a diff, so a relist that
// finds nothing new changes nothing.
//
// One concern, kept whole: the list, the watch, the backoff and the watchdog share one watch's state
// (its generation, connection and resourceVersion), and the file reads side by side with reflector.go.
import type { Watch } from '@kubernetes/client-node';
import type { Mapped } from '../shared/adapters/kubernetes/mapping.js';
import type { EpochMillis, Millis } from '../shared/domain/types.js';
import { Priority, type Scheduler, type TimerHandle } from '../shared/ports/scheduler.js';
import { silentLogger, type RelayLogger } from './logger.js';
import type { WatchRestartReason } from './metrics.js';

/** The warning a stalled watch logs: constant, so an operator can alarm on it. */
export const WatchStalledMessage =
  'watch stalled: no event or bookmark for longer than the stall timeout; relisting';

/**
 * The watchdog's timers fire before the relay's other timers of the same instant (its digests), so a
 * digest due when a stall is found follows the relist instead of claiming the silence the stall hid.
 */
const WatchdogPriority = Priority.Relay - 1;

/** A watchdog timer this late found the event loop blocked or the process paused: look again shortly. */
const LateTimerSlackMs: Millis = 1_000;

/** Where a change comes from: the first list, a later list (after 410 or an error), or the watch. */
export type ChangeSource = 'initial' | 'relist' | 'watch';

export interface ReflectorHandler<T> {
  add(obj: T, source: ChangeSource): void;
  update(old: T, next: T, source: ChangeSource): void;
  /** `last` is the object's final state (or the cached one if the final state cannot be read). */
  delete(last: T, source: ChangeSource): void;
}

export interface ListPage {
  readonly limit: number;
  readonly continue?: string;
}

export interface ListedPage {
  readonly items: readonly unknown[];
  readonly resourceVersion: string;
  readonly continue?: string;
}

/** client-go's default reflector backoff (NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)). */
export interface ReflectorBackoff {
  readonly initialMs: Millis;
  readonly maxMs: Millis;
  /** Failures further apart than this start the backoff over. */
  readonly resetAfterMs: Millis;
}

export const DefaultReflectorBackoff: ReflectorBackoff = Object.freeze({
  initialMs: 800,
  maxMs: 30_000,
  resetAfterMs: 120_000,
});

export interface ReflectorOptions<T> {
  /** Plural resource name, for logs and metrics ("nodes", "leases", "pods"). */
  readonly resource: string;
  /** client-node's Watch, or anything with its `watch` (the simulator's in-process watch). */
  readonly watch: Pick<Watch, 'watch'>;
  /** e.g. '/api/v1/pods', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases'. */
  readonly watchPath: string;
  readonly fieldSelector?: string;
  /** One page of the list (with the same field selector as the watch). */
  readonly list: (page: ListPage, signal: AbortSignal) => Promise<ListedPage>;
  /** The trimmed object, or why it cannot be read (the object is then skipped, logged and counted). */
  readonly read: (raw: unknown) => Mapped<T>;
  /**
   * Cache objects by name alone, whatever their namespace (node Leases: one namespace, looked up by
   * node name). Otherwise by namespace and name.
   */
  readonly byNameOnly?: boolean;
  readonly handler: ReflectorHandler<T>;
  readonly scheduler: Scheduler;
  readonly logger?: RelayLogger;
  readonly onRestart?: (reason: WatchRestartReason) => void;
  readonly onRelist?: () => void;
  readonly onMalformed?: () => void;
  /**
   * How long an open watch may deliver nothing (no event, no BOOKMARK) before it is taken for stalled,
   * abandoned and replaced by a relist; a function of the objects cached (a quiet resource may wait
   * for the server's bookmarks, a busy one need not). 0 or undefined: no watchdog.
   */
  readonly stallTimeoutMs?: Millis | ((cachedObjects: number) => Millis);
  /** A watch was found stalled (before the relist). */
  readonly onStall?: () => void;
  /** After the first successful list. */
  readonly onSynced?: () => void;
  readonly backoff?: Partial<ReflectorBackoff>;
  /** Items per list page (500, as client-go). */
  readonly pageSize?: number;
  readonly random?: () => number;
}

export interface ReflectorStatus {
  readonly resource: string;
  /** The first list completed. */
  readonly synced: boolean;
  /** When the first list completed (the Scheduler's clock); undefined before. */
  readonly syncedAt?: EpochMillis;
  /** The resourceVersion the watch resumes from ('' before the first list). */
  readonly resourceVersion: string;
  readonly objects: number;
  readonly watching: boolean;
  /**
   * The watch broke, expired or stalled, and no new watch is open yet (a backoff or a relist is under
   * way): changes since then are not observed. False after the server merely ended a watch.
   */
  readonly interrupted: boolean;
  /** The open watch has been silent for its stall timeout: it may have stalled (the watchdog will see). */
  readonly suspectedStall: boolean;
}

function metadataOf(raw: unknown): { name: string; namespace: string; resourceVersion?: string } | undefined {
  const meta: unknown =
    typeof raw === 'object' && raw !== null ? (raw as { metadata?: unknown }).metadata : undefined;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const { name, namespace, resourceVersion } = meta as Record<string, unknown>;
  if (typeof name !== 'string' || name === '') return undefined;
  return {
    name,
    namespace: typeof namespace === 'string' ? namespace : '',
    ...(typeof resourceVersion === 'string' && { resourceVersion }),
  };
}

/** metadata.resourceVersion of any watch object (a BOOKMARK has no name). */
function resourceVersionOf(raw: unknown): string | undefined {
  const meta: unknown =
    typeof raw === 'object' && raw !== null ? (raw as { metadata?: unknown }).metadata : undefined;
  const rv =
    typeof meta === 'object' && meta !== null
      ? (meta as { resourceVersion?: unknown }).resourceVersion
      : undefined;
  return typeof rv === 'string' && rv !== '' ? rv : undefined;
}

function statusCodeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { statusCode, code } = error as { statusCode?: unknown; code?: unknown };
  return typeof statusCode === 'number' ? statusCode : typeof code === 'number' ? code : undefined;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * The cached objects by namespace ('' for cluster-scoped ones), then name. Two levels rather than one
 * `namespace/name` key: the name a map holds is the object's own string, so 1,000,000 pods need no
 * million key strings (about 60 bytes each, a fifth of a trimmed pod).
 */
class ObjectCache<T> {
  private readonly byNamespace = new Map<string, Map<string, T>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(namespace: string, name: string): T | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  /** Stores `value`; returns the object it replaced. */
  set(namespace: string, name: string, value: T): T | undefined {
    let objects = this.byNamespace.get(namespace);
    if (objects === undefined) {
      objects = new Map();
      this.byNamespace.set(namespace, objects);
    }
    const old = objects.get(name);
    objects.set(name, value);
    if (old === undefined) this.count++;
    return old;
  }

  delete(namespace: string, name: string): void {
    const objects = this.byNamespace.get(namespace);
    if (objects?.delete(name) !== true) return;
    this.count--;
    if (objects.size === 0) this.byNamespace.delete(namespace);
  }

  *values(): IterableIterator<T> {
    for (const objects of this.byNamespace.values()) yield* objects.values();
  }

  /** Every object with its namespace and name (deleting the one just visited is allowed). */
  *entries(): IterableIterator<readonly [string, string, T]> {
    for (const [namespace, objects] of this.byNamespace) {
      for (const [name, value] of objects) yield [namespace, name, value];
    }
  }
}

/** Where an object is cached. */
interface CacheKey {
  readonly namespace: string;
  readonly name: string;
}

/** A watch shorter than this that delivered nothing counts as a failure (client-go's rule). */
const shortWatchMs = 1_000;

/**
 * A list-watch cache of trimmed objects that calls `handler` for every change.
 *
 * @example
 * const nodes = new Reflector({ resource: 'nodes', watch: new Watch(kc), watchPath: '/api/v1/nodes',
 *   list: (page) => core.listNode({ limit: page.limit, _continue: page.continue }).then(toPage),
 *   read: nodeFromV1, handler, scheduler });
 * nodes.start();
 * // …
 * nodes.stop();
 */
export class Reflector<T> {
  private readonly cache = new ObjectCache<T>();
  private readonly backoff: ReflectorBackoff;
  private readonly logger: RelayLogger;
  private readonly random: () => number;
  private resourceVersion = '';
  private synced = false;
  private syncedAt: EpochMillis | undefined;
  private stopped = true;
  /** Bumped whenever the current watch is abandoned, so its late callbacks are ignored. */
  private generation = 0;
  private controller: AbortController | undefined;
  private listAbort: AbortController | undefined;
  private retryTimer: TimerHandle | undefined;
  private failures = 0;
  private lastFailureAt: EpochMillis = Number.NEGATIVE_INFINITY;
  // What the current watch said before it ended.
  private expired = false;
  private errorEvent: string | undefined;
  // The watchdog: when the current watch (or the list before it) last delivered something, and the
  // timer that looks at it. `openSince` is set while a watch is open (or being opened).
  private lastDeliveryAt: EpochMillis | undefined;
  private openSince: EpochMillis | undefined;
  private watchdog: TimerHandle | undefined;
  private interrupted = false;

  constructor(private readonly options: ReflectorOptions<T>) {
    this.backoff = { ...DefaultReflectorBackoff, ...options.backoff };
    this.logger = options.logger ?? silentLogger;
    this.random = options.random ?? Math.random;
  }

  /** Lists, then watches; returns once the first list was attempted (not necessarily succeeded). */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.listThenWatch('initial');
  }

  /** Stops watching and listing; the cache stays readable. */
  stop(): void {
    this.stopped = true;
    this.generation++;
    this.controller?.abort();
    this.controller = undefined;
    this.listAbort?.abort();
    if (this.retryTimer !== undefined) this.options.scheduler.cancel(this.retryTimer);
    this.retryTimer = undefined;
    this.watchClosed();
  }

  // A method, not the field: TypeScript keeps a narrowed field narrowed across an await.
  private isStopped(): boolean {
    return this.stopped;
  }

  /** The cached object (`namespace` '' for cluster-scoped objects, or with byNameOnly). */
  get(name: string, namespace = ''): T | undefined {
    return this.cache.get(namespace, name);
  }

  values(): IterableIterator<T> {
    return this.cache.values();
  }

  status(): ReflectorStatus {
    return {
      resource: this.options.resource,
      synced: this.synced,
      ...(this.syncedAt !== undefined && { syncedAt: this.syncedAt }),
      resourceVersion: this.resourceVersion,
      objects: this.cache.size,
      watching: this.controller !== undefined,
      interrupted: this.interrupted,
      suspectedStall: this.silentFor() !== undefined,
    };
  }

  /** The stall timeout now, or undefined when the watchdog is off. */
  private stallTimeout(): Millis | undefined {
    const option = this.options.stallTimeoutMs;
    const timeout = typeof option === 'function' ? option(this.cache.size) : option;
    return timeout === undefined || timeout <= 0 ? undefined : timeout;
  }

  /** How long the open watch has been silent, when that is at least its stall timeout. */
  private silentFor(): Millis | undefined {
    const timeout = this.stallTimeout();
    if (this.openSince === undefined || this.lastDeliveryAt === undefined || timeout === undefined)
      return undefined;
    const silent = this.options.scheduler.now() - this.lastDeliveryAt;
    return silent >= timeout ? silent : undefined;
  }

  private keyOf(raw: unknown): CacheKey | undefined {
    const meta = metadataOf(raw);
    if (meta === undefined) return undefined;
    return { namespace: this.options.byNameOnly === true ? '' : meta.namespace, name: meta.name };
  }

  private malformed(message: string): void {
    this.options.onMalformed?.();
    this.logger.warn('skipping an object the relay cannot read', {
      resource: this.options.resource,
      problem: message,
    });
  }

  /** Runs a handler callback; a throw is a bug in the relay, logged, never the end of the informer. */
  private notify(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.logger.error('event handler failed', { resource: this.options.resource, error: describe(error) });
    }
  }

  private upsert(raw: unknown, source: ChangeSource): CacheKey | undefined {
    const key = this.keyOf(raw);
    if (key === undefined) {
      this.malformed('no metadata.name');
      return undefined;
    }
    const read = this.options.read(raw);
    if (!read.ok) {
      this.malformed(read.message);
      return key;
    }
    const old = this.cache.set(key.namespace, key.name, read.value);
    const { handler } = this.options;
    this.notify(() => {
      if (old === undefined) handler.add(read.value, source);
      else handler.update(old, read.value, source);
    });
    return key;
  }

  private remove(raw: unknown, source: ChangeSource): void {
    const key = this.keyOf(raw);
    if (key === undefined) return;
    const old = this.cache.get(key.namespace, key.name);
    if (old === undefined) return;
    this.cache.delete(key.namespace, key.name);
    const read = this.options.read(raw);
    this.notify(() => {
      this.options.handler.delete(read.ok ? read.value : old, source);
    });
  }

  /** A paginated list, applied to the cache as a diff. */
  private async list(source: 'initial' | 'relist'): Promise<void> {
    const abort = new AbortController();
    this.listAbort = abort;
    // What the list returned, by namespace: the names are the objects' own strings.
    const seen = new Map<string, Set<string>>();
    let resourceVersion: string | undefined;
    let cont: string | undefined;
    do {
      const page = await this.options.list(
        { limit: this.options.pageSize ?? 500, ...(cont !== undefined && { continue: cont }) },
        abort.signal,
      );
      if (this.isStopped()) return;
      // Every page of one list is the snapshot of the first page's resourceVersion.
      resourceVersion ??= page.resourceVersion;
      for (const item of page.items) {
        const key = this.upsert(item, source);
        if (key === undefined) continue;
        let names = seen.get(key.namespace);
        if (names === undefined) {
          names = new Set();
          seen.set(key.namespace, names);
        }
        names.add(key.name);
      }
      cont = page.continue === undefined || page.continue === '' ? undefined : page.continue;
    } while (cont !== undefined);
    for (const [namespace, name, old] of this.cache.entries()) {
      if (seen.get(namespace)?.has(name) === true) continue;
      this.cache.delete(namespace, name);
      this.notify(() => {
        this.options.handler.delete(old, source);
      });
    }
    this.resourceVersion = resourceVersion;
    this.lastDeliveryAt = this.options.scheduler.now();
    if (!this.synced) {
      this.synced = true;
      this.syncedAt = this.options.scheduler.now();
      this.options.onSynced?.();
    }
  }

  private async listThenWatch(source: 'initial' | 'relist'): Promise<void> {
    if (this.stopped) return;
    try {
      await this.list(source);
    } catch (error) {
      if (this.isStopped()) return;
      this.interrupted = true;
      this.logger.warn('list failed; retrying with backoff', {
        resource: this.options.resource,
        error: describe(error),
      });
      this.options.onRestart?.('error');
      this.retryLater(() => this.listThenWatch(this.synced ? 'relist' : 'initial'));
      return;
    }
    if (this.isStopped()) return;
    if (source === 'relist') this.options.onRelist?.();
    await this.startWatch();
  }

  private async startWatch(): Promise<void> {
    if (this.stopped) return;
    const generation = ++this.generation;
    const startedAt = performance.now();
    let events = 0;
    this.expired = false;
    this.errorEvent = undefined;
    // A watch just opened has had no chance to deliver yet: its silence counts from now.
    this.openSince = this.lastDeliveryAt = this.options.scheduler.now();
    this.armWatchdog(generation, this.lastDeliveryAt);
    const params = {
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
      // client-go: minWatchTimeout (5 min) × (1 + rand), so watches of many clients do not end together.
      timeoutSeconds: Math.floor(300 * (1 + this.random())),
      ...(this.options.fieldSelector !== undefined && { fieldSelector: this.options.fieldSelector }),
    };
    const onEvent = (type: string, obj: unknown): void => {
      if (generation !== this.generation) return;
      events++;
      this.lastDeliveryAt = this.options.scheduler.now();
      this.onWatchEvent(type, obj);
    };
    const onDone = (error: unknown): void => {
      if (generation !== this.generation) return;
      this.generation++;
      this.controller = undefined;
      this.watchClosed();
      this.watchEnded(error, performance.now() - startedAt, events);
    };
    try {
      const controller = await this.options.watch.watch(this.options.watchPath, params, onEvent, onDone);
      if (generation === this.generation) {
        this.controller = controller;
        this.interrupted = false;
      } else controller.abort();
    } catch (error) {
      onDone(error);
    }
  }

  private onWatchEvent(type: string, obj: unknown): void {
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
        this.upsert(obj, 'watch');
        break;
      case 'DELETED':
        this.remove(obj, 'watch');
        break;
      case 'BOOKMARK':
        break;
      case 'ERROR': {
        // A Status; the server ends the stream after it. 410: our resourceVersion is too old, relist.
        const status = obj as { code?: unknown; message?: unknown } | null;
        if (status?.code === 410) this.expired = true;
        else this.errorEvent = typeof status?.message === 'string' ? status.message : 'watch error event';
        return;
      }
      default:
        return;
    }
    const rv = resourceVersionOf(obj);
    if (rv !== undefined) this.resourceVersion = rv;
  }

  private watchEnded(error: unknown, durationMs: number, events: number): void {
    if (this.stopped) return;
    const { resource } = this.options;
    const short = durationMs < shortWatchMs && events === 0;
    if (this.expired || statusCodeOf(error) === 410) {
      this.options.onRestart?.('expired');
      this.logger.info('watch expired (410 Gone); relisting', {
        resource,
        resourceVersion: this.resourceVersion,
      });
      this.resourceVersion = '';
      this.interrupted = true;
      if (short) this.retryLater(() => this.listThenWatch('relist'));
      else void this.listThenWatch('relist');
      return;
    }
    if ((error !== null && error !== undefined) || this.errorEvent !== undefined || short) {
      this.interrupted = true;
      this.options.onRestart?.('error');
      this.logger.warn('watch failed; resuming with backoff', {
        resource,
        resourceVersion: this.resourceVersion,
        error: this.errorEvent ?? (error === null || error === undefined ? 'ended at once' : describe(error)),
      });
      this.retryLater(() => this.startWatch());
      return;
    }
    this.options.onRestart?.('closed');
    this.logger.debug('watch ended; resuming', { resource, resourceVersion: this.resourceVersion });
    void this.startWatch();
  }

  // ---------------------------------------------------------------------------------------------
  // The watchdog

  /** Looks at the watch of `generation` when it would have been silent for the stall timeout. */
  private armWatchdog(generation: number, since: EpochMillis): void {
    const timeout = this.stallTimeout();
    if (this.watchdog !== undefined) this.options.scheduler.cancel(this.watchdog);
    this.watchdog = undefined;
    if (timeout === undefined) return;
    const due = since + timeout;
    this.watchdog = this.options.scheduler.at(due, WatchdogPriority, () => this.checkWatch(generation, due));
  }

  private checkWatch(generation: number, due: EpochMillis): Promise<void> | undefined {
    this.watchdog = undefined;
    if (this.stopped || generation !== this.generation || this.openSince === undefined) return undefined;
    const { scheduler } = this.options;
    const now = scheduler.now();
    if (now - due > LateTimerSlackMs) {
      // The event loop was blocked or the process paused: events may be waiting in the socket, unread.
      // Look again once they had a chance to be read, instead of taking the backlog for silence.
      const again = now + LateTimerSlackMs;
      this.watchdog = scheduler.at(again, WatchdogPriority, () => this.checkWatch(generation, again));
      return undefined;
    }
    const silent = this.silentFor();
    if (silent === undefined) {
      // Something arrived meanwhile (or the timeout changed with the cache): look again when it is due.
      this.armWatchdog(generation, this.lastDeliveryAt ?? now);
      return undefined;
    }
    // Abandon the watch: its late callbacks are ignored, its connection closed.
    this.generation++;
    this.controller?.abort();
    this.controller = undefined;
    this.watchClosed();
    this.interrupted = true;
    this.options.onStall?.();
    this.logger.warn(WatchStalledMessage, {
      resource: this.options.resource,
      silentSeconds: silent / 1000,
      resourceVersion: this.resourceVersion,
    });
    // Returned, so a virtual scheduler finishes the relist before the other timers of this instant.
    return this.listThenWatch('relist');
  }

  /** The watch is no longer open: no watchdog for it. */
  private watchClosed(): void {
    this.openSince = undefined;
    if (this.watchdog !== undefined) this.options.scheduler.cancel(this.watchdog);
    this.watchdog = undefined;
  }

  private retryLater(run: () => Promise<void>): void {
    const { scheduler } = this.options;
    const now = scheduler.now();
    if (now - this.lastFailureAt > this.backoff.resetAfterMs) this.failures = 0;
    this.lastFailureAt = now;
    const base = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** this.failures);
    this.failures++;
    const delay = Math.min(this.backoff.maxMs, base * (1 + this.random()));
    if (this.retryTimer !== undefined) scheduler.cancel(this.retryTimer);
    this.retryTimer = scheduler.after(delay, Priority.Relay, () => {
      this.retryTimer = undefined;
      return this.stopped ? undefined : run();
    });
  }
}
