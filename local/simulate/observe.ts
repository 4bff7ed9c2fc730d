// The timeline, observed from the API simulator (docs/simulate.md "Output": "observed from the API
// simulator, not reported by the handlers about themselves"). The store's own watches deliver every
// committed change with the object before and after; a change committed while a controller request is
// being served (the controller's identity; see SimulatedApi) is diffed into records:
// - Node: conditions whose status or reason changed → NodeCondition; taints added or removed (by key and
//   effect) → TaintAdded / TaintRemoved;
// - Pod: Ready turned False → PodNotReady; deletion requested (deletionTimestamp set, or the object
//   removed) → PodDeleted, with the reason the controller left on the pod (the DisruptionTarget
//   condition of taint eviction, or the legacy path's status.reason NodeLost);
// - Event created → Event.
// Changes by anyone else (the simulated kubelets, the scenario's actions, the relay) are not records.
import type { Registry } from '../apiserver/registry.js';
import type { JsonObject } from '../apiserver/json.js';
import { coreEvents, nodes, pods } from '../apiserver/resources.js';
import type { StoredEvent } from '../apiserver/store.js';
import type { ConditionStatus, TaintEffect } from '../../shared/domain/types.js';
import type { TimelineRecord } from './timeline.js';

interface WireCondition {
  readonly type?: string;
  readonly status?: string;
  readonly reason?: string;
}

interface WireTaint {
  readonly key?: string;
  readonly effect?: string;
}

