// The field schemas of the `nlc simulate` scenario format (docs/simulate.md): each field's shape and values,
// with messages that say what was expected. References between fields (a pod's node, a glob) are
// resolved in scenario.ts, against the cluster as the timeline goes.
import { z } from 'zod';
import { durationSchema } from '../../shared/duration.js';
import type { EpochMillis, Millis } from '../../shared/domain/types.js';
import type { ScenarioIssue } from '../../shared/errors.js';
import {
  describeInput,
  isDNS1123Label,
  isDNS1123Subdomain,
  isLabelKey,
  isLabelValue,
  parseWireTime,
} from '../../shared/wireFormat.js';
import { InjectableDetailTypes, StallableResources, type ScenarioActionKind } from './scenarioTypes.js';

// ---------------------------------------------------------------------------------------------------
// Field schemas (structure and values; references between fields are checked afterwards)

const invalid = (what: string) => (iss: { readonly input?: unknown }) =>
  `expected ${what}, got ${describeInput(iss.input)}`;

const NodeName = z.string({ error: invalid('a node name') }).refine(isDNS1123Subdomain, {
  error: invalid('a node name (a DNS-1123 subdomain: lowercase letters, digits, "-" and ".")'),
});
const PodName = z.string({ error: invalid('a pod name') }).refine(isDNS1123Subdomain, {
  error: invalid('a pod name (a DNS-1123 subdomain)'),
});
const Namespace = z.string({ error: invalid('a namespace') }).refine(isDNS1123Label, {
  error: invalid('a namespace (a DNS-1123 label)'),
});
const LabelValue = z.string({ error: invalid('a label value') }).refine(isLabelValue, {
  error: invalid('a label value (63 characters at most: letters, digits, "-", "_", ".")'),
});
const LabelKey = z.string().refine(isLabelKey, { error: invalid('a label key') });
const Prefix = z.string({ error: invalid('a name prefix') }).regex(/^[a-z0-9]([-a-z0-9.]*)$/, {
  error: invalid('a name prefix (lowercase letters, digits, "-", ".")'),
});

// YAML reads an unquoted True/False as a boolean: take it as the status it spells.
const Status = z.preprocess(
  (v) => (v === true ? 'True' : v === false ? 'False' : v),
  z.enum(['True', 'False', 'Unknown'], { error: invalid('"True", "False" or "Unknown"') }),
);
const KubeletReady = z.preprocess(
  (v) => (v === true ? 'True' : v === false ? 'False' : v),
  z.enum(['True', 'False'], { error: invalid('"True" or "False"') }),
);

/**
 * A plain entry or its `generate` form, told apart by the `generate` key, so errors come from the form
 * the author meant (a union would report both).
 */
function oneOf<P extends z.ZodType, G extends z.ZodType>(plain: P, generate: G, expected: string) {
  return z.unknown().transform((value, ctx): z.output<P> | z.output<G> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: invalid(expected)({ input: value }) });
      return z.NEVER;
    }
    const result = ('generate' in value ? generate : plain).safeParse(value);
    if (result.success) return result.data;
    for (const issue of result.error.issues) {
      ctx.addIssue({ code: 'custom', message: messageOf(issue), path: issue.path });
    }
    return z.NEVER;
  });
}

const TaintSchema = z.strictObject({
  key: z.string().min(1, { error: 'expected a taint key' }),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute'], {
    error: invalid('NoSchedule, PreferNoSchedule or NoExecute'),
  }),
});

const TolerationSchema = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(['Exists', 'Equal', 'Lt', 'Gt', ''], { error: invalid('Exists or Equal') }).optional(),
  value: z.string().optional(),
  effect: z
    .enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute', ''], {
      error: invalid('NoSchedule, PreferNoSchedule or NoExecute'),
    })
    .optional(),
  tolerationSeconds: z.int({ error: invalid('a whole number of seconds') }).optional(),
});

