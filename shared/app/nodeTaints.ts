// node-taints: one Node Changed event → upstream doNodeProcessingPassWorker for that node
// (pkg/controller/nodelifecycle/node_lifecycle_controller.go): keep the node cache current, then
// doNoScheduleTaintingPass (NoSchedule taints follow the node's conditions and spec.unschedulable) and
// reconcileNodeLabels (the beta OS/arch labels follow the stable ones).
//
// What differs from upstream:
// - Upstream reads the node from its lister when the work item is processed. Here the event's node says
//   whether anything may need writing; when it does, the node is read from the API and the decision is
//   made on that copy (an event is a hint: docs/architecture.md#events-are-hints). The taint write is
//   a read-modify-write with a resourceVersion precondition in the adapter, which merges onto the
//   current taint list and never touches a taint the controller does not own.
// - Events are ordered by resourceVersion through the Nodes table (nodeChanges.ts): a stale one is a
//   no-op and never reaches the cluster. A redelivery of the stored version (a duplicate, or the
//   retry of an invocation that failed) decides on the node read fresh from the API, as upstream's
//   lister read does, so a write that already succeeded is not repeated.
// - Upstream logs a failed write and drops it ("requeue it" is a TODO). Here the invocation throws
//   after attempting both steps, so Lambda retries the event; the writes are idempotent.
// - A node whose own content is over the bounds of the controller's copy (shared/eventBounds.ts)
//   is stored cut, and a `truncated` decision says what was cut, so `nlc explain` shows it.
import {
  actionsOfWrite,
  ClusterSource,
  nodeControllerActions,
  nodeControllerView,
  type ControllerAction,
} from '../agreement.js';
import { compareResourceVersion } from './leaseConfirmation.js';
import type { ControllerConfig } from '../config.js';
import { formatConditionInput, formatTaintInput } from '../decisionContract.js';
import { DecidingExecutor, describeResult } from './decisions.js';
import { decidedWrite, decisionSeqBase } from './decidedWrite.js';
import { recordNodeChange, type NodeChangeOrder } from './nodeChanges.js';
import { reconcileNodeLabels } from '../domain/nodeLabels.js';
import { doNoScheduleTaintingPass, withOwnNoScheduleTaints, type TaintSwap } from '../domain/taints.js';
import type { Node } from '../domain/types.js';
import { ClusterWriteError, RequeueError } from '../errors.js';
import type { NodeChanged } from '../events.js';
import type { Clock } from '../ports/clock.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Observer } from '../ports/observer.js';
import type { JsonValue, NodeControllerSeen, StateStores } from '../ports/stores.js';

/** What the cluster's node controller did to a node between two copies: its Decisions (source `cluster`). */
async function recordClusterActions(
  deps: NodeTaintsDeps,
  cluster: string,
  next: Node,
  actions: readonly ControllerAction[],
  opts: { readonly signal?: AbortSignal },
  another = false,
): Promise<void> {
  await deps.stores.decisions.append(
    cluster,
    actions.map((action, i) => ({
      node: next.name,
      at: action.at,
      source: ClusterSource,
      what: action.kind,
      why: `observed: ${another ? 'another controller (two controllers at once)' : "the cluster's own controller"} ${action.kind === 'markUnknown' ? 'marked the node Ready=Unknown (NodeStatusUnknown)' : `${action.kind === 'taintAdded' ? 'added' : 'removed'} ${action.detail}`} (resourceVersion ${next.resourceVersion ?? '?'})`,
      inputs: {
        ...(action.detail !== '' && { taint: action.detail }),
        resourceVersion: next.resourceVersion ?? null,
      },
      seq: decisionSeqBase(`cluster:${next.name}@${next.resourceVersion ?? ''}`) + i,
    })),
    opts,
  );
}

/** How far back a write of this controller's own may explain a change (its `intended` row comes first). */
const OwnWriteWindowMs = 5 * 60_000;

/**
 * Active mode: a node-controller change this controller's trail does not account for (no `intended` or
 * `ok` write of it in the last five minutes) was made by another controller: warned, counted
 * (`nlc_foreign_node_controller_writes_total`) and recorded (source `cluster`). The trail accounts for
 * every write of ours before it happens: the DecidingExecutor records `intended` first.
 */
