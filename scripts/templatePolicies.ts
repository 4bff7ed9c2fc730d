// Access rules of a CloudFormation template that the resource specification does not express (TLS-only
// queues, service permissions scoped to their source, bounded event ages); scripts/validate-template.ts
// runs them after the specification's checks.
import { isPlainObject, TemplateSchema, type TemplateIssue } from './templateOutline.js';

interface PolicyStatement {
  readonly Effect?: unknown;
  readonly Principal?: unknown;
  readonly Action?: unknown;
  readonly Condition?: unknown;
}

const listOf = (value: unknown): readonly unknown[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

function statementsOf(document: unknown): PolicyStatement[] {
  if (!isPlainObject(document)) return [];
  return listOf(document.Statement).filter(isPlainObject);
}

/** The principal of a statement: '*', a service name, or undefined for anything else (an account, an ARN). */
function principalOf(statement: PolicyStatement): { readonly any: boolean; readonly services: string[] } {
  const principal = statement.Principal;
  if (principal === '*') return { any: true, services: [] };
  if (!isPlainObject(principal)) return { any: false, services: [] };
  const aws = listOf(principal.AWS);
  const services = listOf(principal.Service).filter((s): s is string => typeof s === 'string');
  return { any: aws.includes('*'), services };
}

function conditionKeys(statement: PolicyStatement): Set<string> {
  const keys = new Set<string>();
  if (!isPlainObject(statement.Condition)) return keys;
  for (const operator of Object.values(statement.Condition)) {
    if (isPlainObject(operator)) for (const key of Object.keys(operator)) keys.add(key.toLowerCase());
  }
  return keys;
}

function deniesInsecureTransport(statement: PolicyStatement): boolean {
  if (statement.Effect !== 'Deny' || !principalOf(statement).any) return false;
  if (!listOf(statement.Action).some((a) => a === 'sqs:*' || a === '*')) return false;
  const bool = isPlainObject(statement.Condition) ? statement.Condition.Bool : undefined;
  const value = isPlainObject(bool) ? bool['aws:SecureTransport'] : undefined;
  return value === 'false' || value === false;
}

/** Lambda's default: asynchronous events are retried for up to 6 hours. */
const LAMBDA_DEFAULT_EVENT_AGE = 21_600;

/**
 * Access rules of a template that the resource specification does not express:
 * - every SQS queue is covered by a QueuePolicy that denies every action when aws:SecureTransport is
 *   false, and no queue policy allows everyone, or a service without aws:SourceArn / aws:SourceAccount;
 * - every Lambda permission for a service names its source (SourceArn and SourceAccount), and none is
 *   for everyone;
 * - every asynchronous-invocation config bounds the event age below Lambda's 6 hours, and every rule
 *   target's retry policy bounds it below EventBridge's 24 hours.
 *
 * @example
 * const issues = checkTemplatePolicies(JSON.parse(await readFile('template.json', 'utf8')));
 */
export function checkTemplatePolicies(template: unknown): TemplateIssue[] {
  const parsed = TemplateSchema.safeParse(template);
  if (!parsed.success) return [];
  const resources = Object.entries(parsed.data.Resources);
  const issues: TemplateIssue[] = [];
  const queuePolicies = resources.filter(([, r]) => r.Type === 'AWS::SQS::QueuePolicy');

  for (const [id, resource] of resources) {
    const path = `Resources.${id}`;
    const properties = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::SQS::Queue': {
        const covered = queuePolicies.some(
          ([, policy]) =>
            listOf(policy.Properties?.Queues).some((q) => isPlainObject(q) && q.Ref === id) &&
            statementsOf(policy.Properties?.PolicyDocument).some(deniesInsecureTransport),
        );
        if (!covered) {
          issues.push({
            path,
            message: `queue ${id} accepts requests without TLS: no QueuePolicy denies sqs:* to every principal when aws:SecureTransport is false`,
          });
        }
        break;
      }
      case 'AWS::SQS::QueuePolicy':
        statementsOf(properties.PolicyDocument).forEach((statement, i) => {
          if (statement.Effect !== 'Allow') return;
          const where = `${path}.Properties.PolicyDocument.Statement.${i}`;
          const { any, services } = principalOf(statement);
          if (any) issues.push({ path: where, message: 'allows every principal' });
          const keys = conditionKeys(statement);
          if (services.length > 0 && !keys.has('aws:sourcearn') && !keys.has('aws:sourceaccount')) {
            issues.push({
              path: where,
              message: `allows ${services.join(', ')} for any source: add an aws:SourceArn or aws:SourceAccount condition`,
            });
          }
        });
        break;
      case 'AWS::Lambda::Permission': {
        const principal = properties.Principal;
        if (principal === '*') issues.push({ path, message: 'lets every principal invoke the function' });
        else if (typeof principal === 'string' && principal.endsWith('.amazonaws.com')) {
          for (const key of ['SourceArn', 'SourceAccount']) {
            if (!(key in properties)) {
              issues.push({
                path: `${path}.Properties.${key}`,
                message: `${principal} may invoke the function without ${key}: any ${key === 'SourceArn' ? 'resource' : 'account'} of that service could`,
              });
            }
          }
        }
        break;
      }
      case 'AWS::Lambda::EventInvokeConfig': {
        const age = properties.MaximumEventAgeInSeconds;
        if (age === undefined || (typeof age === 'number' && age >= LAMBDA_DEFAULT_EVENT_AGE)) {
          issues.push({
            path: `${path}.Properties.MaximumEventAgeInSeconds`,
            message: 'unbounded: Lambda retries an asynchronous event for up to 6 hours',
          });
        }
        break;
      }
      case 'AWS::Events::Rule':
        listOf(properties.Targets).forEach((target, i) => {
          const policy = isPlainObject(target) ? target.RetryPolicy : undefined;
          if (!isPlainObject(policy) || policy.MaximumEventAgeInSeconds === undefined) {
            issues.push({
              path: `${path}.Properties.Targets.${i}.RetryPolicy.MaximumEventAgeInSeconds`,
              message: 'unbounded: EventBridge retries a delivery for up to 24 hours',
            });
          }
        });
        break;
    }
  }
  return issues;
}
