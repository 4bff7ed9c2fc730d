// The controller as the simulator runs it: the five functions through the Lambda shells' own dispatch
// (shared/app/dispatch.ts: what each accepts, the served-cluster check, the service it runs), behind an
// in-process bus that routes by serverless.yml's rules (routing.ts). Nothing here decides anything about nodes or pods: it delivers events, runs the
// schedules, and retries failed invocations as Lambda does.
//
// - Served clusters: one deployment serves every cluster of `served`, as functions/shell.ts does: an
//   event or the monitor's invoke runs with its cluster's settings, Kubernetes client and warm state
//   (an unserved cluster is refused before any I/O); a schedule's tick runs every cluster, one after
//   another, and fails (retried whole, as Lambda retries it) when any of them failed.
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
//   then 2 minutes later, then dead-lettered; every failure is a diagnostic. With `chaos` (chaos.ts),
//   every delivery is duplicated, delayed and failed at random as well, and (deadLetter) some are
//   dead-lettered outright.
// - The drainer runs as deployed: on its schedule and when the monitor starts it (something due within
//   the next nodeMonitorPeriod), and a run waits for the next item that becomes due within its budget
//   (the dispatch's steps). A Lambda sleeps through a step's wait; here the wait is a continuation of
//   the same invocation at the due instant of virtual time. So a zone's next
//   NoExecute taint comes when its token bucket refills and a pod's eviction when its toleration ends, as
//   with upstream's 100 ms polling.
import type { ControllerConfig } from '../../shared/config.js';
import {
  clusterOf,
  Dispatch,
  FunctionNames,
  newWarmState,
  unservedCluster,
  type FunctionDeps,
  type FunctionInput,
  type FunctionName,
  type WarmState,
} from '../../shared/app/dispatch.js';
import type { Step } from '../../shared/app/steps.js';
import { DrainerInvocation } from '../../shared/app/drainer.js';
import { EvictionDrainerTimeoutMs } from '../../shared/app/drainerScheduling.js';
import { MonitorSource } from '../../shared/app/monitor.js';
import type { EpochMillis, Millis } from '../../shared/domain/types.js';
import { readZoneStateDecision } from '../../shared/decisionContract.js';
import { deepFreeze } from '../../shared/deepFreeze.js';
import { EventParseError } from '../../shared/errors.js';
import {
  encodeDetail,
  HeartbeatDigestDetailType,
  parseRelayEvent,
  RelaySource,
  type RelayEvent,
} from '../../shared/events.js';
import type { ClusterPort } from '../../shared/ports/cluster.js';
import type { EventSink, PublishFailure } from '../../shared/ports/eventSink.js';
import type { LogFields, Observer } from '../../shared/ports/observer.js';
import { Priority, type Scheduler } from '../../shared/ports/scheduler.js';
import type { DecisionRecord, StateStores } from '../../shared/ports/stores.js';
import { DeliveryChaos, type ChaosSettings, type DeliveryStats } from './chaos.js';
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

/** What one invocation gets: a relay event as it travels, a schedule's event, or the monitor's invoke. */
type Payload =
  | { readonly kind: 'relay'; readonly json: string; readonly origin: BusEvent['origin'] }
  | { readonly kind: 'schedule'; readonly envelope: Readonly<Record<string, unknown>> }
  | { readonly kind: 'invoke'; readonly invocation: DrainerInvocation };

/** An invocation that waits (in process, in a Lambda) and then goes on: its next step, `after` ms later. */
interface Continuation {
  readonly after: Millis;
  readonly run: () => Promise<Continuation | undefined>;
}

function isContinuation(value: unknown): value is Continuation {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { after?: unknown }).after === 'number' &&
    typeof (value as { run?: unknown }).run === 'function'
  );
}

/** A diagnostic; `cluster` names the served cluster it is about, when one is. */
export type Diagnose = (
  level: 'warn' | 'error',
  source: string,
  message: string,
  fields?: LogFields,
  cluster?: string,
) => void;

/** One served cluster of the deployment: what its runtime is built of (shared/adapters/runtime.ts). */
export interface ServedRuntime {
  /** The cluster's effective settings; `config.cluster` is its name. */
  readonly config: ControllerConfig;
  readonly cluster: ClusterPort;
  /** Where the monitor's zone-state decisions for this cluster go (ZoneState lines). */
  readonly emit: (record: TimelineRecord) => void;
}

