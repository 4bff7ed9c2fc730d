// The leader's publishing loop: the PublishQueue (what is pending) drained through the EventSink, with
// backoff after failures, for one leadership term at a time.
//
// - Changes are published as they arrive (a flush at the next turn of the scheduler), digests when
//   built; each publish takes the digest parts and up to `batchSize` changes, so a digest never waits
//   behind a whole first list.
// - A publish that fails keeps its non-permanent failures (PublishQueue.giveBack) and waits out a
//   capped exponential backoff (equal jitter) before the next; a permanent failure is counted and
//   logged, never retried. Reaching the queue's cap is counted per dropped change and logged once.
// - A new leader's republish (PublishQueue's second lane) is paced by a token bucket of
//   `republishRate` events a second (one second's worth at once when the term starts): it fills the room
//   a publish leaves after the digest and the live changes, so neither ever waits behind it, and the
//   consumers' Lambda invocations stay spread out (docs/relay.md, "Guarantees").
// - A term ends when leadership does: in-flight publishing is aborted through the sink's signal, and
//   what is pending is forgotten (the next leader republishes its own view).
import type { EpochMillis, Millis } from '../shared/domain/types.js';
import type { HeartbeatDigest } from '../shared/events.js';
import { describeEvent, type EventSink, type PublishResult } from '../shared/ports/eventSink.js';
import { Priority, type Scheduler, type TimerHandle } from '../shared/ports/scheduler.js';
import type { RelayLogger } from './logger.js';
import type { RelayMetrics } from './metrics.js';
import { eventsOf, PublishQueue, type ChangeEvent, type QueuedItem } from './publishQueue.js';

export interface PublishBackoff {
  readonly initialMs: Millis;
  readonly maxMs: Millis;
}

