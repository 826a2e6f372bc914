// The rules of x402 `exact` on Solana, as pure functions the Solana mechanism is built from (issue 43).
// Not yet part of the package's index: no mechanism uses them yet.
export { ExactSvmReason, type ExactSvmRefusal } from './reasons';
export { COMPUTE_BUDGET_PROGRAM, LIGHTHOUSE_PROGRAM, MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS, MEMO_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from './programs';
export { decodeSvmTransaction, type DecodedSvmInstruction, type DecodedSvmSignature, type DecodedSvmTransaction, type DecodeSvmTransactionResult } from './decode';
export {
  checkExactSvmPayment,
  checkExactSvmRequirements,
  checkExactSvmTransaction,
  type ExactSvmCheck,
  type ExactSvmPolicy,
  type ExactSvmRequirements,
  type ExactSvmTerms,
} from './rules';
export { mintProblem, payToAccountProblem, type ChainFactRefusal, type ExpectedTokenAccount, type MintProblem, type PayToAccountProblem, type SvmAccountFacts } from './chain-facts';
