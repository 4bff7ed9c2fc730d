// `nlc simulate`: a scenario in virtual time through the real system (docs/architecture.md). What runs is what
// deploys; only the transports and the clock are the simulator's:
//
//   kubelet fleet ──writes──▶ API simulator ◀──client-node (in-process HttpLibrary)── controller services
//        ▲                        │  (watch, in process)                                    ▲
//   timeline actions              ▼                                                          │
//                         relay (createRelay: informers, shaping, digests, publish queue)    │
//                                 │ EventSink                                                │
//                                 ▼                                                          │
//                   bus: encode → JSON → parse (shared/events.ts) → serverless.yml rules ────┘
//                                                        state: DynamoDB adapter → in-memory DynamoDB
//
// - Time: a VirtualScheduler (discrete events: it jumps to the next timer and runs until nothing is
//   due). Within an instant, docs/simulate.md's order: the scenario's actions, then the kubelets' ticks,
//   then the relay, then the controller's functions (their order, the bus, retries and the drainer's
//   wake-ups: controller.ts).
// - The relay is createRelay's, unchanged, over the in-process transports (transport.ts). It starts at
//   t = 0 and lists the cluster before anything else happens, so its first digest, at t = 0, finds every
//   node (docs/simulate.md: the controller's first pass is in the output).
// - Relay outage (stopRelay): the relay process stops (it publishes what it had, then nothing: no
//   digests, no Node/Pod Changed); startRelay starts a new one, which lists everything, publishes a
//   digest at once and then one every nodeMonitorPeriod. The monitor's observation-gap rule applies.
// - Stalled watches (stallWatch): the API simulator's Faults stall the relay's watches of a resource
//   (open, delivering nothing) for a while; the relay's watchdog finds them silent and relists. The API
//   server sends bookmarks every minute of virtual time, as kube-apiserver's watch cache does, so a
//   quiet watch is not taken for a stalled one.
// - relayClockSkew: the relay runs on the shared virtual time, but its clock (its scheduler's now(), so
//   its probes and its digests' instants) reads that much ahead or behind; relayClockStep moves it
//   (relayHostClock). restartRelay: the relay stops and a new one (a new relayId, its own clock) starts.
// - injectEvent: an event published on the bus beside the relay's (controller.ts inject), its detail
//   the scenario's fields merged over what the relay would send now (injectedEvents.ts).
// - restoreApiServer: the API server's store goes back to a backup taken at an earlier instant, as
//   after an etcd restore; every watch ends with 410 Gone, so the relay and the kubelets relist.
// - What the controller did is read from the API simulator (observe.ts), the zone states from the
//   monitor's decisions, the Summary from the API and the state tables.
import type { HttpLibrary, V1Node } from '@kubernetes/client-node';
import { createKubernetesCluster } from '../../shared/adapters/kubernetes/cluster.js';
import {
  actionsFromDecisions,
  matchActions,
  type AgreementReport,
  type ControllerAction,
} from '../../shared/agreement.js';
import {
  CONFIG_KEYS,
  formatConfigValue,
  type ConfigKey,
  type ControllerConfig,
} from '../../shared/config.js';
import { isTaintEffect } from '../../shared/adapters/kubernetes/mapping.js';
import { formatZoneKey, getZoneKey } from '../../shared/domain/zones.js';
import type { EpochMillis, Millis } from '../../shared/domain/types.js';
import { minorOf } from '../../shared/domain/upstreamVersion.js';
import { formatDuration } from '../../shared/duration.js';
import { ScenarioError } from '../../shared/errors.js';
import type { EventSink } from '../../shared/ports/eventSink.js';
import type { LogFields } from '../../shared/ports/observer.js';
import {
  Priority,
  type Scheduler,
  type TimerCallback,
  type TimerHandle,
} from '../../shared/ports/scheduler.js';
import type { DecisionRecord, LoadedState } from '../../shared/ports/stores.js';
import { createRelay, type Relay } from '../../relay/relay.js';
import { defaultLeaseWatchStallTimeout } from '../../relay/settings.js';
import {
  ApiStatusError,
  createApiStore,
  makeKubeConfig,
  type ApiStore,
  type RegistrySnapshot,
  type Wire,
} from '../apiserver/index.js';
import { versionInfoOf } from '../apiserver/discovery.js';
import { Faults } from '../apiserver/faults.js';
import { ApiHttpServer } from '../apiserver/server.js';
import { KubeletFleet } from '../kubelet/kubeletFleet.js';
import { VirtualScheduler } from '../virtualScheduler.js';
import { seededRandom, type ChaosSettings, type DeliveryStats } from './chaos.js';
import {
  createSimulatedController,
  type BusEvent,
  type Invocation,
  type SimulatedController,
} from './controller.js';
import { RelayLeaseName, RelayLeaseNamespace, simulatorIdentities } from './identities.js';
import type { SimulationProgress } from './progress.js';
import { observeController, observeNodeReady, type NodeReadyStatus } from './observe.js';
import { loadServerlessRules } from './routing.js';
import { mergeDetail, nodeChangedNow, podChangedNow } from './injectedEvents.js';
import { formatPath, type InjectEventAction, type Scenario, type TimelineEntry } from './scenario.js';
import { startStateStore, type SimulatedStateStore } from './stateStore.js';
import {
  timelineLine,
  type SummaryNode,
  type SummaryRecord,
  type TimelineLine,
  type TimelineRecord,
} from './timeline.js';
import { inProcessHttpLibrary, inProcessWatch } from './transport.js';

