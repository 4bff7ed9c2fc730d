// Leader election on a coordination.k8s.io/v1 Lease: a port of client-go's
// tools/leaderelection (leaderelection.go tryAcquireOrRenew, renew, release) with its LeaseLock, so two
// relay replicas never both publish.
//
// - A candidate tries every retryPeriod (jittered by up to 1.2 × retryPeriod, as JitterUntil): it
//   acquires the Lease when there is none, when its holder is empty (released), or when the record has
//   not changed for leaseDuration *as observed on this replica's clock* (client-go's observedTime: the
//   holder's renewTime is never compared with our clock, so clock skew cannot steal a lease).
// - The leader renews every retryPeriod, with the Lease's resourceVersion as precondition (a 409 is a
//   lost race, never an overwrite). If it has not renewed for renewDeadline, it steps down, and stops
//   publishing at that instant: renewDeadline < leaseDuration, so it has stopped before any other
//   replica can see the lease expire. `isLeader()` also checks the deadline itself, so a stalled timer
//   can never let a deposed leader publish.
// - acquireTime and leaseTransitions as client-go keeps them (a new holder bumps leaseTransitions).
// - release (graceful shutdown): holderIdentity "" and leaseDurationSeconds 1, so a standby takes over
//   at its next try instead of waiting out the lease.
// Deviation: after stepping down, client-go's callers usually exit; the relay stays a candidate with
// warm caches, and a later term starts with a new leaderSince: the acquireTime it writes into the Lease,
// which the functions read back to verify a digest's term (HeartbeatDigest ordering).
//
// One concern, kept whole: one candidate's loop over one Lease, read side by side with
// leaderelection.go.
import {
  ApiException,
  CoordinationV1Api,
  V1MicroTime,
  type ConfigurationOptions,
  type HttpLibrary,
  type KubeConfig,
  type V1Lease,
} from '@kubernetes/client-node';
import {
  abortableSleep,
  createAgentPool,
  resilientHttpLibrary,
  type HttpBehaviour,
} from '../shared/adapters/kubernetes/resilientHttp.js';
import { kubeTimeToMillis } from '../shared/adapters/kubernetes/mapping.js';
import type { EpochMillis, Millis } from '../shared/domain/types.js';
import { ConfigError } from '../shared/errors.js';
import { Priority, type Scheduler, type TimerHandle } from '../shared/ports/scheduler.js';
import { silentLogger, type RelayLogger } from './logger.js';

export interface LeaderElectionTimings {
  /** How long a non-leader waits after the last observed change of the record before taking over. */
  readonly leaseDuration: Millis;
  /** How long the leader keeps leading without a successful renewal. */
  readonly renewDeadline: Millis;
  /** Time between tries. */
  readonly retryPeriod: Millis;
}

/** client-go's (and kube-controller-manager's) defaults: 15 s, 10 s, 2 s. */
export const DefaultLeaderElectionTimings: LeaderElectionTimings = Object.freeze({
  leaseDuration: 15_000,
  renewDeadline: 10_000,
  retryPeriod: 2_000,
});

/** client-go's JitterFactor for the acquire loop. */
const jitterFactor = 1.2;

export interface LeaderElectionConfig extends Partial<LeaderElectionTimings> {
  /** The Lease's namespace (the relay's own, POD_NAMESPACE). */
  readonly namespace: string;
  /** The Lease's name. */
  readonly name: string;
  /** holderIdentity: unique per replica (the pod name). */
  readonly identity: string;
}

export interface LeaderCallbacks {
  /** This replica now leads; `leaderSince` (its clock) is the leadership term. */
  onStartedLeading(leaderSince: EpochMillis): void;
  /** It no longer leads (deadline passed, lease lost, released or stopped); called before any release write. */
  onStoppedLeading(reason: string): void;
}

export interface LeaderElectorOptions {
  readonly kubeConfig: KubeConfig;
  readonly scheduler: Scheduler;
  readonly callbacks: LeaderCallbacks;
  readonly logger?: RelayLogger;
  readonly random?: () => number;
  /** Timeout of one Lease request (renewDeadline / 2 by default, and never past the renew deadline). */
  readonly requestTimeoutMs?: Millis;
  /** Sends the Lease requests instead of node-fetch (the in-process transport of tests and `nlc simulate`). */
  readonly transport?: HttpLibrary;
}

/** The leader-election record, as stored in the Lease spec. */
interface LeaseRecord {
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  readonly acquireTime?: EpochMillis;
  readonly renewTime?: EpochMillis;
  readonly leaseTransitions: number;
}

