import { InvalidRequestError } from '@facilitator/core';

/** Deeper than any real request; free-form fields (metadata) would otherwise let a body nest without end. */
export const MAX_JSON_DEPTH = 32;

/** Depth of a parsed JSON value, measured without recursion so a hostile body cannot overflow the stack. */
export function jsonDepth(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_JSON_DEPTH) return deepest;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

export function assertShallowJson(value: unknown): void {
  if (jsonDepth(value) > MAX_JSON_DEPTH) {
    throw new InvalidRequestError(`request body is nested more than ${MAX_JSON_DEPTH} levels deep`);
  }
}