export { FunctionPriority } from './controller.js';
export type { BusEvent, Invocation } from './controller.js';

/** Something the run met that is not a timeline record: a failed invocation, a warning, an API error. */
export interface Diagnostic {
  /** Seconds since the start. */
  readonly t: number;
  readonly level: 'warn' | 'error';
  /** The function (`monitorNodeHealth`, …), `controller` (a service's warning), `kubelet`, or `relay`. */
  readonly source: string;
  readonly message: string;
  readonly fields?: LogFields;
}

export interface SimulationStats {
  /** Function invocations by serverless.yml function name (retries included). */
  readonly invocations: Readonly<Record<string, number>>;
  /** Events the relay published (digests, Node Changed, Pod Changed). */
  readonly eventsPublished: number;
  /** Requests the API simulator served for the controller and the relay. */
  readonly apiRequests: number;
  /** Wall-clock duration of the run. */
  readonly wallMs: number;
  /** Discrete events fired: kubelet ticks, relay timers, deliveries to the functions. */
  readonly events: number;
  /** Delivery attempts (copies and retries included), failed attempts, dead-lettered deliveries. */
  readonly deliveries: DeliveryStats;
}

export interface SimulationResult {
  /** Time-ordered records, Summary last (the `--json` lines). */
  readonly lines: readonly TimelineLine[];
  readonly diagnostics: readonly Diagnostic[];
  readonly stats: SimulationStats;
  /** With `managedController`: every decision of the shadow matched with the managed one's actions. */
  readonly agreement?: AgreementReport;
}

export interface SimulationOptions {
  /** The serverless.yml whose rules route the events (the repository's by default). */
  readonly serverlessYml?: URL;
  /** Called as diagnostics happen (e.g. to print them while a long run goes on). */
  readonly onDiagnostic?: (diagnostic: Diagnostic) => void;
  /**
   * Duplicated, delayed and failing deliveries between the relay and the functions (`--chaos`). The
   * Summary then also counts deliveries, failures and dead-lettered deliveries.
   */
  readonly chaos?: ChaosSettings;
  /**
   * For a picture of the run (`--report`): every decision the functions record, and every node's
   * Ready status as the API holds it (added, changed by anyone, deleted), each with its `t`.
   */
  readonly onDecision?: (t: number, decision: DecisionRecord) => void;
  readonly onNodeReady?: (t: number, node: string, ready: NodeReadyStatus) => void;
  /**
   * Every event the bus carries (the relay's and injectEvent's), with its `t`, its wire detail and the
   * functions the rules route it to: for tests and tools that watch what reaches the functions.
   */
  readonly onBusEvent?: (t: number, event: BusEvent) => void;
  /** Every function run as it starts, with its `t`: which function, started by what. */
  readonly onInvocation?: (t: number, invocation: Invocation) => void;
  /**
   * Called as the run goes (every few events, and once at the end) with the virtual time reached and
   * the events fired: for a progress line (progress.ts).
   */
  readonly onProgress?: (progress: SimulationProgress) => void;
}

