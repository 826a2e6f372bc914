export { LocalSolanaChain, type LocalSolanaChainOptions } from './local-solana-chain';
export { type LandedTransaction, type AccountWrite } from './chain-records';
export { type Commitment } from './slot-clock';
export { startSolanaDevnet, type SolanaDevnetOptions, type SolanaDevnet } from './solana-devnet';
export { setUpDevWorld, SOLANA_DEVNET_NETWORK, DEVNET_USDC_MINT, USDC_DECIMALS, type DevWorld, type DevWorldOptions } from './dev-world';
export { writeSolanaDevnetInfo, readSolanaDevnetInfo, type SolanaDevnetInfo } from './solana-devnet-info-file';
export { solanaDevnetSigner, solanaDevnetSeed, SOLANA_DEVNET_ROLES, type SolanaDevnetRole, type SolanaDevnetAccount } from './solana-accounts';
export { signedTransaction, sendInstructions } from './chain-transactions';
export { DEVNET_GENESIS_HASH } from './rpc-methods';
export { RpcError } from './json-rpc-server';
// what a local chain's main does around the chain (packages/devnet's main uses it too)
export { stopOnSignal, optionalNumber } from './dev-process';
