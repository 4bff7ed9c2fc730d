// One dispatch per function: which inputs it accepts, the served-cluster check, and the service it
// runs. The Lambda shells (functions/*.ts, and so the local stack, which runs them under
// serverless-offline) and `nlc simulate` (local/simulate/controller.ts) route through this table alone,
// so a simulation decides through the same routing as production. A run returns steps: the drainer
// waits for its next due item in process, which a Lambda sleeps through and the simulator schedules in
// virtual time (steps.ts).
import { randomUUID } from 'node:crypto';
import type { ControllerConfig } from '../config.js';
import type { Millis } from '../domain/types.js';
import { EventParseError } from '../errors.js';
import {
  HeartbeatDigestDetailType,
  NodeChangedDetailType,
  PodChangedDetailType,
  type RelayEvent,
} from '../events.js';
import type { Clock } from '../ports/clock.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { StateStores } from '../ports/stores.js';
import { checkDrainerInvocation, type DrainerInvocation, type TriggerDrainer } from './drainer.js';
import { drainerSteps, drainerWaitBudget } from './drainerScheduling.js';
import { done, type Step } from './steps.js';
import { runMonitorPass, type MonitorCache } from './monitor.js';
import { withPassLease } from './passLease.js';
import { runNodeTaints } from './nodeTaints.js';
import { processPodChange } from './podProcessing.js';
import type { NodeReadMemo } from './reconcileNodes.js';
import type { PodSweepMemo } from './reconcilePods.js';
import { runScheduledCheck } from './scheduledCheck.js';
import { handleNodeChanged, handlePodChanged } from './taintEviction.js';

/** The functions, as serverless.yml names them. */
export const FunctionNames = [
  'nodeTaints',
  'taintEviction',
  'podProcessing',
  'monitorNodeHealth',
  'evictionDrainer',
] as const;
export type FunctionName = (typeof FunctionNames)[number];

/** A relay event as a function gets it: its detail-type and its parsed detail. */
export type RelayInput = RelayEvent extends infer E
  ? E extends RelayEvent
    ? Pick<E, 'detail-type' | 'detail'>
    : never
  : never;

/** What starts a run: a relay event from the bus, the function's schedule, or the monitor's invoke. */
export type FunctionInput =
  | { readonly kind: 'event'; readonly event: RelayInput }
  | { readonly kind: 'schedule' }
  | { readonly kind: 'invoke'; readonly invocation: DrainerInvocation };

/** What a run needs: the runtime's clients and settings. */
export interface FunctionDeps {
  readonly config: ControllerConfig;
  readonly stores: StateStores;
  readonly cluster: ClusterPort;
  readonly observer: Observer;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
  /** Starts the drainer after a monitor pass (a Lambda invoke; absent: its schedule does). */
  readonly triggerDrainer?: TriggerDrainer;
  /** The services' own waits between retries; the simulator's take no time. */
  readonly sleep?: (ms: Millis, signal?: AbortSignal) => Promise<void>;
}

/** What a warm function keeps between invocations (the monitor's cache and memos). */
export interface WarmState {
  readonly cache: MonitorCache;
  readonly readMemo: NodeReadMemo;
  readonly podSweepMemo: PodSweepMemo;
}

export function newWarmState(): WarmState {
  return { cache: new Map(), readMemo: new Map(), podSweepMemo: new Map() };
}

export interface RunContext {
  readonly deps: FunctionDeps;
  readonly warm: WarmState;
  /** The invocation's remaining time (the drainer's wait budget and the monitor's pass lease). */
  readonly remainingMs: () => Millis;
  /** Names the invocation as a pass lease's holder (Lambda's request id); default: a fresh UUID. */
  readonly invocationId?: string;
}

/** An input the function is not subscribed to: a routing bug, or a forged invoke. */
function notRouted(fn: FunctionName, input: FunctionInput): EventParseError {
  const what = input.kind === 'event' ? JSON.stringify(input.event['detail-type']) : input.kind;
  return new EventParseError(`${fn} event`, [`detail-type: not routed to ${fn}: ${what}`]);
}

/**
 * An event for another cluster than the deployment's: refused before any I/O (docs/functions.md), the
 * same way in every function.
 */
export function checkServedCluster(event: RelayInput, served: string): void {
  if (event.detail.cluster !== served) {
    throw new EventParseError(event['detail-type'], [
      `detail.cluster: this deployment serves cluster ${JSON.stringify(served)}, got ${JSON.stringify(event.detail.cluster)}`,
    ]);
  }
}

