// The kubelet fleet: simulated kubelets for many nodes over the API simulator's in-process store, on
// a Scheduler (virtual time for `nlc simulate` and tests, the system clock for `npm start`). It also
// plays the small parts of other agents a scenario needs: creating the initial cluster (seed),
// kubectl's cordon/uncordon and delete, and the DaemonSet controller's pods.
//
// One watch on pods and one on nodes serve every kubelet (a real kubelet watches its own pods with a
// spec.nodeName field selector; one shared watch is the same events, filtered here). Watch delivery is
// synchronous; everything a kubelet does in response is a timer at Priority.Kubelet.
//
// When the API server ends the watches with 410 Gone (its store restored from a snapshot: an etcd
// restore), the fleet relists and watches again, as the kubelets' informers do: a node or pod gone from
// the list is deleted for its kubelet, one back or changed is seen again. The kubelets keep running; their
// next writes, from copies newer than the restored objects, conflict and are retried on a fresh read, as
// upstream's. A node that comes back after its kubelet went with it (deleted, then restored) gets a
// kubelet again, stopped (its machine was removed): startKubelet brings it up.
import type { V1DaemonSet, V1Node, V1Pod } from '@kubernetes/client-node';
import { KubeletNotFoundError } from '../../shared/errors.js';
import type { ConditionStatus, Millis } from '../../shared/domain/types.js';
import type { Scheduler } from '../../shared/ports/scheduler.js';
import { ApiStatusError, type ApiStore, type DeleteStatus, type Wire } from '../apiserver/index.js';
import type { JsonObject } from '../apiserver/json.js';
import { formatTime } from '../apiserver/timestamps.js';
import {
  type NodeRegistration,
  type WireCondition,
  isKubeletCondition,
  kubeletConditionTypes,
  newNodeLease,
  nodeLeaseDurationSeconds,
  nodeStatusReportFrequency,
  nodeStatusUpdateFrequency,
  registrationNode,
  reportedCondition,
  setCondition,
  taintJson,
} from './nodeStatus.js';
import {
  type SimulatedPod,
  daemonSetManifest,
  daemonSetNameOf,
  podManifest,
  podNamespace,
  runningPodStatus,
} from './pods.js';
import { writeExistingObject } from './seed.js';
import { type KubeletSettings, type KubeletState, SimulatedKubelet } from './simulatedKubelet.js';

/** A node of the simulated cluster (docs/simulate.md `nodes[]`). */
export interface SimulatedNode extends NodeRegistration {
  /**
   * Initial conditions besides Ready, e.g. `{ DiskPressure: 'True' }`. The kubelet's own types are
   * what it keeps reporting; other types (NetworkUnavailable, …) are written once, as their agent would.
   */
  readonly conditions?: Readonly<Record<string, ConditionStatus>>;
  /** The Ready status the kubelet reports ("True" by default). */
  readonly ready?: 'True' | 'False';
  /** running (default) | stopped | unregistered. */
  readonly kubelet?: 'running' | 'stopped' | 'unregistered';
  /** Seeded nodes only: creationTimestamp = now − createdAgo (1 h by default). */
  readonly createdAgo?: Millis;
}

export interface KubeletFleetOptions {
  readonly store: ApiStore;
  readonly scheduler: Scheduler;
  /** 10 s upstream. */
  readonly nodeStatusUpdateFrequency?: Millis;
  /** 5 min upstream. */
  readonly nodeStatusReportFrequency?: Millis;
  /** 40 s upstream; the lease is renewed every 0.25 × this. */
  readonly nodeLeaseDurationSeconds?: number;
  /** The status manager's sync period; 10 s upstream. */
  readonly podStatusSyncPeriod?: Millis;
  /** Deleted pods are confirmed min(grace period, this) after their kubelet sees it; 1 s by default. */
  readonly podTerminationDelay?: Millis;
  /** API errors a kubelet met and carried on from (it retries on its next tick). Ignored by default. */
  readonly onApiError?: (
    error: ApiStatusError,
    where: { readonly node: string; readonly action: string },
  ) => void;
}

