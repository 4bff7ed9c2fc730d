// The kinds the simulator serves and their registry strategies: what a create resets, what an update
// through the main resource or through /status may change, defaults, generation tracking, deletion
// behaviour, field selectors, strategic-merge list strategies and timestamp fields. Each entry mirrors
// the upstream pkg/registry/<group>/<kind>/strategy.go.
// One concern, kept whole: a table of seven resource definitions, each a strategy that reads on its own.
import type { StrategicSchema } from './strategicMergePatch.js';
import {
  type Json,
  type JsonObject,
  child,
  clone,
  deepEqual,
  deleteKey,
  getArray,
  getObject,
  getString,
  isObject,
} from './json.js';
import {
  bindingSchema,
  coreEventSchema,
  daemonSetSchema,
  eventsV1Schema,
  leaseSchema,
  namespaceSchema,
  nodeSchema,
  podSchema,
  type StructuralSchema,
} from './schemas.js';
import type { FieldError } from './status.js';
import type { TimeFields } from './timestamps.js';
import {
  validateDaemonSet,
  validateEvent,
  validateLease,
  validateLeaseSpec,
  validateNamespace,
  validateNode,
  validateNodeUpdate,
  validateObjectMetaUpdate,
  validatePod,
  validatePodStatusUpdate,
  validatePodUpdate,
} from './validation.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface ResourceDef {
  readonly group: string;
  readonly version: string;
  /** Plural resource name, as in the URL. */
  readonly resource: string;
  readonly singular: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly subresources: readonly ('status' | 'binding')[];
  /** Objects of resources sharing a storage key are the same objects (core/v1 and events.k8s.io/v1 Events). */
  readonly storage: string;
  /** metadata.generation starts at 1 and counts spec changes. */
  readonly tracksGeneration: boolean;
  /** A PUT of a missing object creates it. */
  readonly allowCreateOnUpdate: boolean;
  /** DELETE answers with the object rather than a Status. */
  readonly returnDeletedObject: boolean;
  readonly schema: StructuralSchema;
  readonly strategic: StrategicSchema;
  readonly timeFields: TimeFields;
  readonly fieldSelectors: Readonly<Record<string, (obj: JsonObject) => string>>;
  /**
   * Field selectors the store keeps an index for: a list selecting one value of such a field reads
   * only the objects that have it (the watch cache's indexers, e.g. pods by spec.nodeName).
   */
  readonly indexedFields?: readonly string[];
  /** Defaulting (SetDefaults_*), run on every decoded body before admission. */
  readonly defaults?: (obj: JsonObject) => void;
  readonly prepareForCreate?: (obj: JsonObject) => void;
  /** Update through the main resource: typically resets status. */
  readonly prepareForUpdate?: (obj: JsonObject, old: JsonObject) => void;
  /** Update through /status: typically resets spec. */
  readonly prepareForStatusUpdate?: (obj: JsonObject, old: JsonObject) => void;
  readonly validate: (obj: JsonObject) => FieldError[];
  readonly validateUpdate: (obj: JsonObject, old: JsonObject) => FieldError[];
  readonly validateStatusUpdate?: (obj: JsonObject, old: JsonObject) => FieldError[];
  /** Version conversion for a resource stored in another version's shape. */
  readonly toStorage?: (obj: JsonObject) => JsonObject;
  readonly fromStorage?: (obj: JsonObject) => JsonObject;
}

export function apiVersionOf(def: Pick<ResourceDef, 'group' | 'version'>): string {
  return def.group === '' ? def.version : `${def.group}/${def.version}`;
}

const metadataStrategic: StrategicSchema = {
  'metadata.finalizers': 'set',
  'metadata.ownerReferences': { mergeKey: 'uid' },
};

