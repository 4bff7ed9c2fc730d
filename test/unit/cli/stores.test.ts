// cli/stores.ts: table names as serverless.yml gives them, and the environment defaults.
import { describe, expect, it } from 'vitest';
import { stageTableNames, withEnvDefaults } from '../../../cli/stores.js';
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
  it('fills the endpoint and region from the environment; flags win; empty values are unset', () => {
    const env = {
      NLC_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      AWS_REGION: '',
      AWS_DEFAULT_REGION: 'eu-west-1',
    };
    expect(withEnvDefaults({}, env)).toEqual({ endpoint: 'http://127.0.0.1:8000', region: 'eu-west-1' });
    expect(withEnvDefaults({ endpoint: 'http://x:1', region: 'us-east-2' }, env)).toEqual({
      endpoint: 'http://x:1',
      region: 'us-east-2',
    });
    expect(withEnvDefaults({ cluster: 'prod' }, {})).toEqual({ cluster: 'prod' });
  });
});
