// The eviction drainer: upstream doNoExecuteTaintingPass (taint mode) or doEvictionPass (legacy mode),
// which upstream runs every NodeEvictionPeriod (100 ms) over each zone's RateLimitedTimedQueue, plus the
// taint eviction controller's fired timers (TimedWorkerQueue → deletePodHandler: firedPodEvictions.ts).
// Here it runs on a schedule and after each monitor pass (docs/architecture.md#rate-limit), against the
// queues in DynamoDB.
//
// What differs from upstream, and why:
// - Upstream holds evictorLock for a whole Try loop; several drainers may run at once here. Each token is
//   taken with a conditional read-modify-write of the zone's queue (ZoneQueueStore.updateZoneQueue) BEFORE
//   the node is touched, so drainers together never take more tokens than the bucket holds: per zone,
//   never more than burst + qps × window taints in any window (docs/architecture.md#rate-limit). The item
//   stays queued until completeTry is written, as upstream's item stays at the head while its callback runs,
//   and the same write binds the token to it (a claim, rateLimitedTimedQueue.ts TokenClaim): while its
//   write may be in flight (TokenClaimTtl) other drainers leave the item to this run and hand out the
//   zone's next item, with a token of its own; after that, the next one takes it over without a token.
//   So a slow or retried taint write never spends a second token on one node (docs/monitor.md).
// - One `now` per run instead of a clock read per item: a run is short, and with burst 1 a run takes at
//   most one token per zone unless the rate is very high. One clock: the zone queues and limiters are
//   stamped on the functions' clock (the monitor moves each digest's instants onto it,
//   docs/architecture.md#digest-time), as the pod eviction timers are, so both are compared with the
//   caller's. The bound burst + qps × window therefore holds on the functions' clock, which is the API
//   server's to within NTP: not on an estimate of the relay's that a late digest could move.
// - Upstream's pass polls every NodeEvictionPeriod (100 ms). Here a run returns when the next item or
//   timer becomes due (`nextDueInMs`), and the handler waits for it within a budget (drainerScheduling.ts
//   drainerSteps, drainerWaitBudget): the monitor starts a run whenever something is due within its
//   next period, and the drainer's own schedule keeps one waiting while digests are missing. So a zone's
//   tokens are used within the delivery delay of their instant, not on a schedule grid.
// - Legacy mode: nodeEvictionMap is the monitor's (it lives in the Nodes health rows, which only the
//   monitor writes). The drainer does not write it; the monitor derives `evicted` from the queue (a
//   node marked toBeEvicted that is in its zone's processed-once set but no longer queued was drained:
//   monitorSteps.ts reconcileLegacyEvictionStatus), which is exactly when upstream's doEvictionPass sets it.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ControllerConfig } from '../config.js';
import { driveAsync } from '../domain/effects.js';
import { processEvictionItem } from '../domain/legacyEvictionPass.js';
import {
  type Claimant,
  completeTry,
  nextHandOutAt,
  peekNext,
  type TimedValue,
  type TokenClaim,
  type TryResult,
  tryNext,
} from '../domain/rateLimitedTimedQueue.js';
import { noExecuteTaintInPlace, processNoExecuteTaintItem } from '../domain/taintBasedEviction.js';
import { getNodeCondition, NodeReady, type EpochMillis, type Millis, type Node } from '../domain/types.js';
import { formatZoneKey } from '../domain/zones.js';
import { EventParseError } from '../errors.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { JsonValue, StateStores } from '../ports/stores.js';
import { DecidingExecutor } from './decisions.js';
import {
  DefaultMaxPodDeletionsPerRun,
  firePodEvictions,
  type PodDeletionResult,
} from './firedPodEvictions.js';

export type { PodDeletionResult } from './firedPodEvictions.js';

/** The Decisions `source` of the drainer's records. */
export const DrainerSource = 'drainer';

/** Queue items one run processes at most (all zones): a backstop for very high rates; logged when hit. */
export const DefaultMaxQueueItemsPerRun = 500;

/**
 * How long a run holds a queue item it spent a token on before another run may take it over (without a
 * token): the taint write's request timeout (10 s, KubernetesRequestTimeout) and a few seconds more.
 * Past it the holder has most likely died; if it is only slow (its write retried), the taker writes the
 * same taint again, which spends no token and changes nothing. Shorter would mean duplicate writes,
 * longer a crashed run's node tainted that much later; never a second token either way.
 */
