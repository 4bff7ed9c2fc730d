// The Kubernetes API simulator: an HTTP server on loopback that @kubernetes/client-node and kubectl
// talk to unchanged (through a generated kubeconfig with a bearer token), and the same API in process
// for the kubelet fleet simulator and `nlc simulate`, on an injected clock.
//
// What it models (as kube-apiserver v1.33 does it, for what this project touches):
// - core/v1 nodes (+status), pods (+status, +binding), namespaces (+status), events; events.k8s.io/v1
//   events (the same objects); coordination.k8s.io/v1 leases; apps/v1 daemonsets; /version;
//   discovery; server-side Tables for kubectl get.
// - One resourceVersion counter; list + watch with resume from a bounded history (410 Expired as an
//   ERROR event when too old), bookmarks, watch timeouts, label and field selectors, limit/continue.
// - PUT with a stale resourceVersion → 409; JSON patch (incl. test), merge patch and strategic merge
//   patch with the Go types' list strategies (spec.taints replaced whole, status.conditions merged by
//   type); writes to status through the main resource ignored and vice versa; no-op writes not written;
//   metadata.generation for pods and daemonsets; uid, creationTimestamp, resourceVersion server-set;
//   timestamps canonicalised as the Go round trip does (MicroTime needs six fraction digits).
// - Validation with upstream's reasons, messages and field paths (quirk included: node taints are
//   reported under metadata.taints); 422 Status objects with causes.
// - Graceful pod deletion: deletionTimestamp set, the pod stays Terminating until a delete with grace
//   0 (its kubelet's confirmation); deleting a node leaves its pods; finalizers hold deletion.
// - Admission: DefaultTolerationSeconds, TaintNodesByCondition, NamespaceLifecycle; namespaces
//   default, kube-node-lease, kube-public and kube-system exist from the start; events expire (1 h).
// - Bearer tokens (401), optional per-identity rules (403 with RBAC's message), fault injection
//   (delay, 409, 429 + Retry-After, 500, dropped and stalled watch streams).
// Served over https with a self-signed certificate made at start (kubectl sends credentials only over
// TLS); the kubeconfig carries it as its CA. What it does not model: client certificates, protobuf, server-side apply, managedFields, aggregated discovery,
// OpenAPI documents, unknown-field pruning, a scheduler or any controller (no kubelet: pods stay as
// written; the namespace controller's cleanup is done at once on namespace deletion), consistent
// paginated snapshots, watch timeout jitter.
//
// Start it:
//   const api = await startApiServer({ clock });            // port 0 on 127.0.0.1, random token
//   await api.writeKubeconfig('/tmp/nlc.kubeconfig');        // kubectl --kubeconfig /tmp/nlc.kubeconfig get nodes
//   api.store.nodes.create({ metadata: { name: 'node-a' } }); // in process, same semantics
//   await api.close();
// or without HTTP: `const store = createApiStore({ clock })`.
import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { systemClock } from '../../shared/adapters/clock.js';
import type { DefaultTolerationSecondsOptions } from '../../shared/domain/tolerations.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Identity } from './auth.js';
import { ApiStore } from './client.js';
import { type VersionInfo, defaultVersion } from './discovery.js';
import { type FaultMatch, type FaultRule, Faults } from './faults.js';
import { kubeconfigYaml, makeKubeConfig, writeKubeconfig } from './kubeconfig.js';
import { Registry } from './registry.js';
import { ApiHttpServer, type RequestRecord } from './server.js';
import { selfSignedCertificate } from './tls.js';

export type { Identity, PolicyRule } from './auth.js';
export type { ApiStore, ResourceClient, Wire, WireList, TypedWatchEvent, DeleteStatus } from './client.js';
export type { FaultAction, FaultMatch, FaultRule } from './faults.js';
export type { PatchType } from './patch.js';
export type { DeleteOptions, ListOptions, RegistrySnapshot } from './registry.js';
export type { RequestRecord } from './server.js';
export type { Status, StatusCause, StatusReason } from './status.js';
export type { WatchOptions, WatchEvent } from './watch.js';
export { ApiStatusError } from './status.js';
export { kubeconfigYaml, makeKubeConfig, writeKubeconfig } from './kubeconfig.js';

export interface ApiStoreOptions {
  /** Time for creationTimestamp, deletionTimestamp, history and event expiry. The system clock by default. */
  readonly clock?: Clock;
  /** Seed for UIDs and generated names (deterministic simulations). */
  readonly seed?: number;
  /** kube-apiserver --event-ttl in ms; 1 h by default. */
  readonly eventTtlMs?: number;
  /** --default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds (300 each). */
  readonly defaultTolerationSeconds?: DefaultTolerationSecondsOptions;
  /** Watch history kept per resource: every event younger than this (75 s by default). */
  readonly historyWindowMs?: number;
  /** ...and at least this many events regardless of age (100). */
  readonly historyMinEvents?: number;
  /** ...but never more than this many (100,000). */
  readonly historyMaxEvents?: number;
}

