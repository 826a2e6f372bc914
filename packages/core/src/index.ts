export {
  networkByChainId,
  networkByCaip2,
  networkByLegacyName,
  networkByX402V1Name,
  networkByAnyName,
  type NetworkInfo,
  type GasCaps,
  NETWORKS,
} from './networks';
export { ErrorCode } from './error-codes';
export {
  rpcUnavailable,
  internalErrorEnvelope,
  InternalError,
  FacilitatorError,
  InvalidRequestError,
  UnsupportedNetworkError,
  VerificationFailedError,
  InsufficientAllowanceError,
  FeeCollectionFailedError,
  SettlementFailedError,
  NotFoundError,
  MethodNotAllowedError,
  UnauthorizedError,
  PaymentConflictError,
  PaymentIdentifierConflictError,
  IdempotencyKeyInFlightError,
  IdempotencyKeyReusedError,
  PayloadTooLargeError,
  RateLimitedError,
  ServiceUnavailableError,
} from './errors';
export { parseAtomicAmount, parsePrice, TOKEN_DECIMALS, AmountFormatError } from './amounts';
export {
  bytesToHex,
  hexToBytes,
  writeUint,
  writeBytes,
  domainSeparator,
  authorizationToJson,
  type Eip712Domain,
  type TransferAuthorization,
} from './eip712';
export { signatureRecovery } from './signature-recovery';
export { keccak256, KECCAK_BACKEND } from './keccak';
export { newId, isId, IdPrefix } from './ids';
export { canonicalJson } from './canonical-json';
export { unavailableDependencyOf } from './dependency-failure';
export { SharedReadings } from './shared-readings';
export { SETTLEMENT_WAIT_REASONS, SETTLEMENT_WAIT_REASON_TEXT, settlementWaitReasonList, type SettlementWaitReasonId } from './settlement-wait-reasons';
export type { RpcEndpointSnapshot } from './rpc-endpoint-snapshot';
export { isPublicAddress } from './public-address';
export { addressSchema, bytes32Schema, uintStringSchema, signatureSchema, MAX_SIGNATURE_BYTES } from './json-schema-atoms';
export { CHAIN_FAMILIES, evmNetworkId, familyOfNetworkId, type ChainFamilyId } from './chain-families';
