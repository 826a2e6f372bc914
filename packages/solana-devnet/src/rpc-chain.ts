import type { AccountWrite, ChainAccount, LandedTransaction, LatestBlockhash, SignatureStatus, SimulationResult } from './chain-records';
import type { Commitment, SlotClock } from './slot-clock';

/**
 * The chain the JSON-RPC methods answer from (LocalSolanaChain): named here so rpc-methods.ts does not import
 * local-solana-chain.ts, which starts the server with those methods.
 */
export interface RpcChain {
  slot(commitment?: Commitment): bigint;
  blockHeight(commitment?: Commitment): bigint;
  epochInfo(commitment?: Commitment): ReturnType<SlotClock['epochInfo']> & { transactionCount: bigint };
  latestBlockhash(commitment?: Commitment): LatestBlockhash;
  isBlockhashValid(blockhash: string): boolean;
  minimumBalanceForRentExemption(length: number): bigint;
  getAccount(address: string): ChainAccount | null;
  programAccounts(program: string): (ChainAccount & { address: string })[];
  mintDecimals(mint: string): number | undefined;
  airdrop(recipient: string, amount: bigint): string;
  simulate(wire: Uint8Array, options?: { sigVerify?: boolean; replaceRecentBlockhash?: boolean }): SimulationResult & { replacementBlockhash?: LatestBlockhash };
  send(wire: Uint8Array, options?: { skipPreflight?: boolean }): string;
  signatureStatus(signature: string): SignatureStatus | null;
  landedTransaction(signature: string, commitment?: Commitment): LandedTransaction | null;
  // the test controls
  advanceSlots(count: number): void;
  dropNextSend(count?: number): void;
  setAccount(account: AccountWrite): void;
}
