// The monitor's half of a Nodes item (the "health" group): how a node's entries in ControllerState
// (knownNodes, nodeHealth, nodesToRetry, nodeEvictionStatus) are stored, read back, and when a change
// is worth a write (the write-on-change rule of docs/architecture.md#budgets, docs/state.md).
import { z } from 'zod';
import type { ControllerState } from '../../domain/controllerState.js';
import type { NodeEvictionStatus } from '../../domain/legacyEviction.js';
import type { NodeHealthData } from '../../domain/nodeHealth.js';
import { getNodeCondition, NodeReady, type Node } from '../../domain/types.js';
import type { NodeRowVersion } from '../../ports/stores.js';
import type { DynamoContext, StoredItem } from './client.js';
import { ConditionSchema, conditionsEqual, encodeCondition, encodeInstant, InstantSchema } from './codec.js';
import { parseItem } from './items.js';
import { NodeGroupSchema, nodeOfItem } from './nodeStore.js';

const NodesItemSchema = NodeGroupSchema.extend({
  healthVersion: z.number().optional(),
  registered: z.boolean().optional(),
  registeredUid: z.string().optional(),
  probeTimestamp: InstantSchema.optional(),
  readyTransitionTimestamp: InstantSchema.optional(),
  statusConditions: z.array(ConditionSchema).optional(),
  leaseRenewTime: InstantSchema.optional(),
  retry: z.boolean().optional(),
  evictionStatus: z.enum(['unmarked', 'toBeEvicted', 'evicted']).optional(),
});

/** The monitor's per-node bookkeeping: one Nodes item's health group. */
export interface HealthRow {
  readonly registeredUid?: string;
  readonly health?: NodeHealthData;
  readonly retry: boolean;
  readonly evictionStatus?: NodeEvictionStatus;
}

export function healthRowOf(state: ControllerState, name: string): HealthRow {
  const registeredUid = state.knownNodes.get(name);
  const health = state.nodeHealth.get(name);
  const evictionStatus = state.nodeEvictionStatus.get(name);
  const retry = state.nodesToRetry.has(name);
  // Built without spreads: a commit computes two rows per node on every pass.
  if (registeredUid !== undefined && health !== undefined && evictionStatus === undefined)
    return { registeredUid, health, retry };
  const row: { -readonly [K in keyof HealthRow]: HealthRow[K] } = { retry };
  if (registeredUid !== undefined) row.registeredUid = registeredUid;
  if (health !== undefined) row.health = health;
  if (evictionStatus !== undefined) row.evictionStatus = evictionStatus;
  return row;
}

/** Whether the node's health row fields are the very same values in both states (nothing to write). */
export function sameHealthEntries(before: ControllerState, after: ControllerState, name: string): boolean {
  return (
    before.knownNodes.get(name) === after.knownNodes.get(name) &&
    before.nodeHealth.get(name) === after.nodeHealth.get(name) &&
    before.nodesToRetry.has(name) === after.nodesToRetry.has(name) &&
    before.nodeEvictionStatus.get(name) === after.nodeEvictionStatus.get(name)
  );
}

/**
 * Whether a health row must be written: a decision-relevant field changed. A probe time equal to
 * the saved lease's renewTime is what tryUpdateNodeHealth sets on a renewal; the next full digest
 * carries that instant (or a later one) again, so it is rebuilt after a cold start and not written.
 */
export function healthNeedsWrite(before: HealthRow, after: HealthRow): boolean {
  if (
    before.registeredUid !== after.registeredUid ||
    before.retry !== after.retry ||
    before.evictionStatus !== after.evictionStatus
  ) {
    return true;
  }
  return healthDataNeedsWrite(before.health, after.health);
}

/** healthNeedsWrite's rule for the health entry alone. */
export function healthDataNeedsWrite(b: NodeHealthData | undefined, a: NodeHealthData | undefined): boolean {
  if (b === undefined || a === undefined) return b !== a;
  if (a.readyTransitionTimestamp !== b.readyTransitionTimestamp || !conditionsEqual(a.status, b.status))
    return true;
  return a.probeTimestamp !== b.probeTimestamp && a.probeTimestamp !== a.lease?.renewTime;
}

export function encodeHealthRow(row: HealthRow): Record<string, unknown> {
  const h = row.health;
  return {
    registered: row.registeredUid !== undefined ? true : undefined,
    registeredUid: row.registeredUid,
    probeTimestamp: h === undefined ? undefined : encodeInstant(h.probeTimestamp),
    readyTransitionTimestamp: h === undefined ? undefined : encodeInstant(h.readyTransitionTimestamp),
    statusConditions: h?.status.map(encodeCondition),
    leaseRenewTime: h?.lease === undefined ? undefined : encodeInstant(h.lease.renewTime),
    // For people: the saved Ready status, so `ready = False` filters work in the console.
    ready: h === undefined ? undefined : getNodeCondition(h.status, NodeReady)?.status,
    retry: row.retry ? true : undefined,
    evictionStatus: row.evictionStatus,
  };
}

/** What the Nodes items of a cluster hold: the node cache, the monitor's state, and the versions. */
export interface NodesRows {
  readonly nodes: Map<string, Node>;
  readonly nodeVersions: Map<string, NodeRowVersion>;
  readonly healthVersions: Map<string, number>;
  readonly knownNodes: Map<string, string>;
  readonly nodeHealth: Map<string, NodeHealthData>;
  readonly nodesToRetry: Set<string>;
  readonly nodeEvictionStatus: Map<string, NodeEvictionStatus>;
}

export function decodeNodesItems(
  ctx: DynamoContext,
  cluster: string,
  items: readonly StoredItem[],
): NodesRows {
  const nodes = new Map<string, Node>();
  const nodeVersions = new Map<string, NodeRowVersion>();
  const healthVersions = new Map<string, number>();
  const knownNodes = new Map<string, string>();
  const nodeHealth = new Map<string, NodeHealthData>();
  const nodesToRetry = new Set<string>();
  const nodeEvictionStatus = new Map<string, NodeEvictionStatus>();
  for (const raw of items) {
    const item = parseItem(NodesItemSchema, raw, {
      table: ctx.tables.nodes,
      key: { cluster, node: String(raw.node) },
    });
    const name = item.node;
    const node = nodeOfItem(item);
    if (node !== undefined) nodes.set(name, node);
    if (item.nodeVersion !== undefined) {
      nodeVersions.set(name, {
        version: item.nodeVersion,
        deleted: item.deleted === true,
        updatedAtMs: item.nodeUpdatedAtMs ?? 0,
      });
    }
    if (item.healthVersion === undefined) continue;
    healthVersions.set(name, item.healthVersion);
    if (item.registered === true) knownNodes.set(name, item.registeredUid ?? '');
    if (
      item.probeTimestamp !== undefined &&
      item.readyTransitionTimestamp !== undefined &&
      item.statusConditions !== undefined
    ) {
      nodeHealth.set(name, {
        probeTimestamp: item.probeTimestamp,
        readyTransitionTimestamp: item.readyTransitionTimestamp,
        status: item.statusConditions,
        ...(item.leaseRenewTime !== undefined && { lease: { renewTime: item.leaseRenewTime } }),
      });
    }
    if (item.retry === true) nodesToRetry.add(name);
    if (item.evictionStatus !== undefined) nodeEvictionStatus.set(name, item.evictionStatus);
  }
  return { nodes, nodeVersions, healthVersions, knownNodes, nodeHealth, nodesToRetry, nodeEvictionStatus };
}
