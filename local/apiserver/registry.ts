// The API semantics over the object store, shared by HTTP and in-process callers: upstream's generic
// registry (staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go with rest.BeforeCreate,
// BeforeUpdate, BeforeDelete) plus the request handlers' checks (create.go, update.go, patch.go,
// delete.go) and the admission chain. Every call is synchronous and atomic: a request is decoded,
// admitted, validated and committed before the next one starts, so there are no storage-level races
// to retry. Timestamps come from the injected clock.
import type { DefaultTolerationSecondsOptions } from '../../shared/domain/tolerations.js';
import type { Clock } from '../../shared/ports/clock.js';
import { admitDefaultTolerationSeconds, admitTaintNodesByCondition } from './admission.js';
import { IdSource } from './ids.js';
import {
  type Json,
  type JsonObject,
  child,
  clone,
  deepEqual,
  deleteKey,
  getNumber,
  getObject,
  getString,
  getStringMap,
  isObject,
} from './json.js';
import { type PatchType, applyPatch } from './patch.js';
import {
  type ResourceDef,
  allResources,
  apiVersionOf,
  bindingSchemaFor,
  namespaces,
  nodes,
  pods,
} from './resources.js';
import { decodeStructure } from './schemas.js';
import {
  type LabelSelector,
  type FieldSelector,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from './selectors.js';
import {
  ApiStatusError,
  type GroupResource,
  type Status,
  alreadyExists,
  badRequest,
  conflict,
  forbidden,
  internalError,
  invalid,
  notFound,
} from './status.js';
import { ObjectStore, type StoredEvent, storageKey } from './store.js';
import { formatTime, normalizeTimestamps, parseTime } from './timestamps.js';

export interface RegistryOptions {
  readonly clock: Clock;
  /** Seed for UIDs and generated names (deterministic runs). */
  readonly seed?: number;
  /** kube-apiserver --event-ttl: events disappear this long after their last write. 1 h upstream. */
  readonly eventTtlMs?: number;
  /** DefaultTolerationSeconds admission settings (300 s each upstream). */
  readonly defaultTolerationSeconds?: DefaultTolerationSecondsOptions;
  readonly historyWindowMs?: number;
  readonly historyMinEvents?: number;
  readonly historyMaxEvents?: number;
}

export interface WriteOptions {
  /** Server-side dry run (dryRun=All): everything but the write. */
  readonly dryRun?: boolean;
}

export interface ListOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
}

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

export interface DeleteOptions extends WriteOptions {
  readonly gracePeriodSeconds?: number;
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
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
}

const protectedNamespaces = new Set(['default', 'kube-system', 'kube-public']);
/** The namespaces a real kube-apiserver creates at start (kube-node-lease by the lease controller). */
export const systemNamespaces = ['default', 'kube-node-lease', 'kube-public', 'kube-system'] as const;

function groupResource(def: ResourceDef): GroupResource {
  return { group: def.group, resource: def.resource };
}

function decodeContext(def: ResourceDef): string {
  return `${def.kind} in version ${JSON.stringify(def.version)} cannot be handled as a ${def.kind}`;
}

function metadataOf(obj: JsonObject): JsonObject {
  return child(obj, 'metadata');
}

export class Registry {
  readonly store: ObjectStore;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly eventTtlMs: number;
  private readonly tolerationDefaults: DefaultTolerationSecondsOptions;
  private readonly watches = new Set<ActiveWatch>();
  /** Event expiry queue (FIFO: every write sets now + ttl) and each event's current expiry. */
  private readonly eventExpiryQueue: { key: string; at: number }[] = [];
  private readonly eventExpiry = new Map<string, number>();

  constructor(options: RegistryOptions) {
    this.clock = options.clock;
    this.store = new ObjectStore({
      clock: options.clock,
      ...(options.historyWindowMs !== undefined && { historyWindowMs: options.historyWindowMs }),
      ...(options.historyMinEvents !== undefined && { historyMinEvents: options.historyMinEvents }),
      ...(options.historyMaxEvents !== undefined && { historyMaxEvents: options.historyMaxEvents }),
    });
    this.ids = new IdSource(options.seed ?? 0x6b756265);
    this.eventTtlMs = options.eventTtlMs ?? 3_600_000;
    this.tolerationDefaults = options.defaultTolerationSeconds ?? {};
    for (const name of systemNamespaces) this.create(namespaces, '', { metadata: { name } });
  }

