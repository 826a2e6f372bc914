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

/** A wire transaction, read but not judged: what exact-svm's rules and the fee payer's key rule on. */
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
  /** the first static account: who pays the network fee */
  readonly feePayer: Address;
  /** every required signer, in the message's order (the fee payer first) */
  readonly signatures: readonly DecodedSvmSignature[];
  /** the message's lifetime token: a recent blockhash (or, for a durable-nonce transaction, the nonce) */
  readonly recentBlockhash: string;
  readonly instructions: readonly DecodedSvmInstruction[];
}

/** Why a wire transaction is not read: each reader answers its own refusal for it. */
export type SvmTransactionDecodeProblem =
  /** not base64, not a wire transaction, or a message whose instructions cannot be resolved */
  | 'undecodable'
  /** a message other than legacy or v0 */
  | 'unsupported_version'
  /** a v0 message that loads accounts from address lookup tables */
  | 'address_lookup_tables'
  /** a message that names no account, so no fee payer */
  | 'no_accounts';

export type SvmWireTransactionDecoding =
  | { readonly ok: true; readonly transaction: DecodedSvmTransaction }
  | { readonly ok: false; readonly problem: SvmTransactionDecodeProblem; readonly message: string };

const transactionDecoder = getTransactionDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();
const base64 = getBase64Encoder();

/**
 * Reads a base64 wire transaction (legacy or v0) as `@x402/svm`'s facilitator does (the wire decoder, then
 * `getCompiledTransactionMessageDecoder`, then `decompileTransactionMessage`). The one reader of a payer's
 * transaction in the family: exact-svm's rules and the fee payer's signature both start here.
 *
 * Not read, besides what cannot be decoded:
 * - address lookup tables: they hide accounts from any check of who an instruction names, unless the chain is
 *   read to resolve them (and a table can change between two reads); the stock client never uses one.
 * - version 1 messages (kit 8.4 reads them): they carry the compute budget in the message's config rather
 *   than in instructions; the stock client writes v0.
 */
export function decodeSvmWireTransaction(transactionBase64: string): SvmWireTransactionDecoding {
  let compiled: CompiledTransactionMessage & CompiledTransactionMessageWithLifetime;
  let transaction: ReturnType<typeof transactionDecoder.decode>;
  try {
    transaction = transactionDecoder.decode(base64.encode(transactionBase64));
    compiled = messageDecoder.decode(transaction.messageBytes);
  } catch (error) {
    return notRead('undecodable', `the transaction could not be decoded: ${messageOf(error)}`);
  }
  if (compiled.version !== 'legacy' && compiled.version !== 0) {
    return notRead('unsupported_version', `a version ${String(compiled.version)} transaction; only legacy and v0 transactions are accepted`);
  }
  if (compiled.version === 0 && (compiled.addressTableLookups?.length ?? 0) > 0) {
    return notRead('address_lookup_tables', 'address lookup tables are not accepted');
  }
  const { header, staticAccounts } = compiled;
  if (staticAccounts.length === 0) return notRead('no_accounts', 'the transaction names no account');
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
    return notRead('undecodable', `the transaction's message could not be read: ${messageOf(error)}`);
  }
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

function notRead(problem: SvmTransactionDecodeProblem, message: string): SvmWireTransactionDecoding {
  return { ok: false, problem, message };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