export const TokenClaimTtl: Millis = 15_000;

/**
 * What the monitor sends the drainer (an asynchronous Lambda invoke): which cluster to drain, and why.
 *
 * @example DrainerInvocation.parse({ source: 'nlc.monitor', cluster: 'prod', reason: 'monitorPass' })
 */
export const DrainerInvocation = z.object({
  source: z.literal('nlc.monitor'),
  cluster: z.string().min(1),
  reason: z.enum(['monitorPass', 'scheduledCheck']),
  /**
   * How long until the monitor's next pass (its digest's nextDigestWithin): the run waits for items due
   * within it. Absent: nodeMonitorPeriod (monitors before it).
   */
  nextPassWithinMs: z.int().min(1).max(3_600_000).optional(),
});
export type DrainerInvocation = z.output<typeof DrainerInvocation>;

/** Starts the drainer for a cluster (asynchronously: resolves once the invoke was accepted). */
export type TriggerDrainer = (invocation: DrainerInvocation) => Promise<void>;

export interface DrainerDeps {
  readonly config: Pick<
    ControllerConfig,
    'cluster' | 'dryRun' | 'evictionMode' | 'nodeMonitorPeriod' | 'emulationVersion'
  >;
  readonly stores: Pick<
    StateStores,
    'zoneQueues' | 'nodes' | 'podEvictions' | 'decisions' | 'controllerState'
  >;
  readonly cluster: Pick<ClusterPort, 'execute' | 'deletePodForTaintEviction' | 'listPodsOnNode'>;
  readonly observer: Observer;
  readonly signal?: AbortSignal;
  /** Waits between pod deletion attempts (deletePodRetryInterval); tests pass one that does not wait. */
  readonly sleep?: (ms: Millis, signal?: AbortSignal) => Promise<void>;
  readonly maxQueueItemsPerRun?: number;
  readonly maxPodDeletionsPerRun?: number;
}

/** One zone's share of a run. */
export interface ZoneDrainResult {
  readonly zone: string;
  /**
   * Items processed: handed out with a token, taken over without one (its claim had run out), or found
   * tainted already and dequeued without one.
   */
  readonly processed: number;
  /** NoExecute taints written (taint mode) or nodes whose pods were deleted (legacy mode). */
  readonly evicted: number;
  /** Items put back for a retry (failed write, no Ready condition, failed pod list). */
  readonly retried: number;
}

export interface DrainerResult {
  readonly cluster: string;
  /** The caller's clock: what the pod eviction timers were compared with. */
  readonly now: EpochMillis;
  /** What the zone queues were compared with: `now` (they are stamped on the functions' clock). */
  readonly queueNow: EpochMillis;
  /**
   * How long after `now` the next queue item can be handed out or the next pod eviction is due;
   * 0 when the run was capped (more is due now); undefined when nothing is pending.
   */
  readonly nextDueInMs?: Millis;
  readonly zones: readonly ZoneDrainResult[];
  readonly pods: PodDeletionResult;
  /** The per-run caps were hit: more is due than one run does. */
  readonly capped: boolean;
}

/**
 * Checks that an invocation is for the cluster this deployment serves (its kubeconfig points there).
 * Throws EventParseError naming `cluster` otherwise: nothing is read or written.
 */
export function checkDrainerInvocation(invocation: DrainerInvocation, served: string): void {
  if (invocation.cluster !== served) {
    throw new EventParseError('drainer invocation', [
      `cluster: this deployment serves cluster ${JSON.stringify(served)}, got ${JSON.stringify(invocation.cluster)}`,
    ]);
  }
}

/**
 * One drainer run at `now` (the Lambda's clock): every zone whose queue has a due item is drained one
 * token at a time, then the due pod evictions fire.
 *
 * dryRun (shadow mode) changes nothing in the cluster, and does advance the drainer's own state: tokens
 * are taken and items completed as if the write had succeeded, and a fired pod timer is consumed. So the
 * Decisions trail shows what the real controller would do at the real rate, once per decision instead of
 * once a minute. (If the cluster never gets the taint, the monitor re-queues the node on its next pass,
 * upstream's #89012 handling, and the shadow decides the taint again when the zone's bucket allows;
 * beside a live controller that has tainted the node, it stops there.)
 *
 * @example
 * const result = await runDrainer({ config, stores, cluster, observer, signal }, clock.now());
 */
