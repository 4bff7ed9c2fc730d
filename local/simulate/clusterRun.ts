// One cluster of a run (simulation.ts): its API simulator served in process, its kubelet fleet, its relay
// and its timeline. A run has one per cluster its deployment serves; they share the virtual clock, the
// bus and the functions, and nothing else: each has its own API server, store, seeds and relay, so
// what happens to one cluster reaches another only through the deployment, as in production.
import type { HttpLibrary, V1Node } from '@kubernetes/client-node';
import { createKubernetesCluster } from '../../shared/adapters/kubernetes/cluster.js';
import { isTaintEffect } from '../../shared/adapters/kubernetes/mapping.js';
import { formatZoneKey, getZoneKey } from '../../shared/domain/zones.js';
import type { EpochMillis, Millis } from '../../shared/domain/types.js';
import { formatDuration } from '../../shared/duration.js';
import { ScenarioError } from '../../shared/errors.js';
import type { ClusterPort } from '../../shared/ports/cluster.js';
import type { EventSink } from '../../shared/ports/eventSink.js';
import { Priority, type Scheduler } from '../../shared/ports/scheduler.js';
import type { LoadedState } from '../../shared/ports/stores.js';
import { createRelay, type Relay } from '../../relay/relay.js';
import { defaultLeaseWatchStallTimeout, defaultQuietDigestPeriod } from '../../relay/settings.js';
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
import { seededRandom } from './chaos.js';
import type { Diagnose } from './controller.js';
import { RelayLeaseName, RelayLeaseNamespace, type simulatorIdentities } from './identities.js';
import { mergeDetail, nodeChangedNow, podChangedNow } from './injectedEvents.js';
import { observeController, observeNodeReady, type NodeReadyStatus } from './observe.js';
import { formatPath, type InjectEventAction, type Scenario, type TimelineEntry } from './scenario.js';
import type { SummaryNode, SummaryRecord, TimelineRecord } from './timeline.js';
import { inProcessHttpLibrary, inProcessWatch } from './transport.js';

const noWait = (): Promise<void> => Promise.resolve();

/** How often kube-apiserver's watch cache sends a watcher a bookmark (cacher.go defaultBookmarkFrequency). */
const BookmarkPeriod: Millis = 60_000;

/** Where the controller's Kubernetes client finds each cluster's API simulator (never resolved). */
const ApiUrl = 'https://nlc-simulator.invalid';

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

/** What `read` returns, or undefined when the API answers 404. */
function readOrUndefined<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof ApiStatusError && error.code === 404) return undefined;
    throw error;
  }
}

/** The deployment as a cluster's relay and timeline reach it: its bus and what injectEvent needs. */
export interface DeploymentBus {
  /** Where the cluster's relay publishes. */
  readonly sink: EventSink;
  /** Publishes an event as the relay's role could (injectEvent), to every controller on the bus. */
  inject(detailType: string, detail: unknown): void;
  /** The last digest the cluster's relay published (for a replayed Heartbeat Digest). */
  lastDigestDetail(): unknown;
}

export interface ClusterRunOptions {
  /** The cluster alone: its name is `config.cluster`. */
  readonly scenario: Scenario;
  readonly scheduler: Scheduler;
  readonly identities: Awaited<ReturnType<typeof simulatorIdentities>>;
  /** Where the records observed from this cluster's API go. */
  readonly emit: (record: TimelineRecord) => void;
  readonly diagnose: Diagnose;
  /** Every node's Ready status as the API holds it, as it changes (the report's lanes). */
  readonly onNodeReady?: (node: string, ready: NodeReadyStatus) => void;
  /** Counts a request the API simulator served for the controller or the relay. */
  readonly onApiRequest: () => void;
  /**
   * Where the scenario's fields are, for errors found as the run goes: `[]` for a scenario of one
   * cluster, `['clusters', i]` within a scenario of several.
   */
  readonly path: readonly PropertyKey[];
  /** The relay's quiet digest period (SimulationOptions.relayQuietDigestPeriod). */
  readonly relayQuietDigestPeriod?: Millis | 'asDeployed';
}

/** One cluster of a run: built before the controller, started once the deployment's bus is there. */
export interface ClusterRun {
  /** The cluster's name (`config.cluster`). */
  readonly name: string;
  /** The controller's Kubernetes client of this cluster (its service account, through the API simulator). */
  readonly clusterPort: ClusterPort;
  /** Another controller's client of the same cluster (a managed controller beside the scenario's). */
  newClusterPort(): ClusterPort;
  /**
   * Seeds the cluster at t = 0 and schedules its timeline, its relay's start and its API's bookmarks on
   * the virtual clock.
   */
  schedule(bus: DeploymentBus): void;
  /** Stops the cluster's relay as at the end of a run (it publishes what it had pending). */
  stopRelay(): Promise<void>;
  /**
   * The cluster's Summary: zone states and gauges from the controller's state, nodes from the API,
   * `evictions` as counted from its PodDeleted lines.
   */
  summarize(
    stores: { readonly controllerState: { load(cluster: string): Promise<LoadedState> } },
    evictions: number,
  ): Promise<SummaryRecord>;
  /** Releases everything the cluster started, even after a failure midway. */
  close(): Promise<void>;
}

