// Watches over the object store, as the watch cache serves them: synthetic ADDED events for the
// current state (optionally ended by the initial-events-end BOOKMARK), then each change converted for
// the watcher's selectors, and periodic BOOKMARKs for the watchers that asked for them. When the store
// is restored from a snapshot (an etcd restore), every open watch gets an ERROR event with a 410 Expired
// Status and ends: its resourceVersion means nothing any more, and clients relist (client-go's reflector
// does on 410), as kube-apiserver's watch cache ends its watchers when etcd's revision goes back.
import { presentObject } from './codec.js';
import { type JsonObject, child, setKey } from './json.js';
import type { ObjectMatcher } from './listing.js';
import { type ResourceDef, apiVersionOf } from './resources.js';
import { badRequest, resourceExpired } from './status.js';
import type { ObjectStore, StoredEvent } from './store.js';

export interface WatchOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Absent, "" or "0": synthetic ADDED events for the current state first. Otherwise resume after it. */
  readonly resourceVersion?: string;
  readonly allowWatchBookmarks?: boolean;
  /** Streaming lists: the initial ADDED events end with a BOOKMARK annotated k8s.io/initial-events-end. */
  readonly sendInitialEvents?: boolean;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  readonly type: WatchEventType;
  readonly object: JsonObject;
}

export interface Watch {
  stop(): void;
}

interface ActiveWatch {
  readonly def: ResourceDef;
  readonly bookmarks: boolean;
  readonly emit: (event: WatchEvent) => void;
  /** The server ends the watch: no more events. */
  readonly end: () => void;
}

/** The Status of the ERROR event a watch ends with when its history is gone (410 Expired). */
export function expiredWatchStatus(): JsonObject {
  const { kind, apiVersion, status, message, reason, code } = resourceExpired(
    'The resourceVersion for the provided watch is too old.',
  ).status;
  return {
    kind,
    apiVersion,
    metadata: {},
    status,
    message: message ?? '',
    reason: reason ?? 'Expired',
    code,
  };
}

/** The open watches over one store. */
export class Watchers {
  private readonly active = new Set<ActiveWatch>();

  constructor(private readonly store: ObjectStore) {
    store.onRestore(() => {
      this.expireAll();
    });
  }

  /**
   * Opens a watch on `namespace` ('' for all) whose selectors `matches` checks. `onEnd` is called when
   * the server ends it (after a restore), not when `stop()` is.
   */
  open(
    def: ResourceDef,
    namespace: string,
    options: WatchOptions,
    matches: ObjectMatcher,
    listener: (event: WatchEvent) => void,
    onEnd?: () => void,
  ): Watch {
    const rv = options.resourceVersion ?? '';
    const fromState = rv === '' || rv === '0';
    let from: number | undefined;
    if (!fromState) {
      if (!/^\d+$/.test(rv)) throw badRequest(`invalid resource version: ${rv}`);
      from = Number(rv);
    }
    let unsubscribe = (): void => undefined;
    const active: ActiveWatch = {
      def,
      bookmarks: options.allowWatchBookmarks === true,
      emit: listener,
      end: () => {
        unsubscribe();
        this.active.delete(active);
        onEnd?.();
      },
    };
    const onEvent = (event: StoredEvent) => {
      const converted = toWatchEvent(def, event, matches);
      if (converted !== undefined) listener(converted);
    };
    if (fromState) {
      for (const item of this.store.list(def.storage, namespace === '' ? undefined : namespace)) {
        if (matches(item)) listener({ type: 'ADDED', object: presentObject(def, item) });
      }
      if (options.sendInitialEvents === true && active.bookmarks) {
        listener({
          type: 'BOOKMARK',
          object: this.bookmark(def, { 'k8s.io/initial-events-end': 'true' }),
        });
      }
    }
    unsubscribe = this.store.watch(def.storage, from, onEvent);
    this.active.add(active);
    return {
      stop: () => {
        unsubscribe();
        this.active.delete(active);
      },
    };
  }

  /** Ends every open watch with an ERROR event carrying 410 Expired (after a restore). */
  private expireAll(): void {
    for (const active of [...this.active]) {
      active.emit({ type: 'ERROR', object: expiredWatchStatus() });
      active.end();
    }
  }

  /** Sends a BOOKMARK at the current resourceVersion to every watch that asked for bookmarks. */
  sendBookmarks(): void {
    for (const active of [...this.active]) {
      if (active.bookmarks) active.emit({ type: 'BOOKMARK', object: this.bookmark(active.def) });
    }
  }

  private bookmark(def: ResourceDef, annotations?: Record<string, string>): JsonObject {
    const metadata: JsonObject = {
      resourceVersion: String(this.store.resourceVersion),
      creationTimestamp: null,
    };
    if (annotations !== undefined) metadata.annotations = annotations;
    return { kind: def.kind, apiVersion: apiVersionOf(def), metadata };
  }
}

/** What the watch cache sends a filtered watcher for one change (cache_watcher.go convertToWatchEvent). */
function toWatchEvent(def: ResourceDef, event: StoredEvent, matches: ObjectMatcher): WatchEvent | undefined {
  if (event.type === 'ADDED')
    return matches(event.object) ? { type: 'ADDED', object: presentObject(def, event.object) } : undefined;
  if (event.type === 'DELETED') {
    return event.previous !== undefined && matches(event.previous)
      ? { type: 'DELETED', object: presentObject(def, event.object) }
      : undefined;
  }
  const now = matches(event.object);
  const before = event.previous !== undefined && matches(event.previous);
  if (now && before) return { type: 'MODIFIED', object: presentObject(def, event.object) };
  if (now) return { type: 'ADDED', object: presentObject(def, event.object) };
  if (before) {
    // The previous content, with the resourceVersion of the change that made it stop matching.
    const last = presentObject(def, event.previous);
    // A presented object shares the stored (frozen) fields: its metadata is replaced, not changed.
    setKey(last, 'metadata', { ...child(last, 'metadata'), resourceVersion: String(event.resourceVersion) });
    return { type: 'DELETED', object: last };
  }
  return undefined;
}
