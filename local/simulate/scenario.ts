// The `nlc simulate` scenario format (docs/simulate.md, a public interface): YAML or JSON in, a Scenario
// out with every `generate` expanded, every glob resolved against the nodes that exist at that point of
// the timeline, and every duration in milliseconds. Validation happens here, once, at the edge: the
// simulator trusts what it gets. Every problem is reported at once, each naming its field as written
// (`timeline[3].stopKubelet: no node matches "c-*"`), as one ScenarioError (exit 2).
//
// The parts: scenarioTypes.ts (what a Scenario is), scenarioSchema.ts (each field's shape),
// clusterModel.ts (expansion and name resolution); this file reads a document through them.
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { parseConfigObject, type ControllerConfig } from '../../shared/config.js';
import { durationSchema, formatDuration } from '../../shared/duration.js';
import type { Millis } from '../../shared/domain/types.js';
import type { ServedCluster } from '../../shared/adapters/clusters.js';
import { ConfigError, ScenarioError } from '../../shared/errors.js';
import { describeInput } from '../../shared/wireFormat.js';
import type { SimulatedNode } from '../kubelet/kubeletFleet.js';
import type { SimulatedPod } from '../kubelet/pods.js';
import { ClusterModel, expandNodes, newIssues, type ClusterSnapshot, type Issues } from './clusterModel.js';
import {
  ActionSchemas,
  ClusterKeys,
  ClusterNameSchema,
  ClustersSchema,
  MultiClusterTopLevelKeys,
  NodeEntrySchema,
  PodEntrySchema,
  TopLevelFields,
  TopLevelKeys,
  zodIssues,
} from './scenarioSchema.js';
import { scenarioIssues, servedClusters, stageEnvironment, type StageCluster } from './stage.js';
import {
  DefaultScenarioStart,
  isMultiCluster,
  ScenarioActionKinds,
  type AnyScenario,
  type MultiClusterScenario,
  type Scenario,
  type ScenarioAction,
  type ScenarioActionKind,
  type TimelineEntry,
} from './scenarioTypes.js';

export { formatPath, globToRegExp, isGlob } from './scenarioSchema.js';
export {
  DefaultScenarioStart,
  InjectableDetailTypes,
  isMultiCluster,
  ScenarioActionKinds,
  StallableResources,
} from './scenarioTypes.js';
export type {
  AnyScenario,
  InjectableDetailType,
  MultiClusterScenario,
  InjectEventAction,
  NodeTargetAction,
  Scenario,
  ScenarioAction,
  ScenarioActionKind,
  StallableResource,
  TimelineEntry,
} from './scenarioTypes.js';

// ---------------------------------------------------------------------------------------------------
// Resolution: expand, resolve references against the cluster as it is at each point of the timeline

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
    case 'restartRelay': {
      const restart = read(ActionSchemas.restartRelay);
      return restart === undefined ? undefined : { kind, clockSkew: restart.clockSkew ?? 0 };
    }
    case 'relayClockStep': {
      const step = read(ActionSchemas.relayClockStep);
      return step === undefined ? undefined : { kind, step };
    }
    case 'stallWatch': {
      const stall = read(ActionSchemas.stallWatch);
      return stall === undefined ? undefined : { kind, resource: stall.resource, duration: stall.for };
    }
    case 'injectEvent': {
      const event = read(ActionSchemas.injectEvent);
      if (event === undefined) return undefined;
      // Checked again when it happens (a pod may have been evicted by then): here, against the nodes
      // and pods the timeline makes.
      if (event.detailType === 'Node Changed' && !model.hasNode(event.node)) {
        issues.add([...path, 'detail', 'node', 'name'], `no node ${JSON.stringify(event.node)}`);
        return undefined;
      }
      if (event.detailType === 'Pod Changed') {
        const key = `${event.pod.namespace}/${event.pod.name}`;
        if (!model.pods.has(key)) {
          issues.add([...path, 'detail', 'pod', 'name'], `no pod ${JSON.stringify(key)}`);
          return undefined;
        }
      }
      return { kind, ...event };
    }
    case 'restoreApiServer': {
      const back = read(ActionSchemas.restoreApiServer);
      return back === undefined ? undefined : { kind, back };
    }
  }
}

/** How many leading characters two texts share. */
function commonPrefix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

