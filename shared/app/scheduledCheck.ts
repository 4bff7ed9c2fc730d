// The monitor's schedule fallback (once a minute): how long the relay has been silent, on the functions'
// clock, and the drainer's start. It decides nothing about node health: that is runMonitorPass's, on a
// digest (monitor.ts).
import type { EpochMillis } from '../domain/types.js';
import type { MonitorCache, MonitorDeps } from './monitor.js';

export interface ScheduledCheckResult {
  /** Time since the last digest was committed, on the functions' clock; absent when none ever was. */
  readonly silentMs?: number;
  /** Longer than nodeMonitorGracePeriod: an observation gap is under way. */
  readonly observationGap: boolean;
  readonly drainerTriggered: boolean;
}

function iso(ms: EpochMillis): string {
  return new Date(ms).toISOString();
}

/**
 * The once-a-minute fallback (the monitor's schedule): reports how long the relay has been silent
 * (nlc_observation_gap_seconds; a warning beyond the grace period) and starts the drainer. Nothing is
 * marked Unknown when digests stop (docs/architecture.md#observation-gap): health is only decided on a
 * digest's observedAt, and the first digest after the gap gives every node a fresh probe.
 *
 * @example
 * await runScheduledCheck({ config, stores, cluster, observer, clock, triggerDrainer }, clock.now());
 */
export async function runScheduledCheck(
  deps: Pick<MonitorDeps, 'config' | 'stores' | 'observer' | 'triggerDrainer' | 'signal'>,
  now: EpochMillis,
  cache?: Pick<MonitorCache, 'get'>,
): Promise<ScheduledCheckResult> {
  const { config, stores, observer, triggerDrainer, signal } = deps;
  const cluster = config.cluster;
  const meta = await stores.controllerState.loadMeta(cluster, signal === undefined ? {} : { signal });
  // One clock: when the last digest was committed, on the functions' clock (the relay's may differ).
  // A warm function that processed quiet digests since the row was written knows of a later one: their
  // position waits in its memory (docs/state.md#the-position-of-quiet-passes).
  const kept = cache?.get(cluster);
  const processedAt = kept?.versions.storedMeta === undefined ? undefined : kept.meta.lastObservedAt;
  const lastSeen =
    meta.committedAt === undefined || processedAt === undefined
      ? (meta.committedAt ?? processedAt)
      : Math.max(meta.committedAt, processedAt);
  const silentMs = lastSeen === undefined ? undefined : Math.max(0, now - lastSeen);
  const observationGap = silentMs === undefined || silentMs > config.nodeMonitorGracePeriod;
  if (silentMs !== undefined) observer.metric('nlc_observation_gap_seconds', 'Seconds', silentMs / 1000);
  if (lastSeen === undefined) {
    observer.warn('no Heartbeat Digest processed yet: is the relay running?', { cluster });
  } else if (observationGap) {
    observer.warn(
      'observation gap: the relay has been silent for longer than the grace period; nothing is marked Unknown',
      {
        cluster,
        silentSeconds: (silentMs ?? 0) / 1000,
        lastDigestCommittedAt: iso(lastSeen),
        ...(meta.relayLastSeen !== undefined && { relayLastSeen: iso(meta.relayLastSeen) }),
        nodeMonitorGracePeriodSeconds: config.nodeMonitorGracePeriod / 1000,
      },
    );
  }
  let drainerTriggered = false;
  if (triggerDrainer !== undefined) {
    try {
      await triggerDrainer({ source: 'nlc.monitor', cluster, reason: 'scheduledCheck' });
      drainerTriggered = true;
    } catch (error) {
      observer.warn('could not start the eviction drainer; its schedule will run it', {
        cluster,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  observer.info('scheduled check', {
    cluster,
    ...(silentMs !== undefined && { silentSeconds: silentMs / 1000 }),
    observationGap,
    drainerTriggered,
  });
  return { ...(silentMs !== undefined && { silentMs }), observationGap, drainerTriggered };
}
