// Typed in-process access to the simulator: the same registry calls the HTTP server makes, with the
// same semantics (validation, admission, status subresource rules, graceful deletion, watch), minus
// transport, authentication and fault injection. For the kubelet fleet simulator, `nlc simulate` and
// tests. Objects are the wire JSON, typed as client-node's models with every Date a string (`Wire<T>`).
import type {
  CoreV1Event,
  EventsV1Event,
  V1DaemonSet,
  V1Lease,
  V1Namespace,
  V1Node,
  V1Pod,
} from '@kubernetes/client-node';
import type { Json, JsonObject } from './json.js';
import type { PatchType } from './patch.js';
import type { DeleteOptions, ListOptions, Registry, RegistrySnapshot, WriteOptions } from './registry.js';
import {
  type ResourceDef,
  coreEvents,
  daemonSets,
  eventsV1,
  findResource,
  leases,
  namespaces,
  nodes,
  pods,
} from './resources.js';
import type { WatchEventType, WatchOptions } from './watch.js';

/** A client-node model as JSON: every `Date` is its RFC 3339 string, as on the wire. */
export type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

export interface WireList<T> {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly resourceVersion: string;
    readonly continue?: string;
    readonly remainingItemCount?: number;
  };
  readonly items: Wire<T>[];
}

export interface TypedWatchEvent<T> {
  readonly type: WatchEventType;
  /** The object; for BOOKMARK only kind, apiVersion and metadata.resourceVersion. */
  readonly object: Wire<T>;
}

export interface NamespaceOption {
  /** Required for namespaced kinds. */
  readonly namespace?: string;
}

export interface PatchOptions extends NamespaceOption, WriteOptions {
  readonly type: PatchType;
  readonly subresource?: 'status';
}

/** metav1.Status of a delete that does not return the object. */
export interface DeleteStatus {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly status: 'Success';
  readonly details: {
    readonly name: string;
    readonly group?: string;
    readonly kind: string;
    readonly uid: string;
  };
}

export interface ResourceClient<T> {
  get(name: string, opts?: NamespaceOption): Wire<T>;
  list(opts?: ListOptions): WireList<T>;
  create(obj: Wire<T>, opts?: NamespaceOption & WriteOptions): Wire<T>;
  /** PUT: conflicts (409) when `metadata.resourceVersion` is set and stale. */
  update(obj: Wire<T>, opts?: WriteOptions): Wire<T>;
  /** PUT .../status. */
  updateStatus(obj: Wire<T>, opts?: WriteOptions): Wire<T>;
  patch(name: string, patch: Json, opts: PatchOptions): Wire<T>;
  /** Answers the object (pods, namespaces, or any object left pending) or a Status. */
  delete(name: string, opts?: NamespaceOption & DeleteOptions): Wire<T> | DeleteStatus;
  /** `onEnd`: the server ended the watch (after an ERROR event: a restore ends every watch with 410). */
  watch(
    opts: WatchOptions,
    listener: (event: TypedWatchEvent<T>) => void,
    onEnd?: () => void,
  ): { stop(): void };
}

function requireNamespace(def: ResourceDef, namespace: string | undefined): string {
  if (!def.namespaced) return '';
  if (namespace === undefined || namespace === '') {
    throw new TypeError(`${def.resource} are namespaced: pass { namespace }`);
  }
  return namespace;
}

function metaOf(obj: unknown): { name: string; namespace: string } {
  const meta = (obj as { metadata?: { name?: string; namespace?: string } }).metadata ?? {};
  return { name: meta.name ?? '', namespace: meta.namespace ?? '' };
}

