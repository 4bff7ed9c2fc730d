// The ClusterPort over @kubernetes/client-node 1.4.0. Ports the API-writing helpers the node lifecycle
// and taint eviction controllers call: AddOrUpdateTaintOnNode / RemoveTaintOffNode / PatchNodeTaints
// (pkg/controller/controller_utils.go), UpdateStatus from tryUpdateNodeHealth, MarkPodsNotReady and
// SetPodTerminationReason (pkg/controller/util/node/controller_utils.go), addConditionAndDeletePod
// (pkg/controller/tainteviction/taint_eviction.go), AddOrUpdateLabelsOnNode, and the EventRecorder.
//
// How each write stays safe against concurrent writers:
// - Taints: GET, apply taintsAfterSwap to the CURRENT list, then a JSON merge patch carrying
//   metadata.resourceVersion and the whole spec.taints list. The API server treats a resourceVersion in a
//   patch as a precondition (409 when stale), and a merge patch replaces the list wholesale, so the write
//   is atomic: it cannot drop a taint added in between, and foreign taints go back exactly as read. This is
//   what upstream's PatchNodeTaints does (a strategic merge patch with the resourceVersion kept in, since
//   spec.taints has no merge key). A PUT of the whole node would also be atomic but would send back every
//   field through the client's typed model, which silently drops fields it does not know; a JSON patch
//   `test` on the resourceVersion fails with 422, not the 409 RetryOnConflict retries on.
// - Node status: a strategic merge patch of /status, which merges status.conditions by type: only the
//   conditions the decision lists are written, the node's others are left as they are. The effect's
//   resourceVersion is the precondition (upstream writes with the resourceVersion of the node it decided
//   on, and a 409 sends the domain down its GET-and-retry path), so a listed condition the decision did
//   not change is sent back as the server has it: a no-op. Except what the mapping cut to its bounds
//   (a long message or reason): that is left out, and the server keeps the real one. A status write
//   never sends a truncated text, and never drops a condition the bounded copy left out.
// - Pod conditions: GET, UpdatePodCondition, merge patch of /status with the pod's resourceVersion.
//
// What differs from upstream:
// - One read-modify-write per swap instead of upstream's two (AddOrUpdateTaintOnNode, then
//   RemoveTaintOffNode): fewer requests, and the swap is atomic.
// - The first GET of a taint write is a quorum read (upstream's first try reads the watch cache with
//   resourceVersion "0"): one less conflict round on a busy node.
// - MarkPodsNotReady and SetPodTerminationReason read the pod fresh instead of using an informer copy.
//   A pod already NotReady on the server gets no write and no event (upstream would have written from its
//   stale copy and failed with a conflict).
//
// The writes are in nodeWrites.ts and podWrites.ts, one API call (timeout, retries, failures as values)
// in apiCalls.ts; this module assembles the port, its reads and the EventRecorder.
import {
  CoordinationV1Api,
  CoreV1Api,
  CoreV1Event,
  type ConfigurationOptions,
  type HttpLibrary,
  type KubeConfig,
  type V1Node,
  type V1Pod,
  VersionApi,
} from '@kubernetes/client-node';
import type { Effect, EffectResult, ReadResult, ResultOf, WriteResult } from '../../domain/effects.js';
import type { KubeEvent } from '../../domain/kubeEvents.js';
import {
  NamespaceNodeLease,
  type EpochMillis,
  type Millis,
  type Node,
  type Pod,
} from '../../domain/types.js';
import type { ClusterCallOptions, ClusterPort, LeaderLease } from '../../ports/cluster.js';
import type { Clock } from '../../ports/clock.js';
import { createApiCall, fail, fromMapped, OK, quote, type ApiContext } from './apiCalls.js';
import { makeEvent } from './events.js';
import { kubeTimeToMillis, nodeFromV1, podFromV1, type Mapped } from './mapping.js';
import { addNodeLabels, readNode, swapNodeTaints, updateNodeStatus } from './nodeWrites.js';
import {
  deletePod,
  deletePodForTaintEviction,
  markPodsNotReady,
  setPodTerminationReason,
} from './podWrites.js';
import {
  abortableSleep,
  createAgentPool,
  createRequestThrottle,
  DEFAULT_RETRY_POLICY,
  type HttpBehaviour,
  type RetryNotice,
  type RetryPolicy,
} from './resilientHttp.js';
import { UpdateTaintBackoff, type Backoff } from './retryOnConflict.js';

