export type {
  MechanismNetwork,
  MechanismVocabulary,
  MissingApproval,
  PayerApproval,
  ApprovalPermit,
  NonceIdentity,
  PaymentTerms,
  ParsedPayment,
  SignerRecovery,
  PaymentMechanism,
  EvmExecution,
  StoredPayload,
  DirectCall,
  GasKind,
  SettleOrder,
  SignedAmount,
  Execution,
  LogLike,
  X402Version,
  X402Extension,
  PaymentColumns,
} from './mechanism';
export type {
  OfflineSignature,
  NonceCapability,
  ApprovalCapability,
  AvailabilityCapability,
  ExecutorCapability,
  GasCapability,
  X402Capability,
} from './capabilities';
export type { MechanismChain, TokenAuthorizationCalls, ContractReads, PaymentReads } from './chain-port';
export { withOurExecutor } from './chain-port';
export { missingApproval, approvalFor, approvalShortOf, evmExecutionOf } from './mechanism';
export { approvalPermitProblem, type ApprovalPermitProblem } from './approval-permit';
export { EIP2612_GAS_SPONSORING, EIP2612_PERMIT_GAS, eip2612PermitDigest } from './permit2/eip2612';
export { settleAmountProblem, amountToSettle } from './settle-amount';
export { MechanismAvailability } from './availability';
export { registeredMechanisms, mechanismById, mechanismsOn, servedMechanismById, mechanismFor, mechanismsInVersion, schemesOf, knownSchemes } from './registry';
export { exactEip3009, eip3009PaymentOf, type ExactEip3009Payload } from './exact-eip3009';
export { exactPermit2, type ExactPermit2Payload } from './exact-permit2';
export { uptoPermit2, type UptoPermit2Payload } from './upto-permit2';
export { PERMIT2_ADDRESS, X402_EXACT_PERMIT2_PROXY, X402_UPTO_PERMIT2_PROXY } from './permit2/addresses';
export { permit2DomainSeparator } from './permit2/eip712';
export { TRANSFER_WITH_AUTHORIZATION_TYPES, transferAuthorizationDigest, recoverAuthorizationSigner } from './exact-eip3009/eip712';
export { authorizationFingerprint } from './exact-eip3009/fingerprint';
// issue 42: what settlement asked by name, now each mechanism's own (EIP-3009's calldata, executor targets, extra gas)
export {
  EIP3009_TOKEN_ABI,
  TRANSFER_WITH_AUTHORIZATION_BYTES,
  TRANSFER_WITH_AUTHORIZATION_VRS,
  eip3009TokenInterface,
  transferWithAuthorizationData,
} from './exact-eip3009/token-calls';
export { executorTargets, mostExtraGas } from './registry';
export { uintAt } from './exact-eip3009/parse';
export { SPEC_PAYLOAD_SCHEMA } from './spec-payload';
export { EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2, type PaymentMechanismId } from './mechanism-ids';
export { FailureReason } from './failure-reason';
export type { MechanismX402Reasons } from './x402-reasons';