export interface SimulatedControllerOptions {
  readonly scheduler: Scheduler;
  /** Nothing is scheduled after the end of the run. */
  readonly end: EpochMillis;
  readonly rules: readonly Rule[];
  /** The deployment's state tables, shared by its clusters (every key starts with the cluster's name). */
  readonly stores: StateStores;
  /** The clusters the deployment serves, in order (one: a single-cluster stage). */
  readonly served: readonly ServedRuntime[];
  readonly diagnose: Diagnose;
  /** Duplicated, delayed and failing deliveries (`nlc simulate --chaos`); none when absent. */
  readonly chaos?: ChaosSettings;
  /** Every decision the functions record (the Decisions trail), as it is recorded, with its cluster. */
  readonly onDecision?: (decision: DecisionRecord, cluster: string) => void;
  /** Every event the bus carries, as it is published (BusEvent). */
  readonly onBusEvent?: (event: BusEvent) => void;
  /** Every invocation, as its function starts (not a delivery that failed or was dead-lettered). */
  readonly onInvocation?: (invocation: Invocation) => void;
}

/** A function run, for tests and tools: which function, and what started it. */
export interface Invocation {
  readonly function: string;
  /** `relay`, `injected`: a bus event (detailType says which); `schedule`; `invoke`: the monitor's. */
  readonly origin: BusEvent['origin'] | 'schedule' | 'invoke';
  readonly detailType?: string;
  /** 1 for the first attempt, 2 and 3 for Lambda's retries. */
  readonly attempt: number;
}

/**
 * An event the bus carried, as EventBridge hands it to its targets: for tests and tools that watch
 * what reaches the functions (the controller never sees this).
 */
export interface BusEvent {
  readonly detailType: string;
  /** The detail as on the wire (parsed from the JSON the functions get): the caller's own copy. */
  readonly detail: unknown;
  /** `relay`: published by the relay; `injected`: by the scenario (injectEvent). */
  readonly origin: 'relay' | 'injected';
  /** The functions serverless.yml's rules route it to, in the rules' order. */
  readonly targets: readonly string[];
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
  /**
   * Delivery attempts, failures and dead-lettered deliveries so far; of one cluster's when `cluster` is
   * given (a schedule's tick counts for every cluster it runs for).
   */
  deliveries(cluster?: string): DeliveryStats;
  /**
   * Publishes an event on the bus as the relay's role could (injectEvent): `detail` as given, never
   * validated, in EventBridge's envelope, routed by the rules and delivered as the relay's events are.
   */
  inject(detailType: string, detail: unknown): void;
  /** The wire detail of the last Heartbeat Digest (part) a cluster's relay published; undefined before any. */
  lastDigestDetail(cluster: string): unknown;
}

const envelopeBase = { version: '0', account: '000000000000', region: 'us-east-1' } as const;

/**
 * The controller's functions on the scheduler, and the bus in front of them.
 *
 * @example
 * const controller = createSimulatedController({ scheduler, end, rules, stores, served: [{ config, cluster, emit }], diagnose });
 * createRelay({ ..., sink: controller.bus });
 * controller.startSchedules(start);
 */