/**
 * Builds one cluster of a run: its API simulator, served in process, its kubelets, and the controller's
 * client of it.
 *
 * @example
 * const cluster = createClusterRun({ scenario, scheduler, identities, emit, diagnose, onApiRequest, path: [] });
 * cluster.schedule(bus);
 */
export function createClusterRun(options: ClusterRunOptions): ClusterRun {
  const { scenario, scheduler, identities, emit, diagnose, onNodeReady, onApiRequest } = options;
  const { config } = scenario;
  const cluster = config.cluster;
  const start = scenario.start;
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
      onApiRequest();
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
      onApiRequest();
      return server.dispatch(request);
    },
  });
  const stopObserving = observeController(store.registry, () => controllerDepth > 0, emit);
  const stopObservingReady =
    onNodeReady === undefined ? () => undefined : observeNodeReady(store.registry, onNodeReady);
  const fleet = new KubeletFleet({
    store,
    scheduler,
    onApiError: (error, where) => {
      diagnose('warn', 'kubelet', error.message, { node: where.node, action: where.action });
    },
  });
  // Each cluster draws its own: a run of several clusters draws for each what it would alone.
  const random = seededRandom(0x6e6c63);
  const newClusterPort = (): ClusterPort =>
    createKubernetesCluster(makeKubeConfig({ server: ApiUrl, token: identities.controller.token }), {
      requestTimeoutMs: 10_000,
      clock: scheduler,
      sleep: noWait,
      random,
      transport: controllerTransport,
    });
  const clusterPort = newClusterPort();
  let relay: Relay | undefined;

  const stopRelay = async (): Promise<void> => {
    const stopping = relay;
    relay = undefined;
    await stopping?.stop({ flushTimeoutMs: 1000 });
  };

  function schedule(bus: DeploymentBus): void {
    // --- the relay ------------------------------------------------------------------------------------
    // Its host's clock: the scenario's skew, moved by relayClockStep; startRelay starts the process again
    // on the same host (and relayId); restartRelay starts a new one on another (a new pod). A relay
    // process reads its host's clock once, when it starts, and moves it on by the monotonic clock
    // (shared/adapters/realScheduler.ts): a step of the host's clock reaches only a process started
    // after it.
    let relayHost = relayHostClock(scheduler, scenario.relayClockSkew);
    let relayTerm = 1;
    const relayKubeConfig = makeKubeConfig({ server: ApiUrl, token: identities.relay.token });
    const startRelay = async (): Promise<void> => {
      if (relay !== undefined) return;
      relay = createRelay({
        kubeConfig: relayKubeConfig,
        cluster,
        sink: bus.sink,
        scheduler: relayHostClock(scheduler, relayHost.offset()).scheduler,
        nodeMonitorPeriod: config.nodeMonitorPeriod,
        // As the deployed relay picks it from the same settings.
        leaseWatchStallTimeoutMs: defaultLeaseWatchStallTimeout(config),
        // A digest every period unless asked (relay.md, "Quiet digests"; the decisions are the same).
        ...(options.relayQuietDigestPeriod !== undefined && {
          quietDigestPeriod:
            options.relayQuietDigestPeriod === 'asDeployed'
              ? defaultQuietDigestPeriod(config)
              : options.relayQuietDigestPeriod,
        }),
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
          bus.inject(action.detailType, mergeDetail(injectedBase(entry.index, action), action.detail));
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
            path: formatPath([...options.path, 'timeline', index, 'injectEvent', ...field]),
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
          const digest = bus.lastDigestDetail();
          if (digest === undefined) throw missing([], 'no Heartbeat Digest published yet to start from');
          return digest;
        }
      }
    }
  }

  return {
    name: cluster,
    clusterPort,
    newClusterPort,
    schedule,
    stopRelay,
    summarize: async (stores, evictions) => {
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
      return { kind: 'Summary', zones, nodes, evictions };
    },
    close: async () => {
      // A run that failed midway still releases everything it started.
      await relay?.stop({ flushTimeoutMs: 0 }).catch(() => undefined);
      stopObserving();
      stopObservingReady();
      fleet.close();
      await server.close();
    },
  };
}
