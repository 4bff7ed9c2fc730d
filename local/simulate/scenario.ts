// The `nlc simulate` scenario format (SCENARIOS.md, a public interface): YAML or JSON in, a Scenario out
// with every `generate` expanded, every glob resolved against the nodes that exist at that point of the
// timeline, and every duration in milliseconds. Validation happens here, once (STYLE "Validation happens
// at the edges"): the simulator trusts what it gets. Every problem is reported at once, each naming its
// field as written (`timeline[3].stopKubelet: no node matches "c-*"`), as one ScenarioError (exit 2).
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import {
  durationSchema,
  formatDuration,
  parseConfigObject,
  type ControllerConfig,
} from '../../shared/config.js';
import type { ConditionStatus, EpochMillis, Millis, Taint, Toleration } from '../../shared/domain/types.js';
import { ConfigError, ScenarioError, type ScenarioIssue } from '../../shared/errors.js';
import { describeInput } from '../../shared/wireFormat.js';
import type { SimulatedNode } from '../kubelet/kubeletFleet.js';
import type { SimulatedPod } from '../kubelet/pods.js';
import {
  ActionSchemas,
  formatPath,
  globToRegExp,
  isGlob,
  NodeEntrySchema,
  PodEntrySchema,
  StallableResources,
  TopLevelFields,
  TopLevelKeys,
  zodIssues,
  type NodeEntry,
  type NodeFields,
  type PodEntry,
  type PodFields,
} from './scenarioSchema.js';

export { formatPath, globToRegExp, isGlob } from './scenarioSchema.js';

/** A node action's targets, resolved: node names in the order the nodes were declared or added. */
export type NodeTargetAction = {
  readonly kind: 'stopKubelet' | 'startKubelet' | 'cordon' | 'uncordon' | 'deleteNode';
  readonly nodes: readonly string[];
};

export type ScenarioAction =
  | NodeTargetAction
  | {
      readonly kind: 'setCondition';
      readonly nodes: readonly string[];
      readonly type: string;
      readonly status: ConditionStatus;
      readonly reason?: string;
      readonly message?: string;
    }
  | { readonly kind: 'addNode'; readonly nodes: readonly SimulatedNode[] }
  | { readonly kind: 'addPod'; readonly pods: readonly SimulatedPod[] }
  | {
      readonly kind: 'deletePod';
      readonly pods: readonly { readonly namespace: string; readonly name: string }[];
    }
  | { readonly kind: 'stopRelay' }
  | { readonly kind: 'startRelay' }
  | {
      readonly kind: 'stallWatch';
      readonly resource: StallableResource;
      /** How long the relay's watch of `resource` delivers nothing. */
      readonly duration: Millis;
    };

/** A watch of the relay that `stallWatch` can stall. */
export type StallableResource = (typeof StallableResources)[number];

export type ScenarioActionKind = ScenarioAction['kind'];

/** One timeline entry: when (offset from start) and what; `index` is its position in the file. */
export interface TimelineEntry {
  readonly at: Millis;
  readonly index: number;
  readonly action: ScenarioAction;
}

/** A validated scenario. */
export interface Scenario {
  readonly name: string;
  readonly config: ControllerConfig;
  /** Virtual start time (t = 0). */
  readonly start: EpochMillis;
  readonly duration: Millis;
  /** The cluster at t = 0, `generate` expanded, in the order given. */
  readonly nodes: readonly SimulatedNode[];
  readonly pods: readonly SimulatedPod[];
  /** Sorted by `at`; entries at the same offset keep the file's order. */
  readonly timeline: readonly TimelineEntry[];
  /** How far the relay's clock is ahead of the functions' (negative: behind); 0 by default. */
  readonly relayClockSkew: Millis;
}

/** Where a scenario starts when it names no `start`: a fixed instant, so runs are reproducible. */
export const DefaultScenarioStart: EpochMillis = Date.parse('2026-01-01T00:00:00Z');

