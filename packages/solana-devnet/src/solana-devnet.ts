import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { DEVNET_USDC_MINT, SOLANA_DEVNET_NETWORK, setUpDevWorld, USDC_DECIMALS, type DevWorld, type DevWorldOptions } from './dev-world';
import { LocalSolanaChain, type LocalSolanaChainOptions } from './local-solana-chain';
import { DEVNET_GENESIS_HASH } from './rpc-methods';
import { describeAccount } from './solana-accounts';
import { writeSolanaDevnetInfo, type SolanaDevnetInfo } from './solana-devnet-info-file';

export interface SolanaDevnetOptions extends LocalSolanaChainOptions, DevWorldOptions {
  /** Where to write the SolanaDevnetInfo file, if anywhere. */
  infoFile?: string;
}

export interface SolanaDevnet {
  chain: LocalSolanaChain;
  world: DevWorld;
  info: SolanaDevnetInfo;
  stop(): Promise<void>;
}

/** The local chain with the dev world on it: the USDC mint, the funded payer, the merchant with its delegate. */
export async function startSolanaDevnet(options: SolanaDevnetOptions = {}): Promise<SolanaDevnet> {
  const chain = await LocalSolanaChain.start(options);
  try {
    const world = await setUpDevWorld(chain, options);
    const { signers, tokenAccounts } = world;
    const info: SolanaDevnetInfo = {
      rpcUrl: chain.rpcUrl,
      network: SOLANA_DEVNET_NETWORK,
      genesisHash: DEVNET_GENESIS_HASH,
      pid: process.pid,
      slotTimeMs: options.slotTimeMs ?? 400,
      blockhashMaxAgeSlots: chain.blockhashMaxAgeSlots,
      token: { mint: DEVNET_USDC_MINT, symbol: 'USDC', decimals: USDC_DECIMALS, tokenProgram: TOKEN_PROGRAM_ADDRESS },
      feeAllowance: world.feeAllowance.toString(),
      accounts: {
        payer: { ...describeAccount('payer', signers.payer), tokenAccount: tokenAccounts.payer },
        merchant: { ...describeAccount('merchant', signers.merchant), tokenAccount: tokenAccounts.merchant },
        treasury: describeAccount('treasury', signers.treasury),
        feePayer: describeAccount('feePayer', signers.feePayer),
        mintAuthority: describeAccount('mintAuthority', signers.mintAuthority),
      },
    };
    if (options.infoFile) writeSolanaDevnetInfo(options.infoFile, info);
    return { chain, world, info, stop: () => chain.stop() };
  } catch (error) {
    await chain.stop();
    throw error;
  }
}
