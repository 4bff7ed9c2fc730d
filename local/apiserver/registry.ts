// The API semantics over the object store, shared by HTTP and in-process callers: upstream's generic
// registry (staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go with rest.BeforeCreate,
// BeforeUpdate, BeforeDelete) plus the request handlers' checks (create.go, update.go, patch.go,
// delete.go) and the admission chain. Every call is synchronous and atomic: a request is decoded,
// admitted, validated and committed before the next one starts, so there are no storage-level races
// to retry. Timestamps come from the injected clock. This file is the order of the steps per verb;
// the steps live beside it: codec.ts (decode, present), listing.ts (selectors, pages), watch.ts,
// deletion.ts (preconditions, graceful deletion), namespaceLifecycle.ts, eventTtl.ts, admission.ts.
import type { DefaultTolerationSecondsOptions } from '../../shared/domain/tolerations.js';
import type { Clock } from '../../shared/ports/clock.js';
import { admitDefaultTolerationSeconds, admitTaintNodesByCondition } from './admission.js';
import { checkName, decodeObject, ensureObjectNamespace, presentObject } from './codec.js';
import {
  type DeletePreconditions,
  beforePodDelete,
  checkDeletePreconditions,
  deletedAnswer,
  markAsDeleting,
} from './deletion.js';
import { EventTtl, type EventTtlSnapshot } from './eventTtl.js';
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
  isObject,
} from './json.js';
import { after, objectMatcher, paginate, requiredFieldValue } from './listing.js';
import {
  admitNamespaceLifecycle,
  isProtectedNamespace,
  namespacedStorages,
  systemNamespaces,
} from './namespaceLifecycle.js';
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
  ApiStatusError,
  type GroupResource,
  type Status,
  alreadyExists,
  conflict,
  forbidden,
  internalError,
  invalid,
  notFound,
} from './status.js';
import { ObjectStore, storageKey, type StoreSnapshot } from './store.js';
import { formatTime } from './timestamps.js';
import { type Watch, type WatchEvent, type WatchOptions, Watchers } from './watch.js';

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

/** What Registry.snapshot keeps: the store's objects and revision, and when each event expires. */
export interface RegistrySnapshot {
  readonly store: StoreSnapshot;
  readonly eventTtl: EventTtlSnapshot;
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

export interface DeleteOptions extends WriteOptions {
  readonly gracePeriodSeconds?: number;
  readonly preconditions?: DeletePreconditions;
}

function groupResource(def: ResourceDef): GroupResource {
  return { group: def.group, resource: def.resource };
}

function metadataOf(obj: JsonObject): JsonObject {
  return child(obj, 'metadata');
}

export class Registry {
  readonly store: ObjectStore;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly eventTtl: EventTtl;
  private readonly tolerationDefaults: DefaultTolerationSecondsOptions;
  private readonly watchers: Watchers;

  constructor(options: RegistryOptions) {
    this.clock = options.clock;
    this.store = new ObjectStore({
      clock: options.clock,
      ...(options.historyWindowMs !== undefined && { historyWindowMs: options.historyWindowMs }),
      ...(options.historyMinEvents !== undefined && { historyMinEvents: options.historyMinEvents }),
      ...(options.historyMaxEvents !== undefined && { historyMaxEvents: options.historyMaxEvents }),
    });
    this.ids = new IdSource(options.seed ?? 0x6b756265);
    this.eventTtl = new EventTtl(options.eventTtlMs ?? 3_600_000);
    this.watchers = new Watchers(this.store);
    this.tolerationDefaults = options.defaultTolerationSeconds ?? {};
    for (const def of allResources) {
      for (const field of def.indexedFields ?? []) {
        const valueOf = def.fieldSelectors[field];
        if (valueOf !== undefined) this.store.addIndex(def.storage, field, valueOf);
      }
    }
    for (const name of systemNamespaces) this.create(namespaces, '', { metadata: { name } });
  }

  /** The injected clock's time. */
  now(): number {
    return this.clock.now();
  }

  // --- reads ------------------------------------------------------------------------------------

  /** The object as a client reads it (own copy, converted to the resource's version). */
  present(def: ResourceDef, stored: Readonly<JsonObject>, withType = true): JsonObject {
    return presentObject(def, stored, withType);
  }

  get(def: ResourceDef, namespace: string, name: string): JsonObject {
    this.expireEvents();
    const stored = this.store.get(def.storage, this.key(def, namespace, name));
    if (stored === undefined) throw notFound(groupResource(def), name);
    return this.present(def, stored);
  }

  list(def: ResourceDef, options: ListOptions = {}): JsonObject {
    this.expireEvents();
    const matches = objectMatcher(def, options.namespace ?? '', options.labelSelector, options.fieldSelector);
    const namespace = def.namespaced ? options.namespace : undefined;
    const indexed = this.indexedCandidates(def, options.fieldSelector, namespace);
    const { items, metadata } = paginate(
      (afterKey) =>
        indexed === undefined
          ? this.store.listAfter(def.storage, afterKey, namespace)
          : after(indexed, afterKey),
      matches,
      options,
      this.store.resourceVersion,
      (options.labelSelector ?? '') === '' && (options.fieldSelector ?? '') === '',
    );
    return {
      kind: `${def.kind}List`,
      apiVersion: apiVersionOf(def),
      metadata,
      items: items.map((item) => this.present(def, item, false)),
    };
  }

