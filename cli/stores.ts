// Where `nlc status | explain | queue` read from: the state tables through the store ports
// (shared/ports/stores.ts) and the DynamoDB adapter, on AWS or on the local stack's DynamoDB-compatible
// server. The options are shared by those commands: --endpoint, --region, --stage, --tables-prefix,
// --cluster, --data-dir. Table names follow serverless.yml exactly: its `custom.tables` templates are
// read and resolved with the stage, so a rename there is picked up here.
//
// With no --endpoint or --region the commands find their tables as kubectl finds its cluster: the local
// stack running for this directory (its data directory's stack.json says where its DynamoDB is), else
// the configured AWS region; when neither exists, the error says what to pass. The AWS SDK and the
// YAML parser are loaded on use, so `nlc --help` and `nlc config` never pay for them.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { tableNamesWithPrefix, type TableNames } from '../shared/adapters/dynamodb/tables.js';
import { ConfigError, NlcError } from '../shared/errors.js';
import type { StateStores } from '../shared/ports/stores.js';
import { findStack, type StackLookup } from '../local/stack/stackRecord.js';
import { explainStoreError } from './errors.js';
import type { CliIo } from '../shared/present/output.js';
import { loadSettings } from '../shared/settings.js';
import { stageTableNames } from '../shared/stageTables.js';

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
    dataDir: z.string().min(1, 'expected a directory').optional(),
  })
  .refine((o) => o.stage === undefined || o.tablesPrefix === undefined, {
    path: ['tablesPrefix'],
    message: 'give --stage or --tables-prefix, not both',
    // Also when other options are bad: one error lists every problem.
    when: ({ value }) => typeof value === 'object' && value !== null,
  });
export type StoreOptions = z.output<typeof StoreOptionsSchema>;

/** Where `nlc start` keeps its data by default, relative to the working directory. */
export const DEFAULT_DATA_DIR = '.nlc-data';

/** How the commands that read state find their tables (their --help shows it). */
export const STORE_HELP = `
Where the state tables are (the first that applies):
  1. --endpoint URL (or NLC_DYNAMODB_ENDPOINT): a DynamoDB-compatible server, e.g. a local stack's;
  2. --region REGION: DynamoDB on AWS;
  3. the local stack running for this directory (\`npm start\`): its ${DEFAULT_DATA_DIR}/stack.json (or
     --data-dir DIR) says where its DynamoDB is, its tables and its cluster;
  4. DynamoDB on AWS in the configured region (AWS_REGION, AWS_DEFAULT_REGION, AWS_PROFILE or
     ~/.aws/config).
--stage, --tables-prefix and --cluster choose the tables and the cluster there.`;

/**
 * Adds the store options to a command. The defaults come from the environment: NLC_DYNAMODB_ENDPOINT
 * (a DynamoDB-compatible endpoint), AWS_REGION, NLC_CLUSTER; with none of those, a running local stack.
 */
export function addStoreOptions(command: Command): Command {
  return command
    .option(
      '--cluster <name>',
      'cluster name, the first part of every key (default: the local stack\'s, else NLC_CLUSTER, else "default")',
    )
    .option(
      '--endpoint <url>',
      "a DynamoDB-compatible endpoint (default: NLC_DYNAMODB_ENDPOINT, else the running local stack's, else AWS)",
    )
    .option(
      '--region <region>',
      'read DynamoDB on AWS in this region (default: AWS_REGION / the AWS profile)',
    )
    .option('--stage <stage>', 'Serverless stage: tables named as serverless.yml names them (default: dev)')
    .option('--tables-prefix <prefix>', 'tables named <prefix>-nodes, <prefix>-zones, … instead')
    .option('--data-dir <dir>', `the local stack's data directory to look in (default: ${DEFAULT_DATA_DIR})`)
    .addHelpText('after', STORE_HELP);
}

/** The commander options the store options come from. */
export interface RawStoreOptions {
  readonly endpoint?: string;
  readonly region?: string;
  readonly stage?: string;
  readonly tablesPrefix?: string;
  readonly cluster?: string;
  readonly dataDir?: string;
}

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === '' ? undefined : value.trim();

/**
 * Applies NLC_DYNAMODB_ENDPOINT to the flags (the flag wins). The AWS region variables are applied
 * later, by resolveTarget: a region from the environment must not hide a running local stack, as a
 * --region flag does.
 */
export function withEnvDefaults(raw: RawStoreOptions, env: CliIo['env']): RawStoreOptions {
  const endpoint = raw.endpoint ?? nonEmpty(env.NLC_DYNAMODB_ENDPOINT);
  return { ...raw, ...(endpoint !== undefined && { endpoint }) };
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
  /** Which way the tables were found. */
  readonly source: 'endpoint' | 'local-stack' | 'aws';
}

/**
 * Neither a running local stack nor an AWS region: the message says what was looked at and what to
 * pass.
 */
export class NoStoreTargetError extends NlcError {}

/** A path as the operator would type it: relative to the working directory when inside it. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') ? path : rel;
}

/** Whether the SDK could find a region without flags: the environment or the shared config file. */
function awsConfigured(env: CliIo['env']): boolean {
  if (nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? nonEmpty(env.AWS_PROFILE)) return true;
  const configFile = nonEmpty(env.AWS_CONFIG_FILE) ?? join(nonEmpty(env.HOME) ?? homedir(), '.aws', 'config');
  return existsSync(configFile);
}

