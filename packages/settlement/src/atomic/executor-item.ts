import { tokenSignature } from '@facilitator/chain-rpc';
import { EXACT_EIP3009 } from '@facilitator/core';
import type { ExactEip3009Payload } from '@facilitator/payment-mechanisms';
import type { ExecutorItem } from '@facilitator/settlement-contract';
import type { SettlementPayment } from '../payment';

/**
 * Whether the settlement executor can run the payment: it calls the token's transferWithAuthorization
 * itself, so only EIP-3009 payments are its items; any other takes the sequential path.
 */
export function hasExecutorItem({ mechanism }: SettlementPayment): boolean {
  return mechanism.id === EXACT_EIP3009;
}

/** The payment as an item of the executor, given the fee's and its transfer's gas; undefined when it has none. */
export function executorItemOf(payment: SettlementPayment, gas: bigint): ExecutorItem | undefined {
  if (!hasExecutorItem(payment)) return undefined;
  const { authorization, signature } = payment.parsed.payload as ExactEip3009Payload;
  // the token knows nothing of ERC-6492: the wallet, deployed first, checks its own signature
  return { ...authorization, signature: tokenSignature(signature), gas };
}
