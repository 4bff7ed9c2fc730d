// The relay's three informers (reflector.ts), wired to the API: node Leases in kube-node-lease, Nodes,
// and Pods bound to a node (field selector `spec.nodeName!=`). Lists go through the Kubernetes
// adapter's resilient HTTP library (timeouts, retries of 429 and 5xx); watches through client-node's
// Watch. What they cache is trimmed (shared/adapters/kubernetes/mapping.ts) and shared (intern.ts).
import {
  CoordinationV1Api,
  CoreV1Api,
  Watch,
  type HttpLibrary,
  type KubeConfig,
} from '@kubernetes/client-node';
import {
  abortableSleep,
  createAgentPool,
  DEFAULT_RETRY_POLICY,
  resilientHttpLibrary,
  type HttpBehaviour,
} from '../shared/adapters/kubernetes/resilientHttp.js';
import type { EpochMillis, Millis, Node, Pod } from '../shared/domain/types.js';
import type { Scheduler } from '../shared/ports/scheduler.js';
import type { Interner } from './intern.js';
import type { RelayLogger } from './logger.js';
import type { RelayMetrics, WatchRestartReason } from './metrics.js';
import { Reflector, type ChangeSource, type ListedPage, type ReflectorBackoff } from './reflector.js';
import { nodeFromV1, podFromV1, trimLease, type Mapped } from './shaping.js';

/** v1.NamespaceNodeLease: where kubelets keep their node Leases. */
export const NodeLeaseNamespace = 'kube-node-lease';
/** Pods bound to a node: the field selector of the pod informer. */
export const BoundPodsFieldSelector = 'spec.nodeName!=';

/**
 * How often a kubelet renews its node Lease: 0.25 × its 40 s leaseDuration (kubelet's
 * nodeLeaseDurationSeconds default; pkg/kubelet/nodelease). A lease watch with leases to renew is never
 * quiet for much longer.
 */
export const KubeletLeaseRenewInterval: Millis = 10_000;

/**
 * Stall timeout of the lease watch while leases exist (NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT): twice the
 * renewal interval. Silence that long means a stalled watch or every kubelet stopped at once, and a
 * relist of the leases (cheap) tells which, well within the 50 s grace period.
 */
export const DefaultLeaseWatchStallTimeout: Millis = 20_000;

/**
 * Stall timeout of the node and pod watches, and of the lease watch while no lease exists
 * (NLC_RELAY_WATCH_STALL_TIMEOUT). These can be quiet in a stable cluster; kube-apiserver's watch cache
 * sends every watcher that allows bookmarks one about every minute (cacher.go defaultBookmarkFrequency,
 * cache_watcher.go nextBookmarkTime) and one 2 s before its timeout: three minutes is three bookmark
 * periods, so a silent watch has missed at least two.
 */
export const DefaultWatchStallTimeout: Millis = 180_000;

/** A node Lease as the relay keeps it. */
export interface TrimmedLease {
  readonly nodeName: string;
  readonly renewTime?: EpochMillis;
  /** metadata.resourceVersion (the digest's leaseVersions); absent only from a malformed object. */
  readonly resourceVersion?: string;
}

export interface InformerHandlers {
  /** A Lease added or updated. */
  lease(lease: TrimmedLease): void;
  /** A node added (`old` undefined), updated, or deleted (`next` undefined). */
  node(old: Node | undefined, next: Node | undefined, source: ChangeSource): void;
  pod(old: Pod | undefined, next: Pod | undefined, source: ChangeSource): void;
  /** Every informer completed its first list (called once). */
  synced(): void;
}

export interface InformersOptions {
  readonly kubeConfig: KubeConfig;
  readonly scheduler: Scheduler;
  readonly logger: RelayLogger;
  readonly metrics: RelayMetrics;
  readonly random: () => number;
  readonly interner: Interner;
  readonly handlers: InformerHandlers;
  /** Timeout of one list request (60 s: a page of 500 pods from a busy API server). */
  readonly listTimeoutMs?: Millis;
  readonly backoff?: Partial<ReflectorBackoff>;
  /** Sends list requests instead of node-fetch (`nlc simulate`'s in-process transport). */
  readonly transport?: HttpLibrary;
  /** Opens watches instead of client-node's Watch (`nlc simulate`'s in-process watch). */
  readonly watch?: Pick<Watch, 'watch'>;
  /** Stall timeout of the lease watch while leases exist (DefaultLeaseWatchStallTimeout). */
  readonly leaseWatchStallTimeoutMs?: Millis;
  /** Stall timeout of the other watches (DefaultWatchStallTimeout); 0: no watchdog on them. */
  readonly watchStallTimeoutMs?: Millis;
}

export interface Informers {
  readonly leases: Reflector<TrimmedLease>;
  readonly nodes: Reflector<Node>;
  readonly pods: Reflector<Pod>;
  readonly all: readonly Pick<Reflector<unknown>, 'start' | 'stop' | 'status'>[];
}

