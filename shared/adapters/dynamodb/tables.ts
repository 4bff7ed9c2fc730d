// The five state tables of docs/state.md, defined once: the tests and the local stack create them from
// tableDefinitions, serverless.yml renders cloudFormationResources. docs/state.md explains every key
// and attribute to operators. Every table is on-demand (PAY_PER_REQUEST): the steady-state load is tiny
// and bursty (docs/architecture.md#budgets), which provisioned capacity would overpay for.
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/** The physical names of the five tables. */
export interface TableNames {
  readonly nodes: string;
  readonly zones: string;
  readonly evictionQueue: string;
  readonly podEvictions: string;
  readonly decisions: string;
}

/**
 * The conventional names `<prefix>-nodes`, `<prefix>-zones`, … (e.g. prefix `nlc-prod`).
 *
 * @example tableNamesWithPrefix('nlc-dev').evictionQueue // 'nlc-dev-eviction-queue'
 */
export function tableNamesWithPrefix(prefix: string): TableNames {
  return {
    nodes: `${prefix}-nodes`,
    zones: `${prefix}-zones`,
    evictionQueue: `${prefix}-eviction-queue`,
    podEvictions: `${prefix}-pod-evictions`,
    decisions: `${prefix}-decisions`,
  };
}

/** Nodes GSI: node-group changes by time, so a warm monitor reads only the nodes changed since its last read. */
export const NodesByChangeIndex = 'byNodeChange';
/** PodEvictions GSI: waiting eviction timers by the instant they fire. */
export const PodEvictionsByFiresAtIndex = 'byFiresAt';

/** The TTL attribute (epoch seconds) of the tables that have one. */
export const TtlAttribute = 'expiresAt';

/**
 * The Nodes attributes written by node-taints (the "node" group). The byNodeChange index projects
 * exactly these, so the monitor's health writes never write the index.
 */
export const NodeGroupAttributes = [
  'object',
  'resourceVersion',
  'nodeVersion',
  'deleted',
  'zone',
  'excluded',
  'nodeUpdatedAt',
] as const;

export interface TableDefinition {
  /** The CloudFormation logical id. */
  readonly logicalId: string;
  /** What CreateTable needs (tests, the local stack). */
  readonly create: CreateTableCommandInput & { readonly TableName: string };
  /** The TTL attribute (epoch seconds), where the table has one. */
  readonly timeToLiveAttribute?: string;
}

type KeyType = 'S' | 'N';

function keyed(
  TableName: string,
  hash: readonly [string, KeyType],
  range: readonly [string, KeyType],
): CreateTableCommandInput & { readonly TableName: string } {
  return {
    TableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: hash[0], AttributeType: hash[1] },
      { AttributeName: range[0], AttributeType: range[1] },
    ],
    KeySchema: [
      { AttributeName: hash[0], KeyType: 'HASH' },
      { AttributeName: range[0], KeyType: 'RANGE' },
    ],
  };
}

/**
 * CreateTable inputs for the five tables, plus each table's TTL attribute.
 *
 * @example
 * for (const table of Object.values(tableDefinitions(names))) await client.send(new CreateTableCommand(table.create));
 */
export function tableDefinitions(names: TableNames): Readonly<Record<keyof TableNames, TableDefinition>> {
  const nodes = keyed(names.nodes, ['cluster', 'S'], ['node', 'S']);
  const podEvictions = keyed(names.podEvictions, ['cluster', 'S'], ['pod', 'S']);
  return {
    nodes: {
      logicalId: 'NodesTable',
      create: {
        ...nodes,
        AttributeDefinitions: [
          ...(nodes.AttributeDefinitions ?? []),
          { AttributeName: 'nodeUpdatedAtMs', AttributeType: 'N' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: NodesByChangeIndex,
            KeySchema: [
              { AttributeName: 'cluster', KeyType: 'HASH' },
              { AttributeName: 'nodeUpdatedAtMs', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...NodeGroupAttributes] },
          },
        ],
      },
      // Only deleted-node tombstones carry it.
      timeToLiveAttribute: TtlAttribute,
    },
    zones: { logicalId: 'ZonesTable', create: keyed(names.zones, ['cluster', 'S'], ['zone', 'S']) },
    evictionQueue: {
      logicalId: 'EvictionQueueTable',
      create: keyed(names.evictionQueue, ['clusterZone', 'S'], ['node', 'S']),
      // Only removed-entry tombstones carry it.
      timeToLiveAttribute: TtlAttribute,
    },
    podEvictions: {
      logicalId: 'PodEvictionsTable',
      create: {
        ...podEvictions,
        AttributeDefinitions: [
          ...(podEvictions.AttributeDefinitions ?? []),
          { AttributeName: 'firesAtMs', AttributeType: 'N' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: PodEvictionsByFiresAtIndex,
            KeySchema: [
              { AttributeName: 'cluster', KeyType: 'HASH' },
              { AttributeName: 'firesAtMs', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      },
    },
    decisions: {
      logicalId: 'DecisionsTable',
      create: keyed(names.decisions, ['clusterNode', 'S'], ['timeSeq', 'S']),
      timeToLiveAttribute: TtlAttribute,
    },
  };
}

export interface CloudFormationOptions {
  /** Point-in-time recovery (35 days of restorable history). */
  readonly pointInTimeRecovery: boolean;
  /** Server-side encryption with the AWS managed KMS key (`alias/aws/dynamodb`). */
  readonly sse: boolean;
  /** DeletionPolicy/UpdateReplacePolicy Retain, so removing the stack never drops state. Default true. */
  readonly retain?: boolean;
}

/** One AWS::DynamoDB::Table resource, as CloudFormation (and serverless.yml `resources`) takes it. */
export interface CloudFormationTable {
  readonly Type: 'AWS::DynamoDB::Table';
  readonly DeletionPolicy?: 'Retain';
  readonly UpdateReplacePolicy?: 'Retain';
  readonly Properties: Readonly<Record<string, unknown>>;
}

/**
 * The five tables as CloudFormation resources keyed by logical id: the same keys and indexes as
 * tableDefinitions, plus PITR, SSE and TTL.
 *
 * @example
 * const resources = cloudFormationResources(tableNamesWithPrefix('nlc-prod'), { pointInTimeRecovery: true, sse: true });
 * resources.DecisionsTable.Properties.TimeToLiveSpecification // { AttributeName: 'expiresAt', Enabled: true }
 */
export function cloudFormationResources(
  names: TableNames,
  options: CloudFormationOptions,
): Readonly<Record<string, CloudFormationTable>> {
  const retain = options.retain ?? true;
  const resources: Record<string, CloudFormationTable> = {};
  for (const definition of Object.values(tableDefinitions(names))) {
    const { create } = definition;
    resources[definition.logicalId] = {
      Type: 'AWS::DynamoDB::Table',
      ...(retain && { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' }),
      Properties: {
        TableName: create.TableName,
        BillingMode: create.BillingMode,
        AttributeDefinitions: create.AttributeDefinitions,
        KeySchema: create.KeySchema,
        ...(create.GlobalSecondaryIndexes !== undefined && {
          GlobalSecondaryIndexes: create.GlobalSecondaryIndexes,
        }),
        ...(options.pointInTimeRecovery && {
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        }),
        ...(options.sse && { SSESpecification: { SSEEnabled: true } }),
        ...(definition.timeToLiveAttribute !== undefined && {
          TimeToLiveSpecification: { AttributeName: definition.timeToLiveAttribute, Enabled: true },
        }),
      },
    };
  }
  return resources;
}