export async function runDrainer(deps: DrainerDeps, now: EpochMillis): Promise<DrainerResult> {
  const { config, stores, observer, signal } = deps;
  const cluster = config.cluster;
  const opts = signal === undefined ? {} : { signal };
  // The zone queues are stamped on the functions' clock (docs/architecture.md#digest-time): ours.
  const queueNow = now;
  let context: Record<string, JsonValue> = {};
  const executor = new DecidingExecutor({
    cluster,
    port: deps.cluster,
    decisions: stores.decisions,
    source: DrainerSource,
    // The monitor's decisions are at its digests' instants moved onto the functions' clock, as ours are:
    // the trail stays in one order.
    at: queueNow,
    dryRun: config.dryRun,
    observer,
    context: () => context,
    ...opts,
  });

  // This run's claims: tokens it spends are bound to their items until it completes them.
  const claimant: Claimant = { by: randomUUID(), ttl: TokenClaimTtl };
  const loaded = await stores.zoneQueues.loadZoneQueues(cluster, opts);
  const dueZones = [...loaded.queues]
    .filter(([, queue]) => peekNext(queue, queueNow) !== undefined)
    .map(([zone]) => zone)
    .sort();

  let budget = deps.maxQueueItemsPerRun ?? DefaultMaxQueueItemsPerRun;
  let capped = false;
  const zones: ZoneDrainResult[] = [];
  for (const zone of dueZones) {
    const result = { zone, processed: 0, evicted: 0, retried: 0 };
    zones.push(result);
    for (;;) {
      if (budget <= 0) {
        capped = true;
        break;
      }
      // The due head, and the node as the API has it now (the node cache may predate the head's taint).
      const fresh = config.evictionMode === 'taint' ? await freshDueHead(deps, zone, queueNow) : undefined;
      // Not in shadow mode: a taint in place there is another controller's (this one never writes), and
      // the shadow takes the token and records the swap it would have made, as if it were not there.
      if (fresh !== undefined && !config.dryRun && noExecuteTaintInPlace(fresh.node)) {
        // Tainted already (a pass that had the node's copy from before the taint re-queued it): done,
        // without a token, so the zone's next real taint is not delayed by a token period.
        budget--;
        result.processed++;
        context = itemContext(zone, fresh.node);
        await completeItem(deps, zone, fresh.item, { done: true }, queueNow);
        await executor.record([
          {
            node: fresh.item.value,
            what: 'dequeue',
            why: 'doNoExecuteTaintingPass: the node has its NoExecute taint already; done without a token',
          },
        ]);
        continue;
      }
      // Take one token and claim its item, in one conditional write: a lost race rereads and decides
      // again (updateZoneQueue). An item whose claim ran out is taken over without a token.
      const taken = await stores.zoneQueues.updateZoneQueue<{ item?: TimedValue; ranOut?: TokenClaim }>(
        cluster,
        zone,
        (queue) => {
          if (queue === undefined) return { queue: undefined, result: {} };
          const step = tryNext(queue, queueNow, claimant);
          const ranOut = step.takenOver
            ? queue.queue.find((v) => v.value === step.item?.value)?.claim
            : undefined;
          // No token taken (empty queue, or rate limited): nothing to write.
          return {
            queue: step.queue === queue ? undefined : step.queue,
            result: {
              ...(step.item !== undefined && { item: step.item }),
              ...(ranOut !== undefined && { ranOut }),
            },
          };
        },
        opts,
      );
      const { item, ranOut } = taken.result;
      if (item === undefined) break;
      budget--;
      result.processed++;
      const node =
        fresh?.item.value === item.value ? fresh.node : await stores.nodes.getNode(cluster, item.value, opts);
      context = itemContext(zone, node);
      if (ranOut !== undefined) {
        await executor.record([
          {
            node: item.value,
            what: 'takeOver',
            why: `the token was spent on this item at ${isoTime(ranOut.at)} by a run that did not complete it by ${isoTime(ranOut.until)}: taken over without a token`,
          },
        ]);
      }
      const outcome =
        config.evictionMode === 'taint'
          ? await drainTaintItem(executor, item, node, queueNow)
          : await drainEvictionItem(executor, item, node, queueNow);
      if (outcome.evicted) {
        result.evicted++;
        // Counted only for real writes: in shadow mode nothing was tainted or evicted.
        if (!config.dryRun) observer.metric('node_collector_evictions_total', 'Count', 1, { zone });
      }
      if (!outcome.done) result.retried++;
      await completeItem(deps, zone, item, outcome.tryResult, queueNow);
    }
  }

  const pods = await firePodEvictions(deps, executor, now);
  if (capped || pods.capped) {
    observer.warn('drainer run capped: more is due than one run does', {
      cluster,
      maxQueueItemsPerRun: deps.maxQueueItemsPerRun ?? DefaultMaxQueueItemsPerRun,
      maxPodDeletionsPerRun: deps.maxPodDeletionsPerRun ?? DefaultMaxPodDeletionsPerRun,
    });
  }
  const nextDueInMs =
    capped || pods.capped ? 0 : await nextDue(deps, { queuesLoaded: loaded.queues.size > 0, now, queueNow });
  const drained: DrainerResult = {
    cluster,
    now,
    queueNow,
    ...(nextDueInMs !== undefined && { nextDueInMs }),
    zones,
    pods: pods.result,
    capped: capped || pods.capped,
  };
  // A run with nothing due and nothing pending (a steady cluster: every run of its schedule) is a debug
  // line: two a minute of nothing, paid in CloudWatch Logs. Any work, decision or pending item: info.
  const idle =
    executor.recorded.length === 0 &&
    nextDueInMs === undefined &&
    !drained.capped &&
    zones.every((z) => z.processed === 0) &&
    pods.result.deleted + pods.result.alreadyGone + pods.result.failed + pods.result.skipped === 0;
  (idle ? observer.debug.bind(observer) : observer.info.bind(observer))('drainer run', {
    cluster,
    // The id its token claims carry (`nlc queue`, CLAIMED BY).
    run: claimant.by,
    now: new Date(now).toISOString(),
    queueNow: new Date(queueNow).toISOString(),
    ...(nextDueInMs !== undefined && { nextDueInMs }),
    dryRun: config.dryRun,
    zones: Object.fromEntries(
      zones.map((z) => [
        formatZoneKey(z.zone) || '-',
        { processed: z.processed, evicted: z.evicted, retried: z.retried },
      ]),
    ),
    pods: pods.result,
    capped: drained.capped,
    decisions: executor.recorded.length,
  });
  return drained;
}