/** The initial cluster (docs/simulate.md `nodes` and `pods`). */
export interface SeedCluster {
  readonly nodes: readonly SimulatedNode[];
  readonly pods?: readonly SimulatedPod[];
}

const defaultCreatedAgo: Millis = 3_600_000;

/** Deterministic addresses: nodes in 10.0.0.0/16, pods in 10.244.0.0/16, in order of allocation. */
function address(prefix: string, n: number): string {
  return `${prefix}.${Math.floor(n / 250) % 256}.${(n % 250) + 2}`;
}

/**
 * Simulated kubelets for the nodes of one cluster.
 *
 * @example
 * const scheduler = new VirtualScheduler(Date.parse('2026-01-01T00:00:00Z'));
 * const store = createApiStore({ clock: scheduler });
 * const fleet = new KubeletFleet({ store, scheduler });
 * fleet.seed({ nodes: [{ name: 'a-1', zone: 'zone-a' }], pods: [{ name: 'web-1', node: 'a-1' }] });
 * fleet.stopKubelet('a-1');
 * await scheduler.advance(60_000); // no renewals for a-1
 * fleet.close();
 */
export class KubeletFleet {
  private readonly store: ApiStore;
  private readonly scheduler: Scheduler;
  private readonly settings: KubeletSettings;
  private readonly onApiError: NonNullable<KubeletFleetOptions['onApiError']>;
  private readonly byNode = new Map<string, SimulatedKubelet>();
  /** The pods bound to each node, by namespace/name, as the pod watch last delivered them. */
  private readonly podsByNode = new Map<string, Map<string, Wire<V1Pod>>>();
  /** Every Node as the node watch last delivered it (the kubelets' informer cache). */
  private readonly nodes = new Map<string, Wire<V1Node>>();
  private nodeWatch: { stop(): void };
  private podWatch: { stop(): void };
  /** The registrations of the kubelets removed with their Node (for a Node a restore brings back). */
  private readonly removed = new Map<string, NodeRegistration>();
  private nodeAddresses = 0;
  private podAddresses = 0;

  constructor(options: KubeletFleetOptions) {
    this.store = options.store;
    this.scheduler = options.scheduler;
    const statusFrequency = options.nodeStatusUpdateFrequency ?? nodeStatusUpdateFrequency;
    this.settings = {
      nodeStatusUpdateFrequency: statusFrequency,
      nodeStatusReportFrequency: options.nodeStatusReportFrequency ?? nodeStatusReportFrequency,
      nodeLeaseDurationSeconds: options.nodeLeaseDurationSeconds ?? nodeLeaseDurationSeconds,
      podStatusSyncPeriod: options.podStatusSyncPeriod ?? statusFrequency,
      podTerminationDelay: options.podTerminationDelay ?? 1000,
    };
    for (const [name, value] of Object.entries(this.settings)) {
      if (!(Number.isFinite(value) && value > 0) && !(name === 'podTerminationDelay' && value === 0))
        throw new RangeError(`KubeletFleet: ${name} must be a positive number, got ${value}`);
    }
    this.onApiError = options.onApiError ?? (() => undefined);
    // Watches from the current state: objects that exist already arrive as ADDED first.
    this.nodeWatch = this.watchNodes(undefined);
    this.podWatch = this.watchPods(undefined);
  }

  /** The kubelets, in the order their nodes were added. */
  get kubelets(): readonly SimulatedKubelet[] {
    return [...this.byNode.values()];
  }

  kubelet(node: string): SimulatedKubelet | undefined {
    return this.byNode.get(node);
  }