function readLease(raw: unknown): Mapped<TrimmedLease> {
  try {
    return { ok: true, value: trimLease(raw as Parameters<typeof trimLease>[0]) };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/** A conversion whose result goes through `share` (the cache's interning). */
function sharing<T>(read: (raw: unknown) => Mapped<T>, share: (value: T) => T): (raw: unknown) => Mapped<T> {
  return (raw) => {
    const mapped = read(raw);
    return mapped.ok ? { ok: true, value: share(mapped.value) } : mapped;
  };
}

function toPage(list: {
  readonly items: readonly unknown[];
  readonly metadata?: { readonly resourceVersion?: string; readonly _continue?: string };
}): ListedPage {
  return {
    items: list.items,
    resourceVersion: list.metadata?.resourceVersion ?? '',
    ...(list.metadata?._continue !== undefined && { continue: list.metadata._continue }),
  };
}

/**
 * The three informers, not started.
 *
 * @example
 * const informers = createInformers({ kubeConfig, scheduler, logger, metrics, random, interner, handlers });
 * for (const informer of informers.all) void informer.start();
 */
export function createInformers(options: InformersOptions): Informers {
  const { kubeConfig, scheduler, logger, metrics, random, interner, handlers } = options;
  const watchStallTimeout = options.watchStallTimeoutMs ?? DefaultWatchStallTimeout;
  const leaseWatchStallTimeout = options.leaseWatchStallTimeoutMs ?? DefaultLeaseWatchStallTimeout;
  const behaviour: HttpBehaviour = {
    requestTimeoutMs: options.listTimeoutMs ?? 60_000,
    retry: DEFAULT_RETRY_POLICY,
    sleep: abortableSleep,
    random,
    now: () => Date.now(),
    agents: createAgentPool(),
    ...(options.transport !== undefined && { transport: options.transport }),
  };
  const requestOptions = (signal: AbortSignal) => ({ httpApi: resilientHttpLibrary(behaviour, signal) });
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const coordination = kubeConfig.makeApiClient(CoordinationV1Api);
  let syncedOnce = false;
  const common = (resource: string) => ({
    resource,
    watch: options.watch ?? new Watch(kubeConfig),
    scheduler,
    logger,
    random,
    ...(options.backoff !== undefined && { backoff: options.backoff }),
    onRestart: (reason: WatchRestartReason) => {
      metrics.watchRestarts.inc({ resource, reason });
    },
    onRelist: () => {
      metrics.relists.inc({ resource });
    },
    onMalformed: () => {
      metrics.malformedObjects.inc({ resource });
    },
    onStall: () => {
      metrics.watchStalls.inc({ resource });
    },
    onSynced: () => {
      metrics.informerSynced.set({ resource }, 1);
      if (!syncedOnce && all.every((r) => r.status().synced)) {
        syncedOnce = true;
        handlers.synced();
      }
    },
  });
  const page = (p: { readonly limit: number; readonly continue?: string }) => ({
    limit: p.limit,
    ...(p.continue !== undefined && { _continue: p.continue }),
  });

  const leases = new Reflector<TrimmedLease>({
    ...common('leases'),
    // Kubelets renew every 10 s: a lease watch with leases is never quiet for long. Without any, it may
    // wait for bookmarks like the others.
    stallTimeoutMs: (cached) => (cached > 0 ? leaseWatchStallTimeout : watchStallTimeout),
    watchPath: `/apis/coordination.k8s.io/v1/namespaces/${NodeLeaseNamespace}/leases`,
    list: (p, signal) =>
      coordination
        .listNamespacedLease({ namespace: NodeLeaseNamespace, ...page(p) }, requestOptions(signal))
        .then(toPage),
    read: sharing(readLease, (lease) => ({ ...lease, nodeName: interner.string(lease.nodeName) })),
    byNameOnly: true,
    handler: {
      add: (lease) => {
        handlers.lease(lease);
      },
      update: (_old, lease) => {
        handlers.lease(lease);
      },
      delete: () => undefined,
    },
  });

  const nodes = new Reflector<Node>({
    ...common('nodes'),
    stallTimeoutMs: watchStallTimeout,
    watchPath: '/api/v1/nodes',
    list: (p, signal) => core.listNode(page(p), requestOptions(signal)).then(toPage),
    read: sharing(nodeFromV1, (node) => interner.node(node)),
    handler: {
      add: (node, source) => {
        handlers.node(undefined, node, source);
      },
      update: (old, node, source) => {
        handlers.node(old, node, source);
      },
      delete: (node, source) => {
        handlers.node(node, undefined, source);
      },
    },
  });

  const pods = new Reflector<Pod>({
    ...common('pods'),
    stallTimeoutMs: watchStallTimeout,
    watchPath: '/api/v1/pods',
    fieldSelector: BoundPodsFieldSelector,
    list: (p, signal) =>
      core
        .listPodForAllNamespaces(
          { fieldSelector: BoundPodsFieldSelector, ...page(p) },
          requestOptions(signal),
        )
        .then(toPage),
    read: sharing(podFromV1, (pod) => interner.pod(pod)),
    handler: {
      add: (pod, source) => {
        handlers.pod(undefined, pod, source);
      },
      update: (old, pod, source) => {
        handlers.pod(old, pod, source);
      },
      delete: (pod, source) => {
        handlers.pod(pod, undefined, source);
      },
    },
  });

  const all: readonly Pick<Reflector<unknown>, 'start' | 'stop' | 'status'>[] = [leases, nodes, pods];
  return { leases, nodes, pods, all };
}