/**
 * How long after `now` something is next due: a zone queue's next hand-out (from a fresh read of the
 * queues, which this run and the monitor may have changed) or a pod eviction, both on the functions'
 * clock.
 */
async function nextDue(
  deps: DrainerDeps,
  { queuesLoaded, now, queueNow }: { queuesLoaded: boolean; now: EpochMillis; queueNow: EpochMillis },
): Promise<Millis | undefined> {
  const { config, stores, signal } = deps;
  const opts = signal === undefined ? {} : { signal };
  let next: Millis | undefined;
  const consider = (inMs: Millis | undefined): void => {
    if (inMs !== undefined && (next === undefined || inMs < next)) next = Math.max(0, inMs);
  };
  // Only zones with entries cost a read; with none at the start of the run, none are due before the
  // monitor queues one (and it starts a run then).
  if (queuesLoaded) {
    const fresh = await stores.zoneQueues.loadZoneQueues(config.cluster, opts);
    for (const queue of fresh.queues.values()) {
      const at = nextHandOutAt(queue, queueNow - 1);
      consider(at === undefined ? undefined : at - queueNow);
    }
  }
  if (config.evictionMode === 'taint') {
    const at = await stores.podEvictions.nextDueAt(config.cluster, now, opts);
    consider(at === undefined ? undefined : at - now);
  }
  return next;
}

/** upstream Try's bookkeeping after an item: done (processed once), or retried after `wait`. */
async function completeItem(
  deps: DrainerDeps,
  zone: string,
  item: TimedValue,
  tryResult: TryResult,
  queueNow: EpochMillis,
): Promise<void> {
  const { config, stores, signal } = deps;
  await stores.zoneQueues.updateZoneQueue(
    config.cluster,
    zone,
    (queue) => {
      if (queue === undefined) return { queue: undefined, result: undefined };
      const next = completeTry(queue, item, tryResult, queueNow);
      return { queue: next === queue ? undefined : next, result: undefined };
    },
    signal === undefined ? {} : { signal },
  );
}