  /**
   * Creates the initial cluster as it is at the scheduler's now (docs/simulate.md): each node with its
   * taints (no admission), created `createdAgo` ago; running and stopped kubelets last posted status
   * and renewed their Lease now; an unregistered node has no conditions and no Lease. Pods exist bound
   * to their nodes, Running and Ready where a kubelet ran them. Running kubelets tick from now on.
   */
  seed(cluster: SeedCluster): void {
    const now = this.scheduler.now();
    const seeded: SimulatedKubelet[] = [];
    for (const node of cluster.nodes) {
      const state = node.kubelet ?? 'running';
      const kubelet = this.newKubelet(node, state);
      const created = now - (node.createdAgo ?? defaultCreatedAgo);
      const body = registrationNode(node, kubelet.internalIP);
      if (state === 'unregistered') delete body.status;
      else body.status = { ...body.status, conditions: this.initialConditions(kubelet, node, created, now) };
      const written = writeExistingObject<V1Node>(this.store, 'nodes', body, (obj) => {
        const metadata = obj.metadata as JsonObject;
        metadata.creationTimestamp = formatTime(created);
        const spec = obj.spec as JsonObject;
        const taints = (node.taints ?? []).map(taintJson);
        if (taints.length > 0) spec.taints = taints;
        else delete spec.taints;
      });
      if (state !== 'unregistered') {
        this.store.leases.create(
          newNodeLease(node.name, written.metadata?.uid, this.settings.nodeLeaseDurationSeconds, now),
        );
      }
      seeded.push(kubelet);
    }
    for (const pod of cluster.pods ?? []) this.writePod(pod, true);
    for (const kubelet of seeded) kubelet.resumeSeeded();
  }

  /**
   * A node joins (docs/simulate.md `addNode`): a running kubelet registers it through the API (so
   * admission adds not-ready:NoSchedule), posts Ready=True and renews its lease at once, like
   * `startKubelet`. A `stopped` one does the same and stops at once (it was up until now); for an
   * `unregistered` one the Node object is created without status and no kubelet comes up.
   */
  addNode(node: SimulatedNode): SimulatedKubelet {
    const state = node.kubelet ?? 'running';
    const kubelet = this.newKubelet(node, state === 'unregistered' ? 'unregistered' : 'stopped');
    if (state === 'unregistered') {
      const body = registrationNode(node, kubelet.internalIP);
      delete body.status;
      this.store.nodes.create(body);
      return kubelet;
    }
    kubelet.start();
    if (state === 'stopped') kubelet.stop();
    return kubelet;
  }

  /** Deletes the Node (kubectl delete node); its kubelet goes with it. */
  deleteNode(name: string): void {
    this.store.nodes.delete(name);
  }

  startKubelet(name: string): void {
    this.require(name).start();
  }

  stopKubelet(name: string): void {
    this.require(name).stop();
  }

  /** See SimulatedKubelet.setCondition: kubelet conditions are posted at once by a running kubelet. */
  setCondition(name: string, type: string, status: ConditionStatus, reason?: string, message?: string): void {
    this.require(name).setCondition(type, status, reason, message);
  }

  /** kubectl cordon: spec.unschedulable = true (nothing written when already so). */
  cordon(name: string): void {
    this.setUnschedulable(name, true);
  }

  /** kubectl uncordon. */
  uncordon(name: string): void {
    this.setUnschedulable(name, false);
  }

  /**
   * A pod bound to its node (docs/simulate.md `addPod`), created through the API; a DaemonSet pod is
   * created as the DaemonSet controller would (owned, with its tolerations). Its kubelet, if running,
   * reports it Running and Ready at once.
   */
  addPod(pod: SimulatedPod): Wire<V1Pod> {
    return this.writePod(pod, false);
  }

  /** Deletes a pod (graceful by default: its kubelet confirms the deletion while it runs). */
  deletePod(
    namespace: string,
    name: string,
    options: { readonly gracePeriodSeconds?: number } = {},
  ): Wire<V1Pod> | DeleteStatus {
    return this.store.pods.delete(name, {
      namespace,
      ...(options.gracePeriodSeconds !== undefined && { gracePeriodSeconds: options.gracePeriodSeconds }),
    });
  }

  /** Stops the watches and every kubelet's timers; the store keeps its objects. */
  close(): void {
    this.nodeWatch.stop();
    this.podWatch.stop();
    for (const kubelet of this.byNode.values()) kubelet.stop();
    this.byNode.clear();
    this.podsByNode.clear();
    this.nodes.clear();
  }

  // ------------------------------------------------------------------------------------------------