const noWait = (): Promise<void> => Promise.resolve();

/** How often kube-apiserver's watch cache sends a watcher a bookmark (cacher.go defaultBookmarkFrequency). */
const BookmarkPeriod: Millis = 60_000;

/**
 * The scheduler as a process whose clock is `skew` off sees it: now() reads `skew` ahead (behind when
 * negative), and its timers, given in its own time, fire at the same instants of the shared time.
 *
 * @example
 * const relayScheduler = skewedScheduler(scheduler, -120_000); // the relay's clock is 2 minutes behind
 */
export function skewedScheduler(scheduler: Scheduler, skew: Millis): Scheduler {
  return skew === 0 ? scheduler : relayHostClock(scheduler, skew).scheduler;
}

/** A relay host's clock: the scheduler its relay runs on, and the steps that move it (relayClockStep). */
export interface RelayHostClock {
  /** What the relay runs on: now() reads the current offset off the shared time; timers fire on it. */
  readonly scheduler: Scheduler;
  /** How far the clock reads ahead of the shared time now (negative: behind). */
  offset(): Millis;
  /** The clock jumps by `by` (negative: back), from now on; timers already set keep their instants. */
  step(by: Millis): void;
}

/**
 * The scheduler as a process on a host whose clock reads `skew` off the shared time, and can jump: now()
 * reads the offset of the moment, and a timer is set in the process's own time converted at the offset
 * of the moment it is set, so it fires at the same instant of the shared time whatever the clock does
 * after. That is how Node's timers behave: they run on a monotonic clock, which a step of the wall clock
 * (an NTP correction, a VM resumed) does not move; only what the process reads as the time jumps.
 *
 * @example
 * const host = relayHostClock(scheduler, 0);
 * host.step(-30_000); // from now on the relay's now() reads 30 s behind; its digests stay every 5 s
 */
export function relayHostClock(scheduler: Scheduler, skew: Millis): RelayHostClock {
  let offset = skew;
  return {
    scheduler: {
      now: (): EpochMillis => scheduler.now() + offset,
      at: (time, priority, fn) => scheduler.at(time - offset, priority, fn),
      after: (delay, priority, fn) => scheduler.after(delay, priority, fn),
      every: (period, firstAt, priority, fn) => scheduler.every(period, firstAt - offset, priority, fn),
      cancel: (handle) => {
        scheduler.cancel(handle);
      },
    },
    offset: () => offset,
    step: (by) => {
      offset += by;
    },
  };
}

/**
 * The relayId of the relay of a term: the first is `nlc-relay-simulated` (as before restartRelay
 * existed), each restartRelay a new one: `nlc-relay-simulated-2`, `-3`, … (a new pod's name).
 */
export function simulatedRelayId(term: number): string {
  return term === 1 ? 'nlc-relay-simulated' : `nlc-relay-simulated-${term}`;
}

/** How many events pass between two onProgress calls: often enough for a smooth line, cheap. */
const ProgressEvery = 64;

/** The virtual scheduler, counting the timers it fires (the events of the progress line and the stats). */
class CountingScheduler extends VirtualScheduler {
  fired = 0;

  constructor(
    start: EpochMillis,
    private readonly onFire: (fired: number) => void,
  ) {
    super(start);
  }

  override at(time: EpochMillis, priority: number, fn: TimerCallback): TimerHandle {
    return super.at(time, priority, this.counted(fn));
  }

  override every(period: Millis, firstAt: EpochMillis, priority: number, fn: TimerCallback): TimerHandle {
    return super.every(period, firstAt, priority, this.counted(fn));
  }

  private counted(fn: TimerCallback): TimerCallback {
    return () => {
      this.fired++;
      this.onFire(this.fired);
      return fn();
    };
  }
}

