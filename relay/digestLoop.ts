// The leader's digest loop: every nodeMonitorPeriod, the Heartbeat Digest of the probe tracker, split
// into parts that fit an event, handed to the publisher; or no digest, counted and logged, while the
// relay cannot vouch for the lease silence it would report. relay.ts starts a term of it when this
// replica starts leading and schedules its ticks.
//
// A digest says "no renewal observed since the probe" for every node. The functions believe it and
// mark a node Unknown once that silence passes the grace period, so the relay sends none while it
// cannot vouch for the silence: its lease watch is broken or relisting, or silent for so long that
// it may have stalled, or the timer fired so late that watch events may still sit unread in the
// socket. A missing digest marks nobody; digests missing for longer than the grace period are an
// observation gap, after which the functions give every node a fresh probe.
import type { EpochMillis, Millis, Node } from '../shared/domain/types.js';
import type { HeartbeatDigest } from '../shared/events.js';
import { fitDigest } from '../shared/heartbeatDigest.js';
import type { Clock } from '../shared/ports/clock.js';
import type { TrimmedLease } from './informers.js';
import type { RelayLogger } from './logger.js';
import type { DigestSkipReason, RelayMetrics } from './metrics.js';
import type { Publisher } from './publisher.js';
import type { Reflector } from './reflector.js';
import { buildDigest, digestUrgency, type ProbeTracker } from './shaping.js';

