// Values serverless.yml cannot compute in YAML, resolved at package time through osls's JS variable
// source: `${file(./infra/serverless/bridge.cjs):<export>}` calls the export with `resolveVariable`.
// CommonJS because osls loads variable files with require(); tsx's CJS API loads the TypeScript.
'use strict';

const path = require('node:path');
const tsx = require('tsx/cjs/api');

const root = path.join(__dirname, '..', '..');

/** The `clusters` parameter (comma-separated, as a CLI --param must be) as an event-pattern list. */
exports.clusters = async ({ resolveVariable }) => {
  const clusters = clusterNames(await resolveVariable('param:clusters'));
  if (clusters.length === 0) throw new Error('the clusters parameter names no cluster');
  return clusters;
};

/**
 * Lambda allows 4 KB for all of a function's variables together; the others take about 1.4 KB (the
 * package test prints the total). A larger document is refused at package time, naming the size.
 */
const MaxClustersDocumentBytes = 2500;

/** The names of the `clusters` parameter, trimmed, in order. */
function clusterNames(raw) {
  return String(raw)
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/** The `clusterConfig` parameter: empty, a JSON string, or (in a params block) an object. */
function clusterConfigOf(raw) {
  if (raw === undefined || raw === null || raw === '') return {};
  if (typeof raw === 'object' && !Array.isArray(raw)) return raw;
  try {
    const parsed = JSON.parse(String(raw));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed;
  } catch {
    // reported below
  }
  throw new Error(
    'param clusterConfig: expected a JSON object of clusters by name, such as {"prod":{"credentials":"eks"}}',
  );
}

/**
 * The clusters document (NLC_CLUSTERS, shared/adapters/clusters.ts) from the stage parameters, checked
 * with the functions' own schema. Empty for a single-cluster stage without per-cluster configuration,
 * which then serves `cluster` alone, as before.
 *
 * @param params the resolved parameters: clusters, cluster, clusterConfig, region, and the stage-wide
 *   credential parameters
 */
function clustersDocumentFor(params) {
  const names = clusterNames(params.clusters);
  if (names.length === 0) throw new Error('the clusters parameter names no cluster');
  const config = clusterConfigOf(params.clusterConfig);
  const unknown = Object.keys(config).filter((name) => !names.includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `param clusterConfig: ${unknown.join(', ')} not in the clusters parameter (${names.join(',')}): ` +
        'add it there too, so the rules accept its events',
    );
  }
  if (Object.keys(config).length === 0 && names.length === 1 && names[0] === String(params.cluster)) {
    return '';
  }
  const document = Object.fromEntries(names.map((name) => [name, config[name] ?? {}]));
  const json = JSON.stringify(document);
  const bytes = require('node:buffer').Buffer.byteLength(json, 'utf8');
  if (bytes > MaxClustersDocumentBytes) {
    throw new Error(
      `the clusters document (NLC_CLUSTERS) would be ${bytes} bytes, over ${MaxClustersDocumentBytes}: ` +
        'Lambda allows 4 KB for all of a function\'s variables. Shorten it ("credentials":"eks" for EKS ' +
        'clusters named like their nlc cluster; settings shared by all clusters as stage parameters), ' +
        'or split the clusters over two stages',
    );
  }
  // The functions' own check, at package time: the same errors a cold start would log.
  const { loadServedClusters } = tsx.require(path.join(root, 'shared/adapters/clusters.ts'), __filename);
  const { ownedEnvVars } = tsx.require(path.join(root, 'shared/adapters/runtime.ts'), __filename);
  const { UPSTREAM_DEFAULTS } = tsx.require(path.join(root, 'shared/config.ts'), __filename);
  const stageCredentials = {
    NLC_EKS_CLUSTER_NAME: String(params.eksClusterName ?? ''),
    NLC_KUBECONFIG_SECRET_ID: String(params.kubeconfigSecretArn ?? ''),
    NLC_KUBECONFIG_PARAMETER: String(params.kubeconfigParameterArn ?? ''),
    NLC_KUBECONFIG_CONTEXT: String(params.kubeconfigContext ?? ''),
  };
  // No stage-wide source at package time: the local stack gives its kubeconfig as NLC_KUBECONFIG when it
  // starts; a stage without one fails its cold start naming the variables.
  const anyStage = Object.entries(stageCredentials).some(
    ([k, v]) => k !== 'NLC_KUBECONFIG_CONTEXT' && v !== '',
  );
  const env = {
    AWS_REGION: String(params.region),
    NLC_CLUSTERS: json,
    ...stageCredentials,
    ...(!anyStage && { NLC_KUBECONFIG: '(stage-wide credentials, given at run time)' }),
  };
  try {
    loadServedClusters(env, { ...UPSTREAM_DEFAULTS, cluster: String(params.cluster) }, ownedEnvVars);
  } catch (error) {
    throw new Error(`param clusterConfig: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return json;
}
exports.clustersDocumentFor = clustersDocumentFor;

/** The stage parameters the clusters document is made of. */
async function clusterParams(resolveVariable) {
  const get = (name) => resolveVariable(`param:${name}`);
  return {
    clusters: await get('clusters'),
    cluster: await get('cluster'),
    clusterConfig: await get('clusterConfig'),
    region: await resolveVariable('self:provider.region'),
    eksClusterName: await get('eksClusterName'),
    kubeconfigSecretArn: await get('kubeconfigSecretArn'),
    kubeconfigParameterArn: await get('kubeconfigParameterArn'),
    kubeconfigContext: await get('kubeconfigContext'),
  };
}

/** NLC_CLUSTERS: `${file(./infra/serverless/bridge.cjs):clustersDocument}`. */
exports.clustersDocument = async ({ resolveVariable }) =>
  clustersDocumentFor(await clusterParams(resolveVariable));

const sub = (text) => ({ 'Fn::Sub': text });

/**
 * The IAM statements each cluster's own credentials need (the stage-wide source's are the Conditions'
 * policies in serverless.yml): DescribeCluster on each EKS cluster, GetSecretValue on each secret,
 * GetParameter on each parameter, and nothing for a kubeconfig file (the local stack only).
 */
function clusterCredentialStatements(json) {
  if (json === '') return [];
  const eks = [];
  const secrets = [];
  const parameters = [];
  for (const [name, entry] of Object.entries(JSON.parse(json))) {
    const c = entry.credentials;
    if (c === undefined) continue;
    if (c === 'eks' || c.kind === 'eks') {
      const cluster = c === 'eks' ? name : c.clusterName;
      const where = c === 'eks' || c.region === undefined ? '${AWS::Region}' : c.region;
      eks.push(sub(`arn:\${AWS::Partition}:eks:${where}:\${AWS::AccountId}:cluster/${cluster}`));
    } else if (c.kind === 'kubeconfigSecret') {
      secrets.push(
        c.secretId.startsWith('arn:')
          ? c.secretId
          : sub(
              `arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:${c.secretId}-??????`,
            ),
      );
    } else if (c.kind === 'kubeconfigParameter') {
      parameters.push(
        c.name.startsWith('arn:')
          ? c.name
          : sub(
              `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter/${c.name.replace(/^\//, '')}`,
            ),
      );
    }
  }
  return [
    ...(eks.length > 0 ? [{ Effect: 'Allow', Action: 'eks:DescribeCluster', Resource: eks }] : []),
    ...(secrets.length > 0
      ? [{ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: secrets }]
      : []),
    ...(parameters.length > 0 ? [{ Effect: 'Allow', Action: 'ssm:GetParameter', Resource: parameters }] : []),
  ];
}
exports.clusterCredentialStatements = clusterCredentialStatements;

/** The per-cluster credentials policy on the five function roles, when any cluster has its own. */
exports.clusterAuthResources = async ({ resolveVariable }) => {
  const params = await clusterParams(resolveVariable);
  const statements = clusterCredentialStatements(clustersDocumentFor(params));
  if (statements.length === 0) return {};
  const busName = await resolveVariable('self:custom.busName');
  return {
    Resources: {
      ClusterAuthPerClusterPolicy: {
        Type: 'AWS::IAM::Policy',
        Properties: {
          PolicyName: `${busName}-cluster-credentials`,
          Roles: ['NodeTaints', 'MonitorNodeHealth', 'EvictionDrainer', 'TaintEviction', 'PodProcessing'].map(
            (fn) => ({ Ref: `${fn}IamRoleLambdaExecution` }),
          ),
          PolicyDocument: { Version: '2012-10-17', Statement: statements },
        },
      },
    },
  };
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
