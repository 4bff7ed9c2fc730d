// Packages the service with the project's own osls (no login, no network, no AWS credentials) into a
// temporary directory and checks the generated CloudFormation: what issue #4 §4 asks of the
// deployment, the offline spec validation (scripts/validate-template.ts), and the bundle sizes.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkTemplatePolicies } from '../../../scripts/templatePolicies.js';
import { loadServedClusters } from '../../../shared/adapters/clusters.js';
import { ownedEnvVars } from '../../../shared/adapters/runtime.js';
import { validateTemplate } from '../../../scripts/validate-template.js';
import {
  tableDefinitions,
  tableNamesWithPrefix,
  TtlAttribute,
} from '../../../shared/adapters/dynamodb/tables.js';
import {
  CONFIG_KEYS,
  formatConfigValue,
  loadConfig,
  UPSTREAM_DEFAULTS,
  VERSIONED_KEYS,
  type ConfigKey,
} from '../../../shared/config.js';
import {
  HeartbeatDigestDetailType,
  NodeChangedDetailType,
  PodChangedDetailType,
  RelaySource,
} from '../../../shared/events.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const STAGE = 'test';
const PREFIX = `nlc-${STAGE}`;
const CLUSTERS = ['default', 'staging'];
const EKS_CLUSTER = 'prod-eks';
/** staging's own credentials, mode and setting; default keeps the stage-wide ones (EKS_CLUSTER). */
const CLUSTER_CONFIG = {
  staging: { credentials: 'eks', mode: 'active', settings: { nodeEvictionRate: '0.05' } },
};

interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Condition?: string;
  readonly DeletionPolicy?: string;
}
interface Template {
  readonly Resources: Record<string, Resource>;
  readonly Outputs: Record<string, { readonly Value: unknown }>;
}
interface Statement {
  readonly Sid?: string;
  readonly Effect: string;
  readonly Principal?: unknown;
  readonly Condition?: unknown;
  readonly Action?: string | readonly string[];
  readonly NotAction?: unknown;
  readonly Resource?: unknown;
}

/** The functions, their rules (by detail-type, or a schedule), as the issue lists them. */
const FUNCTIONS = {
  nodeTaints: { events: [NodeChangedDetailType] },
  monitorNodeHealth: { events: [HeartbeatDigestDetailType, 'rate(1 minute)'] },
  evictionDrainer: { events: ['rate(1 minute)'] },
  taintEviction: { events: [NodeChangedDetailType, PodChangedDetailType] },
  podProcessing: { events: [PodChangedDetailType] },
} as const;
type FunctionName = keyof typeof FUNCTIONS;
const FUNCTION_NAMES = Object.keys(FUNCTIONS) as FunctionName[];
const logicalId = (fn: string): string => `${fn[0]?.toUpperCase() ?? ''}${fn.slice(1)}`;

let outDir: string;
let packTmp: string;
let template: Template;

const ofType = (type: string): [string, Resource][] =>
  Object.entries(template.Resources).filter(([, r]) => r.Type === type);
const props = (id: string): Record<string, unknown> => {
  const resource = template.Resources[id];
  if (resource === undefined) throw new Error(`no resource ${id}`);
  return resource.Properties ?? {};
};
const getAtt = (id: string, attribute: string) => ({ 'Fn::GetAtt': [id, attribute] });
const asList = <T>(value: T | readonly T[] | undefined): readonly T[] =>
  value === undefined ? [] : Array.isArray(value) ? (value as readonly T[]) : [value as T];

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'nlc-package-'));
  // serverless-esbuild zips each function in a folder of the system temp directory and leaves it
  // behind when the folder is not empty: give the packager a temp directory that afterAll removes.
  packTmp = await mkdtemp(join(tmpdir(), 'nlc-package-tmp-'));
  const osls = join(root, 'node_modules', '.bin', 'osls');
  await promisify(execFile)(
    osls,
    [
      'package',
      '--stage',
      STAGE,
      '--package',
      outDir,
      `--param=clusters=${CLUSTERS.join(',')}`,
      `--param=eksClusterName=${EKS_CLUSTER}`,
      `--param=clusterConfig=${JSON.stringify(CLUSTER_CONFIG)}`,
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        SLS_TELEMETRY_DISABLED: '1',
        TMPDIR: packTmp,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  template = JSON.parse(
    await readFile(join(outDir, 'cloudformation-template-update-stack.json'), 'utf8'),
  ) as Template;
}, 150_000);

