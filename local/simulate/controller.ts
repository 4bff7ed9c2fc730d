// The controller as the simulator runs it: the five functions' services (shared/app/), called the way
// their handlers (functions/*.ts) call them, behind an in-process bus that routes by serverless.yml's
// rules (routing.ts). Nothing here decides anything about nodes or pods: it delivers events, runs the
// schedules, retries failed invocations as Lambda does, and wakes the drainer when something is due.
//
// - The bus: every event the relay publishes is encoded with shared/events.ts into EventBridge's JSON
//   envelope and parsed again by each function that receives it (parseRelayEvent), so the contract is
//   exercised on every event. Delivery takes no time.
// - Order within an instant (after the relay's timers): the Node/Pod Changed handlers, then the monitor,
//   then the drainer (FunctionPriority). Upstream's informers update the node lister before
//   monitorNodeHealth lists it, and a digest reports what the relay observed up to its instant, so a pass
//   sees the changes observed at the same instant; the drainer drains what the pass queued, as upstream's
//   doNoExecuteTaintingPass does within the next 100 ms.
// - Failures: a function that throws is retried as Lambda retries an asynchronous invoke, 1 minute and
//   then 2 minutes later, then dropped; every failure is a diagnostic.
// - The drainer runs on its schedule and when the monitor triggers it, as deployed, and also at the
//   instant the next queue item or pod eviction becomes due (wakeDrainerWhenDue). Upstream polls every
//   NodeEvictionPeriod (100 ms), so a zone's next NoExecute taint comes when its token bucket refills
//   (1 node per 10 s per zone by default) and a pod's eviction when its toleration ends; the deployed
//   drainer gets there on the monitor's 5 s beat, which the default timings fall on anyway. Waking it at
//   the due instant, read from the queues and timers with the domain's own tryNext, keeps upstream's
//   timing for any setting without polling every 100 ms of virtual time.
import type { ControllerConfig } from '../../shared/config.js';
import { checkDrainerInvocation, DrainerInvocation, runDrainer } from '../../shared/app/drainer.js';
import {
  MonitorSource,
  runMonitorPass,
  runScheduledCheck,
  type MonitorCache,
  type MonitorDeps,
} from '../../shared/app/monitor.js';
import { runNodeTaints } from '../../shared/app/nodeTaints.js';
import { processPodChange } from '../../shared/app/podProcessing.js';
import { handleNodeChanged, handlePodChanged } from '../../shared/app/taintEviction.js';
import { head, tryNext, type RateLimitedTimedQueue } from '../../shared/domain/rateLimitedTimedQueue.js';
import type { EpochMillis, Millis, ZoneState } from '../../shared/domain/types.js';
import { EventParseError } from '../../shared/errors.js';
import {
  encodeDetail,
  HeartbeatDigestDetailType,
  NodeChangedDetailType,
  parseRelayEvent,
  PodChangedDetailType,
  RelaySource,
  type RelayEvent,
} from '../../shared/events.js';
import type { ClusterPort } from '../../shared/ports/cluster.js';
import type { EventSink, PublishFailure } from '../../shared/ports/eventSink.js';
import type { LogFields, Observer } from '../../shared/ports/observer.js';
import { Priority, type Scheduler } from '../../shared/ports/scheduler.js';
import type { LoadedState, StateStores } from '../../shared/ports/stores.js';
import { targetsOf, type Rule } from './routing.js';
import type { TimelineRecord } from './timeline.js';

/** Priorities of the functions within one instant, after the relay's: changes, monitor, drainer. */
export const FunctionPriority = Object.freeze({
  changes: Priority.Controller,
  monitor: Priority.Controller + 10,
  drainer: Priority.Controller + 20,
});

/** Lambda's asynchronous-invoke retries: two more attempts, 1 and 2 minutes after a failure. */
const RetryDelays: readonly Millis[] = [60_000, 120_000];

const noWait = (): Promise<void> => Promise.resolve();

export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * The first instant after `after` at which `tryNext` hands out the queue's head: its processAt has come
 * and its zone's limiter has a token. Found with the domain's own tryNext (a binary search over whole
 * milliseconds: the answer is at most 1 ms late), so the simulator re-implements no limiter arithmetic.
 * Undefined for an empty queue or a limiter that never gives a token (a zone rate of 0).
 */
