// Toleration matching and the toleration-time rules of taint-based eviction. Ports:
// - `Toleration.ToleratesTaint` (staging/src/k8s.io/api/core/v1/toleration.go, newest form with the
//   KEP-5471 `Lt`/`Gt` operators, which the matcher applies without a feature gate: the gate lives in
//   API validation, not here),
// - `GetMatchingTolerations` (pkg/apis/core/v1/helper/helpers.go),
// - `getMinTolerationTime` (pkg/controller/tainteviction/taint_eviction.go),
// - the DefaultTolerationSeconds admission plugin (plugin/pkg/admission/defaulttolerationseconds/admission.go,
//   newest form: it appends), which the API simulator runs on pod Create and Update.
// Differences: durations are milliseconds, not time.Duration; absent optional strings stand for Go's "".
import { TaintNodeNotReady, TaintNodeUnreachable } from './taints.js';
import type { Millis, Taint, Toleration } from './types.js';
import { upstreamBehaviour, DefaultEmulationVersion, type UpstreamBehaviour } from './upstreamVersion.js';

/** The matcher's rules that changed across minors: `Lt`/`Gt` from v1.35 (KEP-5471). */
export type TolerationRules = Pick<UpstreamBehaviour, 'tolerationComparisonOperators'>;
/** The newest minor's rules: upstream's tests are written against them. */
export const NewestTolerationRules: TolerationRules = upstreamBehaviour(DefaultEmulationVersion);

/** Taint keys the admission plugin defaults tolerations for (k8s.io/api/core/v1 well_known_taints.go). */

/** kube-apiserver --default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds. */
export const defaultNotReadyTolerationSeconds = 300;
export const defaultUnreachableTolerationSeconds = 300;

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/**
 * strconv.ParseInt(s, 10, 64): an optional sign and ASCII digits, nothing else (no spaces, no
 * underscores, no base prefix), within int64. `undefined` stands for Go's parse/range error.
 */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < int64Min || n > int64Max ? undefined : n;
}

/**
 * Whether the toleration tolerates the taint (upstream `Toleration.ToleratesTaint`):
 * 1. an empty effect matches every effect, otherwise the effects must be equal;
 * 2. an empty key matches every key (API validation demands `Exists` then, the matcher does not);
 * 3. operator "" or `Equal` compares values, `Exists` matches any value;
 * 4. `Lt`/`Gt` compare the values as int64 (taint < toleration, taint > toleration); a value that
 *    does not parse matches nothing. Before v1.35 (`rules`) the matcher had no such case: they match
 *    nothing, as any other unknown operator;
 * 5. any other operator matches nothing.
 */
export function toleratesTaint(
  toleration: Toleration,
  taint: Taint,
  rules: TolerationRules = NewestTolerationRules,
): boolean {
  const effect = toleration.effect ?? '';
  if (effect !== '' && effect !== taint.effect) return false;
  const key = toleration.key ?? '';
  if (key !== '' && key !== taint.key) return false;

  const tolerationValue = toleration.value ?? '';
  const taintValue = taint.value ?? '';
  // Types allow only the known operators, but the API simulator may hand us anything a client sent.
  const operator = (toleration.operator ?? '') as string;
  switch (operator) {
    case '':
    case 'Equal':
      return tolerationValue === taintValue;
    case 'Exists':
      return true;
    case 'Lt':
    case 'Gt': {
      if (!rules.tolerationComparisonOperators) return false;
      const tolerationNumber = parseInt64(tolerationValue);
      const taintNumber = parseInt64(taintValue);
      if (tolerationNumber === undefined || taintNumber === undefined) return false;
      return operator === 'Lt' ? taintNumber < tolerationNumber : taintNumber > tolerationNumber;
    }
    default:
      return false;
  }
}

/** Outcome of {@link getMatchingTolerations}. */
export interface MatchingTolerations {
  /** Every taint is tolerated by at least one toleration. */
  readonly allTolerated: boolean;
  /** For each taint, in taint order, the first toleration that tolerates it; empty unless allTolerated. */
  readonly used: Toleration[];
}