export interface KubernetesClusterOptions {
  /** Timeout of each HTTP attempt. */
  readonly requestTimeoutMs: Millis;
  /** Retries of 429, 5xx, timeouts and broken connections (resilientHttp.ts). */
  readonly retry?: Partial<RetryPolicy>;
  /**
   * Stamps TimeAdded of taints given without one, pod condition transitions and Event times (the
   * simulator's virtual clock under `nlc simulate`).
   */
  readonly clock: Clock;
  /** Waits between retries; tests inject one that does not wait. */
  readonly sleep?: (ms: Millis, signal?: AbortSignal) => Promise<void>;
  /** Jitter source, uniform in [0, 1). */
  readonly random?: () => number;
  /** Backoff of the taint read-modify-write on 409; upstream UpdateTaintBackoff by default. */
  readonly taintBackoff?: Backoff;
  /** Called before each HTTP retry (logging, metrics). */
  readonly onRetry?: (notice: RetryNotice) => void;
  /** Sends each HTTP attempt instead of node-fetch (the simulator's in-process transport). */
  readonly transport?: HttpLibrary;
  /**
   * The client-side rate limit (kubeApiQps, kubeApiBurst): every attempt waits its turn. None: unpaced
   * (the simulator, whose calls take no virtual time).
   */
  readonly throttle?: {
    readonly qps: number;
    readonly burst: number;
    /** The throttle's clock: wall time unless a test gives one. */
    readonly now?: () => EpochMillis;
  };
}

const PAGE_SIZE = 500;

/**
 * The ClusterPort over a KubeConfig (see auth.ts for where it comes from).
 *
 * @example
 * const cluster = createKubernetesCluster(await loadKubeConfig(auth), {
 *   requestTimeoutMs: 10_000,
 *   clock: { now: () => Date.now() },
 * });
 * await driveAsync(pass, (effect) => cluster.execute(effect, { signal }));
 */
