// The bus's routing, read from serverless.yml: which function gets which relay event (its EventBridge
// rules: source, detail-type, detail.cluster) and which runs on a schedule (`rate(1 minute)`). The
// simulator routes by these rules instead of a table of its own, so a run also proves the deployed
// routing (docs/architecture.md: a local bus that routes by the rules in serverless.yml).
//
// What is read: `functions.<name>.events[].eventBridge` with either a `pattern` (matched as EventBridge
// matches an exact-value pattern: every named field must be present with one of the listed values) or a
// `schedule` (`rate(N unit)`; cron expressions are refused: nothing here needs one). A pattern value
// written as a Serverless variable (`${self:custom.clusterPattern}`) stands for the deployment's cluster
// list; here that is the scenario's cluster.
import { readFile } from 'node:fs/promises';
import { parse, type Tags } from 'yaml';
import { z } from 'zod';
import type { Millis } from '../../shared/domain/types.js';

/** An EventBridge pattern of exact values: field → allowed values, nested for `detail`. */
export interface EventPattern {
  readonly [field: string]: readonly string[] | EventPattern;
}

export interface EventRule {
  readonly kind: 'event';
  /** The target function (serverless.yml `functions` key). */
  readonly function: string;
  readonly pattern: EventPattern;
}

export interface ScheduleRule {
  readonly kind: 'schedule';
  readonly function: string;
  readonly periodMs: Millis;
  /** The expression as written, for messages. */
  readonly expression: string;
}

export type Rule = EventRule | ScheduleRule;

/** Where serverless.yml is, from this module (local/simulate/ → the repository root). */
export const ServerlessYmlUrl = new URL('../../serverless.yml', import.meta.url);

// CloudFormation's short-form tags parse to their long forms; the routing never reads them.
const cfnTags: Tags = ['Ref', 'Sub', 'GetAtt', 'If', 'Not', 'Equals', 'Join', 'Select', 'Split'].flatMap(
  (name) =>
    (['scalar', 'seq', 'map'] as const).map((collection) => ({
      tag: `!${name}`,
      ...(collection !== 'scalar' && { collection }),
      resolve: (value: unknown) => ({ [name === 'Ref' ? 'Ref' : `Fn::${name}`]: value }),
    })),
);

const EventBridgeEvent = z.object({
  eventBridge: z
    .object({
      pattern: z.record(z.string(), z.unknown()).optional(),
      schedule: z.string().optional(),
    })
    .refine((e) => (e.pattern === undefined) !== (e.schedule === undefined), {
      error: 'expected either a pattern or a schedule',
    }),
});

const ServerlessFunctions = z.object({
  functions: z.record(
    z.string(),
    z.object({ events: z.array(z.union([EventBridgeEvent, z.record(z.string(), z.unknown())])).optional() }),
  ),
});

const UNIT_MS: Readonly<Record<string, Millis>> = {
  minute: 60_000,
  minutes: 60_000,
  hour: 3_600_000,
  hours: 3_600_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** `rate(1 minute)` → 60000. EventBridge wants the singular for 1 and the plural otherwise. */
export function parseRate(expression: string): Millis {
  const m = /^rate\((\d+) (minutes?|hours?|days?)\)$/.exec(expression.trim());
  const unit = m?.[2] === undefined ? undefined : UNIT_MS[m[2]];
  const n = Number(m?.[1]);
  if (unit === undefined || !Number.isInteger(n) || n <= 0 || (n === 1) !== !(m?.[2] ?? '').endsWith('s')) {
    throw new TypeError(
      `serverless.yml: unsupported schedule ${JSON.stringify(expression)} (expected rate(N unit))`,
    );
  }
  return n * unit;
}

function isVariable(value: unknown): boolean {
  return typeof value === 'string' && /^\$\{[^}]+\}$/.test(value);
}

/** A pattern as EventBridge reads it; a variable value (the cluster list) becomes `clusters`. */
function toPattern(
  raw: Readonly<Record<string, unknown>>,
  clusters: readonly string[],
  where: string,
): EventPattern {
  const pattern: Record<string, readonly string[] | EventPattern> = {};
  for (const [field, value] of Object.entries(raw)) {
    if (isVariable(value)) pattern[field] = clusters;
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) pattern[field] = value;
    else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      pattern[field] = toPattern(value as Record<string, unknown>, clusters, `${where}.${field}`);
    } else {
      throw new TypeError(`serverless.yml: ${where}.${field}: only exact-value patterns are supported`);
    }
  }
  return pattern;
}

/**
 * The rules of a serverless.yml document, in file order (functions, then their events).
 *
 * @example
 * const rules = parseServerlessRules(await readFile('serverless.yml', 'utf8'), ['default']);
 */
export function parseServerlessRules(text: string, clusters: readonly string[]): Rule[] {
  const doc = ServerlessFunctions.parse(parse(text, { customTags: cfnTags }));
  const rules: Rule[] = [];
  for (const [fn, { events = [] }] of Object.entries(doc.functions)) {
    events.forEach((event, i) => {
      const parsed = EventBridgeEvent.safeParse(event);
      if (!parsed.success) return; // other event sources (http, sqs, …) are not the bus's
      const { pattern, schedule } = parsed.data.eventBridge;
      if (schedule !== undefined) {
        rules.push({ kind: 'schedule', function: fn, periodMs: parseRate(schedule), expression: schedule });
      } else if (pattern !== undefined) {
        rules.push({
          kind: 'event',
          function: fn,
          pattern: toPattern(pattern, clusters, `functions.${fn}.events[${i}].pattern`),
        });
      }
    });
  }
  return rules;
}

/** Reads the repository's serverless.yml. */
export async function loadServerlessRules(
  clusters: readonly string[],
  url: URL = ServerlessYmlUrl,
): Promise<Rule[]> {
  return parseServerlessRules(await readFile(url, 'utf8'), clusters);
}

/** Whether an event (the EventBridge envelope as JSON) matches an exact-value pattern. */
export function matchesPattern(event: unknown, pattern: EventPattern): boolean {
  if (typeof event !== 'object' || event === null) return false;
  return Object.entries(pattern).every(([field, expected]) => {
    const value: unknown = Reflect.get(event, field);
    if (isValueList(expected)) return typeof value === 'string' && expected.includes(value);
    return matchesPattern(value, expected);
  });
}

function isValueList(value: readonly string[] | EventPattern): value is readonly string[] {
  return Array.isArray(value);
}

/** The functions an event goes to, in rule order, each once. */
export function targetsOf(event: unknown, rules: readonly Rule[]): string[] {
  const targets: string[] = [];
  for (const rule of rules) {
    if (rule.kind === 'event' && matchesPattern(event, rule.pattern) && !targets.includes(rule.function)) {
      targets.push(rule.function);
    }
  }
  return targets;
}