async function reportForeignWrites(
  deps: NodeTaintsDeps,
  cluster: string,
  next: Node,
  actions: readonly ControllerAction[],
  opts: { readonly signal?: AbortSignal },
): Promise<void> {
  const now = deps.clock.now();
  const trail = await deps.stores.decisions.query(
    cluster,
    next.name,
    { limit: 100, newestFirst: true },
    opts,
  );
  const own = trail.filter(
    (d) =>
      d.source !== ClusterSource &&
      d.at >= now - OwnWriteWindowMs &&
      (d.result === 'intended' || d.result === 'ok'),
  );
  const ours = new Set(own.flatMap(actionsOfWrite).map((a) => `${a.kind} ${a.subject} ${a.detail}`));
  const foreign = actions.filter((a) => !ours.has(`${a.kind} ${a.subject} ${a.detail}`));
  if (foreign.length === 0) return;
  deps.observer.warn('two controllers at once: node-controller changes this controller did not make', {
    cluster,
    node: next.name,
    changes: foreign.map((a) => (a.detail === '' ? a.kind : `${a.kind} ${a.detail}`)),
    resourceVersion: next.resourceVersion ?? null,
    hint: "a managed control plane keeps its own NodeLifecycleController: run in shadow (mode=shadow), or switch the cluster's off (docs/deploy.md)",
  });
  deps.observer.metric('nlc_foreign_node_controller_writes_total', 'Count', foreign.length);
  await recordClusterActions(deps, cluster, next, foreign, opts, true);
}

/** The `source` of node-taints' decisions. */
export const NodeTaintsSource = 'node-taints';

export interface NodeTaintsDeps {
  readonly config: Pick<ControllerConfig, 'dryRun'>;
  readonly stores: Pick<StateStores, 'nodes' | 'decisions'>;
  readonly cluster: Pick<ClusterPort, 'execute' | 'getNode' | 'addNodeLabels'>;
  readonly observer: Observer;
  /** Stamps decisions and the timeAdded of new taints (upstream metav1.Now()). */
  readonly clock: Clock;
}

export interface InvocationOptions {
  /** The handler's deadline: aborts store and cluster calls. */
  readonly signal?: AbortSignal;
  /**
   * The change's node was just read from the API and its copy is the caller's to store (the monitor's
   * repair of a stale copy, reconcileNodes.ts): decide on it as it is, without ordering it against the
   * stored copy (what the node controller did since node-taints' last view is still recorded).
   */
  readonly fromApi?: boolean;
}

export type NodeTaintsOutcome =
  /** Older than the stored copy: nothing done. */
  | { readonly kind: 'stale' }
  /** A deletion, now stored as a tombstone. */
  | { readonly kind: 'deleted' }
  /** A redelivery for a node the API no longer has. */
  | { readonly kind: 'gone' }
  | {
      readonly kind: 'processed';
      readonly order: Exclude<NodeChangeOrder, 'stale'>;
      /** The taint swap decided (undefined: the taints were right). */
      readonly swap?: TaintSwap;
      /** The labels decided (undefined: the labels were right). */
      readonly labels?: Readonly<Record<string, string>>;
    };

/** What the NoSchedule decision read: the conditions that map to taints and spec.unschedulable. */
function taintInputs(node: Node): Record<string, JsonValue> {
  return {
    // Without reasons: the NoSchedule taints follow type and status only.
    conditions: node.conditions.map((c) => formatConditionInput({ type: c.type, status: c.status })),
    unschedulable: node.unschedulable,
    resourceVersion: node.resourceVersion ?? null,
  };
}

/** Whether doNoScheduleTaintingPass or reconcileNodeLabels would write anything for `node`. */
function needsWrite(node: Node): boolean {
  return doNoScheduleTaintingPass(node) !== undefined || reconcileNodeLabels(node) !== undefined;
}

/** How many times node-taints re-reads its view of a node that another invocation advanced meanwhile. */
const SeenAttempts = 3;

/** Whether `next` is a later version of the node than `seen` (resourceVersions that do not compare: when they differ). */
function isLater(next: string | undefined, seen: string | undefined): boolean {
  if (seen === undefined) return true;
  if (next === undefined) return false;
  return (compareResourceVersion(next, seen) ?? (next === seen ? 0 : 1)) === 1;
}