export function resourceClient<T>(registry: Registry, def: ResourceDef): ResourceClient<T> {
  // The registry checks every body as the HTTP server does; the casts below only restate the shape.
  const asWire = (obj: JsonObject) => obj as unknown as Wire<T>;
  const toJson = (obj: Wire<T>) => obj as unknown as Json;
  return {
    get: (name, opts) => asWire(registry.get(def, requireNamespace(def, opts?.namespace), name)),
    list: (opts) => registry.list(def, opts) as unknown as WireList<T>,
    create: (obj, opts) => {
      const namespace = def.namespaced ? (opts?.namespace ?? metaOf(obj).namespace) : '';
      return asWire(registry.create(def, requireNamespace(def, namespace), toJson(obj), opts));
    },
    update: (obj, opts) => {
      const { name, namespace } = metaOf(obj);
      return asWire(
        registry.update(def, requireNamespace(def, namespace), name, toJson(obj), undefined, opts),
      );
    },
    updateStatus: (obj, opts) => {
      const { name, namespace } = metaOf(obj);
      return asWire(
        registry.update(def, requireNamespace(def, namespace), name, toJson(obj), 'status', opts),
      );
    },
    patch: (name, patch, opts) =>
      asWire(
        registry.patch(
          def,
          requireNamespace(def, opts.namespace),
          name,
          opts.type,
          patch,
          opts.subresource,
          opts,
        ),
      ),
    delete: (name, opts) => {
      const result = registry.delete(def, requireNamespace(def, opts?.namespace), name, opts);
      return result.kind === 'Status' ? (result as unknown as DeleteStatus) : asWire(result);
    },
    watch: (opts, listener, onEnd) =>
      registry.watch(
        def,
        opts,
        (event) => {
          listener({ type: event.type, object: asWire(event.object) });
        },
        onEnd,
      ),
  };
}

/**
 * The in-process API: one typed client per kind, plus the store-level hooks tests and the simulator
 * need (forcing a compaction, sending bookmarks).
 */
export class ApiStore {
  readonly nodes: ResourceClient<V1Node>;
  readonly pods: ResourceClient<V1Pod>;
  readonly namespaces: ResourceClient<V1Namespace>;
  readonly leases: ResourceClient<V1Lease>;
  readonly daemonSets: ResourceClient<V1DaemonSet>;
  /** core/v1 Events. */
  readonly events: ResourceClient<CoreV1Event>;
  /** events.k8s.io/v1 Events: the same objects as `events`, in the newer API's shape. */
  readonly eventsV1: ResourceClient<EventsV1Event>;

  constructor(readonly registry: Registry) {
    this.nodes = resourceClient(registry, nodes);
    this.pods = resourceClient(registry, pods);
    this.namespaces = resourceClient(registry, namespaces);
    this.leases = resourceClient(registry, leases);
    this.daemonSets = resourceClient(registry, daemonSets);
    this.events = resourceClient(registry, coreEvents);
    this.eventsV1 = resourceClient(registry, eventsV1);
  }

  /** Any served resource by group, version and plural name (e.g. `('', 'v1', 'nodes')`). */
  resource<T = unknown>(group: string, version: string, resource: string): ResourceClient<T> {
    const def = findResource(group, version, resource);
    if (def === undefined)
      throw new TypeError(
        `the simulator does not serve ${resource} in ${group === '' ? version : `${group}/${version}`}`,
      );
    return resourceClient<T>(this.registry, def);
  }

  /** POST pods/NAME/binding: the scheduler's write of spec.nodeName. */
  bindPod(namespace: string, name: string, nodeName: string): void {
    this.registry.bind(namespace, name, {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name },
      target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
    });
  }

  /** The current resourceVersion (etcd revision). */
  get resourceVersion(): string {
    return String(this.registry.store.resourceVersion);
  }

  /** Every object and the resourceVersion counter now (an etcd backup); see `restore`. */
  snapshot(): RegistrySnapshot {
    return this.registry.snapshot();
  }

  /**
   * Back to a snapshot, as after an etcd restore: objects and resourceVersion counter as they were, and
   * every open watch ended with 410 Gone (Registry.restore).
   */
  restore(snapshot: RegistrySnapshot): void {
    this.registry.restore(snapshot);
  }

  /** Drops all watch history: resuming a watch from any earlier resourceVersion then gets 410. */
  compact(): void {
    this.registry.store.compact();
  }

  /** Sends a BOOKMARK to every watch that allows them (the server also does so periodically). */
  sendBookmarks(): void {
    this.registry.sendBookmarks();
  }
}
