import type { JsonRpcProvider, Wallet } from 'ethers';
import { fiatTokenInterface } from '@facilitator/evm-chain';
import { CliError, oneLine } from './errors';
import { setTimeout as sleep } from 'node:timers/promises';

export type ApproveProgress =
  | { kind: 'submitted'; hash: string; nonce: number }
  | { kind: 'waiting'; hash: string; elapsedMs: number }
  | { kind: 'mined'; hash: string; blockNumber: number; confirmations: number; required: number };

export interface ApproveRequest {
  /** the merchant's key, not yet connected */
  wallet: Wallet;
  provider: JsonRpcProvider;
  token: string;
  spender: string;
  amount: bigint;
  confirmations: number;
  timeoutMs?: number;
  pollMs?: number;
  onProgress?: (event: ApproveProgress) => void;
}

export interface ApproveReceipt {
  hash: string;
  blockNumber: number;
  gasUsed: bigint;
}

/**
 * Sends `approve(spender, amount)` from the merchant and waits for the confirmations asked for, reporting
 * each stage. ERC-20 approve sets the allowance (it does not add to it).
 */
export async function sendApprove(req: ApproveRequest): Promise<ApproveReceipt> {
  const { provider } = req;
  const signer = req.wallet.connect(provider);
  const data = fiatTokenInterface.encodeFunctionData('approve', [req.spender, req.amount]);
  let hash: string;
  let nonce: number;
  try {
    const tx = await signer.sendTransaction({ to: req.token, data });
    hash = tx.hash;
    nonce = tx.nonce;
  } catch (err) {
    throw new CliError(`approve was not sent: ${oneLine(err)}`);
  }
  req.onProgress?.({ kind: 'submitted', hash, nonce });

  const started = Date.now();
  const timeoutMs = req.timeoutMs ?? 180_000;
  let lastConfirmations = -1;
  for (;;) {
    const receipt = await provider.getTransactionReceipt(hash);
    if (receipt) {
      if (receipt.status !== 1) throw new CliError(`approve ${hash} reverted in block ${receipt.blockNumber}`);
      const latest = await provider.getBlockNumber();
      const confirmations = Math.max(1, latest - receipt.blockNumber + 1);
      if (confirmations !== lastConfirmations) {
        lastConfirmations = confirmations;
        req.onProgress?.({ kind: 'mined', hash, blockNumber: receipt.blockNumber, confirmations, required: req.confirmations });
      }
      if (confirmations >= req.confirmations) return { hash, blockNumber: receipt.blockNumber, gasUsed: receipt.gasUsed };
    } else {
      req.onProgress?.({ kind: 'waiting', hash, elapsedMs: Date.now() - started });
    }
    if (Date.now() - started > timeoutMs) {
      throw new CliError(`approve ${hash} is not confirmed after ${Math.round(timeoutMs / 1000)} s; it may still be: check later with "facilitator allowance"`);
    }
    await sleep(req.pollMs ?? 500);
  }
}
