import { registeredMechanisms, type X402Version } from '@facilitator/payment-mechanisms';

/**
 * What the request schemas and the OpenAPI document take of the payment mechanisms: each mechanism owns its
 * payload's schema, its marker and the x402 extensions it reads (`PaymentMechanism`); here they are composed,
 * from the registry, into what a request is checked against. Nothing here names a mechanism.
 */

/**
 * An x402 payload of `version` (`paymentPayload.payload`): the schema of the one registered mechanism of that
 * version whose `payloadMarker` the payload matches, else that of the mechanism without a marker (the default).
 * Chained `if`/`then`/`else` keeps ajv's errors to the one shape the client sent; the scheme then picks the
 * mechanism, which refuses a shape of another scheme. One mechanism: its schema as it is.
 */
export function x402PayloadSchema(version: X402Version): object {
  const mechanisms = registeredMechanisms().filter((m) => m.x402Versions.includes(version));
  const unmarked = mechanisms.filter((m) => m.payloadMarker === undefined);
  if (unmarked.length > 1) throw new Error(`x402 v${version}: ${unmarked.map((m) => m.id).join(' and ')} both take every payload (neither has a payloadMarker)`);
  // the default last: its schema is what a payload matching no marker is checked against
  const ordered = [...mechanisms.filter((m) => m.payloadMarker !== undefined), ...unmarked];
  const last = ordered.pop();
  if (!last) throw new Error(`x402 v${version}: no registered mechanism carries its payloads`);
  if (ordered.length === 0) return last.payloadSchema;
  const chain = ordered.reduceRight<object>((otherwise, m) => ({ if: m.payloadMarker, then: m.payloadSchema, else: otherwise }), last.payloadSchema);
  return { type: 'object', ...chain };
}

/** The x402 extensions the registered mechanisms read (each key once, in registration order): key to `info` schema. */
export function mechanismExtensionSchemas(): Record<string, object> {
  const extensions = registeredMechanisms().flatMap((m) => m.x402?.extensions ?? []);
  return Object.fromEntries(extensions.map(({ key, infoSchema }) => [key, { type: 'object', properties: { info: infoSchema }, additionalProperties: true }]));
}

/** How answers name the payer, in the payload of each registered mechanism (`vocabulary.payer`), each once. */
export function payerFieldsDescription(): string {
  return [...new Set(registeredMechanisms().map((m) => m.vocabulary.payer))].join(', or ');
}