function noTargetError(lookup: StackLookup): NoStoreTargetError {
  const path = shown(lookup.path);
  const stack =
    lookup.state === 'stale'
      ? `the local stack recorded in ${path} (pid ${lookup.pid}) is no longer running`
      : lookup.state === 'unreadable'
        ? `${path} is not a local stack's record (${lookup.problem})`
        : `no local stack is running here (${path})`;
  return new NoStoreTargetError(
    `${stack} and no AWS region is configured: start one with \`npm start\` (or give its --data-dir), ` +
      'or pass --endpoint URL for a DynamoDB-compatible server, or --region REGION [--stage STAGE] for AWS',
  );
}

/** The table names the options give, if they give any (--tables-prefix, --stage). */
async function tablesFromOptions(options: StoreOptions): Promise<TableNames | undefined> {
  if (options.tablesPrefix !== undefined) return tableNamesWithPrefix(options.tablesPrefix);
  if (options.stage !== undefined) return stageTableNames(options.stage);
  return undefined;
}

/**
 * Resolves the options: where the tables are (--endpoint > --region > the running local stack > the
 * configured AWS region; see STORE_HELP), their names (--tables-prefix > --stage > the local stack's >
 * the functions' NLC_*_TABLE variables > serverless.yml's default stage) and the cluster (flag > the
 * local stack's > NLC_CLUSTER > "default", validated as a setting). Throws NoStoreTargetError when
 * nothing says where the tables are.
 *
 * @example
 * const target = await resolveTarget(parseOptions(StoreOptionsSchema, withEnvDefaults(opts, env)), env);
 */
export async function resolveTarget(options: StoreOptions, env: CliIo['env']): Promise<StoreTarget> {
  const explicit = options.endpoint !== undefined || options.region !== undefined;
  const lookup = explicit ? undefined : await findStack(resolve(options.dataDir ?? DEFAULT_DATA_DIR));
  if (lookup?.state === 'running') {
    const { record } = lookup;
    const { config } = loadSettings(env, { cluster: options.cluster ?? record.cluster });
    return {
      cluster: config.cluster,
      tables: (await tablesFromOptions(options)) ?? record.tables,
      endpoint: record.endpoints.dynamodb,
      region: record.region,
      where: `${record.endpoints.dynamodb} (the local stack of ${shown(lookup.path)})`,
      source: 'local-stack',
    };
  }
  // An explicit --data-dir asks for that stack: no falling back to AWS.
  if (lookup !== undefined && (options.dataDir !== undefined || !awsConfigured(env))) {
    throw noTargetError(lookup);
  }
  const region = options.region ?? nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION);
  if (region !== undefined && options.region === undefined && !AWS_REGION.test(region)) {
    const name = nonEmpty(env.AWS_REGION) === undefined ? 'AWS_DEFAULT_REGION' : 'AWS_REGION';
    throw new ConfigError([{ path: name, message: 'expected an AWS region like eu-west-1' }]);
  }
  const { config } = loadSettings(env, { cluster: options.cluster });
  const tables =
    (await tablesFromOptions(options)) ?? tableNamesFromEnv(env) ?? (await stageTableNames(undefined));
  return {
    cluster: config.cluster,
    tables,
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    ...(region !== undefined && { region }),
    where: options.endpoint ?? `DynamoDB in ${region ?? 'the default AWS region'}`,
    source: options.endpoint !== undefined ? 'endpoint' : 'aws',
  };
}

/** Whether the SDK failed for want of a region (its message, on the error or one of its causes). */
function regionMissing(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current.message.includes('Region is missing')) return true;
    current = current.cause;
  }
  return false;
}

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
  // A local DynamoDB-compatible server checks no signature: for the local stack, and for an endpoint
  // without AWS credentials in the environment, sign with placeholders rather than fail on the
  // credential chain.
  const localCredentials =
    target.source === 'local-stack' ||
    (target.endpoint !== undefined && !env.AWS_ACCESS_KEY_ID && !env.AWS_PROFILE)
      ? { accessKeyId: 'local', secretAccessKey: 'local' }
      : undefined;
  const { openStores } = await import('./storeClient.js');
  const stores = openStores({
    tables: target.tables,
    ...(target.endpoint !== undefined && { endpoint: target.endpoint }),
    ...(target.region !== undefined
      ? { region: target.region }
      : target.endpoint !== undefined && { region: 'us-east-1' }),
    ...(localCredentials !== undefined && { credentials: localCredentials }),
  });
  try {
    return await read(stores);
  } catch (error) {
    if (target.source === 'aws' && target.region === undefined && regionMissing(error)) {
      throw new NoStoreTargetError(
        'no AWS region is configured (AWS_REGION, AWS_PROFILE, ~/.aws/config): pass --region REGION ' +
          '[--stage STAGE] for AWS, --endpoint URL for a DynamoDB-compatible server, or start a local ' +
          'stack here with `npm start`',
        { cause: error },
      );
    }
    throw explainStoreError(error, target.where);
  } finally {
    stores.client.destroy();
  }
}
