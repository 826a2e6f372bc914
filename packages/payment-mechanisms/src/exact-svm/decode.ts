import { decodeSvmWireTransaction, type DecodedSvmTransaction, type SvmTransactionDecodeProblem } from '@facilitator/svm-chain';
import { ExactSvmReason, refuse, type ExactSvmReason as Reason, type ExactSvmRefusal } from './reasons';

export type { DecodedSvmInstruction, DecodedSvmSignature, DecodedSvmTransaction } from '@facilitator/svm-chain';

export type DecodeSvmTransactionResult = { readonly ok: true; readonly transaction: DecodedSvmTransaction } | ExactSvmRefusal;

/** What the family's reader could not read, in the reference's codes. */
const REASON_OF: Record<SvmTransactionDecodeProblem, Reason> = {
  undecodable: ExactSvmReason.TransactionCouldNotBeDecoded,
  unsupported_version: ExactSvmReason.TransactionCouldNotBeDecoded,
  no_accounts: ExactSvmReason.TransactionCouldNotBeDecoded,
  /**
   * the reference answers this code when its signer cannot resolve lookup tables (through its optional
   * `fetchAddressLookupTables`); we never resolve them: a table hides accounts from the check that our fee
   * payer appears in no instruction, the stock client never uses one, and no chain read belongs in the rules
   */
  address_lookup_tables: ExactSvmReason.AltResolutionUnavailable,
};

/**
 * Reads a payload's `transaction` (base64 wire transaction, legacy or v0) with svm-chain's reader, which reads
 * it as `@x402/svm`'s facilitator does, refusing what it cannot read with the reference's code. Refused besides,
 * where the reference goes on: address lookup tables, and version 1 messages (their compute budget sits in the
 * message's config, out of reach of the compute-price bound).
 */
export function decodeSvmTransaction(transactionBase64: string): DecodeSvmTransactionResult {
  const decoded = decodeSvmWireTransaction(transactionBase64);
  return decoded.ok ? decoded : refuse(REASON_OF[decoded.problem], decoded.message);
}
