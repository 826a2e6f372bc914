// A settlement row (and its verification) for the chain_transactions foreign key: what a transaction
// provider's test needs before it sends anything for a settlement id. The row itself is the db factories'.
import { IdPrefix, newId } from '@facilitator/core';
import type { Pool } from '@facilitator/db';
import { insertSettlementWithVerification, settlementWithVerification } from '@facilitator/db/testing';
import type { Devnet } from '@facilitator/evm-devnet';

/** Stores a fresh settlement of the devnet payer to its merchant; answers its id. */
export async function insertDevnetSettlement(pool: Pool, devnet: Devnet, fields: { amount?: string; feeAmount?: string } = {}): Promise<string> {
  const id = newId(IdPrefix.Settlement);
  const nonce = `0x${id.slice(4).padStart(64, '0')}`;
  await insertSettlementWithVerification(
    pool,
    settlementWithVerification({
      id,
      verificationId: newId(IdPrefix.Verification),
      paymentKey: null,
      surface: 'x402',
      chainId: devnet.chainId,
      tokenAddress: devnet.token.toLowerCase(),
      payer: devnet.accounts.payer.address.toLowerCase(),
      merchant: devnet.accounts.merchant.address.toLowerCase(),
      amount: fields.amount ?? '1000000',
      nonce,
      authorizationFingerprint: id,
      feeAmount: fields.feeAmount ?? '1000',
    }),
  );
  return id;
}
