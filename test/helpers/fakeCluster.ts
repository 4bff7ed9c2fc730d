// A synchronous effect interpreter over in-memory nodes and pods: the counterpart of upstream's
// testutil.FakeNodeHandler plus the fake clientset, for pass-level ports of upstream tests.
//
// RequestCount follows FakeNodeHandler: every node List (our `list()`, upstream syncNodeStore), Get,
// status update and taint patch counts one. Pod calls are recorded separately, as upstream records
// them as clientset actions. Failures can be injected per effect kind.
import type { Effect, EffectResult, FailureReason } from '../../shared/domain/effects.js';
import type { KubeEvent } from '../../shared/domain/kubeEvents.js';
import { addOrUpdateTaint, removeTaint } from '../../shared/domain/taints.js';
import type { Node, NodeCondition, Pod, Taint } from '../../shared/domain/types.js';

export interface PodStatusUpdate {
  readonly pod: string;
  readonly ready?: 'False';
  readonly reason?: string;
  readonly ok: boolean;
}

export class FakeCluster {
  readonly nodes = new Map<string, Node>();
  pods: Pod[] = [];
  requestCount = 0;
  readonly effects: Effect[] = [];
  readonly events: KubeEvent[] = [];
  readonly podStatusUpdates: PodStatusUpdate[] = [];
  readonly deletedPods: string[] = [];
  private readonly failures = new Map<Effect['kind'], { reason: FailureReason; times: number }>();
  private resourceVersion = 1;

  constructor(nodes: readonly Node[] = [], pods: readonly Pod[] = []) {
    for (const node of nodes) this.put(node);
    this.pods = [...pods];
  }

  /** Replaces (or creates) a node object, as FakeNodeHandler.Update does. */
  put(node: Node): void {
    this.nodes.set(node.name, { ...node, resourceVersion: String(this.resourceVersion++) });
  }

  setConditions(name: string, conditions: readonly NodeCondition[]): void {
    this.put({ ...this.node(name), conditions });
  }

  node(name: string): Node {
    const node = this.nodes.get(name);
    if (node === undefined) throw new Error(`no node ${name}`);
    return node;
  }

  taints(name: string): readonly Taint[] {
    return this.node(name).taints;
  }

  /** upstream syncNodeStore: a List of nodes, counted as one request. */
  list(): Node[] {
    this.requestCount++;
    return [...this.nodes.values()];
  }

  /** The next `times` effects of this kind fail with `reason`. */
  fail(kind: Effect['kind'], times = 1, reason: FailureReason = 'Failed'): void {
    this.failures.set(kind, { reason, times });
  }

  private injected(kind: Effect['kind']): EffectResult | undefined {
    const failure = this.failures.get(kind);
    if (failure === undefined || failure.times <= 0) return undefined;
    failure.times--;
    return { ok: false, reason: failure.reason, message: `injected ${failure.reason}` };
  }

  readonly execute = (effect: Effect): EffectResult => {
    this.effects.push(effect);
    switch (effect.kind) {
      case 'updateNodeStatus': {
        this.requestCount++;
        const failed = this.injected(effect.kind);
        if (failed) return failed;
        const node = this.nodes.get(effect.node);
        if (node === undefined) return { ok: false, reason: 'NotFound', message: 'not found' };
        const written = { ...node, conditions: effect.conditions };
        this.put(written);
        return { ok: true, node: this.nodes.get(effect.node) ?? written };
      }
      case 'getNode': {
        this.requestCount++;
        const failed = this.injected(effect.kind);
        if (failed) return failed;
        const node = this.nodes.get(effect.node);
        if (node === undefined) return { ok: false, reason: 'NotFound', message: 'not found' };
        return { ok: true, value: node };
      }
      case 'swapNodeTaints': {
        this.requestCount++;
        const failed = this.injected(effect.kind);
        if (failed) return failed;
        const node = this.nodes.get(effect.node);
        if (node === undefined) return { ok: false, reason: 'NotFound', message: 'not found' };
        let taints: readonly Taint[] = node.taints;
        for (const t of effect.toAdd) taints = addOrUpdateTaint(taints, t).taints;
        for (const t of effect.toRemove) taints = removeTaint(taints, t).taints;
        this.put({ ...node, taints });
        return { ok: true };
      }
      case 'listPodsOnNode': {
        const failed = this.injected(effect.kind);
        if (failed) return failed;
        return { ok: true, value: this.pods.filter((p) => p.nodeName === effect.node) };
      }
      case 'markPodsNotReady': {
        const failed = this.injected(effect.kind);
        for (const pod of effect.pods) {
          const name = `${pod.namespace}/${pod.name}`;
          this.podStatusUpdates.push({ pod: name, ready: 'False', ok: failed === undefined });
          if (failed === undefined) {
            this.pods = this.pods.map((p) => (p.uid === pod.uid ? { ...p, ready: 'False' } : p));
          }
        }
        return failed ?? { ok: true };
      }
      case 'setPodTerminationReason': {
        const failed = this.injected(effect.kind);
        const name = `${effect.pod.namespace}/${effect.pod.name}`;
        this.podStatusUpdates.push({ pod: name, reason: effect.reason, ok: failed === undefined });
        if (failed) return failed;
        this.pods = this.pods.map((p) =>
          p.uid === effect.pod.uid ? { ...p, statusReason: effect.reason } : p,
        );
        return { ok: true };
      }
      case 'deletePod': {
        const failed = this.injected(effect.kind);
        if (failed) return failed;
        this.deletedPods.push(`${effect.pod.namespace}/${effect.pod.name}`);
        this.pods = this.pods.filter((p) => p.uid !== effect.pod.uid);
        return { ok: true };
      }
      case 'recordEvent':
        this.events.push(effect.event);
        return { ok: true };
    }
  };
}

export interface NodeOptions {
  readonly created: number;
  readonly labels?: Record<string, string>;
  readonly conditions?: readonly NodeCondition[];
  readonly taints?: readonly Taint[];
  readonly uid?: string;
}

/** testutil.NewNode: a node with no conditions unless given. */
export function newNode(name: string, options: NodeOptions): Node {
  return {
    name,
    uid: options.uid ?? `uid-${name}`,
    creationTimestamp: options.created,
    labels: options.labels ?? {},
    taints: options.taints ?? [],
    unschedulable: false,
    conditions: options.conditions ?? [],
  };
}

/** testutil.NewPod: namespace default, bound to `node`, Ready=True. */
export function newPod(name: string, node: string, extra: Partial<Pod> = {}): Pod {
  return {
    namespace: 'default',
    name,
    uid: `uid-${name}`,
    nodeName: node,
    tolerations: [],
    ready: 'True',
    ...extra,
  };
}

export function ready(
  status: NodeCondition['status'],
  lastHeartbeatTime: number,
  lastTransitionTime: number,
): NodeCondition {
  return { type: 'Ready', status, lastHeartbeatTime, lastTransitionTime };
}

/** Nodes in upstream tests carry both the stable and the beta topology labels. */
export function zoneLabels(region: string, zone: string): Record<string, string> {
  return {
    'topology.kubernetes.io/region': region,
    'topology.kubernetes.io/zone': zone,
    'failure-domain.beta.kubernetes.io/region': region,
    'failure-domain.beta.kubernetes.io/zone': zone,
  };
}

export const t = (iso: string): number => Date.parse(iso);
