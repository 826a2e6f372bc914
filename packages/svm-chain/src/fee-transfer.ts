import type { Ed25519Signer } from '@facilitator/signers';
import {
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getU32Encoder,
  getU64Encoder,
  getUtf8Encoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type Instruction,
  type TransactionPartialSigner,
} from '@solana/kit';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstructionAsync, getTransferCheckedInstruction } from '@solana-program/token';
import { kitPartialSigner } from './kit-signer';
import { COMPUTE_BUDGET_PROGRAM, isTokenProgram, MEMO_PROGRAM } from './programs';
import type { SvmLatestBlockhash } from './svm-reads';

export interface FeeTransferRequest {
  /** the merchant's wallet: the fee comes from its associated token account for (mint, token program) */
  readonly merchant: string;
  readonly mint: string;
  readonly tokenProgram: string;
  /** the merchant's delegate, who signs the transfer; the fee lands in its associated token account */
  readonly treasury: Ed25519Signer;
  /** pays the network fee (and the rent of the treasury's token account when it is created) */
  readonly feePayer: Ed25519Signer;
  /** the fee, in the mint's base units */
  readonly amount: bigint;
  readonly decimals: number;
  /** the lifetime: a blockhash and its last valid block height (SvmReads.latestBlockhash) */
  readonly blockhash: SvmLatestBlockhash;
  /** create the treasury's associated token account first, if it does not exist (idempotent) */
  readonly createTreasuryTokenAccount?: boolean;
  /** an SPL Memo (v2) carried by the transaction: e.g. the payment it is the fee of */
  readonly memo?: string;
  /** a compute-unit limit and price (micro-lamports per unit) for a priority fee; none by default */
  readonly computeUnitLimit?: number;
  readonly computeUnitPriceMicroLamports?: bigint;
}

export interface FeeTransferTransaction {
  /** the signed transaction, base64 wire bytes */
  readonly transaction: string;
  /** the fee payer's signature: the transaction's id */
  readonly signature: string;
  readonly blockhash: string;
  readonly lastValidBlockHeight: bigint;
  readonly source: Address;
  readonly destination: Address;
}

/**
 * The spec's flat fee on Solana: one SPL TransferChecked of `amount` from the merchant's associated token
 * account to the treasury's, signed by the treasury as the merchant's delegate (the allowance the merchant
 * approved), the network fee paid by our fee payer. Its own transaction, sent before the payer's (which cannot
 * change once signed). A v0 message without lookup tables; signed here through the signer port, nothing sent.
 */
export async function feeTransferTransaction(request: FeeTransferRequest): Promise<FeeTransferTransaction> {
  const { amount, decimals } = request;
  if (!isTokenProgram(request.tokenProgram)) throw new Error(`${request.tokenProgram} is not SPL Token or Token-2022`);
  if (amount <= 0n) throw new Error('a fee is a positive amount');
  const mint = address(request.mint);
  const tokenProgram = address(request.tokenProgram);
  const feePayer = kitPartialSigner(request.feePayer);
  // one signer object per address: kit refuses two for the same key (a treasury that is also the fee payer)
  const treasury: TransactionPartialSigner = request.treasury.address === request.feePayer.address ? feePayer : kitPartialSigner(request.treasury);
  const [source] = await findAssociatedTokenPda({ owner: address(request.merchant), mint, tokenProgram });
  const [destination] = await findAssociatedTokenPda({ owner: treasury.address, mint, tokenProgram });

  const instructions: Instruction[] = [...computeBudget(request)];
  if (request.createTreasuryTokenAccount) {
    instructions.push(await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: feePayer, owner: treasury.address, mint, ata: destination, tokenProgram }));
  }
  instructions.push(getTransferCheckedInstruction({ source, mint, destination, authority: treasury, amount, decimals }, { programAddress: tokenProgram }));
  if (request.memo !== undefined) instructions.push({ programAddress: MEMO_PROGRAM, data: getUtf8Encoder().encode(request.memo) });

  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: request.blockhash.blockhash as Blockhash, lastValidBlockHeight: request.blockhash.lastValidBlockHeight }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const signed = await signTransactionMessageWithSigners(message);
  return {
    transaction: getBase64EncodedWireTransaction(signed),
    signature: getSignatureFromTransaction(signed),
    blockhash: request.blockhash.blockhash,
    lastValidBlockHeight: request.blockhash.lastValidBlockHeight,
    source,
    destination,
  };
}

/** SetComputeUnitLimit (2, u32) and SetComputeUnitPrice (3, u64), as the compute budget program reads them. */
function computeBudget(request: FeeTransferRequest): Instruction[] {
  const instructions: Instruction[] = [];
  if (request.computeUnitLimit !== undefined) {
    instructions.push({ programAddress: COMPUTE_BUDGET_PROGRAM, data: Uint8Array.from([2, ...getU32Encoder().encode(request.computeUnitLimit)]) });
  }
  if (request.computeUnitPriceMicroLamports !== undefined) {
    instructions.push({ programAddress: COMPUTE_BUDGET_PROGRAM, data: Uint8Array.from([3, ...getU64Encoder().encode(request.computeUnitPriceMicroLamports)]) });
  }
  return instructions;
}
