import { Wallet, type JsonRpcProvider, type TransactionReceipt } from 'ethers';
import { confirmAll, currentFees, submitInOrder, type PlannedTransaction } from './signed-transactions';

export type SendAndConfirm = (privateKey: string, tx: PlannedTransaction) => Promise<TransactionReceipt>;

/**
 * Sends one transaction at a time per account and waits for its receipt before the next, so the
 * pending nonce read from the node is always right, even when a test fires helpers concurrently.
 * (Transactions the test sends itself from the same account can still collide.)
 */
export function serialSender(provider: JsonRpcProvider, timeoutMs: number): SendAndConfirm {
  const queues = new Map<string, Promise<unknown>>();
  return (privateKey, tx) => {
    const address = new Wallet(privateKey).address;
    const send = async () => {
      const [nonce, fees] = await Promise.all([provider.getTransactionCount(address, 'pending'), currentFees(provider)]);
      const hashes = await submitInOrder(provider, privateKey, nonce, [tx], fees);
      const [receipt] = await confirmAll(provider, hashes, [tx.label], timeoutMs);
      return receipt;
    };
    const result = (queues.get(address) ?? Promise.resolve()).then(send, send);
    queues.set(address, result);
    return result;
  };
}
