import { InvalidRequestError } from '@facilitator/core';

/** Deeper than any real request; free-form fields (metadata) would otherwise let a body nest without end. */
const MAX_JSON_DEPTH = 32;

interface JsonProblem {
  kind: 'too_deep' | 'unstorable_text';
  /** JSON Pointer of the offending value ("" is the body) */
  path: string;
  message: string;
}

/**
 * Walks a parsed body once, without recursion (a hostile body cannot overflow the stack), for what the
 * schemas cannot express: nesting beyond MAX_JSON_DEPTH, and text Postgres cannot store in jsonb
 * (NUL characters, unpaired UTF-16 surrogates) in keys or values — requests are kept with their records.
 */
export function findJsonProblem(value: unknown): JsonProblem | undefined {
  const stack: Array<[unknown, number, string]> = [[value, 1, '']];
  while (stack.length > 0) {
    const [node, depth, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (!storable(node)) return unstorable(path);
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (depth > MAX_JSON_DEPTH) {
      return { kind: 'too_deep', path, message: `request body is nested more than ${MAX_JSON_DEPTH} levels deep` };
    }
    for (const [key, child] of Object.entries(node)) {
      if (!storable(key)) return unstorable(path);
      stack.push([child, depth + 1, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`]);
    }
  }
  return undefined;
}

function storable(text: string): boolean {
  return !text.includes('\u0000') && text.isWellFormed();
}

function unstorable(path: string): JsonProblem {
  return { kind: 'unstorable_text', path, message: `the text at ${path || '(body)'} contains a NUL character or an unpaired UTF-16 surrogate` };
}

export function assertStorableJson(value: unknown): void {
  const problem = findJsonProblem(value);
  if (problem) throw new InvalidRequestError(problem.message, problem.kind === 'unstorable_text' ? { errors: [{ path: problem.path, message: 'contains a NUL character or an unpaired UTF-16 surrogate' }] } : undefined);
}
