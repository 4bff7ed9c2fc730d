// Offline CloudFormation template validation against the CloudFormation resource specification that
// @aws-cdk/aws-service-spec ships (docs/contributing.md#toolchain): AWS's own cfn-lint is Python-only and
// cannot be installed here, and npm's `cfn-lint` carries a 2019 spec that does not know
// AWS::Events::EventBus. Checks: unknown resource types and properties (also inside nested property types),
// missing required properties, structural type mismatches (an object where a list belongs, ...), Ref /
// Fn::GetAtt / Fn::Sub / DependsOn / Condition targets, and GetAtt attribute names. Values behind intrinsic
// functions are not type-checked, and enums are not checked (the spec's allowed values lag behind the
// service). checkTemplatePolicies (templatePolicies.ts) adds what the spec cannot say about access
// (TLS-only queues, service permissions scoped to their source, bounded event ages); the CLI runs both.
//
// CLI: npx tsx scripts/validate-template.ts <template.json>...   (exit 0 clean, 1 issues, 2 bad input)
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { loadAwsServiceSpec } from '@aws-cdk/aws-service-spec';
import type {
  Property,
  PropertyType,
  Resource,
  SpecDatabase,
  TypeDefinition,
} from '@aws-cdk/service-spec-types';
import type { z } from 'zod';
import { checkTemplatePolicies } from './templatePolicies.js';
import {
  isPlainObject,
  TemplateSchema,
  type ResourceSchema,
  type Template,
  type TemplateIssue,
} from './templateOutline.js';

export type { TemplateIssue } from './templateOutline.js';

export interface TemplateReport {
  /** Number of resources checked. */
  readonly resources: number;
  readonly issues: readonly TemplateIssue[];
}

const RESOURCE_KEYS = new Set([
  'Type',
  'Properties',
  'DependsOn',
  'Condition',
  'DeletionPolicy',
  'UpdateReplacePolicy',
  'Metadata',
  'CreationPolicy',
  'UpdatePolicy',
]);

const PSEUDO_PARAMETERS = new Set([
  'AWS::AccountId',
  'AWS::NotificationARNs',
  'AWS::NoValue',
  'AWS::Partition',
  'AWS::Region',
  'AWS::StackId',
  'AWS::StackName',
  'AWS::URLSuffix',
]);

let specDatabase: Promise<SpecDatabase> | undefined;

/** The CloudFormation spec database, loaded once per process (about half a second). */
export function loadSpec(): Promise<SpecDatabase> {
  specDatabase ??= loadAwsServiceSpec();
  return specDatabase;
}

/**
 * Validates a CloudFormation template (parsed JSON) against the resource specification.
 *
 * @example
 * const { issues } = await validateTemplate(JSON.parse(await readFile('template.json', 'utf8')));
 * for (const issue of issues) console.log(`${issue.path}: ${issue.message}`);
 */
export async function validateTemplate(template: unknown): Promise<TemplateReport> {
  return validateTemplateWith(await loadSpec(), template);
}

/** validateTemplate with a database the caller already loaded (synchronous). */
export function validateTemplateWith(db: SpecDatabase, template: unknown): TemplateReport {
  const parsed = TemplateSchema.safeParse(template);
  if (!parsed.success) {
    return {
      resources: 0,
      issues: parsed.error.issues.map((issue) => ({
        path: issue.path.map(String).join('.') || '(template)',
        message: issue.message,
      })),
    };
  }
  return new Checker(db, parsed.data).run();
}

class Checker {
  private readonly issues: TemplateIssue[] = [];
  private readonly specs = new Map<string, Resource | undefined>();

  constructor(
    private readonly db: SpecDatabase,
    private readonly template: Template,
  ) {}

  run(): TemplateReport {
    const { Resources, Outputs = {}, Conditions = {} } = this.template;
    for (const [id, resource] of Object.entries(Resources)) this.checkResource(id, resource);
    for (const [id, condition] of Object.entries(Conditions))
      this.walkIntrinsics(condition, `Conditions.${id}`);
    for (const [id, output] of Object.entries(Outputs)) this.walkIntrinsics(output, `Outputs.${id}`);
    return { resources: Object.keys(Resources).length, issues: this.issues };
  }

  private report(path: string, message: string): void {
    this.issues.push({ path, message });
  }

