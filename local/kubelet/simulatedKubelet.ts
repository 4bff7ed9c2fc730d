// One simulated kubelet: the parts of upstream's kubelet the node lifecycle controller can see.
// - Node status (pkg/kubelet/kubelet_node_status.go syncNodeStatus/tryUpdateNodeStatus): every
//   nodeStatusUpdateFrequency (10 s) it computes the conditions and posts them when they changed or
//   nodeStatusReportFrequency (5 min) has passed since its last post; then only heartbeats move.
// - Node lease (component-helpers lease controller): renewed every 0.25 × 40 s = 10 s, created at the
//   first renewal.
// - Pods (status manager, pod workers): a pod bound to the node is reported Running and Ready as soon
//   as the kubelet sees it; every 10 s (the status manager's sync period) a pod whose status differs
//   from that is reported again (so a Ready=False written by the controller is undone by a healthy
//   kubelet, as upstream's status manager does); a deleted pod is confirmed with a delete of grace 0.
// - Registration: the Node is created (through the API, so admission applies) when the kubelet starts
//   and finds none.
// All of it runs on the Scheduler at Priority.Kubelet, so it happens in virtual or real time alike.
//
// Deviations (each keeps the simulation deterministic and simple; none changes what the controller
// reads): no jitter on the loops (upstream JitterUntil adds up to 4 %); a restarted kubelet's loops
// restart at its start instant; a deleted pod is confirmed min(grace period, podTerminationDelay)
// after the kubelet sees the deletion instead of when its containers exit; the pod is not moved to a
// terminal phase first; no Events are recorded; a kubelet whose Node is deleted stops (as if the
// machine were removed) and its Lease is deleted as the garbage collector would.
import type { V1Lease, V1Node, V1Pod } from '@kubernetes/client-node';
import type { ConditionStatus, EpochMillis, Millis } from '../../shared/domain/types.js';
import { Priority, type Scheduler, type TimerHandle } from '../../shared/ports/scheduler.js';
import { ApiStatusError, type ApiStore, type Wire } from '../apiserver/index.js';
import { formatMicroTime } from '../apiserver/timestamps.js';
import {
  type KubeletConditionType,
  type NodeRegistration,
  type ReportedCondition,
  type WireCondition,
  NamespaceNodeLease,
  healthyStatus,
  isKubeletCondition,
  kubeletConditionTypes,
  newNodeLease,
  nodeConditionsHaveChanged,
  nodeOwner,
  nodeLeaseRenewIntervalFraction,
  registrationNode,
  reportedCondition,
  setCondition,
  setNodeConditions,
} from './nodeStatus.js';
import { isRunningAndReady, runningPodStatus } from './pods.js';

/**
 * - `running`: renews, posts status, runs and finalizes pods;
 * - `stopped`: does nothing (crashed or partitioned); `start()` brings it back;
 * - `unregistered`: never came up (its Node, if any, has no conditions and no Lease exists);
 * - `gone`: its Node was deleted; it does nothing any more.
 */
export type KubeletState = 'running' | 'stopped' | 'unregistered' | 'gone';

export interface KubeletSettings {
  /** How often status is computed (and posted when changed). 10 s upstream. */
  readonly nodeStatusUpdateFrequency: Millis;
  /** Unchanged status is posted at least this often. 5 min upstream. */
  readonly nodeStatusReportFrequency: Millis;
  /** Lease spec.leaseDurationSeconds; renewals every 0.25 × this. 40 s upstream. */
  readonly nodeLeaseDurationSeconds: number;
  /** The status manager's sync period: pods whose status drifted are reported again. 10 s upstream. */
  readonly podStatusSyncPeriod: Millis;
  /** A deleted pod is confirmed min(its grace period, this) after the kubelet sees the deletion. */
  readonly podTerminationDelay: Millis;
}

