import { Transaction } from 'ethers';
import { classifyNodeError } from '@facilitator/evm-chain';
import { minedReceiptFromRpc } from '@facilitator/evm-sending';
import type { FinalityChain } from '@facilitator/settlement';

interface RawProvider {
  send(method: string, params: unknown[]): Promise<unknown>;
}

/**
 * The reorg watcher's chain access, over each network's failover provider (raw JSON-RPC answers), and its
 * token client, through which a payment's mechanism finds who executed it.
 */
export function finalityChain(providers: ReadonlyMap<number, RawProvider>, tokens: ReadonlyMap<number, ReturnType<FinalityChain['mechanismChain']>>): FinalityChain {
  const provider = (chainId: number) => {
    const found = providers.get(chainId);
    if (!found) throw new Error(`chain ${chainId} is not enabled`);
    return found;
  };
  const receipt: FinalityChain['receipt'] = async (chainId, hash) => {
    const mined = minedReceiptFromRpc(await provider(chainId).send('eth_getTransactionReceipt', [hash]));
    return mined && { blockNumber: mined.blockNumber, blockHash: mined.blockHash, status: mined.status === 1 ? 'confirmed' : 'reverted', logs: mined.logs };
  };
  return {
    head: async (chainId) => Number(BigInt((await provider(chainId).send('eth_blockNumber', [])) as string)),
    async blockHash(chainId, blockNumber) {
      const block = (await provider(chainId).send('eth_getBlockByNumber', [`0x${blockNumber.toString(16)}`, false])) as { hash?: string } | null;
      return block?.hash ?? null;
    },
    receipt,
    mechanismChain(chainId) {
      const token = tokens.get(chainId);
      if (!token) throw new Error(`chain ${chainId} is not enabled`);
      return token;
    },
    async rebroadcast(chainId, rawTransaction, hash) {
      try {
        await provider(chainId).send('eth_sendRawTransaction', [rawTransaction]);
        return 'sent';
      } catch (error) {
        const { category } = classifyNodeError(error);
        if (category === 'already_known') return 'sent';
        if (category !== 'nonce_too_low') throw error;
        // the nonce is used (some endpoint says so): by this very transaction, mined again meanwhile, or by
        // another one of the key. Asked in this order, an endpoint that counts the nonce as used has the
        // block using it, so its "no receipt" means another transaction; one that does not count it yet (it
        // lags) knows nothing of that block, and its "no receipt" is no verdict.
        const { from, nonce } = Transaction.from(rawTransaction);
        const used = BigInt((await provider(chainId).send('eth_getTransactionCount', [from, 'latest'])) as string);
        if ((await receipt(chainId, hash)) || used <= BigInt(nonce)) return 'sent';
        return 'nonce_taken';
      }
    },
  };
}
