// The watch relay (docs/architecture.md#relay, docs/events.md): informers on Nodes, node Leases
// (kube-node-lease) and Pods bound to a node; the events of docs/events.md through an EventSink; leader
// election so one replica publishes.
//
// It observes and forwards; it decides nothing. The decisions about what to send are the pure
// functions of shaping.ts (which changes are relevant, probes, digests); this module wires them to the
// informers (reflector.ts), the leader election (leaderElection.ts), the digest loop (digestLoop.ts),
// the republish (republish.ts), the publishing loop and its bounded queue (publisher.ts,
// publishQueue.ts) and the clock (the Scheduler port: the system clock in production, virtual time in
// tests and `nlc simulate`).
//
// Every replica runs the informers and the probe tracker, so a standby that takes over publishes its
// first digest at once, with probe times it observed itself. Only the leader publishes. A replica that
// starts leading (a takeover, or a fresh start) republishes, once its informers have listed, what the
// functions need to converge whatever its predecessor failed to publish (recentChanges.ts): its current
// view (every node; the pods of nodes that are not Ready or NoExecute-tainted), the node deletions of
// the last 24 h and the changes of the last `replayWindow`. The view goes through the publisher's paced
// lane, after the digests and the live changes. Duplicates are harmless; consumers handle at-least-once
// delivery, and a newer stored resourceVersion wins over a republished node. The full republish is
// damped: at most once per `republishDamping` across replicas and restarts (the leader Lease records
// it); a relay that flaps replays its recent changes only, and says so (republish.ts).
import type { HttpLibrary, KubeConfig, Watch } from '@kubernetes/client-node';
import type { ConditionStatus, EpochMillis, Millis, Node, Pod } from '../shared/domain/types.js';
import { NodeChangedDetailType, PodChangedDetailType } from '../shared/events.js';
import { DefaultDigestPartMaxBytes } from '../shared/heartbeatDigest.js';
import type { EventSink } from '../shared/ports/eventSink.js';
import { Priority, type Scheduler, type TimerHandle } from '../shared/ports/scheduler.js';
import {
  DefaultLeaderElectionTimings,
  LeaderElector,
  type LeaderElectionConfig,
  type LeaderElectionTimings,
} from './leaderElection.js';
import { DigestLoop } from './digestLoop.js';
import { createInformers } from './informers.js';
import { Interner } from './intern.js';
import { silentLogger, type RelayLogger } from './logger.js';
import { RelayMetrics } from './metrics.js';
import type { ChangeEvent } from './publishQueue.js';
import { Publisher, type PublishBackoff } from './publisher.js';
import { RecentChanges } from './recentChanges.js';
import type { ChangeSource, ReflectorBackoff, ReflectorStatus } from './reflector.js';
import { RepublishCursor, republishView, type RepublishKind } from './republish.js';
import {
  forgetNode,
  newProbeTracker,
  nodeChanged,
  observeLease,
  observeNodeStatus,
  podChanged,
} from './shaping.js';

export { BoundPodsFieldSelector, NodeLeaseNamespace } from './informers.js';

/** The leader Lease's annotation of the last full republish (ISO 8601, the writer's clock). */
export const ViewRepublishedAnnotation = 'nlc.io/view-republished-at';
/**
 * The leader Lease's annotation of a full republish still under way: the time of the full republish
 * (as ViewRepublishedAnnotation has it), a space, and the first other node (by name) the bus has not
 * accepted yet; empty once it is done. A successor within the damping window resumes from there.
 */
export const RepublishResumeAnnotation = 'nlc.io/view-republish-resume-from';
/** The leader Lease's annotation of the relay terms of the last hour (ISO 8601, comma-separated). */
export const RecentTermsAnnotation = 'nlc.io/recent-terms';
/** Terms the annotation keeps at most. */
const MaxRecentTerms = 30;
/** A full republish at most once per 30 min, across replicas and restarts. */
export const DefaultRepublishDamping: Millis = 30 * 60_000;
/** How far ahead of this replica's clock a time another replica recorded may be and still count. */
const RecordedTimeSlack: Millis = 30_000;
/** More leader changes than this within an hour is logged as flapping. */
export const DefaultTakeoverWarningPerHour = 6;
export type { PublishBackoff } from './publisher.js';

