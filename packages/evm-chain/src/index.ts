// @facilitator/evm-chain: RPC endpoints and every read of the chain. Holds no key and sends nothing
// (sending lives in @facilitator/evm-sending).

// endpoints: per-turn JSON-RPC batching, failover between a network's endpoints, a stranger's code run alone
export { createProvider, waitForRpc } from './rpc-provider';
export { JsonRpcBatchClient, JsonRpcError, RpcCallTimeoutError } from './json-rpc-batch-client';
export { RpcEndpointPool, type RpcCaller } from './rpc/rpc-endpoint-pool';
export { FailoverJsonRpcProvider } from './rpc/failover-provider';
export { UntrustedCallTimeoutError } from './rpc/untrusted-call';

// what a node's answers mean: error classes, revert reasons, the fee market
export { classifyNodeError, type NodeErrorCategory } from './node-error-classification';
export { decodeRevert, decodeRevertData } from './revert-reason';
export { cappedFees, marketFees, readMarket, type MarketReading } from './market-fees';

// the token: its ABI and calldata (a mechanism's own calls on it are the mechanism's), reads, simulations and the search for a payment's transfer
export { FIAT_TOKEN_ABI, fiatTokenInterface } from './token-abi';
export { TRANSFER_TOPIC, addressWord, bytes32Word, decodeUint, encodeCall, uintWord } from './token-calldata';
export { UsdcClient, isOutOfGasAnswer, paidBetween, type AuthorizationUse, type SimulationOptions, type SimulationResult } from './usdc-client';
export type { ChainLog, FoundLog, MinedTransaction } from './chain-log';
export { RpcChainReader } from './rpc-chain-reader';

// ERC-6492: signatures of wallets not deployed yet
export { parseErc6492Signature, tokenSignature, wrapErc6492Signature, type Erc6492Signature } from './erc6492/erc6492-signature';

// the EVM family: how the apps open every eip155 network (its endpoints, provider, token client and the seam's reads)
export { evmChainFamily, evmAddresses, type EvmFamilyNetwork, type EvmNetworkSettings } from './evm-family';