/** Every timeline action, in SCENARIOS.md's order (also the order of "did you mean" suggestions). */
export const ScenarioActionKinds: readonly ScenarioActionKind[] = [
  'stopKubelet',
  'startKubelet',
  'setCondition',
  'cordon',
  'uncordon',
  'deleteNode',
  'addNode',
  'addPod',
  'deletePod',
  'stopRelay',
  'startRelay',
  'stallWatch',
];

// ---------------------------------------------------------------------------------------------------
// Resolution: expand, resolve references against the cluster as it is at each point of the timeline

interface Issues {
  add(path: readonly PropertyKey[], message: string): void;
  readonly list: ScenarioIssue[];
}

function newIssues(): Issues {
  const list: ScenarioIssue[] = [];
  return { list, add: (path, message) => list.push({ path: formatPath(path), message }) };
}

function nodeFromFields(name: string, fields: NodeFields): SimulatedNode {
  return {
    name,
    ...(fields.zone !== undefined && { zone: fields.zone }),
    ...(fields.region !== undefined && { region: fields.region }),
    ...(fields.labels !== undefined && { labels: fields.labels }),
    ...(fields.taints !== undefined && {
      taints: fields.taints.map((t): Taint => ({
        key: t.key,
        effect: t.effect,
        ...(t.value !== undefined && { value: t.value }),
      })),
    }),
    ...(fields.unschedulable !== undefined && { unschedulable: fields.unschedulable }),
    ...(fields.conditions !== undefined && { conditions: fields.conditions }),
    ...(fields.ready !== undefined && { ready: fields.ready }),
    ...(fields.kubelet !== undefined && { kubelet: fields.kubelet }),
    ...(fields.createdAgo !== undefined && { createdAgo: fields.createdAgo }),
  };
}

function expandNodes(entry: NodeEntry): SimulatedNode[] {
  if ('name' in entry) {
    const { name, ...fields } = entry;
    return [nodeFromFields(name, fields)];
  }
  const { prefix, count, ...fields } = entry.generate;
  return Array.from({ length: count }, (_, i) => nodeFromFields(`${prefix}${i + 1}`, fields));
}

function podFromFields(name: string, node: string, fields: PodFields): SimulatedPod {
  return {
    name,
    node,
    ...(fields.namespace !== undefined && { namespace: fields.namespace }),
    ...(fields.tolerations !== undefined && {
      tolerations: fields.tolerations.map((t): Toleration => ({ ...t })),
    }),
    ...(fields.defaultTolerations !== undefined && { defaultTolerations: fields.defaultTolerations }),
    ...(fields.daemonSet !== undefined && { daemonSet: fields.daemonSet }),
  };
}

/** The cluster as the timeline goes: which nodes and pods exist, in creation order. */
class ClusterModel {
  readonly nodes: string[] = [];
  readonly pods: string[] = [];

  hasNode(name: string): boolean {
    return this.nodes.includes(name);
  }

  /** Resolves a selector; reports a pattern or name that matches nothing, at `path`. */
  selectNodes(selector: string | readonly string[], issues: Issues, path: readonly PropertyKey[]): string[] {
    const patterns = typeof selector === 'string' ? [selector] : selector;
    const chosen = new Set<string>();
    patterns.forEach((pattern, i) => {
      const where = typeof selector === 'string' ? path : [...path, i];
      const matches = isGlob(pattern)
        ? this.nodes.filter((n) => globToRegExp(pattern).test(n))
        : this.nodes.filter((n) => n === pattern);
      if (matches.length === 0) {
        issues.add(
          where,
          isGlob(pattern)
            ? `no node matches ${JSON.stringify(pattern)}`
            : `no node ${JSON.stringify(pattern)}`,
        );
      }
      for (const m of matches) chosen.add(m);
    });
    return this.nodes.filter((n) => chosen.has(n));
  }