function podSpecStrategic(prefix: string): StrategicSchema {
  return {
    [`${prefix}.containers`]: { mergeKey: 'name' },
    [`${prefix}.initContainers`]: { mergeKey: 'name' },
    [`${prefix}.ephemeralContainers`]: { mergeKey: 'name' },
    [`${prefix}.containers[].env`]: { mergeKey: 'name' },
    [`${prefix}.containers[].ports`]: { mergeKey: 'containerPort' },
    [`${prefix}.containers[].volumeMounts`]: { mergeKey: 'mountPath' },
    [`${prefix}.initContainers[].env`]: { mergeKey: 'name' },
    [`${prefix}.initContainers[].volumeMounts`]: { mergeKey: 'mountPath' },
    [`${prefix}.volumes`]: { mergeKey: 'name' },
    [`${prefix}.imagePullSecrets`]: { mergeKey: 'name' },
    [`${prefix}.hostAliases`]: { mergeKey: 'ip' },
    [`${prefix}.schedulingGates`]: { mergeKey: 'name' },
    [`${prefix}.topologySpreadConstraints`]: { mergeKey: 'topologyKey' },
  };
}

const commonFields = (obj: JsonObject): Record<string, string> => ({
  'metadata.name': getString(obj, ['metadata', 'name']) ?? '',
  'metadata.namespace': getString(obj, ['metadata', 'namespace']) ?? '',
});

function selectors(
  extra: Readonly<Record<string, (obj: JsonObject) => string>>,
): Record<string, (obj: JsonObject) => string> {
  return {
    'metadata.name': (obj) => commonFields(obj)['metadata.name'] ?? '',
    'metadata.namespace': (obj) => commonFields(obj)['metadata.namespace'] ?? '',
    ...extra,
  };
}

const boolText = (value: Json | undefined) => (value === true ? 'true' : 'false');

/** Sets `obj[key] = value` when absent. */
function defaultTo(obj: JsonObject, key: string, value: Json): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}

/** SetDefaults_PodSpec and SetDefaults_Container (the parts a client reads back). */
function defaultPodSpec(spec: JsonObject): void {
  defaultTo(spec, 'restartPolicy', 'Always');
  defaultTo(spec, 'terminationGracePeriodSeconds', 30);
  defaultTo(spec, 'dnsPolicy', 'ClusterFirst');
  defaultTo(spec, 'securityContext', {});
  defaultTo(spec, 'schedulerName', 'default-scheduler');
  defaultTo(spec, 'enableServiceLinks', true);
  for (const list of ['containers', 'initContainers']) {
    for (const container of getArray(spec, [list])) {
      if (!isObject(container)) continue;
      defaultTo(container, 'terminationMessagePath', '/dev/termination-log');
      defaultTo(container, 'terminationMessagePolicy', 'File');
      defaultTo(container, 'resources', {});
      const image = getString(container, ['image']) ?? '';
      const tagged = /:[^/]+$/.test(image) && !image.endsWith(':latest');
      defaultTo(container, 'imagePullPolicy', tagged || image.includes('@') ? 'IfNotPresent' : 'Always');
    }
  }
}

