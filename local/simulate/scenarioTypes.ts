// The `nlc simulate` scenario as the simulator gets it (docs/simulate.md, "Scenario format"): every
// `generate` expanded, every glob resolved, every duration in milliseconds. Types and constants only,
// so the field schemas (scenarioSchema.ts) and the resolution (scenario.ts, clusterModel.ts) can both
// depend on them without depending on each other.
import type { ControllerConfig } from '../../shared/config.js';
import type { ConditionStatus, EpochMillis, Millis } from '../../shared/domain/types.js';
import type {
  HeartbeatDigestDetailType,
  NodeChangedDetailType,
  PodChangedDetailType,
} from '../../shared/events.js';
import type { SimulatedNode } from '../kubelet/kubeletFleet.js';
import type { SimulatedPod } from '../kubelet/pods.js';

/** A node action's targets, resolved: node names in the order the nodes were declared or added. */
export type NodeTargetAction = {
  readonly kind: 'stopKubelet' | 'startKubelet' | 'cordon' | 'uncordon' | 'deleteNode';
  readonly nodes: readonly string[];
};

export type ScenarioAction =
  | NodeTargetAction
  | {
      readonly kind: 'setCondition';
      readonly nodes: readonly string[];
      readonly type: string;
      readonly status: ConditionStatus;
      readonly reason?: string;
      readonly message?: string;
    }
  | { readonly kind: 'addNode'; readonly nodes: readonly SimulatedNode[] }
  | { readonly kind: 'addPod'; readonly pods: readonly SimulatedPod[] }
  | {
      readonly kind: 'deletePod';
      readonly pods: readonly { readonly namespace: string; readonly name: string }[];
    }
  | { readonly kind: 'stopRelay' }
  | { readonly kind: 'startRelay' }
  | {
      readonly kind: 'restartRelay';
      /** The new relay's clock: how far ahead of the functions' it reads (negative: behind). */
      readonly clockSkew: Millis;
    }
  | {
      readonly kind: 'relayClockStep';
      /** How far the relay's clock jumps (negative: back). */
      readonly step: Millis;
    }
  | {
      readonly kind: 'stallWatch';
      readonly resource: StallableResource;
      /** How long the relay's watch of `resource` delivers nothing. */
      readonly duration: Millis;
    }
  | InjectEventAction
  | {
      readonly kind: 'restoreApiServer';
      /** How far back: the API server's store returns to its state at `at − back`. */
      readonly back: Millis;
    };

/** The detail types `injectEvent` can forge: the relay's three. */
export type InjectableDetailType =
  typeof NodeChangedDetailType | typeof PodChangedDetailType | typeof HeartbeatDigestDetailType;

/** The detail types `injectEvent` can forge, in docs/simulate.md's order. */
export const InjectableDetailTypes = [
  'Node Changed',
  'Pod Changed',
  'Heartbeat Digest',
] as const satisfies readonly InjectableDetailType[];

/**
 * An event published on the bus as the relay's role could (forged, or replayed): `detail` is merged over
 * the detail the relay would send now (docs/simulate.md "injectEvent"). Never validated: the functions
 * face whatever a forger sends.
 */
export type InjectEventAction = {
  readonly kind: 'injectEvent';
  /** What the scenario wrote, to be merged over the detail the relay would send. */
  readonly detail: Readonly<Record<string, unknown>>;
} & (
  | { readonly detailType: typeof NodeChangedDetailType; readonly node: string }
  | {
      readonly detailType: typeof PodChangedDetailType;
      readonly pod: { readonly namespace: string; readonly name: string };
    }
  | { readonly detailType: typeof HeartbeatDigestDetailType }
);

/** A watch of the relay that `stallWatch` can stall. */
export type StallableResource = (typeof StallableResources)[number];

/** The watches of the relay a `stallWatch` can stall. */
export const StallableResources = ['leases', 'nodes', 'pods'] as const;

export type ScenarioActionKind = ScenarioAction['kind'];

/** One timeline entry: when (offset from start) and what; `index` is its position in the file. */
export interface TimelineEntry {
  readonly at: Millis;
  readonly index: number;
  readonly action: ScenarioAction;
}

/** A validated scenario. */
export interface Scenario {
  readonly name: string;
  readonly config: ControllerConfig;
  /** Virtual start time (t = 0). */
  readonly start: EpochMillis;
  readonly duration: Millis;
  /** The cluster at t = 0, `generate` expanded, in the order given. */
  readonly nodes: readonly SimulatedNode[];
  readonly pods: readonly SimulatedPod[];
  /** Sorted by `at`; entries at the same offset keep the file's order. */
  readonly timeline: readonly TimelineEntry[];
  /** How far the relay's clock is ahead of the functions' (negative: behind); 0 by default. */
  readonly relayClockSkew: Millis;
  /**
   * "The cluster's own controller": a second, active controller with these settings, while the
   * scenario's controller runs in shadow (dryRun); the Summary reports their agreement.
   */
  readonly managedController?: { readonly config: ControllerConfig };
}

/**
 * A scenario of several clusters (docs/simulate.md, "Several clusters"): one deployment serving every
 * cluster, each with its own API server, kubelets and relay, on one virtual clock.
 */
export interface MultiClusterScenario {
  readonly name: string;
  readonly start: EpochMillis;
  readonly duration: Millis;
  /**
   * The stage's environment, as a deployment's functions read it: the top-level config as NLC_*
   * variables and NLC_CLUSTERS (stage.ts).
   */
  readonly stageEnv: Readonly<Record<string, string>>;
  /**
   * Each cluster as a scenario of its own, in the file's order: `name` and `config.cluster` are the
   * cluster's name, `config` its effective settings as the stage gives them; `start` and `duration` the
   * scenario's. Run alone, each is the same cluster served by a deployment of its own.
   */
  readonly clusters: readonly Scenario[];
}

/** What a scenario file holds: one cluster, or several. */
export type AnyScenario = Scenario | MultiClusterScenario;

export function isMultiCluster(scenario: AnyScenario): scenario is MultiClusterScenario {
  return 'clusters' in scenario;
}

/** Where a scenario starts when it names no `start`: a fixed instant, so runs are reproducible. */
export const DefaultScenarioStart: EpochMillis = Date.parse('2026-01-01T00:00:00Z');

/** Every timeline action, in docs/simulate.md's order (also the order of "did you mean" suggestions). */
export const ScenarioActionKinds: readonly ScenarioActionKind[] = [
  'stopKubelet',
  'startKubelet',
  'setCondition',
  'cordon',
  'uncordon',
  'deleteNode',
  'addNode',
  'addPod',
  'deletePod',
  'stopRelay',
  'startRelay',
  'restartRelay',
  'relayClockStep',
  'stallWatch',
  'injectEvent',
  'restoreApiServer',
];
