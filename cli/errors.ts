// The one error funnel of `nlc` (shaped like the shadcn CLI's utils/handle-error.ts, minus its
// process.exit). Commands throw; main.ts hands whatever reaches it to handleError, which prints one
// clear message and returns the exit code: 2 for bad input, naming each bad field (`- --limit: …`),
// 1 for anything else. A stack trace only with --verbose: operators read messages, not stacks.
import { CommanderError } from 'commander';
import { z } from 'zod';
import { NlcError, StoreError } from '../shared/errors.js';
import type { OutputStream } from '../shared/present/output.js';

/** Exit codes of every `nlc` command: 0 done, 1 any failure, 2 invalid input. */
export const ExitCode = Object.freeze({ ok: 0, failure: 1, invalidInput: 2 });

// Errors that mean "your input is wrong" (exit 2). Matched by name, so the funnel imports none of the
// modules that define them (the scenario parser is heavy, and the CLI must start fast).
const INPUT_ERRORS: ReadonlySet<string> = new Set(['ConfigError', 'ScenarioError']);

// Node's codes for "nothing answered at that address" (connect, DNS, routing, resets).
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/**
 * The state tables could not be reached or read: a DynamoDB endpoint that does not answer, missing
 * credentials, or a table that does not exist. The message says where the CLI looked and what to try.
 *
 * @example
 * new StoreUnreachableError('http://127.0.0.1:8000', 'connection refused (ECONNREFUSED)', 'is the local stack running?').message
 * // 'cannot read the state tables at http://127.0.0.1:8000: connection refused (ECONNREFUSED); is the local stack running?'
 */
export class StoreUnreachableError extends NlcError {
  readonly where: string;

  constructor(where: string, problem: string, hint: string, options?: ErrorOptions) {
    super(`cannot read the state tables at ${where}: ${problem}; ${hint}`, options);
    this.where = where;
  }
}

/**
 * `nlc explain NODE` of a name the controller has neither decisions nor state for (exit 1, as kubectl
 * exits for a NotFound): the message names the node and the cluster, and the closest known names.
 *
 * @example
 * new NodeNotFoundError('a-11', 'default', ['a-1', 'a-10']).message
 * // 'node "a-11" not found in cluster default: no decisions and no state for it (did you mean a-1 or a-10?)'
 */
export class NodeNotFoundError extends NlcError {
  readonly node: string;
  readonly suggestions: readonly string[];

  constructor(node: string, cluster: string, suggestions: readonly string[], options?: ErrorOptions) {
    const didYouMean =
      suggestions.length === 0
        ? '; check the name and --cluster'
        : ` (did you mean ${suggestions.length === 1 ? suggestions[0] : `${suggestions.slice(0, -1).join(', ')} or ${suggestions.at(-1)}`}?)`;
    super(
      `node ${JSON.stringify(node)} not found in cluster ${cluster}: no decisions and no state for it${didYouMean}`,
      options,
    );
    this.node = node;
    this.suggestions = suggestions;
  }
}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code: unknown = Reflect.get(error, 'code');
  return typeof code === 'string' ? code : undefined;
}

/**
 * Turns a StoreError whose cause says the store is unreachable (network, credentials, missing table)
 * into a StoreUnreachableError naming `where` (the endpoint or region) and the option to check.
 * Anything else is returned unchanged.
 */
export function explainStoreError(error: unknown, where: string): unknown {
  if (!(error instanceof StoreError) || error.reason !== 'failed') return error;
  const cause = error.cause;
  const name = cause instanceof Error ? cause.name : '';
  const code = codeOf(cause);
  if (code !== undefined && NETWORK_CODES.has(code)) {
    return new StoreUnreachableError(
      where,
      `no answer (${code})`,
      'is the local stack running, and are --endpoint / NLC_DYNAMODB_ENDPOINT right?',
      { cause: error },
    );
  }
  if (name === 'TimeoutError') {
    return new StoreUnreachableError(where, 'the request timed out', 'check --endpoint / --region', {
      cause: error,
    });
  }
  if (name === 'CredentialsProviderError') {
    return new StoreUnreachableError(
      where,
      'no AWS credentials found',
      'set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or pass --endpoint for a local stack',
      { cause: error },
    );
  }
  if (name === 'ResourceNotFoundException') {
    return new StoreUnreachableError(
      where,
      `table ${error.table} does not exist`,
      'check --stage / --tables-prefix / --region (table names: docs/state.md)',
      { cause: error },
    );
  }
  return error;
}

function isInputError(error: unknown): error is NlcError {
  return error instanceof NlcError && INPUT_ERRORS.has(error.name);
}

function formatZodError(error: z.ZodError): string {
  const count = `${error.issues.length} problem${error.issues.length === 1 ? '' : 's'}`;
  const lines = error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    return `- ${path === '' ? '(input)' : path}: ${issue.message}`;
  });
  return [`Invalid options (${count}):`, ...lines].join('\n');
}

export interface HandleErrorOptions {
  /** Print the stack (and causes) too. */
  readonly verbose?: boolean;
}

/**
 * The one place an error becomes output and an exit code. Commander's own errors (unknown option,
 * missing argument) were already printed by commander: only their exit code is decided here.
 *
 * @example
 * return handleError(error, io.stderr, { verbose }); // 2 for a ZodError or ConfigError, else 1
 */
export function handleError(error: unknown, stderr: OutputStream, options: HandleErrorOptions = {}): number {
  if (error instanceof CommanderError) {
    // --help and --version "fail" with exit code 0; every other commander error is a usage error.
    return error.exitCode === 0 ? ExitCode.ok : ExitCode.invalidInput;
  }
  const input = error instanceof z.ZodError || isInputError(error);
  const message =
    error instanceof z.ZodError
      ? formatZodError(error)
      : error instanceof Error
        ? error.message
        : String(error);
  stderr.write(`error: ${message}\n`);
  if (options.verbose === true) stderr.write(`${stackOf(error)}\n`);
  return input ? ExitCode.invalidInput : ExitCode.failure;
}

function stackOf(error: unknown): string {
  const lines: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 5; depth++) {
    lines.push(
      depth === 0 ? '' : 'Caused by:',
      current instanceof Error ? (current.stack ?? current.message) : JSON.stringify(current),
    );
    current = current instanceof Error ? current.cause : undefined;
  }
  return lines.filter((line) => line !== '').join('\n');
}

const kebab = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * Parses a command's raw options with its zod schema, first thing in the command. Issues
 * are reported by the flag the operator typed (`--limit`), or by the argument's name for positional
 * arguments (`NODE`).
 *
 * @example
 * const options = parseOptions(ExplainOptionsSchema, { ...opts, node }, { node: 'NODE' });
 */
export function parseOptions<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  argumentNames: Readonly<Record<string, string>> = {},
): z.output<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  throw new z.ZodError(
    result.error.issues.map((issue) => {
      const [first, ...rest] = issue.path;
      if (typeof first !== 'string') return issue;
      const label = argumentNames[first] ?? `--${kebab(first)}`;
      return { ...issue, path: [label, ...rest] };
    }),
  );
}