export interface RelayOptions {
  readonly kubeConfig: KubeConfig;
  /** The cluster name every event carries (a DNS-1123 label). */
  readonly cluster: string;
  readonly sink: EventSink;
  readonly scheduler: Scheduler;
  /** The digest period (the controller's --node-monitor-period). */
  readonly nodeMonitorPeriod: Millis;
  /**
   * How often a digest goes out while nothing is going on (digestLoop.ts). Absent: every period (the
   * relay process sets NLC_RELAY_QUIET_DIGEST_PERIOD, 15 s by default).
   */
  readonly quietDigestPeriod?: Millis;
  /** This replica's identity: the leader-election holder and the digests' relayId (the pod name). */
  readonly relayId: string;
  /**
   * Leader election on a Lease (namespace and name; the timings default to client-go's). `false`: a
   * single replica that always publishes (local runs).
   */
  readonly leaderElection: (Omit<LeaderElectionConfig, 'identity'> & Partial<LeaderElectionTimings>) | false;
  readonly logger?: RelayLogger;
  readonly metrics?: RelayMetrics;
  /** Digest part size (DefaultDigestPartMaxBytes: fits the 256 KB entry limit of every partition). */
  readonly digestPartMaxBytes?: number;
  /** Pending Node/Pod Changed kept while the bus is unreachable (200,000). */
  readonly maxPendingChanges?: number;
  /** Events per publish call (500), so a digest never waits behind a whole first list. */
  readonly publishBatchSize?: number;
  /** Backoff of the publish queue after a failed publish (0.5 s doubling to 30 s). */
  readonly publishBackoff?: Partial<PublishBackoff>;
  /** How far back a new leader replays observed changes (leaseDuration + renewDeadline + 2 retryPeriods). */
  readonly replayWindow?: Millis;
  /** Recent changes kept for a takeover (200,000). */
  readonly maxRecentChanges?: number;
  /** How far back a new leader republishes node deletions (24 h). */
  readonly deletedNodesWindow?: Millis;
  /**
   * Events a second at most of a new leader's republished view (250: 500 rule invocations a second,
   * under every region's EventBridge invocation quota; 5,000 nodes in 20 s). Infinity: unpaced.
   */
  readonly republishRate?: number;
  /**
   * A full republish (the view and the node deletions) is made at most once per this window, across
   * every replica and restart (recorded on the leader Lease; 30 min). A relay without leader election
   * has nowhere to record it and always republishes in full.
   */
  readonly republishDamping?: Millis;
  /** Leader changes within an hour above which the relay warns that it flaps (6). */
  readonly takeoverWarningPerHour?: number;
  /** Timeout of one list request (60 s: a page of 500 pods from a busy API server). */
  readonly listTimeoutMs?: Millis;
  readonly reflectorBackoff?: Partial<ReflectorBackoff>;
  /**
   * How long the lease watch may deliver nothing, while leases exist, before it is taken for stalled and
   * replaced by a relist (20 s: kubelets renew every 10 s; keep it well within nodeMonitorGracePeriod).
   */
  readonly leaseWatchStallTimeoutMs?: Millis;
  /**
   * The same for the node and pod watches (and the lease watch without leases), which may be quiet and
   * rely on the API server's bookmarks, sent about every minute (3 min). 0: no watchdog on them.
   */
  readonly watchStallTimeoutMs?: Millis;
  readonly random?: () => number;
  /**
   * Sends each list request instead of node-fetch, and `watch` opens the watches instead of
   * client-node's Watch: `nlc simulate` serves both in process (local/simulate/), so the relay runs
   * unchanged on virtual time.
   */
  readonly transport?: HttpLibrary;
  readonly watch?: Pick<Watch, 'watch'>;
}

export interface RelayStatus {
  readonly relayId: string;
  readonly leader: boolean;
  readonly leaderSince: EpochMillis | undefined;
  /** The sequence the next digest will carry. */
  readonly nextSequence: number;
  /** Every informer completed its first list. */
  readonly synced: boolean;
  readonly informers: readonly ReflectorStatus[];
  readonly pendingEvents: number;
  /** Of pendingEvents, the republished ones still waiting for their pace. */
  readonly pendingRepublished: number;
  readonly trackedNodes: number;
  readonly recentChanges: number;
}

