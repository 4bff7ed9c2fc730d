// Values serverless.yml cannot compute in YAML, resolved at package time through osls's JS variable
// source: `${file(./infra/serverless/bridge.cjs):<export>}` calls the export with `resolveVariable`.
// CommonJS because osls loads variable files with require(); tsx's CJS API loads the TypeScript.
'use strict';

const path = require('node:path');
const tsx = require('tsx/cjs/api');

const root = path.join(__dirname, '..', '..');

/** The `clusters` parameter (comma-separated, as a CLI --param must be) as an event-pattern list. */
exports.clusters = async ({ resolveVariable }) => {
  const raw = String(await resolveVariable('param:clusters'));
  const clusters = raw
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (clusters.length === 0) throw new Error('the clusters parameter names no cluster');
  return clusters;
};

/** Allow the X-Ray statement of each function role while tracing is on, Deny it otherwise. */
exports.xrayEffect = async ({ resolveVariable }) =>
  (await resolveVariable('self:custom.tracing')) === true ? 'Allow' : 'Deny';

/**
 * The DynamoDB tables, straight from the adapter's own definitions (shared/adapters/dynamodb/tables.ts),
 * so the deployed key schema, TTL attribute and indexes can never drift from what the code reads.
 * PITR and SSE are always on; Retain (the default) keeps the tables when the stack is removed.
 */
exports.tableResources = async ({ resolveVariable }) => {
  const names = await resolveVariable('self:custom.tables');
  const deletionPolicy = String(await resolveVariable('param:tableDeletionPolicy'));
  if (deletionPolicy !== 'Retain' && deletionPolicy !== 'Delete') {
    throw new Error(`tableDeletionPolicy must be Retain or Delete, got ${JSON.stringify(deletionPolicy)}`);
  }
  const tables = tsx.require(path.join(root, 'shared/adapters/dynamodb/tables.ts'), __filename);
  const Resources = tables.cloudFormationResources(names, {
    pointInTimeRecovery: true,
    sse: true,
    retain: deletionPolicy === 'Retain',
  });
  const Outputs = {};
  for (const logicalId of Object.keys(Resources)) {
    Outputs[`${logicalId}Name`] = {
      Description: 'For the CLI (nlc status, nlc explain)',
      Value: { Ref: logicalId },
    };
  }
  return { Resources, Outputs };
};