export interface StartApiServerOptions extends ApiStoreOptions {
  /** 0 (the default) picks a free port. */
  readonly port?: number;
  readonly host?: '127.0.0.1';
  /** The admin bearer token (unrestricted); random when omitted. */
  readonly token?: string;
  /** Further identities, each with its own token and optional rules. */
  readonly identities?: readonly Identity[];
  /** Serve an existing in-process store instead of a new one. */
  readonly store?: ApiStore;
  readonly version?: VersionInfo;
  /** Watches without timeoutSeconds end after this long (1800 s, --min-request-timeout). */
  readonly defaultWatchTimeoutSeconds?: number;
  /** Period of bookmarks to watches that allow them (60 s). */
  readonly bookmarkIntervalMs?: number;
  /**
   * https with a fresh self-signed certificate (the default), or plain http. kubectl sends no
   * credentials over http (client-go reads a kubeconfig's user only for https servers), so over http
   * only client-node can authenticate.
   */
  readonly tls?: boolean;
}

export interface ApiServerHandle {
  /** https://127.0.0.1:PORT (http:// with `tls: false`). */
  readonly url: string;
  /** PEM of the serving certificate, which is its own CA (undefined over http). */
  readonly caPem: string | undefined;
  /** The admin token. */
  readonly token: string;
  readonly kubeconfigYaml: string;
  /** Writes the admin kubeconfig (mode 0600). */
  writeKubeconfig(path: string): Promise<void>;
  /** A client-node KubeConfig for `token` (the admin token by default). */
  kubeConfig(token?: string): KubeConfig;
  /** The in-process API: same semantics as HTTP, without auth and faults. */
  readonly store: ApiStore;
  readonly faults: {
    /** Adds a fault rule; returns a function that removes it. */
    inject(rule: FaultRule): () => void;
    clear(): void;
    /** Cuts the open watch streams matching `match` now ('reset' by default); returns how many. */
    dropWatches(match?: FaultMatch, mode?: 'reset' | 'end'): number;
    /**
     * Stalls the watch streams matching `match` (open and opened meanwhile) until the returned function
     * is called: they stay open and deliver nothing, and never what happened meanwhile.
     */
    stallWatches(match?: FaultMatch): () => void;
    /** How many requests delay rules hold right now. */
    pending(): number;
  };
  /** Every HTTP request served (the last 10,000 at least, 20,000 at most), oldest first. */
  readonly requests: readonly RequestRecord[];
  close(): Promise<void>;
}

/** The API without HTTP: for simulations that drive everything in process. */
export function createApiStore(options: ApiStoreOptions = {}): ApiStore {
  return new ApiStore(
    new Registry({
      clock: options.clock ?? systemClock,
      ...(options.seed !== undefined && { seed: options.seed }),
      ...(options.eventTtlMs !== undefined && { eventTtlMs: options.eventTtlMs }),
      ...(options.defaultTolerationSeconds !== undefined && {
        defaultTolerationSeconds: options.defaultTolerationSeconds,
      }),
      ...(options.historyWindowMs !== undefined && { historyWindowMs: options.historyWindowMs }),
      ...(options.historyMinEvents !== undefined && { historyMinEvents: options.historyMinEvents }),
      ...(options.historyMaxEvents !== undefined && { historyMaxEvents: options.historyMaxEvents }),
    }),
  );
}

/**
 * Starts the simulator on loopback.
 *
 * @example
 * const api = await startApiServer({ clock: systemClock });
 * const core = api.kubeConfig().makeApiClient(CoreV1Api);
 * await core.listNode();
 * await api.close();
 */
export async function startApiServer(options: StartApiServerOptions = {}): Promise<ApiServerHandle> {
  const clock = options.clock ?? systemClock;
  const store = options.store ?? createApiStore({ ...options, clock });
  const token = options.token ?? randomBytes(24).toString('base64url');
  const identities: Identity[] = [{ name: 'kubernetes-admin', token }, ...(options.identities ?? [])];
  const faults = new Faults();
  const certificate = options.tls === false ? undefined : selfSignedCertificate();
  const http = new ApiHttpServer({
    ...(certificate !== undefined && { tls: certificate }),
    registry: store.registry,
    identities,
    faults,
    version: options.version ?? defaultVersion,
    defaultWatchTimeoutSeconds: options.defaultWatchTimeoutSeconds ?? 1800,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    now: () => store.registry.now(),
  });
  const address = await http.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  const url = `${certificate === undefined ? 'http' : 'https'}://${address.address}:${address.port}`;
  const caPem = certificate?.cert;
  const connection = (as: string) => ({ server: url, token: as, ...(caPem !== undefined && { caPem }) });
  return {
    url,
    caPem,
    token,
    kubeconfigYaml: kubeconfigYaml(connection(token)),
    writeKubeconfig: (path) => writeKubeconfig(path, connection(token)),
    kubeConfig: (as = token) => makeKubeConfig(connection(as)),
    store,
    faults: {
      inject: (rule) => faults.inject(rule),
      clear: () => {
        faults.clear();
      },
      dropWatches: (match, mode) => faults.dropWatches(match, mode),
      stallWatches: (match) => faults.stallWatches(match),
      pending: () => faults.pending(),
    },
    requests: http.requests,
    close: () => http.close(),
  };
}
