// A small JSON-schema validator for the subset docs/openapi.yaml uses (OpenAPI 3.1 / JSON Schema
// 2020-12 keywords): type (a name or an array of names, 'null' included; `nullable` of 3.0 too),
// enum, properties, required, additionalProperties (false or a schema), items, minItems, maxItems,
// minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, $ref (local
// '#/...' pointers), oneOf, anyOf, allOf. Unknown keywords are reported, so the YAML cannot use a
// keyword this validator silently ignores.

export type Schema = Record<string, unknown>;

export interface ValidationError {
  /** JSON pointer into the validated value. */
  pointer: string;
  message: string;
}

export const KNOWN_KEYWORDS = new Set([
  'type', 'nullable', 'enum', 'properties', 'required', 'additionalProperties', 'items', 'minItems', 'maxItems',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'pattern', '$ref',
  'oneOf', 'anyOf', 'allOf', 'description', 'default', 'title', 'example', 'examples', 'format',
]);

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function unescapePointer(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Resolves a local `#/a/b` reference in `root`; undefined when it does not resolve. */
export function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  const path = ref.slice(1);
  if (path === '') return root;
  if (!path.startsWith('/')) return undefined;
  let cur: unknown = root;
  for (const raw of path.slice(1).split('/')) {
    const token = unescapePointer(decodeURIComponent(raw));
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, token)) return undefined;
    cur = (cur as Record<string, unknown>)[token];
  }
  return cur;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(v: unknown, t: string): boolean {
  const actual = typeOf(v);
  if (t === 'number') return actual === 'number' || actual === 'integer';
  return actual === t;
}

const regex_cache = new Map<string, RegExp>();
function regex(p: string): RegExp {
  let r = regex_cache.get(p);
  if (r === undefined) {
    r = new RegExp(p, 'u');
    regex_cache.set(p, r);
  }
  return r;
}

export class Validator {
  constructor(private readonly root: unknown) {}

  /** All mismatches of `value` against `schema` (empty when it conforms). */
  validate(value: unknown, schema: Schema, pointer = ''): ValidationError[] {
    const errors: ValidationError[] = [];
    this.check(value, schema, pointer, errors, 0);
    return errors;
  }

  private deref(schema: Schema): Schema {
    let s = schema;
    for (let i = 0; i < 32 && typeof s.$ref === 'string'; i++) {
      const target = resolvePointer(this.root, s.$ref);
      if (target === undefined || target === null || typeof target !== 'object') throw new Error(`unresolved $ref ${s.$ref}`);
      s = target as Schema;
    }
    return s;
  }