/** The cluster an input names (an event's detail.cluster, an invoke's cluster); none for a schedule's tick. */
export function clusterOf(input: FunctionInput): string | undefined {
  if (input.kind === 'event') return input.event.detail.cluster;
  if (input.kind === 'invoke') return input.invocation.cluster;
  return undefined;
}

/**
 * The refusal of an input for a cluster the deployment does not serve, naming the field and the served
 * clusters: thrown before any I/O, as a malformed event (docs/functions.md).
 */
export function unservedCluster(
  input: FunctionInput,
  cluster: string,
  served: readonly string[],
): EventParseError {
  const serves =
    served.length === 1
      ? `cluster ${JSON.stringify(served[0])}`
      : `clusters ${served.map((name) => JSON.stringify(name)).join(', ')}`;
  const [what, field] =
    input.kind === 'event'
      ? [input.event['detail-type'], 'detail.cluster']
      : ['eviction drainer event', 'cluster'];
  return new EventParseError(what, [
    `${field}: this deployment serves ${serves}, got ${JSON.stringify(cluster)}`,
  ]);
}

type Run = (ctx: RunContext, input: FunctionInput) => Promise<Step>;

const options = (deps: FunctionDeps): { signal?: AbortSignal } =>
  deps.signal === undefined ? {} : { signal: deps.signal };

/** The drainer's run: drain, then while the next due item falls within the budget, wait and drain again. */
async function drain(ctx: RunContext, input: FunctionInput): Promise<Step> {
  if (input.kind === 'event') throw notRouted('evictionDrainer', input);
  if (input.kind === 'invoke') checkDrainerInvocation(input.invocation, ctx.deps.config.cluster);
  const { deps } = ctx;
  const trigger = input.kind === 'invoke' ? input.invocation.reason : 'schedule';
  return drainerSteps(deps, {
    now: () => deps.clock.now(),
    budgetMs: drainerWaitBudget(
      trigger,
      deps.config,
      ctx.remainingMs(),
      input.kind === 'invoke' ? input.invocation.nextPassWithinMs : undefined,
    ),
  });
}

/**
 * Every function's dispatch. Each checks what it was given (the detail-types it is subscribed to, the
 * served cluster), then runs its service.
 *
 * @example
 * await runSteps(await Dispatch.nodeTaints(ctx, { kind: 'event', event }), sleep);
 */
export const Dispatch: Readonly<Record<FunctionName, Run>> = {
  nodeTaints: async (ctx, input) => {
    if (input.kind !== 'event' || input.event['detail-type'] !== NodeChangedDetailType)
      throw notRouted('nodeTaints', input);
    checkServedCluster(input.event, ctx.deps.config.cluster);
    await runNodeTaints(ctx.deps, input.event.detail, options(ctx.deps));
    return done;
  },
  taintEviction: async (ctx, input) => {
    if (input.kind !== 'event') throw notRouted('taintEviction', input);
    const { event } = input;
    checkServedCluster(event, ctx.deps.config.cluster);
    if (event['detail-type'] === NodeChangedDetailType)
      await handleNodeChanged(ctx.deps, event.detail, options(ctx.deps));
    else if (event['detail-type'] === PodChangedDetailType)
      await handlePodChanged(ctx.deps, event.detail, options(ctx.deps));
    else throw notRouted('taintEviction', input);
    return done;
  },
  podProcessing: async (ctx, input) => {
    if (input.kind !== 'event' || input.event['detail-type'] !== PodChangedDetailType)
      throw notRouted('podProcessing', input);
    checkServedCluster(input.event, ctx.deps.config.cluster);
    await processPodChange(ctx.deps, input.event.detail, options(ctx.deps));
    return done;
  },
  monitorNodeHealth: async (ctx, input) => {
    if (input.kind === 'schedule') {
      await runScheduledCheck(ctx.deps, ctx.deps.clock.now(), ctx.warm.cache);
      return done;
    }
    if (input.kind !== 'event' || input.event['detail-type'] !== HeartbeatDigestDetailType)
      throw notRouted('monitorNodeHealth', input);
    // Refused before the lease is taken: a digest for another cluster reads and writes nothing.
    checkServedCluster(input.event, ctx.deps.config.cluster);
    const { detail } = input.event;
    await withPassLease(
      ctx.deps,
      {
        holder: ctx.invocationId ?? randomUUID(),
        remainingMs: ctx.remainingMs(),
        // A part of a split digest waits (up to a period) rather than be dropped: its siblings need it.
        ...(detail.part.count > 1 && { waitMs: ctx.deps.config.nodeMonitorPeriod }),
      },
      () => runMonitorPass(ctx.deps, detail, ctx.warm),
    );
    return done;
  },
  evictionDrainer: drain,
};