function suggestAction(key: string): string {
  const lower = key.toLowerCase();
  // The action sharing the longest start with the key (at least 4 characters), the first of a tie:
  // several begin alike (stopKubelet and stopRelay, startKubelet and startRelay; restartRelay and
  // restoreApiServer).
  let close: ScenarioActionKind | undefined;
  let best = 3;
  for (const kind of ScenarioActionKinds) {
    const shared = kind.toLowerCase() === lower ? Infinity : commonPrefix(kind.toLowerCase(), lower);
    if (shared > best) {
      best = shared;
      close = kind;
    }
  }
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

/** Reads `value` with `schema`; its issues are added at `path`, and undefined returned. */
function readField<S extends z.ZodType>(
  schema: S,
  value: unknown,
  path: readonly PropertyKey[],
  issues: Issues,
): z.output<S> | undefined {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  issues.list.push(...zodIssues(result.error, path));
  return undefined;
}

/** A cluster's nodes, pods and timeline, resolved: the part of a scenario each cluster has its own of. */
interface ClusterPart {
  readonly nodes: readonly SimulatedNode[];
  readonly pods: readonly SimulatedPod[];
  readonly timeline: readonly TimelineEntry[];
}

/**
 * Reads `nodes`, `pods` and `timeline` of one cluster (the scenario's, or a `clusters[]` entry's, with
 * paths relative to it), resolving every name against the cluster as its timeline goes.
 */
function readClusterPart(
  fields: Readonly<Record<string, unknown>>,
  duration: Millis | undefined,
  issues: Issues,
): ClusterPart {
  const model = new ClusterModel();
  const nodes: SimulatedNode[] = [];
  (readField(TopLevelFields.nodes, fields.nodes, ['nodes'], issues) ?? []).forEach((raw, i) => {
    const entry = readField(NodeEntrySchema, raw, ['nodes', i], issues);
    if (entry === undefined) {
      // Still known by name, so references to it are not reported as well.
      const named = typeof raw === 'object' && raw !== null ? (raw as { name?: unknown }).name : undefined;
      if (typeof named === 'string') model.nodes.add(named);
      return;
    }
    nodes.push(...model.addNodes(expandNodes(entry), issues, ['nodes', i]));
  });
  const pods: SimulatedPod[] = [];
  (readField(TopLevelFields.pods, fields.pods, ['pods'], issues) ?? []).forEach((raw, i) => {
    const entry = readField(PodEntrySchema, raw, ['pods', i], issues);
    if (entry === undefined) return;
    pods.push(...model.addPods(model.expandPods(entry, issues, ['pods', i]), issues, ['pods', i]));
  });

  const raw = (readField(TopLevelFields.timeline, fields.timeline, ['timeline'], issues) ?? [])
    .map((entry, i) => readTimelineEntry(entry, i, issues))
    .filter((e): e is RawEntry => e !== undefined);
  // Stable: entries at one offset keep the file's order (the actions at t happen in the file's order).
  const sorted = [...raw].sort((a, b) => a.at - b.at || a.index - b.index);
  // restoreApiServer brings back the nodes and pods of an earlier instant: the names that exist then are
  // kept as the timeline passes that instant (before its actions: the state an instant starts with).
  const restoreTo = new Map<RawEntry, Millis>();
  for (const entry of sorted) {
    if (entry.kind !== 'restoreApiServer') continue;
    const back = ActionSchemas.restoreApiServer.safeParse(entry.value);
    if (!back.success) continue; // reported when the entry is resolved
    if (back.data > entry.at) {
      issues.add(
        ['timeline', entry.index, 'restoreApiServer'],
        `expected at most ${formatDuration(entry.at)} (there is no state before the start), got ${describeInput(entry.value)}`,
      );
      continue;
    }
    restoreTo.set(entry, entry.at - back.data);
  }
  const instants = [...new Set(restoreTo.values())].sort((a, b) => a - b);
  const snapshots = new Map<Millis, ClusterSnapshot>();
  const timeline: TimelineEntry[] = [];
  for (const entry of sorted) {
    while (instants.length > 0 && (instants[0] ?? Infinity) <= entry.at) {
      snapshots.set(instants.shift() ?? 0, model.snapshot());
    }
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
    const to = restoreTo.get(entry);
    const snapshot = to === undefined ? undefined : snapshots.get(to);
    if (action?.kind === 'restoreApiServer' && snapshot !== undefined) model.restore(snapshot);
  }
  return { nodes, pods, timeline };
}

/** Reads the top-level `config`; its issues are added, and undefined returned, when it is bad. */
function readConfig(raw: unknown, issues: Issues): ControllerConfig | undefined {
  try {
    return parseConfigObject(raw ?? {}, 'config');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.list.push(...error.issues);
    return undefined;
  }
}

/**
 * Validates a parsed scenario document (the object YAML or JSON gave) and resolves it: a scenario of one
 * cluster. A document with `clusters` is refused here (scenarioDocumentFromObject reads it).
 * Throws one ScenarioError listing every problem.
 *
 * @example
 * const scenario = scenarioFromObject({ duration: '5m', nodes: [{ name: 'a-1', zone: 'zone-a' }] });
 */
export function scenarioFromObject(doc: unknown, source?: string): Scenario {
  const scenario = scenarioDocumentFromObject(doc, source);
  if (!isMultiCluster(scenario)) return scenario;
  throw new ScenarioError(
    [{ path: 'clusters', message: 'a scenario of several clusters: read it with parseScenarioDocument' }],
    source,
  );
}

/**
 * Validates a parsed scenario document and resolves it: a scenario of one cluster, or, with `clusters`,
 * of several (docs/simulate.md, "Several clusters"). Throws one ScenarioError listing every problem.
 *
 * @example
 * const scenario = scenarioDocumentFromObject({ duration: '5m', clusters: [{ name: 'a', nodes: [{ name: 'a-1' }] }] });
 */
export function scenarioDocumentFromObject(doc: unknown, source?: string): AnyScenario {
  const issues = newIssues();
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ScenarioError(
      [{ path: '(scenario)', message: `expected a scenario object, got ${describeInput(doc)}` }],
      source,
    );
  }
  const fields = doc as Record<string, unknown>;
  if ('clusters' in fields) return multiClusterFromObject(fields, source);
  for (const key of Object.keys(fields)) {
    if (!TopLevelKeys.includes(key)) issues.add([key], `unknown field (fields: ${TopLevelKeys.join(', ')})`);
  }
  // Each part is read on its own, so one bad field does not hide the problems of the others.
  const name = readField(TopLevelFields.name, fields.name, ['name'], issues);
  const start = readField(TopLevelFields.start, fields.start, ['start'], issues);
  const relayClockSkew = readField(
    TopLevelFields.relayClockSkew,
    fields.relayClockSkew,
    ['relayClockSkew'],
    issues,
  );
  let duration: Millis | undefined;
  if ('duration' in fields)
    duration = readField(TopLevelFields.duration, fields.duration, ['duration'], issues);
  else issues.add(['duration'], 'missing: how much virtual time to run, e.g. "15m"');
  let config = readConfig(fields.config, issues);
  const managedController = readManagedController(fields.managedController, issues);
  // Beside a managed controller the scenario's is the shadow: it decides and records, never writes.
  if (managedController !== undefined && config !== undefined) config = { ...config, dryRun: true };
  const { nodes, pods, timeline } = readClusterPart(fields, duration, issues);
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
    ...(managedController !== undefined && { managedController }),
  };
}