  private spec(type: string): Resource | undefined {
    if (!this.specs.has(type)) {
      this.specs.set(type, this.db.lookup('resource', 'cloudFormationType', 'equals', type)[0]);
    }
    return this.specs.get(type);
  }

  private checkResource(id: string, resource: z.infer<typeof ResourceSchema>): void {
    const path = `Resources.${id}`;
    for (const key of Object.keys(resource)) {
      if (!RESOURCE_KEYS.has(key)) this.report(`${path}.${key}`, `unknown resource attribute ${key}`);
    }
    for (const dependency of [resource.DependsOn ?? []].flat()) {
      if (!(dependency in this.template.Resources)) {
        this.report(`${path}.DependsOn`, `DependsOn names ${dependency}, which is not a resource`);
      }
    }
    if (resource.Condition !== undefined) this.checkConditionName(resource.Condition, `${path}.Condition`);
    const properties = resource.Properties ?? {};
    this.walkIntrinsics(properties, `${path}.Properties`);

    // Custom resources take any properties.
    if (resource.Type.startsWith('Custom::') || resource.Type === 'AWS::CloudFormation::CustomResource')
      return;
    const spec = this.spec(resource.Type);
    if (spec === undefined) {
      this.report(`${path}.Type`, `unknown resource type ${resource.Type}`);
      return;
    }
    this.issues.push(
      ...this.checkProperties(properties, spec.properties, `${path}.Properties`, resource.Type),
    );
  }

  private checkProperties(
    value: Readonly<Record<string, unknown>>,
    properties: Readonly<Record<string, Property>>,
    path: string,
    owner: string,
  ): TemplateIssue[] {
    const issues: TemplateIssue[] = [];
    for (const [name, property] of Object.entries(properties)) {
      if (property.required === true && !(name in value)) {
        issues.push({ path: `${path}.${name}`, message: `missing required property ${name} of ${owner}` });
      }
    }
    for (const [name, child] of Object.entries(value)) {
      const property = properties[name];
      if (property === undefined) {
        issues.push({ path: `${path}.${name}`, message: `unknown property ${name} of ${owner}` });
        continue;
      }
      issues.push(...this.checkValue(child, property.type, `${path}.${name}`));
    }
    return issues;
  }

  /** Issues of one value against one property type (returned, so unions can try each member). */
  private checkValue(value: unknown, type: PropertyType, path: string): TemplateIssue[] {
    if (isIntrinsic(value)) return []; // resolved at deploy time
    switch (type.type) {
      case 'json':
        return [];
      case 'union': {
        const attempts = type.types.map((member) => this.checkValue(value, member, path));
        return attempts.find((issues) => issues.length === 0) ?? attempts[0] ?? [];
      }
      case 'array':
        if (!Array.isArray(value)) return [{ path, message: `expected a list, got ${describe(value)}` }];
        return value.flatMap((item, i) => this.checkValue(item, type.element, `${path}.${i}`));
      case 'map':
        if (!isPlainObject(value)) return [{ path, message: `expected a map, got ${describe(value)}` }];
        return Object.entries(value).flatMap(([k, v]) => this.checkValue(v, type.element, `${path}.${k}`));
      case 'ref': {
        if (!isPlainObject(value)) return [{ path, message: `expected an object, got ${describe(value)}` }];
        const definition: TypeDefinition = this.db.get('typeDefinition', type.reference);
        return this.checkProperties(value, definition.properties, path, definition.name);
      }
      case 'tag':
        return isPlainObject(value) ? [] : [{ path, message: `expected a tag, got ${describe(value)}` }];
      default:
        // string, number, integer, boolean, date-time, null: CloudFormation coerces scalars ("true",
        // "30"), so only a list or an object in a scalar's place is an error.
        return Array.isArray(value) || isPlainObject(value)
          ? [{ path, message: `expected a ${type.type}, got ${describe(value)}` }]
          : [];
    }
  }