  /** The objects an index narrows a list to (in list order), when its field selector allows one. */
  private indexedCandidates(
    def: ResourceDef,
    fieldSelector: string | undefined,
    namespace: string | undefined,
  ): Readonly<JsonObject>[] | undefined {
    if (fieldSelector === undefined) return undefined;
    for (const field of def.indexedFields ?? []) {
      const value = requiredFieldValue(def, fieldSelector, field);
      if (value !== undefined) return this.store.listIndexed(def.storage, field, value, namespace);
    }
    return undefined;
  }

  // --- create -----------------------------------------------------------------------------------

  create(def: ResourceDef, namespace: string, body: Json, options: WriteOptions = {}): JsonObject {
    this.expireEvents();
    const obj = decodeObject(def, body, 400);
    const meta = metadataOf(obj);
    ensureObjectNamespace(def, namespace, meta);
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

    admitNamespaceLifecycle(def, obj, (ns) => this.store.get(namespaces.storage, ns));
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
    const key = this.key(def, namespace, name);
    const current = this.store.get(def.storage, key);
    const obj = decodeObject(def, body, 400, current);
    const meta = metadataOf(obj);
    checkName(def, namespace, name, meta);
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
    const obj = decodeObject(def, patched, 422, current);
    const meta = metadataOf(obj);
    checkName(def, namespace, name, meta);
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
    // spec and status first: where a write usually differs (a Lease renewal, a status post), found
    // before the whole metadata is compared.
    if (deepEqual(obj.spec, old.spec) && deepEqual(obj.status, old.status) && deepEqual(obj, old))
      return this.present(def, current);
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
    checkDeletePreconditions(def, name, meta, options.preconditions);
    const finalizers = Array.isArray(meta.finalizers) && meta.finalizers.length > 0;
    const now = this.clock.now();

    if (def === pods) {
      const outcome = beforePodDelete(obj, options.gracePeriodSeconds, now);
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
    if (options.dryRun === true) return deletedAnswer(def, current);
    return deletedAnswer(def, this.remove(def, key) ?? current);
  }

  /** Removes an object and runs what follows a removal (a terminating namespace may now be empty). */
  private remove(def: ResourceDef, key: string): Readonly<JsonObject> | undefined {
    const removed = this.store.remove(def.storage, key);
    if (def.storage === 'events') this.eventTtl.forget(key);
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

  private deleteNamespace(name: string, current: Readonly<JsonObject>, options: DeleteOptions): JsonObject {
    if (isProtectedNamespace(name)) {
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

  /** A watch; `onEnd` is called if the server ends it (a restore ends every watch with 410 Gone). */
  watch(
    def: ResourceDef,
    options: WatchOptions,
    listener: (event: WatchEvent) => void,
    onEnd?: () => void,
  ): Watch {
    this.expireEvents();
    const namespace = def.namespaced ? (options.namespace ?? '') : '';
    const matches = objectMatcher(def, namespace, options.labelSelector, options.fieldSelector);
    return this.watchers.open(def, namespace, options, matches, listener, onEnd);
  }

  // --- snapshots (an etcd backup) and restores ---------------------------------------------------

  /** Every object, the resourceVersion counter and the events' expiry, now (ObjectStore.snapshot). */
  snapshot(): RegistrySnapshot {
    return { store: this.store.snapshot(), eventTtl: this.eventTtl.snapshot() };
  }

  /**
   * Back to a snapshot, as kube-apiserver over an etcd restored from a backup: every object and the
   * resourceVersion counter as they were (ObjectStore.restore), the events' expiry too; every open watch
   * ends with 410 Gone. UIDs and generated names keep coming from where they are: a new object never
   * takes an old one's UID.
   */
  restore(snapshot: RegistrySnapshot): void {
    this.eventTtl.restore(snapshot.eventTtl);
    this.store.restore(snapshot.store);
  }

  /** Sends a BOOKMARK at the current resourceVersion to every watch that asked for bookmarks. */
  sendBookmarks(): void {
    this.watchers.sendBookmarks();
  }

  // --- events TTL -------------------------------------------------------------------------------

  private touchEvent(def: ResourceDef, key: string): void {
    if (def.storage === 'events') this.eventTtl.written(key, this.clock.now());
  }

  /** Events whose TTL passed disappear, as etcd's lease expiry removes them (with a DELETED event). */
  expireEvents(): void {
    for (const key of this.eventTtl.due(this.clock.now())) this.store.remove('events', key);
  }

  // --- helpers ----------------------------------------------------------------------------------

  private key(def: ResourceDef, namespace: string, name: string): string {
    return storageKey(def.namespaced ? namespace : '', name);
  }
}

function copyField(target: JsonObject, source: JsonObject, field: string): void {
  const value = source[field];
  if (value === undefined) deleteKey(target, field);
  else target[field] = clone(value);
}
