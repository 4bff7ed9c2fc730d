// The project's error classes (docs/contributing.md#errors). Expected outcomes are values; these are thrown
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

/**
 * A cluster write would have added or removed a taint the node controller does not own (taints.ts
 * ownedByNodeController). An invariant break, thrown before any request is sent.
 *
 * @example
 * new TaintOwnershipError('node-a', { key: 'example.com/gpu', effect: 'NoSchedule' }).message
 * // 'refusing to write taint example.com/gpu:NoSchedule on node "node-a": not owned by the node controller'
 */
export class TaintOwnershipError extends NlcError {
  readonly node: string;
  readonly taint: { readonly key: string; readonly effect: string };

  constructor(
    node: string,
    taint: { readonly key: string; readonly effect: string },
    options?: ErrorOptions,
  ) {
    super(
      `refusing to write taint ${taint.key}:${taint.effect} on node ${JSON.stringify(node)}: not owned by the node controller`,
      options,
    );
    this.node = node;
    this.taint = { key: taint.key, effect: taint.effect };
  }
}

/**
 * The cluster credentials could not be resolved: a kubeconfig file, Secrets Manager secret or SSM
 * parameter that is missing or malformed, or an EKS cluster that DescribeCluster cannot describe.
 * `source` names where the adapter looked (a path, a secret id, a parameter name, a cluster name).
 *
 * @example
 * new ClusterAuthError('secret "prod/kubeconfig"', 'has no SecretString').message
 * // 'cluster credentials from secret "prod/kubeconfig": has no SecretString'
 */
export class ClusterAuthError extends NlcError {
  readonly source: string;

  constructor(source: string, problem: string, options?: ErrorOptions) {
    super(`cluster credentials from ${source}: ${problem}`, options);
    this.source = source;
  }
}

/**
 * A Kubernetes API request that got no HTTP answer: it timed out, the connection failed, or the caller's
 * signal aborted it. `kind` says which; `attempts` counts the tries made, retries included. The cluster
 * adapter turns it into a `Failed` result naming the node or pod.
 *
 * @example
 * new ClusterTransportError('timeout', 'GET /api/v1/nodes/node-a', 3, 'no response within 10000 ms').message
 * // 'GET /api/v1/nodes/node-a: no response within 10000 ms (3 attempts)'
 */
export class ClusterTransportError extends NlcError {
  readonly kind: 'timeout' | 'network' | 'aborted';
  readonly attempts: number;

  constructor(
    kind: 'timeout' | 'network' | 'aborted',
    request: string,
    attempts: number,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`${request}: ${detail} (${attempts} attempt${attempts === 1 ? '' : 's'})`, options);
    this.kind = kind;
    this.attempts = attempts;
  }
}

/**
 * An event that breaks its contract (shared/events.ts): a wrong shape, a bad value or an unsupported
 * `schemaVersion`. One line per problem, each naming the field (`detail.node.taints[0].effect: …`).
 * Thrown before any I/O, so the event goes to the dead-letter queue instead of a partial write.
 *
 * @example
 * new EventParseError('Heartbeat Digest', ['detail.sequence: expected an integer >= 0, got -1']).message
 * // 'Invalid Heartbeat Digest (1 problem):\n- detail.sequence: expected an integer >= 0, got -1'
 */
export class EventParseError extends NlcError {
  readonly issues: readonly string[];

  constructor(what: string, issues: readonly string[], options?: ErrorOptions) {
    super(formatEventIssues(`Invalid ${what}`, issues), options);
    this.issues = issues;
  }
}

/**
 * The relay built an event that breaks its own contract (a bug, never an input problem): one line per
 * problem, each naming the field. Thrown instead of sending the event.
 */
export class EventEncodeError extends NlcError {
  readonly issues: readonly string[];

  constructor(what: string, issues: readonly string[], options?: ErrorOptions) {
    super(formatEventIssues(`Cannot encode ${what}`, issues), options);
    this.issues = issues;
  }
}

function formatEventIssues(title: string, issues: readonly string[]): string {
  const count = `${issues.length} problem${issues.length === 1 ? '' : 's'}`;
  return [`${title} (${count}):`, ...issues.map((issue) => `- ${issue}`)].join('\n');
}

/** Heartbeat Digest parts that cannot belong together (different digests, or overlapping nodes). */
export class DigestPartsError extends NlcError {}

/** A Kubernetes object without a field the API server always sets (metadata.name, uid, ...). */
export class MalformedObjectError extends NlcError {}

