import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { InvalidRequestError } from '@facilitator/core';

// strictRequired is off because `anyOf: [{ required: [...] }]` names properties defined one level up.
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true, verbose: true });
addFormats(ajv);

interface RequestProblem {
  /** JSON Pointer into the request body ("" is the body itself) */
  path: string;
  message: string;
}

function describe(error: ErrorObject): RequestProblem {
  const path = error.instancePath;
  switch (error.keyword) {
    case 'required':
      return { path: `${path}/${(error.params as { missingProperty: string }).missingProperty}`, message: 'is required' };
    case 'additionalProperties':
      return {
        path: `${path}/${(error.params as { additionalProperty: string }).additionalProperty}`,
        message: 'is not an allowed field',
      };
    case 'const':
      return { path, message: `must be ${JSON.stringify((error.params as { allowedValue: unknown }).allowedValue)}` };
    case 'pattern':
      return { path, message: `${error.message ?? 'has the wrong format'}${error.parentSchema?.description ? ` (${error.parentSchema.description})` : ''}` };
    case 'oneOf':
      // "must match exactly one schema in oneOf" says nothing to a client: the schema's description says which
      return { path, message: (error.parentSchema?.description as string | undefined) ?? error.message ?? 'is invalid' };
    default:
      return { path, message: error.message ?? 'is invalid' };
  }
}

/** At most this many problems are listed, so a hostile body cannot make the answer huge. */
const MAX_PROBLEMS = 20;

function problemsOf(validate: ValidateFunction): RequestProblem[] {
  const problems = (validate.errors ?? [])
    // anyOf and oneOf repeat their branches' errors; the summary line says it better
    .filter((e) => !(e.keyword === 'required' && (e.schemaPath.includes('/anyOf/') || e.schemaPath.includes('/oneOf/'))))
    // "must match \"then\" schema" only repeats that the branch's own errors, listed too, are errors
    .filter((e) => e.keyword !== 'if')
    .map(describe);
  const unique = [...new Map(problems.map((p) => [`${p.path}|${p.message}`, p])).values()];
  return unique.slice(0, MAX_PROBLEMS);
}

type Validator<T> = (body: unknown) => T;

/** Compiles a schema into a function that returns the typed body or throws a 400 listing each problem. */
export function compileValidator<T>(schema: object, what: string): Validator<T> {
  const validate = ajv.compile(schema);
  return (body: unknown): T => {
    if (validate(body)) return body as T;
    throw new InvalidRequestError(`invalid ${what}`, { errors: problemsOf(validate) });
  };
}