export function createSimulatedController(options: SimulatedControllerOptions): SimulatedController {
  const { scheduler, end, rules, stores, served, diagnose } = options;
  const clusterNames = served.map((runtime) => runtime.config.cluster);
  const invocations: Record<string, number> = {};
  const stats = { deliveries: 0, failures: 0, deadLettered: 0 };
  const clusterStats = new Map(clusterNames.map((name) => [name, { ...stats }]));
  const chaos = options.chaos === undefined ? undefined : new DeliveryChaos(options.chaos);
  let published = 0;
  let envelopes = 0;

  // One set of dependencies per served cluster, as one runtime per cluster of a Lambda has: its
  // settings and Kubernetes client, the scheduler's clock, the services' retry waits taking no time, and
  // the monitor's invoke of the drainer as a delivery.
  const triggerDrainer: FunctionDeps['triggerDrainer'] = (invocation) => {
    // What the Lambda invoke would carry, parsed as the drainer's handler parses it.
    const parsed = DrainerInvocation.parse(JSON.parse(JSON.stringify(invocation)));
    deliver('evictionDrainer', { kind: 'invoke', invocation: parsed });
    return Promise.resolve();
  };
  const runtimes = new Map(
    served.map((runtime) => {
      const name = runtime.config.cluster;
      const observer: Observer = {
        debug: () => undefined,
        info: () => undefined,
        warn: (message, fields) => {
          diagnose('warn', 'controller', message, fields, name);
        },
        error: (message, fields) => {
          diagnose('error', 'controller', message, fields, name);
        },
        metric: () => undefined,
        decided: (decision) => {
          options.onDecision?.(decision, name);
          if (decision.source !== MonitorSource) return;
          // The zone without labels reads as '' (written `#zone:-`), as the output prints it (docs/simulate.md).
          // This run's own monitor wrote the decision: one that does not read is a bug, said as one.
          const zoneState = readZoneStateDecision(decision);
          if (zoneState === undefined) return;
          if (!zoneState.ok) {
            diagnose(
              'error',
              'controller',
              'a zoneState decision does not read',
              { error: zoneState.error },
              name,
            );
            return;
          }
          const { zone, from, to } = zoneState.value;
          runtime.emit({ kind: 'ZoneState', zone, from, to });
        },
      };
      const deps: FunctionDeps = {
        config: runtime.config,
        stores,
        cluster: runtime.cluster,
        observer,
        clock: scheduler,
        sleep: noWait,
        triggerDrainer,
      };
      // Each function's warm state (the monitor's cache and memos), kept as a warm Lambda keeps it.
      const warm = new Map<string, WarmState>(FunctionNames.map((fn) => [fn, newWarmState()]));
      return [name, { deps, warm }] as const;
    }),
  );

  const scheduledEnvelope = (rule: string): Readonly<Record<string, unknown>> => ({
    ...envelopeBase,
    id: `simulate-${++envelopes}`,
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    time: new Date(scheduler.now()).toISOString(),
    resources: [`arn:aws:events:us-east-1:000000000000:rule/${rule}`],
    detail: {},
  });

  // One parse per published event, shared by its targets and by every copy chaos delivers: they all get
  // the same bytes, so each Lambda's own parse gives the same event, or the same error. Frozen, so no
  // function can change what another reads.
  const parsedEvents = new WeakMap<Payload, { event: RelayEvent } | { error: unknown }>();
  // The JSON the bus read to route a published event: the same bytes, read once.
  const routedJson = new WeakMap<Payload, unknown>();
  const relayEvent = (payload: Payload): RelayEvent => {
    if (payload.kind !== 'relay') throw new EventParseError('relay event', ['source: expected "nlc.relay"']);
    let parsed = parsedEvents.get(payload);
    if (parsed === undefined) {
      try {
        const json: unknown = routedJson.has(payload) ? routedJson.get(payload) : JSON.parse(payload.json);
        parsed = { event: deepFreeze(parseRelayEvent(json)) };
      } catch (error) {
        parsed = { error };
      }
      parsedEvents.set(payload, parsed);
    }
    if ('error' in parsed) throw parsed.error;
    return parsed.event;
  };
  const priorities: Readonly<Record<FunctionName, number>> = {
    nodeTaints: FunctionPriority.changes,
    taintEviction: FunctionPriority.changes,
    podProcessing: FunctionPriority.changes,
    monitorNodeHealth: FunctionPriority.monitor,
    evictionDrainer: FunctionPriority.drainer,
  };
  const inputOf = (payload: Payload): FunctionInput =>
    payload.kind === 'relay'
      ? { kind: 'event', event: relayEvent(payload) }
      : payload.kind === 'schedule'
        ? { kind: 'schedule' }
        : { kind: 'invoke', invocation: payload.invocation };
  /** A run's steps as continuations: its waits are scheduled in virtual time, not slept through. */
  const continuation = (step: Step): Continuation | undefined =>
    step.kind === 'done' ? undefined : { after: step.ms, run: async () => continuation(await step.next()) };
  /** One cluster's run of an invocation: its first step, as a continuation. */
  interface PerClusterRun {
    readonly cluster: string;
    readonly run: () => Promise<Continuation | undefined>;
  }
  /**
   * The runs an invocation makes, as the Lambda shell makes them (functions/shell.ts): the run of the
   * cluster its event or invoke names (refused before any I/O when the deployment does not serve it), or
   * one run per served cluster for a schedule's tick. Throws what the shell's parse would.
   */
  const runsOf = (fn: FunctionName, payload: Payload): PerClusterRun[] => {
    const input = inputOf(payload);
    const target = clusterOf(input);
    const runOf = (cluster: string): PerClusterRun => {
      const runtime = runtimes.get(cluster);
      if (runtime === undefined) throw unservedCluster(input, cluster, clusterNames);
      return {
        cluster,
        // The Lambda's dispatch (shared/app/dispatch.ts), with the drainer's budget from its timeout.
        run: async () =>
          continuation(
            await Dispatch[fn](
              {
                deps: runtime.deps,
                warm: runtime.warm.get(fn) ?? newWarmState(),
                remainingMs: () => EvictionDrainerTimeoutMs,
              },
              input,
            ),
          ),
      };
    };
    return target === undefined ? clusterNames.map(runOf) : [runOf(target)];
  };
  const handlers: Readonly<Record<string, { priority: number; runs: (p: Payload) => PerClusterRun[] }>> =
    Object.fromEntries(
      FunctionNames.map((fn) => [
        fn,
        { priority: priorities[fn], runs: (payload: Payload) => runsOf(fn, payload) },
      ]),
    );
  for (const rule of rules) {
    if (!(rule.function in handlers)) {
      throw new TypeError(
        `serverless.yml function ${rule.function} has no in-process handler in the simulator`,
      );
    }
  }
  /**
   * A delivery of `payload` to `fn` by the bus, a schedule or the monitor's invoke: once, or with
   * chaos 1..duplicates copies, each after a random delay.
   */
  function deliver(fn: string, payload: Payload, at: EpochMillis = scheduler.now()): void {
    const copies = chaos?.copies() ?? 1;
    for (let copy = 0; copy < copies; copy++) attempt(fn, payload, at + (chaos?.delay() ?? 0), 1);
  }

  /** The served clusters a delivery is for: its event's or invoke's, or every one for a schedule's tick. */
  function clustersOf(payload: Payload): readonly string[] {
    if (payload.kind === 'schedule') return clusterNames;
    if (payload.kind === 'invoke') return [payload.invocation.cluster];
    const routed = routedJson.get(payload);
    const detail: unknown =
      typeof routed === 'object' && routed !== null ? Reflect.get(routed, 'detail') : undefined;
    const cluster: unknown =
      typeof detail === 'object' && detail !== null ? Reflect.get(detail, 'cluster') : undefined;
    return typeof cluster === 'string' ? [cluster] : [];
  }

  /** Counts a delivery attempt, a failure or a dead letter, for the deployment and its clusters. */
  function count(what: keyof DeliveryStats, payload: Payload): void {
    stats[what]++;
    for (const cluster of clustersOf(payload)) {
      const own = clusterStats.get(cluster);
      if (own !== undefined) own[what]++;
    }
  }

  /** A failed attempt is retried as Lambda retries an asynchronous invoke, then dead-lettered. */
  function retryOrDeadLetter(
    fn: string,
    payload: Payload,
    number: number,
    report: (fields: LogFields) => void,
  ): void {
    count('failures', payload);
    const delay = RetryDelays[number - 1];
    report({
      attempt: number,
      ...(delay === undefined ? { dropped: true } : { retryInSeconds: delay / 1000 }),
    });
    if (delay !== undefined) attempt(fn, payload, scheduler.now() + delay, number + 1);
    else count('deadLettered', payload);
  }

  /**
   * One invocation: each of its runs (one per cluster it serves) takes its first step, then the steps
   * it continues with after a wait, until done. A failure at any step fails the invocation, which
   * Lambda retries whole once every run has ended (the shell awaits them all).
   */
  async function invoke(fn: string, payload: Payload, number: number, priority: number): Promise<void> {
    const failed: { readonly error: unknown; readonly cluster: string | undefined }[] = [];
    let running = 0;
    const ended = (): void => {
      if (--running > 0 || failed.length === 0) return;
      retryOrDeadLetter(fn, payload, number, (fields) => {
        for (const { error, cluster } of failed) diagnose('error', fn, describeError(error), fields, cluster);
      });
    };
    const step = async (cluster: string | undefined, run: () => Promise<unknown>): Promise<void> => {
      let next: unknown;
      try {
        next = await run();
      } catch (error) {
        failed.push({ error, cluster });
        ended();
        return;
      }
      const resumeAt = isContinuation(next) ? scheduler.now() + next.after : undefined;
      if (!isContinuation(next) || resumeAt === undefined || resumeAt > end) {
        ended();
        return;
      }
      const { run: resume } = next;
      scheduler.at(resumeAt, priority, () => step(cluster, resume));
    };
    let runs: PerClusterRun[];
    try {
      runs = handlers[fn]?.runs(payload) ?? [];
    } catch (error) {
      // Refused as the shell's parse refuses it: one failed run.
      running = 1;
      failed.push({ error, cluster: undefined });
      ended();
      return;
    }
    running = runs.length;
    for (const { cluster, run } of runs) await step(cluster, run);
  }

  function attempt(fn: string, payload: Payload, at: EpochMillis, number: number): void {
    const handler = handlers[fn];
    if (handler === undefined) throw new TypeError(`no handler for ${fn}`);
    scheduler.at(at, handler.priority, () => {
      // Drawn only with deadLetter > 0, and before the attempt's own draw: without it, the same draws.
      if (number === 1 && chaos?.deadLetters() === true) {
        count('deadLettered', payload);
        diagnose(
          'warn',
          fn,
          'chaos: the delivery was dead-lettered without a run',
          { deadLettered: true },
          soleCluster(payload),
        );
        return undefined;
      }
      count('deliveries', payload);
      if (chaos?.fails() === true) {
        retryOrDeadLetter(fn, payload, number, (fields) => {
          diagnose(
            'warn',
            fn,
            'chaos: the delivery failed before the function ran',
            fields,
            soleCluster(payload),
          );
        });
        return undefined;
      }
      invocations[fn] = (invocations[fn] ?? 0) + 1;
      if (options.onInvocation !== undefined) {
        const routed = payload.kind === 'relay' ? routedJson.get(payload) : undefined;
        const detailType =
          typeof routed === 'object' && routed !== null
            ? (routed as Record<string, unknown>)['detail-type']
            : undefined;
        options.onInvocation({
          function: fn,
          origin: payload.kind === 'relay' ? payload.origin : payload.kind,
          ...(typeof detailType === 'string' && { detailType }),
          attempt: number,
        });
      }
      return invoke(fn, payload, number, handler.priority);
    });
  }

  /** The one cluster a delivery is for; undefined for a schedule's tick of several. */
  function soleCluster(payload: Payload): string | undefined {
    const clusters = clustersOf(payload);
    return clusters.length === 1 ? clusters[0] : undefined;
  }

  /** Routes an event as it travels (its JSON) by the rules and delivers it to each target. */
  function route(json: string, origin: BusEvent['origin']): void {
    const payload: Payload = { kind: 'relay', json, origin };
    const routed: unknown = JSON.parse(json);
    routedJson.set(payload, routed);
    const targets = targetsOf(routed, rules);
    if (options.onBusEvent !== undefined) {
      const copy = JSON.parse(json) as { 'detail-type'?: unknown; detail?: unknown };
      options.onBusEvent({ detailType: String(copy['detail-type']), detail: copy.detail, origin, targets });
    }
    for (const fn of targets) deliver(fn, payload);
  }

  /** EventBridge's envelope of an event the relay's role puts: the JSON its targets get. */
  const relayEnvelope = (id: number, detailType: string, detail: unknown): string =>
    JSON.stringify({
      ...envelopeBase,
      id: `simulate-${id}`,
      'detail-type': detailType,
      source: RelaySource,
      time: new Date(scheduler.now()).toISOString(),
      resources: [],
      detail,
    });
  // By cluster: each cluster's relay publishes its own digests on the one bus.
  const lastDigest = new Map<string, unknown>();

  const bus: EventSink = {
    publish(events) {
      const failed: PublishFailure[] = [];
      events.forEach((event, index) => {
        let json: string;
        try {
          // The id first: an event that cannot be encoded still used one, as it always has.
          const id = ++envelopes;
          const detail = encodeDetail(event);
          json = relayEnvelope(id, event.detailType, detail);
          // Kept as encoded (never changed: encoded digests are shared), for injectEvent's replays.
          if (event.detailType === HeartbeatDigestDetailType) lastDigest.set(event.detail.cluster, detail);
        } catch (error) {
          // A relay bug (the event breaks its own contract): reported, never delivered.
          failed.push({ index, event, code: 'EncodeError', message: describeError(error), permanent: true });
          diagnose('error', 'relay', describeError(error));
          return;
        }
        published++;
        route(json, 'relay');
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
          deliver(fn, { kind: 'schedule', envelope: scheduledEnvelope(`${fn}-schedule`) });
        });
      }
    },
    invocations,
    eventsPublished: () => published,
    deliveries: (cluster) => ({ ...(cluster === undefined ? stats : (clusterStats.get(cluster) ?? stats)) }),
    inject(detailType, detail) {
      route(relayEnvelope(++envelopes, detailType, detail), 'injected');
    },
    lastDigestDetail: (cluster) => lastDigest.get(cluster),
  };
}
