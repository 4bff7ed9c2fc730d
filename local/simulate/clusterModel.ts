// A scenario's cluster as its timeline goes (docs/simulate.md, "Names and globs"): `generate` entries
// expanded into nodes and pods, and names and globs resolved against the nodes and pods that exist at
// that point of the timeline. Problems are collected as issues naming their field, never thrown.
import type { Taint, Toleration } from '../../shared/domain/types.js';
import type { ScenarioIssue } from '../../shared/errors.js';
import type { SimulatedNode } from '../kubelet/kubeletFleet.js';
import type { SimulatedPod } from '../kubelet/pods.js';
import {
  formatPath,
  globToRegExp,
  isGlob,
  type NodeEntry,
  type NodeFields,
  type PodEntry,
  type PodFields,
} from './scenarioSchema.js';

/** Problems found so far, each at the path of its field. */
export interface Issues {
  add(path: readonly PropertyKey[], message: string): void;
  readonly list: ScenarioIssue[];
}

export function newIssues(): Issues {
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

export function expandNodes(entry: NodeEntry): SimulatedNode[] {
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

/** The names a ClusterModel held at one point of the timeline (restoreApiServer brings them back). */
export interface ClusterSnapshot {
  readonly nodes: readonly string[];
  readonly pods: readonly string[];
}

/**
 * The cluster as the timeline goes: which nodes and pods exist. Sets keep creation order (a name added
 * again after its deletion comes last) and answer "exists?" at once: a scenario may hold thousands.
 */
export class ClusterModel {
  readonly nodes = new Set<string>();
  readonly pods = new Set<string>();

  hasNode(name: string): boolean {
    return this.nodes.has(name);
  }

  /** Resolves a selector; reports a pattern or name that matches nothing, at `path`. */
  selectNodes(selector: string | readonly string[], issues: Issues, path: readonly PropertyKey[]): string[] {
    return select(this.nodes, selector, issues, path, (pattern) => pattern, {
      glob: (pattern) => `no node matches ${JSON.stringify(pattern)}`,
      name: (pattern) => `no node ${JSON.stringify(pattern)}`,
    });
  }

  selectPods(selector: string | readonly string[], issues: Issues, path: readonly PropertyKey[]): string[] {
    return select(this.pods, selector, issues, path, (raw) => (raw.includes('/') ? raw : `default/${raw}`), {
      glob: (_pattern, raw) => `no pod matches ${JSON.stringify(raw)}`,
      name: (pattern) => `no pod ${JSON.stringify(pattern)}`,
    });
  }

  addNodes(nodes: readonly SimulatedNode[], issues: Issues, path: readonly PropertyKey[]): SimulatedNode[] {
    const added: SimulatedNode[] = [];
    for (const node of nodes) {
      if (this.nodes.has(node.name)) {
        issues.add(path, `node ${JSON.stringify(node.name)} exists already`);
        continue;
      }
      this.nodes.add(node.name);
      added.push(node);
    }
    return added;
  }

  addPods(pods: readonly SimulatedPod[], issues: Issues, path: readonly PropertyKey[]): SimulatedPod[] {
    const added: SimulatedPod[] = [];
    for (const pod of pods) {
      const key = `${pod.namespace ?? 'default'}/${pod.name}`;
      if (this.pods.has(key)) {
        issues.add(path, `pod ${JSON.stringify(key)} exists already`);
        continue;
      }
      this.pods.add(key);
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
    for (const name of names) this.nodes.delete(name);
  }

  removePods(keys: readonly string[]): void {
    for (const key of keys) this.pods.delete(key);
  }

  snapshot(): ClusterSnapshot {
    return { nodes: [...this.nodes], pods: [...this.pods] };
  }

  /** Back to a snapshot: what was created since is gone, what was deleted since is back. */
  restore(snapshot: ClusterSnapshot): void {
    this.nodes.clear();
    this.pods.clear();
    for (const name of snapshot.nodes) this.nodes.add(name);
    for (const key of snapshot.pods) this.pods.add(key);
  }
}

/**
 * The members of `names` a selector (a name or glob, or a list of them) picks, in `names`' order;
 * each pattern that picks nothing is reported at its path.
 */
function select(
  names: ReadonlySet<string>,
  selector: string | readonly string[],
  issues: Issues,
  path: readonly PropertyKey[],
  normalize: (raw: string) => string,
  missing: { glob: (pattern: string, raw: string) => string; name: (pattern: string) => string },
): string[] {
  const patterns = typeof selector === 'string' ? [selector] : selector;
  const chosen = new Set<string>();
  patterns.forEach((raw, i) => {
    const where = typeof selector === 'string' ? path : [...path, i];
    const pattern = normalize(raw);
    let matched = false;
    if (isGlob(pattern)) {
      const regExp = globToRegExp(pattern);
      for (const name of names) {
        if (!regExp.test(name)) continue;
        chosen.add(name);
        matched = true;
      }
    } else if (names.has(pattern)) {
      chosen.add(pattern);
      matched = true;
    }
    if (!matched) issues.add(where, isGlob(raw) ? missing.glob(pattern, raw) : missing.name(pattern));
  });
  return [...names].filter((name) => chosen.has(name));
}