export interface Relay {
  /** Starts the informers and the election, and resolves at once: `synced()` tells when the lists are done. */
  start(): Promise<void>;
  /**
   * Graceful stop: stops the informers and the digests, publishes what is pending (as leader, for at
   * most `flushTimeoutMs`), then releases the leader Lease so a standby takes over at once. What could
   * not be published is logged with its count, never dropped silently.
   */
  stop(options?: { readonly flushTimeoutMs?: Millis }): Promise<void>;
  isLeader(): boolean;
  /** Every informer completed its first list (the readiness of the process). */
  synced(): boolean;
  status(): RelayStatus;
  readonly metrics: RelayMetrics;
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * The relay over a KubeConfig and an EventSink.
 *
 * @example
 * const relay = createRelay({ kubeConfig, cluster: 'prod', sink, scheduler: new RealScheduler(),
 *   nodeMonitorPeriod: 5_000, relayId: process.env.POD_NAME,
 *   leaderElection: { namespace: 'nlc-system', name: 'nlc-relay' } });
 * await relay.start();
 * process.on('SIGTERM', () => void relay.stop());
 */
export function createRelay(options: RelayOptions): Relay {
  const { scheduler, cluster, sink, relayId, kubeConfig } = options;
  const logger = options.logger ?? silentLogger;
  const metrics = options.metrics ?? new RelayMetrics();
  const random = options.random ?? Math.random;
  const partMaxBytes = options.digestPartMaxBytes ?? DefaultDigestPartMaxBytes;
  const timings: LeaderElectionTimings = {
    ...DefaultLeaderElectionTimings,
    ...(options.leaderElection === false ? {} : options.leaderElection),
  };
  const replayWindow =
    options.replayWindow ?? timings.leaseDuration + timings.renewDeadline + 2 * timings.retryPeriod;

  const tracker = newProbeTracker();
  const interner = new Interner();
  const recent = new RecentChanges({
    window: replayWindow,
    max: options.maxRecentChanges ?? 200_000,
    ...(options.deletedNodesWindow !== undefined && { deletedNodesWindow: options.deletedNodesWindow }),
  });

  // Leadership state. The publisher's terms follow it.
  let leading = false;
  let leaderSince: EpochMillis | undefined;
  /** This term has not republished yet (it does once the informers have listed). */
  let republishDue = false;
  let stopped = false;
  let syncedAt: EpochMillis | undefined;
  let digestTimer: TimerHandle | undefined;
  let housekeepingTimer: TimerHandle | undefined;
  /** This term's full (or resumed) republish, while its other nodes are being sent. */
  let progress: { readonly fullAt: string; readonly cursor: RepublishCursor } | undefined;

  const canPublish = (): boolean => leading && !stopped && (elector === undefined || elector.isLeader());
  const publisher = new Publisher({
    sink,
    scheduler,
    metrics,
    logger,
    random,
    maxPendingChanges: options.maxPendingChanges ?? 200_000,
    batchSize: options.publishBatchSize ?? 500,
    republishRate: options.republishRate ?? 250,
    backoff: { initialMs: 500, maxMs: 30_000, ...options.publishBackoff },
    canPublish,
    onRepublished: (events) => {
      if (progress === undefined) return;
      let moved = false;
      for (const event of events) {
        if (event.detailType === NodeChangedDetailType)
          moved = progress.cursor.accepted(event.detail.node.name) || moved;
      }
      if (moved) recordProgress(progress);
    },
  });

  // ---------------------------------------------------------------------------------------------
  // Informers

  const {
    leases,
    nodes,
    pods,
    all: reflectors,
  } = createInformers({
    kubeConfig,
    scheduler,
    logger,
    metrics,
    random,
    interner,
    ...(options.listTimeoutMs !== undefined && { listTimeoutMs: options.listTimeoutMs }),
    ...(options.reflectorBackoff !== undefined && { backoff: options.reflectorBackoff }),
    ...(options.leaseWatchStallTimeoutMs !== undefined && {
      leaseWatchStallTimeoutMs: options.leaseWatchStallTimeoutMs,
    }),
    ...(options.watchStallTimeoutMs !== undefined && { watchStallTimeoutMs: options.watchStallTimeoutMs }),
    ...(options.transport !== undefined && { transport: options.transport }),
    ...(options.watch !== undefined && { watch: options.watch }),
    handlers: {
      lease: (lease) => {
        observeLease(tracker, lease.nodeName, lease.renewTime, scheduler.now(), lease.resourceVersion);
      },
      node: onNode,
      pod: onPod,
      synced: () => {
        syncedAt = scheduler.now();
        logger.info('informers synced', {
          nodes: nodes.status().objects,
          leases: leases.status().objects,
          pods: pods.status().objects,
        });
        if (leading) republish();
      },
    },
  });

  function onNode(old: Node | undefined, next: Node | undefined, source: ChangeSource): void {
    // A node deleted and re-created under the same name between two lists: two objects, as a watch
    // would have shown them.
    if (old !== undefined && next !== undefined && old.uid !== next.uid) {
      onNode(old, undefined, source);
      onNode(undefined, next, source);
      return;
    }
    const now = scheduler.now();
    if (next !== undefined) {
      if (observeNodeStatus(tracker, next, now) === 'baseline') {
        // The node's lease may be cached already: take it as the baseline now, not at its next renewal.
        const lease = leases.get(next.name);
        observeLease(tracker, next.name, lease?.renewTime, now, lease?.resourceVersion);
      }
    } else if (old !== undefined) {
      forgetNode(tracker, old.name);
    }
    const detail = nodeChanged(cluster, old, next);
    if (detail !== undefined) change({ detailType: NodeChangedDetailType, detail }, source, now);
    if (next !== undefined) releaseReadyLoss(next, now);
  }

  /** The Ready status of a node as the relay's cache has it (undefined: unknown node or no condition). */
  const nodeReady = (name: string): ConditionStatus | undefined =>
    nodes.get(name)?.conditions.find((c) => c.type === 'Ready')?.status;

  // A pod that lost Ready while its node still looks Ready here: the node's update may be next on its
  // own watch (a controller marks the node, then its pods; two watches keep no order between them). Held
  // per node for a while, and published as Pod Changed once the node turns out not Ready (shaping.ts
  // podChangeIsRelevant); dropped otherwise. Bounded.
  const heldReadyLoss = new Map<string, { old: Pod; next: Pod; source: ChangeSource; at: EpochMillis }[]>();
  let heldCount = 0;
  const HeldReadyLossMs = 30_000;
  const MaxHeldReadyLoss = 10_000;

  function holdReadyLoss(old: Pod, next: Pod, source: ChangeSource, now: EpochMillis): void {
    if (heldCount >= MaxHeldReadyLoss) {
      for (const [name, list] of heldReadyLoss) {
        const kept = list.filter((h) => now - h.at <= HeldReadyLossMs);
        heldCount -= list.length - kept.length;
        if (kept.length === 0) heldReadyLoss.delete(name);
        else heldReadyLoss.set(name, kept);
      }
      if (heldCount >= MaxHeldReadyLoss) return;
    }
    const list = heldReadyLoss.get(next.nodeName) ?? [];
    list.push({ old, next, source, at: now });
    heldReadyLoss.set(next.nodeName, list);
    heldCount++;
  }

  function releaseReadyLoss(node: Node, now: EpochMillis): void {
    const list = heldReadyLoss.get(node.name);
    if (list === undefined) return;
    heldReadyLoss.delete(node.name);
    heldCount -= list.length;
    const ready = node.conditions.find((c) => c.type === 'Ready')?.status;
    if (ready === 'True') return;
    for (const held of list) {
      if (now - held.at > HeldReadyLossMs) continue;
      const detail = podChanged(cluster, held.old, held.next, () => ready);
      if (detail !== undefined) change({ detailType: PodChangedDetailType, detail }, held.source, now);
    }
  }

  function onPod(old: Pod | undefined, next: Pod | undefined, source: ChangeSource): void {
    if (old !== undefined && next !== undefined && old.uid !== next.uid) {
      onPod(old, undefined, source);
      onPod(undefined, next, source);
      return;
    }
    const detail = podChanged(cluster, old, next, nodeReady);
    if (
      detail === undefined &&
      old !== undefined &&
      next !== undefined &&
      next.nodeName !== '' &&
      old.ready === 'True' &&
      next.ready === 'False' &&
      nodeReady(next.nodeName) === 'True'
    )
      holdReadyLoss(old, next, source, scheduler.now());
    if (detail !== undefined) change({ detailType: PodChangedDetailType, detail }, source, scheduler.now());
  }

  function change(event: ChangeEvent, source: ChangeSource, now: EpochMillis): void {
    // A first list is not a change: the current view, republished once every list is done, says it.
    if (source === 'initial') return;
    const dropped = recent.add({ event, observedAt: now });
    if (dropped > 0) metrics.eventsDropped.inc({ reason: 'replay_full' }, dropped);
    if (leading) publisher.addChange(event, now);
  }

  // ---------------------------------------------------------------------------------------------
  // Digests (digestLoop.ts)

  const digests = new DigestLoop({
    cluster,
    relayId,
    nodeMonitorPeriod: options.nodeMonitorPeriod,
    ...(options.quietDigestPeriod !== undefined && { quietPeriod: options.quietDigestPeriod }),
    partMaxBytes,
    clock: scheduler,
    tracker,
    leases,
    nodes,
    publisher,
    metrics,
    logger,
    leaderSince: () => (canPublish() ? leaderSince : undefined),
  });

  // ---------------------------------------------------------------------------------------------
  // Leadership

  function startedLeading(since: EpochMillis): void {
    leading = true;
    leaderSince = since;
    digests.startTerm();
    publisher.startTerm();
    metrics.isLeader.set(1);
    metrics.leadershipChanges.inc({ change: 'started' });
    logger.info('publishing as leader', { relayId, leaderSince: since });
    republishDue = true;
    if (syncedAt !== undefined) republish();
    // The first digest at once: consumers hear from the new leader without waiting a period.
    digestTimer = scheduler.every(options.nodeMonitorPeriod, since, Priority.Relay, () => digests.tick());
    publisher.scheduleFlush();
  }

  // Once per term, after the informers have listed (republish.ts says why), damped: a full republish at
  // most once per republishDamping, whichever replica made it (the Lease records it).
  function republish(): void {
    if (!republishDue || !leading) return;
    republishDue = false;
    const now = scheduler.now();
    // Written on another replica's clock: a time in the future (a clock ahead) damps nothing, so a bad
    // clock cannot hold back the full republishes of the others.
    const recorded = (at: number): boolean => at <= now + RecordedTimeSlack;
    const lastFullText = elector?.annotation(ViewRepublishedAnnotation) ?? '';
    const lastFull = Date.parse(lastFullText);
    const full = !(
      recorded(lastFull) && now - lastFull < (options.republishDamping ?? DefaultRepublishDamping)
    );
    // Within the window, a full republish a predecessor left unfinished (its Lease record says where).
    const [resumeOf, resumeFrom] = (elector?.annotation(RepublishResumeAnnotation) ?? '').split(' ');
    const what: RepublishKind = full
      ? { kind: 'full' }
      : resumeOf === lastFullText && resumeFrom !== undefined && resumeFrom !== ''
        ? { kind: 'resumed', from: resumeFrom }
        : { kind: 'damped' };
    const otherNodes = republishView(
      { cluster, relayId, recent, nodes, pods, publisher, metrics, logger },
      now,
      what,
    );
    const fullAt = full ? new Date(now).toISOString() : lastFullText;
    if (full) elector?.setAnnotation(ViewRepublishedAnnotation, fullAt);
    if (what.kind !== 'damped' && elector !== undefined) {
      progress = { fullAt, cursor: new RepublishCursor(otherNodes) };
      recordProgress(progress);
    }
    // The terms of the last hour, whichever replica or process led them: on the Lease too.
    const terms = (elector?.annotation(RecentTermsAnnotation) ?? '')
      .split(',')
      .map((at) => Date.parse(at))
      .filter((at) => recorded(at) && now - at < 3_600_000);
    terms.push(leaderSince ?? now);
    elector?.setAnnotation(
      RecentTermsAnnotation,
      terms
        .slice(-MaxRecentTerms)
        .map((at) => new Date(at).toISOString())
        .join(','),
    );
    const takeovers = terms.length;
    metrics.takeoversLastHour.set(takeovers);
    const warnAbove = options.takeoverWarningPerHour ?? DefaultTakeoverWarningPerHour;
    if (takeovers > warnAbove) {
      logger.warn('the relay leader changed more often than expected: is a replica crash-looping?', {
        relayId,
        takeoversLastHour: takeovers,
        threshold: warnAbove,
        republish: full ? 'full' : 'damped',
      });
    }
  }

  /** Where this term's republish has got, on the Lease (with the next renewal) for a successor. */
  function recordProgress(p: NonNullable<typeof progress>): void {
    const next = p.cursor.next;
    elector?.setAnnotation(RepublishResumeAnnotation, next === undefined ? '' : `${p.fullAt} ${next}`);
    if (next === undefined) progress = undefined;
  }

  function stoppedLeading(reason: string): void {
    if (!leading) return;
    leading = false;
    progress = undefined;
    leaderSince = undefined;
    republishDue = false;
    if (digestTimer !== undefined) scheduler.cancel(digestTimer);
    digestTimer = undefined;
    const unsent = publisher.endTerm();
    metrics.isLeader.set(0);
    metrics.leadershipChanges.inc({ change: 'stopped' });
    logger.info('stopped publishing', { relayId, reason, unsentHandedOver: unsent });
  }

  const elector =
    options.leaderElection === false
      ? undefined
      : new LeaderElector(
          { ...options.leaderElection, ...timings, identity: relayId },
          {
            kubeConfig,
            scheduler,
            logger,
            random,
            ...(options.transport !== undefined && { transport: options.transport }),
            callbacks: { onStartedLeading: startedLeading, onStoppedLeading: stoppedLeading },
          },
        );

  // ---------------------------------------------------------------------------------------------
  // Housekeeping: bounded memory and the gauges

  function housekeeping(): void {
    const now = scheduler.now();
    recent.prune(now);
    metrics.pendingEvents.set(publisher.pending);
    metrics.pendingRepublished.set(publisher.pendingRepublished);
    const oldest = publisher.oldestObservedAt();
    metrics.oldestPendingAge.set(oldest === undefined ? 0 : Math.max(0, now - oldest) / 1000);
    for (const reflector of reflectors) {
      const status = reflector.status();
      metrics.cachedObjects.set({ resource: status.resource }, status.objects);
    }
  }

  // ---------------------------------------------------------------------------------------------

  async function stop(stopOptions: { readonly flushTimeoutMs?: Millis } = {}): Promise<void> {
    if (stopped) return;
    stopped = true;
    for (const reflector of reflectors) reflector.stop();
    for (const timer of [housekeepingTimer, digestTimer]) if (timer !== undefined) scheduler.cancel(timer);
    housekeepingTimer = digestTimer = undefined;
    if (leading) {
      // Still the leader: publish what is pending, within the shutdown budget, before handing over.
      const unpublished = await publisher.drainBeforeExit(
        AbortSignal.timeout(stopOptions.flushTimeoutMs ?? 5_000),
        () => elector === undefined || elector.isLeader(),
      );
      // The successor republishes its view (recentChanges.ts): these are covered, not lost. A view
      // still being republished is routine (a rolling update), so it alone is no error.
      const republishPending = publisher.pendingRepublished;
      if (unpublished > republishPending) {
        logger.error('stopping with unpublished events', {
          unpublished: unpublished - republishPending,
          republishPending,
        });
      } else if (republishPending > 0) {
        logger.info(
          'stopping before the republished view was all sent; the next leader republishes its own',
          {
            republishPending,
          },
        );
      }
    }
    if (elector !== undefined) await elector.stop({ release: true });
    else stoppedLeading('stopped');
    housekeeping();
  }

  return {
    start() {
      stopped = false;
      housekeepingTimer = scheduler.every(
        options.nodeMonitorPeriod,
        scheduler.now(),
        Priority.Relay,
        housekeeping,
      );
      if (elector !== undefined) elector.start();
      else startedLeading(scheduler.now());
      // Not awaited: a large cluster's first list takes a while, and failures are retried inside.
      for (const reflector of reflectors) {
        reflector.start().catch((error: unknown) => {
          logger.error('informer failed to start', {
            resource: reflector.status().resource,
            error: describeError(error),
          });
        });
      }
      return Promise.resolve();
    },
    stop,
    isLeader: () => canPublish(),
    synced: () => syncedAt !== undefined,
    status: () => ({
      relayId,
      leader: canPublish(),
      leaderSince,
      nextSequence: digests.nextSequence,
      synced: syncedAt !== undefined,
      informers: reflectors.map((r) => r.status()),
      pendingEvents: publisher.pending,
      pendingRepublished: publisher.pendingRepublished,
      trackedNodes: tracker.nodes.size,
      recentChanges: recent.size,
    }),
    metrics,
  };
}
