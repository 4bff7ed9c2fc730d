// Upstream's lease confirmation (PR #138698, KEP-5647, v1.37, gate NodeControllerLeaseCircuitBreaker,
// beta and on): before tryUpdateNodeHealth marks a node Unknown, it reads the node's Lease from the API.
// A resourceVersion other than the cached Lease's means the lease cache is behind: the node is not
// marked, the live resourceVersion is recorded (ConsistencyStore.WroteAt), and every node-health update
// is held until the lease informer has synced at least that resourceVersion (EnsureReady).
//
// Here the lease cache is the relay's: a digest carries the resourceVersion of each going-silent node's
// Lease as the relay last saw it (`leaseVersions`) and how far its lease informer has synced
// (`leaseResourceVersion`). The record is kept on the cluster row (`leaseWrittenVersion`).
//
// Deviation (docs/upstream-deviations.md): upstream holds the nodes after the one that failed to
// confirm, and every node of later passes; here the whole pass is held (nothing decided, the
// digest's position committed). Upstream's held nodes drop out of their zones, which deletes the zone
// states and replaces their limiters (issue #141572 is a panic on that path); a held pass changes
// nothing instead, and the next digest decides from where the last one left.
import type { HeartbeatDigest } from '../events.js';
import type { ClusterPort } from '../ports/cluster.js';

/** What the monitor does with this digest. */
export type LeaseConfirmation =
  /** Run the pass. `written` is the record to keep (undefined: cleared, or none). */
  | {
      readonly kind: 'proceed';
      readonly written: undefined;
      /** Nodes confirmed against the API's Lease; nodes that could not be (a relay without versions). */
      readonly confirmed: readonly string[];
      readonly unconfirmed: readonly string[];
      /** The record this digest cleared: the relay has synced past it. */
      readonly cleared?: string;
    }
  /** Hold the pass: an earlier mismatch, and the relay has not synced past it yet. */
  | { readonly kind: 'waiting'; readonly written: string; readonly synced: string | undefined }
  /** Hold the pass: the API's Lease of `node` is not the relay's copy. */
  | {
      readonly kind: 'stale';
      readonly written: string;
      readonly node: string;
      readonly cached: string;
      readonly live: string;
    }
  /** Hold the pass: the Lease of `node` could not be read (NotFound is not a failure: no Lease). */
  | {
      readonly kind: 'lookupFailed';
      readonly written: undefined;
      readonly node: string;
      readonly message: string;
    };

const WellFormed = /^[1-9][0-9]*$/;

/**
 * upstream resourceversion.CompareResourceVersion: both must be decimal integers without leading zeros
 * (etcd revisions); undefined otherwise (upstream's error), which the caller skips as upstream does.
 *
 * @example
 * compareResourceVersion('100', '99'); // 1
 * compareResourceVersion('abc', '99'); // undefined
 */
export function compareResourceVersion(a: string, b: string): -1 | 0 | 1 | undefined {
  if (!WellFormed.test(a) || !WellFormed.test(b)) return undefined;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}

export interface LeaseConfirmationInput {
  /** The record on the cluster row. */
  readonly written: string | undefined;
  readonly digest: Pick<HeartbeatDigest, 'leaseVersions' | 'leaseResourceVersion'>;
  /** The nodes this pass would mark Unknown (nodesToMarkUnknown), computed only when needed. */
  readonly candidates: () => readonly string[];
}

/**
 * EnsureReady, then one live read per node about to be marked Unknown, stopping at the first that the
 * relay's copy does not match. Only for a minor that has it (upstreamBehaviour.leaseConfirmation).
 *
 * @example
 * const c = await confirmLeases(deps, { written: meta.leaseWrittenVersion, digest, candidates });
 * if (c.kind !== 'proceed') return holdPass(c);
 */
export async function confirmLeases(
  deps: { readonly cluster: Pick<ClusterPort, 'getNodeLeaseVersion'>; readonly signal?: AbortSignal },
  { written, digest, candidates }: LeaseConfirmationInput,
): Promise<LeaseConfirmation> {
  let cleared: string | undefined;
  if (written !== undefined) {
    const synced = digest.leaseResourceVersion;
    // Upstream skips a cache that has synced nothing, or versions that do not compare: ready.
    const order = synced === undefined ? undefined : compareResourceVersion(synced, written);
    if (order === -1) return { kind: 'waiting', written, synced };
    cleared = written;
  }
  const confirmed: string[] = [];
  const unconfirmed: string[] = [];
  const opts = deps.signal === undefined ? {} : { signal: deps.signal };
  for (const node of candidates()) {
    // No version for the node: a relay that sends none, or a node silent for less than
    // LeaseVersionsAfterMs (a grace period under 15 s). It cannot be checked, and is marked as before
    // v1.37. (Upstream compares a cache without the Lease as ""; a relay whose lease watch is broken
    // sends no digest at all: relay/digestLoop.ts.)
    const cached = digest.leaseVersions?.get(node);
    if (cached === undefined) {
      unconfirmed.push(node);
      continue;
    }
    const live = await deps.cluster.getNodeLeaseVersion(node, opts);
    if (!live.ok) {
      if (live.reason === 'NotFound') {
        confirmed.push(node);
        continue;
      }
      return { kind: 'lookupFailed', written: undefined, node, message: live.message };
    }
    if (live.value !== cached) {
      // WroteAt: the record was cleared above (or there was none), so the live version is the newest.
      return { kind: 'stale', written: live.value, node, cached, live: live.value };
    }
    confirmed.push(node);
  }
  return {
    kind: 'proceed',
    written: undefined,
    confirmed,
    unconfirmed,
    ...(cleared !== undefined && { cleared }),
  };
}
