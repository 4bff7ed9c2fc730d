// The ClusterPort over @kubernetes/client-node 1.4.0. Ports the API-writing helpers the node lifecycle
// and taint eviction controllers call: AddOrUpdateTaintOnNode / RemoveTaintOffNode / PatchNodeTaints
// (pkg/controller/controller_utils.go), UpdateStatus from tryUpdateNodeHealth, MarkPodsNotReady and
// SetPodTerminationReason (pkg/controller/util/node/controller_utils.go), addConditionAndDeletePod
// (pkg/controller/tainteviction/taint_eviction.go), AddOrUpdateLabelsOnNode, and the EventRecorder.
//
// How each write stays safe against concurrent writers:
// - Taints: GET, apply swapNodeControllerTaint to the CURRENT list, then a JSON merge patch carrying
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
import {
  ApiException,
  CoreV1Api,
  CoreV1Event,
  PatchStrategy,
  setHeaderOptions,
  V1DeleteOptions,
  V1Preconditions,
  type ConfigurationOptions,
  type HttpLibrary,
  type KubeConfig,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import type {
  Effect,
  EffectResult,
  FailureReason,
  ReadResult,
  ResultOf,
  UpdateNodeStatus,
  UpdateNodeStatusResult,
  WriteResult,
} from '../../domain/effects.js';
import type { KubeEvent } from '../../domain/kubeEvents.js';
import { aggregateErrorMessage, markPodsNotReadyOutcome } from '../../domain/podStatus.js';
import { disruptionTargetCondition } from '../../domain/taintEviction.js';
import {
  ownedByNodeController,
  swapNodeControllerTaint,
  taintSemanticallyEqual,
  type TaintSwap,
} from '../../domain/taints.js';
import { podKey, type Millis, type Node, type Pod, type Taint } from '../../domain/types.js';
import { ClusterTransportError, TaintOwnershipError } from '../../errors.js';
import type { ClusterCallOptions, ClusterPort, TaintEvictionDeleteResult } from '../../ports/cluster.js';
import type { Clock } from '../../ports/clock.js';
import { makeEvent } from './events.js';
import {
  allTaintsFromV1,
  isTaintEffect,
  nodeConditionToPatch,
  nodeFromV1,
  podFromV1,
  taintToJson,
  type Mapped,
} from './mapping.js';
import { updatePodCondition } from './podConditions.js';
import {
  abortableSleep,
  createAgentPool,
  DEFAULT_RETRY_POLICY,
  resilientHttpLibrary,
  type HttpBehaviour,
  type RetryNotice,
  type RetryPolicy,
} from './resilientHttp.js';
import { retryOnConflict, UpdateTaintBackoff, type Backoff } from './retryOnConflict.js';

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
}

type Failure = Extract<WriteResult, { readonly ok: false }>;
type Outcome<T> = { readonly ok: true; readonly value: T } | Failure;

const OK: WriteResult = Object.freeze({ ok: true });
const PAGE_SIZE = 500;

function fail(reason: FailureReason, message: string): Failure {
  return { ok: false, reason, message };
}

function quote(name: string): string {
  return JSON.stringify(name);
}

// The V1Status a Kubernetes API error carries in its body, as far as messages need it.
function statusDetail(error: ApiException<unknown>): string {
  let body: unknown = error.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      // A non-JSON body (a proxy's HTML page): shown as text below.
    }
  }
  const status =
    typeof body === 'object' && body !== null ? (body as { reason?: unknown; message?: unknown }) : {};
  const reason = typeof status.reason === 'string' && status.reason !== '' ? ` ${status.reason}` : '';
  const message =
    typeof status.message === 'string' && status.message !== ''
      ? status.message
      : typeof body === 'string' && body !== ''
        ? body.slice(0, 200)
        : 'no details';
  return `HTTP ${error.code}${reason}: ${message}`;
}

/** A thrown client or transport error as a result value naming what was being done to which object. */
function toFailure(action: string, error: unknown): Failure {
  if (error instanceof ApiException) {
    const code = (error as ApiException<unknown>).code;
    const reason: FailureReason = code === 404 ? 'NotFound' : code === 409 ? 'Conflict' : 'Failed';
    return fail(reason, `${action}: ${statusDetail(error as ApiException<unknown>)}`);
  }
  if (error instanceof ClusterTransportError) return fail('Failed', `${action}: ${error.message}`);
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return fail('Failed', `${action}: ${detail}`);
}