/** The same node-controller state of the same node (resourceVersions aside). */
function sameView(a: NodeControllerSeen, b: NodeControllerSeen): boolean {
  return (
    a.uid === b.uid &&
    a.ready === b.ready &&
    a.reason === b.reason &&
    a.taints.length === b.taints.length &&
    a.taints.every((taint, i) => taint === b.taints[i])
  );
}

/**
 * Diffs the event's node against node-taints' last view of it, records what the node controller did
 * (recordClusterActions, or reportForeignWrites when active), then stores the event's view, conditional
 * on the one read: a concurrent invocation for a later version wins, one for an earlier version is
 * diffed again. Actions are recorded before the view moves, so a retry after a failure records them
 * again (the same node version, which the read-back counts once), never loses them. Returns the node
 * copy read with the view (the one stored before). Rows from before the view existed: the node copy is
 * the base when it is older than the event.
 */
async function observeNodeController(
  deps: NodeTaintsDeps,
  change: NodeChanged,
  opts: { readonly signal?: AbortSignal },
): Promise<{ readonly node: Node | undefined }> {
  const { stores, clock } = deps;
  const next = nodeControllerView(change.node);
  let stored: Node | undefined;
  for (let attempt = 0; attempt < SeenAttempts; attempt++) {
    const read = await stores.nodes.getNodeControllerSeen(change.cluster, change.node.name, opts);
    if (attempt === 0) stored = read.node;
    if (read.seen !== undefined && !isLater(next.resourceVersion, read.seen.resourceVersion)) break;
    // Unchanged (the common case: a label, a heartbeat post, a republish): nothing to record, and no
    // write, which would cost the partition as much as the node copy's (a republish of 100,000 nodes).
    // The view keeps its older resourceVersion; an event between the two is diffed against it, which
    // records what that event shows the controller did, late rather than never.
    if (read.seen !== undefined && sameView(read.seen, next)) break;
    const base =
      read.seen ??
      (read.node !== undefined &&
      read.node.resourceVersion !== undefined &&
      isLater(next.resourceVersion, read.node.resourceVersion)
        ? nodeControllerView(read.node)
        : undefined);
    const actions = nodeControllerActions(base, next, change.node.name, clock.now());
    if (actions.length > 0) {
      if (deps.config.dryRun) await recordClusterActions(deps, change.cluster, change.node, actions, opts);
      else await reportForeignWrites(deps, change.cluster, change.node, actions, opts);
    }
    const put = await stores.nodes.putNodeControllerSeen(
      change.cluster,
      change.node.name,
      next,
      { resourceVersion: read.seen?.resourceVersion },
      opts,
    );
    if (put.applied) break;
  }
  return { node: stored };
}

/**
 * Runs node-taints for one Node Changed event.
 *
 * @example
 * const outcome = await runNodeTaints({ config, stores, cluster, observer, clock }, parseNodeChanged(detail));
 */
