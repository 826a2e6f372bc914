/**
 * The x402 reason codes of `exact` on Solana, spelled as the reference facilitator (`@x402/svm` 2.27,
 * `dist/cjs/exact/facilitator/index.js`, "src/exact/facilitator/errors.ts") spells them, so tooling written
 * against it reads our refusals. Only the codes these rules answer are named here.
 */
export const ExactSvmReason = {
  // requirements (checked before the transaction is read, as the reference does)
  MissingFeePayer: 'invalid_exact_svm_payload_missing_fee_payer',
  FeePayerNotManaged: 'invalid_exact_svm_fee_payer_not_managed_by_facilitator',
  // the wire transaction
  TransactionCouldNotBeDecoded: 'invalid_exact_svm_payload_transaction_could_not_be_decoded',
  /**
   * The reference answers this code (with ": transaction uses Address Lookup Tables but signer does not
   * implement fetchAddressLookupTables" appended) when its signer cannot resolve lookup tables; we never do.
   */
  AltResolutionUnavailable: 'invalid_exact_svm_smart_wallet_alt_resolution_not_available',
  // signers
  /** the reference's code when its `maxRequiredSignatures` option is exceeded; ours always bound it to 2 */
  ExcessiveSigners: 'invalid_exact_svm_payload_excessive_signers',
  FeePayerMismatch: 'invalid_exact_svm_fee_payer_mismatch',
  SignatureInvalid: 'invalid_exact_svm_payload_signature_invalid',
  // the instruction layout
  InstructionsLength: 'invalid_exact_svm_payload_transaction_instructions_length',
  ComputeLimitInstruction: 'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction',
  ComputeLimitInstructionTooHigh: 'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high',
  ComputePriceInstruction: 'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction',
  ComputePriceInstructionTooHigh: 'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
  NoTransferInstruction: 'invalid_exact_svm_payload_no_transfer_instruction',
  UnknownFourthInstruction: 'invalid_exact_svm_payload_unknown_fourth_instruction',
  UnknownFifthInstruction: 'invalid_exact_svm_payload_unknown_fifth_instruction',
  UnknownSixthInstruction: 'invalid_exact_svm_payload_unknown_sixth_instruction',
  UnknownSeventhInstruction: 'invalid_exact_svm_payload_unknown_seventh_instruction',
  // the transfer
  FeePayerTransferringFunds: 'invalid_exact_svm_payload_transaction_fee_payer_transferring_funds',
  MintMismatch: 'invalid_exact_svm_payload_mint_mismatch',
  RecipientMismatch: 'invalid_exact_svm_payload_recipient_mismatch',
  AmountMismatch: 'invalid_exact_svm_payload_amount_mismatch',
  MemoCount: 'invalid_exact_svm_payload_memo_count',
  MemoMismatch: 'invalid_exact_svm_payload_memo_mismatch',
  /**
   * The reference's code for a fee payer referenced by an instruction (its smart-wallet path; its static
   * path does not check this, though the scheme's specification §2.1.1 says a sponsor MUST).
   */
  FeePayerNotIsolated: 'invalid_exact_svm_smart_wallet_fee_payer_not_isolated',
  /**
   * The x402 specification's generic code: what the operator's checks over chain state refuse (a payTo
   * that cannot receive the asset, a mint whose transfers we do not settle) is the requirements' fault,
   * not the payer's transaction's.
   */
  InvalidPaymentRequirements: 'invalid_payment_requirements',
} as const;

export type ExactSvmReason = (typeof ExactSvmReason)[keyof typeof ExactSvmReason];

/** A refusal: the code the x402 surface answers and a sentence for people. */
export interface ExactSvmRefusal {
  readonly ok: false;
  readonly reason: ExactSvmReason;
  readonly message: string;
}

export function refuse(reason: ExactSvmReason, message: string): ExactSvmRefusal {
  return { ok: false, reason, message };
}
