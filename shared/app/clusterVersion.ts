// The cluster's Kubernetes version (its API's /version) on the cluster row: which upstream minor the
// cluster's own controller runs. `nlc agreement` names a version difference with it, `nlc status` shows
// it beside the minor this controller emulates. Read again every hour: control planes are upgraded in
// place, and one GET an hour costs nothing against a pass's reads.
import type { EpochMillis, Millis } from '../domain/types.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { ClusterMeta } from '../ports/stores.js';

/** How long a recorded version is trusted before it is read again. */
export const ClusterVersionRefreshMs: Millis = 3_600_000;

export type ClusterVersionFields = Pick<ClusterMeta, 'clusterVersion' | 'clusterVersionReadAt'>;

/**
 * The version fields for the cluster row: the recorded ones while fresh, else the API's answer. A
 * failed read keeps what was recorded (and its age, so the next pass tries again): the version is for
 * reports, never a reason to fail a pass.
 *
 * @example
 * const fields = await refreshClusterVersion(deps, loaded.meta, clock.now()); // { clusterVersion: 'v1.31.4-eks-…', … }
 */
export async function refreshClusterVersion(
  deps: {
    readonly cluster: Pick<ClusterPort, 'getServerVersion'>;
    readonly observer: Observer;
    readonly signal?: AbortSignal;
  },
  meta: ClusterMeta,
  now: EpochMillis,
): Promise<ClusterVersionFields> {
  const recorded: ClusterVersionFields = {
    ...(meta.clusterVersion !== undefined && { clusterVersion: meta.clusterVersion }),
    ...(meta.clusterVersionReadAt !== undefined && { clusterVersionReadAt: meta.clusterVersionReadAt }),
  };
  const readAt = meta.clusterVersionReadAt;
  // A read instant in the future (another function's clock ahead) counts as stale, not as fresh forever.
  if (readAt !== undefined && readAt <= now && now - readAt < ClusterVersionRefreshMs) return recorded;
  const got = await deps.cluster.getServerVersion(deps.signal === undefined ? {} : { signal: deps.signal });
  if (!got.ok) {
    deps.observer.debug('the cluster version could not be read: kept what was recorded', {
      error: got.message,
      recorded: meta.clusterVersion ?? null,
    });
    return recorded;
  }
  return { clusterVersion: got.value, clusterVersionReadAt: now };
}
