import { addressWord, decodeUint, encodeCall } from '@facilitator/chain-rpc';
import type { ContractReads } from '../chain-port';
import type { MissingApproval } from '../mechanism';
import { PERMIT2_ADDRESS } from './addresses';
import { selectorOf } from './selector';

const ALLOWANCE = selectorOf('allowance(address,address)');

/**
 * Permit2 moves a payer's token only as far as the payer approved Permit2 on the token itself (once, or by
 * an EIP-2612 permit sent with the payment): a signature without that approval verifies and can never
 * execute. Undefined when the approval covers `required`.
 */
export async function missingPermit2Approval(token: string, payer: string, required: bigint, chain: Pick<ContractReads, 'readContract'>): Promise<MissingApproval | undefined> {
  const allowance = decodeUint(await chain.readContract(token, encodeCall(ALLOWANCE, [addressWord(payer), addressWord(PERMIT2_ADDRESS)])));
  return allowance >= required ? undefined : { token, spender: PERMIT2_ADDRESS, allowance, required };
}
