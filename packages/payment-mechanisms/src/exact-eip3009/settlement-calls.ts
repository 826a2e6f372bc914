import { paidBetween, tokenSignature } from '@facilitator/evm-chain';
import type { TokenAuthorizationCalls } from '../chain-port';
import type { DirectCall, Execution, LogLike, MechanismNetwork, NonceIdentity, ParsedPayment } from '../mechanism';
import type { ExactEip3009Payload } from './parse';
import { transferWithAuthorizationData } from './token-calls';

// EIP-3009 settles through the token's own calls: its reads go through UsdcClient exactly as the steps made
// them before the seam (the settlement tests assert those calls), its transfer's calldata is encoded here
// (token-calls.ts), byte for byte as UsdcClient encoded it before.

/** authorizationState: true once used or cancelled */
export function isAuthorizationUsed(nonce: NonceIdentity, chain: Pick<TokenAuthorizationCalls, 'isAuthorizationUsed'>): Promise<boolean> {
  return chain.isAuthorizationUsed(nonce.payer, nonce.value);
}

/** transferWithAuthorization on the token; the token knows nothing of ERC-6492, so it gets the inner signature */
export function transferWithAuthorizationCall({ payload }: ParsedPayment<ExactEip3009Payload>, chain: TokenAuthorizationCalls): DirectCall {
  return {
    to: chain.tokenAddress,
    data: transferWithAuthorizationData(payload.authorization, tokenSignature(payload.signature)),
    gasKind: 'transferWithAuthorization',
  };
}

/**
 * Every transfer of the token from the payer to the payee in the transaction: a direct call moves this
 * payment and nothing else. (Someone else's transaction is read by findExecution, which pairs the transfer
 * with this very authorization's AuthorizationUsed instead.)
 */
export function paidByTransfers(logs: readonly LogLike[], { terms }: ParsedPayment<ExactEip3009Payload>, network: MechanismNetwork): bigint {
  return paidBetween(logs, network.tokenAddress, terms.payer, terms.payee);
}

/** the token's AuthorizationUsed(payer, nonce) log, and the transfer right after it */
export async function authorizationUse({ terms }: ParsedPayment<ExactEip3009Payload>, chain: TokenAuthorizationCalls): Promise<Execution | undefined> {
  const use = await chain.findAuthorizationUse(terms.payer, terms.nonce.value, terms.payee);
  if (!use) return undefined;
  return { txHash: use.transactionHash, block: use.blockNumber, ...(use.to === undefined ? {} : { to: use.to }), paidToPayee: use.paidToMerchant };
}
