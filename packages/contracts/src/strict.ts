import { z } from 'zod';

// ---------------------------------------------------------------------------------------------------
// Strict input (docs/errors.md, "Strict input"): what our integrators send to a public route is read
// by a schema that refuses every field it does not know, at any depth, so a misspelt field is a 400
// naming it instead of being silently dropped. Only public request bodies and queries are strict:
// PSP notifications (PSPs add fields), internal service-to-service routes (a newer caller may send
// a field an older callee does not know yet while services are deployed one at a time) and
// responses and events (we may add fields to answers) stay tolerant.
// ---------------------------------------------------------------------------------------------------

const made = new WeakMap<z.core.$ZodType, z.core.$ZodType>();
const strictOnes = new WeakSet<z.core.$ZodType>();

type AnyDef = z.core.$ZodTypeDef & Record<string, unknown>;

/**
 * A copy of `schema` in which every object (nested ones, array items, union options, the inside of
 * optional, nullable, default and pipe schemas included) refuses unknown keys. Checks, refinements,
 * transforms and documentation (`.meta`) are kept; an object that is already loose on purpose
 * (`z.looseObject`, a PSP's) stays loose.
 */
export function strictInput<T extends z.ZodType>(schema: T): T {
  return deepStrict(schema) as T;
}

/** Whether `schema` was made by `strictInput` (the route registry's tests check public routes). */
export function isStrictInput(schema: z.core.$ZodType): boolean {
  return strictOnes.has(schema);
}

function deepStrict(schema: z.core.$ZodType): z.core.$ZodType {
  const done = made.get(schema);
  if (done) return done;
  const def = schema._zod.def as AnyDef;
  const next = rebuiltDef(def);
  // A schema with no object inside stays the very same instance: whoever keys on it still finds it.
  const same =
    next === null || (def.type !== 'object' && CHILDREN.every((key) => sameChild(def[key], next[key])));
  const copy = same ? schema : (schema as z.ZodType).clone(next as z.core.$ZodTypeDef);
  // `.meta()` and `.describe()` live in the global registry, keyed by instance: carry them over.
  const meta = z.globalRegistry.get(schema);
  if (meta && copy !== schema && !z.globalRegistry.has(copy)) z.globalRegistry.add(copy, meta);
  made.set(schema, copy);
  strictOnes.add(copy);
  return copy;
}

const inner = (value: unknown) => deepStrict(value as z.core.$ZodType);

/** The def keys that hold inner schemas (rebuiltDef replaces them). */
const CHILDREN = [
  'shape',
  'element',
  'innerType',
  'in',
  'options',
  'left',
  'right',
  'valueType',
  'items',
  'rest',
];

function sameChild(before: unknown, after: unknown): boolean {
  if (Array.isArray(before) && Array.isArray(after))
    return before.length === after.length && before.every((item, index) => item === after[index]);
  return before === after;
}

/** The def of the strict copy, or null when nothing inside can hold an object. */
function rebuiltDef(def: AnyDef): AnyDef | null {
  switch (def.type) {
    case 'object': {
      const shape = Object.fromEntries(
        Object.entries(def.shape as Record<string, z.core.$ZodType>).map(([key, field]) => [
          key,
          deepStrict(field),
        ]),
      );
      // A loose object (an unknown catchall) is loose on purpose; otherwise unknown keys are refused.
      const loose =
        def.catchall !== undefined && (def.catchall as z.core.$ZodType)._zod.def.type === 'unknown';
      return { ...def, shape, catchall: loose ? def.catchall : z.never() };
    }
    case 'array':
      return { ...def, element: inner(def.element) };
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return { ...def, innerType: inner(def.innerType) };
    case 'pipe':
      // The input side is what the client wrote; the output side is ours (a transform's result).
      return { ...def, in: inner(def.in) };
    case 'union':
      return { ...def, options: (def.options as z.core.$ZodType[]).map(deepStrict) };
    case 'intersection':
      return { ...def, left: inner(def.left), right: inner(def.right) };
    case 'record':
      return { ...def, valueType: inner(def.valueType) };
    case 'tuple':
      return {
        ...def,
        items: (def.items as z.core.$ZodType[]).map(deepStrict),
        rest: def.rest ? inner(def.rest) : def.rest,
      };
    default:
      return null;
  }
}
