// @facilitator/svm-chain: the Solana family's chain access (issue 43), the counterpart of evm-chain (reads) and
// evm-sending (sending) for EVM. Holds no key: the fee payer and the treasury sign through the Ed25519 signer port.

// reads, each at the commitment commitments.ts names for it
export { RpcSvmReads, type SvmReads, type SvmRpc, type SvmAccount, type SvmSignatureStatus, type SvmLatestBlockhash, type SvmLandedTransaction, type SvmSimulation } from './svm-reads';
export { READ_COMMITMENT } from './commitments';
export { decodeTokenAccount, type SvmTokenAccount } from './token-account';
export { tokenBalanceChanges, type SvmTokenBalanceChange, type NodeTokenBalance } from './token-balance-changes';
export { transactionErrorText, type SvmTransactionError } from './transaction-error';
export { decodeSvmWireTransaction, type SvmWireTransactionDecoding, type SvmTransactionDecodeProblem, type DecodedSvmTransaction, type DecodedSvmInstruction, type DecodedSvmSignature } from './wire-transaction';
export { TOKEN_PROGRAM, TOKEN_2022_PROGRAM, MEMO_PROGRAM, COMPUTE_BUDGET_PROGRAM, isTokenProgram } from './programs';

// sending: the fee payer's signature, one send, one outcome read (the caller schedules polls)
export { RpcSvmSender, signatureOf, type SvmSender, type SvmSendOptions } from './svm-sender';
export { signAsFeePayer, FeePayerSigningRefused, type FeePayerSigningProblem, type FeePayerSigned } from './fee-payer-signing';
export { SvmSendRefused, sendRefusalOf, type SvmSendRefusalKind } from './send-refusal';
export { outcomeOf, type SvmTransactionOutcome, type SvmLifetime } from './transaction-outcome';
export { kitPartialSigner } from './kit-signer';

// the fee, first: the merchant's delegated allowance to the treasury, and the transfer that collects it
export { feeTransferTransaction, type FeeTransferRequest, type FeeTransferTransaction } from './fee-transfer';
export { delegatedFeeAllowance, feeAllowanceOf, type FeeAllowance } from './fee-allowance';

// the Solana family: how an app opens a solana network (the seam's reads, and the family's own)
export { svmChainFamily, svmAddresses, type SvmFamilyNetwork, type SvmNetworkSettings } from './svm-family';
