// serverless.yml against the code it deploys, without packaging (the package test does that once the
// handlers exist): every controller setting is a stage parameter whose default is upstream's, passed to
// the functions as its NLC_ variable; the table names are tables.ts's conventional ones.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, type Tags } from 'yaml';
import { tableNamesWithPrefix } from '../../../shared/adapters/dynamodb/tables.js';
import { ownedEnvVars } from '../../../shared/adapters/kubernetes/authConfig.js';
import { EvictionDrainerTimeoutMs } from '../../../shared/app/drainerScheduling.js';
import {
  CONFIG_KEYS,
  formatConfigValue,
  UPSTREAM_DEFAULTS,
  VERSIONED_KEYS,
  type ConfigKey,
} from '../../../shared/config.js';

// CloudFormation's short-form tags, kept as their long forms.
const cfnTags: Tags = ['Ref', 'Sub', 'GetAtt', 'If', 'Not', 'Equals'].flatMap((name) =>
  (['scalar', 'seq', 'map'] as const).map((collection) => ({
    tag: `!${name}`,
    collection: collection === 'scalar' ? undefined : collection,
    resolve: (value: unknown) => ({ [name === 'Ref' ? 'Ref' : `Fn::${name}`]: value }),
  })),
);

interface ServerlessYml {
  params: { default: Record<string, unknown> };
  provider: { environment: Record<string, string>; runtime: string; architecture: string };
  custom: { tables: Record<string, string> };
  functions: Record<string, { handler: string; timeout?: number }>;
}
let sls: ServerlessYml;

beforeAll(async () => {
  const text = await readFile(fileURLToPath(new URL('../../../serverless.yml', import.meta.url)), 'utf8');
  sls = parse(text, { customTags: cfnTags }) as ServerlessYml;
});

// Decided by infra/serverless/mode.cjs from `mode`, `dryRun` and `eksClusterName` (tested below).
const decidedByMode: readonly ConfigKey[] = ['dryRun'];
const versioned: readonly ConfigKey[] = VERSIONED_KEYS;

describe('serverless.yml', () => {
  it.each(
    (Object.keys(CONFIG_KEYS) as ConfigKey[]).filter(
      (k) => !decidedByMode.includes(k) && !versioned.includes(k),
    ),
  )('%s: a stage parameter defaulting to upstream, passed as its NLC_ variable', (key) => {
    expect(String(sls.params.default[key])).toBe(formatConfigValue(key, UPSTREAM_DEFAULTS[key]));
    expect(sls.provider.environment[CONFIG_KEYS[key].envVar]).toBe(`\${param:${key}}`);
  });

  it.each(versioned)(
    '%s: an empty stage parameter (the emulated minor decides), passed as its NLC_ variable',
    (key) => {
      expect(sls.params.default[key]).toBe('');
      expect(sls.provider.environment[CONFIG_KEYS[key].envVar]).toBe(`\${param:${key}}`);
    },
  );

  it('dryRun: an empty stage parameter, NLC_DRY_RUN decided with mode by infra/serverless/mode.cjs', () => {
    expect(sls.params.default).toMatchObject({ dryRun: '', mode: '' });
    expect(sls.provider.environment.NLC_DRY_RUN).toBe('${file(./infra/serverless/mode.cjs)}');
  });

  it('passes the cluster credentials settings the Kubernetes adapter reads', () => {
    for (const name of [
      'NLC_KUBECONFIG_SECRET_ID',
      'NLC_KUBECONFIG_PARAMETER',
      'NLC_EKS_CLUSTER_NAME',
      'NLC_KUBECONFIG_CONTEXT',
    ]) {
      expect(ownedEnvVars).toContain(name);
      expect(sls.provider.environment[name]).toMatch(/^\$\{param:\w+\}$/);
    }
  });

  it('gives the drainer the timeout its wait budget assumes (drainerWaitBudget)', () => {
    expect((sls.functions.evictionDrainer?.timeout ?? 0) * 1000).toBe(EvictionDrainerTimeoutMs);
  });

  it('names the tables as tables.ts does', () => {
    expect(sls.custom.tables).toEqual(tableNamesWithPrefix('${self:service}-${sls:stage}'));
  });

  it('runs the five handlers on nodejs22.x arm64', () => {
    expect(sls.provider).toMatchObject({ runtime: 'nodejs22.x', architecture: 'arm64' });
    expect(Object.fromEntries(Object.entries(sls.functions).map(([fn, f]) => [fn, f.handler]))).toEqual({
      nodeTaints: 'functions/nodeTaints.handler',
      monitorNodeHealth: 'functions/monitorNodeHealth.handler',
      evictionDrainer: 'functions/evictionDrainer.handler',
      taintEviction: 'functions/taintEviction.handler',
      podProcessing: 'functions/podProcessing.handler',
    });
  });
});

describe('infra/serverless/mode.cjs: NLC_DRY_RUN from mode, dryRun and eksClusterName', () => {
  const require = createRequire(import.meta.url);
  const { dryRunFor } = require('../../../infra/serverless/mode.cjs') as {
    dryRunFor: (params: { mode?: string; dryRun?: string; eksClusterName?: string }) => string | Error;
  };

  it.each([
    { name: 'nothing set: active', params: {}, want: 'false' },
    {
      name: 'EKS, no mode: shadow (its own controller keeps running)',
      params: { eksClusterName: 'prod' },
      want: 'true',
    },
    { name: 'EKS, mode=active: writes', params: { eksClusterName: 'prod', mode: 'active' }, want: 'false' },
    { name: 'mode=shadow anywhere', params: { mode: 'shadow' }, want: 'true' },
    { name: 'dryRun=true without mode', params: { dryRun: 'true' }, want: 'true' },
    {
      name: 'EKS with dryRun=false and no mode: as said',
      params: { eksClusterName: 'prod', dryRun: 'false' },
      want: 'false',
    },
    { name: 'mode and dryRun that agree', params: { mode: 'active', dryRun: 'false' }, want: 'false' },
  ])('$name', ({ params, want }) => {
    expect(dryRunFor(params)).toBe(want);
  });

  it.each([
    {
      params: { mode: 'Active' },
      message: 'param mode: expected "shadow" or "active" (or nothing), got "Active"',
    },
    { params: { dryRun: 'yes' }, message: 'param dryRun: expected "true" or "false", got "yes"' },
    {
      params: { mode: 'active', dryRun: 'true' },
      message: 'params mode=active and dryRun=true disagree: drop one (mode=active writes to the cluster)',
    },
    {
      params: { mode: 'shadow', dryRun: 'false' },
      message: 'params mode=shadow and dryRun=false disagree: drop one (mode=shadow never writes)',
    },
  ])('refuses $params naming the parameter', ({ params, message }) => {
    const result = dryRunFor(params);
    expect(result).toBeInstanceOf(Error);
    expect((result as Error).message).toBe(message);
  });
});