afterAll(async () => {
  await rm(outDir, { recursive: true, force: true });
  await rm(packTmp, { recursive: true, force: true });
});

describe('serverless package (stage test)', () => {
  it('passes the offline CloudFormation spec validation', async () => {
    const { issues } = await validateTemplate(template);
    expect(issues).toEqual([]);
  });

  it.each(FUNCTION_NAMES)('%s: nodejs22.x on arm64, ESM handler, every setting passed as NLC_*', (fn) => {
    const p = props(`${logicalId(fn)}LambdaFunction`);
    expect(p).toMatchObject({
      FunctionName: `${PREFIX}-${fn}`,
      Handler: `functions/${fn}.handler`,
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Role: getAtt(`${logicalId(fn)}IamRoleLambdaExecution`, 'Arn'),
    });
    expect(p.TracingConfig).toBeUndefined(); // tracing is off by default
    const env = (p.Environment as { Variables: Record<string, string> }).Variables;
    const versioned: readonly ConfigKey[] = VERSIONED_KEYS;
    for (const key of Object.keys(CONFIG_KEYS) as ConfigKey[]) {
      if (key === 'dryRun') continue;
      // Versioned settings are left empty: the emulated minor's default applies.
      const want = versioned.includes(key) ? '' : formatConfigValue(key, UPSTREAM_DEFAULTS[key]);
      expect(env[CONFIG_KEYS[key].envVar], key).toBe(want);
    }
    // What the function reads from them at a cold start: upstream's defaults, in shadow.
    const settingsEnv = Object.fromEntries(
      Object.values(CONFIG_KEYS).map(({ envVar }) => [envVar, env[envVar]]),
    );
    expect(loadConfig(settingsEnv)).toEqual({ ...UPSTREAM_DEFAULTS, dryRun: true });
    expect(env.NLC_EKS_CLUSTER_NAME).toBe(EKS_CLUSTER);
    // Against EKS without mode=active: shadow, since EKS keeps its own NodeLifecycleController.
    expect(env.NLC_DRY_RUN).toBe('true');
    const names = tableNamesWithPrefix(PREFIX);
    expect(env).toMatchObject({
      NLC_NODES_TABLE: names.nodes,
      NLC_ZONES_TABLE: names.zones,
      NLC_EVICTION_QUEUE_TABLE: names.evictionQueue,
      NLC_POD_EVICTIONS_TABLE: names.podEvictions,
      NLC_DECISIONS_TABLE: names.decisions,
    });
    expect(props(`${logicalId(fn)}LogGroup`)).toMatchObject({
      LogGroupName: `/aws/lambda/${PREFIX}-${fn}`,
      RetentionInDays: 30,
    });
  });

  it("logs JSON at the functions' level, and Lambda's own lines only from WARN (no START/END/REPORT)", () => {
    const functions = Object.entries(template.Resources).filter(
      ([, r]) => r.Type === 'AWS::Lambda::Function',
    );
    expect(functions.length).toBeGreaterThan(0);
    for (const [id] of functions) {
      expect(props(id).LoggingConfig, id).toEqual({
        LogFormat: 'JSON',
        ApplicationLogLevel: 'INFO',
        SystemLogLevel: 'WARN',
      });
    }
  });

  it('does not serialize the monitor by concurrency: passes of different clusters run in parallel', () => {
    // One pass per cluster at a time is the pass lease's job (shared/app/passLease.ts).
    expect(props('MonitorNodeHealthLambdaFunction').ReservedConcurrentExecutions).toBeUndefined();
  });

  it('has exactly the rules the functions need, on the bus or on a schedule, matching source, detail-type and cluster', () => {
    const found: string[] = [];
    for (const [id, rule] of ofType('AWS::Events::Rule')) {
      const p = rule.Properties ?? {};
      const targets = p.Targets as { Arn: unknown }[];
      expect(targets, id).toHaveLength(1);
      const target = (targets[0]?.Arn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const fn = FUNCTION_NAMES.find((name) => `${logicalId(name)}LambdaFunction` === target);
      expect(fn, `${id} targets ${target}`).toBeDefined();
      if (p.ScheduleExpression !== undefined) {
        expect(p.EventBusName, id).toBeUndefined(); // schedules live on the default bus
        found.push(`${fn ?? ''}:${p.ScheduleExpression as string}`);
        continue;
      }
      expect(p.EventBusName, id).toEqual(getAtt('EventBus', 'Name'));
      const pattern = p.EventPattern as Record<string, unknown>;
      expect(pattern.source, id).toEqual([RelaySource]);
      expect(pattern.detail, id).toEqual({ cluster: CLUSTERS });
      const detailTypes = pattern['detail-type'] as string[];
      expect(detailTypes, id).toHaveLength(1);
      found.push(`${fn ?? ''}:${detailTypes[0] ?? ''}`);
    }
    const expected = FUNCTION_NAMES.flatMap((fn) => FUNCTIONS[fn].events.map((event) => `${fn}:${event}`));
    expect(found.sort()).toEqual(expected.sort());
  });

  it('gives every rule target a retry policy and an SQS dead-letter queue', () => {
    const rules = ofType('AWS::Events::Rule');
    expect(rules.length).toBeGreaterThan(0);
    for (const [id, rule] of rules) {
      for (const target of (rule.Properties?.Targets ?? []) as Record<string, unknown>[]) {
        expect(target.RetryPolicy, id).toEqual({
          MaximumRetryAttempts: expect.any(Number) as number,
          MaximumEventAgeInSeconds: expect.any(Number) as number,
        });
        const dlq = (target.DeadLetterConfig as { Arn: { 'Fn::GetAtt': [string, string] } }).Arn[
          'Fn::GetAtt'
        ];
        expect(template.Resources[dlq[0]]?.Type, id).toBe('AWS::SQS::Queue');
      }
    }
    // EventBridge may send to that queue, only from this stage's rules, and only over TLS.
    const policy = props('EventsDeadLetterQueuePolicy').PolicyDocument as { Statement: Statement[] };
    expect(policy.Statement).toEqual([
      denyWithoutTls('EventsDeadLetterQueue'),
      {
        Sid: 'EventBridgeRulesOfThisStage',
        Effect: 'Allow',
        Principal: { Service: 'events.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Resource: getAtt('EventsDeadLetterQueue', 'Arn'),
        Condition: {
          ArnLike: {
            'aws:SourceArn': [
              {
                'Fn::Sub': `arn:\${AWS::Partition}:events:\${AWS::Region}:\${AWS::AccountId}:rule/${PREFIX}/${PREFIX}-*`,
              },
              {
                'Fn::Sub': `arn:\${AWS::Partition}:events:\${AWS::Region}:\${AWS::AccountId}:rule/${PREFIX}-*`,
              },
            ],
          },
        },
      },
    ]);
  });

  it('refuses every request to every queue that is not over TLS, and lets no one else in', () => {
    const queues = ofType('AWS::SQS::Queue').map(([id]) => id);
    expect(queues.sort()).toEqual(['EventsDeadLetterQueue', 'FunctionsDeadLetterQueue']);
    for (const queue of queues) {
      const policies = ofType('AWS::SQS::QueuePolicy').filter(([, p]) =>
        asList(p.Properties?.Queues as unknown[]).some(
          (q) => JSON.stringify(q) === JSON.stringify({ Ref: queue }),
        ),
      );
      expect(policies, queue).toHaveLength(1);
      const statements = (policies[0]?.[1].Properties?.PolicyDocument as { Statement: Statement[] })
        .Statement;
      expect(statements[0], queue).toEqual(denyWithoutTls(queue));
    }
    // The functions' DLQ needs no grant: Lambda destinations send with the function's own role.
    const functions = props('FunctionsDeadLetterQueuePolicy').PolicyDocument as { Statement: Statement[] };
    expect(functions.Statement).toEqual([denyWithoutTls('FunctionsDeadLetterQueue')]);
  });

  it('lets each function be invoked only by its own rules, from this account, and the drainer by the monitor role', () => {
    // The rules' ARNs as CloudFormation would resolve them in a sample account.
    const account = { partition: 'aws', region: 'us-east-1', id: '111122223333' };
    const resolve = (value: unknown): string => {
      if (typeof value === 'string') return value;
      const v = value as Record<string, unknown>;
      if ('Fn::Join' in v) {
        const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
        return parts.map(resolve).join(separator);
      }
      if ('Ref' in v) {
        const refs: Record<string, string> = {
          'AWS::Partition': account.partition,
          'AWS::Region': account.region,
          'AWS::AccountId': account.id,
        };
        return refs[v.Ref as string] ?? `<${String(v.Ref)}>`;
      }
      if (JSON.stringify(v) === JSON.stringify(getAtt('EventBus', 'Name'))) return PREFIX;
      return `<${JSON.stringify(v)}>`;
    };
    const ruleArns = new Map(
      ofType('AWS::Events::Rule').map(([, rule]) => {
        const p = rule.Properties ?? {};
        const bus = p.EventBusName === undefined ? '' : `${resolve(p.EventBusName)}/`;
        const target = ((p.Targets as { Arn: unknown }[])[0]?.Arn as { 'Fn::GetAtt': [string, string] })[
          'Fn::GetAtt'
        ][0];
        const arn = `arn:${account.partition}:events:${account.region}:${account.id}:rule/${bus}${String(p.Name)}`;
        return [arn, target];
      }),
    );

    const permissions = ofType('AWS::Lambda::Permission');
    const fromRules: string[] = [];
    const direct: [string, Record<string, unknown>][] = [];
    for (const [id, permission] of permissions) {
      const p = permission.Properties ?? {};
      expect(p.Action, id).toBe('lambda:InvokeFunction');
      if (p.Principal !== 'events.amazonaws.com') {
        direct.push([id, p]);
        continue;
      }
      expect(p.SourceAccount, id).toEqual({ Ref: 'AWS::AccountId' });
      const source = resolve(p.SourceArn);
      const target = (p.FunctionName as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      expect(ruleArns.get(source), `${id}: ${source}`).toBe(target);
      fromRules.push(source);
    }
    // One permission per rule, and no other service.
    expect(fromRules.sort()).toEqual([...ruleArns.keys()].sort());
    expect(direct).toEqual([
      [
        'EvictionDrainerInvokedByMonitor',
        {
          Action: 'lambda:InvokeFunction',
          FunctionName: getAtt('EvictionDrainerLambdaFunction', 'Arn'),
          Principal: getAtt('MonitorNodeHealthIamRoleLambdaExecution', 'Arn'),
        },
      ],
    ]);
    expect(ofType('AWS::Lambda::Url')).toEqual([]);
  });

  it("bounds the age of an event at both layers of retries to 10 minutes, room for Lambda's two retries", () => {
    for (const fn of FUNCTION_NAMES) {
      const age = props(`${logicalId(fn)}LambdaEvConf`).MaximumEventAgeInSeconds as number;
      expect(age, fn).toBe(600);
      // Three attempts that each time out, and Lambda's backoff between them (about 1 then 2 minutes).
      const timeout = props(`${logicalId(fn)}LambdaFunction`).Timeout as number;
      expect(age, fn).toBeGreaterThanOrEqual(3 * timeout + 180);
    }
    for (const [id, rule] of ofType('AWS::Events::Rule')) {
      for (const target of (rule.Properties?.Targets ?? []) as { RetryPolicy: Record<string, number> }[]) {
        expect(target.RetryPolicy.MaximumEventAgeInSeconds, id).toBe(600);
      }
    }
  });

  it('passes the access checks of scripts/validate-template.ts (TLS-only queues, scoped permissions, bounded ages)', () => {
    expect(checkTemplatePolicies(template)).toEqual([]);
  });

  it('gives every function an async retry limit and an SQS on-failure destination it may send to', () => {
    for (const fn of FUNCTION_NAMES) {
      const id = `${logicalId(fn)}LambdaEvConf`;
      const p = props(id);
      expect(p.MaximumRetryAttempts, id).toBe(2);
      const destination = (p.DestinationConfig as { OnFailure: { Destination: unknown } }).OnFailure
        .Destination;
      expect(destination, id).toEqual(getAtt('FunctionsDeadLetterQueue', 'Arn'));
      expect(statementsOfRole(`${logicalId(fn)}IamRoleLambdaExecution`), fn).toContainEqual({
        Effect: 'Allow',
        Action: ['sqs:SendMessage'],
        Resource: destination,
      });
    }
  });

  it('has one IAM role per function and no wildcard action in any policy', () => {
    const roles = ofType('AWS::IAM::Role').map(([id]) => id);
    expect(roles.sort()).toEqual(FUNCTION_NAMES.map((fn) => `${logicalId(fn)}IamRoleLambdaExecution`).sort());
    const statements = [
      ...roles.flatMap(statementsOfRole),
      ...ofType('AWS::IAM::Policy').flatMap(
        ([, policy]) => (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement,
      ),
    ];
    expect(statements.length).toBeGreaterThan(FUNCTION_NAMES.length);
    for (const statement of statements) {
      expect(statement.NotAction).toBeUndefined();
      for (const action of asList(statement.Action)) expect(action).not.toContain('*');
      // A resource wildcard only where the service has no resource-level permissions (X-Ray).
      if (statement.Effect === 'Allow' && asList(statement.Resource).includes('*')) {
        expect(asList(statement.Action).every((a) => a.startsWith('xray:'))).toBe(true);
      }
    }
  });

  it('lets every function only append to Decisions: PutItem on the table, nothing else on it or its indexes', () => {
    const decisions = tableNamesWithPrefix(PREFIX).decisions;
    const onDecisions = (statement: Statement) =>
      asList(statement.Resource).some((resource) => {
        const text = JSON.stringify(resource);
        return text.includes(`:table/${decisions}"`) || text.includes(`:table/${decisions}/`);
      });
    for (const fn of FUNCTION_NAMES) {
      const statements = statementsOfRole(`${logicalId(fn)}IamRoleLambdaExecution`).filter(onDecisions);
      expect(statements, fn).toEqual([
        {
          Effect: 'Allow',
          Action: ['dynamodb:PutItem'],
          Resource: {
            'Fn::Sub': `arn:\${AWS::Partition}:dynamodb:\${AWS::Region}:\${AWS::AccountId}:table/${decisions}`,
          },
        },
      ]);
    }
    // Nor through a wildcard resource, or a policy attached beside the roles.
    const elsewhere = [
      ...FUNCTION_NAMES.flatMap((fn) => statementsOfRole(`${logicalId(fn)}IamRoleLambdaExecution`)),
      ...ofType('AWS::IAM::Policy').flatMap(
        ([, policy]) => (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement,
      ),
    ].filter((s) => !onDecisions(s) && asList(s.Resource).includes('*'));
    expect(elsewhere.flatMap((s) => asList(s.Action)).filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
  });

  it('grants the monitor lambda:InvokeFunction on the drainer only', () => {
    const invokes = FUNCTION_NAMES.flatMap((fn) =>
      statementsOfRole(`${logicalId(fn)}IamRoleLambdaExecution`)
        .filter((s) => asList(s.Action).includes('lambda:InvokeFunction'))
        .map((s) => ({ fn, resource: s.Resource })),
    );
    expect(invokes).toEqual([
      { fn: 'monitorNodeHealth', resource: getAtt('EvictionDrainerLambdaFunction', 'Arn') },
    ]);
  });

  it('grants cluster credentials only for the configured source: eks:DescribeCluster on that cluster', () => {
    const policies = ofType('AWS::IAM::Policy').map(([id, policy]) => ({ id, condition: policy.Condition }));
    expect(policies).toEqual(
      expect.arrayContaining([
        { id: 'ClusterAuthEksPolicy', condition: 'UseEks' },
        { id: 'ClusterAuthSecretPolicy', condition: 'UseKubeconfigSecret' },
        { id: 'ClusterAuthParameterPolicy', condition: 'UseKubeconfigParameter' },
      ]),
    );
    const eks = props('ClusterAuthEksPolicy');
    expect((eks.PolicyDocument as { Statement: Statement[] }).Statement).toEqual([
      {
        Effect: 'Allow',
        Action: 'eks:DescribeCluster',
        Resource: {
          'Fn::Sub': `arn:\${AWS::Partition}:eks:\${AWS::Region}:\${AWS::AccountId}:cluster/${EKS_CLUSTER}`,
        },
      },
    ]);
    expect((eks.Roles as unknown[]).length).toBe(FUNCTION_NAMES.length);
  });

  it('serves every cluster of `clusters`, each with its own credentials, mode and settings (NLC_CLUSTERS)', () => {
    for (const fn of FUNCTION_NAMES) {
      const env = (
        props(`${logicalId(fn)}LambdaFunction`).Environment as { Variables: Record<string, string> }
      ).Variables;
      expect(JSON.parse(env.NLC_CLUSTERS ?? '')).toEqual({ default: {}, staging: CLUSTER_CONFIG.staging });
      // What a cold start reads from it (AWS_REGION is Lambda's).
      const served = loadServedClusters(
        { ...env, AWS_REGION: 'eu-west-1' },
        loadConfig(env, {}, { allowEnv: ownedEnvVars }),
        ownedEnvVars,
      );
      expect(served.get('default')?.clusterAuth).toEqual({
        kind: 'eks',
        clusterName: EKS_CLUSTER,
        region: 'eu-west-1',
      });
      expect(served.get('default')?.config).toMatchObject({ dryRun: true, nodeEvictionRate: 0.1 });
      expect(served.get('staging')?.clusterAuth).toEqual({
        kind: 'eks',
        clusterName: 'staging',
        region: 'eu-west-1',
      });
      expect(served.get('staging')?.config).toMatchObject({ dryRun: false, nodeEvictionRate: 0.05 });
      // Lambda allows 4 KB for all of a function's variables together: the largest document the bridge
      // accepts (MaxClustersDocumentBytes, 2,500) still fits beside the others.
      const others = Object.entries(env)
        .filter(([k]) => k !== 'NLC_CLUSTERS')
        .reduce((n, [k, v]) => n + k.length + v.length, 0);
      expect(others + 'NLC_CLUSTERS'.length + 2500, fn).toBeLessThanOrEqual(4096);
    }
    // Each cluster's own credentials: one policy on the five roles naming exactly them.
    const policy = props('ClusterAuthPerClusterPolicy');
    expect((policy.PolicyDocument as { Statement: Statement[] }).Statement).toEqual([
      {
        Effect: 'Allow',
        Action: 'eks:DescribeCluster',
        Resource: [
          { 'Fn::Sub': 'arn:${AWS::Partition}:eks:${AWS::Region}:${AWS::AccountId}:cluster/staging' },
        ],
      },
    ]);
    expect((policy.Roles as unknown[]).length).toBe(FUNCTION_NAMES.length);
  });

  it('lets only the relay role put events on the bus', () => {
    const policy = props('EventBus').Policy as { Statement: Statement[] };
    expect(policy.Statement).toEqual([
      expect.objectContaining({
        Effect: 'Deny',
        Principal: '*',
        Action: 'events:PutEvents',
        Condition: {
          ArnNotEquals: {
            'aws:PrincipalArn': {
              'Fn::Sub': `arn:\${AWS::Partition}:iam::\${AWS::AccountId}:role/nlc-relay-${STAGE}`,
            },
          },
        },
      }),
    ]);
  });

  it('creates the tables of tables.ts: on-demand, PITR, SSE, TTL on Decisions, retained', () => {
    const definitions = Object.values(tableDefinitions(tableNamesWithPrefix(PREFIX)));
    expect(
      ofType('AWS::DynamoDB::Table')
        .map(([id]) => id)
        .sort(),
    ).toEqual(definitions.map((d) => d.logicalId).sort());
    for (const definition of definitions) {
      const table = template.Resources[definition.logicalId];
      expect(table?.DeletionPolicy).toBe('Retain');
      expect(table?.Properties).toMatchObject({
        TableName: definition.create.TableName,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: definition.create.KeySchema,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      });
    }
    expect(props('DecisionsTable').TimeToLiveSpecification).toEqual({
      AttributeName: TtlAttribute,
      Enabled: true,
    });
  });

  it('outputs the bus and the table names for the relay and the CLI, and the roles for EKS access entries', () => {
    expect(template.Outputs).toMatchObject({
      EventBusName: { Value: { Ref: 'EventBus' } },
      EventBusArn: { Value: getAtt('EventBus', 'Arn') },
      NodesTableName: { Value: { Ref: 'NodesTable' } },
      ZonesTableName: { Value: { Ref: 'ZonesTable' } },
      EvictionQueueTableName: { Value: { Ref: 'EvictionQueueTable' } },
      PodEvictionsTableName: { Value: { Ref: 'PodEvictionsTable' } },
      DecisionsTableName: { Value: { Ref: 'DecisionsTable' } },
    });
    for (const fn of FUNCTION_NAMES) {
      expect(template.Outputs[`${logicalId(fn)}RoleArn`]?.Value).toEqual(
        getAtt(`${logicalId(fn)}IamRoleLambdaExecution`, 'Arn'),
      );
    }
  });

  it('bundles each function into one ESM file (reported below)', async () => {
    const rows: { function: string; 'zip KiB': number; 'bundle KiB': number; 'source map KiB': number }[] =
      [];
    for (const fn of FUNCTION_NAMES) {
      const zip = join(outDir, `${fn}.zip`);
      const entries = zipEntries(await readFile(zip));
      const bundle = entries.get(`functions/${fn}.mjs`);
      expect(bundle, `${fn}.zip holds functions/${fn}.mjs`).toBeDefined();
      expect([...entries.keys()].sort()).toEqual([`functions/${fn}.mjs`, `functions/${fn}.mjs.map`]);
      const { size } = await stat(zip);
      rows.push({
        function: fn,
        'zip KiB': Math.round(size / 1024),
        'bundle KiB': Math.round((bundle ?? 0) / 1024),
        'source map KiB': Math.round((entries.get(`functions/${fn}.mjs.map`) ?? 0) / 1024),
      });
      // Lambda's limit is 50 MiB zipped; a fast cold start wants far less (docs/architecture.md#budgets).
      expect(size, fn).toBeLessThan(10 * 1024 * 1024);
    }
    console.table(rows);
    expect((await readdir(outDir)).filter((f) => f.endsWith('.zip')).sort()).toEqual(
      FUNCTION_NAMES.map((fn) => `${fn}.zip`).sort(),
    );
  });
});

/** The statement that refuses every request to a queue made without TLS. */
function denyWithoutTls(queue: string): Statement {
  return {
    Sid: 'DenyInsecureTransport',
    Effect: 'Deny',
    Principal: '*',
    Action: 'sqs:*',
    Resource: { 'Fn::GetAtt': [queue, 'Arn'] },
    Condition: { Bool: { 'aws:SecureTransport': 'false' } },
  };
}

function statementsOfRole(id: string): Statement[] {
  const policies = props(id).Policies as { PolicyDocument: { Statement: Statement[] } }[];
  return policies.flatMap((p) => p.PolicyDocument.Statement);
}

/** Name → uncompressed size of each entry, from the zip's central directory. */
function zipEntries(zip: Buffer): Map<string, number> {
  const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
  const CENTRAL_FILE_HEADER = 0x02014b50;
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== END_OF_CENTRAL_DIRECTORY) end--;
  if (end < 0) throw new Error('not a zip file');
  const count = zip.readUInt16LE(end + 10);
  let offset = zip.readUInt32LE(end + 16);
  const entries = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(offset) !== CENTRAL_FILE_HEADER) throw new Error('bad zip central directory');
    const uncompressed = zip.readUInt32LE(offset + 24);
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    entries.set(zip.toString('utf8', offset + 46, offset + 46 + nameLength), uncompressed);
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}
