import { addressWord, decodeUint, encodeCall } from '@facilitator/chain-rpc';
import type { ContractReads } from '../chain-port';
import type { PayerApproval } from '../mechanism';
import { PERMIT2_ADDRESS } from './addresses';
import { selectorOf } from './selector';

const ALLOWANCE = selectorOf('allowance(address,address)');

/**
 * Permit2 moves a payer's token only as far as the payer approved Permit2 on the token itself (once, or by
 * an EIP-2612 permit sent with the payment): a signature beyond that approval verifies and can never
 * execute, and one approval is spent by every payment of the payer's through Permit2.
 */
export async function permit2Approval(token: string, payer: string, chain: Pick<ContractReads, 'readContract'>): Promise<PayerApproval> {
  const allowance = decodeUint(await chain.readContract(token, encodeCall(ALLOWANCE, [addressWord(payer), addressWord(PERMIT2_ADDRESS)])));
  return { token, spender: PERMIT2_ADDRESS, allowance };
}
