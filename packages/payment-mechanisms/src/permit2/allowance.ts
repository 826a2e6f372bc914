import { addressWord, decodeUint, encodeCall } from '@facilitator/evm-chain';
import type { ContractReads } from '../chain-port';
import type { ApprovalPermit, PayerApproval } from '../mechanism';
import { PERMIT2_ADDRESS } from './addresses';
import { eip2612Nonce } from './eip2612';
import { selectorOf } from './selector';

const ALLOWANCE = selectorOf('allowance(address,address)');

/**
 * Permit2 moves a payer's token only as far as the payer approved Permit2 on the token itself (once, or by
 * an EIP-2612 permit sent with the payment): a signature beyond that approval verifies and can never
 * execute, and one approval is spent by every payment of the payer's through Permit2.
 */
export async function permit2Approval(token: string, payer: string, chain: Pick<ContractReads, 'readContract'>, permit?: ApprovalPermit): Promise<PayerApproval> {
  // a payment's EIP-2612 permit (checked by verification: the payer's, for Permit2 on this token) sets the
  // allowance to its value when sent with it, as long as its nonce is the token's next one
  const [allowance, nonce] = await Promise.all([
    chain.readContract(token, encodeCall(ALLOWANCE, [addressWord(payer), addressWord(PERMIT2_ADDRESS)])).then(decodeUint),
    permit ? eip2612Nonce(token, payer, chain) : undefined,
  ]);
  return { token, spender: PERMIT2_ADDRESS, allowance, ...(permit && nonce === permit.nonce ? { permit: permit.value } : {}) };
}
