// Mutations of a valid JSON value (docs/fuzz.md): one node of the value is dropped, replaced by a
// hostile value (wrong type, huge number, long or odd string), or given an unknown sibling; or the
// whole value is replaced. Each mutation says what it did, for the report.
import fc from 'fast-check';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Mutated {
  value: unknown;
  /** What was changed, e.g. `replace items.0.quantity`. */
  note: string;
}

/** Numbers around the limits of JavaScript, PostgreSQL's int and bigint, and the money limit. */
const hugeNumbers = fc.constantFrom(
  -1,
  0,
  0.5,
  -0.000001,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 32,
  999_999_999_999,
  1_000_000_000_000,
  2 ** 53 - 1,
  2 ** 53 + 2,
  2 ** 63,
  -(2 ** 63),
  1e21,
  1e308,
  -1e308,
  5e-324,
);

/** Strings that have broken services before: NUL, lone surrogates, RTL marks, SQL and path noise. */
const oddStrings = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  '\u202e\u0645\u0631\u062d\u0628\u0627',
  '\ufeff',
  '😀👍🏽👨‍👩‍👧',
  "'; drop table orders; --",
  '%00',
  '../../etc/passwd',
  '${jndi:ldap://x}',
  '__proto__',
  'constructor',
  'null',
  'NaN',
  '1e309',
  '-0',
  '0x10',
  '2147483648',
  '99999999999999999999999',
  '2026-02-30',
  '2026-13-01T25:61:61Z',
  '+275760-09-13T00:00:00.000Z',
  '0000-01-01T00:00:00.000Z',
  '9999-12-31',
);

const longStrings = fc.oneof(
  fc.integer({ min: 256, max: 5_000 }).map((n) => 'x'.repeat(n)),
  fc.integer({ min: 256, max: 3_000 }).map((n) => 'ç😀'.repeat(n)),
  fc.constant('a'.repeat(70_000)),
);

/** A value of any type a hostile client could put where another was expected. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hugeNumbers },
  { weight: 3, arbitrary: oddStrings },
  { weight: 2, arbitrary: longStrings },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { __proto__: null }) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(fc.jsonValue({ maxDepth: 1 }), { minLength: 101, maxLength: 120 }) },
);

type Path = Array<string | number>;

/** Every path in `value`, the root first. */
function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((item, i) => pathsOf(item, [...prefix, i], out));
  else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) pathsOf(item, [...prefix, key], out);
  return out;
}

const clone = (value: unknown): unknown =>
  value === undefined ? undefined : JSON.parse(JSON.stringify(value));

/** `value` with `change` applied to the node at `path` (given the node's parent and key). */
function at(
  value: unknown,
  path: Path,
  change: (parent: Record<string | number, unknown>, key: string | number) => void,
) {
  const copy = clone(value);
  let parent = copy as Record<string | number, unknown>;
  for (const part of path.slice(0, -1)) parent = parent[part] as Record<string | number, unknown>;
  change(parent, path[path.length - 1] as string | number);
  return copy;
}

const label = (path: Path) => (path.length === 0 ? '(body)' : path.join('.'));

type Operation = 'drop' | 'replace' | 'extra' | 'root' | 'repeat';

/** A mutation of `base`: which node (by index in its paths), what to do, with which value. */
export function mutationOf(base: fc.Arbitrary<unknown>): fc.Arbitrary<Mutated> {
  return fc
    .tuple(
      base,
      fc.nat(),
      fc.constantFrom<Operation>('drop', 'replace', 'replace', 'replace', 'extra', 'root', 'repeat'),
      hostileValue,
      fc.constantFrom('extra', '__proto__', 'constructor', 'unknown_field', 'ütf', ''),
    )
    .map(([value, pick, operation, hostile, extraKey]): Mutated => {
      const paths = pathsOf(value);
      const inner = paths.slice(1);
      if (operation === 'root' || inner.length === 0) return { value: hostile, note: 'replace (body)' };
      const path = inner[pick % inner.length] as Path;
      if (operation === 'drop') {
        return {
          value: at(value, path, (parent, key) => {
            if (Array.isArray(parent)) parent.splice(Number(key), 1);
            else delete parent[key];
          }),
          note: `drop ${label(path)}`,
        };
      }
      if (operation === 'extra') {
        const objects = paths.filter((p) => {
          const node = p.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], value);
          return node !== null && typeof node === 'object' && !Array.isArray(node);
        });
        const target = objects[pick % Math.max(objects.length, 1)] ?? [];
        const key = extraKey;
        const add = (node: Record<string, unknown>) =>
          Object.defineProperty(node, key, { value: hostile, enumerable: true });
        const copy = clone(value) as Record<string, unknown>;
        const node = target.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], copy);
        if (node && typeof node === 'object') add(node as Record<string, unknown>);
        return { value: copy, note: `extra ${label([...target, key])}` };
      }
      if (operation === 'repeat') {
        // An array made long (over its maximum) out of its own first item.
        const arrays = paths.filter((p) =>
          Array.isArray(p.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], value)),
        );
        const target = arrays[pick % Math.max(arrays.length, 1)];
        if (!target) return { value: hostile, note: 'replace (body)' };
        return {
          value: at(value, [...target, 0], (parent) => {
            const first = (parent as unknown as unknown[])[0] ?? hostile;
            (parent as unknown as unknown[]).push(...Array.from({ length: 150 }, () => clone(first)));
          }),
          note: `repeat ${label(target)}`,
        };
      }
      return {
        value: at(value, path, (parent, key) => (parent[key] = hostile)),
        note: `replace ${label(path)}`,
      };
    });
}

/** Bodies that are not the JSON the route wants at all: broken, truncated, odd encodings, too big. */
export const rawBody: fc.Arbitrary<{ body: string | Buffer; note: string }> = fc.oneof(
  fc
    .constantFrom(
      '{',
      '{"a":',
      'not json',
      '{"a":1}garbage',
      '[]',
      '"text"',
      '123',
      'null',
      'true',
      '{"a":1,"a":2}',
      '\ufeff{}',
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
      `${'['.repeat(5000)}${']'.repeat(5000)}`,
      '{"customer":' + '{"a":'.repeat(2000) + '1' + '}'.repeat(2001),
    )
    .map((body) => ({ body, note: 'raw' })),
  fc.constant({ body: Buffer.from([0xff, 0xfe, 0x7b, 0x7d, 0xc3, 0x28]), note: 'raw invalid utf-8' }),
  fc.constant({ body: `{"pad":"${'x'.repeat(1_100_000)}"}`, note: 'raw over 1 MiB' }),
  fc.jsonValue({ maxDepth: 4 }).map((value) => ({ body: JSON.stringify(value), note: 'raw json' })),
  fc.string({ unit: 'binary', maxLength: 200 }).map((body) => ({ body, note: 'raw binary string' })),
);
