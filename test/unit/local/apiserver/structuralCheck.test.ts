// surelyValid against zod itself, for every structural schema the API simulator decodes with: it may
// say yes only where zod accepts (or a bad body would be stored), and it should say yes wherever zod
// accepts what a request can carry, JSON (or every write would pay for zod's copy). For other objects
// (a Date where an object is expected) it may defer to zod.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  bindingSchema,
  coreEventSchema,
  daemonSetSchema,
  eventsV1Schema,
  leaseSchema,
  namespaceSchema,
  nodeSchema,
  podSchema,
} from '../../../../local/apiserver/schemas.js';
import { surelyValid } from '../../../../local/apiserver/structuralCheck.js';

interface Def {
  readonly type: string;
  readonly innerType?: z.ZodType;
  readonly element?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly shape?: Readonly<Record<string, z.ZodType>>;
}
const defOf = (schema: z.ZodType): Def => schema._zod.def;

/** Any JSON-ish value, and a few that JSON cannot make. */
const stray: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, undefined, true, 0, -1, 1.5, 2 ** 53, Number.NaN, Infinity, '', 'x', [], {}),
  fc.constantFrom(new Date(0), new Map(), [1, 'a'], { a: 1 }, Object.create(null) as object),
);

/** Values shaped by the schema, now and then with something else in their place. */
function valuesOf(schema: z.ZodType, depth = 0): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  const shaped = ((): fc.Arbitrary<unknown> => {
    switch (def.type) {
      case 'string':
        return fc.string({ maxLength: 3 });
      case 'boolean':
        return fc.boolean();
      case 'number':
        return fc.oneof(fc.integer(), fc.constantFrom(0.5, 2 ** 53, -(2 ** 53)));
      case 'optional':
      case 'nullable':
        return fc.oneof(
          { weight: 1, arbitrary: fc.constant(def.type === 'optional' ? undefined : null) },
          { weight: 4, arbitrary: valuesOf(def.innerType as z.ZodType, depth) },
        );
      case 'array':
        return depth > 4
          ? fc.constant([])
          : fc.array(valuesOf(def.element as z.ZodType, depth + 1), { maxLength: 3 });
      case 'record':
        return fc.dictionary(
          fc.constantFrom('a', 'b', '__proto__', 'constructor'),
          valuesOf(def.valueType as z.ZodType, depth + 1),
          {
            maxKeys: 3,
          },
        );
      case 'object': {
        if (depth > 4) return fc.constant({});
        const fields = Object.entries(def.shape ?? {}).map(
          ([name, field]) => [name, valuesOf(field, depth + 1)] as const,
        );
        return fc
          .tuple(
            fc.record(Object.fromEntries(fields), { requiredKeys: [] }),
            fc.dictionary(fc.constantFrom('extra', 'other'), stray, { maxKeys: 1 }),
          )
          .map(([known, extra]) => ({ ...extra, ...known }));
      }
      default:
        return stray;
    }
  })();
  return fc.oneof({ weight: 15, arbitrary: shaped }, { weight: 1, arbitrary: stray });
}

const schemas = {
  node: nodeSchema,
  pod: podSchema,
  lease: leaseSchema,
  namespace: namespaceSchema,
  daemonSet: daemonSetSchema,
  coreEvent: coreEventSchema,
  eventsV1: eventsV1Schema,
  binding: bindingSchema,
};

/** What JSON.parse can give: no Dates, Maps, undefined, NaN or objects without Object's prototype. */
function isJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value).every((v) => v === undefined || isJson(v));
}

describe('surelyValid', () => {
  it.each(Object.entries(schemas))(
    'says yes for the %s schema only where zod accepts, and for all the JSON zod accepts',
    (_name, schema) => {
      let accepted = 0;
      fc.assert(
        fc.property(valuesOf(schema), (value) => {
          const zodSays = schema.safeParse(value).success;
          const fast = surelyValid(schema, value);
          if (fast) expect(zodSays).toBe(true);
          if (zodSays && isJson(value)) expect(fast).toBe(true);
          if (fast) accepted++;
        }),
        { numRuns: 1500, seed: 7 },
      );
      // Both verdicts were tried, many times.
      expect(accepted).toBeGreaterThan(100);
      expect(accepted).toBeLessThan(1400);
    },
  );

  it('leaves to zod what it does not read: a refinement, a length check, a strict object', () => {
    const refined = z.looseObject({ name: z.string().refine((s) => s !== 'x') });
    expect(surelyValid(refined, { name: 'a' })).toBe(false);
    expect(surelyValid(z.looseObject({ name: z.string().min(1) }), { name: 'a' })).toBe(false);
    expect(surelyValid(z.strictObject({ name: z.string() }), { name: 'a' })).toBe(false);
    expect(surelyValid(z.looseObject({ name: z.string() }), { name: 'a' })).toBe(true);
  });
});
