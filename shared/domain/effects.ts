// Effects: what a controller pass asks the outside world to do.
//
// Upstream's passes (monitorNodeHealth, doNoExecuteTaintingPass, doEvictionPass) interleave decisions
// with API calls, and their control flow depends on the outcome of those calls (a failed UpdateStatus
// is retried after a fresh GET; a failed pod list puts the node in nodesToRetry; a failed taint removal
// keeps the node queued). To keep that flow exact without doing I/O, a pass is a generator: it yields
// an Effect, and whoever drives it (a Lambda handler, the simulator, a test) performs it and answers
// with the result. The domain stays pure and deterministic; the drivers are the imperative shell.
import type { KubeEvent } from './kubeEvents.js';
import type { Node, NodeCondition, Pod, Taint } from './types.js';

/** Why a call failed, as far as the controller's decisions care. */
export type FailureReason = 'NotFound' | 'Conflict' | 'Failed';

export type WriteResult =
  | {
      readonly ok: true;
      /** The cluster already was as asked: nothing was written (a taint swap that changes nothing). */
      readonly unchanged?: true;
    }
  | { readonly ok: false; readonly reason: FailureReason; readonly message: string };

export type ReadResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly reason: FailureReason; readonly message: string };

/** Every effect names the decision that caused it, for the Decisions trail (docs/state.md#decisions). */
interface Because {
  readonly why: string;
}

export interface UpdateNodeStatus extends Because {
  readonly kind: 'updateNodeStatus';
  readonly node: string;
  /** Precondition: the resourceVersion of the node object the decision was made on. */
  readonly resourceVersion?: string;
  /** The full new condition list (upstream writes the whole status through /status). */
  readonly conditions: readonly NodeCondition[];
}

/** A fresh (quorum) read of one node, as upstream does before retrying tryUpdateNodeHealth. */
export interface GetNode {
  readonly kind: 'getNode';
  readonly node: string;
}

/** upstream getPodsAssignedToNode (pod indexer on spec.nodeName). */
export interface ListPodsOnNode {
  readonly kind: 'listPodsOnNode';
  readonly node: string;
}

/**
 * upstream SwapNodeControllerTaint / AddOrUpdateTaintOnNode / RemoveTaintOffNode: a
 * read-modify-write of spec.taints that adds `toAdd` (timeAdded set) and removes `toRemove`,
 * retried on conflict, never touching other taints.
 */
export interface SwapNodeTaints extends Because {
  readonly kind: 'swapNodeTaints';
  readonly node: string;
  readonly toAdd: readonly Taint[];
  readonly toRemove: readonly Taint[];
}

/** upstream MarkPodsNotReady: Ready=False via pods/status for each pod, then a Warning event each. */
export interface MarkPodsNotReady extends Because {
  readonly kind: 'markPodsNotReady';
  readonly node: string;
  readonly pods: readonly Pod[];
}

/** Legacy path: upstream SetPodTerminationReason (status.reason NodeLost) through pods/status. */
export interface SetPodTerminationReason extends Because {
  readonly kind: 'setPodTerminationReason';
  readonly pod: Pod;
  readonly reason: string;
  readonly message: string;
}

/** Legacy path: delete a pod (default grace period, no preconditions, as upstream DeletePods). */
export interface DeletePod extends Because {
  readonly kind: 'deletePod';
  readonly pod: Pod;
}

export interface RecordEvent {
  readonly kind: 'recordEvent';
  readonly event: KubeEvent;
}

export type Effect =
  | UpdateNodeStatus
  | GetNode
  | ListPodsOnNode
  | SwapNodeTaints
  | MarkPodsNotReady
  | SetPodTerminationReason
  | DeletePod
  | RecordEvent;

/**
 * A status write's answer: on success, the node as the API returned it (its new resourceVersion), when
 * the executor has it. The monitor keeps that copy, so its next write does not start from a stale one.
 */
export type UpdateNodeStatusResult =
  | { readonly ok: true; readonly node?: Node }
  | { readonly ok: false; readonly reason: FailureReason; readonly message: string };

/** The answer each kind of effect gets. */
export interface EffectResults {
  readonly updateNodeStatus: UpdateNodeStatusResult;
  readonly getNode: ReadResult<Node>;
  readonly listPodsOnNode: ReadResult<readonly Pod[]>;
  readonly swapNodeTaints: WriteResult;
  readonly markPodsNotReady: WriteResult;
  readonly setPodTerminationReason: WriteResult;
  readonly deletePod: WriteResult;
  readonly recordEvent: WriteResult;
}

export type EffectResult = EffectResults[keyof EffectResults];
export type ResultOf<E extends Effect> = EffectResults[E['kind']];

/** A controller pass: yields effects, receives their results, returns its outcome. */
export type Pass<R> = Generator<Effect, R, EffectResult>;

/**
 * Yields one effect and returns its typed result. The driver's contract is to answer every effect
 * with the result type of its kind (EffectResults); `drive`/`driveAsync` below and the adapters do.
 */
export function* perform<E extends Effect>(effect: E): Generator<Effect, ResultOf<E>, EffectResult> {
  const result = yield effect;
  return result as ResultOf<E>;
}

/** Runs a pass to completion with a synchronous executor (tests, the simulator). */
export function drive<R>(pass: Pass<R>, execute: (effect: Effect) => EffectResult): R {
  let step = pass.next();
  while (!step.done) step = pass.next(execute(step.value));
  return step.value;
}

/** Runs a pass to completion with an asynchronous executor (the functions, the local stack). */
export async function driveAsync<R>(
  pass: Pass<R>,
  execute: (effect: Effect) => Promise<EffectResult>,
): Promise<R> {
  let step = pass.next();
  while (!step.done) step = pass.next(await execute(step.value));
  return step.value;
}