/** The item a state store error is about: the table and the item's key as stored. */
export interface StoreItemRef {
  readonly table: string;
  /** The item's key attributes; absent for requests over many items (a Query, a batch). */
  readonly key?: Readonly<Record<string, string | number>>;
}

function describeItem(ref: StoreItemRef): string {
  return ref.key === undefined ? ref.table : `${ref.table} ${JSON.stringify(ref.key)}`;
}

/**
 * A conditional write lost a race: the item changed since it was read (its version attribute moved).
 * Nothing was overwritten. The caller discards what it loaded and reruns from a fresh read
 * (shared/adapters/dynamodb retryOnVersionConflict).
 *
 * @example
 * new VersionConflictError({ table: 'nlc-nodes', key: { cluster: 'prod', node: 'node-a' } }).message
 * // 'version conflict on nlc-nodes {"cluster":"prod","node":"node-a"}: changed since it was read; rerun from a fresh read'
 */
export class VersionConflictError extends NlcError {
  readonly table: string;
  readonly key: Readonly<Record<string, string | number>> | undefined;

  constructor(ref: StoreItemRef, options?: ErrorOptions) {
    super(
      `version conflict on ${describeItem(ref)}: changed since it was read; rerun from a fresh read`,
      options,
    );
    this.table = ref.table;
    this.key = ref.key;
  }
}

/**
 * A state store request failed for another reason than a lost race: still throttled after the SDK's
 * retries (`reason: 'throttled'`), aborted by the caller's signal (`'aborted'`), or any other error
 * (`'failed'`: validation, network, a malformed item read back). `cause` keeps the original error.
 *
 * @example
 * new StoreError({ table: 'nlc-zones' }, 'throttled', 'ThrottlingException: Rate exceeded').message
 * // 'nlc-zones: ThrottlingException: Rate exceeded'
 */
export class StoreError extends NlcError {
  readonly table: string;
  readonly key: Readonly<Record<string, string | number>> | undefined;
  readonly reason: 'throttled' | 'aborted' | 'failed';

  constructor(
    ref: StoreItemRef,
    reason: 'throttled' | 'aborted' | 'failed',
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`${describeItem(ref)}: ${detail}`, options);
    this.table = ref.table;
    this.key = ref.key;
    this.reason = reason;
  }
}

/**
 * A kubelet fleet call named a node the fleet runs no kubelet for (never added, or its Node was
 * deleted). The simulator validates scenarios first, so this is a bug in the caller.
 *
 * @example
 * new KubeletNotFoundError('b-3').message
 * // 'no simulated kubelet for node "b-3"'
 */
export class KubeletNotFoundError extends NlcError {
  readonly node: string;

  constructor(node: string, options?: ErrorOptions) {
    super(`no simulated kubelet for node ${JSON.stringify(node)}`, options);
    this.node = node;
  }
}

/**
 * Events an EventSink could not deliver (shared/ports/eventSink.ts), for a caller that cannot keep them
 * for a later attempt: thrown or logged, so they are never dropped silently. The message lists every
 * failure (up to ten), each naming its event.
 *
 * @example
 * new PublishError([{ code: 'EntryTooLarge', message: 'Heartbeat Digest sequence 7 part 1/1 (cluster prod) is 1200000 bytes' }]).message
 * // '1 event not published:\n- EntryTooLarge: Heartbeat Digest sequence 7 part 1/1 (cluster prod) is 1200000 bytes'
 */
export class PublishError extends NlcError {
  readonly failures: readonly { readonly code: string; readonly message: string }[];

  constructor(
    failures: readonly { readonly code: string; readonly message: string }[],
    options?: ErrorOptions,
  ) {
    const lines = failures.slice(0, 10).map((f) => `- ${f.code}: ${f.message}`);
    if (failures.length > 10) lines.push(`- … and ${failures.length - 10} more`);
    super(
      [`${failures.length} event${failures.length === 1 ? '' : 's'} not published:`, ...lines].join('\n'),
      options,
    );
    this.failures = failures;
  }
}

/**
 * Writes to the cluster that a function must see succeed failed (a taint swap, a label patch, a pod
 * status update). Thrown after every write of the invocation was attempted, so Lambda retries the event
 * (the writes are idempotent) and, after its retries, the on-failure destination keeps it. `failures`
 * holds one message per failed write, each naming the node or pod.
 *
 * @example
 * new ClusterWriteError('node-a', ['update taints of node "node-a": HTTP 500 InternalError: boom']).message
 * // 'cluster writes for node "node-a" failed (1): update taints of node "node-a": HTTP 500 InternalError: boom'
 */
export class ClusterWriteError extends NlcError {
  readonly subject: string;
  readonly failures: readonly string[];

