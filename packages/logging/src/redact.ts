import { format } from 'winston';

// Field names whose values are secrets; matched case-insensitively anywhere in a log entry.
const SECRET_KEY = /(private_?key|secret|password|api_?key)/i;
// Plain data nested deeper than this is cut; errors are always described, however deep they sit.
const MAX_DATA_DEPTH = 8;

// duck-typed: errors from another realm (e.g. under a test runner) fail `instanceof Error`
function isError(value: unknown): value is Error {
  if (value instanceof Error) return true;
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Error>;
  return typeof candidate.message === 'string' && typeof candidate.stack === 'string';
}

/**
 * Error objects serialize to {} in JSON: keep what explains them — name, message, code, status, stack,
 * the cause chain and an AggregateError's errors — plus any other own field (pg errors carry `detail`).
 */
function describeError(err: Error, depth: number, ancestors: Set<object>): Record<string, unknown> {
  const described: Record<string, unknown> = { name: err.name, message: err.message };
  const extra = err as Error & { code?: unknown; status?: unknown; cause?: unknown; errors?: unknown };
  if (extra.code !== undefined) described.code = scrub(extra.code, depth + 1, ancestors);
  if (extra.status !== undefined) described.status = scrub(extra.status, depth + 1, ancestors);
  described.stack = err.stack;
  for (const [key, inner] of Object.entries(err)) {
    if (key in described || key === 'cause' || key === 'errors') continue;
    described[key] = SECRET_KEY.test(key) ? '[redacted]' : scrub(inner, depth + 1, ancestors);
  }
  // the cause chain and nested errors keep the depth of the error holding them: each is described whole
  if (extra.cause !== undefined) described.cause = scrub(extra.cause, depth, ancestors);
  if (Array.isArray(extra.errors)) described.errors = extra.errors.map((inner) => scrub(inner, depth, ancestors));
  return described;
}

function scrub(value: unknown, depth: number, ancestors: Set<object>): unknown {
  if (typeof value !== 'object' || value === null) return typeof value === 'bigint' ? value.toString() : value;
  if (ancestors.has(value)) return '[circular]';
  if (!isError(value) && depth > MAX_DATA_DEPTH) return '[depth]';
  ancestors.add(value);
  try {
    if (isError(value)) return describeError(value, depth, ancestors);
    if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1, ancestors));
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = SECRET_KEY.test(key) ? '[redacted]' : scrub(inner, depth + 1, ancestors);
    return out;
  } finally {
    ancestors.delete(value);
  }
}

/**
 * Secrets never reach a log line: values under secret-looking keys are replaced, and free text is
 * searched for the known secrets themselves (the configured private keys and webhook secret).
 */
export function redactSecrets(knownSecrets: readonly string[]) {
  const secrets = knownSecrets.filter((s) => s.length >= 8);
  return format((info) => {
    for (const key of Object.keys(info)) {
      if (SECRET_KEY.test(key)) info[key] = '[redacted]';
      else info[key] = scrub(info[key], 0, new Set());
    }
    if (secrets.length > 0) {
      let text = JSON.stringify(info);
      let changed = false;
      for (const secret of secrets) {
        const bare = secret.replace(/^0x/, '');
        if (text.includes(bare)) {
          text = text.split(bare).join('[redacted]');
          changed = true;
        }
      }
      if (changed) {
        const cleaned = JSON.parse(text) as Record<string, unknown>;
        for (const key of Object.keys(cleaned)) info[key] = cleaned[key];
      }
    }
    return info;
  })();
}
