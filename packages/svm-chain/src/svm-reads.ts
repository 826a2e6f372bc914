import {
  address,
  createSolanaRpc,
  getBase64Encoder,
  signature as toSignature,
  type Address,
  type Base64EncodedWireTransaction,
  type Blockhash,
  type Commitment,
  type Rpc,
  type SolanaRpcApi,
} from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { READ_COMMITMENT } from './commitments';
import { decodeTokenAccount, type SvmTokenAccount } from './token-account';
import { tokenBalanceChanges, type SvmTokenBalanceChange } from './token-balance-changes';
import type { SvmTransactionError } from './transaction-error';

/** An account as getAccountInfo answers it: the program that owns it and its bytes (what chain-facts' mintProblem takes). */
export interface SvmAccount {
  readonly owner: Address;
  readonly data: Uint8Array;
  readonly lamports: bigint;
}

export interface SvmSignatureStatus {
  /** null when the node has the status but not its commitment level (old ledger entries) */
  readonly confirmationStatus: Commitment | null;
  readonly err: SvmTransactionError | null;
  readonly slot: bigint;
}

export interface SvmLatestBlockhash {
  readonly blockhash: string;
  /** the last block height a transaction carrying this blockhash can land in */
  readonly lastValidBlockHeight: bigint;
}

/** A landed transaction (succeeded, or failed in an instruction after paying its fee). */
export interface SvmLandedTransaction {
  readonly slot: bigint;
  readonly err: SvmTransactionError | null;
  /** lamports the fee payer paid */
  readonly fee: bigint;
  readonly tokenBalanceChanges: readonly SvmTokenBalanceChange[];
}

export interface SvmSimulation {
  readonly err: SvmTransactionError | null;
  readonly logs: readonly string[];
  readonly unitsConsumed?: bigint;
}

/**
 * Every read the Solana family's settlement makes of a chain (the counterpart of evm-chain's readers for EVM).
 * A port: the JSON-RPC implementation is RpcSvmReads; a test may stand in with its own. Each method reads once.
 */
export interface SvmReads {
  /** the initialised token account at `account`, undefined when none is (no account, or not a token account) */
  tokenAccount(account: string): Promise<SvmTokenAccount | undefined>;
  /** the mint account's owner and raw bytes (chain-facts' `mintProblem` judges them), undefined when none exists */
  mint(mint: string): Promise<SvmAccount | undefined>;
  /** any account's owner and raw bytes (chain-facts' `payToAccountProblem` judges the payTo's token account's), undefined when none exists */
  account(account: string): Promise<SvmAccount | undefined>;
  /** the associated token account of (owner, mint, token program): derived, nothing is read */
  associatedTokenAccount(owner: string, mint: string, tokenProgram: string): Promise<Address>;
  /** the signature's status; `searchTransactionHistory` looks past the node's recent status cache (about 300 slots) */
  signatureStatus(signature: string, options?: { searchTransactionHistory?: boolean }): Promise<SvmSignatureStatus | undefined>;
  /** whether a transaction carrying `blockhash` can still land (asked of the newest bank) */
  blockhashValid(blockhash: string): Promise<boolean>;
  latestBlockhash(): Promise<SvmLatestBlockhash>;
  /** the block height at `commitment` (expiry is decided against the finalized one) */
  blockHeight(commitment: Commitment): Promise<bigint>;
  /** a landed transaction's effects, once it has reached `commitment` (confirmed by default) */
  transaction(signature: string, commitment?: 'confirmed' | 'finalized'): Promise<SvmLandedTransaction | undefined>;
  /** simulates a base64 wire transaction on its own blockhash; `sigVerify` for a fully signed one */
  simulate(transaction: string, options?: { sigVerify?: boolean }): Promise<SvmSimulation>;
  /** lamports at `account` (0 when there is no account) */
  solBalance(account: string): Promise<bigint>;
}

export type SvmRpc = Rpc<SolanaRpcApi>;

const base64 = getBase64Encoder();