  /** The injected clock's time. */
  now(): number {
    return this.clock.now();
  }

  // --- reads ------------------------------------------------------------------------------------

  /** The object as a client reads it (own copy, converted to the resource's version). */
  present(def: ResourceDef, stored: Readonly<JsonObject>, withType = true): JsonObject {
    let obj = clone(stored as JsonObject);
    if (def.fromStorage !== undefined) obj = def.fromStorage(obj);
    if (!withType) {
      delete obj.apiVersion;
      delete obj.kind;
      return obj;
    }
    return { apiVersion: apiVersionOf(def), kind: def.kind, ...withoutType(obj) };
  }

  get(def: ResourceDef, namespace: string, name: string): JsonObject {
    this.expireEvents();
    const stored = this.store.get(def.storage, this.key(def, namespace, name));
    if (stored === undefined) throw notFound(groupResource(def), name);
    return this.present(def, stored);
  }

  list(def: ResourceDef, options: ListOptions = {}): JsonObject {
    this.expireEvents();
    const matches = this.matcher(def, options.namespace ?? '', options.labelSelector, options.fieldSelector);
    let items = this.store.list(def.storage, def.namespaced ? options.namespace : undefined).filter(matches);
    const revision = this.store.resourceVersion;
    const metadata: JsonObject = { resourceVersion: String(revision) };
    if (options.continue !== undefined && options.continue !== '') {
      const start = decodeContinue(options.continue);
      metadata.resourceVersion = String(start.rv);
      items = items.filter((item) => this.objectKey(item) > start.key);
    }
    if (options.limit !== undefined && options.limit > 0 && items.length > options.limit) {
      const page = items.slice(0, options.limit);
      const last = page[page.length - 1];
      metadata.continue = encodeContinue(
        Number(metadata.resourceVersion),
        last === undefined ? '' : this.objectKey(last),
      );
      metadata.remainingItemCount = items.length - page.length;
      items = page;
    }
    return {
      kind: `${def.kind}List`,
      apiVersion: apiVersionOf(def),
      metadata,
      items: items.map((item) => this.present(def, item, false)),
    };
  }

  // --- create -----------------------------------------------------------------------------------

