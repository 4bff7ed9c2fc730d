// The shapes of the Kubernetes API objects the mapping reads (mapping.ts), as zod schemas, and the
// failed Mapped that names the object and the field when one does not fit. Leaves the domain interprets
// tolerantly are plain strings here; anything else the API server always sends (a name, a uid, a list
// where a list belongs) is checked.
import { z } from 'zod';

const optionalString = z.string().nullish();
// A Date (listed objects) or a string (watched objects); unreadable optional times read as absent.
const kubeTimeInput = z.union([z.date(), z.string()]).nullish();

export const V1TaintSchema = z.object({
  key: z.string(),
  value: optionalString,
  effect: z.string(),
  timeAdded: kubeTimeInput,
});

export const V1NodeSchema = z.object({
  metadata: z.object({
    name: z.string().min(1),
    uid: z.string().min(1),
    resourceVersion: optionalString,
    creationTimestamp: kubeTimeInput,
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
            status: z.string(),
            reason: optionalString,
            message: optionalString,
            lastHeartbeatTime: kubeTimeInput,
            lastTransitionTime: kubeTimeInput,
          }),
        )
        .nullish(),
    })
    .nullish(),
});

export const V1TolerationSchema = z.object({
  key: optionalString,
  operator: optionalString,
  value: optionalString,
  effect: optionalString,
  tolerationSeconds: z.number().nullish(),
});

export const V1PodSchema = z.object({
  metadata: z.object({
    name: z.string().min(1),
    namespace: z.string().min(1),
    uid: z.string().min(1),
    creationTimestamp: kubeTimeInput,
    deletionTimestamp: kubeTimeInput,
    deletionGracePeriodSeconds: z.number().nullish(),
    ownerReferences: z.array(z.object({ kind: z.string(), controller: z.boolean().nullish() })).nullish(),
  }),
  spec: z
    .object({
      nodeName: optionalString,
      tolerations: z.array(V1TolerationSchema).nullish(),
    })
    .nullish(),
  status: z
    .object({
      reason: optionalString,
      conditions: z
        .array(z.object({ type: z.string(), status: z.string(), reason: optionalString }))
        .nullish(),
    })
    .nullish(),
});

export type Mapped<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => {
      const path = issue.path.join('.') || '(root)';
      return issue.code === 'invalid_type' && issue.input === undefined
        ? `${path}: missing`
        : `${path}: ${issue.message}`;
    })
    .join('; ');
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

export function malformed(kind: string, obj: unknown, problem: string): { ok: false; message: string } {
  return { ok: false, message: `malformed ${kind} ${JSON.stringify(nameOf(obj))}: ${problem}` };
}
