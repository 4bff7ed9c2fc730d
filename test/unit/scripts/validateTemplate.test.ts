import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { checkTemplatePolicies } from '../../../scripts/templatePolicies.js';
import { main, validateTemplate } from '../../../scripts/validate-template.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const load = async (name: string): Promise<unknown> => JSON.parse(await readFile(fixture(name), 'utf8'));

describe('validateTemplate', () => {
  it('accepts a valid template: intrinsics, conditions, pseudo parameters, custom resources', async () => {
    const report = await validateTemplate(await load('good-template.json'));
    expect(report.issues).toEqual([]);
    expect(report.resources).toBe(6);
  });

  it('reports every kind of error in a broken template, each with its path', async () => {
    const report = await validateTemplate(await load('bad-template.json'));
    expect(report.issues).toEqual(
      expect.arrayContaining([
        { path: 'Resources.Bus.Type', message: 'unknown resource type AWS::Events::Bus' },
        {
          path: 'Resources.Table.Properties.BilingMode',
          message: 'unknown property BilingMode of AWS::DynamoDB::Table',
        },
        {
          path: 'Resources.Table.Properties.KeySchema',
          message: 'missing required property KeySchema of AWS::DynamoDB::Table',
        },
        {
          path: 'Resources.Table.Properties.PointInTimeRecoverySpecification.Enabled',
          message: 'unknown property Enabled of PointInTimeRecoverySpecification',
        },
        {
          path: 'Resources.Table.Properties.SSESpecification',
          message: 'expected an object, got boolean true',
        },
        {
          path: 'Resources.Rule.DependsOn',
          message: 'DependsOn names Missing, which is not a resource',
        },
        {
          path: 'Resources.Rule.Properties.Targets.0.Arn.Fn::GetAtt',
          message: 'GetAtt Table.Foo: AWS::DynamoDB::Table has no attribute Foo',
        },
        {
          path: 'Resources.Rule.Properties.Description.Ref',
          message: 'Ref NoSuchThing: no resource, parameter or pseudo parameter of that name',
        },
        { path: 'Resources.Queue.Retain', message: 'unknown resource attribute Retain' },
        { path: 'Resources.Queue.Condition', message: 'condition Nope is not defined' },
        {
          path: 'Outputs.Url.Value.Fn::Sub',
          message: 'GetAtt Queue.Url: AWS::SQS::Queue has no attribute Url',
        },
        {
          path: 'Outputs.Url.Value.Fn::Sub',
          message: 'Ref Gone: no resource, parameter or pseudo parameter of that name',
        },
      ]),
    );
    expect(report.issues).toHaveLength(12);
  });

  it('rejects something that is not a template', async () => {
    const report = await validateTemplate({ Resources: { X: { Properties: {} } } });
    expect(report.issues).toEqual([{ path: 'Resources.X.Type', message: expect.any(String) as string }]);
  });
});

describe('checkTemplatePolicies', () => {
  it('passes a template whose queue is TLS-only and allows its service only from a named source', async () => {
    expect(checkTemplatePolicies(await load('good-template.json'))).toEqual([]);
  });

  it('reports plain-text queues, open or unscoped grants, and unbounded event ages, each with its path', async () => {
    const template = await load('loose-template.json');
    expect((await validateTemplate(template)).issues).toEqual([]); // valid by the spec all the same
    expect(checkTemplatePolicies(template)).toEqual([
      {
        path: 'Resources.Open',
        message:
          'queue Open accepts requests without TLS: no QueuePolicy denies sqs:* to every principal when aws:SecureTransport is false',
      },
      {
        path: 'Resources.GuardedPolicy.Properties.PolicyDocument.Statement.1',
        message:
          'allows events.amazonaws.com for any source: add an aws:SourceArn or aws:SourceAccount condition',
      },
      {
        path: 'Resources.GuardedPolicy.Properties.PolicyDocument.Statement.2',
        message: 'allows every principal',
      },
      {
        path: 'Resources.FromEvents.Properties.SourceAccount',
        message:
          'events.amazonaws.com may invoke the function without SourceAccount: any account of that service could',
      },
      { path: 'Resources.FromAnyone', message: 'lets every principal invoke the function' },
      {
        path: 'Resources.Async.Properties.MaximumEventAgeInSeconds',
        message: 'unbounded: Lambda retries an asynchronous event for up to 6 hours',
      },
      {
        path: 'Resources.Rule.Properties.Targets.0.RetryPolicy.MaximumEventAgeInSeconds',
        message: 'unbounded: EventBridge retries a delivery for up to 24 hours',
      },
    ]);
  });
});

describe('validate-template CLI', () => {
  it('exits 0 on a clean template, 1 on issues, 2 without files', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await main([fixture('good-template.json')])).toBe(0);
      expect(await main([fixture('good-template.json'), fixture('bad-template.json')])).toBe(1);
      expect(log).toHaveBeenCalledWith(expect.stringContaining('unknown resource type AWS::Events::Bus'));
      expect(await main([fixture('loose-template.json')])).toBe(1);
      expect(log).toHaveBeenCalledWith(expect.stringContaining('queue Open accepts requests without TLS'));
      expect(await main([])).toBe(2);
      expect(await main([fixture('missing.json')])).toBe(2);
    } finally {
      log.mockRestore();
      error.mockRestore();
    }
  });
});
