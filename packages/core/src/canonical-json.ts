/**
 * JSON with object keys sorted at every level and no whitespace: the form the webhook HMAC and the
 * idempotency request hash are computed over, so equal payloads always give equal text.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const inner = (value as Record<string, unknown>)[key];
      // defineProperty, not assignment: a key named "__proto__" (JSON.parse makes it an own property)
      // would otherwise set the prototype and vanish from the text, so two bodies would hash alike
      if (inner !== undefined) Object.defineProperty(sorted, key, { value: sortKeys(inner), enumerable: true, writable: true, configurable: true });
    }
    return sorted;
  }
  return value;
}
