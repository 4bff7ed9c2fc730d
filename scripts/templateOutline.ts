// The outline of a CloudFormation template, as both checks read it (validate-template.ts against the
// resource specification, templatePolicies.ts for access rules), and the issue they report.
import { z } from 'zod';

/** One problem, located by a dotted path into the template (`Resources.Table.Properties.BillingMode`). */
export interface TemplateIssue {
  readonly path: string;
  readonly message: string;
}

// Where the template enters: only the outline is checked here; the spec checks the rest.
export const ResourceSchema = z.looseObject({
  Type: z.string().min(1),
  Properties: z.record(z.string(), z.unknown()).optional(),
  DependsOn: z.union([z.string(), z.array(z.string())]).optional(),
  Condition: z.string().optional(),
  DeletionPolicy: z.enum(['Delete', 'Retain', 'RetainExceptOnCreate', 'Snapshot']).optional(),
  UpdateReplacePolicy: z.enum(['Delete', 'Retain', 'Snapshot']).optional(),
});

export const TemplateSchema = z.looseObject({
  Parameters: z.record(z.string(), z.unknown()).optional(),
  Conditions: z.record(z.string(), z.unknown()).optional(),
  Resources: z.record(z.string(), ResourceSchema),
  Outputs: z.record(z.string(), z.unknown()).optional(),
});

export type Template = z.infer<typeof TemplateSchema>;

export function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