/** The fields of a node besides its name (shared by nodes[], nodes[].generate and addNode). */
const nodeFields = {
  zone: LabelValue.optional(),
  region: LabelValue.optional(),
  labels: z.record(LabelKey, LabelValue).optional(),
  taints: z.array(TaintSchema).optional(),
  unschedulable: z.boolean({ error: invalid('true or false') }).optional(),
  conditions: z.record(z.string().min(1, { error: 'expected a condition type' }), Status).optional(),
  ready: KubeletReady.optional(),
  kubelet: z
    .enum(['running', 'stopped', 'unregistered'], { error: invalid('running, stopped or unregistered') })
    .optional(),
  createdAgo: durationSchema('nonNegative').optional(),
};

const NodeSchema = z.strictObject({ name: NodeName, ...nodeFields });
const NodeGenerateSchema = z.strictObject({
  generate: z.strictObject({
    prefix: Prefix,
    count: z.int({ error: invalid('a whole number of nodes') }).min(1, { error: 'expected at least 1 node' }),
    ...nodeFields,
  }),
});
export const NodeEntrySchema = oneOf(
  NodeSchema,
  NodeGenerateSchema,
  'a node ({name, zone, ...}) or {generate: {prefix, count, ...}}',
);

const NodeSelector = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
  error: invalid('a node name, a glob like "b-*", or a list of them'),
});

const podFields = {
  namespace: Namespace.optional(),
  tolerations: z.array(TolerationSchema).optional(),
  defaultTolerations: z.boolean({ error: invalid('true or false') }).optional(),
  daemonSet: z.boolean({ error: invalid('true or false') }).optional(),
};

const PodSchema = z.strictObject({ name: PodName, node: NodeName, ...podFields });
const PodGenerateSchema = z.strictObject({
  generate: z.strictObject({
    prefix: Prefix,
    perNode: z.int({ error: invalid('a whole number of pods') }).min(1, { error: 'expected at least 1 pod' }),
    nodes: NodeSelector,
    ...podFields,
  }),
});
export const PodEntrySchema = oneOf(
  PodSchema,
  PodGenerateSchema,
  'a pod ({name, node, ...}) or {generate: {prefix, perNode, nodes, ...}}',
);

const PodSelector = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
  error: invalid('a pod ("namespace/name" or "name"), a glob, or a list of them'),
});

/** A duration that must be given: a missing one says so, instead of "got nothing". */
function requiredDuration(min: 'positive' | 'nonNegative', example: string) {
  return z.unknown().transform((input, ctx): Millis => {
    if (input === undefined) {
      ctx.addIssue({ code: 'custom', message: `missing: how long, e.g. ${JSON.stringify(example)}` });
      return z.NEVER;
    }
    const result = durationSchema(min).safeParse(input);
    if (result.success) return result.data;
    for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', message: issue.message });
    return z.NEVER;
  });
}

/** The largest relayClockSkew (and restartRelay clockSkew, relayClockStep) either way. */
export const MaxRelayClockSkew: Millis = 3_600_000;

/** A signed duration ("-2m", "+90s", or seconds) of at most an hour either way; `what` names it. */
function signedHourAtMost(what: 'skew' | 'step') {
  return z.unknown().transform((input, ctx): Millis => {
    const result = durationSchema('any').safeParse(input);
    if (!result.success) {
      ctx.addIssue({
        code: 'custom',
        message:
          input === undefined
            ? `missing: a signed duration, e.g. "-2m" or "+90s"`
            : `expected a signed duration like "-2m", "+90s" or a number of seconds, got ${describeInput(input)}`,
      });
      return z.NEVER;
    }
    if (Math.abs(result.data) > MaxRelayClockSkew) {
      ctx.addIssue({
        code: 'custom',
        message: `expected a ${what} of at most 1h either way, got ${describeInput(input)}`,
      });
      return z.NEVER;
    }
    return result.data;
  });
}

/** A signed duration ("-2m", "+90s", or seconds) of at most an hour either way. */
export const RelayClockSkewSchema = signedHourAtMost('skew');

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * injectEvent: the detail type, and the fields to merge over the detail the relay would send, which are
 * not validated (the functions must face whatever a forger sends) beyond naming what the event is about:
 * `detail.node.name` for a Node Changed, `detail.pod.name` (and `detail.pod.namespace`, `default` when
 * absent) for a Pod Changed.
 */