/** What a kubelet uses of its fleet. */
export interface KubeletContext {
  readonly store: ApiStore;
  readonly scheduler: Scheduler;
  readonly settings: KubeletSettings;
  /** The pods bound to a node as the fleet's watch last saw them (the kubelet's informer cache). */
  podsOn(nodeName: string): Iterable<Wire<V1Pod>>;
  /** The Node as the fleet's watch last saw it (undefined when it does not exist). */
  nodeOf(nodeName: string): Wire<V1Node> | undefined;
  /** A fresh pod IP. */
  allocatePodIP(): string;
  /** An API call failed; the kubelet carries on, as upstream's logs and retries on its next tick. */
  onApiError(error: ApiStatusError, where: { readonly node: string; readonly action: string }): void;
}

/** What a healthy kubelet reports for each of its conditions (read every 10 s by every kubelet). */
const healthyReports: Readonly<Record<KubeletConditionType, ReportedCondition>> = Object.freeze(
  Object.fromEntries(
    kubeletConditionTypes.map((type) => [type, Object.freeze(reportedCondition(type, healthyStatus(type)))]),
  ) as Record<KubeletConditionType, ReportedCondition>,
);

function isNotFound(error: unknown): boolean {
  return error instanceof ApiStatusError && error.code === 404;
}

function podKeyOf(pod: Wire<V1Pod>): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/** A kubelet loop: what runs every `period`. */
interface Loop {
  readonly period: Millis;
  readonly run: () => void;
}

/**
 * The loops as timers: neighbours of the same period (by default all three: 10 s) share one timer that
 * runs them in order. They start at the same instant, so one after the other is what one timer each
 * did at every shared instant, with a third of the timers for the scheduler to order (15,000 of them
 * at 5,000 nodes). Only neighbours: at an instant all loops share, each still runs in its place.
 *
 * @example
 * periodicLoops([{ period: 10_000, run: a }, { period: 10_000, run: b }, { period: 40_000, run: c }]);
 * // [{ period: 10_000, run: a then b }, { period: 40_000, run: c }]
 */
export function periodicLoops(loops: readonly Loop[]): Loop[] {
  const groups: Array<{ period: Millis; runs: Array<() => void> }> = [];
  for (const { period, run } of loops) {
    const last = groups.at(-1);
    if (last?.period === period) last.runs.push(run);
    else groups.push({ period, runs: [run] });
  }
  return groups.map(({ period, runs }) => ({
    period,
    run:
      runs.length === 1 && runs[0] !== undefined
        ? runs[0]
        : () => {
            for (const run of runs) run();
          },
  }));
}

/**
 * A kubelet for one node. Create it through KubeletFleet, which feeds it pod and node events.
 *
 * @example
 * const kubelet = fleet.addNode({ name: 'a-1', zone: 'zone-a' }); // registers, posts Ready, renews
 * kubelet.stop();                                                // no more renewals or status posts
 * kubelet.start();                                               // Ready=True posted at once
 */
export class SimulatedKubelet {
  readonly nodeName: string;
  /** The node's InternalIP. */
  readonly internalIP: string;
  private current: KubeletState;
  /** The kubelet's own conditions where they differ from a healthy node's (setCondition). */
  private readonly reported = new Map<KubeletConditionType, ReportedCondition>();
  /**
   * The Node's conditions (the stored, immutable list) last found to need no post, and `reported` as
   * it was then: the same list and the same reports give the same answer, so the next 10 s sync skips
   * the comparison (every kubelet syncs every 10 s; its status rarely changes).
   */
  private unchangedFor: { conditions: readonly WireCondition[]; reportedVersion: number } | undefined;
  private reportedVersion = 0;
  private lastStatusReportTime: EpochMillis | undefined;
  /** The Lease as last written: renewals update it without a read (upstream's latestLease). */
  private latestLease: Wire<V1Lease> | undefined;
  private loops: TimerHandle[] = [];
  /** Pod uid → the pending deletion confirmation. */
  private readonly terminations = new Map<string, TimerHandle>();
  /** Uids of the pods the kubelet has seen (those it has a pod worker for). */
  private readonly known = new Set<string>();
  /** Pod keys with a status post scheduled. */
  private readonly pendingStarts = new Set<string>();

  constructor(
    private readonly context: KubeletContext,
    readonly registration: NodeRegistration,
    internalIP: string,
    state: Exclude<KubeletState, 'gone'>,
  ) {
    this.nodeName = registration.name;
    this.internalIP = internalIP;
    this.current = state;
  }

