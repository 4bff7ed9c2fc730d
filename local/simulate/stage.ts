// The deployment a scenario of several clusters runs as (docs/simulate.md, "Several clusters"): one stage
// serving every cluster, configured as a real one is (docs/deploy.md, "Many clusters from one stage").
// The scenario's top-level `config` is the stage-wide settings, rendered as the NLC_* variables a stage
// sets; each cluster's `config` is its entry's `settings` in NLC_CLUSTERS (its `dryRun` the entry's
// `mode`). The functions' own reader, loadServedClusters, turns that environment into each cluster's
// effective settings, at parse time (to report bad input) and again when the run configures its
// dispatch, as a cold start does.
import {
  CONFIG_KEYS,
  formatConfigValue,
  type ConfigKey,
  type ControllerConfig,
} from '../../shared/config.js';
import { ClustersEnv, loadServedClusters, type ServedCluster } from '../../shared/adapters/clusters.js';
import { ownedEnvVars as clusterAuthEnvVars } from '../../shared/adapters/kubernetes/authConfig.js';
import { ConfigError, type ScenarioIssue } from '../../shared/errors.js';
import { describeInput } from '../../shared/wireFormat.js';

/** The NLC_ variables of the stage that are not settings: loadServedClusters' `allowEnv`. */
const StageOwnedEnv: ReadonlySet<string> = new Set([ClustersEnv, ...clusterAuthEnvVars]);

/** One cluster of the scenario as the stage declares it: its name and the settings it overrides. */
export interface StageCluster {
  readonly name: string;
  /** The cluster's `config` as written (validated by loadServedClusters, as NLC_CLUSTERS' settings are). */
  readonly settings: Readonly<Record<string, unknown>>;
}

/** Where a cluster's API is: in process. Never read (each cluster's port is wired to its simulator). */
const simulatedCredentials = (name: string) =>
  ({ kind: 'kubeconfigFile', path: `(the API simulator of cluster ${name})` }) as const;

/** `dryRun` as NLC_CLUSTERS' `mode`; undefined (with an issue) when it is not a boolean. */
function modeOf(value: unknown, path: string, issues: ScenarioIssue[]): 'shadow' | 'active' | undefined {
  if (value === true || value === 'true') return 'shadow';
  if (value === false || value === 'false') return 'active';
  issues.push({ path, message: `expected true or false, got ${describeInput(value)}` });
  return undefined;
}

/**
 * The stage's environment: the stage-wide settings written in the top-level config (`written`, already
 * validated into `stage`) as NLC_* variables, and NLC_CLUSTERS with an entry per cluster, in order.
 * Problems that are the scenario's own (a cluster's `cluster` or a bad `dryRun`) are added to `issues`,
 * each at `clusters[i].config.<key>`.
 */
export function stageEnvironment(
  written: Readonly<Record<string, unknown>>,
  stage: ControllerConfig,
  clusters: readonly StageCluster[],
  issues: ScenarioIssue[],
): Record<string, string> {
  const env: Record<string, string> = {};
  // Only the keys written: a setting left out follows each cluster's emulationVersion, as on a stage.
  for (const key of Object.keys(written) as ConfigKey[]) {
    if (key in CONFIG_KEYS) env[CONFIG_KEYS[key].envVar] = formatConfigValue(key, stage[key]);
  }
  const document = Object.fromEntries(
    clusters.map(({ name, settings }, i) => {
      const { cluster, dryRun, ...rest } = settings;
      if (cluster !== undefined) {
        issues.push({
          path: `clusters[${i}].config.cluster`,
          message: `the cluster is named by clusters[${i}].name`,
        });
      }
      const mode = dryRun === undefined ? undefined : modeOf(dryRun, `clusters[${i}].config.dryRun`, issues);
      return [
        name,
        { credentials: simulatedCredentials(name), settings: rest, ...(mode !== undefined && { mode }) },
      ];
    }),
  );
  env[ClustersEnv] = JSON.stringify(document);
  return env;
}

/**
 * The clusters the stage serves, read as the functions read them at a cold start. Throws ConfigError
 * (paths as NLC_CLUSTERS and the NLC_* variables name them; `scenarioIssues` says them as the scenario does).
 */
export function servedClusters(env: Readonly<Record<string, string>>): ReadonlyMap<string, ServedCluster> {
  return loadServedClusters(env, undefined, StageOwnedEnv);
}

const EnvVarKeys = new Map(
  (Object.keys(CONFIG_KEYS) as ConfigKey[]).map((key) => [CONFIG_KEYS[key].envVar, key]),
);

/**
 * A ConfigError of servedClusters as the scenario's fields: `NLC_CLUSTERS.<name>.settings.<key>` is
 * `clusters[i].config.<key>`, a stage variable `NLC_<KEY>` the top-level `config.<key>`. A stage
 * variable valid alone can be wrong with a cluster's settings (a grace not above that cluster's
 * monitor period): the message then names the clusters it is wrong for.
 */
export function scenarioIssues(
  error: ConfigError,
  env: Readonly<Record<string, string>>,
  clusters: readonly StageCluster[],
): ScenarioIssue[] {
  const index = new Map(clusters.map(({ name }, i) => [name, i]));
  const document = JSON.parse(env[ClustersEnv] ?? '{}') as Record<string, unknown>;
  /** The clusters whose entry alone gives the issue. */
  const culprits = (issue: ScenarioIssue): string[] =>
    clusters.flatMap(({ name }, i) => {
      try {
        servedClusters({ ...env, [ClustersEnv]: JSON.stringify({ [name]: document[name] }) });
      } catch (alone) {
        if (
          alone instanceof ConfigError &&
          alone.issues.some((other) => other.path === issue.path && other.message === issue.message)
        )
          return [`clusters[${i}]`];
      }
      return [];
    });
  return error.issues.map((issue): ScenarioIssue => {
    const { path, message } = issue;
    const key = EnvVarKeys.get(path);
    if (key !== undefined) {
      const with_ = culprits(issue);
      const those =
        with_.length === clusters.length || with_.length === 0 ? '' : ` (with ${with_.join(', ')})`;
      return { path: `config.${key}`, message: `${message}${those}` };
    }
    const entry = /^NLC_CLUSTERS\.([^.]+)(\.settings)?(.*)$/.exec(path);
    const i = entry === null ? undefined : index.get(entry[1] ?? '');
    if (entry === null || i === undefined) return issue;
    return { path: `clusters[${i}]${entry[2] === undefined ? '' : '.config'}${entry[3] ?? ''}`, message };
  });
}
