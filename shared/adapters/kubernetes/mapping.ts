// Conversions between the Kubernetes API objects (@kubernetes/client-node models) and the domain's
// trimmed Node and Pod (shared/domain/types.ts), in both directions.
//
// Reading: what the API server sends back is validated with zod here (STYLE "Validation happens at the
// edges"), so a malformed object becomes a Failed result naming the object instead of a TypeError deep in
// the domain. Writing: times go out as metav1.Time does on the wire, RFC 3339 in whole seconds (Go's
// `t.UTC().Format(time.RFC3339)` truncates), so what this adapter writes is what client-go would have.
import { z } from 'zod';
import type { ConditionStatus, EpochMillis, Node, NodeCondition, Pod, Taint } from '../../domain/types.js';

/** metav1.Time on the wire: RFC 3339, UTC, whole seconds (truncated, as Go formats it). */
export function formatKubeTime(ms: EpochMillis): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

// The client's deserializer turns date-time fields into Date; a raw JSON string is accepted too.
const kubeTime = z
  .union([z.date(), z.iso.datetime({ offset: true })])
  .transform((t) => new Date(t).getTime());
const optionalTime = kubeTime.nullish().transform((t) => t ?? undefined);
const conditionStatus = z.enum(['True', 'False', 'Unknown']);
const taintEffect = z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
const tolerationEffect = z.union([taintEffect, z.literal('')]);
const tolerationOperator = z.union([z.enum(['Exists', 'Equal', 'Lt', 'Gt']), z.literal('')]);
const optionalString = z
  .string()
  .nullish()
  .transform((s) => s ?? undefined);

const V1TaintSchema = z.object({
  key: z.string(),
  value: optionalString,
  effect: taintEffect,
  timeAdded: optionalTime,
});

const V1NodeSchema = z.object({
  metadata: z.object({
    name: z.string().min(1),
    uid: z.string().nullish(),
    resourceVersion: optionalString,
    creationTimestamp: kubeTime,
    labels: z.record(z.string(), z.string()).nullish(),
  }),
  spec: z
    .object({
      taints: z.array(V1TaintSchema).nullish(),
      unschedulable: z.boolean().nullish(),
    })
    .nullish(),
  status: z
    .object({
      conditions: z
        .array(
          z.object({
            type: z.string(),
            status: conditionStatus,
            reason: optionalString,
            message: optionalString,
            lastHeartbeatTime: optionalTime,
            lastTransitionTime: optionalTime,
          }),
        )
        .nullish(),
    })
    .nullish(),
});

const V1PodSchema = z.object({
  metadata: z.object({
    name: z.string().min(1),
    namespace: z.string().min(1),
    uid: z.string().nullish(),
    deletionTimestamp: optionalTime,
    deletionGracePeriodSeconds: z.number().nullish(),
    ownerReferences: z.array(z.object({ kind: z.string(), controller: z.boolean().nullish() })).nullish(),
  }),
  spec: z
    .object({
      nodeName: z.string().nullish(),
      tolerations: z
        .array(
          z.object({
            key: optionalString,
            operator: tolerationOperator.nullish(),
            value: optionalString,
            effect: tolerationEffect.nullish(),
            tolerationSeconds: z.number().nullish(),
          }),
        )
        .nullish(),
    })
    .nullish(),
  status: z
    .object({
      reason: optionalString,
      conditions: z.array(z.object({ type: z.string(), status: z.string() })).nullish(),
    })
    .nullish(),
});

/** Drops the keys whose value is undefined, so the domain objects compare with toEqual cleanly. */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
}

export type Mapped<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

/** A domain Taint from the API's, keeping timeAdded when present. */
export function taintFromV1(taint: z.output<typeof V1TaintSchema>): Taint {
  return compact({ key: taint.key, value: taint.value, effect: taint.effect, timeAdded: taint.timeAdded });
}