  selectPods(selector: string | readonly string[], issues: Issues, path: readonly PropertyKey[]): string[] {
    const patterns = typeof selector === 'string' ? [selector] : selector;
    const chosen = new Set<string>();
    patterns.forEach((raw, i) => {
      const where = typeof selector === 'string' ? path : [...path, i];
      const pattern = raw.includes('/') ? raw : `default/${raw}`;
      const matches = isGlob(pattern)
        ? this.pods.filter((p) => globToRegExp(pattern).test(p))
        : this.pods.filter((p) => p === pattern);
      if (matches.length === 0) {
        issues.add(
          where,
          isGlob(raw) ? `no pod matches ${JSON.stringify(raw)}` : `no pod ${JSON.stringify(pattern)}`,
        );
      }
      for (const m of matches) chosen.add(m);
    });
    return this.pods.filter((p) => chosen.has(p));
  }

  addNodes(nodes: readonly SimulatedNode[], issues: Issues, path: readonly PropertyKey[]): SimulatedNode[] {
    const added: SimulatedNode[] = [];
    for (const node of nodes) {
      if (this.hasNode(node.name)) {
        issues.add(path, `node ${JSON.stringify(node.name)} exists already`);
        continue;
      }
      this.nodes.push(node.name);
      added.push(node);
    }
    return added;
  }

  addPods(pods: readonly SimulatedPod[], issues: Issues, path: readonly PropertyKey[]): SimulatedPod[] {
    const added: SimulatedPod[] = [];
    for (const pod of pods) {
      const key = `${pod.namespace ?? 'default'}/${pod.name}`;
      if (this.pods.includes(key)) {
        issues.add(path, `pod ${JSON.stringify(key)} exists already`);
        continue;
      }
      this.pods.push(key);
      added.push(pod);
    }
    return added;
  }

  expandPods(entry: PodEntry, issues: Issues, path: readonly PropertyKey[]): SimulatedPod[] {
    if ('name' in entry) {
      const { name, node, ...fields } = entry;
      if (!this.hasNode(node)) {
        issues.add([...path, 'node'], `no node ${JSON.stringify(node)}`);
        return [];
      }
      return [podFromFields(name, node, fields)];
    }
    const { prefix, perNode, nodes, ...fields } = entry.generate;
    const targets = this.selectNodes(nodes, issues, [...path, 'generate', 'nodes']);
    return targets.flatMap((node) =>
      Array.from({ length: perNode }, (_, i) => podFromFields(`${prefix}${node}-${i + 1}`, node, fields)),
    );
  }

  removeNodes(names: readonly string[]): void {
    for (const name of names) this.nodes.splice(this.nodes.indexOf(name), 1);
  }

  removePods(keys: readonly string[]): void {
    for (const key of keys) this.pods.splice(this.pods.indexOf(key), 1);
  }
}

function resolveAction(
  kind: ScenarioActionKind,
  value: unknown,
  model: ClusterModel,
  issues: Issues,
  path: readonly PropertyKey[],
): ScenarioAction | undefined {
  const read = <S extends z.ZodType>(schema: S): z.output<S> | undefined => {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    issues.list.push(...zodIssues(result.error, path));
    return undefined;
  };
  switch (kind) {
    case 'stopKubelet':
    case 'startKubelet':
    case 'cordon':
    case 'uncordon':
    case 'deleteNode': {
      const selector = read(ActionSchemas[kind]);
      if (selector === undefined) return undefined;
      const nodes = model.selectNodes(selector, issues, path);
      if (kind === 'deleteNode') model.removeNodes(nodes);
      return { kind, nodes };
    }
    case 'setCondition': {
      const parsed = read(ActionSchemas.setCondition);
      if (parsed === undefined) return undefined;
      const { node, ...condition } = parsed;
      return { kind, nodes: model.selectNodes(node, issues, [...path, 'node']), ...condition };
    }
    case 'addNode': {
      const entry = read(ActionSchemas.addNode);
      return entry === undefined
        ? undefined
        : { kind, nodes: model.addNodes(expandNodes(entry), issues, path) };
    }
    case 'addPod': {
      const entry = read(ActionSchemas.addPod);
      if (entry === undefined) return undefined;
      return { kind, pods: model.addPods(model.expandPods(entry, issues, path), issues, path) };
    }
    case 'deletePod': {
      const selector = read(ActionSchemas.deletePod);
      if (selector === undefined) return undefined;
      const keys = model.selectPods(selector, issues, path);
      model.removePods(keys);
      return {
        kind,
        pods: keys.map((key) => {
          const slash = key.indexOf('/');
          return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
        }),
      };
    }
    case 'stopRelay':
    case 'startRelay':
      return read(ActionSchemas[kind]) === undefined ? undefined : { kind };
    case 'stallWatch': {
      const stall = read(ActionSchemas.stallWatch);
      return stall === undefined ? undefined : { kind, resource: stall.resource, duration: stall.for };
    }
  }
}