/**
 * Upstream `GetMatchingTolerations`. For each taint, the FIRST toleration (in pod order) that
 * tolerates it is used and the rest are never looked at, so a finite toleration listed before a
 * forever one for the same taint decides the eviction time (docs/upstream.md#quirk-17, derived from code).
 */
export function getMatchingTolerations(
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
  rules: TolerationRules = NewestTolerationRules,
): MatchingTolerations {
  if (taints.length === 0) return { allTolerated: true, used: [] };
  if (tolerations.length === 0) return { allTolerated: false, used: [] };
  const used: Toleration[] = [];
  for (const taint of taints) {
    const first = tolerations.find((toleration) => toleratesTaint(toleration, taint, rules));
    if (first === undefined) return { allTolerated: false, used: [] };
    used.push(first);
  }
  return { allTolerated: true, used };
}

/**
 * Upstream `getMinTolerationTime`: the shortest `tolerationSeconds` among the used tolerations, in ms.
 * - no tolerations at all: 0 (evict now);
 * - any toleration with `tolerationSeconds <= 0` (negative included): 0 (docs/upstream.md#quirk-18);
 * - no toleration carries seconds: -1, tolerated forever.
 * Upstream multiplies int64 seconds into a time.Duration, which overflows above ~292 years; we do not
 * reproduce the wrap-around.
 */
export function getMinTolerationTime(tolerations: readonly Toleration[]): Millis {
  if (tolerations.length === 0) return 0;
  let minSeconds = Number.POSITIVE_INFINITY;
  for (const toleration of tolerations) {
    const seconds = toleration.tolerationSeconds;
    if (seconds === undefined) continue;
    if (seconds <= 0) return 0;
    minSeconds = Math.min(minSeconds, seconds);
  }
  return minSeconds === Number.POSITIVE_INFINITY ? -1 : minSeconds * 1000;
}

/** Settings of the DefaultTolerationSeconds admission plugin (kube-apiserver flags). */
export interface DefaultTolerationSecondsOptions {
  /** --default-not-ready-toleration-seconds, 300. */
  readonly notReadySeconds?: number;
  /** --default-unreachable-toleration-seconds, 300. */
  readonly unreachableSeconds?: number;
}

/**
 * The DefaultTolerationSeconds admission plugin (pods only, on Create and Update, never on
 * subresources: the caller decides when to run it). Returns the pod's tolerations with
 * `{key: not-ready|unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}` appended
 * for each of the two taints the pod does not already "tolerate".
 *
 * Upstream quirk (docs/upstream.md#quirk-23): "already tolerates" only looks at key (the taint key or "") and
 * effect (NoExecute or ""); operator, value and tolerationSeconds are ignored. So
 * `{key: unreachable, operator: Equal, value: "x", effect: NoExecute}`, which tolerates no real unreachable
 * taint, still suppresses the 300 s default and the pod is evicted at once.
 *
 * @example
 * defaultTolerationSeconds([]);
 * // [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
 * //  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]
 */
export function defaultTolerationSeconds(
  tolerations: readonly Toleration[],
  {
    notReadySeconds = defaultNotReadyTolerationSeconds,
    unreachableSeconds = defaultUnreachableTolerationSeconds,
  }: DefaultTolerationSecondsOptions = {},
): Toleration[] {
  const coversNoExecuteFor = (taintKey: string) =>
    tolerations.some(
      ({ key = '', effect = '' }) =>
        (key === taintKey || key === '') && (effect === 'NoExecute' || effect === ''),
    );
  const result = [...tolerations];
  if (!coversNoExecuteFor(TaintNodeNotReady)) {
    result.push({
      key: TaintNodeNotReady,
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: notReadySeconds,
    });
  }
  if (!coversNoExecuteFor(TaintNodeUnreachable)) {
    result.push({
      key: TaintNodeUnreachable,
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: unreachableSeconds,
    });
  }
  return result;
}
