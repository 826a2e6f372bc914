import { format } from 'winston';

// Field names whose values are secrets; matched case-insensitively anywhere in a log entry.
const SECRET_KEY = /(private_?key|secret|password|api_?key)/i;

/** Error objects serialize to {} in JSON: keep what explains them. */
function describeError(err: Error): Record<string, unknown> {
  const { code, status } = err as Error & { code?: unknown; status?: unknown };
  return { name: err.name, message: err.message, stack: err.stack, ...(code !== undefined ? { code } : {}), ...(status !== undefined ? { status } : {}) };
}

function scrub(value: unknown, depth: number): unknown {
  if (depth > 8) return '[depth]';
  if (typeof value === 'string') return value;
  // duck-typed: errors from another realm (e.g. under a test runner) fail `instanceof Error`
  if (value instanceof Error || (typeof value === 'object' && value !== null && typeof (value as Error).message === 'string' && typeof (value as Error).stack === 'string')) {
    return scrub(describeError(value as Error), depth + 1);
  }
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = SECRET_KEY.test(key) ? '[redacted]' : scrub(inner, depth + 1);
    return out;
  }
  return value;
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
      else info[key] = scrub(info[key], 0);
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


