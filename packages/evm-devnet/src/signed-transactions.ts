import { Wallet, type JsonRpcProvider, type TransactionReceipt } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Sends transactions signed locally with explicit nonces, gas limits and fees, so ethers never estimates
 * gas (impossible for a call to a contract deployed in the same batch) nor caches a nonce.
 */

export interface PlannedTransaction {
  /** Names the step in error messages. */
  label: string;
  /** Absent for a contract creation. */
  to?: string;
  data: string;
  gasLimit: bigint;
  value?: bigint;
}

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

const PRIORITY_FEE = 1_000_000_000n;
const RECEIPT_POLL_MS = 20;

/** Twice the latest base fee plus a tip: enough for the next blocks on an otherwise idle devnet. */
export async function currentFees(provider: JsonRpcProvider): Promise<Fees> {
  const block = await provider.getBlock('latest');
  const baseFee = block?.baseFeePerGas ?? 0n;
  return { maxFeePerGas: baseFee * 2n + PRIORITY_FEE, maxPriorityFeePerGas: PRIORITY_FEE };
}

/** Signs `transactions` with consecutive nonces from `firstNonce` and submits them all at once. */
export async function submitInOrder(
  provider: JsonRpcProvider,
  privateKey: string,
  firstNonce: number,
  transactions: PlannedTransaction[],
  fees: Fees,
): Promise<string[]> {
  const wallet = new Wallet(privateKey);
  const chainId = (await provider.getNetwork()).chainId;
  const raws = await Promise.all(
    transactions.map((tx, i) =>
      wallet.signTransaction({ type: 2, chainId, nonce: firstNonce + i, value: 0n, ...fees, ...stripLabel(tx) }),
    ),
  );
  // One by one in nonce order rather than as a single JSON-RPC batch: the node never sees a nonce gap, and a
  // rejection names its step. Each send is a local round trip of about a millisecond.
  const hashes: string[] = [];
  for (const [i, raw] of raws.entries()) {
    try {
      hashes.push(await provider.send('eth_sendRawTransaction', [raw]));
    } catch (error) {
      throw new Error(`${transactions[i].label}: ${(error as Error).message}`);
    }
  }
  return hashes;
}

function stripLabel({ label: _label, ...tx }: PlannedTransaction): Omit<PlannedTransaction, 'label'> {
  return tx;
}

/** Waits for every receipt and fails naming the first step that reverted. */
export async function confirmAll(
  provider: JsonRpcProvider,
  hashes: string[],
  labels: string[],
  timeoutMs: number,
): Promise<TransactionReceipt[]> {
  const deadline = Date.now() + timeoutMs;
  const receipts: Array<TransactionReceipt | null> = hashes.map(() => null);
  for (;;) {
    const missing = hashes.flatMap((_hash, i) => (receipts[i] ? [] : [i]));
    if (missing.length === 0) break;
    // Issued in the same tick, so ethers sends them as one JSON-RPC batch.
    const found = await Promise.all(missing.map((i) => provider.getTransactionReceipt(hashes[i])));
    missing.forEach((i, k) => (receipts[i] = found[k]));
    if (found.some((r) => r === null)) {
      if (Date.now() > deadline) throw new Error(`no receipt within ${timeoutMs} ms for ${describeMissing(receipts, labels)}`);
      await sleep(RECEIPT_POLL_MS);
    }
  }
  const done = receipts as TransactionReceipt[];
  const failed = done.findIndex((r) => r.status !== 1);
  if (failed >= 0) throw new Error(`${labels[failed]} reverted (transaction ${hashes[failed]})`);
  return done;
}

function describeMissing(receipts: Array<TransactionReceipt | null>, labels: string[]): string {
  return labels.filter((_, i) => receipts[i] === null).join(', ');
}