function recordOf(lease: V1Lease): LeaseRecord {
  const spec = lease.spec;
  const acquireTime = kubeTimeToMillis(spec?.acquireTime);
  const renewTime = kubeTimeToMillis(spec?.renewTime);
  return {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    ...(acquireTime !== undefined && { acquireTime }),
    ...(renewTime !== undefined && { renewTime }),
    leaseTransitions: spec?.leaseTransitions ?? 0,
  };
}

function sameRecord(a: LeaseRecord | undefined, b: LeaseRecord): boolean {
  return (
    a !== undefined &&
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions
  );
}

function describe(error: unknown): string {
  if (error instanceof ApiException) return `HTTP ${(error as ApiException<unknown>).code}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Checks client-go's constraints on the timings; throws ConfigError naming each violated one. */
export function checkLeaderElectionTimings(t: LeaderElectionTimings): void {
  const issues = [];
  if (!(t.leaseDuration > t.renewDeadline)) {
    issues.push({ path: 'leaseDuration', message: 'leaseDuration must be greater than renewDeadline' });
  }
  if (!(t.renewDeadline > jitterFactor * t.retryPeriod)) {
    issues.push({ path: 'renewDeadline', message: 'renewDeadline must be greater than 1.2 × retryPeriod' });
  }
  if (!(t.retryPeriod > 0)) issues.push({ path: 'retryPeriod', message: 'retryPeriod must be positive' });
  if (issues.length > 0) throw new ConfigError(issues);
}

/**
 * Runs leader election for one replica.
 *
 * @example
 * const elector = new LeaderElector({ namespace: 'nlc-system', name: 'nlc-relay', identity: podName },
 *   { kubeConfig, scheduler, callbacks: { onStartedLeading, onStoppedLeading } });
 * elector.start();
 * // … on SIGTERM:
 * await elector.stop({ release: true });
 */
export class LeaderElector {
  private readonly timings: LeaderElectionTimings;
  private readonly api: CoordinationV1Api;
  private readonly behaviour: HttpBehaviour;
  private readonly logger: RelayLogger;
  private readonly random: () => number;
  private stopped = true;
  private leading = false;
  private since: EpochMillis | undefined;
  private lastRenewAt: EpochMillis = Number.NEGATIVE_INFINITY;
  private observed: LeaseRecord | undefined;
  private observedAt: EpochMillis = Number.NEGATIVE_INFINITY;
  private observedResourceVersion: string | undefined;
  private foreignRenewalAt: EpochMillis | undefined;
  /** The Lease's annotations as last read or written, and those to add at the next write. */
  private annotations: Readonly<Record<string, string>> = {};
  private pendingAnnotations: Record<string, string> = {};
  private tickTimer: TimerHandle | undefined;
  private deadlineTimer: TimerHandle | undefined;
  private inFlight: Promise<void> | undefined;
  private abort = new AbortController();

  constructor(
    private readonly config: LeaderElectionConfig,
    private readonly options: LeaderElectorOptions,
  ) {
    this.timings = {
      leaseDuration: config.leaseDuration ?? DefaultLeaderElectionTimings.leaseDuration,
      renewDeadline: config.renewDeadline ?? DefaultLeaderElectionTimings.renewDeadline,
      retryPeriod: config.retryPeriod ?? DefaultLeaderElectionTimings.retryPeriod,
    };
    checkLeaderElectionTimings(this.timings);
    this.api = options.kubeConfig.makeApiClient(CoordinationV1Api);
    this.logger = options.logger ?? silentLogger;
    this.random = options.random ?? Math.random;
    this.behaviour = {
      requestTimeoutMs: options.requestTimeoutMs ?? this.timings.renewDeadline / 2,
      // One attempt per try: the retryPeriod loop is the retry, as in client-go.
      retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, maxRetryAfterMs: 0 },
      sleep: abortableSleep,
      random: this.random,
      now: () => Date.now(),
      agents: createAgentPool(),
      ...(options.transport !== undefined && { transport: options.transport }),
    };
  }

  // A method, not the field: TypeScript keeps a narrowed field narrowed across an await.
  private isStopped(): boolean {
    return this.stopped;
  }

  /** Starts trying to acquire (the first try at once). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.abort = new AbortController();
    this.schedule(0);
  }

  /**
   * Stops electing. A leader steps down first (its callback runs before anything is written), then,
   * with `release`, empties the Lease's holder so a standby takes over at its next try.
   */
  async stop(options: { readonly release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    this.cancelTimers();
    const wasLeading = this.leading;
    if (wasLeading) this.stepDown(options.release === true ? 'released on shutdown' : 'stopped');
    // Let a try in flight finish (its result is ignored) so the release is not overwritten by it.
    this.abort.abort();
    await this.inFlight?.catch(() => undefined);
    if (wasLeading && options.release === true) await this.release();
  }

  /** True while this replica leads and its last renewal is younger than renewDeadline. */
  isLeader(): boolean {
    return this.leading && this.options.scheduler.now() - this.lastRenewAt < this.timings.renewDeadline;
  }

  /** The current term's start, while leading. */
  leaderSince(): EpochMillis | undefined {
    return this.leading ? this.since : undefined;
  }

  /** When this replica last saw the Lease change while another replica held it (its renewals). */
  lastForeignRenewalObservedAt(): EpochMillis | undefined {
    return this.foreignRenewalAt;
  }

  /** The holder this replica last observed ('' when released or never seen). */
  observedHolder(): string {
    return this.observed?.holderIdentity ?? '';
  }

  private cancelTimers(): void {
    const { scheduler } = this.options;
    if (this.tickTimer !== undefined) scheduler.cancel(this.tickTimer);
    if (this.deadlineTimer !== undefined) scheduler.cancel(this.deadlineTimer);
    this.tickTimer = undefined;
    this.deadlineTimer = undefined;
  }

  private schedule(delay: Millis): void {
    if (this.stopped) return;
    this.tickTimer = this.options.scheduler.after(delay, Priority.Relay, () => {
      this.tickTimer = undefined;
      return this.tick();
    });
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const attempt = this.tryAcquireOrRenew();
    this.inFlight = attempt.then(() => undefined);
    const ok = await attempt;
    this.inFlight = undefined;
    if (this.isStopped()) return;
    const now = this.options.scheduler.now();
    if (ok) {
      this.lastRenewAt = now;
      if (!this.leading) {
        this.leading = true;
        // The term is the acquireTime this replica wrote into the Lease: the functions verify a digest's
        // term against the Lease (docs/events.md#order-across-relay-leaders), so it must be that instant.
        this.since = this.observed?.acquireTime ?? now;
        this.logger.info('became the leader', {
          identity: this.config.identity,
          lease: `${this.config.namespace}/${this.config.name}`,
          leaderSince: now,
        });
        this.armDeadline();
        this.options.callbacks.onStartedLeading(this.since);
      } else {
        this.armDeadline();
      }
    } else {
      this.checkDeadline();
    }
    const { retryPeriod } = this.timings;
    this.schedule(this.leading ? retryPeriod : retryPeriod * (1 + this.random() * jitterFactor));
  }

  private armDeadline(): void {
    const { scheduler } = this.options;
    if (this.deadlineTimer !== undefined) scheduler.cancel(this.deadlineTimer);
    this.deadlineTimer = scheduler.at(this.lastRenewAt + this.timings.renewDeadline, Priority.Relay, () => {
      this.deadlineTimer = undefined;
      this.checkDeadline();
    });
  }

  private checkDeadline(): void {
    if (this.leading && this.options.scheduler.now() - this.lastRenewAt >= this.timings.renewDeadline) {
      this.stepDown('failed to renew the lease within renewDeadline');
    }
  }

  private stepDown(reason: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.since = undefined;
    if (this.deadlineTimer !== undefined) this.options.scheduler.cancel(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.logger.warn('stopped leading', { identity: this.config.identity, reason });
    this.options.callbacks.onStoppedLeading(reason);
  }

  private requestOptions(): ConfigurationOptions {
    // A renewal must not outlive the renew deadline.
    const left = this.leading
      ? this.lastRenewAt + this.timings.renewDeadline - this.options.scheduler.now()
      : Number.POSITIVE_INFINITY;
    const behaviour = {
      ...this.behaviour,
      requestTimeoutMs: Math.max(1, Math.min(this.behaviour.requestTimeoutMs, left)),
    };
    return { httpApi: resilientHttpLibrary(behaviour, this.abort.signal) };
  }

  /** The annotations of a Lease this replica wrote: the pending ones are written now. */
  private written(lease: V1Lease): Readonly<Record<string, string>> {
    this.pendingAnnotations = {};
    return lease.metadata?.annotations ?? {};
  }

  /** An annotation of the Lease, as this replica last read or wrote it. */
  annotation(key: string): string | undefined {
    return this.pendingAnnotations[key] ?? this.annotations[key];
  }

  /**
   * Sets an annotation of the Lease, written with this replica's next renewal (within retryPeriod) and
   * kept by every later write, whoever holds the Lease: state the relay's replicas share (relay.ts, the
   * damped republish).
   */
  setAnnotation(key: string, value: string): void {
    this.pendingAnnotations[key] = value;
  }

  private lease(record: LeaseRecord, resourceVersion?: string): V1Lease {
    // client-node serializes a model field by field and never needs its prototype (its own examples
    // pass object literals); only the MicroTimes must be V1MicroTime, for their six fraction digits.
    const lease: Record<string, unknown> = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.config.name,
        namespace: this.config.namespace,
        ...(resourceVersion !== undefined && { resourceVersion }),
        // A replace writes the whole object: the annotations go back, with those set since.
        annotations: { ...this.annotations, ...this.pendingAnnotations },
      },
      spec: {
        holderIdentity: record.holderIdentity,
        leaseDurationSeconds: record.leaseDurationSeconds,
        ...(record.acquireTime !== undefined && { acquireTime: new V1MicroTime(record.acquireTime) }),
        ...(record.renewTime !== undefined && { renewTime: new V1MicroTime(record.renewTime) }),
        leaseTransitions: record.leaseTransitions,
      },
    };
    return lease;
  }

  private observe(
    record: LeaseRecord,
    resourceVersion: string | undefined,
    now: EpochMillis,
    annotations?: Readonly<Record<string, string>>,
  ): void {
    if (annotations !== undefined) this.annotations = annotations;
    if (!sameRecord(this.observed, record)) {
      this.observed = record;
      this.observedAt = now;
      if (record.holderIdentity !== '' && record.holderIdentity !== this.config.identity) {
        this.foreignRenewalAt = now;
      }
    }
    this.observedResourceVersion = resourceVersion;
  }

  /** client-go tryAcquireOrRenew: true when this replica holds the Lease now. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { scheduler } = this.options;
    const { namespace, name, identity } = this.config;
    const now = scheduler.now();
    const ours: LeaseRecord = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.timings.leaseDuration / 1000),
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    };
    let current: V1Lease;
    try {
      current = await this.api.readNamespacedLease({ name, namespace }, this.requestOptions());
    } catch (error) {
      if (!(error instanceof ApiException) || (error as ApiException<unknown>).code !== 404) {
        this.logger.warn('could not read the leader election lease', {
          lease: `${namespace}/${name}`,
          error: describe(error),
        });
        return false;
      }
      try {
        const created = await this.api.createNamespacedLease(
          { namespace, body: this.lease(ours) },
          this.requestOptions(),
        );
        this.observe(ours, created.metadata?.resourceVersion, now, this.written(created));
        return true;
      } catch (createError) {
        this.logger.warn('could not create the leader election lease', {
          lease: `${namespace}/${name}`,
          error: describe(createError),
        });
        return false;
      }
    }
    const record = recordOf(current);
    this.observe(record, current.metadata?.resourceVersion, now, current.metadata?.annotations ?? {});
    const heldByAnother = record.holderIdentity !== '' && record.holderIdentity !== identity;
    if (heldByAnother && this.observedAt + record.leaseDurationSeconds * 1000 > now) return false;
    // Ours already: a renewal keeps acquireTime and leaseTransitions; anyone else's: a transition.
    const renewing = record.holderIdentity === identity && this.leading;
    const next: LeaseRecord = {
      ...ours,
      acquireTime: renewing ? (record.acquireTime ?? now) : now,
      leaseTransitions:
        record.holderIdentity === identity ? record.leaseTransitions : record.leaseTransitions + 1,
    };
    try {
      const updated = await this.api.replaceNamespacedLease(
        { name, namespace, body: this.lease(next, current.metadata?.resourceVersion) },
        this.requestOptions(),
      );
      this.observe(next, updated.metadata?.resourceVersion, now, this.written(updated));
      return true;
    } catch (error) {
      this.logger.warn(
        heldByAnother || !this.leading ? 'could not acquire the lease' : 'could not renew the lease',
        {
          lease: `${namespace}/${name}`,
          error: describe(error),
        },
      );
      return false;
    }
  }

  /** client-go release(): empty holder, 1 s duration, so the next candidate need not wait. */
  private async release(): Promise<void> {
    const { namespace, name } = this.config;
    const now = this.options.scheduler.now();
    const record: LeaseRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: this.observed?.leaseTransitions ?? 0,
    };
    this.abort = new AbortController();
    try {
      await this.api.replaceNamespacedLease(
        { name, namespace, body: this.lease(record, this.observedResourceVersion) },
        { httpApi: resilientHttpLibrary(this.behaviour, this.abort.signal) },
      );
      this.observe(record, undefined, now);
      this.logger.info('released the leader election lease', { lease: `${namespace}/${name}` });
    } catch (error) {
      this.logger.warn('could not release the leader election lease; a standby takes over when it expires', {
        lease: `${namespace}/${name}`,
        error: describe(error),
      });
    }
  }
}
