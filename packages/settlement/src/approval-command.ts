import { networkByChainId } from '@facilitator/core';

/** How many settlements the suggested allowance covers. */
const SUGGESTED_SETTLEMENTS = 100n;

/**
 * The commands a merchant can paste to grant the fee allowance: our CLI's, and the equivalent Foundry
 * `cast send` line. Both sign with the merchant's own key, which we never see.
 */
export function approvalCommands(chainId: number, token: string, treasury: string, feeAmount: bigint) {
  const network = networkByChainId(chainId);
  const amount = (feeAmount * SUGGESTED_SETTLEMENTS).toString();
  return {
    approvalCommand: `facilitator approve --network ${network?.caip2 ?? `eip155:${chainId}`} --treasury ${treasury} --settlements ${SUGGESTED_SETTLEMENTS}`,
    approvalCommandCast:
      `cast send ${token} "approve(address,uint256)" ${treasury} ${amount}` +
      ` --rpc-url ${network?.publicRpcUrl ?? '$RPC_URL'} --private-key $MERCHANT_PRIVATE_KEY`,
  };
}
