// One monitor pass of a cluster at a time, passes of different clusters in parallel: the pass runs under
// the cluster's lease (PassLeaseStore), taken with the invocation's deadline on the functions' clock. A
// digest that finds the lease held is a counted, logged no-op: digests are full snapshots and the next
// one comes a nodeMonitorPeriod later, as upstream's monitor loop never starts a pass while one runs
// (docs/deploy.md, "Serializing the monitor: a pass lease per cluster"). The commit fences (conditional
// writes on the cluster row's and zones' versions) stay: the lease keeps passes from racing, the fences
// keep a race from corrupting state if one ever happens.
import { setTimeout as wait } from 'node:timers/promises';
import type { Millis } from '../domain/types.js';
import type { Clock } from '../ports/clock.js';
import type { Observer } from '../ports/observer.js';
import type { PassLeaseHolder, StateStores } from '../ports/stores.js';

/**
 * Added to the invocation's deadline: the lease outlives its holder by this much, so clock differences
 * between Lambda hosts (AWS keeps them synchronised to well under a millisecond) never let a second pass
 * start while the first can still write.
 */
export const PassLeaseMarginMs: Millis = 1_000;

/** How often a part of a split digest asks for the lease again while it waits. */
export const PassLeaseRetryMs: Millis = 100;

export interface PassLeaseDeps {
  readonly config: { readonly cluster: string };
  readonly stores: Pick<StateStores, 'passLease'>;
  readonly clock: Clock;
  readonly observer: Observer;
  readonly signal?: AbortSignal;
  /** Waits between asks (default: a real timer). */
  readonly sleep?: (ms: Millis, signal?: AbortSignal) => Promise<void>;
}

export type LeasedRun<T> =
  | { readonly kind: 'ran'; readonly value: T }
  | { readonly kind: 'busy'; readonly held: PassLeaseHolder | undefined };

/**
 * Runs `pass` holding the cluster's pass lease until the invocation's deadline (`remainingMs` from now,
 * plus the margin); gives it back when the pass ends, thrown or not. With `waitMs`, a held lease is
 * asked for again every PassLeaseRetryMs for that long before giving up: a part of a split digest must
 * not be dropped, since its siblings cannot be merged without it (they arrive together, and each
 * part's invocation holds the lease only to store its part unless it completes the digest).
 *
 * @example
 * const run = await withPassLease(deps, { holder: context.awsRequestId, remainingMs }, () => runMonitorPass(...));
 * if (run.kind === 'busy') return; // another invocation is passing this cluster
 */
export async function withPassLease<T>(
  deps: PassLeaseDeps,
  lease: { readonly holder: string; readonly remainingMs: Millis; readonly waitMs?: Millis },
  pass: () => Promise<T>,
): Promise<LeasedRun<T>> {
  const { stores, clock, observer, signal } = deps;
  const cluster = deps.config.cluster;
  const opts = signal === undefined ? {} : { signal };
  const start = clock.now();
  const deadline = start + Math.max(0, lease.remainingMs);
  const sleep =
    deps.sleep ??
    ((ms: Millis, s?: AbortSignal) => wait(ms, undefined, s === undefined ? {} : { signal: s }));
  // Counted, not timed: a virtual clock (the simulator's) does not move while this waits.
  const retries = Math.floor(Math.max(0, lease.waitMs ?? 0) / PassLeaseRetryMs);
  let now = start;
  let taken = await stores.passLease.acquire(
    cluster,
    { holder: lease.holder, until: deadline + PassLeaseMarginMs, now },
    opts,
  );
  for (let retry = 0; !taken.acquired && retry < retries; retry++) {
    await sleep(PassLeaseRetryMs, signal);
    now = clock.now();
    taken = await stores.passLease.acquire(
      cluster,
      // The invocation's deadline has not moved while it waited.
      { holder: lease.holder, until: deadline + PassLeaseMarginMs, now },
      opts,
    );
  }
  if (!taken.acquired) {
    observer.metric('nlc_monitor_pass_lease_busy_total', 'Count', 1);
    observer.info('a pass of this cluster is running: digest skipped, the next one follows', {
      cluster,
      ...(taken.held !== undefined && {
        holder: taken.held.holder,
        heldForMs: Math.max(0, taken.held.until - now),
      }),
    });
    return { kind: 'busy', held: taken.held };
  }
  try {
    return { kind: 'ran', value: await pass() };
  } finally {
    // Without the caller's signal: an aborted pass still gives its lease back when it can.
    await stores.passLease.release(cluster, lease.holder).catch((error: unknown) => {
      observer.warn('could not release the pass lease; it expires at the invocation deadline', {
        cluster,
        error: error instanceof Error ? error.message : String(error),
      });
    });
  }
}
