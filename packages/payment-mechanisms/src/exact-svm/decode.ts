import {
  decompileTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type AccountRole,
  type Address,
  type CompiledTransactionMessage,
  type CompiledTransactionMessageWithLifetime,
  type Instruction,
  type ReadonlyUint8Array,
  type SignatureBytes,
} from '@solana/kit';
import { ExactSvmReason, refuse, type ExactSvmRefusal } from './reasons';

/** One instruction of the message, its accounts resolved to addresses (no lookup tables: those are refused). */
export interface DecodedSvmInstruction {
  readonly programAddress: Address;
  /** in the instruction's order, with the role the message gives each (signer, writable) */
  readonly accounts: readonly { readonly address: Address; readonly role: AccountRole }[];
  readonly data: ReadonlyUint8Array;
}

/** A required signer and what the wire transaction carries for it (`null`: not signed, all-zero bytes). */
export interface DecodedSvmSignature {
  readonly signer: Address;
  readonly signature: SignatureBytes | null;
}

/** A payload's transaction, read but not judged: the facts `checkExactSvmPayment` rules on. */
export interface DecodedSvmTransaction {
  readonly version: 'legacy' | 0;
  /** the bytes every signature signs */
  readonly messageBytes: ReadonlyUint8Array;
  readonly header: {
    /** the first this many static accounts must sign; the first of them pays the fees */
    readonly numSignerAccounts: number;
    readonly numReadonlySignerAccounts: number;
    readonly numReadonlyNonSignerAccounts: number;
  };
  readonly staticAccounts: readonly Address[];
  /** the first static account: who pays the network fee (and must be one of ours) */
  readonly feePayer: Address;
  /** every required signer, in the message's order (the fee payer first) */
  readonly signatures: readonly DecodedSvmSignature[];
  /** the message's lifetime token: a recent blockhash (or, for a durable-nonce transaction, the nonce) */
  readonly recentBlockhash: string;
  readonly instructions: readonly DecodedSvmInstruction[];
}

export type DecodeSvmTransactionResult = { readonly ok: true; readonly transaction: DecodedSvmTransaction } | ExactSvmRefusal;

const transactionDecoder = getTransactionDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();
const base64 = getBase64Encoder();

/**
 * Reads a payload's `transaction` (base64 wire transaction, legacy or v0) as `@x402/svm`'s facilitator does
 * (`decodeTransactionFromPayload`, then `getCompiledTransactionMessageDecoder`, then
 * `decompileTransactionMessage`), refusing what it cannot read with the reference's code.
 *
 * Refused besides, where the reference goes on:
 * - address lookup tables: the reference resolves them through its signer's optional
 *   `fetchAddressLookupTables` (and refuses, with this same code, when its signer has none). A lookup table
 *   hides accounts from the check that our fee payer appears in no instruction, and the stock client never
 *   uses one; so we never resolve them (no chain read in the rules, no table that can change between
 *   verify and settle).
 * - version 1 messages (kit 8.4 reads them): they carry the compute budget in the message's config rather
 *   than in instructions, out of reach of the compute-price bound; the stock client writes v0.
 */
export function decodeSvmTransaction(transactionBase64: string): DecodeSvmTransactionResult {
  let compiled: CompiledTransactionMessage & CompiledTransactionMessageWithLifetime;
  let transaction: ReturnType<typeof transactionDecoder.decode>;
  try {
    transaction = transactionDecoder.decode(base64.encode(transactionBase64));
    compiled = messageDecoder.decode(transaction.messageBytes);
  } catch (error) {
    return refuse(ExactSvmReason.TransactionCouldNotBeDecoded, `the transaction could not be decoded: ${messageOf(error)}`);
  }
  if (compiled.version !== 'legacy' && compiled.version !== 0) {
    return refuse(ExactSvmReason.TransactionCouldNotBeDecoded, `a version ${String(compiled.version)} transaction; only legacy and v0 transactions are accepted`);
  }
  if (compiled.version === 0 && (compiled.addressTableLookups?.length ?? 0) > 0) {
    return refuse(ExactSvmReason.AltResolutionUnavailable, 'address lookup tables are not accepted');
  }
  let instructions: DecodedSvmInstruction[];
  try {
    // legacy and v0 messages without lookup tables: every account is a plain AccountMeta
    const decompiled = decompileTransactionMessage(compiled).instructions as readonly Instruction[];
    instructions = decompiled.map((instruction) => ({
      programAddress: instruction.programAddress,
      accounts: (instruction.accounts ?? []).map((account) => ({ address: account.address, role: account.role })),
      data: instruction.data ?? new Uint8Array(),
    }));
  } catch (error) {
    return refuse(ExactSvmReason.TransactionCouldNotBeDecoded, `the transaction's message could not be read: ${messageOf(error)}`);
  }
  const { header, staticAccounts } = compiled;
  if (staticAccounts.length === 0) return refuse(ExactSvmReason.TransactionCouldNotBeDecoded, 'the transaction names no account');
  const signers = staticAccounts.slice(0, header.numSignerAccounts);
  return {
    ok: true,
    transaction: {
      version: compiled.version,
      messageBytes: transaction.messageBytes,
      header: {
        numSignerAccounts: header.numSignerAccounts,
        numReadonlySignerAccounts: header.numReadonlySignerAccounts,
        numReadonlyNonSignerAccounts: header.numReadonlyNonSignerAccounts,
      },
      staticAccounts,
      feePayer: staticAccounts[0],
      signatures: signers.map((signer) => ({ signer, signature: transaction.signatures[signer] ?? null })),
      recentBlockhash: compiled.lifetimeToken,
      instructions,
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