  create(def: ResourceDef, namespace: string, body: Json, options: WriteOptions = {}): JsonObject {
    this.expireEvents();
    const obj = this.decode(def, body, 400);
    const meta = metadataOf(obj);
    this.ensureNamespace(def, namespace, meta);
    const name = getString(meta, ['name']) ?? '';
    const generateName = getString(meta, ['generateName']) ?? '';
    if (name === '' && generateName !== '') meta.name = this.ids.generateName(generateName);
    if (getString(meta, ['resourceVersion']) !== undefined && meta.resourceVersion !== '') {
      throw internalError('resourceVersion should not be set on objects to be created');
    }
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (def.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    def.prepareForCreate?.(obj);
    meta.uid = this.ids.uid();
    meta.creationTimestamp = formatTime(this.clock.now());

    this.admitNamespaceLifecycle(def, obj);
    if (def === pods) admitDefaultTolerationSeconds(obj, this.tolerationDefaults);
    if (def === nodes) admitTaintNodesByCondition(obj);

    const finalName = getString(meta, ['name']) ?? '';
    const errors = def.validate(obj);
    if (errors.length > 0) throw invalid({ group: def.group, kind: def.kind }, finalName, errors);
    const key = this.key(def, getString(meta, ['namespace']) ?? '', finalName);
    if (this.store.get(def.storage, key) !== undefined) throw alreadyExists(groupResource(def), finalName);
    if (options.dryRun === true) return this.present(def, obj);
    const stored = this.store.put(def.storage, key, obj);
    this.touchEvent(def, key);
    return this.present(def, stored);
  }

  // --- update (PUT) and patch -------------------------------------------------------------------

  update(
    def: ResourceDef,
    namespace: string,
    name: string,
    body: Json,
    subresource?: 'status',
    options: WriteOptions = {},
  ): JsonObject {
    this.expireEvents();
    const obj = this.decode(def, body, 400);
    const meta = metadataOf(obj);
    this.checkName(def, namespace, name, meta);
    const key = this.key(def, namespace, name);
    const current = this.store.get(def.storage, key);
    if (current === undefined) {
      if (def.allowCreateOnUpdate && subresource === undefined) {
        if ((getString(meta, ['resourceVersion']) ?? '') !== '') throw notFound(groupResource(def), name);
        return this.create(def, namespace, this.present(def, obj), options);
      }
      throw notFound(groupResource(def), name);
    }
    const requested = getString(meta, ['resourceVersion']) ?? '';
    if (requested !== '' && requested !== getString(current, ['metadata', 'resourceVersion'])) {
      throw conflict(groupResource(def), name);
    }
    return this.applyUpdate(def, key, current, obj, subresource, options);
  }

  patch(
    def: ResourceDef,
    namespace: string,
    name: string,
    type: PatchType,
    patch: Json,
    subresource?: 'status',
    options: WriteOptions = {},
  ): JsonObject {
    this.expireEvents();
    const key = this.key(def, namespace, name);
    const current = this.store.get(def.storage, key);
    if (current === undefined) throw notFound(groupResource(def), name);
    const patched = applyPatch(this.present(def, current), type, patch, def.strategic);
    if (!isObject(patched)) {
      throw invalid({ group: '', kind: '' }, '', [
        {
          type: 'FieldValueInvalid',
          field: 'patch',
          message: `Invalid value: ${JSON.stringify(JSON.stringify(patched))}: the patched object is not an object`,
        },
      ]);
    }
    const obj = this.decode(def, patched, 422);
    const meta = metadataOf(obj);
    this.checkName(def, namespace, name, meta);
    // A patch that carries (or sets) a resourceVersion makes the write conditional on it.
    const requested = getString(meta, ['resourceVersion']) ?? '';
    if (requested !== '' && requested !== getString(current, ['metadata', 'resourceVersion'])) {
      throw conflict(groupResource(def), name);
    }
    return this.applyUpdate(def, key, current, obj, subresource, options);
  }

  private applyUpdate(
    def: ResourceDef,
    key: string,
    current: Readonly<JsonObject>,
    obj: JsonObject,
    subresource: 'status' | undefined,
    options: WriteOptions,
  ): JsonObject {
    const old = current as JsonObject;
    const meta = metadataOf(obj);
    const oldMeta = getObject(old, ['metadata']) ?? {};
    const name = getString(oldMeta, ['name']) ?? '';
    // rest.BeforeUpdate: generation, uid, creationTimestamp and deletion fields are the server's.
    copyField(meta, oldMeta, 'generation');
    if ((getString(meta, ['uid']) ?? '') === '') copyField(meta, oldMeta, 'uid');
    copyField(meta, oldMeta, 'creationTimestamp');
    copyField(meta, oldMeta, 'deletionTimestamp');
    if (oldMeta.deletionGracePeriodSeconds !== undefined)
      copyField(meta, oldMeta, 'deletionGracePeriodSeconds');
    else delete meta.deletionGracePeriodSeconds;
    if (subresource === 'status') def.prepareForStatusUpdate?.(obj, old);
    else def.prepareForUpdate?.(obj, old);
    if (subresource === undefined && def === pods)
      admitDefaultTolerationSeconds(obj, this.tolerationDefaults);

    const validate =
      subresource === 'status' ? (def.validateStatusUpdate ?? def.validateUpdate) : def.validateUpdate;
    const errors = validate(obj, old);
    if (errors.length > 0) throw invalid({ group: def.group, kind: def.kind }, name, errors);
    if (def.tracksGeneration && !deepEqual(obj.spec, old.spec)) {
      meta.generation = (getNumber(oldMeta, ['generation']) ?? 0) + 1;
    }
    meta.resourceVersion = getString(oldMeta, ['resourceVersion']) ?? '';
    // A no-op write is not written: no new resourceVersion, no watch event (etcd3 store GuaranteedUpdate).
    if (deepEqual(obj, old)) return this.present(def, current);
    if (options.dryRun === true) return this.present(def, obj);

    const finalizers = Array.isArray(meta.finalizers) ? meta.finalizers : [];
    if (oldMeta.deletionGracePeriodSeconds === 0 && finalizers.length === 0) {
      // The last finalizer of an object pending deletion is gone: the update deletes it.
      this.store.put(def.storage, key, obj);
      return this.present(def, this.remove(def, key) ?? current);
    }
    const stored = this.store.put(def.storage, key, obj);
    this.touchEvent(def, key);
    return this.present(def, stored);
  }

  /** POST pods/NAME/binding: sets spec.nodeName of an unbound pod (the scheduler's write). */
  bind(namespace: string, name: string, body: Json, options: WriteOptions = {}): Status {
    this.expireEvents();
    decodeStructure(bindingSchemaFor, body, 'Binding in version "v1" cannot be handled as a Binding');
    const target = isObject(body) ? getString(body, ['target', 'name']) : undefined;
    if (target === undefined || target === '') {
      throw invalid({ group: '', kind: 'Binding' }, name, [
        { type: 'FieldValueRequired', field: 'target.name', message: 'Required value' },
      ]);
    }
    const key = this.key(pods, namespace, name);
    const current = this.store.get(pods.storage, key);
    if (current === undefined) throw notFound(groupResource(pods), name);
    if (getString(current, ['metadata', 'deletionTimestamp']) !== undefined) {
      throw conflict(groupResource(pods), name, `pod ${name} is being deleted, cannot be assigned to a host`);
    }
    const bound = getString(current, ['spec', 'nodeName']) ?? '';
    if (bound !== '')
      throw conflict(
        groupResource(pods),
        name,
        `pod ${name} is already assigned to node ${JSON.stringify(bound)}`,
      );
    const obj = clone(current as JsonObject);
    child(obj, 'spec').nodeName = target;
    const status = child(obj, 'status');
    const conditions = Array.isArray(status.conditions) ? status.conditions : [];
    status.conditions = [
      ...conditions.filter((c) => getString(c, ['type']) !== 'PodScheduled'),
      {
        type: 'PodScheduled',
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: formatTime(this.clock.now()),
      },
    ];
    if (options.dryRun !== true) this.store.put(pods.storage, key, obj);
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
  }

  // --- delete -----------------------------------------------------------------------------------

  delete(def: ResourceDef, namespace: string, name: string, options: DeleteOptions = {}): JsonObject {
    this.expireEvents();
    const key = this.key(def, namespace, name);
    const current = this.store.get(def.storage, key);
    if (current === undefined) throw notFound(groupResource(def), name);
    if (def === namespaces) return this.deleteNamespace(name, current, options);

    const obj = clone(current as JsonObject);
    const meta = metadataOf(obj);
    const uid = getString(meta, ['uid']) ?? '';
    const rv = getString(meta, ['resourceVersion']) ?? '';
    // rest.BeforeDelete reports precondition failures with the Kind where the resource belongs.
    const preconditionResource = { group: def.group, resource: def.kind };
    const { preconditions } = options;
    if (preconditions?.uid !== undefined && preconditions.uid !== uid) {
      throw conflict(
        preconditionResource,
        name,
        `the UID in the precondition (${preconditions.uid}) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
      );
    }
    if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== rv) {
      throw conflict(
        preconditionResource,
        name,
        `the ResourceVersion in the precondition (${preconditions.resourceVersion}) does not match the ResourceVersion in record (${rv}). The object might have been modified`,
      );
    }
    const finalizers = Array.isArray(meta.finalizers) && meta.finalizers.length > 0;
    const now = this.clock.now();

    if (def === pods) {
      const outcome = this.beforePodDelete(obj, options.gracePeriodSeconds, now);
      if (outcome === 'pending') return this.present(def, current);
      if (outcome.graceful) {
        if (options.dryRun === true) return this.present(def, obj);
        const written = this.store.put(def.storage, key, obj);
        if (finalizers || outcome.gracePeriodSeconds > 0) return this.present(def, written);
        return this.present(def, this.remove(def, key) ?? written);
      }
    }
    if (finalizers) {
      markAsDeleting(meta, now);
      if (options.dryRun === true) return this.present(def, obj);
      return this.present(def, this.store.put(def.storage, key, obj));
    }
    if (options.dryRun === true) return this.deletedAnswer(def, current);
    return this.deletedAnswer(def, this.remove(def, key) ?? current);
  }

  /**
   * rest.BeforeDelete with the pod strategy's CheckGracefulDelete: sets deletionTimestamp and
   * deletionGracePeriodSeconds on `pod` (in place) or says the deletion is already pending.
   */
  private beforePodDelete(
    pod: JsonObject,
    requestedGrace: number | undefined,
    now: number,
  ): 'pending' | { graceful: boolean; gracePeriodSeconds: number } {
    const meta = metadataOf(pod);
    let grace = requestedGrace !== undefined && requestedGrace < 0 ? 1 : requestedGrace;
    const deletionTimestamp = getString(meta, ['deletionTimestamp']);
    if (deletionTimestamp !== undefined) {
      const current = getNumber(meta, ['deletionGracePeriodSeconds']);
      if (current === undefined || current === 0) return { graceful: false, gracePeriodSeconds: 0 };
      // Only a shorter grace period may be asked for once deletion has started.
      if (grace === undefined || grace >= current) return 'pending';
      const at = (parseTime(deletionTimestamp) ?? now) - current * 1000 + grace * 1000;
      meta.deletionTimestamp = formatTime(at);
      meta.deletionGracePeriodSeconds = grace;
      return { graceful: true, gracePeriodSeconds: grace };
    }
    grace ??= getNumber(pod, ['spec', 'terminationGracePeriodSeconds']) ?? 0;
    if ((getString(pod, ['spec', 'nodeName']) ?? '') === '') grace = 0; // never scheduled: nothing to stop
    const phase = getString(pod, ['status', 'phase']);
    if (phase === 'Failed' || phase === 'Succeeded') grace = 0;
    if (grace < 0) grace = 1;
    meta.deletionTimestamp = formatTime(now + grace * 1000);
    meta.deletionGracePeriodSeconds = grace;
    const generation = getNumber(meta, ['generation']) ?? 0;
    if (generation > 0) meta.generation = generation + 1;
    return { graceful: true, gracePeriodSeconds: grace };
  }

  private deletedAnswer(def: ResourceDef, last: Readonly<JsonObject>): JsonObject {
    if (def.returnDeletedObject) return this.present(def, last);
    const details: JsonObject = { name: getString(last, ['metadata', 'name']) ?? '' };
    if (def.group !== '') details.group = def.group;
    details.kind = def.resource;
    details.uid = getString(last, ['metadata', 'uid']) ?? '';
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
  }

  /** Removes an object and runs what follows a removal (a terminating namespace may now be empty). */
  private remove(def: ResourceDef, key: string): Readonly<JsonObject> | undefined {
    const removed = this.store.remove(def.storage, key);
    this.eventExpiry.delete(`${def.storage}\u0000${key}`);
    if (removed !== undefined && def.namespaced)
      this.maybeFinalizeNamespace(getString(removed, ['metadata', 'namespace']) ?? '');
    return removed;
  }

  deleteCollection(def: ResourceDef, listOptions: ListOptions, options: DeleteOptions = {}): JsonObject {
    const list = this.list(def, listOptions);
    const items = Array.isArray(list.items) ? list.items : [];
    const deleted: Json[] = [];
    for (const item of items) {
      const name = getString(item, ['metadata', 'name']) ?? '';
      const ns = getString(item, ['metadata', 'namespace']) ?? '';
      try {
        deleted.push(this.present(def, this.delete(def, ns, name, options), false));
      } catch (error) {
        if (!(error instanceof ApiStatusError && error.code === 404)) throw error;
      }
    }
    return { ...list, items: deleted };
  }

  // --- namespaces (NamespaceLifecycle + the namespace controller) --------------------------------

  private ensureNamespace(def: ResourceDef, requestNamespace: string, meta: JsonObject): void {
    // rest.EnsureObjectNamespaceMatchesRequestNamespace
    const objectNamespace = getString(meta, ['namespace']) ?? '';
    if (!def.namespaced) {
      delete meta.namespace;
      return;
    }
    if (objectNamespace === '') meta.namespace = requestNamespace;
    else if (objectNamespace !== requestNamespace) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
  }

  private admitNamespaceLifecycle(def: ResourceDef, obj: JsonObject): void {
    if (!def.namespaced) return;
    const namespace = getString(obj, ['metadata', 'namespace']) ?? '';
    if (namespace === '') return; // validation reports the missing namespace
    const ns = this.store.get(namespaces.storage, namespace);
    if (ns === undefined) throw notFound({ group: '', resource: 'namespaces' }, namespace);
    if (getString(ns, ['status', 'phase']) === 'Terminating' && def.storage !== 'events') {
      throw forbidden(
        groupResource(def),
        getString(obj, ['metadata', 'name']) ?? '',
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      );
    }
  }

  private deleteNamespace(name: string, current: Readonly<JsonObject>, options: DeleteOptions): JsonObject {
    if (protectedNamespaces.has(name)) {
      throw forbidden(groupResource(namespaces), name, 'this namespace may not be deleted');
    }
    if (getString(current, ['metadata', 'deletionTimestamp']) !== undefined)
      return this.present(namespaces, current);
    const obj = clone(current as JsonObject);
    const meta = metadataOf(obj);
    meta.deletionTimestamp = formatTime(this.clock.now());
    meta.deletionGracePeriodSeconds = 0;
    child(obj, 'status').phase = 'Terminating';
    if (options.dryRun === true) return this.present(namespaces, obj);
    const written = this.store.put(namespaces.storage, name, obj);
    // The namespace controller's work, done at once: delete the content (pods gracefully, so pods
    // on a node stay Terminating until their kubelet confirms), then drop the namespace when empty.
    for (const def of namespacedStorages()) {
      for (const item of this.store.list(def.storage, name)) {
        const itemName = getString(item, ['metadata', 'name']) ?? '';
        if (getString(item, ['metadata', 'deletionTimestamp']) !== undefined) continue;
        this.delete(def, name, itemName, {});
      }
    }
    this.maybeFinalizeNamespace(name);
    const after = this.store.get(namespaces.storage, name);
    return this.present(namespaces, after ?? written);
  }

  private maybeFinalizeNamespace(name: string): void {
    const ns = this.store.get(namespaces.storage, name);
    if (ns === undefined || getString(ns, ['status', 'phase']) !== 'Terminating') return;
    const empty = namespacedStorages().every((def) => this.store.list(def.storage, name).length === 0);
    if (empty) this.store.remove(namespaces.storage, name);
  }

  // --- watch ------------------------------------------------------------------------------------

  watch(def: ResourceDef, options: WatchOptions, listener: (event: WatchEvent) => void): Watch {
    this.expireEvents();
    const namespace = def.namespaced ? (options.namespace ?? '') : '';
    const matches = this.matcher(def, namespace, options.labelSelector, options.fieldSelector);
    const rv = options.resourceVersion ?? '';
    const fromState = rv === '' || rv === '0';
    let from: number | undefined;
    if (!fromState) {
      if (!/^\d+$/.test(rv)) throw badRequest(`invalid resource version: ${rv}`);
      from = Number(rv);
    }
    const active: ActiveWatch = { def, bookmarks: options.allowWatchBookmarks === true, emit: listener };
    const onEvent = (event: StoredEvent) => {
      const converted = this.toWatchEvent(def, event, matches);
      if (converted !== undefined) listener(converted);
    };
    if (fromState) {
      for (const item of this.store.list(def.storage, namespace === '' ? undefined : namespace)) {
        if (matches(item)) listener({ type: 'ADDED', object: this.present(def, item) });
      }
      if (options.sendInitialEvents === true && active.bookmarks) {
        listener({
          type: 'BOOKMARK',
          object: this.bookmark(def, { 'k8s.io/initial-events-end': 'true' }),
        });
      }
    }
    const unsubscribe = this.store.watch(def.storage, from, onEvent);
    this.watches.add(active);
    return {
      stop: () => {
        unsubscribe();
        this.watches.delete(active);
      },
    };
  }

  /** What the watch cache sends a filtered watcher for one change (cache_watcher.go convertToWatchEvent). */
  private toWatchEvent(
    def: ResourceDef,
    event: StoredEvent,
    matches: (obj: Readonly<JsonObject>) => boolean,
  ): WatchEvent | undefined {
    if (event.type === 'ADDED')
      return matches(event.object) ? { type: 'ADDED', object: this.present(def, event.object) } : undefined;
    if (event.type === 'DELETED') {
      return event.previous !== undefined && matches(event.previous)
        ? { type: 'DELETED', object: this.present(def, event.object) }
        : undefined;
    }
    const now = matches(event.object);
    const before = event.previous !== undefined && matches(event.previous);
    if (now && before) return { type: 'MODIFIED', object: this.present(def, event.object) };
    if (now) return { type: 'ADDED', object: this.present(def, event.object) };
    if (before) {
      // The previous content, with the resourceVersion of the change that made it stop matching.
      const last = this.present(def, event.previous);
      metadataOf(last).resourceVersion = String(event.resourceVersion);
      return { type: 'DELETED', object: last };
    }
    return undefined;
  }

  private bookmark(def: ResourceDef, annotations?: Record<string, string>): JsonObject {
    const metadata: JsonObject = {
      resourceVersion: String(this.store.resourceVersion),
      creationTimestamp: null,
    };
    if (annotations !== undefined) metadata.annotations = annotations;
    return { kind: def.kind, apiVersion: apiVersionOf(def), metadata };
  }

  /** Sends a BOOKMARK at the current resourceVersion to every watch that asked for bookmarks. */
  sendBookmarks(): void {
    for (const active of [...this.watches]) {
      if (active.bookmarks) active.emit({ type: 'BOOKMARK', object: this.bookmark(active.def) });
    }
  }

  // --- events TTL -------------------------------------------------------------------------------

  private touchEvent(def: ResourceDef, key: string): void {
    if (def.storage !== 'events') return;
    const at = this.clock.now() + this.eventTtlMs;
    const id = `${def.storage}\u0000${key}`;
    this.eventExpiry.set(id, at);
    this.eventExpiryQueue.push({ key, at });
  }

  /** Events whose TTL passed disappear, as etcd's lease expiry removes them (with a DELETED event). */
  expireEvents(): void {
    const now = this.clock.now();
    while (this.eventExpiryQueue.length > 0) {
      const head = this.eventExpiryQueue[0];
      if (head === undefined || head.at > now) break;
      this.eventExpiryQueue.shift();
      const id = `events\u0000${head.key}`;
      if (this.eventExpiry.get(id) === head.at) {
        this.eventExpiry.delete(id);
        this.store.remove('events', head.key);
      }
    }
  }

  // --- helpers ----------------------------------------------------------------------------------

  private key(def: ResourceDef, namespace: string, name: string): string {
    return storageKey(def.namespaced ? namespace : '', name);
  }

  private objectKey(obj: Readonly<JsonObject>): string {
    return storageKey(
      getString(obj, ['metadata', 'namespace']) ?? '',
      getString(obj, ['metadata', 'name']) ?? '',
    );
  }

  private matcher(
    def: ResourceDef,
    namespace: string,
    labelSelector: string | undefined,
    fieldSelector: string | undefined,
  ): (obj: Readonly<JsonObject>) => boolean {
    const labels: LabelSelector = parseLabelSelector(labelSelector ?? '');
    const fields: FieldSelector = parseFieldSelector(
      fieldSelector ?? '',
      new Set(Object.keys(def.fieldSelectors)),
    );
    return (obj) => {
      if (def.namespaced && namespace !== '' && getString(obj, ['metadata', 'namespace']) !== namespace)
        return false;
      if (!matchesLabels(labels, getStringMap(obj, ['metadata', 'labels']))) return false;
      return matchesFields(fields, (field) => def.fieldSelectors[field]?.(obj) ?? '');
    };
  }

  /**
   * Decoding as the server does it: the body must be an object of this kind; field types are checked,
   * timestamps canonicalised, defaults applied, and the object converted to its storage version.
   * `failureCode` 422 is for patch results (upstream reports those against the field "patch").
   */
  private decode(def: ResourceDef, body: Json, failureCode: 400 | 422): JsonObject {
    const context = decodeContext(def);
    try {
      if (!isObject(body))
        throw badRequest(
          `${context}: json: cannot unmarshal ${Array.isArray(body) ? 'array' : typeof body} into Go value of type struct`,
        );
      const kind = getString(body, ['kind']);
      if (kind !== undefined && kind !== '' && kind !== def.kind) {
        throw badRequest(
          `${context}: the kind in the data (${kind}) does not match the expected kind (${def.kind})`,
        );
      }
      const apiVersion = getString(body, ['apiVersion']);
      if (apiVersion !== undefined && apiVersion !== '' && apiVersion !== apiVersionOf(def)) {
        throw badRequest(
          `the API version in the data (${apiVersion}) does not match the expected API version (${apiVersionOf(def)})`,
        );
      }
      decodeStructure(def.schema, body, context);
      let obj = clone(body);
      normalizeTimestamps(obj, def.timeFields, context);
      if (def.toStorage !== undefined) obj = def.toStorage(obj);
      dropNulls(obj);
      def.defaults?.(obj);
      const storageVersion = def.toStorage === undefined ? apiVersionOf(def) : 'v1';
      return {
        apiVersion: storageVersion,
        kind: def.kind,
        ...withoutType(obj),
        metadata: isObject(obj.metadata) ? obj.metadata : {},
      };
    } catch (error) {
      if (failureCode === 422 && error instanceof ApiStatusError && error.code === 400) {
        throw invalid({ group: '', kind: '' }, '', [
          { type: 'FieldValueInvalid', field: 'patch', message: `Invalid value: "...": ${error.message}` },
        ]);
      }
      throw error;
    }
  }

  /** rest handlers' checkName: the body names the object the URL names. */
  private checkName(def: ResourceDef, namespace: string, name: string, meta: JsonObject): void {
    const objectName = getString(meta, ['name']) ?? '';
    if (objectName !== name) {
      throw badRequest(`the name of the object (${objectName}) does not match the name on the URL (${name})`);
    }
    const objectNamespace = getString(meta, ['namespace']) ?? '';
    if (def.namespaced) {
      if (objectNamespace !== '' && objectNamespace !== namespace) {
        throw badRequest(
          `the namespace of the object (${objectNamespace}) does not match the namespace on the request (${namespace})`,
        );
      }
      meta.namespace = namespace;
    } else {
      delete meta.namespace;
    }
  }
}

function withoutType(obj: JsonObject): JsonObject {
  const rest: JsonObject = { ...obj };
  delete rest.apiVersion;
  delete rest.kind;
  return rest;
}

function copyField(target: JsonObject, source: JsonObject, field: string): void {
  const value = source[field];
  if (value === undefined) deleteKey(target, field);
  else target[field] = clone(value);
}

/** markAsDeleting: deletionTimestamp now (unless already earlier), grace 0, generation bumped once. */
function markAsDeleting(meta: JsonObject, now: number): void {
  const existing = getString(meta, ['deletionTimestamp']);
  const generation = getNumber(meta, ['generation']) ?? 0;
  if (existing === undefined && generation > 0) meta.generation = generation + 1;
  if (existing === undefined || (parseTime(existing) ?? 0) > now) meta.deletionTimestamp = formatTime(now);
  meta.deletionGracePeriodSeconds = 0;
}

/**
 * Go decodes null into a zero value and omits empty optional fields when encoding, so a null in a
 * request never reads back. Timestamps stay (Go prints a zero metav1.Time as null).
 */
function dropNulls(obj: JsonObject): void {
  for (const [key, value] of Object.entries(obj)) {
    if (value === null) {
      if (!/Time$|Timestamp$|^timeAdded$/.test(key)) deleteKey(obj, key);
    } else if (Array.isArray(value)) {
      for (const item of value) if (isObject(item)) dropNulls(item);
    } else if (isObject(value)) {
      dropNulls(value);
    }
  }
}

interface ContinueToken {
  readonly rv: number;
  readonly key: string;
}

function encodeContinue(rv: number, key: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${key}\u0000` })).toString(
    'base64url',
  );
}

function decodeContinue(token: string): ContinueToken {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (isObject(parsed) && typeof parsed.rv === 'number' && typeof parsed.start === 'string') {
      return {
        rv: parsed.rv,
        key: parsed.start.endsWith('\u0000') ? parsed.start.slice(0, -1) : parsed.start,
      };
    }
  } catch {
    // fall through
  }
  throw badRequest(`continue key is not valid: ${token}`);
}

/** One definition per storage of the namespaced kinds (events once, not per API group). */
function namespacedStorages(): readonly ResourceDef[] {
  const seen = new Set<string>();
  return allResources.filter((def) => {
    if (!def.namespaced || seen.has(def.storage)) return false;
    seen.add(def.storage);
    return true;
  });
}