export function firstHandOut(queue: RateLimitedTimedQueue, after: EpochMillis): EpochMillis | undefined {
  const first = head(queue);
  if (first === undefined) return undefined;
  const handsOut = (t: EpochMillis): boolean => tryNext(queue, t).item !== undefined;
  let lo = Math.max(Math.floor(after) + 1, Math.ceil(first.processAt));
  if (handsOut(lo)) return lo;
  const { limiter } = queue;
  if (limiter.kind === 'never' || limiter.qps <= 0) return undefined;
  // A bucket refilled from empty for burst/qps seconds is full: a token is certain by then.
  let hi = lo + Math.ceil((limiter.burst / limiter.qps) * 1000) + 1;
  if (!handsOut(hi)) return undefined;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (handsOut(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** What one invocation gets: a relay event as it travels, a schedule's event, or the monitor's invoke. */
type Payload =
  | { readonly kind: 'relay'; readonly json: string }
  | { readonly kind: 'schedule'; readonly envelope: Readonly<Record<string, unknown>> }
  | { readonly kind: 'invoke'; readonly invocation: DrainerInvocation };

export type Diagnose = (level: 'warn' | 'error', source: string, message: string, fields?: LogFields) => void;

export interface SimulatedControllerOptions {
  readonly config: ControllerConfig;
  readonly scheduler: Scheduler;
  /** Nothing is scheduled after the end of the run. */
  readonly end: EpochMillis;
  readonly rules: readonly Rule[];
  readonly stores: StateStores;
  readonly cluster: ClusterPort;
  /** Where the monitor's zone-state decisions go (ZoneState lines). */
  readonly emit: (record: TimelineRecord) => void;
  readonly diagnose: Diagnose;
}

export interface SimulatedController {
  /** The bus the relay publishes to. */
  readonly bus: EventSink;
  /** Starts serverless.yml's schedules: each fires `start + period`, `start + 2·period`, … */
  startSchedules(start: EpochMillis): void;
  /** Invocations so far, by function. */
  readonly invocations: Readonly<Record<string, number>>;
  /** Events the bus accepted so far. */
  eventsPublished(): number;
}

function wrongEvent(fn: string, event: RelayEvent): EventParseError {
  return new EventParseError(`${fn} event`, [
    `detail-type: not routed to ${fn}: ${JSON.stringify(event['detail-type'])}`,
  ]);
}

const envelopeBase = { version: '0', account: '000000000000', region: 'us-east-1' } as const;

/**
 * The controller's functions on the scheduler, and the bus in front of them.
 *
 * @example
 * const controller = createSimulatedController({ config, scheduler, end, rules, stores, cluster, emit, diagnose });
 * createRelay({ ..., sink: controller.bus });
 * controller.startSchedules(start);
 */
export function createSimulatedController(options: SimulatedControllerOptions): SimulatedController {
  const { config, scheduler, end, rules, stores, cluster: clusterPort, emit, diagnose } = options;
  const cluster = config.cluster;
  const invocations: Record<string, number> = {};
  let published = 0;
  let envelopes = 0;

  const observer: Observer = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message, fields) => {
      diagnose('warn', 'controller', message, fields);
    },
    error: (message, fields) => {
      diagnose('error', 'controller', message, fields);
    },
    metric: () => undefined,
    decided: (decision) => {
      if (decision.source !== MonitorSource || decision.what !== 'zoneState') return;
      const { from, to } = decision.inputs ?? {};
      const label = decision.node.replace(/^#zone:/, '');
      emit({
        kind: 'ZoneState',
        // monitorDecisions' zoneLabel writes the zone without labels as '-'; SCENARIOS.md prints "".
        zone: label === '-' ? '' : label,
        from: from as ZoneState,
        to: to as ZoneState,
      });
    },
  };

  const scheduledEnvelope = (rule: string): Readonly<Record<string, unknown>> => ({
    ...envelopeBase,
    id: `simulate-${++envelopes}`,
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    time: new Date(scheduler.now()).toISOString(),
    resources: [`arn:aws:events:us-east-1:000000000000:rule/${rule}`],
    detail: {},
  });

  // One drainer run per instant drains all that is due then.
  const pendingDrainerRuns = new Set<EpochMillis>();
  const scheduleDrainer = (at: EpochMillis, invocation?: DrainerInvocation): void => {
    const when = Math.max(at, scheduler.now());
    if (pendingDrainerRuns.has(when)) return;
    pendingDrainerRuns.add(when);
    schedule(
      'evictionDrainer',
      invocation === undefined
        ? { kind: 'schedule', envelope: scheduledEnvelope('evictionDrainer-due') }
        : { kind: 'invoke', invocation },
      when,
    );
  };

  const common = { config, stores, cluster: clusterPort, observer };
  const monitorDeps: MonitorDeps = {
    ...common,
    clock: scheduler,
    triggerDrainer: (invocation) => {
      // What the Lambda invoke would carry, parsed as the drainer's handler parses it.
      scheduleDrainer(scheduler.now(), DrainerInvocation.parse(JSON.parse(JSON.stringify(invocation))));
      return Promise.resolve();
    },
  };
  const withClock = { ...common, clock: scheduler };
  const cache: MonitorCache = new Map<string, LoadedState>();

  const relayEvent = (payload: Payload): RelayEvent => {
    if (payload.kind !== 'relay') throw new EventParseError('relay event', ['source: expected "nlc.relay"']);
    return parseRelayEvent(JSON.parse(payload.json));
  };
  const handlers: Readonly<Record<string, { priority: number; handle: (p: Payload) => Promise<unknown> }>> = {
    nodeTaints: {
      priority: FunctionPriority.changes,
      handle: (payload) => {
        const event = relayEvent(payload);
        if (event['detail-type'] !== NodeChangedDetailType) throw wrongEvent('nodeTaints', event);
        return runNodeTaints(withClock, event.detail);
      },
    },
    taintEviction: {
      priority: FunctionPriority.changes,
      handle: (payload) => {
        const event = relayEvent(payload);
        const deps = { ...withClock, sleep: noWait };
        if (event['detail-type'] === NodeChangedDetailType) return handleNodeChanged(deps, event.detail);
        if (event['detail-type'] === PodChangedDetailType) return handlePodChanged(deps, event.detail);
        throw wrongEvent('taintEviction', event);
      },
    },
    podProcessing: {
      priority: FunctionPriority.changes,
      handle: (payload) => {
        const event = relayEvent(payload);
        if (event['detail-type'] !== PodChangedDetailType) throw wrongEvent('podProcessing', event);
        return processPodChange(withClock, event.detail);
      },
    },
    monitorNodeHealth: {
      priority: FunctionPriority.monitor,
      handle: (payload) => {
        if (payload.kind === 'schedule') return runScheduledCheck(monitorDeps, scheduler.now());
        const event = relayEvent(payload);
        if (event['detail-type'] !== HeartbeatDigestDetailType) throw wrongEvent('monitorNodeHealth', event);
        return runMonitorPass(monitorDeps, event.detail, { cache });
      },
    },
    evictionDrainer: {
      priority: FunctionPriority.drainer,
      handle: (payload) => {
        if (payload.kind === 'invoke') checkDrainerInvocation(payload.invocation, cluster);
        return runDrainer({ ...common, sleep: noWait }, scheduler.now());
      },
    },
  };
  for (const rule of rules) {
    if (!(rule.function in handlers)) {
      throw new TypeError(
        `serverless.yml function ${rule.function} has no in-process handler in the simulator`,
      );
    }
  }
  // The functions that may change the eviction queues or the pod eviction timers.
  const touchesQueues = new Set(['monitorNodeHealth', 'evictionDrainer', 'taintEviction', 'podProcessing']);

  /** Wakes the drainer when the next queue item can be handed out or the next pod eviction is due. */
  async function wakeDrainerWhenDue(): Promise<void> {
    const now = scheduler.now();
    let next: EpochMillis | undefined;
    const earliest = (at: EpochMillis | undefined): void => {
      if (at !== undefined && at > now && (next === undefined || at < next)) next = at;
    };
    const loaded = await stores.zoneQueues.loadZoneQueues(cluster);
    for (const queue of loaded.queues.values()) earliest(firstHandOut(queue, now));
    if (config.evictionMode === 'taint') {
      for (const eviction of await stores.podEvictions.list(cluster)) {
        if (!eviction.firing) earliest(eviction.firesAt);
      }
    }
    if (next !== undefined && next <= end) scheduleDrainer(next);
  }

  function schedule(fn: string, payload: Payload, at: EpochMillis = scheduler.now(), attempt = 1): void {
    const handler = handlers[fn];
    if (handler === undefined) throw new TypeError(`no handler for ${fn}`);
    scheduler.at(at, handler.priority, async () => {
      if (fn === 'evictionDrainer') pendingDrainerRuns.delete(at);
      invocations[fn] = (invocations[fn] ?? 0) + 1;
      try {
        await handler.handle(payload);
      } catch (error) {
        const delay = RetryDelays[attempt - 1];
        diagnose('error', fn, describeError(error), {
          attempt,
          ...(delay === undefined ? { dropped: true } : { retryInSeconds: delay / 1000 }),
        });
        if (delay !== undefined) schedule(fn, payload, scheduler.now() + delay, attempt + 1);
      }
      if (touchesQueues.has(fn)) await wakeDrainerWhenDue();
    });
  }

  const bus: EventSink = {
    publish(events) {
      const failed: PublishFailure[] = [];
      events.forEach((event, index) => {
        let json: string;
        try {
          json = JSON.stringify({
            ...envelopeBase,
            id: `simulate-${++envelopes}`,
            'detail-type': event.detailType,
            source: RelaySource,
            time: new Date(scheduler.now()).toISOString(),
            resources: [],
            detail: encodeDetail(event),
          });
        } catch (error) {
          // A relay bug (the event breaks its own contract): reported, never delivered.
          failed.push({ index, event, code: 'EncodeError', message: describeError(error), permanent: true });
          diagnose('error', 'relay', describeError(error));
          return;
        }
        published++;
        for (const fn of targetsOf(JSON.parse(json), rules)) schedule(fn, { kind: 'relay', json });
      });
      return Promise.resolve({
        sent: events.length - failed.length,
        failed,
        retried: 0,
        requests: Math.ceil(events.length / 10),
      });
    },
  };

  return {
    bus,
    startSchedules(start) {
      for (const rule of rules) {
        if (rule.kind !== 'schedule') continue;
        const fn = rule.function;
        const priority = handlers[fn]?.priority ?? FunctionPriority.drainer;
        scheduler.every(rule.periodMs, start + rule.periodMs, priority, () => {
          if (fn === 'evictionDrainer') scheduleDrainer(scheduler.now());
          else schedule(fn, { kind: 'schedule', envelope: scheduledEnvelope(`${fn}-schedule`) });
        });
      }
    },
    invocations,
    eventsPublished: () => published,
  };
}