function suggestAction(key: string): string {
  const lower = key.toLowerCase();
  const close = ScenarioActionKinds.find(
    (k) => k.toLowerCase() === lower || k.toLowerCase().startsWith(lower.slice(0, 4)),
  );
  return close === undefined
    ? `unknown action ${JSON.stringify(key)} (actions: ${ScenarioActionKinds.join(', ')})`
    : `unknown action ${JSON.stringify(key)}; did you mean ${close}?`;
}

interface RawEntry {
  readonly index: number;
  readonly at: Millis;
  readonly kind: ScenarioActionKind;
  readonly value: unknown;
}

function readTimelineEntry(raw: unknown, index: number, issues: Issues): RawEntry | undefined {
  const path = ['timeline', index];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    issues.add(path, `expected {at, <action>}, got ${describeInput(raw)}`);
    return undefined;
  }
  const entry = raw as Record<string, unknown>;
  const keys = Object.keys(entry).filter((k) => k !== 'at');
  const at = durationSchema('nonNegative').safeParse(entry.at);
  if (!('at' in entry)) issues.add([...path, 'at'], 'missing: when the action happens, e.g. "30s"');
  else if (!at.success) for (const issue of zodIssues(at.error, [...path, 'at'])) issues.list.push(issue);
  const kinds = keys.filter((k): k is ScenarioActionKind =>
    (ScenarioActionKinds as readonly string[]).includes(k),
  );
  for (const key of keys)
    if (!kinds.includes(key as ScenarioActionKind)) issues.add([...path, key], suggestAction(key));
  if (kinds.length === 0 && keys.length === 0) {
    issues.add(path, `expected one action (${ScenarioActionKinds.join(', ')})`);
    return undefined;
  }
  if (kinds.length > 1) {
    issues.add(path, `expected one action per entry, got ${kinds.join(' and ')}`);
    return undefined;
  }
  const kind = kinds[0];
  if (kind === undefined || !at.success) return undefined;
  return { index, at: at.data, kind, value: entry[kind] };
}

/**
 * Validates a parsed scenario document (the object YAML or JSON gave) and resolves it.
 * Throws one ScenarioError listing every problem.
 *
 * @example
 * const scenario = scenarioFromObject({ duration: '5m', nodes: [{ name: 'a-1', zone: 'zone-a' }] });
 */