/** SvmReads over a node's JSON-RPC (kit's rpc), each call at the commitment READ_COMMITMENT names for it. */
export class RpcSvmReads implements SvmReads {
  readonly rpc: SvmRpc;

  constructor(rpc: string | SvmRpc) {
    this.rpc = typeof rpc === 'string' ? createSolanaRpc(rpc) : rpc;
  }

  async account(account: string): Promise<SvmAccount | undefined> {
    const { value } = await this.rpc.getAccountInfo(address(account), { encoding: 'base64', commitment: READ_COMMITMENT.accounts }).send();
    if (!value) return undefined;
    return { owner: value.owner, data: Uint8Array.from(base64.encode(value.data[0])), lamports: value.lamports };
  }

  async tokenAccount(account: string): Promise<SvmTokenAccount | undefined> {
    const found = await this.account(account);
    return found && decodeTokenAccount(found.owner, found.data);
  }

  mint(mint: string): Promise<SvmAccount | undefined> {
    return this.account(mint);
  }

  async associatedTokenAccount(owner: string, mint: string, tokenProgram: string): Promise<Address> {
    const [ata] = await findAssociatedTokenPda({ owner: address(owner), mint: address(mint), tokenProgram: address(tokenProgram) });
    return ata;
  }

  async signatureStatus(signature: string, options: { searchTransactionHistory?: boolean } = {}): Promise<SvmSignatureStatus | undefined> {
    const { value } = await this.rpc.getSignatureStatuses([toSignature(signature)], { searchTransactionHistory: options.searchTransactionHistory ?? false }).send();
    const status = value[0];
    if (!status) return undefined;
    return { confirmationStatus: status.confirmationStatus, err: status.err, slot: status.slot };
  }

  async blockhashValid(blockhash: string): Promise<boolean> {
    const { value } = await this.rpc.isBlockhashValid(blockhash as Blockhash, { commitment: READ_COMMITMENT.blockhashValidity }).send();
    return value;
  }

  async latestBlockhash(): Promise<SvmLatestBlockhash> {
    const { value } = await this.rpc.getLatestBlockhash({ commitment: READ_COMMITMENT.latestBlockhash }).send();
    return { blockhash: value.blockhash, lastValidBlockHeight: value.lastValidBlockHeight };
  }

  blockHeight(commitment: Commitment): Promise<bigint> {
    return this.rpc.getBlockHeight({ commitment }).send();
  }

  async transaction(signature: string, commitment: 'confirmed' | 'finalized' = READ_COMMITMENT.transaction): Promise<SvmLandedTransaction | undefined> {
    const landed = await this.rpc.getTransaction(toSignature(signature), { commitment, encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    if (!landed) return undefined;
    const { meta, transaction, slot } = landed;
    if (!meta) throw new Error(`the node answered transaction ${signature} without its status metadata`);
    // the node numbers accounts as the message's static keys, then the lookup tables' writable and readonly ones
    const loaded = meta.loadedAddresses ?? { writable: [], readonly: [] };
    const keys = [...transaction.message.accountKeys, ...loaded.writable, ...loaded.readonly];
    return { slot, err: meta.err, fee: meta.fee, tokenBalanceChanges: tokenBalanceChanges(keys, meta.preTokenBalances ?? [], meta.postTokenBalances ?? []) };
  }

  async simulate(transaction: string, options: { sigVerify?: boolean } = {}): Promise<SvmSimulation> {
    const { value } = await this.rpc
      .simulateTransaction(transaction as Base64EncodedWireTransaction, {
        encoding: 'base64',
        commitment: READ_COMMITMENT.simulation,
        sigVerify: options.sigVerify ?? false,
        // the transaction's own blockhash: a simulation on a fresh one would pass a transaction that can no longer land
        replaceRecentBlockhash: false,
      })
      .send();
    return { err: value.err, logs: value.logs ?? [], ...(value.unitsConsumed !== undefined ? { unitsConsumed: value.unitsConsumed } : {}) };
  }

  async solBalance(account: string): Promise<bigint> {
    const { value } = await this.rpc.getBalance(address(account), { commitment: READ_COMMITMENT.accounts }).send();
    return value;
  }
}
