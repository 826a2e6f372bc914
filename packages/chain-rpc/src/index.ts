// @facilitator/chain-rpc: RPC endpoints and every read of the chain. Holds no key and sends nothing
// (sending lives in @facilitator/chain-sending).

// endpoints: per-turn JSON-RPC batching, failover between a network's endpoints, a stranger's code run alone
export { createProvider, waitForRpc } from './rpc-provider';
export { JsonRpcBatchClient, JsonRpcError, RpcCallTimeoutError, RpcHttpStatusError } from './json-rpc-batch-client';
export { RpcEndpointPool, RpcEndpointsUnavailableError, type RpcCaller, type RpcEndpointPoolOptions } from './rpc/rpc-endpoint-pool';
export { EndpointHealth, type HealthPolicy } from './rpc/endpoint-health';
export { FailoverJsonRpcProvider } from './rpc/failover-provider';
export { UntrustedCallTimeoutError, isSlowAnswer, untrustedCall } from './rpc/untrusted-call';

// what a node's answers mean: error classes, revert reasons, the fee market
export { classifyNodeError, NODE_ERROR_RULES, type NodeErrorAction, type NodeErrorCategory, type NodeErrorClassification, type NodeErrorRule } from './node-error-classification';
export { decodeRevert, decodeRevertData, revertReasonOf, type DecodedRevert } from './revert-reason';
export { cappedFees, marketFees, readMarket, type Eip1559Fees, type MarketReading } from './market-fees';

// the token: its ABI and calldata, reads, simulations and the search for a payment's transfer
export { FIAT_TOKEN_ABI, TRANSFER_WITH_AUTHORIZATION_BYTES, TRANSFER_WITH_AUTHORIZATION_VRS, fiatTokenInterface } from './token-abi';
export { SELECTORS, TRANSFER_TOPIC, addressWord, authorizationStateData, bytes32Word, decodeUint, encodeCall, uintWord } from './token-calldata';
export {
  UsdcClient,
  isPlainEcdsaSignature,
  paidBetween,
  paidByAuthorization,
  splitSignature,
  type AuthorizationUse,
  type SimulationOptions,
  type SimulationResult,
} from './usdc-client';
export { RpcChainReader, DEFAULT_UNTRUSTED_GAS, DELEGATION_PREFIX, type ChainEndpoint, type ContractSignatureVerdict } from './rpc-chain-reader';

// ERC-6492: signatures of wallets not deployed yet
export {
  ERC6492_MAGIC_SUFFIX,
  isErc6492Signature,
  parseErc6492Signature,
  tokenSignature,
  wrapErc6492Signature,
  type Erc6492Signature,
} from './erc6492/erc6492-signature';
export { counterfactualCheckCall, counterfactualVerdict, type CounterfactualVerdict } from './erc6492/erc6492-check';