/** core/v1 Taint as JSON on the wire. */
export interface TaintJson {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

/** The API's Taint from a domain one (the value omitted when empty, as Go's omitempty does). */
export function taintToJson(taint: Taint): TaintJson {
  const out: TaintJson = { key: taint.key, effect: taint.effect };
  if (taint.value !== undefined && taint.value !== '') out.value = taint.value;
  if (taint.timeAdded !== undefined) out.timeAdded = formatKubeTime(taint.timeAdded);
  return out;
}

/** metadata.name (and namespace) of an object that failed validation, for the message. */
function nameOf(obj: unknown): string {
  const meta: unknown =
    typeof obj === 'object' && obj !== null ? (obj as { metadata?: unknown }).metadata : undefined;
  if (typeof meta !== 'object' || meta === null) return '';
  const { name, namespace } = meta as { name?: unknown; namespace?: unknown };
  const n = typeof name === 'string' ? name : '';
  return typeof namespace === 'string' && namespace !== '' ? `${namespace}/${n}` : n;
}

/**
 * The domain Node read from an API Node (the client's V1Node, or its wire JSON), or why it cannot be read.
 */
export function nodeFromV1(node: unknown): Mapped<Node> {
  const parsed = V1NodeSchema.safeParse(node);
  if (!parsed.success) {
    return {
      ok: false,
      message: `malformed node ${JSON.stringify(nameOf(node))}: ${describeIssues(parsed.error)}`,
    };
  }
  const { metadata, spec, status } = parsed.data;
  const conditions: NodeCondition[] = (status?.conditions ?? []).map((c) =>
    compact({
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      lastHeartbeatTime: c.lastHeartbeatTime,
      lastTransitionTime: c.lastTransitionTime,
    }),
  );
  return {
    ok: true,
    value: compact({
      name: metadata.name,
      uid: metadata.uid ?? '',
      resourceVersion: metadata.resourceVersion,
      creationTimestamp: metadata.creationTimestamp,
      labels: metadata.labels ?? {},
      taints: (spec?.taints ?? []).map(taintFromV1),
      unschedulable: spec?.unschedulable ?? false,
      conditions,
    }),
  };
}

/** The domain Pod read from an API Pod (the client's V1Pod, or its wire JSON), or why it cannot be read. */
export function podFromV1(pod: unknown): Mapped<Pod> {
  const parsed = V1PodSchema.safeParse(pod);
  if (!parsed.success) {
    return {
      ok: false,
      message: `malformed pod ${JSON.stringify(nameOf(pod))}: ${describeIssues(parsed.error)}`,
    };
  }
  const { metadata, spec, status } = parsed.data;
  const ready = status?.conditions?.find((c) => c.type === 'Ready')?.status;
  return {
    ok: true,
    value: compact({
      namespace: metadata.namespace,
      name: metadata.name,
      uid: metadata.uid ?? '',
      nodeName: spec?.nodeName ?? '',
      tolerations: (spec?.tolerations ?? []).map((t) =>
        compact({
          key: t.key,
          operator: t.operator ?? undefined,
          value: t.value,
          effect: t.effect ?? undefined,
          tolerationSeconds: t.tolerationSeconds ?? undefined,
        }),
      ),
      ownerKind: metadata.ownerReferences?.find((r) => r.controller === true)?.kind,
      deletionTimestamp: metadata.deletionTimestamp,
      deletionGracePeriodSeconds: metadata.deletionGracePeriodSeconds ?? undefined,
      // A condition status outside True/False/Unknown is kept out rather than trusted.
      ready: isConditionStatus(ready) ? ready : undefined,
      statusReason: status?.reason,
    }),
  };
}

function isConditionStatus(value: string | undefined): value is ConditionStatus {
  return value === 'True' || value === 'False' || value === 'Unknown';
}

/** A domain NodeCondition as the API's JSON (for the status merge patch). */
export function nodeConditionToJson(condition: NodeCondition): Record<string, string> {
  const out: Record<string, string> = { type: condition.type, status: condition.status };
  if (condition.reason !== undefined) out.reason = condition.reason;
  if (condition.message !== undefined) out.message = condition.message;
  if (condition.lastHeartbeatTime !== undefined)
    out.lastHeartbeatTime = formatKubeTime(condition.lastHeartbeatTime);
  if (condition.lastTransitionTime !== undefined)
    out.lastTransitionTime = formatKubeTime(condition.lastTransitionTime);
  return out;
}
