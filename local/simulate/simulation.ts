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
// - Several clusters (a scenario's `clusters`): one deployment, as a stage serving them (one state
//   store, one bus, the dispatch configured from NLC_CLUSTERS, stage.ts), and per cluster its own API
//   simulator, kubelets, relay and timeline (clusterRun.ts). Lines and diagnostics then name their
//   cluster; a scenario of one cluster runs and prints as it always has.
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
import type { EpochMillis, Millis } from '../../shared/domain/types.js';
import { minorOf } from '../../shared/domain/upstreamVersion.js';
import type { EventSink } from '../../shared/ports/eventSink.js';
import type { LogFields } from '../../shared/ports/observer.js';
import type { TimerCallback, TimerHandle } from '../../shared/ports/scheduler.js';
import type { DecisionRecord } from '../../shared/ports/stores.js';
import { VirtualScheduler } from '../virtualScheduler.js';
import type { ChaosSettings, DeliveryStats } from './chaos.js';
import { createClusterRun, type ClusterRun } from './clusterRun.js';
import {
  createSimulatedController,
  type BusEvent,
  type Diagnose,
  type Invocation,
  type SimulatedController,
} from './controller.js';
import { simulatorIdentities } from './identities.js';
import type { SimulationProgress } from './progress.js';
import type { NodeReadyStatus } from './observe.js';
import { loadServerlessRules } from './routing.js';
import { isMultiCluster, type AnyScenario, type MultiClusterScenario, type Scenario } from './scenario.js';
import { servedClusters } from './stage.js';
import { startStateStore, type SimulatedStateStore } from './stateStore.js';
import { timelineLine, type SummaryRecord, type TimelineLine, type TimelineRecord } from './timeline.js';

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
  /** In a run of several clusters: the cluster it is about, when one is. */
  readonly cluster?: string;
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
   * Ready status as the API holds it (added, changed by anyone, deleted), each with its `t` (and its
   * cluster in a run of several).
   */
  readonly onDecision?: (t: number, decision: DecisionRecord, cluster?: string) => void;
  readonly onNodeReady?: (t: number, node: string, ready: NodeReadyStatus, cluster?: string) => void;
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
  /**
   * The relays' quiet digest period (docs/relay.md, "Quiet digests"): `asDeployed`, what the relay
   * process takes from the scenario's settings (15 s with the default grace period). Default: a digest
   * every nodeMonitorPeriod, which decides the same (test/e2e/simulate/quietDigests.test.ts) and shows
   * every pass.
   */
  readonly relayQuietDigestPeriod?: Millis | 'asDeployed';
}

export { relayHostClock, simulatedRelayId, skewedScheduler } from './clusterRun.js';
export type { RelayHostClock } from './clusterRun.js';

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
 * Runs a scenario to its end and returns what the controller did: a scenario of one cluster, or of
 * several served by one deployment (docs/simulate.md, "Several clusters"), whose lines then name their
 * cluster.
 *
 * @example
 * const result = await runSimulation(parseScenarioDocument(text, 'scenario.yaml'));
 * process.stdout.write(toJsonLines(result.lines));
 */