  private check(v: unknown, schema0: Schema, ptr: string, errors: ValidationError[], depth: number): void {
    if (depth > 64) throw new Error('schema recursion too deep at ' + ptr);
    const schema = this.deref(schema0);
    for (const k of Object.keys(schema)) {
      if (!KNOWN_KEYWORDS.has(k)) throw new Error(`validator: unsupported schema keyword "${k}" (at value ${ptr || '/'})`);
    }
    const fail = (message: string): void => {
      errors.push({ pointer: ptr || '/', message });
    };

    if (schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
      if (schema.nullable === true) types.push('null');
      if (!types.some((t) => typeMatches(v, t))) {
        fail(`expected type ${types.join('|')}, got ${typeOf(v)} (${JSON.stringify(v)?.slice(0, 60)})`);
        return;
      }
    }
    if (Array.isArray(schema.enum) && !schema.enum.some((e) => e === v)) {
      fail(`${JSON.stringify(v)?.slice(0, 60)} is not one of ${JSON.stringify(schema.enum)}`);
    }
    if (typeof v === 'string') {
      if (typeof schema.pattern === 'string' && !regex(schema.pattern).test(v)) fail(`${JSON.stringify(v.slice(0, 80))} does not match /${schema.pattern}/`);
      if (typeof schema.minLength === 'number' && v.length < schema.minLength) fail(`string shorter than ${schema.minLength}`);
      if (typeof schema.maxLength === 'number' && v.length > schema.maxLength) fail(`string longer than ${schema.maxLength}`);
    }
    if (typeof v === 'number') {
      if (typeof schema.minimum === 'number' && v < schema.minimum) fail(`${v} < minimum ${schema.minimum}`);
      if (typeof schema.maximum === 'number' && v > schema.maximum) fail(`${v} > maximum ${schema.maximum}`);
      if (typeof schema.exclusiveMinimum === 'number' && v <= schema.exclusiveMinimum) fail(`${v} <= exclusiveMinimum ${schema.exclusiveMinimum}`);
      if (typeof schema.exclusiveMaximum === 'number' && v >= schema.exclusiveMaximum) fail(`${v} >= exclusiveMaximum ${schema.exclusiveMaximum}`);
    }
    if (Array.isArray(v)) {
      if (typeof schema.minItems === 'number' && v.length < schema.minItems) fail(`array has ${v.length} items, fewer than ${schema.minItems}`);
      if (typeof schema.maxItems === 'number' && v.length > schema.maxItems) fail(`array has ${v.length} items, more than ${schema.maxItems}`);
      if (schema.items !== undefined && typeof schema.items === 'object') {
        v.forEach((item, i) => this.check(item, schema.items as Schema, `${ptr}/${i}`, errors, depth + 1));
      }
    }
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const obj = v as Record<string, unknown>;
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      if (Array.isArray(schema.required)) {
        for (const r of schema.required as string[]) {
          if (!Object.prototype.hasOwnProperty.call(obj, r)) errors.push({ pointer: `${ptr}/${escapePointer(r)}`, message: 'required property missing' });
        }
      }
      for (const [k, val] of Object.entries(obj)) {
        const p = `${ptr}/${escapePointer(k)}`;
        if (Object.prototype.hasOwnProperty.call(props, k)) {
          this.check(val, props[k], p, errors, depth + 1);
        } else if (schema.additionalProperties === false) {
          errors.push({ pointer: p, message: 'undocumented property (additionalProperties: false)' });
        } else if (schema.additionalProperties !== undefined && typeof schema.additionalProperties === 'object') {
          this.check(val, schema.additionalProperties as Schema, p, errors, depth + 1);
        }
      }
    }
    if (Array.isArray(schema.allOf)) {
      for (const s of schema.allOf as Schema[]) this.check(v, s, ptr, errors, depth + 1);
    }
    if (Array.isArray(schema.anyOf)) {
      const branches = (schema.anyOf as Schema[]).map((s) => this.validate(v, s, ptr));
      if (!branches.some((b) => b.length === 0)) {
        fail(`matches no anyOf branch: ${branches.map((b) => b.map((e) => `${e.pointer} ${e.message}`).join('; ')).join(' | ')}`);
      }
    }
    if (Array.isArray(schema.oneOf)) {
      const branches = (schema.oneOf as Schema[]).map((s) => this.validate(v, s, ptr));
      const passing = branches.filter((b) => b.length === 0).length;
      if (passing !== 1) {
        fail(passing === 0
          ? `matches no oneOf branch: ${branches.map((b) => b.map((e) => `${e.pointer} ${e.message}`).join('; ')).join(' | ')}`
          : `matches ${passing} oneOf branches (exactly one expected)`);
      }
    }
  }
}

/** Every `$ref` string anywhere under `node`, with the JSON pointer where it occurs. */
export function collectRefs(node: unknown, ptr = ''): { pointer: string; ref: string }[] {
  const out: { pointer: string; ref: string }[] = [];
  const walk = (n: unknown, p: string): void => {
    if (Array.isArray(n)) n.forEach((x, i) => walk(x, `${p}/${i}`));
    else if (n !== null && typeof n === 'object') {
      for (const [k, v] of Object.entries(n)) {
        if (k === '$ref' && typeof v === 'string') out.push({ pointer: p, ref: v });
        else walk(v, `${p}/${escapePointer(k)}`);
      }
    }
  };
  walk(node, ptr);
  return out;
}

/** Schema keywords outside the supported subset, found anywhere in a schema tree (refs not followed). */
export function unsupportedKeywords(schema: unknown, ptr = ''): string[] {
  const out: string[] = [];
  const walk = (s: unknown, p: string): void => {
    if (s === null || typeof s !== 'object' || Array.isArray(s)) return;
    const o = s as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!KNOWN_KEYWORDS.has(k)) out.push(`${p}/${escapePointer(k)}`);
    if (o.properties && typeof o.properties === 'object') {
      for (const [k, v] of Object.entries(o.properties)) walk(v, `${p}/properties/${escapePointer(k)}`);
    }
    if (o.items && typeof o.items === 'object') walk(o.items, `${p}/items`);
    if (o.additionalProperties && typeof o.additionalProperties === 'object') walk(o.additionalProperties, `${p}/additionalProperties`);
    for (const key of ['oneOf', 'anyOf', 'allOf']) {
      if (Array.isArray(o[key])) (o[key] as unknown[]).forEach((x, i) => walk(x, `${p}/${key}/${i}`));
    }
  };
  walk(schema, ptr);
  return out;
}