  /** Checks every Ref, Fn::GetAtt, Fn::Sub, Fn::If and Condition reference under `value`. */
  private walkIntrinsics(value: unknown, path: string): void {
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        this.walkIntrinsics(item, `${path}.${i}`);
      });
      return;
    }
    if (!isPlainObject(value)) return;
    for (const [key, argument] of Object.entries(value)) {
      const here = `${path}.${key}`;
      if (key === 'Ref' && typeof argument === 'string') this.checkRef(argument, here);
      else if (key === 'Fn::GetAtt') this.checkGetAtt(argument, here);
      else if (key === 'Fn::Sub') this.checkSub(argument, here);
      else if (key === 'Condition' && typeof argument === 'string') this.checkConditionName(argument, here);
      else if (key === 'Fn::If' && Array.isArray(argument) && typeof argument[0] === 'string') {
        this.checkConditionName(argument[0], `${here}.0`);
      }
      this.walkIntrinsics(argument, here);
    }
  }

  private checkRef(name: string, path: string): void {
    const { Resources, Parameters = {} } = this.template;
    if (name in Resources || name in Parameters || PSEUDO_PARAMETERS.has(name)) return;
    this.report(path, `Ref ${name}: no resource, parameter or pseudo parameter of that name`);
  }

  private checkGetAtt(argument: unknown, path: string): void {
    const list: readonly unknown[] | undefined = Array.isArray(argument) ? argument : undefined;
    const parts: readonly [string, unknown] | undefined =
      typeof argument === 'string'
        ? splitOnce(argument)
        : typeof list?.[0] === 'string'
          ? [list[0], list[1]]
          : undefined;
    if (parts === undefined) {
      this.report(path, 'Fn::GetAtt takes [resource, attribute] or "resource.attribute"');
      return;
    }
    const [id, attribute] = parts;
    // An attribute given by an intrinsic (Ref to a parameter) cannot be checked here.
    if (typeof attribute !== 'string') return;
    this.checkAttribute(id, attribute, path);
  }

  private checkAttribute(id: string, attribute: string, path: string): void {
    const resource = this.template.Resources[id];
    if (resource === undefined) {
      this.report(path, `GetAtt ${id}.${attribute}: no resource ${id}`);
      return;
    }
    if (resource.Type.startsWith('Custom::') || resource.Type === 'AWS::CloudFormation::CustomResource')
      return;
    const spec = this.spec(resource.Type);
    if (spec !== undefined && !(attribute in spec.attributes)) {
      this.report(path, `GetAtt ${id}.${attribute}: ${resource.Type} has no attribute ${attribute}`);
    }
  }

  private checkSub(argument: unknown, path: string): void {
    const list: readonly unknown[] | undefined = Array.isArray(argument) ? argument : undefined;
    const [text, variables] = list === undefined ? [argument, undefined] : [list[0], list[1]];
    if (typeof text !== 'string') return;
    const local = isPlainObject(variables) ? new Set(Object.keys(variables)) : new Set<string>();
    // ${Name} or ${Resource.Attribute}; ${!Literal} is an escaped literal.
    for (const match of text.matchAll(/\$\{([^!}][^}]*)\}/g)) {
      const name = (match[1] ?? '').trim();
      if (local.has(name)) continue;
      const dot = name.indexOf('.');
      if (dot === -1) this.checkRef(name, path);
      else this.checkAttribute(name.slice(0, dot), name.slice(dot + 1), path);
    }
  }

  private checkConditionName(name: string, path: string): void {
    if (!(name in (this.template.Conditions ?? {}))) this.report(path, `condition ${name} is not defined`);
  }
}

function isIntrinsic(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  const key = keys[0];
  return (
    keys.length === 1 && key !== undefined && (key === 'Ref' || key === 'Condition' || key.startsWith('Fn::'))
  );
}

function splitOnce(text: string): [string, string] | undefined {
  const dot = text.indexOf('.');
  return dot === -1 ? undefined : [text.slice(0, dot), text.slice(dot + 1)];
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

/** CLI: validates each file, prints one line per issue, returns the exit code. */
export async function main(files: readonly string[]): Promise<number> {
  if (files.length === 0) {
    console.error('usage: tsx scripts/validate-template.ts <template.json>...');
    return 2;
  }
  let code = 0;
  for (const file of files) {
    let template: unknown;
    try {
      template = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      console.error(
        `${file}: cannot read a JSON template: ${error instanceof Error ? error.message : String(error)}`,
      );
      return 2;
    }
    const report = await validateTemplate(template);
    const { resources } = report;
    const issues = [...report.issues, ...checkTemplatePolicies(template)];
    for (const issue of issues) console.log(`${file}: ${issue.path}: ${issue.message}`);
    if (issues.length > 0) code = 1;
    else console.log(`${file}: OK, ${resources} resources checked`);
  }
  return code;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv.slice(2));
}