/** `clusters[1].timeline[3].stopKubelet` from `timeline[3].stopKubelet` read within `clusters[1]`. */
function withinCluster(index: number, path: string): string {
  const prefix = `clusters[${index}]`;
  if (path === '(scenario)') return prefix;
  return path.startsWith('[') || path.startsWith('(') ? `${prefix}${path}` : `${prefix}.${path}`;
}

/** A scenario of several clusters: the shared fields, then each cluster's own (MultiClusterTopLevelKeys). */
function multiClusterFromObject(
  fields: Readonly<Record<string, unknown>>,
  source?: string,
): MultiClusterScenario {
  const issues = newIssues();
  for (const key of Object.keys(fields)) {
    if (MultiClusterTopLevelKeys.includes(key)) continue;
    issues.add(
      [key],
      ClusterKeys.includes(key)
        ? `with clusters, each cluster has its own: clusters[].${key}`
        : key === 'managedController'
          ? 'not with several clusters (a managed controller beside each cluster is not simulated)'
          : `unknown field (fields with clusters: ${MultiClusterTopLevelKeys.join(', ')})`,
    );
  }
  const name = readField(TopLevelFields.name, fields.name, ['name'], issues);
  const start = readField(TopLevelFields.start, fields.start, ['start'], issues);
  let duration: Millis | undefined;
  if ('duration' in fields)
    duration = readField(TopLevelFields.duration, fields.duration, ['duration'], issues);
  else issues.add(['duration'], 'missing: how much virtual time to run, e.g. "15m"');
  const stage = readConfig(fields.config, issues);
  const written = typeof fields.config === 'object' && fields.config !== null ? fields.config : {};
  if ('cluster' in written)
    issues.add(['config', 'cluster'], 'with clusters, each is named by clusters[].name');

  const entries = readField(ClustersSchema, fields.clusters, ['clusters'], issues) ?? [];
  const parts: { readonly name: string; readonly part: ClusterPart; readonly skew: Millis }[] = [];
  const stageClusters: StageCluster[] = [];
  const named = new Map<string, number>();
  entries.forEach((raw, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      issues.add(['clusters', i], `expected a cluster ({name, nodes, ...}), got ${describeInput(raw)}`);
      return;
    }
    const entry = raw as Record<string, unknown>;
    const own = newIssues();
    for (const key of Object.keys(entry)) {
      if (!ClusterKeys.includes(key))
        own.add([key], `unknown field (fields of a cluster: ${ClusterKeys.join(', ')})`);
    }
    const clusterName = 'name' in entry ? readField(ClusterNameSchema, entry.name, ['name'], own) : undefined;
    if (!('name' in entry)) own.add(['name'], 'missing: the cluster\'s name, e.g. "prod-eu"');
    if (clusterName !== undefined) {
      const first = named.get(clusterName);
      if (first !== undefined)
        own.add(
          ['name'],
          `cluster ${JSON.stringify(clusterName)} is named already (clusters[${first}].name)`,
        );
      else named.set(clusterName, i);
    }
    const settings: unknown = entry.config ?? {};
    if (typeof settings !== 'object' || settings === null || Array.isArray(settings))
      own.add(['config'], `expected an object of settings, got ${describeInput(settings)}`);
    const skew = readField(TopLevelFields.relayClockSkew, entry.relayClockSkew, ['relayClockSkew'], own);
    const part = readClusterPart(entry, duration, own);
    issues.list.push(...own.list.map((issue) => ({ ...issue, path: withinCluster(i, issue.path) })));
    if (clusterName === undefined || named.get(clusterName) !== i) return;
    parts.push({ name: clusterName, part, skew: skew ?? 0 });
    if (typeof settings === 'object' && settings !== null && !Array.isArray(settings))
      stageClusters.push({ name: clusterName, settings: settings as Readonly<Record<string, unknown>> });
  });
  // The deployment, configured as a stage is: each cluster's settings are what its functions read.
  // Read even when other fields are bad: one error names every problem.
  let stageEnv: Record<string, string> | undefined;
  let served: ReadonlyMap<string, ServedCluster> | undefined;
  if (stage !== undefined && stageClusters.length > 0) {
    stageEnv = stageEnvironment(written as Record<string, unknown>, stage, stageClusters, issues.list);
    try {
      served = servedClusters(stageEnv);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.list.push(...scenarioIssues(error, stageEnv, stageClusters));
    }
  }
  if (issues.list.length > 0 || served === undefined || stageEnv === undefined || duration === undefined) {
    throw new ScenarioError(issues.list, source);
  }
  const scenarioStart = start ?? DefaultScenarioStart;
  return {
    name: name ?? '',
    start: scenarioStart,
    duration,
    stageEnv,
    clusters: parts.map(({ name: clusterName, part, skew }): Scenario => {
      const config = served.get(clusterName)?.config;
      if (config === undefined) throw new Error(`simulator: the stage does not serve ${clusterName}`);
      return { name: clusterName, config, start: scenarioStart, duration, ...part, relayClockSkew: skew };
    }),
  };
}