const InjectEventSchema = z
  .strictObject(
    {
      detailType: z.enum(InjectableDetailTypes, {
        error: (iss) =>
          iss.input === undefined
            ? 'missing: "Node Changed", "Pod Changed" or "Heartbeat Digest"'
            : invalid('"Node Changed", "Pod Changed" or "Heartbeat Digest"')(iss),
      }),
      detail: z
        .custom<Record<string, unknown>>(isPlainObject, {
          error: invalid("an object: the fields to set in the event's detail"),
        })
        .optional(),
    },
    { error: invalid('{detailType, detail}') },
  )
  .transform((value, ctx) => {
    const detail = value.detail ?? {};
    /** `detail.<key>.name` (and `.namespace` for a pod), each checked, or undefined with an issue. */
    const subject = (key: 'node' | 'pod'): Record<string, unknown> | undefined => {
      const inner = detail[key];
      const example = key === 'node' ? '{node: {name: a-1}}' : '{pod: {name: web-1}}';
      if (inner === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['detail', key, 'name'],
          message: `missing: the ${key} the event is about, e.g. detail: ${example}`,
        });
        return undefined;
      }
      if (!isPlainObject(inner)) {
        ctx.addIssue({
          code: 'custom',
          path: ['detail', key],
          message: `expected an object with the ${key}'s name, e.g. ${example}, got ${describeInput(inner)}`,
        });
        return undefined;
      }
      return inner;
    };
    const read = <S extends z.ZodType>(schema: S, input: unknown, path: readonly PropertyKey[]) => {
      const result = schema.safeParse(input);
      if (result.success) return result.data;
      for (const issue of result.error.issues) {
        ctx.addIssue({ code: 'custom', path: [...path, ...issue.path], message: messageOf(issue) });
      }
      return undefined;
    };
    switch (value.detailType) {
      case 'Node Changed': {
        const node = subject('node');
        if (node === undefined) return z.NEVER;
        const name =
          node.name === undefined ? undefined : read(NodeName, node.name, ['detail', 'node', 'name']);
        if (node.name === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['detail', 'node', 'name'],
            message: 'missing: the node the event is about, e.g. "a-1"',
          });
        }
        return name === undefined ? z.NEVER : { detailType: value.detailType, detail, node: name };
      }
      case 'Pod Changed': {
        const pod = subject('pod');
        if (pod === undefined) return z.NEVER;
        if (pod.name === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['detail', 'pod', 'name'],
            message: 'missing: the pod the event is about, e.g. "web-1"',
          });
        }
        const name = pod.name === undefined ? undefined : read(PodName, pod.name, ['detail', 'pod', 'name']);
        const namespace =
          pod.namespace === undefined
            ? 'default'
            : read(Namespace, pod.namespace, ['detail', 'pod', 'namespace']);
        return name === undefined || namespace === undefined
          ? z.NEVER
          : { detailType: value.detailType, detail, pod: { namespace, name } };
      }
      case 'Heartbeat Digest':
        return { detailType: value.detailType, detail };
    }
  });

export const ActionSchemas = {
  stopKubelet: NodeSelector,
  startKubelet: NodeSelector,
  cordon: NodeSelector,
  uncordon: NodeSelector,
  deleteNode: NodeSelector,
  setCondition: z.strictObject({
    node: NodeSelector,
    type: z.string().min(1, { error: 'expected a condition type' }),
    status: Status,
    reason: z.string().optional(),
    message: z.string().optional(),
  }),
  addNode: NodeEntrySchema,
  addPod: PodEntrySchema,
  deletePod: PodSelector,
  stopRelay: z.literal(true, { error: invalid('true') }),
  startRelay: z.literal(true, { error: invalid('true') }),
  // `true` is `{}`, as stopRelay and startRelay are written.
  restartRelay: z.preprocess(
    (v) => (v === true ? {} : v),
    z.strictObject(
      { clockSkew: RelayClockSkewSchema.optional() },
      { error: invalid('{} or {clockSkew: <signed duration>}') },
    ),
  ),
  relayClockStep: signedHourAtMost('step'),
  stallWatch: z.strictObject(
    {
      resource: z.enum(StallableResources, { error: invalid('leases, nodes or pods') }),
      for: requiredDuration('positive', '3m'),
    },
    { error: invalid('{resource: leases | nodes | pods, for: <duration>}') },
  ),
  injectEvent: InjectEventSchema,
  restoreApiServer: requiredDuration('nonNegative', '2m'),
} as const satisfies Record<ScenarioActionKind, z.ZodType>;

