// The nodes a Heartbeat Digest names that the monitor's node cache lacks, read from the API for the
// pass (monitor.ts): their Node Changed is late, or was lost.
import type { ControllerConfig } from '../config.js';
import type { Node } from '../domain/types.js';
import type { HeartbeatDigest } from '../events.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { LoadedState } from '../ports/stores.js';

/** What reading the missing nodes needs of the monitor's dependencies (MonitorDeps provides it). */
export interface MissingNodeDeps {
  readonly config: Pick<ControllerConfig, 'cluster'>;
  readonly cluster: Pick<ClusterPort, 'execute'>;
  readonly observer: Observer;
  readonly signal?: AbortSignal;
}

/** Nodes read from the API per pass for the node cache (readMissingNodes); the rest the next pass. */
export const MaxMissingNodeReadsPerPass = 20;

/**
 * The nodes the digest names (the relay has a Lease or a status for them) that the node cache lacks,
 * read from the API (at most MaxMissingNodeReadsPerPass, in name order). A node the API no longer has
 * is left out: its Node Changed DELETED will say so.
 */
export async function readMissingNodes(
  deps: MissingNodeDeps,
  loaded: LoadedState,
  digest: HeartbeatDigest,
): Promise<Map<string, Node>> {
  const { cluster, observer, signal } = deps;
  // Every node the relay knows: probed, or only fingerprinted (a kubelet that never came up).
  const named = new Set([...digest.probes.keys(), ...(digest.fingerprints?.keys() ?? [])]);
  const missing = [...named].filter((name) => !loaded.nodes.has(name)).sort();
  const fetched = new Map<string, Node>();
  for (const name of missing.slice(0, MaxMissingNodeReadsPerPass)) {
    const got = await cluster.execute(
      { kind: 'getNode', node: name },
      signal === undefined ? {} : { signal },
    );
    if (got.ok) fetched.set(name, got.value);
  }
  if (missing.length > 0) {
    observer.info('nodes missing from the node cache read from the API', {
      cluster: deps.config.cluster,
      missing: missing.length,
      read: fetched.size,
      nodes: missing.slice(0, 10),
    });
  }
  return fetched;
}
