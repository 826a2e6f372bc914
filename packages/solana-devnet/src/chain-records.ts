import type { Commitment } from './slot-clock';
import type { uiTokenAmount } from './token-accounts';
import type { TransactionErrorJson } from './transaction-errors';
import type { WireTransaction } from './wire-transaction';

// What the local chain keeps and answers, apart from the chain itself: the JSON-RPC methods (rpc-methods.ts)
// read these through RpcChain (rpc-chain.ts), so they need not import local-solana-chain.ts, which imports them.

export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: ReturnType<typeof uiTokenAmount>;
}

/** A transaction that landed (succeeded, or failed in an instruction and paid its fee), as getTransaction reads it. */
export interface LandedTransaction {
  signature: string;
  slot: bigint;
  blockTime: number;
  /** undefined for an airdrop (LiteSVM credits it without a wire transaction). */
  tx?: WireTransaction;
  err: TransactionErrorJson | null;
  logs: string[];
  unitsConsumed: bigint;
  fee: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  innerInstructions: { index: number; instructions: { programIdIndex: number; accounts: number[]; data: Uint8Array; stackHeight: number }[] }[];
}

export interface SimulationResult {
  err: TransactionErrorJson | null;
  logs: string[];
  unitsConsumed: bigint;
  returnData: { programId: string; data: [string, 'base64'] } | null;
  innerInstructions: LandedTransaction['innerInstructions'];
  postAccounts: Map<string, { lamports: bigint; data: Uint8Array; owner: string; executable: boolean } | null>;
  fee: bigint;
}

export interface AccountWrite {
  address: string;
  lamports: bigint;
  data: Uint8Array;
  owner: string;
  executable?: boolean;
}

/** An account as getAccountInfo reads it. */
export interface ChainAccount {
  lamports: bigint;
  data: Uint8Array;
  owner: string;
  executable: boolean;
  space: bigint;
}

/** A landed transaction's status, as getSignatureStatuses reads it. */
export interface SignatureStatus {
  slot: bigint;
  confirmations: bigint | null;
  err: TransactionErrorJson | null;
  status: { Ok: null } | { Err: TransactionErrorJson };
  confirmationStatus: Commitment;
}

export interface LatestBlockhash {
  blockhash: string;
  lastValidBlockHeight: bigint;
}