export interface PublisherOptions {
  readonly sink: EventSink;
  readonly scheduler: Scheduler;
  readonly metrics: RelayMetrics;
  readonly logger: RelayLogger;
  readonly random: () => number;
  /** Pending changes kept at most while the bus is unreachable. */
  readonly maxPendingChanges: number;
  /** Changes per publish call. */
  readonly batchSize: number;
  /** Republished events per second at most (Infinity: unpaced). */
  readonly republishRate: number;
  readonly backoff: PublishBackoff;
  /** Whether this replica may publish now (it leads, and is not stopping). */
  readonly canPublish: () => boolean;
  /** Republished events the bus accepted (the republish's progress, recorded for a successor). */
  readonly onRepublished?: (events: readonly ChangeEvent[]) => void;
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export class Publisher {
  private readonly queue: PublishQueue;
  /** Bumped when a term starts or ends: a publish that outlives its term is recognised. */
  private term = 0;
  private termAbort = new AbortController();
  private flushTimer: TimerHandle | undefined;
  private retryTimer: TimerHandle | undefined;
  private paceTimer: TimerHandle | undefined;
  /** The republish lane's token bucket: how many republished events may go now. */
  private tokens = 0;
  private tokensAt: EpochMillis = 0;
  private publishing: Promise<void> | undefined;
  private flushAgain = false;
  private consecutiveFailures = 0;
  private queueFullSince: EpochMillis | undefined;

  constructor(private readonly options: PublisherOptions) {
    if (!(options.republishRate > 0)) throw new RangeError('republishRate must be positive');
    this.queue = new PublishQueue({ maxChanges: options.maxPendingChanges });
  }

  /** A leadership term starts: nothing pending, no backoff, a full second of republishing allowed. */
  startTerm(): void {
    this.term++;
    this.termAbort = new AbortController();
    this.consecutiveFailures = 0;
    this.tokens = this.options.republishRate;
    this.tokensAt = this.options.scheduler.now();
  }

  /** The term ends: aborts in-flight publishing, cancels retries, forgets what is pending. */
  endTerm(): number {
    this.term++;
    this.termAbort.abort();
    this.cancelTimers();
    const unsent = this.queue.size;
    this.queue.clear();
    return unsent;
  }

  cancelTimers(): void {
    const { scheduler } = this.options;
    if (this.flushTimer !== undefined) scheduler.cancel(this.flushTimer);
    if (this.retryTimer !== undefined) scheduler.cancel(this.retryTimer);
    if (this.paceTimer !== undefined) scheduler.cancel(this.paceTimer);
    this.flushTimer = this.retryTimer = this.paceTimer = undefined;
  }

  /** Queues a change (merged with a pending one of the same object) and schedules a flush. */
  addChange(event: ChangeEvent, observedAt: EpochMillis, flush = true): void {
    const dropped = this.queue.addChange(event, observedAt);
    if (dropped !== undefined) this.reportQueueFull(dropped.event);
    if (flush) this.scheduleFlush();
  }

  /** Queues a republished event (the paced lane); the caller schedules the flush. */
  addRepublished(event: ChangeEvent, observedAt: EpochMillis): void {
    const dropped = this.queue.addRepublished(event, observedAt);
    if (dropped !== undefined) this.reportQueueFull(dropped.event);
  }

  /** Replaces any unsent digest with this one and publishes it (returns the flush, to be awaited). */
  setDigest(parts: readonly HeartbeatDigest[], observedAt: EpochMillis): Promise<void> {
    const superseded = this.queue.setDigest(parts, observedAt);
    if (superseded > 0) {
      this.options.metrics.digestsSuperseded.inc(superseded);
      this.options.logger.debug('unsent digest replaced by a newer one', {
        sequence: parts[0]?.sequence,
        superseded,
      });
    }
    return this.flush();
  }

  get pending(): number {
    return this.queue.size;
  }

  /** Republished events not sent yet. */
  get pendingRepublished(): number {
    return this.queue.pendingRepublished;
  }

  oldestObservedAt(): EpochMillis | undefined {
    return this.queue.oldestObservedAt();
  }

  scheduleFlush(): void {
    if (this.publishing !== undefined) {
      this.flushAgain = true;
      return;
    }
    if (this.flushTimer !== undefined || this.retryTimer !== undefined) return;
    this.flushTimer = this.options.scheduler.after(0, Priority.Relay, () => {
      this.flushTimer = undefined;
      return this.flush();
    });
  }

  // A method, not the field: TypeScript keeps a narrowed field narrowed across an await.
  private flushRequested(): boolean {
    return this.flushAgain;
  }

  private mayPublish(): boolean {
    if (!this.options.canPublish() || this.retryTimer !== undefined) return false;
    const unpaced = this.queue.size - this.queue.pendingRepublished;
    return unpaced > 0 || (this.queue.pendingRepublished > 0 && this.refill() >= 1);
  }

  /** The token bucket, refilled for the time since its last use: how many republished events may go. */
  private refill(): number {
    const { republishRate, scheduler } = this.options;
    if (republishRate === Number.POSITIVE_INFINITY) return (this.tokens = republishRate);
    const now = scheduler.now();
    this.tokens = Math.min(republishRate, this.tokens + ((now - this.tokensAt) * republishRate) / 1000);
    this.tokensAt = now;
    return this.tokens;
  }

  /**
   * With republished events waiting for tokens, flushes again when about a tenth of a second's worth is
   * due, in tens (a PutEvents call takes 10 entries).
   */
  private schedulePace(): void {
    const { republishRate, scheduler } = this.options;
    const waiting = this.queue.pendingRepublished;
    if (waiting === 0 || this.paceTimer !== undefined || this.retryTimer !== undefined) return;
    if (!this.options.canPublish() || republishRate === Number.POSITIVE_INFINITY) return;
    const wanted = Math.min(waiting, 10 * Math.max(1, Math.ceil(republishRate / 100)));
    const delay = Math.max(1, Math.ceil(((wanted - this.refill()) * 1000) / republishRate));
    this.paceTimer = scheduler.after(delay, Priority.Relay, () => {
      this.paceTimer = undefined;
      return this.flush();
    });
  }

  /** Publishes until the queue is empty, a failure waits for a retry, or publishing is not allowed. */
  flush(): Promise<void> {
    if (this.publishing !== undefined) {
      this.flushAgain = true;
      return this.publishing;
    }
    const drain = async (): Promise<void> => {
      do {
        this.flushAgain = false;
        while (this.mayPublish()) {
          if (!(await this.publishOnce())) break;
        }
      } while (this.flushRequested() && this.mayPublish());
      this.schedulePace();
    };
    // Cleared in a later microtask: drain may complete synchronously, before the assignment.
    this.publishing = drain().finally(() => {
      this.publishing = undefined;
    });
    return this.publishing;
  }

  /**
   * The shutdown flush: waits for the publish in flight, then publishes the digest and the live changes
   * until none is left, a publish fails or `signal` aborts (no backoff: there is no later). The
   * republish lane stays: the next leader republishes its own view. Returns how many stay unsent,
   * republished events included.
   */
  async drainBeforeExit(signal: AbortSignal, stillLeading: () => boolean): Promise<number> {
    this.cancelTimers();
    await this.publishing?.catch(() => undefined);
    const abort = AbortSignal.any([signal, this.termAbort.signal]);
    while (this.queue.size > this.queue.pendingRepublished && !abort.aborted && stillLeading()) {
      if (!(await this.publishOnce(abort, false))) break;
    }
    return this.queue.size;
  }

  private reportQueueFull(event: ChangeEvent): void {
    this.options.metrics.eventsDropped.inc({ reason: 'queue_full' });
    // Loud, but once per episode: every further change also drops one while the bus stays down.
    if (this.queueFullSince !== undefined) return;
    this.queueFullSince = this.options.scheduler.now();
    this.options.logger.error('publish queue full: dropping the oldest pending change for every new one', {
      maxPendingChanges: this.options.maxPendingChanges,
      dropped: describeEvent(event),
    });
  }

  private async send(items: readonly QueuedItem[], signal: AbortSignal): Promise<PublishResult> {
    const events = eventsOf(items);
    try {
      return await this.options.sink.publish(events, { signal });
    } catch (error) {
      // The port promises not to throw; if a sink does, keep everything for the next attempt.
      this.options.logger.error('event sink threw; keeping the events', { error: describeError(error) });
      const message = describeError(error);
      return {
        sent: 0,
        retried: 0,
        requests: 0,
        failed: events.map((event, index) => ({
          index,
          event,
          code: 'SinkError',
          message,
          permanent: false,
        })),
      };
    }
  }

  /** Publishes one batch; false when the rest must wait for a retry (or the term ended). */
  private async publishOnce(signal?: AbortSignal, republish = true): Promise<boolean> {
    const { metrics, logger, scheduler } = this.options;
    const allowance = republish ? Math.floor(this.refill()) : 0;
    const items = this.queue.take(this.options.batchSize, allowance);
    if (items.length === 0) return true;
    for (const item of items) if (item.kind === 'change' && item.republished === true) this.tokens--;
    const term = this.term;
    const result = await this.send(items, signal ?? this.termAbort.signal);
    const now = scheduler.now();
    metrics.publishRequests.inc(result.requests);
    metrics.eventsRetried.inc(result.retried);
    const failedAt = new Set(result.failed.map((f) => f.index));
    const republished: ChangeEvent[] = [];
    items.forEach((item, index) => {
      if (failedAt.has(index)) return;
      metrics.eventsSent.inc({ detail_type: item.event.detailType });
      metrics.publishLag.observe(Math.max(0, now - item.observedAt) / 1000);
      if (item.kind === 'change' && item.republished === true) republished.push(item.event);
    });
    if (term !== this.term) return false; // the term ended meanwhile: the queue was cleared
    if (republished.length > 0) this.options.onRepublished?.(republished);
    let kept = 0;
    let firstProblem: string | undefined;
    for (const failure of result.failed) {
      const item = items[failure.index];
      if (item === undefined) continue;
      metrics.eventsFailed.inc({ detail_type: item.event.detailType, permanent: String(failure.permanent) });
      if (failure.permanent) {
        metrics.eventsDropped.inc({ reason: 'permanent_failure' });
        logger.error('event cannot be published; giving up on it', {
          code: failure.code,
          problem: failure.message,
        });
        continue;
      }
      firstProblem ??= `${failure.code}: ${failure.message}`;
      const keptIt = this.queue.giveBack(item, (dropped) => {
        this.reportQueueFull(dropped.event);
      });
      if (keptIt) kept++;
    }
    if (firstProblem === undefined) {
      this.consecutiveFailures = 0;
      if (this.queueFullSince !== undefined && this.queue.pendingChanges < this.options.maxPendingChanges) {
        logger.info('publish queue below its cap again', { fullForMs: now - this.queueFullSince });
        this.queueFullSince = undefined;
      }
      return true;
    }
    this.consecutiveFailures++;
    const { initialMs, maxMs } = this.options.backoff;
    const base = Math.min(maxMs, initialMs * 2 ** (this.consecutiveFailures - 1));
    const delay = Math.round(base / 2 + (this.options.random() * base) / 2);
    logger.warn('publishing failed; retrying with backoff', {
      failed: result.failed.length,
      kept,
      pending: this.queue.size,
      retryInMs: delay,
      problem: firstProblem,
    });
    if (signal === undefined && this.retryTimer === undefined) {
      this.retryTimer = scheduler.after(delay, Priority.Relay, () => {
        this.retryTimer = undefined;
        return this.flush();
      });
    }
    return false;
  }
}