function fromMapped<T>(mapped: Mapped<T>): Outcome<T> {
  return mapped.ok ? mapped : fail('Failed', mapped.message);
}

function sameTaints(a: readonly Taint[], b: readonly Taint[]): boolean {
  return a.length === b.length && a.every((t, i) => b[i] !== undefined && taintSemanticallyEqual(t, b[i]));
}

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
    agents: createAgentPool(),
  };

  /** One API call with timeout and retries; its failure as a value. */
  async function call<T>(
    action: string,
    signal: AbortSignal | undefined,
    request: (options: ConfigurationOptions) => Promise<T>,
    patch?: PatchStrategy,
  ): Promise<Outcome<T>> {
    const base: ConfigurationOptions = { httpApi: resilientHttpLibrary(behaviour, signal) };
    try {
      return {
        ok: true,
        value: await request(patch === undefined ? base : setHeaderOptions('Content-Type', patch, base)),
      };
    } catch (error) {
      return toFailure(action, error);
    }
  }

  const readNode = (name: string, signal?: AbortSignal) =>
    call(`get node ${quote(name)}`, signal, (o) => core.readNode({ name }, o));
  const readPod = (namespace: string, name: string, signal?: AbortSignal) =>
    call(`get pod ${quote(`${namespace}/${name}`)}`, signal, (o) =>
      core.readNamespacedPod({ namespace, name }, o),
    );
  const mergePatchPodStatus = (
    action: string,
    namespace: string,
    name: string,
    body: object,
    signal?: AbortSignal,
  ) =>
    call(
      action,
      signal,
      (o) => core.patchNamespacedPodStatus({ namespace, name, body }, o),
      PatchStrategy.MergePatch,
    );

  async function getNode(name: string, signal?: AbortSignal): Promise<ReadResult<Node>> {
    const got = await readNode(name, signal);
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

  async function updateNodeStatus(
    effect: UpdateNodeStatus,
    signal?: AbortSignal,
  ): Promise<UpdateNodeStatusResult> {
    const name = effect.node;
    let resourceVersion = effect.resourceVersion;
    if (resourceVersion === undefined) {
      // No decision-time version given: take the current one, so the write is still conditional.
      const got = await readNode(name, signal);
      if (!got.ok) return got;
      resourceVersion = got.value.metadata?.resourceVersion;
    }
    const body = {
      ...(resourceVersion === undefined ? {} : { metadata: { resourceVersion } }),
      status: { conditions: effect.conditions.map(nodeConditionToPatch) },
    };
    const patched = await call(
      `update status of node ${quote(name)}`,
      signal,
      (o) => core.patchNodeStatus({ name, body }, o),
      PatchStrategy.StrategicMergePatch,
    );
    if (!patched.ok) return patched;
    // The written node, so the monitor keeps an up-to-date copy; one it cannot read is simply not kept.
    const written = nodeFromV1(patched.value);
    return written.ok ? { ok: true, node: written.value } : OK;
  }

  async function swapNodeTaints(name: string, swap: TaintSwap, signal?: AbortSignal): Promise<WriteResult> {
    // The invariant, checked before any request: only the controller's own taints are added or removed.
    for (const taint of [...swap.toAdd, ...swap.toRemove]) {
      if (!ownedByNodeController(taint)) throw new TaintOwnershipError(name, taint);
    }
    // upstream AddOrUpdateTaintOnNode / RemoveTaintOffNode: nothing to do, no API call.
    if (swap.toAdd.length === 0 && swap.toRemove.length === 0) return OK;
    // The domain stamps every taint of one swap with its pass's `now`; keep it rather than our clock.
    const now = swap.toAdd.find((t) => t.timeAdded !== undefined)?.timeAdded ?? clock.now();
    const action = `update taints of node ${quote(name)}`;

    const attempt = async (): Promise<WriteResult> => {
      const got = await readNode(name, signal);
      if (!got.ok) return got;
      const node = nodeFromV1(got.value);
      if (!node.ok) return fail('Failed', `${action}: ${node.message}`);
      // The whole list, not the node's bounded copy of it: every taint goes back.
      const raw = got.value.spec?.taints ?? [];
      const current = allTaintsFromV1(raw);
      const next = swapNodeControllerTaint(current, swap.toAdd, swap.toRemove, now);
      // Like upstream, no write when the list would not change.
      if (sameTaints(next, current)) return { ok: true, unchanged: true };
      // Taints we leave alone go back exactly as the server sent them. A taint whose effect the domain
      // does not know (it is not the controller's either) goes back untouched too.
      const read = raw.filter((t) => isTaintEffect(t.effect));
      const original = new Map(current.map((t, i) => [t, read[i]]));
      const taints = [
        ...next.map((t) => original.get(t) ?? taintToJson(t)),
        ...raw.filter((t) => !isTaintEffect(t.effect)),
      ];
      const body = { metadata: { resourceVersion: got.value.metadata?.resourceVersion }, spec: { taints } };
      const patched = await call(
        action,
        signal,
        (o) => core.patchNode({ name, body }, o),
        PatchStrategy.MergePatch,
      );
      return patched.ok ? OK : patched;
    };

    try {
      return await retryOnConflict(taintBackoff, attempt, (r) => !r.ok && r.reason === 'Conflict', {
        sleep,
        random,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      // Only the backoff sleep throws here (aborted by the caller's signal).
      return toFailure(action, error);
    }
  }

  /** upstream MarkPodsNotReady's per-pod step; 'unchanged' means no write and no event. */
  async function markPodNotReady(
    pod: Pod,
    nodeName: string,
    signal?: AbortSignal,
  ): Promise<WriteResult | 'unchanged'> {
    const action = `set Ready=False on pod ${quote(podKey(pod))}`;
    const got = await readPod(pod.namespace, pod.name, signal);
    if (!got.ok) return got.reason === 'NotFound' ? fail('NotFound', `${action}: ${got.message}`) : got;
    // upstream's defensive check: only pods bound to this node.
    if (got.value.spec?.nodeName !== nodeName) return 'unchanged';
    const conditions = got.value.status?.conditions ?? [];
    const ready = conditions.find((c) => c.type === 'Ready');
    if (ready === undefined) return 'unchanged';
    const { lastTransitionTime: _, ...update } = ready;
    const result = updatePodCondition(conditions, { ...update, status: 'False' }, clock.now());
    if (!result.changed) return 'unchanged';
    const body = {
      metadata: { resourceVersion: got.value.metadata?.resourceVersion },
      status: { conditions: result.conditions },
    };
    const patched = await mergePatchPodStatus(action, pod.namespace, pod.name, body, signal);
    return patched.ok ? OK : patched;
  }

  async function markPodsNotReady(
    nodeName: string,
    pods: readonly Pod[],
    signal?: AbortSignal,
  ): Promise<WriteResult> {
    const errors: string[] = [];
    for (const pod of pods) {
      const result = await markPodNotReady(pod, nodeName, signal);
      if (result === 'unchanged') continue;
      // Upstream order: the pod's write, then its Warning event (also after a failed write, not after NotFound).
      const outcome = markPodsNotReadyOutcome([pod], [result]);
      if (outcome.error !== undefined) errors.push(outcome.error);
      for (const event of outcome.events) await recordEvent(event, signal);
    }
    const error = aggregateErrorMessage(errors);
    return error === undefined ? OK : fail('Failed', error);
  }

  async function setPodTerminationReason(pod: Pod, reason: string, message: string, signal?: AbortSignal) {
    const patched = await mergePatchPodStatus(
      `set status reason ${reason} on pod ${quote(podKey(pod))}`,
      pod.namespace,
      pod.name,
      { status: { reason, message } },
      signal,
    );
    return patched.ok ? OK : patched;
  }

  async function deletePod(
    namespace: string,
    name: string,
    uid: string | undefined,
    signal?: AbortSignal,
  ): Promise<WriteResult> {
    // Default grace period (upstream DeletePods and addConditionAndDeletePod). Deviation: a UID
    // precondition, so a decision about one pod never deletes another re-created under its name (events
    // arrive late and out of order here); the API answers 409 Conflict when the UID differs.
    const deleted = await call(`delete pod ${quote(`${namespace}/${name}`)}`, signal, (o) =>
      core.deleteNamespacedPod(
        {
          namespace,
          name,
          // The models are classes whose serializer reads plain fields (as for the Event below).
          ...(uid !== undefined && {
            body: Object.assign(new V1DeleteOptions(), {
              preconditions: Object.assign(new V1Preconditions(), { uid }),
            }),
          }),
        },
        o,
      ),
    );
    return deleted.ok ? OK : deleted;
  }

  async function deletePodForTaintEviction(
    namespace: string,
    name: string,
    uid: string | undefined,
    signal?: AbortSignal,
  ): Promise<TaintEvictionDeleteResult> {
    const gone = { ok: true, podWasGone: true } as const;
    const got = await readPod(namespace, name, signal);
    if (!got.ok) return got.reason === 'NotFound' ? gone : got;
    // Another pod of the same name (the one decided about was deleted and re-created): not ours to touch.
    if (uid !== undefined && got.value.metadata?.uid !== uid) return gone;
    // Already terminating (an earlier attempt, or someone else, deleted it): a second DELETE changes
    // nothing but another deletion counted; done.
    if (got.value.metadata?.deletionTimestamp !== undefined) return gone;
    const conditions = got.value.status?.conditions ?? [];
    const result = updatePodCondition(conditions, { ...disruptionTargetCondition }, clock.now());
    if (result.changed) {
      // The UID pins the pod we read (upstream PatchPodStatus); the resourceVersion keeps a concurrent
      // condition change from being overwritten by our whole-list merge patch.
      const body = {
        metadata: { uid: got.value.metadata?.uid, resourceVersion: got.value.metadata?.resourceVersion },
        status: { conditions: result.conditions },
      };
      const patched = await mergePatchPodStatus(
        `add condition ${disruptionTargetCondition.type} to pod ${quote(`${namespace}/${name}`)}`,
        namespace,
        name,
        body,
        signal,
      );
      if (!patched.ok) return patched.reason === 'NotFound' ? gone : patched;
    }
    const deleted = await deletePod(namespace, name, uid ?? got.value.metadata?.uid, signal);
    if (deleted.ok) return { ok: true, podWasGone: false };
    // NotFound: gone meanwhile; Conflict: the UID precondition failed, re-created meanwhile.
    return deleted.reason === 'NotFound' || deleted.reason === 'Conflict' ? gone : deleted;
  }

  async function addNodeLabels(
    name: string,
    labels: Readonly<Record<string, string>>,
    signal?: AbortSignal,
  ): Promise<WriteResult> {
    if (Object.keys(labels).length === 0) return OK;
    // A merge patch of metadata.labels adds or overwrites exactly these keys. Upstream's
    // AddOrUpdateLabelsOnNode sends the same two-way patch without a resourceVersion, so no precondition.
    const patched = await call(
      `add labels to node ${quote(name)}`,
      signal,
      (o) => core.patchNode({ name, body: { metadata: { labels } } }, o),
      PatchStrategy.MergePatch,
    );
    return patched.ok ? OK : patched;
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
        return updateNodeStatus(effect, signal);
      case 'getNode':
        return getNode(effect.node, signal);
      case 'listPodsOnNode':
        return listPodsOnNode(effect.node, signal);
      case 'swapNodeTaints':
        return swapNodeTaints(effect.node, effect, signal);
      case 'markPodsNotReady':
        return markPodsNotReady(effect.node, effect.pods, signal);
      case 'setPodTerminationReason':
        return setPodTerminationReason(effect.pod, effect.reason, effect.message, signal);
      case 'deletePod':
        return deletePod(effect.pod.namespace, effect.pod.name, effect.pod.uid || undefined, signal);
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
    addNodeLabels: (name, labels, opts) => addNodeLabels(name, labels, opts?.signal),
    swapNodeTaints: (name, swap, opts) => swapNodeTaints(name, swap, opts?.signal),
    deletePodForTaintEviction: (namespace, name, opts) =>
      deletePodForTaintEviction(namespace, name, opts?.uid, opts?.signal),
    recordEvent: (event, opts) => recordEvent(event, opts?.signal),
  };
}
