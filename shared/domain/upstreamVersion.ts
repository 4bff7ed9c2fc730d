// Which upstream the controller reproduces: version emulation, as Kubernetes' own compatibility
// versions. A cluster runs one kube-controller-manager minor; the NodeLifecycleController and the taint
// eviction controller changed across minors (defaults, a one-pass delay removed, conditions written),
// so the controller follows the minor an operator names (`emulationVersion`), the newest by default.
// Each switch below names the upstream change and the minor it first shipped in; docs/upstream.md
// ("Versions") lists them with how each was verified.
import type { Millis } from './types.js';

/** The oldest minor emulated: the oldest with the taint eviction controller's current algorithm. */
export const OldestEmulatedMinor = 25;
/** The newest released minor (v1.37.0; v1.38 is in pre-release). The default. */
export const NewestEmulatedMinor = 37;

/** An upstream minor, as "1.NN". */
export type EmulationVersion = `1.${number}`;

export const DefaultEmulationVersion: EmulationVersion = `1.${NewestEmulatedMinor}`;

/** The minor of a version ("1.34" → 34). */
export function minorOf(version: EmulationVersion): number {
  return Number(version.slice(2));
}

/**
 * The minor of an API server's version, as /version's gitVersion gives it ("v1.31.4-eks-1a2b3c4" → 31,
 * "v1.37.0" → 37); undefined when it is not a 1.x version.
 *
 * @example
 * minorOfServerVersion('v1.30.9-gke.1127000'); // 30
 */
export function minorOfServerVersion(gitVersion: string): number | undefined {
  const match = /^v?1\.(\d{1,3})(?:\.|$|[-+])/.exec(gitVersion.trim());
  return match === null ? undefined : Number(match[1]);
}

/** What a minor does, where the minors differ. Every field names the change and its first minor. */
export interface UpstreamBehaviour {
  readonly version: EmulationVersion;
  /**
   * `--node-monitor-grace-period`'s default: 40s until v1.31, 50s from v1.32 (PR #126287).
   */
  readonly defaultNodeMonitorGracePeriod: Millis;
  /**
   * The legacy eviction path (`--enable-taint-manager=false`, `--pod-eviction-timeout`): deprecated in
   * v1.25/v1.26, removed in v1.27 (PR #115840). Only a minor that had it may run evictionMode legacy or
   * set podEvictionTimeout.
   */
  readonly legacyEviction: boolean;
  /**
   * processTaintBaseEviction decides on the Ready condition as this pass leaves it (PR #120816,
   * v1.34): the unreachable NoExecute taint is queued in the pass that marks the node Unknown. Before,
   * it decided on the condition as the pass found it, so the taint came one monitor period later.
   */
  readonly taintOnCurrentReadyCondition: boolean;
  /**
   * The DisruptionTarget pod condition written before a taint-eviction delete (PodDisruptionConditions:
   * alpha and off in v1.25, on from v1.26, PR #110959).
   */
  readonly podDisruptionConditions: boolean;
  /**
   * That condition's `observedGeneration` is the pod's generation (PodObservedGenerationTracking, KEP-5067:
   * alpha in v1.33, on from v1.34).
   */
  readonly podConditionObservedGeneration: boolean;
  /**
   * The source component of the taint eviction controller's Events: `taint-controller` until v1.28, then
   * `taint-eviction-controller` (KEP-3902, PR #119208, v1.29).
   */
  readonly taintEvictionEventSource: 'taint-controller' | 'taint-eviction-controller';
  /**
   * Tolerations with the `Lt`/`Gt` operators compare numerically (KEP-5471, v1.35; the API server accepts
   * them only with TaintTolerationComparisonOperators on). Before, they tolerate nothing.
   */
  readonly tolerationComparisonOperators: boolean;
  /**
   * Before marking a node Unknown, its Lease is read from the API; a cache behind it holds health
   * updates until it catches up (PR #138698, KEP-5647, v1.37: gate NodeControllerLeaseCircuitBreaker,
   * beta and on).
   */
  readonly leaseConfirmation: boolean;
}

/**
 * The behaviour of an upstream minor.
 *
 * @example
 * upstreamBehaviour('1.33').taintOnCurrentReadyCondition; // false: the NoExecute taint one pass later
 */
export function upstreamBehaviour(version: EmulationVersion): UpstreamBehaviour {
  const minor = minorOf(version);
  return {
    version,
    defaultNodeMonitorGracePeriod: minor >= 32 ? 50_000 : 40_000,
    legacyEviction: minor <= 26,
    taintOnCurrentReadyCondition: minor >= 34,
    podDisruptionConditions: minor >= 26,
    podConditionObservedGeneration: minor >= 34,
    taintEvictionEventSource: minor >= 29 ? 'taint-eviction-controller' : 'taint-controller',
    tolerationComparisonOperators: minor >= 35,
    leaseConfirmation: minor >= 37,
  };
}

/**
 * Parses "1.NN" (or the YAML number 1.NN, when unambiguous) into a version the controller emulates.
 * Returns the reason when it is not one.
 *
 * @example
 * parseEmulationVersion('1.34'); // { ok: true, value: '1.34' }
 * parseEmulationVersion('1.3');  // { ok: false, message: 'expected an upstream minor from 1.25 to 1.37 …' }
 */
export function parseEmulationVersion(
  input: unknown,
): { ok: true; value: EmulationVersion } | { ok: false; message: string } {
  const range = `1.${OldestEmulatedMinor} to 1.${NewestEmulatedMinor}`;
  const text =
    typeof input === 'number' ? String(input) : typeof input === 'string' ? input.trim() : undefined;
  // A leading "v" (v1.34) and a patch (1.34.2) are what operators copy from `kubectl version`.
  const match = text === undefined ? null : /^v?1\.(\d{1,3})(?:\.\d+)?$/.exec(text);
  const minor = match === null ? undefined : Number(match[1]);
  if (minor !== undefined && minor >= OldestEmulatedMinor && minor <= NewestEmulatedMinor) {
    return { ok: true, value: `1.${minor}` };
  }
  const shown = typeof input === 'string' ? `"${input}"` : String(input);
  const hint = typeof input === 'number' ? ' (a YAML number loses trailing zeros: quote it, as "1.30")' : '';
  return {
    ok: false,
    message: `expected an upstream minor from ${range} (like "1.34"), got ${shown}${hint}`,
  };
}