/**
 * Waits, in real time, for in-process work started without being awaited (the relay's first lists) to
 * reach `done`. Nothing in virtual time moves meanwhile. Throws after 10,000 event-loop turns.
 */
async function settle(done: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 10_000; turn++) {
    if (done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`simulator: gave up waiting for ${what}`);
}

/**
 * Runs a scenario to its end and returns what the controller did.
 *
 * @example
 * const result = await runSimulation(parseScenario(text, 'scenario.yaml'));
 * process.stdout.write(toJsonLines(result.lines));
 */
export async function runSimulation(
  scenario: Scenario,
  options: SimulationOptions = {},
): Promise<SimulationResult> {
  const wallStart = performance.now();
  const { config, start } = scenario;
  const cluster = config.cluster;
  const end = start + scenario.duration;
  const { onProgress } = options;
  const progress = (events: number): SimulationProgress => ({
    elapsed: scheduler.now() - start,
    duration: scenario.duration,
    events,
  });
  const scheduler: CountingScheduler = new CountingScheduler(
    start,
    onProgress === undefined
      ? () => undefined
      : (fired) => {
          if (fired % ProgressEvery === 0) onProgress(progress(fired));
        },
  );
  const lines: TimelineLine[] = [];
  const diagnostics: Diagnostic[] = [];
  let apiRequests = 0;
  const emit = (record: TimelineRecord): void => {
    lines.push(timelineLine(start, scheduler.now(), record));
  };
  const diagnose = (
    level: Diagnostic['level'],
    source: string,
    message: string,
    fields?: LogFields,
  ): void => {
    const diagnostic: Diagnostic = {
      t: (scheduler.now() - start) / 1000,
      level,
      source,
      message,
      ...(fields !== undefined && { fields }),
    };
    diagnostics.push(diagnostic);
    options.onDiagnostic?.(diagnostic);
  };

  // --- the cluster: the API simulator, served in process, and its kubelets ------------------------
  const rules = await loadServerlessRules([cluster], options.serverlessYml);
  const identities = await simulatorIdentities();
  const store: ApiStore = createApiStore({ clock: scheduler, seed: 1 });
  const faults = new Faults();
  const server = new ApiHttpServer({
    registry: store.registry,
    identities: [identities.controller, identities.relay],
    faults,
    // The cluster runs the minor of its own controller: the managed one's when there is one.
    version: versionInfoOf((scenario.managedController?.config ?? config).emulationVersion),
    defaultWatchTimeoutSeconds: 1800,
    // Its bookmarks run on a real-time interval: effectively never, so nothing real-time reaches a
    // watcher. They are sent on virtual time instead (below).
    bookmarkIntervalMs: 2 ** 31 - 1,
    now: () => store.registry.now(),
  });
  // The controller's requests, counted in `depth` while served: what changes meanwhile is its doing.
  let controllerDepth = 0;
  const controllerTransport: HttpLibrary = inProcessHttpLibrary({
    dispatch: async (request) => {
      apiRequests++;
      controllerDepth++;
      try {
        return await server.dispatch(request);
      } finally {
        controllerDepth--;
      }
    },
  });
  const relayTransport: HttpLibrary = inProcessHttpLibrary({
    dispatch: (request) => {
      apiRequests++;
      return server.dispatch(request);
    },
  });
  const stopObserving = observeController(store.registry, () => controllerDepth > 0, emit);
  const { onNodeReady, onDecision, onBusEvent, onInvocation } = options;
  const sinceStart = (): number => (scheduler.now() - start) / 1000;
  const stopObservingReady =
    onNodeReady === undefined
      ? () => undefined
      : observeNodeReady(store.registry, (node, ready) => {
          onNodeReady(sinceStart(), node, ready);
        });
  const fleet = new KubeletFleet({
    store,
    scheduler,
    onApiError: (error, where) => {
      diagnose('warn', 'kubelet', error.message, { node: where.node, action: where.action });
    },
  });
  let state: SimulatedStateStore | undefined;
  let managedState: SimulatedStateStore | undefined;
  let relay: Relay | undefined;
  let controller: SimulatedController | undefined;
  // Beside a managed controller (scenario.managedController), the scenario's controller is the shadow:
  // its decisions are kept to compare with what the managed one did (shared/agreement.ts).
  const shadowDecisions: DecisionRecord[] = [];
  let agreement: AgreementReport | undefined;
  const managedConfig = scenario.managedController?.config;

  try {
    state = await startStateStore(scheduler);
    const { stores } = state;
    const random = seededRandom(0x6e6c63);
    const apiUrl = 'https://nlc-simulator.invalid';
    const clusterPort = createKubernetesCluster(
      makeKubeConfig({ server: apiUrl, token: identities.controller.token }),
      {
        requestTimeoutMs: 10_000,
        clock: scheduler,
        sleep: noWait,
        random,
        transport: controllerTransport,
      },
    );

    const running: SimulatedController = createSimulatedController({
      config,
      scheduler,
      end,
      rules,
      stores,
      cluster: clusterPort,
      // The timeline's zone states are the cluster's: the managed controller's when there is one.
      emit:
        managedConfig === undefined
          ? emit
          : (record) => {
              if (record.kind !== 'ZoneState') emit(record);
            },
      diagnose,
      ...(options.chaos !== undefined && { chaos: options.chaos }),
      ...((onDecision !== undefined || managedConfig !== undefined) && {
        onDecision: (decision: DecisionRecord) => {
          if (managedConfig !== undefined) shadowDecisions.push(decision);
          onDecision?.(sinceStart(), decision);
        },
      }),
      ...(onBusEvent !== undefined && {
        onBusEvent: (event: BusEvent) => {
          onBusEvent(sinceStart(), event);
        },
      }),
      ...(onInvocation !== undefined && {
        onInvocation: (invocation: Invocation) => {
          onInvocation(sinceStart(), invocation);
        },
      }),
    });
    controller = running;

    // "The cluster's own controller": active, with its own state tables, on the same bus and API.
    let managed: SimulatedController | undefined;
    if (managedConfig !== undefined) {
      managedState = await startStateStore(scheduler, 'nlc-managed');
      managed = createSimulatedController({
        config: managedConfig,
        scheduler,
        end,
        rules,
        stores: managedState.stores,
        cluster: createKubernetesCluster(
          makeKubeConfig({ server: apiUrl, token: identities.controller.token }),
          {
            requestTimeoutMs: 10_000,
            clock: scheduler,
            sleep: noWait,
            random,
            transport: controllerTransport,
          },
        ),
        emit,
        diagnose: (level, source, message, fields) => {
          diagnose(level, `managed ${source}`, message, fields);
        },
        ...(options.chaos !== undefined && { chaos: options.chaos }),
      });
    }
    const managedBus = managed?.bus;
    // The relay publishes to one bus; both controllers' rules take its events.
    const bus: EventSink =
      managedBus === undefined
        ? running.bus
        : {
            publish: async (events, publishOptions) => {
              const [result] = await Promise.all([
                running.bus.publish(events, publishOptions),
                managedBus.publish(events, publishOptions),
              ]);
              return result;
            },
          };

    // --- the relay ------------------------------------------------------------------------------------
    // Its host's clock: the scenario's skew, moved by relayClockStep; startRelay starts the process again
    // on the same host (and relayId); restartRelay starts a new one on another (a new pod). A relay
    // process reads its host's clock once, when it starts, and moves it on by the monotonic clock
    // (shared/adapters/realScheduler.ts): a step of the host's clock reaches only a process started
    // after it.
    let relayHost = relayHostClock(scheduler, scenario.relayClockSkew);
    let relayTerm = 1;
    const relayKubeConfig = makeKubeConfig({ server: apiUrl, token: identities.relay.token });
    const startRelay = async (): Promise<void> => {
      if (relay !== undefined) return;
      relay = createRelay({
        kubeConfig: relayKubeConfig,
        cluster,
        sink: bus,
        scheduler: relayHostClock(scheduler, relayHost.offset()).scheduler,
        nodeMonitorPeriod: config.nodeMonitorPeriod,
        // As the deployed relay picks it from the same settings.
        leaseWatchStallTimeoutMs: defaultLeaseWatchStallTimeout(config),
        relayId: simulatedRelayId(relayTerm),
        // As deployed (infra/relay): the functions check each relay term against this Lease.
        leaderElection: { namespace: RelayLeaseNamespace, name: RelayLeaseName },
        random,
        logger: {
          debug: () => undefined,
          info: () => undefined,
          warn: (message, fields) => {
            diagnose('warn', 'relay', message, fields);
          },
          error: (message, fields) => {
            diagnose('error', 'relay', message, fields);
          },
        },
        transport: relayTransport,
        watch: inProcessWatch(store.registry, { faults, user: identities.relay.name }),
      });
      await relay.start();
      // The relay lists in the background; in virtual time nothing may happen meanwhile, so wait
      // (in real time, a few turns of the event loop) until every informer has listed and watches.
      const started = relay;
      // (It takes the Lease at its first try, a timer of this same instant.)
      await settle(
        () => started.synced() && started.status().informers.every((informer) => informer.watching),
        'the relay to list and watch',
      );
    };
    const stopRelay = async (): Promise<void> => {
      const stopping = relay;
      relay = undefined;
      await stopping?.stop({ flushTimeoutMs: 1000 });
    };

    // --- the cluster at t = 0, the timeline, the schedules --------------------------------------------
    fleet.seed({ nodes: scenario.nodes, pods: scenario.pods });
    // The relay's namespace, where its leader-election Lease lives (infra/relay/namespace.yaml).
    store.namespaces.create({ metadata: { name: RelayLeaseNamespace } });
    // restoreApiServer's backups: the API server's state at each instant a restore goes back to, taken
    // before anything of that instant happens (so the one at 0 is the cluster as the scenario describes
    // it). Only scenarios that restore take any.
    const backups = new Map<Millis, RegistrySnapshot>();
    const backupAt = new Set<Millis>();
    for (const { at, action } of scenario.timeline) {
      if (action.kind === 'restoreApiServer') backupAt.add(at - action.back);
    }
    for (const at of backupAt) {
      scheduler.at(start + at, Priority.ScenarioAction - 1, () => {
        backups.set(at, store.registry.snapshot());
      });
    }
    for (const entry of scenario.timeline) {
      scheduler.at(start + entry.at, Priority.ScenarioAction, () => apply(entry));
    }
    scheduler.at(start, Priority.Relay, startRelay);
    scheduler.every(BookmarkPeriod, start + BookmarkPeriod, Priority.Background, () => {
      store.registry.sendBookmarks();
    });
    running.startSchedules(start);
    managed?.startSchedules(start);

    async function apply(entry: TimelineEntry): Promise<void> {
      const { action } = entry;
      switch (action.kind) {
        case 'stopKubelet':
          for (const node of action.nodes) fleet.stopKubelet(node);
          return;
        case 'startKubelet':
          for (const node of action.nodes) fleet.startKubelet(node);
          return;
        case 'cordon':
          for (const node of action.nodes) fleet.cordon(node);
          return;
        case 'uncordon':
          for (const node of action.nodes) fleet.uncordon(node);
          return;
        case 'deleteNode':
          for (const node of action.nodes) fleet.deleteNode(node);
          return;
        case 'setCondition':
          for (const node of action.nodes) {
            fleet.setCondition(node, action.type, action.status, action.reason, action.message);
          }
          return;
        case 'addNode':
          for (const node of action.nodes) fleet.addNode(node);
          return;
        case 'addPod':
          for (const pod of action.pods) fleet.addPod(pod);
          return;
        case 'deletePod':
          for (const pod of action.pods) fleet.deletePod(pod.namespace, pod.name);
          return;
        case 'stopRelay':
          await stopRelay();
          return;
        case 'startRelay':
          await startRelay();
          return;
        case 'restartRelay':
          await stopRelay();
          relayTerm++;
          relayHost = relayHostClock(scheduler, action.clockSkew);
          await startRelay();
          return;
        case 'relayClockStep':
          relayHost.step(action.step);
          return;
        case 'stallWatch': {
          const end = faults.stallWatches({ resource: action.resource });
          scheduler.after(action.duration, Priority.ScenarioAction, end);
          return;
        }
        case 'injectEvent':
          {
            const detail = mergeDetail(injectedBase(entry.index, action), action.detail);
            running.inject(action.detailType, detail);
            managed?.inject(action.detailType, detail);
          }
          return;
        case 'restoreApiServer': {
          const backup = backups.get(entry.at - action.back);
          if (backup === undefined)
            throw new Error(`simulator: no backup of t = ${entry.at - action.back} ms`);
          const relaying = relay;
          const wasWatching = relaying?.status().informers.map((informer) => informer.watching) ?? [];
          // Every watch ends with 410: the kubelets relist at once, the relay in the background; wait
          // (in real time) for its relists, so the state it publishes next is the restored one.
          store.registry.restore(backup);
          if (relaying !== undefined) {
            await settle(
              () =>
                relaying
                  .status()
                  .informers.every((informer, i) => informer.watching || wasWatching[i] !== true),
              'the relay to relist after the restore',
            );
          }
          return;
        }
      }
    }

    /** What the relay would send now for what `action` names; a ScenarioError when that is not there. */
    function injectedBase(index: number, action: InjectEventAction): unknown {
      const missing = (field: readonly string[], message: string): ScenarioError =>
        new ScenarioError([
          {
            path: formatPath(['timeline', index, 'injectEvent', ...field]),
            message: `${message} at ${formatDuration(scheduler.now() - start)}`,
          },
        ]);
      switch (action.detailType) {
        case 'Node Changed': {
          const node = readOrUndefined(() => store.nodes.get(action.node));
          if (node === undefined)
            throw missing(['detail', 'node', 'name'], `no node ${JSON.stringify(action.node)} in the API`);
          return nodeChangedNow(cluster, node);
        }
        case 'Pod Changed': {
          const { namespace, name } = action.pod;
          const pod = readOrUndefined(() => store.pods.get(name, { namespace }));
          if (pod === undefined)
            throw missing(['detail', 'pod', 'name'], `no pod "${namespace}/${name}" in the API`);
          return podChangedNow(cluster, pod);
        }
        case 'Heartbeat Digest': {
          const digest = running.lastDigestDetail();
          if (digest === undefined) throw missing([], 'no Heartbeat Digest published yet to start from');
          return digest;
        }
      }
    }

    // --- run ---------------------------------------------------------------------------------------------
    await scheduler.runUntil(end);
    onProgress?.(progress(scheduler.fired));
    await stopRelay();
    const summarized = await summarize(store, managedState?.stores ?? stores, cluster, lines);
    if (managedConfig !== undefined) {
      agreement = shadowAgreement(start, lines, shadowDecisions, config, managedConfig);
    }
    const summary: SummaryRecord = {
      ...summarized,
      ...(options.chaos !== undefined && { deliveries: running.deliveries() }),
      ...(agreement !== undefined && {
        agreement: {
          decisions: agreement.decisions,
          agreed: agreement.agreed,
          disagreed: agreement.disagreed,
          medianLagMs: agreement.medianLagMs,
          maxLagMs: agreement.maxLagMs,
        },
      }),
    };
    lines.push(timelineLine(start, end, summary));
  } finally {
    // A run that failed midway still releases everything it started.
    await relay?.stop({ flushTimeoutMs: 0 }).catch(() => undefined);
    stopObserving();
    stopObservingReady();
    fleet.close();
    await server.close();
    await state?.close();
    await managedState?.close();
  }
  return {
    lines,
    diagnostics,
    ...(agreement !== undefined && { agreement }),
    stats: {
      invocations: { ...controller.invocations },
      eventsPublished: controller.eventsPublished(),
      deliveries: controller.deliveries(),
      apiRequests,
      wallMs: performance.now() - wallStart,
      events: scheduler.fired,
    },
  };
}