function field(obj: Readonly<JsonObject> | undefined, ...path: string[]): unknown {
  let current: unknown = obj;
  for (const key of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function text(obj: Readonly<JsonObject> | undefined, ...path: string[]): string {
  const value = field(obj, ...path);
  return typeof value === 'string' ? value : '';
}

/** The objects in a list field (conditions, taints); other entries are skipped. */
function objects(
  obj: Readonly<JsonObject> | undefined,
  ...path: string[]
): readonly Readonly<Record<string, unknown>>[] {
  const value = field(obj, ...path);
  return Array.isArray(value)
    ? value.filter(
        (v): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v),
      )
    : [];
}

function conditions(obj: Readonly<JsonObject> | undefined, ...path: string[]): readonly WireCondition[] {
  return objects(obj, ...path);
}

function taints(obj: Readonly<JsonObject> | undefined): readonly WireTaint[] {
  return objects(obj, 'spec', 'taints');
}

const STATUSES: readonly string[] = ['True', 'False', 'Unknown'];
const EFFECTS: readonly string[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

function nodeRecords(
  before: Readonly<JsonObject> | undefined,
  after: Readonly<JsonObject>,
): TimelineRecord[] {
  const node = text(after, 'metadata', 'name');
  const records: TimelineRecord[] = [];
  const old = new Map(conditions(before, 'status', 'conditions').map((c) => [c.type ?? '', c] as const));
  for (const c of conditions(after, 'status', 'conditions')) {
    const was = old.get(c.type ?? '');
    if (was !== undefined && was.status === c.status && (was.reason ?? '') === (c.reason ?? '')) continue;
    if (c.type === undefined || !STATUSES.includes(c.status ?? '')) continue;
    records.push({
      kind: 'NodeCondition',
      node,
      type: c.type,
      status: c.status as ConditionStatus,
      reason: c.reason ?? '',
    });
  }
  const id = (t: WireTaint): string => `${t.key ?? ''}\u0000${t.effect ?? ''}`;
  const oldTaints = taints(before);
  const newTaints = taints(after);
  const oldIds = new Set(oldTaints.map(id));
  const newIds = new Set(newTaints.map(id));
  for (const t of oldTaints) {
    if (!newIds.has(id(t)) && EFFECTS.includes(t.effect ?? '')) {
      records.push({ kind: 'TaintRemoved', node, key: t.key ?? '', effect: t.effect as TaintEffect });
    }
  }
  for (const t of newTaints) {
    if (!oldIds.has(id(t)) && EFFECTS.includes(t.effect ?? '')) {
      records.push({ kind: 'TaintAdded', node, key: t.key ?? '', effect: t.effect as TaintEffect });
    }
  }
  return records;
}

/** Why the controller deleted the pod, from what it wrote on the pod before the delete. */
function deletionReason(pod: Readonly<JsonObject>): string {
  const disruption = conditions(pod, 'status', 'conditions').find(
    (c) => c.type === 'DisruptionTarget' && c.status === 'True',
  );
  if (disruption?.reason === 'DeletionByTaintManager') return 'TaintManagerEviction';
  const reason = text(pod, 'status', 'reason');
  return reason === '' ? 'Deleted' : reason;
}

function podRecords(event: StoredEvent): TimelineRecord[] {
  const after = event.object;
  const before = event.previous;
  const pod = `${text(after, 'metadata', 'namespace')}/${text(after, 'metadata', 'name')}`;
  const node = text(after, 'spec', 'nodeName');
  const records: TimelineRecord[] = [];
  const ready = (obj: Readonly<JsonObject> | undefined) =>
    conditions(obj, 'status', 'conditions').find((c) => c.type === 'Ready')?.status;
  if (event.type === 'MODIFIED' && ready(after) === 'False' && ready(before) !== 'False') {
    records.push({ kind: 'PodNotReady', pod, node });
  }
  const deletionRequested =
    event.type === 'DELETED'
      ? text(before, 'metadata', 'deletionTimestamp') === ''
      : text(after, 'metadata', 'deletionTimestamp') !== '' &&
        text(before, 'metadata', 'deletionTimestamp') === '';
  if (deletionRequested) records.push({ kind: 'PodDeleted', pod, node, reason: deletionReason(after) });
  return records;
}

function eventRecord(event: Readonly<JsonObject>): TimelineRecord {
  const kind = text(event, 'involvedObject', 'kind');
  const namespace = text(event, 'involvedObject', 'namespace');
  const name = text(event, 'involvedObject', 'name');
  return {
    kind: 'Event',
    reason: text(event, 'reason'),
    object: [kind, ...(namespace === '' ? [] : [namespace]), name].join('/'),
    message: text(event, 'message'),
    type: text(event, 'type'),
  };
}

/**
 * Watches the store and reports, through `emit`, the records for changes committed while
 * `byController()` is true. Returns a function that stops watching.
 *
 * @example
 * const stop = observeController(api.registry, () => depth > 0, (record) => lines.push(record));
 */
export function observeController(
  registry: Registry,
  byController: () => boolean,
  emit: (record: TimelineRecord) => void,
): () => void {
  const stops = [
    registry.store.watch(nodes.storage, undefined, (event) => {
      if (event.type !== 'MODIFIED' || !byController()) return;
      for (const record of nodeRecords(event.previous, event.object)) emit(record);
    }),
    registry.store.watch(pods.storage, undefined, (event) => {
      if (event.type === 'ADDED' || !byController()) return;
      for (const record of podRecords(event)) emit(record);
    }),
    registry.store.watch(coreEvents.storage, undefined, (event) => {
      if (event.type === 'ADDED' && byController()) emit(eventRecord(event.object));
    }),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}

/** A node's Ready status in the API: True, False, Unknown, `''` without one, `Deleted` once it is gone. */
export type NodeReadyStatus = ConditionStatus | '' | 'Deleted';

/**
 * Watches the store and reports every node as it is added, every change of a node's Ready status by
 * anyone (the kubelets' too, which are not timeline records, and a restore's) and every node deleted:
 * what a picture of the run (`nlc simulate --report`) needs besides the controller's records. Returns a
 * function that stops watching.
 *
 * @example
 * const stop = observeNodeReady(api.registry, (node, ready) => lanes.set(node, ready));
 */
export function observeNodeReady(
  registry: Registry,
  emit: (node: string, ready: NodeReadyStatus) => void,
): () => void {
  const ready = (obj: Readonly<JsonObject> | undefined): NodeReadyStatus => {
    const status = conditions(obj, 'status', 'conditions').find((c) => c.type === 'Ready')?.status ?? '';
    return STATUSES.includes(status) ? (status as ConditionStatus) : '';
  };
  const stopWatching = registry.store.watch(nodes.storage, undefined, (event) => {
    const node = text(event.object, 'metadata', 'name');
    if (event.type === 'DELETED') emit(node, 'Deleted');
    else if (event.type === 'ADDED' || ready(event.object) !== ready(event.previous))
      emit(node, ready(event.object));
  });
  // A restore (restoreApiServer) changes objects without watch events: what it changed, the same way.
  const stopRestores = registry.store.onRestore((restored) => {
    for (const { storage, before, after } of restored) {
      if (storage !== nodes.storage) continue;
      for (const [key, was] of before) {
        if (!after.has(key)) emit(text(was, 'metadata', 'name'), 'Deleted');
      }
      for (const [key, now] of after) {
        const was = before.get(key);
        if (was === undefined || ready(now) !== ready(was)) emit(text(now, 'metadata', 'name'), ready(now));
      }
    }
  });
  return () => {
    stopWatching();
    stopRestores();
  };
}