export async function runNodeTaints(
  deps: NodeTaintsDeps,
  change: NodeChanged,
  options: InvocationOptions = {},
): Promise<NodeTaintsOutcome> {
  const { stores, cluster, observer, clock } = deps;
  const { signal } = options;
  const callOpts = signal === undefined ? {} : { signal };
  const fields = { cluster: change.cluster, node: change.node.name, type: change.type };

  // node-taints' own last view of the node says what the node controller's writes changed (not the
  // node copy: taint eviction and the monitor store the API's newer copies too, and one that got there
  // first would leave nothing to compare). In shadow mode they are the cluster's own controller's:
  // recorded beside this controller's decisions (`nlc agreement`, `nlc explain`). Active, each should be
  // this controller's own: one that is not means two controllers at once (a managed control plane's own
  // NodeLifecycleController).
  // The monitor's repair of a copy out of step (fromApi: a Node Changed was lost or never sent) is
  // observed too, so what that event would have shown is recorded, late rather than never.
  const observed =
    change.type !== 'DELETED' ? await observeNodeController(deps, change, callOpts) : undefined;
  const previous = options.fromApi === true ? undefined : observed?.node;
  const order = options.fromApi === true ? 'applied' : await recordNodeChange(stores.nodes, change, callOpts);
  if (order === 'stale') {
    observer.info('node-taints: stale Node Changed, nothing to do', {
      ...fields,
      resourceVersion: change.node.resourceVersion,
    });
    return { kind: 'stale' };
  }
  // Upstream: a node gone from the lister has nothing to taint or label.
  if (change.type === 'DELETED') {
    observer.info('node-taints: node deleted', fields);
    return { kind: 'deleted' };
  }

  // The event is a hint (docs/architecture.md#events-are-hints): a write is decided on the node as the
  // API has it now. A redelivery (duplicate, retry) always reads it, so a write that already succeeded
  // is not repeated; a new version reads it when the event's node calls for a write, so a forged or
  // stale event never adds or removes a taint the API's node does not call for.
  let node = change.node;
  if (options.fromApi !== true && (order === 'redelivered' || needsWrite(node))) {
    const live = await cluster.getNode(node.name, callOpts);
    if (!live.ok) {
      if (live.reason === 'NotFound') {
        observer.info('node-taints: the API no longer has the node', fields);
        return { kind: 'gone' };
      }
      throw new RequeueError(`node ${JSON.stringify(node.name)}`, 'readFailed', live.message);
    }
    node = live.value;
  }

  const now = clock.now();
  const { dryRun } = deps.config;
  const executor = new DecidingExecutor({
    cluster: change.cluster,
    port: cluster,
    decisions: stores.decisions,
    source: NodeTaintsSource,
    at: now,
    dryRun,
    observer,
    seqBase: decisionSeqBase(`node:${node.name}@${change.node.resourceVersion ?? ''}`),
    ...(signal !== undefined && { signal }),
    context: () => taintInputs(node),
  });
  const failures: string[] = [];

  // The stored copy is the event's: say what its bounds cut (a retry rewrites the same row).
  const truncated = change.node.truncated;
  if (truncated !== undefined && truncated.length > 0) {
    await executor.record([
      {
        node: node.name,
        what: 'truncated',
        why: 'the node copy is stored within its bounds: these fields were cut or dropped (the cluster keeps them whole, and no write sends a cut one back)',
        inputs: { truncated: [...truncated], resourceVersion: change.node.resourceVersion ?? null },
      },
    ]);
  }

  // doNoScheduleTaintingPass. In shadow mode on the taints this controller would have had: those the
  // node has are another controller's, and it may have been first (withOwnNoScheduleTaints).
  const swap = doNoScheduleTaintingPass(
    dryRun && previous !== undefined ? withOwnNoScheduleTaints(node, previous) : node,
  );
  if (swap !== undefined) {
    const result = await executor.execute({
      kind: 'swapNodeTaints',
      node: node.name,
      // Upstream SwapNodeControllerTaint stamps every added taint, NoSchedule ones included.
      toAdd: swap.toAdd.map((t) => ({ ...t, timeAdded: now })),
      toRemove: swap.toRemove,
      why: 'doNoScheduleTaintingPass: NoSchedule taints follow the node conditions and spec.unschedulable',
    });
    // NotFound: the node was deleted meanwhile; upstream's lister would not have had it.
    if (!result.ok && result.reason !== 'NotFound') failures.push(result.message);
  }

  // reconcileNodeLabels
  const labels = reconcileNodeLabels(node);
  if (labels !== undefined) {
    const result = await decidedWrite(
      executor,
      dryRun,
      {
        node: node.name,
        what: 'addNodeLabels',
        why: 'reconcileNodeLabels: the beta OS/arch labels follow the stable ones',
        inputs: { labels: Object.entries(labels).map(([k, v]) => `${k}=${v}`) },
      },
      () => cluster.addNodeLabels(node.name, labels, callOpts),
      describeResult,
    );
    if (result !== undefined && !result.ok && result.reason !== 'NotFound') failures.push(result.message);
  }

  observer.info('node-taints: processed', {
    ...fields,
    resourceVersion: node.resourceVersion,
    order,
    dryRun,
    ...(swap !== undefined && {
      add: swap.toAdd.map(formatTaintInput),
      remove: swap.toRemove.map(formatTaintInput),
    }),
    ...(labels !== undefined && { labels }),
    ...(failures.length > 0 && { failures }),
  });
  if (failures.length > 0) throw new ClusterWriteError(node.name, failures);
  return {
    kind: 'processed',
    order,
    ...(swap !== undefined && { swap }),
    ...(labels !== undefined && { labels }),
  };
}