/** qos.GetPodQOS, reduced to requests/limits of cpu and memory. */
function podQOSClass(spec: JsonObject): string {
  const containers = [...getArray(spec, ['containers']), ...getArray(spec, ['initContainers'])];
  let any = false;
  let guaranteed = true;
  for (const container of containers) {
    const requests = getObject(container, ['resources', 'requests']) ?? {};
    const limits = getObject(container, ['resources', 'limits']) ?? {};
    for (const resource of ['cpu', 'memory']) {
      if (requests[resource] !== undefined || limits[resource] !== undefined) any = true;
      const limit = limits[resource];
      const request = requests[resource] ?? limit;
      if (limit === undefined || !deepEqual(request, limit)) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

// The stored object's value itself, not a copy: it is deep-frozen (store.ts) and goes into the new
// stored object unchanged (a node's status on every taint patch, its spec on every status post).
function keepStatus(obj: JsonObject, old: JsonObject): void {
  if (old.status === undefined) delete obj.status;
  else obj.status = old.status;
}

function keepSpec(obj: JsonObject, old: JsonObject): void {
  if (old.spec === undefined) delete obj.spec;
  else obj.spec = old.spec;
}

function keepMetadataFields(obj: JsonObject, old: JsonObject, fields: readonly string[]): void {
  const meta = child(obj, 'metadata');
  const oldMeta = getObject(old, ['metadata']) ?? {};
  for (const field of fields) {
    const value = oldMeta[field];
    if (value === undefined) deleteKey(meta, field);
    else meta[field] = clone(value);
  }
}

/** metav1.ResetObjectMetaForStatus. */
const resetObjectMetaForStatus = (obj: JsonObject, old: JsonObject) => {
  keepMetadataFields(obj, old, [
    'deletionTimestamp',
    'generation',
    'labels',
    'annotations',
    'finalizers',
    'ownerReferences',
  ]);
};

const conditionTimes = ['lastTransitionTime'];

export const nodes: ResourceDef = {
  group: '',
  version: 'v1',
  resource: 'nodes',
  singular: 'node',
  kind: 'Node',
  namespaced: false,
  shortNames: ['no'],
  subresources: ['status'],
  storage: 'nodes',
  tracksGeneration: false,
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  schema: nodeSchema,
  strategic: {
    ...metadataStrategic,
    'spec.podCIDRs': 'set',
    'status.conditions': { mergeKey: 'type' },
    'status.addresses': { mergeKey: 'type' },
  },
  timeFields: {
    time: [
      'metadata.creationTimestamp',
      'metadata.deletionTimestamp',
      'spec.taints[].timeAdded',
      'status.conditions[].lastHeartbeatTime',
      'status.conditions[].lastTransitionTime',
    ],
    micro: [],
  },
  fieldSelectors: selectors({
    'spec.unschedulable': (obj) => boolText(getObject(obj, ['spec'])?.unschedulable),
  }),
  prepareForUpdate: keepStatus,
  prepareForStatusUpdate: keepSpec,
  validate: validateNode,
  validateUpdate: validateNodeUpdate,
  validateStatusUpdate: validateNodeUpdate,
};

const podTimes = [
  'metadata.creationTimestamp',
  'metadata.deletionTimestamp',
  'status.startTime',
  'status.conditions[].lastProbeTime',
  'status.conditions[].lastTransitionTime',
  ...['containerStatuses', 'initContainerStatuses'].flatMap((list) =>
    ['state', 'lastState'].flatMap((state) => [
      `status.${list}[].${state}.running.startedAt`,
      `status.${list}[].${state}.terminated.startedAt`,
      `status.${list}[].${state}.terminated.finishedAt`,
    ]),
  ),
];

export const pods: ResourceDef = {
  group: '',
  version: 'v1',
  resource: 'pods',
  singular: 'pod',
  kind: 'Pod',
  namespaced: true,
  shortNames: ['po'],
  subresources: ['status', 'binding'],
  storage: 'pods',
  tracksGeneration: true,
  allowCreateOnUpdate: false,
  returnDeletedObject: true,
  schema: podSchema,
  strategic: {
    ...metadataStrategic,
    ...podSpecStrategic('spec'),
    'status.conditions': { mergeKey: 'type' },
    'status.podIPs': { mergeKey: 'ip' },
    'status.hostIPs': { mergeKey: 'ip' },
  },
  timeFields: { time: podTimes, micro: [] },
  fieldSelectors: selectors({
    'spec.nodeName': (obj) => getString(obj, ['spec', 'nodeName']) ?? '',
    'spec.restartPolicy': (obj) => getString(obj, ['spec', 'restartPolicy']) ?? '',
    'spec.schedulerName': (obj) => getString(obj, ['spec', 'schedulerName']) ?? '',
    'spec.serviceAccountName': (obj) => getString(obj, ['spec', 'serviceAccountName']) ?? '',
    'spec.hostNetwork': (obj) => boolText(getObject(obj, ['spec'])?.hostNetwork),
    'status.phase': (obj) => getString(obj, ['status', 'phase']) ?? '',
    'status.podIP': (obj) => getString(obj, ['status', 'podIP']) ?? '',
    'status.nominatedNodeName': (obj) => getString(obj, ['status', 'nominatedNodeName']) ?? '',
  }),
  // As kube-apiserver's pod storage indexes spec.nodeName (pod.Indexers, NodeNameIndexFunc): every
  // kubelet and the controller list a node's pods.
  indexedFields: ['spec.nodeName'],
  defaults: (pod) => {
    defaultPodSpec(child(pod, 'spec'));
  },
  prepareForCreate: (pod) => {
    pod.status = { phase: 'Pending', qosClass: podQOSClass(child(pod, 'spec')) };
  },
  prepareForUpdate: keepStatus,
  prepareForStatusUpdate: (pod, old) => {
    keepSpec(pod, old);
    // pods/status may not touch deletionTimestamp or ownerReferences (old kubelets corrupted them).
    keepMetadataFields(pod, old, ['deletionTimestamp', 'ownerReferences']);
  },
  validate: validatePod,
  validateUpdate: validatePodUpdate,
  validateStatusUpdate: validatePodStatusUpdate,
};

export const namespaces: ResourceDef = {
  group: '',
  version: 'v1',
  resource: 'namespaces',
  singular: 'namespace',
  kind: 'Namespace',
  namespaced: false,
  shortNames: ['ns'],
  subresources: ['status'],
  storage: 'namespaces',
  tracksGeneration: false,
  allowCreateOnUpdate: false,
  returnDeletedObject: true,
  schema: namespaceSchema,
  strategic: { ...metadataStrategic, 'status.conditions': { mergeKey: 'type' } },
  timeFields: {
    time: [
      'metadata.creationTimestamp',
      'metadata.deletionTimestamp',
      'status.conditions[].lastTransitionTime',
    ],
    micro: [],
  },
  fieldSelectors: selectors({ 'status.phase': (obj) => getString(obj, ['status', 'phase']) ?? '' }),
  prepareForCreate: (ns) => {
    ns.status = { phase: 'Active' };
    const spec = child(ns, 'spec');
    const finalizers = getArray(spec, ['finalizers']);
    if (!finalizers.includes('kubernetes')) spec.finalizers = [...finalizers, 'kubernetes'];
  },
  prepareForUpdate: (ns, old) => {
    keepStatus(ns, old);
    keepSpec(ns, old); // finalizers change only through /finalize
  },
  prepareForStatusUpdate: keepSpec,
  validate: validateNamespace,
  validateUpdate: (obj, old) => validateObjectMetaUpdate(obj, old),
};

export const leases: ResourceDef = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  singular: 'lease',
  kind: 'Lease',
  namespaced: true,
  shortNames: [],
  subresources: [],
  storage: 'leases',
  tracksGeneration: false,
  allowCreateOnUpdate: true,
  returnDeletedObject: false,
  schema: leaseSchema,
  strategic: metadataStrategic,
  timeFields: {
    time: ['metadata.creationTimestamp', 'metadata.deletionTimestamp'],
    micro: ['spec.acquireTime', 'spec.renewTime'],
  },
  fieldSelectors: selectors({}),
  validate: validateLease,
  validateUpdate: (obj, old) => [...validateObjectMetaUpdate(obj, old), ...validateLeaseSpec(obj)],
};

export const daemonSets: ResourceDef = {
  group: 'apps',
  version: 'v1',
  resource: 'daemonsets',
  singular: 'daemonset',
  kind: 'DaemonSet',
  namespaced: true,
  shortNames: ['ds'],
  subresources: ['status'],
  storage: 'daemonsets',
  tracksGeneration: true,
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
  schema: daemonSetSchema,
  strategic: {
    ...metadataStrategic,
    ...podSpecStrategic('spec.template.spec'),
    'status.conditions': { mergeKey: 'type' },
  },
  timeFields: {
    time: [
      'metadata.creationTimestamp',
      'metadata.deletionTimestamp',
      'spec.template.metadata.creationTimestamp',
      ...conditionTimes.map((t) => `status.conditions[].${t}`),
    ],
    micro: [],
  },
  fieldSelectors: selectors({}),
  defaults: (ds) => {
    const spec = child(ds, 'spec');
    defaultTo(spec, 'revisionHistoryLimit', 10);
    defaultTo(spec, 'updateStrategy', {
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
    });
    defaultPodSpec(child(child(spec, 'template'), 'spec'));
  },
  prepareForCreate: (ds) => {
    ds.status = {
      currentNumberScheduled: 0,
      numberMisscheduled: 0,
      desiredNumberScheduled: 0,
      numberReady: 0,
    };
  },
  prepareForUpdate: keepStatus,
  prepareForStatusUpdate: (ds, old) => {
    resetObjectMetaForStatus(ds, old);
    keepSpec(ds, old);
  },
  validate: validateDaemonSet,
  validateUpdate: (obj, old) => [
    ...validateObjectMetaUpdate(obj, old),
    ...validateDaemonSet(obj).filter((e) => !e.field.startsWith('metadata')),
  ],
  validateStatusUpdate: (obj, old) => validateObjectMetaUpdate(obj, old),
};

const eventFieldSelectors = selectors({
  'involvedObject.kind': (e) => getString(e, ['involvedObject', 'kind']) ?? '',
  'involvedObject.namespace': (e) => getString(e, ['involvedObject', 'namespace']) ?? '',
  'involvedObject.name': (e) => getString(e, ['involvedObject', 'name']) ?? '',
  'involvedObject.uid': (e) => getString(e, ['involvedObject', 'uid']) ?? '',
  'involvedObject.apiVersion': (e) => getString(e, ['involvedObject', 'apiVersion']) ?? '',
  'involvedObject.resourceVersion': (e) => getString(e, ['involvedObject', 'resourceVersion']) ?? '',
  'involvedObject.fieldPath': (e) => getString(e, ['involvedObject', 'fieldPath']) ?? '',
  reason: (e) => getString(e, ['reason']) ?? '',
  reportingComponent: (e) => getString(e, ['reportingComponent']) ?? '',
  source: (e) => getString(e, ['source', 'component']) ?? '',
  type: (e) => getString(e, ['type']) ?? '',
});

export const coreEvents: ResourceDef = {
  group: '',
  version: 'v1',
  resource: 'events',
  singular: 'event',
  kind: 'Event',
  namespaced: true,
  shortNames: ['ev'],
  subresources: [],
  storage: 'events',
  tracksGeneration: false,
  allowCreateOnUpdate: true,
  returnDeletedObject: false,
  schema: coreEventSchema,
  strategic: metadataStrategic,
  timeFields: {
    time: ['metadata.creationTimestamp', 'metadata.deletionTimestamp', 'firstTimestamp', 'lastTimestamp'],
    micro: ['eventTime', 'series.lastObservedTime'],
  },
  fieldSelectors: eventFieldSelectors,
  validate: (e) => validateEvent(e, false),
  validateUpdate: (e, old) => [...validateObjectMetaUpdate(e, old), ...validateEvent(e, false)],
};

/** events.k8s.io/v1 ↔ core/v1 field renames (pkg/apis/events/v1 conversion). */
const eventRenames: readonly (readonly [string, string])[] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedCount', 'count'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedSource', 'source'],
];