/**
 * `managedController: {config: {…}}`: the settings of "the cluster's own controller" (upstream's
 * defaults when `config` is absent). It writes to the cluster: `dryRun: true` there is refused.
 */
function readManagedController(
  raw: unknown,
  issues: Issues,
): { readonly config: ControllerConfig } | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    issues.add(['managedController'], `expected {config: {…}}, got ${describeInput(raw)}`);
    return undefined;
  }
  const fields = raw as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (key !== 'config') issues.add(['managedController', key], 'unknown field (fields: config)');
  }
  try {
    const config = parseConfigObject(fields.config ?? {}, 'managedController.config');
    if (config.dryRun) {
      issues.add(
        ['managedController', 'config', 'dryRun'],
        "expected false or nothing: the managed controller is the cluster's own, and writes",
      );
      return undefined;
    }
    return { config };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.list.push(...error.issues);
    return undefined;
  }
}

/**
 * Parses a scenario from its text (YAML, of which JSON is a subset). `source` (a file name) is quoted in
 * errors. Throws ScenarioError for bad YAML and for every invalid field.
 *
 * @example
 * const scenario = parseScenario(await readFile('examples/scenarios/single-node-failure.yaml', 'utf8'));
 */
export function parseScenario(text: string, source?: string): Scenario {
  return scenarioFromObject(readDocument(text, source), source);
}

/**
 * Parses a scenario file of one cluster or, with `clusters`, of several (docs/simulate.md, "Several
 * clusters"). Throws ScenarioError for bad YAML and for every invalid field.
 *
 * @example
 * const scenario = parseScenarioDocument(await readFile('examples/scenarios/two-clusters-one-zone-down.yaml', 'utf8'));
 */
export function parseScenarioDocument(text: string, source?: string): AnyScenario {
  return scenarioDocumentFromObject(readDocument(text, source), source);
}

/** The object a scenario's text holds (YAML, of which JSON is a subset). */
function readDocument(text: string, source: string | undefined): unknown {
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
  return doc;
}