  get state(): KubeletState {
    return this.current;
  }

  /** What the kubelet reports for one of its conditions. */
  reportedFor(type: KubeletConditionType): ReportedCondition {
    return this.reported.get(type) ?? healthyReports[type];
  }

  /**
   * The kubelet comes up: registers the Node when there is none, posts its status and renews its
   * Lease at once (a restarted kubelet has no last report time, so it always posts), reports its
   * pods, and from then on ticks every period.
   */
  start(): void {
    if (this.current === 'running' || this.current === 'gone') return;
    this.current = 'running';
    this.lastStatusReportTime = undefined;
    this.registerWithAPIServer();
    this.syncNodeStatus();
    this.renewLease();
    this.syncPods();
    this.startLoops(this.context.scheduler.now() + this.context.settings.nodeStatusUpdateFrequency);
  }

  /** The kubelet crashes or is cut off: no renewals, no status posts, no pod work. */
  stop(): void {
    if (this.current !== 'running') return;
    this.current = 'stopped';
    this.stopWork();
  }

  /**
   * Sets a condition. The kubelet's own (Ready, MemoryPressure, DiskPressure, PIDPressure) become what
   * it reports, posted at once when it runs (a stopped kubelet reports them when started). Any other
   * type (NetworkUnavailable, …) belongs to another agent (the route controller, a network plugin)
   * and is written to the Node at once, whatever the kubelet's state.
   */
  setCondition(type: string, status: ConditionStatus, reason?: string, message?: string): void {
    const reported = reportedCondition(type, status, reason, message);
    if (isKubeletCondition(type)) {
      this.reported.set(type, reported);
      this.reportedVersion++;
      if (this.current === 'running') this.syncNodeStatus();
      return;
    }
    const { store, scheduler } = this.context;
    const node = store.nodes.get(this.nodeName);
    const before = node.status?.conditions ?? [];
    const after = setCondition(before, type, reported, scheduler.now());
    if (nodeConditionsHaveChanged(before, after)) {
      store.nodes.updateStatus({ ...node, status: { ...node.status, conditions: after } });
    }
  }

  // --- called by the fleet ------------------------------------------------------------------------

  /** The seeded state at t = 0: a running kubelet last posted and renewed now, and ticks from now. */
  resumeSeeded(): void {
    if (this.current !== 'running') return;
    const now = this.context.scheduler.now();
    this.lastStatusReportTime = now;
    this.startLoops(now);
  }

  /** Sets a reported condition without posting (the initial state the seed writes). */
  presetCondition(type: KubeletConditionType, reported: ReportedCondition): void {
    this.reported.set(type, reported);
    this.reportedVersion++;
  }

  /** A pod bound to this node was added or changed. */
  podChanged(pod: Wire<V1Pod>): void {
    if (this.current !== 'running') return;
    const uid = pod.metadata?.uid ?? '';
    if (pod.metadata?.deletionTimestamp !== undefined) {
      this.scheduleTermination(pod);
      return;
    }
    if (this.known.has(uid)) return; // drift is the status manager's job, on its period
    this.known.add(uid);
    if (!isRunningAndReady(pod)) this.scheduleStart(pod);
  }

  /** A pod bound to this node is gone. */
  podDeleted(pod: Wire<V1Pod>): void {
    const uid = pod.metadata?.uid ?? '';
    const pending = this.terminations.get(uid);
    if (pending !== undefined) this.context.scheduler.cancel(pending);
    this.terminations.delete(uid);
    this.known.delete(uid);
  }

  /**
   * The Node was deleted: the kubelet is gone, and the garbage collector deletes the Lease the Node
   * owned (only that one: a new Node of the same name may already have a Lease of its own).
   */
  nodeDeleted(node: Wire<V1Node>): void {
    if (this.current === 'gone') return;
    this.current = 'gone';
    this.latestLease = undefined;
    this.stopWork();
    const ownerUid = node.metadata?.uid;
    const { scheduler, store } = this.context;
    scheduler.after(0, Priority.Kubelet, () => {
      let lease: Wire<V1Lease>;
      try {
        lease = store.leases.get(this.nodeName, { namespace: NamespaceNodeLease });
      } catch (error) {
        if (isNotFound(error)) return;
        throw error;
      }
      const owned = (lease.metadata?.ownerReferences ?? []).some((ref) => ref.uid === ownerUid);
      if (!owned) return;
      const preconditions = { uid: lease.metadata?.uid ?? '' };
      this.call('deleteLease', () =>
        store.leases.delete(this.nodeName, { namespace: NamespaceNodeLease, preconditions }),
      );
    });
  }

