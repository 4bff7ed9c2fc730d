// Where `nlc status | explain | queue` read from: the state tables through the store ports
// (shared/ports/stores.ts) and the DynamoDB adapter, on AWS or on the local stack's DynamoDB-compatible
// server. The options are shared by those commands: --endpoint, --region, --stage, --tables-prefix,
// --cluster. Table names follow serverless.yml exactly: its `custom.tables` templates are read and
// resolved with the stage, so a rename there is picked up here.
import { readFile } from 'node:fs/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Command } from 'commander';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import {
  createDynamoDbStores,
  tableNamesWithPrefix,
  type TableNames,
} from '../shared/adapters/dynamodb/index.js';
import type { StateStores } from '../shared/ports/stores.js';
import { explainStoreError } from './errors.js';
import type { CliIo } from './output.js';
import { loadSettings } from './settings.js';

const SERVERLESS_YML = new URL('../serverless.yml', import.meta.url);

// Serverless stage names: letters, digits and hyphens.
const STAGE = /^[A-Za-z0-9-]{1,64}$/;
// DynamoDB table names: 3-255 of [a-zA-Z0-9_.-]; the prefix gets "-eviction-queue" (15) appended.
const TABLE_PREFIX = /^[A-Za-z0-9_.-]{1,240}$/;
const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/** The raw store options of a command, after the env defaults were applied. */
export const StoreOptionsSchema = z
  .object({
    endpoint: z
      .url({ protocol: /^https?$/, error: 'expected an http(s) URL like http://127.0.0.1:8000' })
      .optional(),
    region: z.string().regex(AWS_REGION, 'expected an AWS region like eu-west-1').optional(),
    stage: z.string().regex(STAGE, 'expected a Serverless stage name (letters, digits, hyphens)').optional(),
    tablesPrefix: z
      .string()
      .regex(TABLE_PREFIX, 'expected a table name prefix (letters, digits, ".", "_", "-")')
      .optional(),
    cluster: z.string().optional(),
  })
  .refine((o) => o.stage === undefined || o.tablesPrefix === undefined, {
    path: ['tablesPrefix'],
    message: 'give --stage or --tables-prefix, not both',
    // Also when other options are bad: one error lists every problem.
    when: ({ value }) => typeof value === 'object' && value !== null,
  });
export type StoreOptions = z.output<typeof StoreOptionsSchema>;

/**
 * Adds the store options to a command. The defaults come from the environment: NLC_DYNAMODB_ENDPOINT
 * (the local stack), AWS_REGION, NLC_CLUSTER.
 */
export function addStoreOptions(command: Command): Command {
  return command
    .option(
      '--cluster <name>',
      'cluster name, the first part of every key (default: NLC_CLUSTER, else "default")',
    )
    .option(
      '--endpoint <url>',
      "a DynamoDB-compatible endpoint, e.g. the local stack's (default: NLC_DYNAMODB_ENDPOINT; none = AWS)",
    )
    .option('--region <region>', 'AWS region of the tables (default: AWS_REGION / the AWS profile)')
    .option('--stage <stage>', 'Serverless stage: tables named as serverless.yml names them (default: dev)')
    .option('--tables-prefix <prefix>', 'tables named <prefix>-nodes, <prefix>-zones, … instead');
}

/** The commander options the store options come from. */
export interface RawStoreOptions {
  readonly endpoint?: string;
  readonly region?: string;
  readonly stage?: string;
  readonly tablesPrefix?: string;
  readonly cluster?: string;
}

/** Applies the environment defaults to the flags (flags win). */
export function withEnvDefaults(raw: RawStoreOptions, env: CliIo['env']): RawStoreOptions {
  const nonEmpty = (value: string | undefined): string | undefined =>
    value === undefined || value.trim() === '' ? undefined : value.trim();
  const endpoint = raw.endpoint ?? nonEmpty(env.NLC_DYNAMODB_ENDPOINT);
  const region = raw.region ?? nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION);
  return {
    ...raw,
    ...(endpoint !== undefined && { endpoint }),
    ...(region !== undefined && { region }),
  };
}

const TablesTemplateSchema = z.object({
  service: z.string().min(1),
  stageDefault: z.string().min(1),
  tables: z.object({
    nodes: z.string(),
    zones: z.string(),
    evictionQueue: z.string(),
    podEvictions: z.string(),
    decisions: z.string(),
  }),
});

/**
 * The table names serverless.yml gives a stage: its `custom.tables` with `${self:service}` and
 * `${sls:stage}` resolved (e.g. stage prod → nlc-prod-nodes, …).
 *
 * @example await stageTableNames('prod') // { nodes: 'nlc-prod-nodes', zones: 'nlc-prod-zones', … }
 */
