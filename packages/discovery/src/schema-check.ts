import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';

/** Compiled schemas kept, by their JSON: a merchant's route sends the same schema with every payment. */
const CACHE_SIZE = 256;
const cache = new Map<string, { schema: object; compiled: ValidateFunction | { error: string } }>();
const ajv = new Ajv2020({ strict: false, allErrors: false, validateSchema: true, addUsedSchema: false });

/** The longest regular expression a schema may use (`pattern`, `patternProperties`). */
export const MAX_PATTERN_LENGTH = 256;
// a quantified group that itself contains a quantifier or an alternation ((a+)+, (a|aa)*, (\w+\s?)*): the
// shapes of catastrophic backtracking. Conservative on purpose: such a pattern is refused, never run
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[+*}|](?:[^()\\]|\\.)*\)\s*[+*{]/;

export interface InfoProblem {
  field: string;
  reason: string;
}

/** Walks the schema for what must not be compiled: external references, and regular expressions that backtrack. */
function schemaProblem(schema: unknown): InfoProblem | undefined {
  const stack: Array<[unknown, string]> = [[schema, 'extensions.bazaar.schema']];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (Array.isArray(node)) {
      node.forEach((child, i) => stack.push([child, `${path}[${i}]`]));
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    for (const [key, value] of Object.entries(node)) {
      const at = `${path}.${key}`;
      if ((key === '$ref' || key === '$id' || key === '$dynamicRef') && (typeof value !== 'string' || !value.startsWith('#'))) {
        return { field: at, reason: 'the schema must not reference anything outside itself ($ref/$id not starting with #)' };
      }
      const patterns = key === 'pattern' ? [value] : key === 'patternProperties' && value && typeof value === 'object' ? Object.keys(value) : [];
      for (const pattern of patterns) {
        if (typeof pattern !== 'string') continue;
        if (pattern.length > MAX_PATTERN_LENGTH) return { field: at, reason: `a pattern longer than ${MAX_PATTERN_LENGTH} characters is not evaluated` };
        if (NESTED_QUANTIFIER.test(pattern)) return { field: at, reason: 'a pattern with a quantified group containing a quantifier or an alternation (catastrophic backtracking) is not evaluated' };
      }
      stack.push([value, at]);
    }
  }
  return undefined;
}

/** A JSON Pointer of ajv's (`/input/queryParams/city`) as the field of `info` at fault. */
function fieldOf(instancePath: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  return ['extensions.bazaar.info', ...parts.map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))].join('').replace(/\.\[/g, '[');
}

/**
 * `info` checked against the declaration's own `schema` (JSON Schema 2020-12, as `@x402/extensions`'
 * `validateDiscoveryExtension`): the first problem, with the field of `info` at fault; undefined when it holds.
 */
export function validateInfo(info: unknown, schema: Record<string, unknown>): InfoProblem | undefined {
  const unsafe = schemaProblem(schema);
  if (unsafe) return unsafe;
  const key = JSON.stringify(schema);
  let entry = cache.get(key);
  if (entry === undefined) {
    let compiled: ValidateFunction | { error: string };
    try {
      compiled = ajv.compile(schema);
    } catch (err) {
      compiled = { error: (err as Error).message.slice(0, 300) };
    }
    if (cache.size >= CACHE_SIZE) {
      // Ajv keeps every schema it compiled: the one leaving this cache leaves Ajv's too, or strangers' schemas pile up
      const [oldest, evicted] = cache.entries().next().value as [string, { schema: object }];
      cache.delete(oldest);
      ajv.removeSchema(evicted.schema);
    }
    entry = { schema, compiled };
    cache.set(key, entry);
  }
  const compiled = entry.compiled;
  if ('error' in compiled) return { field: 'extensions.bazaar.schema', reason: `the schema is not a valid JSON Schema: ${compiled.error}` };
  if (compiled(info)) return undefined;
  const [first] = compiled.errors ?? [];
  if (!first) return { field: 'extensions.bazaar.info', reason: 'info does not match its schema' };
  const field = first.keyword === 'required' ? `${fieldOf(first.instancePath)}.${(first.params as { missingProperty: string }).missingProperty}` : fieldOf(first.instancePath);
  const detail =
    first.keyword === 'additionalProperties'
      ? `${first.message} (${(first.params as { additionalProperty: string }).additionalProperty})`
      : first.keyword === 'enum'
        ? `${first.message}: ${(first.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
        : (first.message ?? 'does not match its schema');
  return { field, reason: `does not match the declaration's schema: ${detail}` };
}
