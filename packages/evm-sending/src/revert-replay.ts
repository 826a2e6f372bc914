import type { JsonRpcProvider } from 'ethers';
import { RpcUnavailableError } from './errors';
import type { MinedTransactionReceipt } from './mined-receipt';
import { classifyNodeError, decodeRevert } from '@facilitator/evm-chain';

interface MinedCall {
  from: string;
  to: string;
  data: string;
  /** the gas limit it was signed with */
  gasLimit: bigint;
}

/**
 * Why a mined transaction reverted: replays it as a call on the state after its block, which reproduces
 * reverts caused by earlier transactions of the same block. Undefined when the replay does not revert.
 * RpcUnavailableError when the node cannot answer: a flapping node must not cost us the reason for good.
 */
export async function replayRevertReason(
  provider: JsonRpcProvider,
  chainId: number,
  call: MinedCall,
  receipt: MinedTransactionReceipt,
): Promise<string | undefined> {
  if (receipt.gasUsed >= call.gasLimit) return 'out of gas';
  try {
    await provider.call({ from: call.from, to: call.to, data: call.data, gasLimit: call.gasLimit, blockTag: receipt.blockNumber });
    return undefined;
  } catch (error) {
    const classified = classifyNodeError(error);
    if (classified.category === 'rpc_unavailable') throw new RpcUnavailableError(chainId, classified.message, { cause: error });
    if (classified.category !== 'execution_reverted') return undefined;
    return decodeRevert(error).reason;
  }
}