  private require(name: string): SimulatedKubelet {
    const kubelet = this.byNode.get(name);
    if (kubelet === undefined) throw new KubeletNotFoundError(name);
    return kubelet;
  }

  private newKubelet(node: SimulatedNode, state: Exclude<KubeletState, 'gone'>): SimulatedKubelet {
    if (this.byNode.has(node.name))
      throw new RangeError(`KubeletFleet: node ${node.name} already has a kubelet`);
    const internalIP = address('10.0', this.nodeAddresses++);
    const kubelet = new SimulatedKubelet(
      {
        store: this.store,
        scheduler: this.scheduler,
        settings: this.settings,
        podsOn: (nodeName) => this.podsByNode.get(nodeName)?.values() ?? [],
        nodeOf: (nodeName) => this.nodes.get(nodeName),
        allocatePodIP: () => address('10.244', this.podAddresses++),
        onApiError: this.onApiError,
      },
      node,
      internalIP,
      state,
    );
    if (node.ready !== undefined) kubelet.presetCondition('Ready', reportedCondition('Ready', node.ready));
    for (const [type, status] of Object.entries(node.conditions ?? {})) {
      if (isKubeletCondition(type)) kubelet.presetCondition(type, reportedCondition(type, status));
    }
    this.byNode.set(node.name, kubelet);
    return kubelet;
  }

  /** The status a seeded node last posted: the kubelet's conditions, then any others it was given. */
  private initialConditions(
    kubelet: SimulatedKubelet,
    node: SimulatedNode,
    created: number,
    now: number,
  ): WireCondition[] {
    // Conditions have held since the node was created: transitions then, heartbeats now.
    const since = formatTime(created);
    let conditions: WireCondition[] = [];
    for (const type of kubeletConditionTypes) {
      conditions = setCondition(conditions, type, kubelet.reportedFor(type), now);
    }
    for (const [type, status] of Object.entries(node.conditions ?? {})) {
      if (!isKubeletCondition(type))
        conditions = setCondition(conditions, type, reportedCondition(type, status), now);
    }
    return conditions.map((c) => ({ ...c, lastTransitionTime: since }));
  }

  private writePod(pod: SimulatedPod, existing: boolean): Wire<V1Pod> {
    const namespace = podNamespace(pod);
    const dsName = daemonSetNameOf(pod);
    const owner =
      dsName === undefined ? undefined : this.ensureDaemonSet(dsName, namespace, pod.hostNetwork === true);
    const manifest = podManifest(pod, owner);
    const kubelet = this.byNode.get(pod.node);
    // Seeded pods run where a kubelet ran them up to now (running or stopped since).
    const running = existing && kubelet !== undefined && kubelet.state !== 'unregistered';
    if (!existing && pod.defaultTolerations !== false) return this.store.pods.create(manifest);
    return writeExistingObject<V1Pod>(this.store, 'pods', manifest, (obj) => {
      const spec = obj.spec as JsonObject;
      if (pod.defaultTolerations === false) {
        // As submitted: DefaultTolerationSeconds did not run.
        if (manifest.spec?.tolerations !== undefined) spec.tolerations = manifest.spec.tolerations;
        else delete spec.tolerations;
      }
      if (running) {
        const status = runningPodStatus(
          obj,
          { hostIP: kubelet.internalIP, podIP: address('10.244', this.podAddresses++) },
          this.scheduler.now(),
        );
        obj.status = status;
      }
    });
  }

  private ensureDaemonSet(
    name: string,
    namespace: string,
    hostNetwork: boolean,
  ): { name: string; uid: string } {
    let ds: Wire<V1DaemonSet>;
    try {
      ds = this.store.daemonSets.get(name, { namespace });
    } catch (error) {
      if (!(error instanceof ApiStatusError && error.code === 404)) throw error;
      ds = this.store.daemonSets.create(daemonSetManifest(name, namespace, hostNetwork));
    }
    return { name, uid: ds.metadata?.uid ?? '' };
  }