  // --- the loops ----------------------------------------------------------------------------------

  private startLoops(firstAt: EpochMillis): void {
    const { scheduler, settings } = this.context;
    const renewInterval = settings.nodeLeaseDurationSeconds * 1000 * nodeLeaseRenewIntervalFraction;
    this.loops = periodicLoops([
      {
        period: settings.nodeStatusUpdateFrequency,
        run: () => {
          this.syncNodeStatus();
        },
      },
      {
        period: renewInterval,
        run: () => {
          this.renewLease();
        },
      },
      {
        period: settings.podStatusSyncPeriod,
        run: () => {
          this.syncPods();
        },
      },
    ]).map(({ period, run }) => scheduler.every(period, firstAt, Priority.Kubelet, run));
  }

  private stopWork(): void {
    const { scheduler } = this.context;
    for (const handle of this.loops) scheduler.cancel(handle);
    this.loops = [];
    for (const handle of this.terminations.values()) scheduler.cancel(handle);
    this.terminations.clear();
    this.pendingStarts.clear();
    // A restarted kubelet rebuilds its pod workers from the API.
    this.known.clear();
  }

  /** Runs one API call; API errors are reported and swallowed (the next tick retries). */
  private call<T>(action: string, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (error) {
      if (!(error instanceof ApiStatusError)) throw error;
      this.context.onApiError(error, { node: this.nodeName, action });
      return undefined;
    }
  }

  /** kubelet registerWithAPIServer: create the Node, or adopt the one that exists. */
  private registerWithAPIServer(): void {
    if (this.context.nodeOf(this.nodeName) !== undefined) return;
    this.call('registerNode', () =>
      this.context.store.nodes.create(registrationNode(this.registration, this.internalIP)),
    );
  }

  /** tryUpdateNodeStatus: compute the conditions; post when changed or the report is due. */
  private syncNodeStatus(): void {
    if (this.current !== 'running') return;
    const { store, scheduler, settings } = this.context;
    const now = scheduler.now();
    // Read from the watch cache, as upstream's first try reads from the API server's cache.
    const node = this.context.nodeOf(this.nodeName);
    if (node === undefined) return; // deleted: nothing to post to
    const before: readonly WireCondition[] = node.status?.conditions ?? [];
    const reportDue =
      this.lastStatusReportTime === undefined ||
      now - this.lastStatusReportTime >= settings.nodeStatusReportFrequency;
    const known = this.unchangedFor;
    if (!reportDue && known?.conditions === before && known.reportedVersion === this.reportedVersion) return;
    const after = setNodeConditions(before, (type) => this.reportedFor(type), now);
    if (!reportDue && !nodeConditionsHaveChanged(before, after)) {
      this.unchangedFor = { conditions: before, reportedVersion: this.reportedVersion };
      return;
    }
    const posted = this.call('updateNodeStatus', () =>
      store.nodes.updateStatus({ ...node, status: { ...node.status, conditions: after } }),
    );
    if (posted !== undefined) this.lastStatusReportTime = now;
  }

