import { address, none, some, type Address, type KeyPairSigner } from '@solana/kit';
import {
  findAssociatedTokenPda,
  getApproveCheckedInstruction,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getMintEncoder,
  getMintSize,
  getMintToCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { sendInstructions } from './chain-transactions';
import type { LocalSolanaChain } from './local-solana-chain';
import { solanaDevnetSigner, type SolanaDevnetRole } from './solana-accounts';

/** x402's id of Solana devnet (CAIP-2: the genesis hash's first 32 characters). */
export const SOLANA_DEVNET_NETWORK = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
/** Circle's USDC on Solana devnet: the mint lives at its real address so stock clients' asset tables know it. */
export const DEVNET_USDC_MINT = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
export const USDC_DECIMALS = 6;

export interface DevWorldOptions {
  /** USDC (base units) in the payer's token account. Default 1,000 USDC. */
  payerUsdc?: bigint;
  /** USDC (base units) in the merchant's token account. Default 100 USDC. */
  merchantUsdc?: bigint;
  /** What the merchant approves the treasury, as delegate, to take in fees. Default 10 USDC. */
  feeAllowance?: bigint;
  /** Lamports each account starts with. Default 100 SOL. */
  lamports?: bigint;
}

export interface DevWorld {
  mint: Address;
  feeAllowance: bigint;
  signers: Record<SolanaDevnetRole, KeyPairSigner>;
  /** The payer's and the merchant's associated token accounts for the mint. */
  tokenAccounts: { payer: Address; merchant: Address };
}

/**
 * The accounts a paid request needs: the USDC mint (written in place: its real authority is Circle's), then,
 * through real transactions, the payer's and merchant's associated token accounts, their USDC, and the
 * merchant's SPL Approve of a fee allowance to the treasury.
 */
export async function setUpDevWorld(chain: LocalSolanaChain, options: DevWorldOptions = {}): Promise<DevWorld> {
  const roles: SolanaDevnetRole[] = ['payer', 'merchant', 'treasury', 'feePayer', 'mintAuthority'];
  const signers = Object.fromEntries(await Promise.all(roles.map(async (role) => [role, await solanaDevnetSigner(role)] as const))) as Record<SolanaDevnetRole, KeyPairSigner>;
  const lamports = options.lamports ?? 100_000_000_000n;
  for (const role of roles) chain.airdrop(signers[role].address, lamports);

  const mint = address(DEVNET_USDC_MINT);
  const mintData = getMintEncoder().encode({ mintAuthority: some(signers.mintAuthority.address), supply: 0n, decimals: USDC_DECIMALS, isInitialized: true, freezeAuthority: none() });
  chain.setAccount({ address: mint, lamports: chain.minimumBalanceForRentExemption(getMintSize()), data: new Uint8Array(mintData), owner: TOKEN_PROGRAM_ADDRESS });

  const tokenAccountOf = async (owner: Address) => (await findAssociatedTokenPda({ mint, owner, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
  const tokenAccounts = { payer: await tokenAccountOf(signers.payer.address), merchant: await tokenAccountOf(signers.merchant.address) };
  const authority = signers.mintAuthority;
  await sendInstructions(chain, authority, [
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: authority, owner: signers.payer.address, mint }),
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: authority, owner: signers.merchant.address, mint }),
    getMintToCheckedInstruction({ mint, token: tokenAccounts.payer, mintAuthority: authority, amount: options.payerUsdc ?? 1_000_000_000n, decimals: USDC_DECIMALS }),
    getMintToCheckedInstruction({ mint, token: tokenAccounts.merchant, mintAuthority: authority, amount: options.merchantUsdc ?? 100_000_000n, decimals: USDC_DECIMALS }),
  ]);
  const feeAllowance = options.feeAllowance ?? 10_000_000n;
  await sendInstructions(chain, signers.merchant, [
    getApproveCheckedInstruction({
      source: tokenAccounts.merchant,
      mint,
      delegate: signers.treasury.address,
      owner: signers.merchant,
      amount: feeAllowance,
      decimals: USDC_DECIMALS,
    }),
  ]);
  return { mint, feeAllowance, signers, tokenAccounts };
}
