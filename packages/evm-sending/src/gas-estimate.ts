import type { JsonRpcProvider } from 'ethers';
import { GasCapExceededError, RpcUnavailableError, TransactionRejectedError, TransactionWouldRevertError } from './errors';
import { classifyNodeError, decodeRevert } from '@facilitator/evm-chain';
import type { TransactionRequest } from './transaction-provider';

/**
 * Dry-runs a transaction from its sending key before anything is stored, whoever signs it (our keys or an
 * external provider): its gas, or why it cannot be sent (TransactionWouldRevertError with the reason,
 * RpcUnavailableError, TransactionRejectedError).
 */
export async function estimateSendingGas(provider: JsonRpcProvider, chainId: number, tx: { from: string; to: string; data: string }): Promise<bigint> {
  try {
    // against the pending block: a transaction of ours already waiting there (a fee spending the same
    // allowance) is taken into account, so what cannot succeed after it is refused before it is sent
    return BigInt((await provider.send('eth_estimateGas', [{ from: tx.from, to: tx.to, data: tx.data }, 'pending'])) as string);
  } catch (error) {
    const classified = classifyNodeError(error);
    if (classified.category === 'execution_reverted') {
      const { reason, data } = decodeRevert(error);
      throw new TransactionWouldRevertError(reason, data, { cause: error });
    }
    if (classified.category === 'rpc_unavailable') throw new RpcUnavailableError(chainId, classified.message, { cause: error });
    throw new TransactionRejectedError(classified.category, classified.retryable, undefined, classified.message, { cause: error });
  }
}

/**
 * The gas limit to sign with: the request's own, else the estimate plus `marginPercent`, which never lifts it
 * above the request's cap (a transaction that needs more than its cap stops there). GasCapExceededError when
 * the estimate itself is above the cap.
 */
export function sendingGasLimit(estimate: bigint, request: Pick<TransactionRequest, 'gasCap' | 'gasLimit'>, marginPercent: number): bigint {
  if (request.gasCap !== undefined && estimate > request.gasCap) throw new GasCapExceededError(estimate, request.gasCap);
  const marginBasisPoints = BigInt(Math.round(marginPercent * 100));
  const withMargin = (estimate * (10_000n + marginBasisPoints) + 9_999n) / 10_000n;
  return request.gasLimit ?? (request.gasCap !== undefined && withMargin > request.gasCap ? request.gasCap : withMargin);
}