export function createKubernetesCluster(
  kubeConfig: KubeConfig,
  options: KubernetesClusterOptions,
): ClusterPort {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const coordination = kubeConfig.makeApiClient(CoordinationV1Api);
  const version = kubeConfig.makeApiClient(VersionApi);
  const { clock } = options;
  const sleep = options.sleep ?? abortableSleep;
  const random = options.random ?? Math.random;
  const taintBackoff = options.taintBackoff ?? UpdateTaintBackoff;
  const behaviour: HttpBehaviour = {
    requestTimeoutMs: options.requestTimeoutMs,
    retry: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    sleep,
    random,
    // Retry-After dates are wall-clock time, whatever clock stamps our writes (it may be virtual).
    now: () => Date.now(),
    ...(options.onRetry === undefined ? {} : { onRetry: options.onRetry }),
    ...(options.transport === undefined ? {} : { transport: options.transport }),
    ...(options.throttle !== undefined && {
      throttle: createRequestThrottle({ now: () => Date.now(), ...options.throttle, sleep }),
    }),
    agents: createAgentPool(),
  };

  const call = createApiCall(behaviour);
  const api: ApiContext = { core, call, clock, sleep, random, taintBackoff };

  async function getNode(name: string, signal?: AbortSignal): Promise<ReadResult<Node>> {
    const got = await readNode(api, name, signal);
    return got.ok ? fromMapped(nodeFromV1(got.value)) : got;
  }

  async function listAll<T, I>(
    action: string,
    signal: AbortSignal | undefined,
    page: (
      cont: string | undefined,
      o: ConfigurationOptions,
    ) => Promise<{ items: I[]; metadata?: { _continue?: string } }>,
    map: (item: I) => Mapped<T>,
  ): Promise<ReadResult<readonly T[]>> {
    const out: T[] = [];
    let cont: string | undefined;
    do {
      const listed = await call(action, signal, (o) => page(cont, o));
      if (!listed.ok) return listed;
      for (const item of listed.value.items) {
        const mapped = map(item);
        if (!mapped.ok) return fail('Failed', `${action}: ${mapped.message}`);
        out.push(mapped.value);
      }
      cont = listed.value.metadata?._continue || undefined;
    } while (cont !== undefined);
    return { ok: true, value: out };
  }

  function listNodes(signal?: AbortSignal): Promise<ReadResult<readonly Node[]>> {
    return listAll<Node, V1Node>(
      'list nodes',
      signal,
      (cont, o) => core.listNode({ limit: PAGE_SIZE, ...(cont === undefined ? {} : { _continue: cont }) }, o),
      nodeFromV1,
    );
  }

  function listPodsOnNode(name: string, signal?: AbortSignal): Promise<ReadResult<readonly Pod[]>> {
    return listAll<Pod, V1Pod>(
      `list pods on node ${quote(name)}`,
      signal,
      (cont, o) =>
        core.listPodForAllNamespaces(
          {
            fieldSelector: `spec.nodeName=${name}`,
            limit: PAGE_SIZE,
            ...(cont === undefined ? {} : { _continue: cont }),
          },
          o,
        ),
      podFromV1,
    );
  }

  async function getLeaderLease(
    namespace: string,
    name: string,
    signal?: AbortSignal,
  ): Promise<ReadResult<LeaderLease>> {
    const got = await call(`get lease ${quote(`${namespace}/${name}`)}`, signal, (o) =>
      coordination.readNamespacedLease({ name, namespace }, o),
    );
    if (!got.ok) return got;
    const spec = got.value.spec;
    const acquireTime = kubeTimeToMillis(spec?.acquireTime);
    return {
      ok: true,
      value: {
        holderIdentity: spec?.holderIdentity ?? '',
        ...(acquireTime !== undefined && { acquireTime }),
        leaseTransitions: spec?.leaseTransitions ?? 0,
      },
    };
  }

  async function getNodeLeaseVersion(node: string, signal?: AbortSignal): Promise<ReadResult<string>> {
    const got = await call(`get lease ${quote(`${NamespaceNodeLease}/${node}`)}`, signal, (o) =>
      coordination.readNamespacedLease({ name: node, namespace: NamespaceNodeLease }, o),
    );
    if (!got.ok) return got;
    return { ok: true, value: got.value.metadata?.resourceVersion ?? '' };
  }

  async function getServerVersion(signal?: AbortSignal): Promise<ReadResult<string>> {
    const got = await call('get /version', signal, (o) => version.getCode({}, o));
    if (!got.ok) return got;
    return { ok: true, value: got.value.gitVersion };
  }

  async function recordEvent(event: KubeEvent, signal?: AbortSignal): Promise<WriteResult> {
    const body = makeEvent(event, clock.now(), random() * 1_000_000);
    const { namespace } = body.metadata;
    const { kind, name } = event.involvedObject;
    const created = await call(`record event ${event.reason} on ${kind} ${quote(name)}`, signal, (o) =>
      // The model is a class; its serializer reads plain fields, so a populated instance is all it needs.
      core.createNamespacedEvent({ namespace, body: Object.assign(new CoreV1Event(), body) }, o),
    );
    // 409 AlreadyExists: a create retried after a lost answer had in fact succeeded (names are unique).
    return created.ok || created.reason === 'Conflict' ? OK : created;
  }

  async function executeEffect(effect: Effect, signal?: AbortSignal): Promise<EffectResult> {
    switch (effect.kind) {
      case 'updateNodeStatus':
        return updateNodeStatus(api, effect, signal);
      case 'getNode':
        return getNode(effect.node, signal);
      case 'listPodsOnNode':
        return listPodsOnNode(effect.node, signal);
      case 'swapNodeTaints':
        return swapNodeTaints(api, effect.node, effect, signal);
      case 'markPodsNotReady':
        return markPodsNotReady(api, recordEvent, effect.node, effect.pods, signal);
      case 'setPodTerminationReason':
        return setPodTerminationReason(api, effect.pod, effect.reason, effect.message, signal);
      case 'deletePod':
        return deletePod(api, effect.pod.namespace, effect.pod.name, effect.pod.uid || undefined, signal);
      case 'recordEvent':
        return recordEvent(effect.event, signal);
    }
  }

  return {
    execute: <E extends Effect>(effect: E, opts?: ClusterCallOptions) =>
      // The switch answers each kind with its own result type; TypeScript cannot follow E through it.
      executeEffect(effect, opts?.signal) as Promise<ResultOf<E>>,
    getNode: (name, opts) => getNode(name, opts?.signal),
    listNodes: (opts) => listNodes(opts?.signal),
    listPodsOnNode: (name, opts) => listPodsOnNode(name, opts?.signal),
    addNodeLabels: (name, labels, opts) => addNodeLabels(api, name, labels, opts?.signal),
    swapNodeTaints: (name, swap, opts) => swapNodeTaints(api, name, swap, opts?.signal),
    deletePodForTaintEviction: (namespace, name, opts) =>
      deletePodForTaintEviction(api, namespace, name, opts?.uid, opts?.signal, opts?.disruptionTarget),
    getLeaderLease: (namespace, name, opts) => getLeaderLease(namespace, name, opts?.signal),
    getNodeLeaseVersion: (node, opts) => getNodeLeaseVersion(node, opts?.signal),
    getServerVersion: (opts) => getServerVersion(opts?.signal),
    recordEvent: (event, opts) => recordEvent(event, opts?.signal),
  };
}