/**
 * The item the zone queue hands out next at `queueNow` (peekNext: one whose claim ran out, else the
 * first unclaimed one if due), with the node as the API has it now (a quorum read): undefined when
 * nothing is due or the read failed (the cache's copy is then used, as before).
 */
async function freshDueHead(
  deps: DrainerDeps,
  zone: string,
  queueNow: EpochMillis,
): Promise<{ item: TimedValue; node: Node | undefined } | undefined> {
  const { config, stores, signal } = deps;
  const opts = signal === undefined ? {} : { signal };
  const peeked = await stores.zoneQueues.updateZoneQueue(
    config.cluster,
    zone,
    (queue) => ({ queue: undefined, result: queue === undefined ? undefined : peekNext(queue, queueNow) }),
    opts,
  );
  const item = peeked.result;
  if (item === undefined) return undefined;
  const read = await deps.cluster.execute({ kind: 'getNode', node: item.value }, opts);
  if (read.ok) return { item, node: read.value };
  return read.reason === 'NotFound' ? { item, node: undefined } : undefined;
}

interface ItemOutcome {
  readonly tryResult: { readonly done: true } | { readonly done: false; readonly wait: Millis };
  readonly done: boolean;
  readonly evicted: boolean;
}

/** An instant of the queue's clock as the trail writes it. */
function isoTime(at: EpochMillis): string {
  return new Date(Math.floor(at)).toISOString();
}

/** What the trail records about the node a queue item names (the swap's inputs come from the effect). */
function itemContext(zone: string, node: Node | undefined): Record<string, JsonValue> {
  return {
    zone: formatZoneKey(zone) || '-',
    ready:
      node === undefined
        ? 'node not in the cache'
        : (getNodeCondition(node.conditions, NodeReady)?.status ?? 'none'),
  };
}

/** doNoExecuteTaintingPass for one item: decideNoExecuteTaint on the cached node, then the taint swap. */
async function drainTaintItem(
  executor: DecidingExecutor,
  item: TimedValue,
  node: Node | undefined,
  now: EpochMillis,
): Promise<ItemOutcome> {
  const processed = await driveAsync(processNoExecuteTaintItem(item, node, now), executor.execute);
  const { decision } = processed;
  // A taint write is recorded by the executor itself (intended, then its outcome).
  if (decision.kind === 'done') {
    await executor.record([
      { node: item.value, what: 'dequeue', why: `doNoExecuteTaintingPass: ${decision.why}` },
    ]);
  } else if (decision.kind === 'retry') {
    await executor.record([
      {
        node: item.value,
        what: 'retry',
        why: `doNoExecuteTaintingPass: ${decision.why}, retried in ${decision.wait}ms`,
      },
    ]);
  }
  return { tryResult: processed.result, done: processed.result.done, evicted: processed.tainted };
}

/** doEvictionPass for one item (legacy mode): list the node's pods and DeletePods. */
async function drainEvictionItem(
  executor: DecidingExecutor,
  item: TimedValue,
  node: Node | undefined,
  now: EpochMillis,
): Promise<ItemOutcome> {
  const processed = await driveAsync(processEvictionItem(item, node !== undefined), executor.execute);
  const { outcome } = processed;
  if (processed.result.done) {
    await executor.record([
      {
        node: item.value,
        what: 'evicted',
        why: 'doEvictionPass: DeletePods done; pods bound to the node later are deleted at once',
        inputs: { podsRemaining: outcome?.remaining ?? false, at: new Date(now).toISOString() },
      },
    ]);
  } else {
    await executor.record([
      {
        node: item.value,
        what: 'retry',
        why:
          outcome === undefined
            ? 'doEvictionPass: listing the pods on the node failed; retried on the next run'
            : `doEvictionPass: DeletePods failed (${outcome.error ?? 'unknown error'}); retried on the next run`,
      },
    ]);
  }
  return { tryResult: processed.result, done: processed.result.done, evicted: processed.countEviction };
}
