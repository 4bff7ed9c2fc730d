// The node cache in the Nodes table: node-taints writes the trimmed node on every Node Changed event
// (the "node" group of the item), the monitor writes its health bookkeeping into the same item (the
// "health" group, controllerStateStore.ts). Each writer's UpdateExpression touches only its own
// attributes and is conditional only on its own ones, so the two never conflict.
//
// Events arrive out of order and more than once (EventBridge retries for up to 24 h), so a write
// applies only when its resourceVersion is newer than the stored one; a deletion leaves a tombstone
// that keeps the last resourceVersion until the TTL removes it, so a late ADDED cannot bring the node
// back.
import { z } from 'zod';
import { BatchGetCommand, GetCommand, NumberValue, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { StoreError, VersionConflictError } from '../../errors.js';
import type { Node } from '../../domain/types.js';
import { getZoneKey, isNodeExcludedFromDisruptionChecks } from '../../domain/zones.js';
import type { NodeControllerSeen, NodeStore, NodeWriteResult, StoreCallOptions } from '../../ports/stores.js';
import { backoffMs, Expression, pause, request, type DynamoContext, type StoredItem } from './client.js';
import {
  checkClusterName,
  decodeNode,
  encodeNodeObject,
  encodeZone,
  integerResourceVersion,
  isoString,
  NodeObjectSchema,
} from './codec.js';
import { expiresAt, parseItem } from './items.js';

/** The node group of a Nodes item, as read back. */
export const NodeGroupSchema = z.object({
  node: z.string(),
  object: NodeObjectSchema.optional(),
  resourceVersion: z.string().optional(),
  nodeVersion: z.number().optional(),
  nodeUpdatedAtMs: z.number().optional(),
  deleted: z.boolean().optional(),
});

/** node-taints' last view of the node's node-controller state (attribute `ncSeen`; agreement.ts). */
const NodeControllerSeenSchema = z.object({
  uid: z.string(),
  resourceVersion: z.string().optional(),
  ready: z.string().optional(),
  reason: z.string().optional(),
  taints: z.array(z.string()),
});
const SeenGroupSchema = NodeGroupSchema.extend({ ncSeen: NodeControllerSeenSchema.optional() });

/** The live node a Nodes item holds, if any. */
export function nodeOfItem(item: z.output<typeof NodeGroupSchema>): Node | undefined {
  if (item.object === undefined || item.deleted === true) return undefined;
  return decodeNode(item.node, item.object, item.resourceVersion);
}

/**
 * The condition that a write with `resourceVersion` is newer than what is stored (`orEqual`: or the
 * same, for deletions). Integers compare through `resourceVersionNum` when both sides have one.
 */
function resourceVersionIsNewer(e: Expression, resourceVersion: string, orEqual: boolean): string {
  const rv = e.n('resourceVersion');
  const num = e.n('resourceVersionNum');
  const lt = orEqual ? '<=' : '<';
  const asInteger = integerResourceVersion(resourceVersion);
  const asStrings = `${rv} ${lt} ${e.v(resourceVersion)}`;
  if (asInteger === undefined) return `attribute_not_exists(${rv}) OR ${asStrings}`;
  return (
    `attribute_not_exists(${rv}) OR ${num} ${lt} ${e.v(NumberValue.from(asInteger))} ` +
    `OR (attribute_not_exists(${num}) AND ${asStrings})`
  );
}

/**
 * putNode's and deleteNode's condition: newer than what is stored (`orEqual` for deletions). Without a
 * resourceVersion there is nothing to order by: the write applies (tests, tools).
 */
function newerThanStored(
  resourceVersion: string | undefined,
  orEqual: boolean,
): ((e: Expression) => string) | undefined {
  return resourceVersion === undefined
    ? undefined
    : (e) => resourceVersionIsNewer(e, resourceVersion, orEqual);
}

export class DynamoDbNodeStore implements NodeStore {
  constructor(private readonly ctx: DynamoContext) {}

  async putNode(cluster: string, node: Node, opts: StoreCallOptions = {}): Promise<NodeWriteResult> {
    const set = {
      object: encodeNodeObject(node),
      zone: encodeZone(getZoneKey(node.labels)),
      excluded: isNodeExcludedFromDisruptionChecks(node),
      deleted: undefined,
      expiresAt: undefined,
    };
    return this.write(
      cluster,
      node.name,
      node.resourceVersion,
      set,
      newerThanStored(node.resourceVersion, false),
      opts,
    );
  }

  async deleteNode(
    cluster: string,
    name: string,
    resourceVersion: string | undefined,
    opts: StoreCallOptions = {},
  ): Promise<NodeWriteResult> {
    const set = {
      object: undefined,
      deleted: true,
      expiresAt: expiresAt(this.ctx.clock.now(), this.ctx.settings.tombstoneTtlSeconds),
    };
    return this.write(cluster, name, resourceVersion, set, newerThanStored(resourceVersion, true), opts);
  }

  async replaceNode(
    cluster: string,
    name: string,
    node: Node | undefined,
    expected: { readonly resourceVersion: string | undefined },
    opts: StoreCallOptions = {},
  ): Promise<NodeWriteResult> {
    const set =
      node === undefined
        ? {
            object: undefined,
            deleted: true,
            expiresAt: expiresAt(this.ctx.clock.now(), this.ctx.settings.tombstoneTtlSeconds),
          }
        : {
            object: encodeNodeObject(node),
            zone: encodeZone(getZoneKey(node.labels)),
            excluded: isNodeExcludedFromDisruptionChecks(node),
            deleted: undefined,
            expiresAt: undefined,
          };
    const condition = (e: Expression): string =>
      expected.resourceVersion === undefined
        ? `attribute_not_exists(${e.n('resourceVersion')})`
        : `${e.n('resourceVersion')} = ${e.v(expected.resourceVersion)}`;
    // A tombstone keeps the last resourceVersion it replaced, as deleteNode's does.
    return this.write(cluster, name, node?.resourceVersion ?? expected.resourceVersion, set, condition, opts);
  }

  async getNodeControllerSeen(
    cluster: string,
    name: string,
    opts: StoreCallOptions = {},
  ): Promise<{ readonly seen: NodeControllerSeen | undefined; readonly node: Node | undefined }> {
    const item = await getNodesItem(this.ctx, cluster, name, opts.signal);
    if (item === undefined) return { seen: undefined, node: undefined };
    const parsed = parseItem(SeenGroupSchema, item, {
      table: this.ctx.tables.nodes,
      key: { cluster, node: name },
    });
    return { seen: parsed.ncSeen, node: nodeOfItem(parsed) };
  }

  async putNodeControllerSeen(
    cluster: string,
    name: string,
    seen: NodeControllerSeen,
    expected: { readonly resourceVersion: string | undefined },
    opts: StoreCallOptions = {},
  ): Promise<NodeWriteResult> {
    const e = new Expression();
    // Its own attributes only (ncSeen, and its resourceVersion apart for the condition): neither the node
    // copy's version nor the monitor's health changes.
    const update = e.update({ ncSeen: seen, ncSeenRv: seen.resourceVersion });
    const rv = e.n('ncSeenRv');
    const condition =
      expected.resourceVersion === undefined
        ? `attribute_not_exists(${rv})`
        : `${rv} = ${e.v(expected.resourceVersion)}`;
    return this.update(cluster, name, e, update, condition, opts);
  }

  async getNode(cluster: string, name: string, opts: StoreCallOptions = {}): Promise<Node | undefined> {
    const item = await getNodesItem(this.ctx, cluster, name, opts.signal);
    if (item === undefined) return undefined;
    return nodeOfItem(
      parseItem(NodeGroupSchema, item, { table: this.ctx.tables.nodes, key: { cluster, node: name } }),
    );
  }

  async getNodes(
    cluster: string,
    names: readonly string[],
    opts: StoreCallOptions = {},
  ): Promise<ReadonlyMap<string, Node>> {
    const { ctx } = this;
    checkClusterName(cluster);
    const ref = { table: ctx.tables.nodes };
    const found = new Map<string, Node>();
    const unique = [...new Set(names)];
    for (let i = 0; i < unique.length; i += 100) {
      let keys: Record<string, unknown>[] = unique.slice(i, i + 100).map((node) => ({ cluster, node }));
      for (let attempt = 0; keys.length > 0; attempt++) {
        if (attempt >= ctx.settings.batchAttempts) {
          throw new StoreError(
            ref,
            'throttled',
            `${keys.length} keys still unprocessed after ${attempt} BatchGetItem attempts`,
          );
        }
        if (attempt > 0) await pause(backoffMs(ctx.settings, attempt - 1), ref, opts.signal);
        const output = await request(
          ctx,
          'BatchGetItem',
          ref,
          (abortSignal) =>
            ctx.doc.send(
              new BatchGetCommand({
                RequestItems: { [ctx.tables.nodes]: { Keys: keys, ConsistentRead: true } },
                ReturnConsumedCapacity: 'TOTAL',
              }),
              { abortSignal },
            ),
          opts.signal,
        );
        for (const item of output.Responses?.[ctx.tables.nodes] ?? []) {
          const stored: StoredItem = item;
          const parsed = parseItem(NodeGroupSchema, stored, {
            table: ctx.tables.nodes,
            key: { cluster, node: String(stored.node) },
          });
          const node = nodeOfItem(parsed);
          if (node !== undefined) found.set(node.name, node);
        }
        keys = output.UnprocessedKeys?.[ctx.tables.nodes]?.Keys ?? [];
      }
    }
    return found;
  }

  /** One conditional write of the node group; `condition` builds the ConditionExpression (none: always). */
  private async write(
    cluster: string,
    name: string,
    resourceVersion: string | undefined,
    set: Readonly<Record<string, unknown>>,
    condition: ((e: Expression) => string) | undefined,
    opts: StoreCallOptions,
  ): Promise<NodeWriteResult> {
    const e = new Expression();
    const now = this.ctx.clock.now();
    const asInteger = resourceVersion === undefined ? undefined : integerResourceVersion(resourceVersion);
    const update = e.update(
      {
        ...set,
        resourceVersion,
        resourceVersionNum: asInteger === undefined ? undefined : NumberValue.from(asInteger),
        nodeUpdatedAt: isoString(now),
        nodeUpdatedAtMs: now,
      },
      [`${e.n('nodeVersion')} = if_not_exists(${e.n('nodeVersion')}, ${e.v(0)}) + ${e.v(1)}`],
    );
    return this.update(cluster, name, e, update, condition?.(e), opts);
  }

  /**
   * One UpdateItem on the node's item, conditional when `condition` is given: `applied: false` when the
   * condition failed (a newer or the same resourceVersion stored, or the item another writer changed).
   */
  private async update(
    cluster: string,
    name: string,
    e: Expression,
    update: string,
    condition: string | undefined,
    opts: StoreCallOptions,
  ): Promise<NodeWriteResult> {
    const { ctx } = this;
    const key = { cluster: checkClusterName(cluster), node: name };
    try {
      await request(
        ctx,
        'UpdateItem',
        { table: ctx.tables.nodes, key },
        (abortSignal) =>
          ctx.doc.send(
            new UpdateCommand({
              TableName: ctx.tables.nodes,
              Key: key,
              UpdateExpression: update,
              ...(condition !== undefined && { ConditionExpression: condition }),
              ...e.params,
              ReturnConsumedCapacity: 'TOTAL',
            }),
            { abortSignal },
          ),
        opts.signal,
      );
      return { applied: true };
    } catch (error) {
      if (error instanceof VersionConflictError) return { applied: false };
      throw error;
    }
  }
}

/**
 * One Nodes item, strongly consistent (both groups: the node copy and the monitor's health). Shared by
 * NodeStore.getNode and ControllerStateStore.getNodeHealth.
 */
export async function getNodesItem(
  ctx: DynamoContext,
  cluster: string,
  name: string,
  signal: AbortSignal | undefined,
): Promise<StoredItem | undefined> {
  const key = { cluster: checkClusterName(cluster), node: name };
  const output = await request(
    ctx,
    'GetItem',
    { table: ctx.tables.nodes, key },
    (abortSignal) =>
      ctx.doc.send(
        new GetCommand({
          TableName: ctx.tables.nodes,
          Key: key,
          ConsistentRead: true,
          ReturnConsumedCapacity: 'TOTAL',
        }),
        { abortSignal },
      ),
    signal,
  );
  return output.Item;
}