export interface DigestLoopOptions {
  readonly cluster: string;
  readonly relayId: string;
  /** The digest period (the controller's --node-monitor-period). */
  readonly nodeMonitorPeriod: Millis;
  /**
   * How often a digest goes out while nothing is going on (digestUrgency): every node Ready and
   * renewing, nothing changed. Absent or at most nodeMonitorPeriod: every period.
   */
  readonly quietPeriod?: Millis;
  /** The most bytes of a digest's detail in one entry (its entry less Source and DetailType). */
  readonly partMaxBytes: number;
  readonly clock: Clock;
  readonly tracker: ProbeTracker;
  readonly leases: Pick<Reflector<TrimmedLease>, 'status'>;
  readonly nodes: Pick<Reflector<Node>, 'status'>;
  readonly publisher: Pick<Publisher, 'setDigest'>;
  readonly metrics: RelayMetrics;
  readonly logger: RelayLogger;
  /** Since when this replica leads; undefined while it may not publish (a standby, or stopping). */
  readonly leaderSince: () => EpochMillis | undefined;
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export class DigestLoop {
  private sequence = 0;
  private lastTickAt: EpochMillis | undefined;
  private skipping: { reason: DigestSkipReason; since: EpochMillis; skipped: number } | undefined;
  /** When the last digest went out in this term, and the tracker's change count then. */
  private lastSent: { at: EpochMillis; changes: number } | undefined;

  constructor(private readonly options: DigestLoopOptions) {}

  /** The sequence the next digest will carry. */
  get nextSequence(): number {
    return this.sequence;
  }

  /** A leadership term starts: digests count from 0 again, with no skip episode open. */
  startTerm(): void {
    this.sequence = 0;
    this.lastTickAt = undefined;
    this.skipping = undefined;
    this.lastSent = undefined;
  }

  /** The quiet period, when longer than the monitor period (else no digest ever waits). */
  private get quietPeriod(): Millis | undefined {
    const { quietPeriod, nodeMonitorPeriod } = this.options;
    return quietPeriod !== undefined && quietPeriod > nodeMonitorPeriod ? quietPeriod : undefined;
  }

  /**
   * Whether the digest due now may wait: a quiet period, a digest sent in this term less than that
   * long ago (to the nearest tick: half a period of timer jitter), and nothing urgent.
   */
  private mayWait(now: EpochMillis): boolean {
    const quiet = this.quietPeriod;
    const last = this.lastSent;
    if (quiet === undefined || last === undefined) return false;
    if (now - last.at + this.options.nodeMonitorPeriod / 2 >= quiet) return false;
    return digestUrgency(this.options.tracker, now, last.changes) === undefined;
  }

  /** The digest due now, handed to the publisher (its publish), or nothing when none may be sent. */
  tick(): Promise<void> | undefined {
    const { clock, nodes, leases, logger, metrics } = this.options;
    const now = clock.now();
    const late = this.lastTickAt !== undefined && now - this.lastTickAt > 2 * this.options.nodeMonitorPeriod;
    this.lastTickAt = now;
    const leaderSince = this.options.leaderSince();
    if (leaderSince === undefined) return undefined;
    if (!nodes.status().synced || !leases.status().synced) {
      logger.debug('digest skipped: informers not synced yet');
      return undefined;
    }
    const reason = this.skipReason(late);
    if (reason !== undefined) {
      this.skipDigest(reason, now);
      return undefined;
    }
    if (this.skipping !== undefined) {
      logger.info('digests resumed', {
        skipped: this.skipping.skipped,
        firstReason: this.skipping.reason,
        skippedSeconds: (now - this.skipping.since) / 1000,
      });
      this.skipping = undefined;
    }
    if (this.mayWait(now)) {
      metrics.digestsQuiet.inc();
      return undefined;
    }
    // Since when this process has observed the node Leases: both lists done (a standby's informers run
    // before it leads, so a takeover keeps its history). A restarted relay starts again.
    const observingSince = Math.max(nodes.status().syncedAt ?? now, leases.status().syncedAt ?? now);
    const digest = buildDigest(this.options.tracker, {
      cluster: this.options.cluster,
      relayId: this.options.relayId,
      leaderSince,
      sequence: this.sequence,
      observedAt: now,
      observingSince,
      // For the functions' lease circuit breaker: how far this relay's view of the Leases reaches.
      leaseResourceVersion: leases.status().resourceVersion,
      ...(this.quietPeriod !== undefined && { quietPeriodMs: this.quietPeriod }),
    });
    this.sequence++;
    this.lastSent = { at: now, changes: this.options.tracker.changes };
    let parts: readonly HeartbeatDigest[];
    let bytes: number;
    try {
      // Plain JSON when it fits, else packed, else with a shard's fingerprints, else in parts.
      ({ parts, bytes } = fitDigest(digest, this.options.partMaxBytes));
    } catch (error) {
      metrics.eventsDropped.inc({ reason: 'permanent_failure' });
      logger.error('cannot build the heartbeat digest', {
        sequence: digest.sequence,
        error: describeError(error),
      });
      return undefined;
    }
    metrics.digestBytes.set(bytes);
    metrics.digestParts.set(parts.length);
    metrics.digestNodes.set(digest.probes.size);
    metrics.digestSequence.set(digest.sequence);
    return this.options.publisher.setDigest(parts, now);
  }

  /** Why the digest due now cannot be sent, if it cannot. `late`: the timer fired over 2 periods late. */
  private skipReason(late: boolean): DigestSkipReason | undefined {
    // A timer that late means the event loop was blocked or the process paused: the watch events of
    // that time are read after this timer, not before. The next tick, a period later, has them.
    if (late) return 'late_timer';
    const lease = this.options.leases.status();
    if (lease.interrupted) return 'lease_watch_interrupted';
    if (lease.suspectedStall) return 'lease_watch_stalled';
    return undefined;
  }

  private skipDigest(reason: DigestSkipReason, now: EpochMillis): void {
    this.options.metrics.digestsSkipped.inc({ reason });
    if (this.skipping === undefined) {
      // Once per episode: the counter has every skip.
      this.options.logger.warn(
        'digest skipped: the relay cannot vouch for the lease silence it would report',
        {
          reason,
          leaseWatch: this.options.leases.status(),
        },
      );
      this.skipping = { reason, since: now, skipped: 0 };
    }
    this.skipping.skipped++;
  }
}