function renameFields(obj: JsonObject, renames: readonly (readonly [string, string])[]): JsonObject {
  const out: JsonObject = {};
  const map = new Map(renames);
  for (const [key, value] of Object.entries(obj)) out[map.get(key) ?? key] = value;
  return out;
}

export const eventsV1: ResourceDef = {
  ...coreEvents,
  group: 'events.k8s.io',
  shortNames: ['ev'],
  schema: eventsV1Schema,
  timeFields: {
    time: [
      'metadata.creationTimestamp',
      'metadata.deletionTimestamp',
      'deprecatedFirstTimestamp',
      'deprecatedLastTimestamp',
    ],
    micro: ['eventTime', 'series.lastObservedTime'],
  },
  validate: (e) => validateEvent(e, true),
  validateUpdate: (e, old) => [...validateObjectMetaUpdate(e, old), ...validateEvent(e, false)],
  toStorage: (e) => ({ ...renameFields(e, eventRenames), apiVersion: 'v1' }),
  fromStorage: (e) => ({
    ...renameFields(
      e,
      eventRenames.map(([a, b]) => [b, a] as const),
    ),
    apiVersion: 'events.k8s.io/v1',
  }),
};

/** pods/binding (POST): the scheduler's way to set spec.nodeName. */
export const bindingSchemaFor = bindingSchema;

export const allResources: readonly ResourceDef[] = [
  nodes,
  pods,
  namespaces,
  coreEvents,
  leases,
  daemonSets,
  eventsV1,
];

export function findResource(group: string, version: string, resource: string): ResourceDef | undefined {
  return allResources.find(
    (def) => def.group === group && def.version === version && def.resource === resource,
  );
}