/** What `read` returns, or undefined when the API answers 404. */
function readOrUndefined<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof ApiStatusError && error.code === 404) return undefined;
    throw error;
  }
}

/** The Summary: zone states and gauges from the controller's state, nodes from the API, evictions counted. */
async function summarize(
  store: ApiStore,
  stores: { readonly controllerState: { load(cluster: string): Promise<LoadedState> } },
  cluster: string,
  lines: readonly TimelineLine[],
): Promise<SummaryRecord> {
  const loaded = await stores.controllerState.load(cluster);
  const zones = [...loaded.state.zoneStates]
    .map(([zone, zoneState]) => {
      const gauge = loaded.zones.get(zone);
      return {
        zone: formatZoneKey(zone),
        state: zoneState,
        size: gauge?.zoneSize ?? 0,
        unhealthy: gauge?.unhealthyNodes ?? 0,
      };
    })
    .sort((a, b) => (a.zone < b.zone ? -1 : a.zone > b.zone ? 1 : 0));
  const nodes = store.nodes.list().items.map((node: Wire<V1Node>): SummaryNode => {
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    return {
      node: node.metadata?.name ?? '',
      zone: formatZoneKey(getZoneKey(node.metadata?.labels ?? {})),
      ready: ready === 'True' || ready === 'False' || ready === 'Unknown' ? ready : '',
      taints: (node.spec?.taints ?? []).flatMap((t) =>
        isTaintEffect(t.effect) ? [{ key: t.key, effect: t.effect }] : [],
      ),
    };
  });
  return {
    kind: 'Summary',
    zones,
    nodes,
    evictions: lines.filter((line) => line.kind === 'PodDeleted').length,
  };
}

