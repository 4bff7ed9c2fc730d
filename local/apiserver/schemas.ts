// Structural decoding of request bodies. A real server decodes JSON into Go structs, so a field of the
// wrong JSON type (a string where spec.taints wants a list) is a 400 before any validation runs. These
// zod schemas check the types of the fields this project reads and writes; other fields pass through
// untouched (Deviation: a real server drops unknown fields, the simulator keeps them).
import { z } from 'zod';
import type { Json } from './json.js';
import { badRequest } from './status.js';
import { surelyValid } from './structuralCheck.js';

// Go decodes JSON null into a zero value, so every field accepts null.
const str = z.string().nullish();
const int = z.int().nullish();
const bool = z.boolean().nullish();
const strMap = z.record(z.string(), z.string().nullable()).nullish();
const strList = z.array(z.string()).nullish();
const anyObject = z.looseObject({}).nullish();

const objectMeta = z
  .looseObject({
    name: str,
    generateName: str,
    namespace: str,
    uid: str,
    resourceVersion: str,
    generation: int,
    creationTimestamp: str,
    deletionTimestamp: str,
    deletionGracePeriodSeconds: int,
    labels: strMap,
    annotations: strMap,
    finalizers: strList,
    ownerReferences: z
      .array(
        z.looseObject({
          apiVersion: str,
          kind: str,
          name: str,
          uid: str,
          controller: bool,
          blockOwnerDeletion: bool,
        }),
      )
      .nullish(),
  })
  .nullish();

const condition = z.looseObject({
  type: str,
  status: str,
  reason: str,
  message: str,
  lastHeartbeatTime: str,
  lastTransitionTime: str,
  lastProbeTime: str,
});

const taint = z.looseObject({ key: str, value: str, effect: str, timeAdded: str });

const toleration = z.looseObject({
  key: str,
  operator: str,
  value: str,
  effect: str,
  tolerationSeconds: int,
});

const container = z.looseObject({
  name: str,
  image: str,
  env: z.array(z.looseObject({ name: str })).nullish(),
});

const podSpec = z.looseObject({
  nodeName: str,
  containers: z.array(container).nullish(),
  initContainers: z.array(container).nullish(),
  tolerations: z.array(toleration).nullish(),
  terminationGracePeriodSeconds: int,
  restartPolicy: str,
  schedulerName: str,
  priority: int,
  nodeSelector: strMap,
});

const podStatus = z.looseObject({
  phase: str,
  reason: str,
  message: str,
  conditions: z.array(condition).nullish(),
  startTime: str,
});

const typeMeta = { apiVersion: str, kind: str, metadata: objectMeta };

export const nodeSchema = z.looseObject({
  ...typeMeta,
  spec: z
    .looseObject({
      taints: z.array(taint).nullish(),
      unschedulable: bool,
      podCIDR: str,
      podCIDRs: strList,
      providerID: str,
    })
    .nullish(),
  status: z
    .looseObject({
      conditions: z.array(condition).nullish(),
      addresses: z.array(z.looseObject({ type: str, address: str })).nullish(),
      capacity: anyObject,
      allocatable: anyObject,
    })
    .nullish(),
});

export const podSchema = z.looseObject({ ...typeMeta, spec: podSpec.nullish(), status: podStatus.nullish() });

export const namespaceSchema = z.looseObject({
  ...typeMeta,
  spec: z.looseObject({ finalizers: strList }).nullish(),
  status: z.looseObject({ phase: str }).nullish(),
});

export const leaseSchema = z.looseObject({
  ...typeMeta,
  spec: z
    .looseObject({
      holderIdentity: str,
      leaseDurationSeconds: int,
      acquireTime: str,
      renewTime: str,
      leaseTransitions: int,
    })
    .nullish(),
});

export const daemonSetSchema = z.looseObject({
  ...typeMeta,
  spec: z
    .looseObject({
      selector: z.looseObject({ matchLabels: strMap }).nullish(),
      template: z.looseObject({ metadata: objectMeta, spec: podSpec.nullish() }).nullish(),
    })
    .nullish(),
  status: anyObject,
});

const objectReference = z.looseObject({ kind: str, namespace: str, name: str, uid: str, apiVersion: str });

export const coreEventSchema = z.looseObject({
  ...typeMeta,
  involvedObject: objectReference.nullish(),
  reason: str,
  message: str,
  type: str,
  count: int,
  firstTimestamp: str,
  lastTimestamp: str,
  eventTime: str,
  action: str,
  reportingComponent: str,
  reportingInstance: str,
});

export const eventsV1Schema = z.looseObject({
  ...typeMeta,
  regarding: objectReference.nullish(),
  reason: str,
  note: str,
  type: str,
  eventTime: str,
  action: str,
  reportingController: str,
  reportingInstance: str,
  deprecatedCount: int,
});

export const bindingSchema = z.looseObject({
  ...typeMeta,
  target: z.looseObject({ kind: str, name: str, apiVersion: str }).nullish(),
});

export type StructuralSchema = z.ZodType;

function jsonTypeName(value: Json | undefined): string {
  if (value === undefined) return 'value';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

function valueAt(body: Json, path: readonly PropertyKey[]): Json | undefined {
  let current: Json | undefined = body;
  for (const step of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = Array.isArray(current) ? current[Number(step)] : current[String(step)];
  }
  return current;
}

/**
 * Checks the body's field types. On a mismatch, throws what the real decoder answers: a 400 worded
 * like encoding/json's UnmarshalTypeError.
 */
export function decodeStructure(schema: StructuralSchema, body: Json, context: string): void {
  if (surelyValid(schema, body)) return;
  const result = schema.safeParse(body);
  if (result.success) return;
  const issue = result.error.issues[0];
  if (issue === undefined) return;
  const field = issue.path.filter((step) => typeof step === 'string').join('.');
  const expected =
    'expected' in issue && typeof issue.expected === 'string' ? issue.expected : 'the declared type';
  throw badRequest(
    `${context}: json: cannot unmarshal ${jsonTypeName(valueAt(body, issue.path))} into Go struct field ${field === '' ? '.' : field} of type ${expected}`,
  );
}
