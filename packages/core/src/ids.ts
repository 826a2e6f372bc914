import { randomBytes } from 'node:crypto';

/**
 * Record identifiers: a type prefix and 128 random bits in hex (e.g. `ver_3f…`, 36 characters).
 * Unguessable, so an id alone reveals nothing; prefixed, so a support engineer sees what it names.
 */
export const IdPrefix = {
  Verification: 'ver',
  Settlement: 'stl',
  WebhookEvent: 'evt',
  ChainTransaction: 'ctx',
  SettlementBatch: 'bat',
} as const;

export type IdPrefix = (typeof IdPrefix)[keyof typeof IdPrefix];

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}

export function isId(prefix: IdPrefix, text: string): boolean {
  return text.length === prefix.length + 33 && text.startsWith(`${prefix}_`) && /^[0-9a-f]{32}$/.test(text.slice(prefix.length + 1));
}
