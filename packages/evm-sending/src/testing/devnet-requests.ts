// The two legs of a settlement as TransactionRequests on a devnet (Circle's USDC on anvil), for the
// transaction providers' tests: every provider (local keys, OpenZeppelin Relayer) is tested with the same
// requests, built here once.
import { fiatTokenInterface } from '@facilitator/evm-chain';
import type { TransferAuthorization } from '@facilitator/core';
import { Interface } from 'ethers';
import type { Devnet, DevnetAccount } from '@facilitator/evm-devnet';
import type { TransactionRequest } from '../transaction-provider';

/** EIP-3009's `bytes` overload on the devnet's token: a payer's leg as any caller may send it (the mechanisms encode their own). */
const transferWithAuthorizationBytes = new Interface([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
]);

/** The fee leg: transferFrom(merchant, treasury, amount) sent by the treasury. */
export function feeLegRequest(devnet: Devnet, settlementId: string, amount = 1_000n, merchant = devnet.accounts.merchant.address): TransactionRequest {
  const { treasury } = devnet.accounts;
  return {
    settlementId,
    purpose: 'fee',
    chainId: devnet.chainId,
    from: treasury.address,
    to: devnet.token,
    data: fiatTokenInterface.encodeFunctionData('transferFrom', [merchant, treasury.address, amount]),
  };
}

/** The payer's leg for an authorization already signed: transferWithAuthorization sent by `sender`. */
export function transferLegRequestFor(
  devnet: Devnet,
  settlementId: string,
  a: TransferAuthorization,
  signature: string,
  sender: DevnetAccount = devnet.accounts.relayers[0],
): TransactionRequest {
  return {
    settlementId,
    purpose: 'transfer',
    chainId: devnet.chainId,
    from: sender.address,
    to: devnet.token,
    data: transferWithAuthorizationBytes.encodeFunctionData('transferWithAuthorization', [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature]),
  };
}

/** The payer's leg: a fresh authorization of `value` from the devnet payer to its merchant, sent by `sender`. */
export async function transferLegRequest(devnet: Devnet, settlementId: string, value: bigint, sender: DevnetAccount = devnet.accounts.relayers[0]): Promise<TransactionRequest> {
  const signed = await devnet.signTransferAuthorization(devnet.accounts.payer.privateKey, { to: devnet.accounts.merchant.address, value });
  return transferLegRequestFor(devnet, settlementId, signed.authorization, signed.signature, sender);
}
