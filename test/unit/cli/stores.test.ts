// cli/stores.ts: table names as serverless.yml gives them, the environment defaults, and where the
// tables are found (the local stack's record: test/integration/cli/context.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NoStoreTargetError, resolveTarget, withEnvDefaults } from '../../../cli/stores.js';
import { stageTableNames } from '../../../shared/stageTables.js';
import { tableNamesWithPrefix } from '../../../shared/adapters/dynamodb/index.js';

describe('stageTableNames', () => {
  it('resolves serverless.yml custom.tables for a stage', async () => {
    expect(await stageTableNames('prod')).toEqual(tableNamesWithPrefix('nlc-prod'));
  });

  it("uses serverless.yml's default stage (dev) when none is given", async () => {
    expect(await stageTableNames(undefined)).toEqual(tableNamesWithPrefix('nlc-dev'));
  });
});

describe('withEnvDefaults', () => {
  it('fills the endpoint from the environment; the flag wins; empty values are unset', () => {
    const env = { NLC_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', AWS_DEFAULT_REGION: 'eu-west-1' };
    expect(withEnvDefaults({}, env)).toEqual({ endpoint: 'http://127.0.0.1:8000' });
    expect(withEnvDefaults({ endpoint: 'http://x:1', region: 'us-east-2' }, env)).toEqual({
      endpoint: 'http://x:1',
      region: 'us-east-2',
    });
    expect(withEnvDefaults({ cluster: 'prod' }, { NLC_DYNAMODB_ENDPOINT: ' ' })).toEqual({ cluster: 'prod' });
  });
});

describe('resolveTarget', () => {
  // The default data directory is under the working directory: one with no stack in it.
  let empty = '';
  const cwd = process.cwd();
  beforeAll(async () => {
    empty = await mkdtemp(join(tmpdir(), 'nlc-no-stack-'));
    process.chdir(empty);
  });
  afterAll(async () => {
    process.chdir(cwd);
    await rm(empty, { recursive: true, force: true });
  });
  const base = {};

  it('--region, else AWS_REGION / AWS_DEFAULT_REGION: DynamoDB on AWS, tables of the default stage', async () => {
    const target = await resolveTarget(base, { AWS_DEFAULT_REGION: 'eu-west-1' });
    expect(target).toMatchObject({ source: 'aws', region: 'eu-west-1', cluster: 'default' });
    expect(target.tables).toEqual(tableNamesWithPrefix('nlc-dev'));
    expect(await resolveTarget({ region: 'us-east-2', stage: 'prod' }, {})).toMatchObject({
      source: 'aws',
      region: 'us-east-2',
      tables: tableNamesWithPrefix('nlc-prod'),
    });
  });

  it('names a bad region variable', async () => {
    await expect(resolveTarget(base, { AWS_REGION: 'Europe' })).rejects.toThrow(
      '- AWS_REGION: expected an AWS region like eu-west-1',
    );
  });

  it('an endpoint needs no region', async () => {
    expect(await resolveTarget({ endpoint: 'http://127.0.0.1:8000' }, {})).toMatchObject({
      source: 'endpoint',
      where: 'http://127.0.0.1:8000',
    });
  });

  it('nothing configured: NoStoreTargetError naming the data directory it looked in', async () => {
    const error: unknown = await resolveTarget(base, { HOME: empty }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoStoreTargetError);
    expect((error as Error).message).toContain('no local stack is running here (.nlc-data/stack.json)');
  });
});