export async function runSimulation(
  scenario: AnyScenario,
  options: SimulationOptions = {},
): Promise<SimulationResult> {
  const wallStart = performance.now();
  const { start } = scenario;
  const end = start + scenario.duration;
  const multi = isMultiCluster(scenario);
  // The served clusters as the deployment's functions read them: from the stage's environment
  // (NLC_CLUSTERS) for several, the scenario's config for one (a single-cluster stage).
  const served: readonly Scenario[] = multi ? servedScenarios(scenario) : [scenario];
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
  // Lines and diagnostics name their cluster only in a run of several (one cluster's output is as it was).
  const tag = (cluster: string | undefined): string | undefined => (multi ? cluster : undefined);
  const evictions = new Map<string, number>();
  const emitFor =
    (cluster: string) =>
    (record: TimelineRecord): void => {
      if (record.kind === 'PodDeleted') evictions.set(cluster, (evictions.get(cluster) ?? 0) + 1);
      lines.push(timelineLine(start, scheduler.now(), record, tag(cluster)));
    };
  const diagnose: Diagnose = (level, source, message, fields, cluster): void => {
    const named = tag(cluster);
    const diagnostic: Diagnostic = {
      t: (scheduler.now() - start) / 1000,
      level,
      source,
      message,
      ...(fields !== undefined && { fields }),
      ...(named !== undefined && { cluster: named }),
    };
    diagnostics.push(diagnostic);
    options.onDiagnostic?.(diagnostic);
  };
  const { onNodeReady, onDecision, onBusEvent, onInvocation } = options;
  const sinceStart = (): number => (scheduler.now() - start) / 1000;

  // --- the clusters: each its API simulator, served in process, and its kubelets -------------------
  const rules = await loadServerlessRules(
    served.map((part) => part.config.cluster),
    options.serverlessYml,
  );
  const identities = await simulatorIdentities();
  const clusters: ClusterRun[] = [];
  let state: SimulatedStateStore | undefined;
  let managedState: SimulatedStateStore | undefined;
  let controller: SimulatedController | undefined;
  // Beside a managed controller (scenario.managedController), the scenario's controller is the shadow:
  // its decisions are kept to compare with what the managed one did (shared/agreement.ts).
  const shadowDecisions: DecisionRecord[] = [];
  let agreement: AgreementReport | undefined;
  const managedConfig = multi ? undefined : scenario.managedController?.config;

  try {
    served.forEach((part, i) => {
      const name = part.config.cluster;
      clusters.push(
        createClusterRun({
          scenario: part,
          scheduler,
          identities,
          emit: emitFor(name),
          diagnose: (level, source, message, fields) => {
            diagnose(level, source, message, fields, name);
          },
          ...(onNodeReady !== undefined && {
            onNodeReady: (node: string, ready: NodeReadyStatus) => {
              onNodeReady(sinceStart(), node, ready, tag(name));
            },
          }),
          onApiRequest: () => {
            apiRequests++;
          },
          path: multi ? ['clusters', i] : [],
          ...(options.relayQuietDigestPeriod !== undefined && {
            relayQuietDigestPeriod: options.relayQuietDigestPeriod,
          }),
        }),
      );
    });
    state = await startStateStore(scheduler);
    const { stores } = state;

    // One deployment: one state store, one bus, the functions' dispatch serving every cluster.
    const running: SimulatedController = createSimulatedController({
      scheduler,
      end,
      rules,
      stores,
      served: served.map((part, i) => {
        const emit = emitFor(part.config.cluster);
        return {
          config: part.config,
          cluster: clusters[i]?.clusterPort ?? missingCluster(part),
          // The timeline's zone states are the cluster's: the managed controller's when there is one.
          emit:
            managedConfig === undefined
              ? emit
              : (record: TimelineRecord) => {
                  if (record.kind !== 'ZoneState') emit(record);
                },
        };
      }),
      diagnose,
      ...(options.chaos !== undefined && { chaos: options.chaos }),
      ...((onDecision !== undefined || managedConfig !== undefined) && {
        onDecision: (decision: DecisionRecord, cluster: string) => {
          if (managedConfig !== undefined) shadowDecisions.push(decision);
          onDecision?.(sinceStart(), decision, tag(cluster));
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
    const only = clusters[0];
    if (managedConfig !== undefined && only !== undefined) {
      managedState = await startStateStore(scheduler, 'nlc-managed');
      const emit = emitFor(only.name);
      managed = createSimulatedController({
        scheduler,
        end,
        rules,
        stores: managedState.stores,
        served: [{ config: managedConfig, cluster: only.newClusterPort(), emit }],
        diagnose: (level, source, message, fields, cluster) => {
          diagnose(level, `managed ${source}`, message, fields, cluster);
        },
        ...(options.chaos !== undefined && { chaos: options.chaos }),
      });
    }
    const managedBus = managed?.bus;
    // The relays publish to one bus; both controllers' rules take its events.
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

    // --- each cluster at t = 0, its timeline, its relay; the schedules ---------------------------------
    for (const cluster of clusters) {
      cluster.schedule({
        sink: bus,
        inject: (detailType, detail) => {
          running.inject(detailType, detail);
          managed?.inject(detailType, detail);
        },
        lastDigestDetail: () => running.lastDigestDetail(cluster.name),
      });
    }
    running.startSchedules(start);
    managed?.startSchedules(start);

    // --- run ---------------------------------------------------------------------------------------------
    await scheduler.runUntil(end);
    onProgress?.(progress(scheduler.fired));
    for (const cluster of clusters) await cluster.stopRelay();
    for (const cluster of clusters) {
      const summarized = await cluster.summarize(
        managedState?.stores ?? stores,
        evictions.get(cluster.name) ?? 0,
      );
      const only = served[0];
      if (managedConfig !== undefined && only !== undefined) {
        agreement = shadowAgreement(start, lines, shadowDecisions, only.config, managedConfig);
      }
      const summary: SummaryRecord = {
        ...summarized,
        ...(options.chaos !== undefined && {
          deliveries: running.deliveries(multi ? cluster.name : undefined),
        }),
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
      lines.push(timelineLine(start, end, summary, tag(cluster.name)));
    }
  } finally {
    // A run that failed midway still releases everything it started.
    for (const cluster of clusters) await cluster.close();
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

/**
 * Each cluster of a scenario of several, with the settings its deployment's functions read from the
 * stage's environment (NLC_CLUSTERS), as a cold start reads them.
 */
function servedScenarios(scenario: MultiClusterScenario): Scenario[] {
  const stage = servedClusters(scenario.stageEnv);
  return scenario.clusters.map((part) => {
    const config = stage.get(part.config.cluster)?.config;
    if (config === undefined) missingCluster(part);
    return { ...part, config };
  });
}

function missingCluster(part: Scenario): never {
  throw new Error(`simulator: the deployment does not serve cluster ${part.config.cluster}`);
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
