// One monitor pass of a cluster at a time, passes of different clusters in parallel: the pass runs under
// the cluster's lease (PassLeaseStore), taken with the invocation's deadline on the functions' clock. A
// digest that finds the lease held is a counted, logged no-op: digests are full snapshots and the next
// one comes a nodeMonitorPeriod later, as upstream's monitor loop never starts a pass while one runs
// (docs/deploy.md, "Serializing the monitor: a pass lease per cluster"). The commit fences (conditional
// writes on the cluster row's and zones' versions) stay: the lease keeps passes from racing, the fences
// keep a race from corrupting state if one ever happens.
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

export interface PassLeaseDeps {
  readonly config: { readonly cluster: string };
  readonly stores: Pick<StateStores, 'passLease'>;
  readonly clock: Clock;
  readonly observer: Observer;
  readonly signal?: AbortSignal;
}

export type LeasedRun<T> =
  | { readonly kind: 'ran'; readonly value: T }
  | { readonly kind: 'busy'; readonly held: PassLeaseHolder | undefined };

/**
 * Runs `pass` holding the cluster's pass lease until the invocation's deadline (`remainingMs` from now,
 * plus the margin); gives it back when the pass ends, thrown or not.
 *
 * @example
 * const run = await withPassLease(deps, { holder: context.awsRequestId, remainingMs }, () => runMonitorPass(...));
 * if (run.kind === 'busy') return; // another invocation is passing this cluster
 */
export async function withPassLease<T>(
  deps: PassLeaseDeps,
  lease: { readonly holder: string; readonly remainingMs: Millis },
  pass: () => Promise<T>,
): Promise<LeasedRun<T>> {
  const { stores, clock, observer, signal } = deps;
  const cluster = deps.config.cluster;
  const opts = signal === undefined ? {} : { signal };
  const now = clock.now();
  const until = now + Math.max(0, lease.remainingMs) + PassLeaseMarginMs;
  const taken = await stores.passLease.acquire(cluster, { holder: lease.holder, until, now }, opts);
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