  private setUnschedulable(name: string, desired: boolean): void {
    const node = this.store.nodes.get(name);
    if ((node.spec?.unschedulable ?? false) === desired) return;
    // kubectl's two-way merge patch: false is Go's omitted zero value, so uncordon sends null.
    this.store.nodes.patch(name, { spec: { unschedulable: desired ? true : null } }, { type: 'strategic' });
  }

  private onNodeDeleted(node: Wire<V1Node>): void {
    const name = node.metadata?.name ?? '';
    this.nodes.delete(name);
    const kubelet = this.byNode.get(name);
    if (kubelet === undefined) return;
    kubelet.nodeDeleted(node);
    this.byNode.delete(name);
    this.removed.set(name, kubelet.registration);
  }

  // --- the watches, and the relists when the server ends them ---------------------------------------

  /** The node watch, from the current state (`resourceVersion` undefined) or after a list. */
  private watchNodes(resourceVersion: string | undefined): { stop(): void } {
    return this.store.nodes.watch(
      resourceVersion === undefined ? {} : { resourceVersion },
      (event) => {
        const name = event.object.metadata?.name ?? '';
        if (event.type === 'ADDED' || event.type === 'MODIFIED') this.nodes.set(name, event.object);
        else if (event.type === 'DELETED') this.onNodeDeleted(event.object);
      },
      () => {
        this.nodeWatch = this.relistNodes();
      },
    );
  }

  private watchPods(resourceVersion: string | undefined): { stop(): void } {
    return this.store.pods.watch(
      resourceVersion === undefined ? {} : { resourceVersion },
      (event) => {
        if (event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED')
          this.onPodEvent(event.type, event.object);
      },
      () => {
        this.podWatch = this.relistPods();
      },
    );
  }

  /** The node watch ended (410 Gone): list, apply what differs, watch again from the list. */
  private relistNodes(): { stop(): void } {
    const list = this.store.nodes.list();
    const listed = new Map(list.items.map((node) => [node.metadata?.name ?? '', node] as const));
    for (const [name, cached] of [...this.nodes]) {
      const now = listed.get(name);
      // Gone, or another object under the same name: deleted for its kubelet.
      if (now === undefined || now.metadata?.uid !== cached.metadata?.uid) this.onNodeDeleted(cached);
    }
    for (const [name, node] of listed) {
      this.nodes.set(name, node);
      const registration = this.removed.get(name);
      if (this.byNode.has(name) || registration === undefined) continue;
      this.removed.delete(name);
      this.newKubelet(registration, 'stopped');
    }
    return this.watchNodes(list.metadata.resourceVersion);
  }

  /** The pod watch ended (410 Gone): list, apply what differs, watch again from the list. */
  private relistPods(): { stop(): void } {
    const list = this.store.pods.list();
    const key = (pod: Wire<V1Pod>): string => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
    const listed = new Map(list.items.map((pod) => [key(pod), pod] as const));
    for (const [nodeName, pods] of [...this.podsByNode]) {
      for (const cached of [...pods.values()]) {
        const now = listed.get(key(cached));
        const same =
          now !== undefined &&
          now.metadata?.uid === cached.metadata?.uid &&
          now.spec?.nodeName === nodeName &&
          // A deletion undone (the pod is back from before it): its kubelet must not confirm it.
          (cached.metadata?.deletionTimestamp === undefined || now.metadata?.deletionTimestamp !== undefined);
        if (!same) this.onPodEvent('DELETED', cached);
      }
    }
    for (const pod of listed.values()) this.onPodEvent('MODIFIED', pod);
    return this.watchPods(list.metadata.resourceVersion);
  }

  private onPodEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: Wire<V1Pod>): void {
    const key = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
    const nodeName = pod.spec?.nodeName ?? '';
    if (nodeName === '') return;
    let pods = this.podsByNode.get(nodeName);
    if (type === 'DELETED') {
      pods?.delete(key);
      this.byNode.get(nodeName)?.podDeleted(pod);
      return;
    }
    if (pods === undefined) {
      pods = new Map();
      this.podsByNode.set(nodeName, pods);
    }
    pods.set(key, pod);
    this.byNode.get(nodeName)?.podChanged(pod);
  }
}
