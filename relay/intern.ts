// Shares the strings and lists that repeat across the informer caches, so memory stays within the
// relay's budget (docs/architecture.md#budgets: < 256 MiB with 5,000 nodes and 50,000 pods). JSON.parse gives
// every object its own copy of every string: 50,000 pods would each carry their namespace, their node's name,
// the controller kind and the same two default tolerations; 5,000 nodes the same condition reasons and
// messages, zone and OS labels. Measured, a trimmed pod costs about 1.1 KB without sharing and about a third
// of that with it (bench/relay.ts).
//
// Bounded: past `maxEntries` distinct values a table is emptied and refills with what is current, so a
// stream of unique values cannot grow it without limit. Names and uids, unique per object, are kept
// as they are.
import type { Node, NodeCondition, Pod, Taint, Toleration } from '../shared/domain/types.js';

export class Interner {
  private strings = new Map<string, string>();
  private tolerationLists = new Map<string, readonly Toleration[]>();

  // Sized for 100,000 nodes: their names alone are 100,000 distinct values, and a table that overflows
  // empties, so every pod listed after that gets its own copy of its node's name again.
  constructor(private readonly maxEntries = 500_000) {}

  /** The shared copy of `s`. */
  string<S extends string>(s: S): S {
    const hit = this.strings.get(s);
    if (hit !== undefined) return hit as S;
    if (this.strings.size >= this.maxEntries) this.strings.clear();
    this.strings.set(s, s);
    return s;
  }

  private optional<S extends string>(s: S | undefined): S | undefined {
    return s === undefined ? undefined : this.string(s);
  }

  /** One frozen list per distinct content: most pods carry the same default tolerations. */
  tolerations(list: readonly Toleration[]): readonly Toleration[] {
    if (list.length === 0) return emptyTolerations;
    const key = JSON.stringify(list);
    const hit = this.tolerationLists.get(key);
    if (hit !== undefined) return hit;
    if (this.tolerationLists.size >= this.maxEntries) this.tolerationLists.clear();
    const shared = Object.freeze(list.map((t) => Object.freeze({ ...t })));
    this.tolerationLists.set(key, shared);
    return shared;
  }

  pod(pod: Pod): Pod {
    const ownerKind = this.optional(pod.ownerKind);
    const statusReason = this.optional(pod.statusReason);
    const ready = this.optional(pod.ready);
    const disruptionTarget = this.optional(pod.disruptionTarget);
    return {
      namespace: this.string(pod.namespace),
      name: pod.name,
      uid: pod.uid,
      nodeName: this.string(pod.nodeName),
      tolerations: this.tolerations(pod.tolerations),
      ...(ownerKind !== undefined && { ownerKind }),
      ...(pod.deletionTimestamp !== undefined && { deletionTimestamp: pod.deletionTimestamp }),
      ...(pod.deletionGracePeriodSeconds !== undefined && {
        deletionGracePeriodSeconds: pod.deletionGracePeriodSeconds,
      }),
      ...(ready !== undefined && { ready }),
      ...(statusReason !== undefined && { statusReason }),
      ...(disruptionTarget !== undefined && { disruptionTarget }),
    };
  }

  private condition(c: NodeCondition): NodeCondition {
    const reason = this.optional(c.reason);
    const message = this.optional(c.message);
    return {
      type: this.string(c.type),
      status: this.string(c.status),
      ...(reason !== undefined && { reason }),
      ...(message !== undefined && { message }),
      ...(c.lastHeartbeatTime !== undefined && { lastHeartbeatTime: c.lastHeartbeatTime }),
      ...(c.lastTransitionTime !== undefined && { lastTransitionTime: c.lastTransitionTime }),
    };
  }

  private taint(t: Taint): Taint {
    const value = this.optional(t.value);
    return {
      key: this.string(t.key),
      ...(value !== undefined && { value }),
      effect: this.string(t.effect),
      ...(t.timeAdded !== undefined && { timeAdded: t.timeAdded }),
    };
  }

  node(node: Node): Node {
    const labels: Record<string, string> = {};
    for (const [key, value] of Object.entries(node.labels)) labels[this.string(key)] = this.string(value);
    return {
      name: node.name,
      uid: node.uid,
      ...(node.resourceVersion !== undefined && { resourceVersion: node.resourceVersion }),
      creationTimestamp: node.creationTimestamp,
      labels,
      conditions: node.conditions.map((c) => this.condition(c)),
      taints: node.taints.map((t) => this.taint(t)),
      unschedulable: node.unschedulable,
      ...(node.truncated !== undefined && { truncated: node.truncated }),
    };
  }
}

const emptyTolerations: readonly Toleration[] = Object.freeze([]);