  constructor(subject: string, failures: readonly string[], options?: ErrorOptions) {
    super(
      `cluster writes for node ${JSON.stringify(subject)} failed (${failures.length}): ${failures.join('; ')}`,
      options,
    );
    this.subject = subject;
    this.failures = failures;
  }
}

/**
 * Upstream would put the item back on its work queue (`AddRateLimited`): the work cannot be done yet
 * (a read failed, or the node lister does not have the pod's node). Thrown so that Lambda retries the
 * event later; `reason` names the cause for the logs.
 *
 * @example
 * new RequeueError('pod "default/web-1"', 'nodeNotFound', 'node "node-a" is not in the node cache').message
 * // 'pod "default/web-1": requeued (nodeNotFound): node "node-a" is not in the node cache'
 */
export class RequeueError extends NlcError {
  readonly item: string;
  readonly reason: string;

  constructor(item: string, reason: string, detail: string, options?: ErrorOptions) {
    super(`${item}: requeued (${reason}): ${detail}`, options);
    this.item = item;
    this.reason = reason;
  }
}

/**
 * The monitor could not start the eviction drainer (the asynchronous Lambda Invoke failed). The pass
 * itself is committed; the drainer's own schedule catches up within a minute, so callers log it and
 * go on.
 *
 * @example
 * new DrainerTriggerError('nlc-prod-evictionDrainer', 'ResourceNotFoundException: Function not found').message
 * // 'could not invoke the eviction drainer "nlc-prod-evictionDrainer": ResourceNotFoundException: Function not found'
 */
export class DrainerTriggerError extends NlcError {
  readonly functionName: string;

  constructor(functionName: string, detail: string, options?: ErrorOptions) {
    super(`could not invoke the eviction drainer ${JSON.stringify(functionName)}: ${detail}`, options);
    this.functionName = functionName;
  }
}

/** One bad field of a scenario: `path` names it as written (`timeline[3].stopKubelet`, `nodes[0].zone`). */
export interface ScenarioIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * An invalid `nlc simulate` scenario (docs/simulate.md): one line per problem, each naming the field. The
 * CLI exits with 2 for it. `source` names the file when there is one.
 *
 * @example
 * new ScenarioError([{ path: 'timeline[3].stopKubelet', message: 'no node matches "c-*"' }]).message
 * // 'Invalid scenario (1 problem):\n- timeline[3].stopKubelet: no node matches "c-*"'
 */
export class ScenarioError extends NlcError {
  readonly issues: readonly ScenarioIssue[];
  readonly source: string | undefined;

  constructor(issues: readonly ScenarioIssue[], source?: string, options?: ErrorOptions) {
    const count = `${issues.length} problem${issues.length === 1 ? '' : 's'}`;
    const title = source === undefined ? 'Invalid scenario' : `Invalid scenario ${source}`;
    super([`${title} (${count}):`, ...issues.map((i) => `- ${i.path}: ${i.message}`)].join('\n'), options);
    this.issues = issues;
    this.source = source;
  }
}

/**
 * A port the local stack needs is taken (local/stack/ports.ts). Names the port, what wanted it and the
 * flag that moves it, so the fix is in the message.
 *
 * @example
 * new PortInUseError(8000, 'the DynamoDB-compatible server', '--port-dynamodb').message
 * // 'port 8000 (the DynamoDB-compatible server) on 127.0.0.1 is already in use: stop what holds it, or choose another port with --port-dynamodb <port> (0 picks a free one)'
 */
export class PortInUseError extends NlcError {
  readonly port: number;
  readonly purpose: string;
  readonly flag: string;

  constructor(port: number, purpose: string, flag: string, options?: ErrorOptions) {
    super(
      `port ${port} (${purpose}) on 127.0.0.1 is already in use: stop what holds it, or choose another port with ${flag} <port> (0 picks a free one)`,
      options,
    );
    this.port = port;
    this.purpose = purpose;
    this.flag = flag;
  }
}

/**
 * A part of the local stack did not come up (local/stack/): the emulator of the functions exited or
 * never became ready, the relay could not start. `detail` carries what the part printed last.
 *
 * @example
 * new LocalStackStartError('serverless-offline', 'exited with code 1 before it was ready').message
 * // 'local stack: serverless-offline: exited with code 1 before it was ready'
 */
export class LocalStackStartError extends NlcError {
  readonly part: string;

  constructor(part: string, detail: string, options?: ErrorOptions) {
    super(`local stack: ${part}: ${detail}`, options);
    this.part = part;
  }
}
