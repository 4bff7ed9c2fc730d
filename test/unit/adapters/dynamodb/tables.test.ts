import { describe, expect, it } from 'vitest';
import {
  cloudFormationResources,
  NodeGroupAttributes,
  tableDefinitions,
  tableNamesWithPrefix,
} from '../../../../shared/adapters/dynamodb/tables.js';
import { validateTemplate } from '../../../../scripts/validate-template.js';

const names = tableNamesWithPrefix('nlc-prod');

describe('tableDefinitions', () => {
  it('defines the five tables of docs/state.md, on demand, keyed by cluster', () => {
    const defs = tableDefinitions(names);
    expect(Object.fromEntries(Object.entries(defs).map(([k, d]) => [k, d.create.KeySchema]))).toEqual({
      nodes: [
        { AttributeName: 'cluster', KeyType: 'HASH' },
        { AttributeName: 'node', KeyType: 'RANGE' },
      ],
      zones: [
        { AttributeName: 'cluster', KeyType: 'HASH' },
        { AttributeName: 'zone', KeyType: 'RANGE' },
      ],
      evictionQueue: [
        { AttributeName: 'clusterZone', KeyType: 'HASH' },
        { AttributeName: 'node', KeyType: 'RANGE' },
      ],
      podEvictions: [
        { AttributeName: 'cluster', KeyType: 'HASH' },
        { AttributeName: 'pod', KeyType: 'RANGE' },
      ],
      decisions: [
        { AttributeName: 'clusterNode', KeyType: 'HASH' },
        { AttributeName: 'timeSeq', KeyType: 'RANGE' },
      ],
    });
    for (const def of Object.values(defs)) expect(def.create.BillingMode).toBe('PAY_PER_REQUEST');
    expect(defs.decisions.timeToLiveAttribute).toBe('expiresAt');
    expect(defs.zones.timeToLiveAttribute).toBeUndefined();
  });

  it('projects only the node group into the change index, so health writes never write it', () => {
    const [index] = tableDefinitions(names).nodes.create.GlobalSecondaryIndexes ?? [];
    expect(index?.Projection).toEqual({
      ProjectionType: 'INCLUDE',
      NonKeyAttributes: [...NodeGroupAttributes],
    });
    expect(NodeGroupAttributes).not.toContain('healthVersion');
  });
});

describe('cloudFormationResources', () => {
  it('renders valid AWS::DynamoDB::Table resources with PITR, SSE, TTL and Retain', async () => {
    const resources = cloudFormationResources(names, { pointInTimeRecovery: true, sse: true });
    expect(Object.keys(resources)).toEqual([
      'NodesTable',
      'ZonesTable',
      'EvictionQueueTable',
      'PodEvictionsTable',
      'DecisionsTable',
    ]);
    expect(resources.DecisionsTable).toMatchObject({
      Type: 'AWS::DynamoDB::Table',
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        TableName: 'nlc-prod-decisions',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      },
    });
    expect(resources.ZonesTable?.Properties).not.toHaveProperty('TimeToLiveSpecification');
    const report = await validateTemplate({ Resources: resources });
    expect(report).toEqual({ resources: 5, issues: [] });
  });

  it('leaves out what is switched off', () => {
    const resources = cloudFormationResources(names, {
      pointInTimeRecovery: false,
      sse: false,
      retain: false,
    });
    expect(resources.NodesTable).not.toHaveProperty('DeletionPolicy');
    expect(resources.NodesTable?.Properties).not.toHaveProperty('SSESpecification');
    expect(resources.NodesTable?.Properties).not.toHaveProperty('PointInTimeRecoverySpecification');
  });
});
