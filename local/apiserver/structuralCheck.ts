// A fast yes/no for the structural schemas (schemas.ts): every write the simulator serves is checked
// against its kind's schema, a Lease renewal every 10 s per node. zod's parse builds a copy of the
// whole object only to be thrown away (decodeStructure uses the verdict alone): at 5,000 nodes that was
// a tenth of everything a simulation allocated. This reads the same zod definitions and answers with
// plain loops, for the few schema kinds schemas.ts uses; for anything else (a refinement, a length
// check, another type) it answers "not sure" and the caller runs zod, which also words the error. So
// it may only say yes where zod would (test/unit/local/apiserver/structuralCheck.test.ts holds the two
// to each other).
import type { z } from 'zod';

type Check = (value: unknown) => boolean;

/** zod's definition of a schema, as far as this reads it. */
interface Definition {
  readonly type: string;
  readonly checks?: readonly unknown[];
  readonly format?: string;
  readonly innerType?: z.ZodType;
  readonly element?: z.ZodType;
  readonly keyType?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly shape?: Readonly<Record<string, z.ZodType>>;
  readonly catchall?: z.ZodType;
}

const notSure: Check = () => false;

function definitionOf(schema: z.ZodType): Definition {
  return schema._zod.def;
}

/** A plain object: what JSON.parse and object literals make (zod's records want nothing else). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function compile(schema: z.ZodType): Check {
  const def = definitionOf(schema);
  const plain = def.checks === undefined || def.checks.length === 0;
  switch (def.type) {
    case 'string':
      return plain ? (v) => typeof v === 'string' : notSure;
    case 'boolean':
      return (v) => typeof v === 'boolean';
    case 'number':
      if (!plain) return notSure;
      if (def.format === 'safeint') return (v) => Number.isSafeInteger(v);
      if (def.format === undefined) return (v) => typeof v === 'number' && Number.isFinite(v);
      return notSure;
    case 'unknown':
      return () => true;
    case 'optional': {
      const inner = compile(def.innerType as z.ZodType);
      return (v) => v === undefined || inner(v);
    }
    case 'nullable': {
      const inner = compile(def.innerType as z.ZodType);
      return (v) => v === null || inner(v);
    }
    case 'array': {
      if (!plain) return notSure;
      const element = compile(def.element as z.ZodType);
      return (v) => {
        if (!Array.isArray(v)) return false;
        // A loop rather than every(): stored lists are frozen, where V8's every() is several times slower.
        for (const e of v as unknown[]) if (!element(e)) return false;
        return true;
      };
    }
    case 'record': {
      // Keys of any string only: a key schema with checks is left to zod.
      const key = definitionOf(def.keyType as z.ZodType);
      if (key.type !== 'string' || (key.checks !== undefined && key.checks.length > 0)) return notSure;
      const value = compile(def.valueType as z.ZodType);
      return (v) => {
        if (!isPlainObject(v)) return false;
        for (const k of Object.keys(v)) if (!value(v[k])) return false;
        return true;
      };
    }
    case 'object': {
      // Loose (catchall unknown) or stripping (none) objects let other keys through; a strict one is left to zod.
      if (!plain) return notSure;
      if (def.catchall !== undefined && definitionOf(def.catchall).type !== 'unknown') return notSure;
      const fields = Object.entries(def.shape ?? {}).map(([name, field]) => [name, compile(field)] as const);
      return (v) => {
        if (!isPlainObject(v)) return false;
        for (const [name, check] of fields) if (!check(v[name])) return false;
        return true;
      };
    }
    default:
      return notSure;
  }
}

const compiled = new WeakMap<z.ZodType, Check>();

/**
 * True only when `schema.safeParse(value)` would succeed; false when it fails, or when the schema uses
 * something this does not read (then ask zod).
 *
 * @example
 * if (!surelyValid(leaseSchema, body)) decodeWithZod(body); // the rare bad body, or an unread schema
 */
export function surelyValid(schema: z.ZodType, value: unknown): boolean {
  let check = compiled.get(schema);
  if (check === undefined) {
    check = compile(schema);
    compiled.set(schema, check);
  }
  return check(value);
}