/** What the managed controller did, as the timeline shows it (the cluster's view of its writes). */
function clusterActions(start: EpochMillis, lines: readonly TimelineLine[]): ControllerAction[] {
  const actions: ControllerAction[] = [];
  for (const line of lines) {
    const at = start + Math.round(line.t * 1000);
    switch (line.kind) {
      case 'NodeCondition':
        if (line.type === 'Ready' && line.status === 'Unknown')
          actions.push({ kind: 'markUnknown', subject: line.node, detail: '', at });
        break;
      case 'TaintAdded':
      case 'TaintRemoved':
        actions.push({
          kind: line.kind === 'TaintAdded' ? 'taintAdded' : 'taintRemoved',
          subject: line.node,
          detail: `${line.key}:${line.effect}`,
          at,
        });
        break;
      case 'PodNotReady':
        actions.push({ kind: 'podNotReady', subject: line.pod, detail: '', at });
        break;
      case 'PodDeleted':
        actions.push({ kind: 'podDeleted', subject: line.pod, detail: '', at });
        break;
      default:
        break;
    }
  }
  return actions;
}

/**
 * The settings that differ between the shadow and the managed controller, in words. The versions are
 * compared apart (matchActions names the upstream change that accounts for a row).
 */
function settingsDiffer(ours: ControllerConfig, theirs: ControllerConfig): string[] {
  return (Object.keys(CONFIG_KEYS) as ConfigKey[])
    .filter((key) => key !== 'dryRun' && key !== 'emulationVersion' && ours[key] !== theirs[key])
    .map(
      (key) =>
        `${key} ${formatConfigValue(key, ours[key])} here, ${formatConfigValue(key, theirs[key])} there`,
    );
}

function shadowAgreement(
  start: EpochMillis,
  lines: readonly TimelineLine[],
  decisions: readonly DecisionRecord[],
  ours: ControllerConfig,
  theirs: ControllerConfig,
): AgreementReport {
  return matchActions(actionsFromDecisions(decisions), clusterActions(start, lines), {
    // Two controllers' passes need not fall on the same instants: within a monitor period agrees.
    toleranceMs: Math.max(ours.nodeMonitorPeriod, theirs.nodeMonitorPeriod),
    settingsDiffer: settingsDiffer(ours, theirs),
    versions: { ours: minorOf(ours.emulationVersion), theirs: minorOf(theirs.emulationVersion) },
  });
}