export function scenarioFromObject(doc: unknown, source?: string): Scenario {
  const issues = newIssues();
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ScenarioError(
      [{ path: '(scenario)', message: `expected a scenario object, got ${describeInput(doc)}` }],
      source,
    );
  }
  const fields = doc as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!TopLevelKeys.includes(key)) issues.add([key], `unknown field (fields: ${TopLevelKeys.join(', ')})`);
  }
  // Each part is read on its own, so one bad field does not hide the problems of the others.
  const read = <S extends z.ZodType>(
    schema: S,
    value: unknown,
    path: readonly PropertyKey[],
  ): z.output<S> | undefined => {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    issues.list.push(...zodIssues(result.error, path));
    return undefined;
  };
  const name = read(TopLevelFields.name, fields.name, ['name']);
  const start = read(TopLevelFields.start, fields.start, ['start']);
  const relayClockSkew = read(TopLevelFields.relayClockSkew, fields.relayClockSkew, ['relayClockSkew']);
  let duration: Millis | undefined;
  if ('duration' in fields) duration = read(TopLevelFields.duration, fields.duration, ['duration']);
  else issues.add(['duration'], 'missing: how much virtual time to run, e.g. "15m"');
  let config: ControllerConfig | undefined;
  try {
    config = parseConfigObject(fields.config ?? {}, 'config');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.list.push(...error.issues);
  }

  const model = new ClusterModel();
  const nodes: SimulatedNode[] = [];
  (read(TopLevelFields.nodes, fields.nodes, ['nodes']) ?? []).forEach((raw, i) => {
    const entry = read(NodeEntrySchema, raw, ['nodes', i]);
    if (entry === undefined) {
      // Still known by name, so references to it are not reported as well.
      const named = typeof raw === 'object' && raw !== null ? (raw as { name?: unknown }).name : undefined;
      if (typeof named === 'string') model.nodes.push(named);
      return;
    }
    nodes.push(...model.addNodes(expandNodes(entry), issues, ['nodes', i]));
  });
  const pods: SimulatedPod[] = [];
  (read(TopLevelFields.pods, fields.pods, ['pods']) ?? []).forEach((raw, i) => {
    const entry = read(PodEntrySchema, raw, ['pods', i]);
    if (entry === undefined) return;
    pods.push(...model.addPods(model.expandPods(entry, issues, ['pods', i]), issues, ['pods', i]));
  });

  const raw = (read(TopLevelFields.timeline, fields.timeline, ['timeline']) ?? [])
    .map((entry, i) => readTimelineEntry(entry, i, issues))
    .filter((e): e is RawEntry => e !== undefined);
  // Stable: entries at one offset keep the file's order (SCENARIOS.md: the actions at t happen first).
  const sorted = [...raw].sort((a, b) => a.at - b.at || a.index - b.index);
  const timeline: TimelineEntry[] = [];
  for (const entry of sorted) {
    if (duration !== undefined && entry.at > duration) {
      issues.add(
        ['timeline', entry.index, 'at'],
        `after the end of the scenario (duration ${formatDuration(duration)})`,
      );
    }
    const action = resolveAction(entry.kind, entry.value, model, issues, [
      'timeline',
      entry.index,
      entry.kind,
    ]);
    if (action !== undefined) timeline.push({ at: entry.at, index: entry.index, action });
  }
  if (issues.list.length > 0 || config === undefined || duration === undefined) {
    throw new ScenarioError(issues.list, source);
  }
  return {
    name: name ?? '',
    config,
    start: start ?? DefaultScenarioStart,
    duration,
    nodes,
    pods,
    timeline,
    relayClockSkew: relayClockSkew ?? 0,
  };
}

/**
 * Parses a scenario from its text (YAML, of which JSON is a subset). `source` (a file name) is quoted in
 * errors. Throws ScenarioError for bad YAML and for every invalid field.
 *
 * @example
 * const scenario = parseScenario(await readFile('examples/scenarios/single-node-failure.yaml', 'utf8'));
 */
export function parseScenario(text: string, source?: string): Scenario {
  let doc: unknown;
  try {
    doc = parseYaml(text, { uniqueKeys: true });
  } catch (error) {
    if (!(error instanceof YAMLParseError)) throw error;
    const at = error.linePos?.[0];
    // The message ends with "at line L, column C:" and a code excerpt; the path carries the position.
    const message = (error.message.split('\n')[0] ?? error.message).replace(/ at line \d+, column \d+:$/, '');
    const where = at === undefined ? '(file)' : `(line ${at.line}, column ${at.col})`;
    throw new ScenarioError([{ path: where, message }], source, { cause: error });
  }
  return scenarioFromObject(doc, source);
}
