// The project's error classes (STYLE Part 2, "Errors"). Expected outcomes are values; these are thrown
// only at the edges (bad settings, bad scenarios) or when an invariant breaks. Adapters map SDK and HTTP
// errors to subclasses of NlcError, so no code above them sees an SDK error type.

/**
 * Base class of every error this project throws. Sets `name` to the subclass name and keeps `cause`.
 *
 * @example
 * throw new NlcError('digest out of order', { cause: err });
 */
export class NlcError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** One bad setting: `path` names it as the operator wrote it (env var, `config.key`, flag key). */
export interface ConfigIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * Invalid settings. One error lists every bad field at once, one line per issue, each naming the
 * setting (the env var when the value came from the environment) and the expected form.
 *
 * @example
 * new ConfigError([{ path: 'NLC_DRY_RUN', message: 'expected true or false (or 1 / 0), got "yes"' }]).message
 * // 'Invalid configuration (1 problem):\n- NLC_DRY_RUN: expected true or false (or 1 / 0), got "yes"'
 */
export class ConfigError extends NlcError {
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[], options?: ErrorOptions) {
    super(formatConfigIssues(issues), options);
    this.issues = issues;
  }
}

function formatConfigIssues(issues: readonly ConfigIssue[]): string {
  const count = `${issues.length} problem${issues.length === 1 ? '' : 's'}`;
  const lines = issues.map((issue) => `- ${issue.path}: ${issue.message}`);
  return [`Invalid configuration (${count}):`, ...lines].join('\n');
}