export async function stageTableNames(stage: string | undefined): Promise<TableNames> {
  const doc = parseDocument(await readFile(SERVERLESS_YML, 'utf8'), { logLevel: 'silent' });
  const provider: unknown = doc.getIn(['provider', 'stage']);
  const template = TablesTemplateSchema.parse({
    service: doc.get('service'),
    // `${opt:stage, 'dev'}`: the stage osls uses when none is given.
    stageDefault:
      /\$\{opt:stage,\s*'([^']+)'\}/.exec(typeof provider === 'string' ? provider : '')?.[1] ?? 'dev',
    tables: (doc.getIn(['custom', 'tables']) as { toJSON?: () => unknown } | undefined)?.toJSON?.(),
  });
  const resolve = (name: string): string =>
    name
      .replaceAll('${self:service}', template.service)
      .replaceAll('${sls:stage}', stage ?? template.stageDefault);
  const { nodes, zones, evictionQueue, podEvictions, decisions } = template.tables;
  return {
    nodes: resolve(nodes),
    zones: resolve(zones),
    evictionQueue: resolve(evictionQueue),
    podEvictions: resolve(podEvictions),
    decisions: resolve(decisions),
  };
}

/** The five table variables the functions get (serverless.yml provider.environment), when all are set. */
function tableNamesFromEnv(env: CliIo['env']): TableNames | undefined {
  const {
    NLC_NODES_TABLE,
    NLC_ZONES_TABLE,
    NLC_EVICTION_QUEUE_TABLE,
    NLC_POD_EVICTIONS_TABLE,
    NLC_DECISIONS_TABLE,
  } = env;
  if (!NLC_NODES_TABLE || !NLC_ZONES_TABLE || !NLC_EVICTION_QUEUE_TABLE || !NLC_POD_EVICTIONS_TABLE)
    return undefined;
  if (!NLC_DECISIONS_TABLE) return undefined;
  return {
    nodes: NLC_NODES_TABLE,
    zones: NLC_ZONES_TABLE,
    evictionQueue: NLC_EVICTION_QUEUE_TABLE,
    podEvictions: NLC_POD_EVICTIONS_TABLE,
    decisions: NLC_DECISIONS_TABLE,
  };
}

/** What a command reads: which tables, on which endpoint or region, for which cluster. */
export interface StoreTarget {
  readonly cluster: string;
  readonly tables: TableNames;
  readonly endpoint?: string;
  readonly region?: string;
  /** For messages: the endpoint, or the region. */
  readonly where: string;
}

/**
 * Resolves the options: the cluster (flag > NLC_CLUSTER > "default", validated as a setting), the table
 * names (--tables-prefix > --stage > the functions' NLC_*_TABLE variables > serverless.yml's default
 * stage) and the endpoint.
 */
export async function resolveTarget(options: StoreOptions, env: CliIo['env']): Promise<StoreTarget> {
  const { config } = loadSettings(env, { cluster: options.cluster });
  const tables =
    options.tablesPrefix !== undefined
      ? tableNamesWithPrefix(options.tablesPrefix)
      : options.stage === undefined
        ? (tableNamesFromEnv(env) ?? (await stageTableNames(undefined)))
        : await stageTableNames(options.stage);
  return {
    cluster: config.cluster,
    tables,
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    ...(options.region !== undefined && { region: options.region }),
    where: options.endpoint ?? `DynamoDB in ${options.region ?? 'the default AWS region'}`,
  };
}

// A CLI waits for an answer, not for five retries against a server that is down.
const MAX_ATTEMPTS = 2;
const CONNECTION_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 20_000;

/**
 * Runs `read` over the stores of `target`, then releases the client. Store errors that mean "cannot
 * reach the tables" become a StoreUnreachableError saying where the CLI looked.
 *
 * @example
 * const loaded = await withStores(target, io.env, (stores) => stores.controllerState.load(target.cluster));
 */
export async function withStores<T>(
  target: StoreTarget,
  env: CliIo['env'],
  read: (stores: StateStores) => Promise<T>,
): Promise<T> {
  // A local DynamoDB-compatible server checks no signature: without AWS credentials in the
  // environment, sign with placeholders rather than fail on the credential chain.
  const localCredentials =
    target.endpoint !== undefined && !env.AWS_ACCESS_KEY_ID && !env.AWS_PROFILE
      ? { accessKeyId: 'local', secretAccessKey: 'local' }
      : undefined;
  const client = new DynamoDBClient({
    ...(target.endpoint !== undefined && { endpoint: target.endpoint }),
    ...(target.region !== undefined
      ? { region: target.region }
      : target.endpoint !== undefined && { region: 'us-east-1' }),
    ...(localCredentials !== undefined && { credentials: localCredentials }),
    retryMode: 'standard',
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
  });
  try {
    return await read(createDynamoDbStores({ tables: target.tables, client }));
  } catch (error) {
    throw explainStoreError(error, target.where);
  } finally {
    client.destroy();
  }
}