  /**
   * The lease controller's sync: update the last written Lease with renewTime = now; when that fails
   * (someone else changed or deleted it) or there is none yet, read it, or create it.
   */
  private renewLease(): void {
    if (this.current !== 'running') return;
    const { store, scheduler, settings } = this.context;
    const now = scheduler.now();
    if (this.latestLease !== undefined) {
      try {
        this.latestLease = this.renew(this.latestLease, now);
        return;
      } catch (error) {
        if (!(error instanceof ApiStatusError && (error.code === 404 || error.code === 409))) throw error;
        this.latestLease = undefined;
      }
    }
    let lease: Wire<V1Lease> | undefined;
    try {
      lease = store.leases.get(this.nodeName, { namespace: NamespaceNodeLease });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    if (lease === undefined) {
      const nodeUid = this.context.nodeOf(this.nodeName)?.metadata?.uid;
      this.latestLease = this.call('createLease', () =>
        store.leases.create(newNodeLease(this.nodeName, nodeUid, settings.nodeLeaseDurationSeconds, now)),
      );
      return;
    }
    const found = lease;
    this.latestLease = this.call('renewLease', () => this.renew(found, now));
  }

  /** Updates `lease` with renewTime = now. */
  private renew(lease: Wire<V1Lease>, now: EpochMillis): Wire<V1Lease> {
    // setNodeOwnerFunc: a Lease without owner gets the Node as owner once the Node can be read.
    const nodeUid = this.context.nodeOf(this.nodeName)?.metadata?.uid;
    const adopt = (lease.metadata?.ownerReferences ?? []).length === 0 && nodeUid !== undefined;
    return this.context.store.leases.update({
      ...lease,
      ...(adopt && { metadata: { ...lease.metadata, ownerReferences: nodeOwner(this.nodeName, nodeUid) } }),
      spec: { ...lease.spec, renewTime: formatMicroTime(now) },
    });
  }

  /** The status manager's sync: every pod reports Running and Ready, deleted ones get confirmed. */
  private syncPods(): void {
    if (this.current !== 'running') return;
    for (const pod of this.context.podsOn(this.nodeName)) {
      this.known.add(pod.metadata?.uid ?? '');
      if (pod.metadata?.deletionTimestamp !== undefined) this.scheduleTermination(pod);
      else if (!isRunningAndReady(pod)) this.postRunning(podKeyOf(pod));
    }
  }

  private scheduleStart(pod: Wire<V1Pod>): void {
    const key = podKeyOf(pod);
    if (this.pendingStarts.has(key)) return;
    this.pendingStarts.add(key);
    this.context.scheduler.after(0, Priority.Kubelet, () => {
      if (!this.pendingStarts.delete(key)) return; // the kubelet stopped meanwhile
      this.postRunning(key);
    });
  }

  /** Reports the pod Running and Ready (reading it fresh: it may have changed since it was seen). */
  private postRunning(key: string): void {
    if (this.current !== 'running') return;
    const { store, scheduler } = this.context;
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    let pod: Wire<V1Pod>;
    try {
      pod = store.pods.get(name, { namespace });
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    if (pod.spec?.nodeName !== this.nodeName || pod.metadata?.deletionTimestamp !== undefined) return;
    if (isRunningAndReady(pod)) return;
    // A pod keeps its IP across kubelet restarts.
    const podIP = pod.status?.podIP ?? this.context.allocatePodIP();
    const status = runningPodStatus(pod, { hostIP: this.internalIP, podIP }, scheduler.now());
    this.call('updatePodStatus', () => store.pods.updateStatus({ ...pod, status }));
  }

  /** Confirms the deletion (grace 0, uid precondition, as the status manager does) after a while. */
  private scheduleTermination(pod: Wire<V1Pod>): void {
    const uid = pod.metadata?.uid ?? '';
    if (this.terminations.has(uid)) return;
    const { scheduler, settings, store } = this.context;
    const graceSeconds = pod.metadata?.deletionGracePeriodSeconds ?? 0;
    const delay = Math.min(graceSeconds * 1000, settings.podTerminationDelay);
    const namespace = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const handle = scheduler.after(delay, Priority.Kubelet, () => {
      if (this.current !== 'running') return;
      try {
        store.pods.delete(name, { namespace, gracePeriodSeconds: 0, preconditions: { uid } });
      } catch (error) {
        // Gone already, or a new pod of the same name (uid precondition): nothing to confirm.
        const gone = error instanceof ApiStatusError && (error.code === 404 || error.code === 409);
        if (!(error instanceof ApiStatusError)) throw error;
        if (!gone) this.context.onApiError(error, { node: this.nodeName, action: 'deletePod' });
      } finally {
        // After the delete: its own MODIFIED event must not schedule a second confirmation.
        this.terminations.delete(uid);
      }
    });
    this.terminations.set(uid, handle);
  }
}