export const StartSchema = z
  .string({ error: invalid('an ISO 8601 time like "2026-01-01T00:00:00Z"') })
  .transform((text, ctx): EpochMillis => {
    const ms = parseWireTime(text);
    if (ms !== undefined) return ms;
    ctx.addIssue({
      code: 'custom',
      message: invalid('an ISO 8601 time like "2026-01-01T00:00:00Z"')({ input: text }),
    });
    return z.NEVER;
  });

/** The top-level fields; nodes, pods and timeline entries are read one by one (see scenarioFromObject). */
export const TopLevelFields = {
  name: z.string({ error: invalid('free text') }).optional(),
  start: StartSchema.optional(),
  duration: durationSchema('positive'),
  nodes: z
    .array(z.unknown(), { error: invalid('a list of nodes') })
    .min(1, { error: 'expected at least one node' }),
  pods: z.array(z.unknown(), { error: invalid('a list of pods') }).optional(),
  timeline: z.array(z.unknown(), { error: invalid('a list of {at, <action>} entries') }).optional(),
  relayClockSkew: RelayClockSkewSchema.optional(),
} as const;
export const TopLevelKeys: readonly string[] = [
  ...Object.keys(TopLevelFields),
  'config',
  'managedController',
];

/** The fields of a scenario of several clusters besides `clusters` (docs/simulate.md, "Several clusters"). */
export const MultiClusterTopLevelKeys: readonly string[] = [
  'name',
  'start',
  'duration',
  'config',
  'clusters',
];
/** The fields of one cluster of `clusters`. */
export const ClusterKeys: readonly string[] = [
  'name',
  'config',
  'nodes',
  'pods',
  'timeline',
  'relayClockSkew',
];

export const ClustersSchema = z
  .array(z.unknown(), { error: invalid('a list of clusters ({name, nodes, ...})') })
  .min(1, { error: 'expected at least one cluster' });

/** A cluster's name, as the `cluster` setting and NLC_CLUSTERS have it: it prefixes every state key. */
export const ClusterNameSchema = z.string({ error: invalid('a cluster name') }).refine(isDNS1123Label, {
  error: invalid('a cluster name (a DNS-1123 label: 1 to 63 lowercase letters, digits or "-")'),
});

export type NodeEntry = z.output<typeof NodeEntrySchema>;
export type PodEntry = z.output<typeof PodEntrySchema>;
export type NodeFields = Omit<z.output<typeof NodeSchema>, 'name'>;
export type PodFields = Omit<z.output<typeof PodSchema>, 'name' | 'node'>;

// ---------------------------------------------------------------------------------------------------
// Paths and globs

/** `timeline[3].stopKubelet`, `nodes[0].labels["topology.kubernetes.io/zone"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(String(segment)))
      text += text === '' ? String(segment) : `.${String(segment)}`;
    else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text === '' ? '(scenario)' : text;
}

export function zodIssues(error: z.ZodError, prefix: readonly PropertyKey[]): ScenarioIssue[] {
  return error.issues.map((issue) => ({
    path: formatPath([...prefix, ...issue.path]),
    message: messageOf(issue),
  }));
}

function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
  return issue.message.replace(/^Invalid input: /, '');
}

/** A name pattern: `*` any run of characters, `?` one character, everything else literal. */
export function isGlob(pattern: string): boolean {
  return /[*?]/.test(pattern);
}

export function globToRegExp(pattern: string): RegExp {
  // Escape every regex metacharacter but the two wildcards, then give those their regex meaning.
  const body = pattern
    .replace(/[.+^${}()|[\]\\/-]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}
