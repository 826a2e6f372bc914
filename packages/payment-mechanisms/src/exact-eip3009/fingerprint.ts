import { createHash } from 'node:crypto';
import type { TransferAuthorization } from '@facilitator/core';

/**
 * The identity of one payment: everything the payer's EIP-712 signature covers (the token's domain is
 * fixed by chain and token, so these fields decide the signed digest). Two authorizations may share a
 * (payer, nonce) — the payer can sign both, only one can ever execute — but never a fingerprint unless
 * they pay the same merchant the same value under the same validity. A settle answer reports only the
 * settlement whose fingerprint is the one it was given (docs/decisions.md, "Payment identity").
 *
 * sha256 over "chainId:token:from:to:value:validAfter:validBefore:nonce" (addresses and nonce lowercase,
 * numbers in decimal): the migration that added the column computes the same text in SQL for old rows.
 */
export function authorizationFingerprint(chainId: number, tokenAddress: string, a: TransferAuthorization): string {
  const text = [chainId, tokenAddress, a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce].map(String).join(':').toLowerCase();
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
