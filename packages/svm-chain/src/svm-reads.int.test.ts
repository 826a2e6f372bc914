// SvmReads against the local Solana chain (packages/solana-devnet, in this process): the dev world's payer,
// merchant, delegate and mint, read as the settlement steps will read them.
import { getAddressDecoder } from '@solana/kit';
import { DEVNET_USDC_MINT, startSolanaDevnet, type SolanaDevnet } from '@facilitator/solana-devnet';
import { delegatedFeeAllowance } from './fee-allowance';
import { TOKEN_PROGRAM } from './programs';
import { RpcSvmReads } from './svm-reads';

// an address nothing lives at
const NOBODY = getAddressDecoder().decode(new Uint8Array(32).fill(7));

describe('RpcSvmReads on the local Solana chain', () => {
  let devnet: SolanaDevnet;
  let reads: RpcSvmReads;

  // the clock is stopped: slots move only when a test says so
  beforeAll(async () => {
    devnet = await startSolanaDevnet({ slotTimeMs: 0 });
    reads = new RpcSvmReads(devnet.chain.rpcUrl);
  });
  afterAll(() => devnet.stop());

  it("reads the payer's and the merchant's token accounts: balances, the merchant's delegate and what it may take", async () => {
    const { accounts, feeAllowance } = devnet.info;
    const payer = await reads.tokenAccount(accounts.payer.tokenAccount);
    expect(payer).toEqual({ mint: DEVNET_USDC_MINT, owner: accounts.payer.address, amount: 1_000_000_000n, delegatedAmount: 0n, state: 'initialized', tokenProgram: TOKEN_PROGRAM });
    const merchant = await reads.tokenAccount(accounts.merchant.tokenAccount);
    expect(merchant).toMatchObject({ owner: accounts.merchant.address, amount: 100_000_000n, delegate: accounts.treasury.address, delegatedAmount: BigInt(feeAllowance) });
    expect(await delegatedFeeAllowance(reads, { merchant: accounts.merchant.address, mint: DEVNET_USDC_MINT, treasury: accounts.treasury.address, tokenProgram: TOKEN_PROGRAM })).toEqual({
      status: 'delegated',
      allowance: BigInt(feeAllowance),
      balance: 100_000_000n,
      tokenAccount: accounts.merchant.tokenAccount,
    });
    // the payer's account delegates to nobody; the treasury has no token account yet
    expect(await delegatedFeeAllowance(reads, { merchant: accounts.payer.address, mint: DEVNET_USDC_MINT, treasury: accounts.treasury.address, tokenProgram: TOKEN_PROGRAM })).toMatchObject({
      status: 'no_delegate',
      allowance: 0n,
    });
    const treasuryAccount = await reads.associatedTokenAccount(accounts.treasury.address, DEVNET_USDC_MINT, TOKEN_PROGRAM);
    expect(await reads.tokenAccount(treasuryAccount)).toBeUndefined();
    // a wallet is not a token account
    expect(await reads.tokenAccount(accounts.payer.address)).toBeUndefined();
  });

  it('derives associated token accounts as the dev world made them', async () => {
    const { accounts } = devnet.info;
    expect(await reads.associatedTokenAccount(accounts.merchant.address, DEVNET_USDC_MINT, TOKEN_PROGRAM)).toBe(accounts.merchant.tokenAccount);
    expect(await reads.associatedTokenAccount(accounts.payer.address, DEVNET_USDC_MINT, TOKEN_PROGRAM)).toBe(accounts.payer.tokenAccount);
  });

  it("reads the mint's owner and raw bytes (what chain-facts' mintProblem judges), and nothing where there is no account", async () => {
    const mint = await reads.mint(DEVNET_USDC_MINT);
    expect(mint?.owner).toBe(TOKEN_PROGRAM);
    expect(mint?.data).toHaveLength(82);
    // SPL mint layout: decimals at 44, is_initialized at 45
    expect([mint?.data[44], mint?.data[45]]).toEqual([6, 1]);
    expect(await reads.mint(devnet.info.accounts.treasury.address)).toMatchObject({ owner: '11111111111111111111111111111111', data: new Uint8Array() });
    expect(await reads.mint(NOBODY)).toBeUndefined();
    // the merchant's token account, raw (what payToAccountProblem reads): SPL Token's, 165 bytes
    expect(await reads.account(devnet.info.accounts.merchant.tokenAccount)).toMatchObject({ owner: TOKEN_PROGRAM, data: expect.objectContaining({ length: 165 }) });
  });

  it('reads SOL balances, the latest blockhash and its validity, and no status for an unknown signature', async () => {
    expect(await reads.solBalance(devnet.info.accounts.feePayer.address)).toBe(100_000_000_000n);
    expect(await reads.solBalance(NOBODY)).toBe(0n);
    const latest = await reads.latestBlockhash();
    // at `confirmed`, one slot behind the newest, valid for 150 blocks more
    expect(latest).toEqual(devnet.chain.latestBlockhash('confirmed'));
    expect(await reads.blockhashValid(latest.blockhash)).toBe(true);
    expect(await reads.blockHeight('finalized')).toBe(devnet.chain.blockHeight('finalized'));
    const unknown = '1111111111111111111111111111111111111111111111111111111111111111';
    expect(await reads.signatureStatus(unknown)).toBeUndefined();
    expect(await reads.signatureStatus(unknown, { searchTransactionHistory: true })).toBeUndefined();
    expect(await reads.transaction(unknown)).toBeUndefined();
  });
});
