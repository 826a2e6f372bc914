import path from 'node:path';
import { AccountState, findAssociatedTokenPda, getMintEncoder, getTokenEncoder } from '@solana-program/token';
import { address, type Address } from '@solana/kit';
import { mintProblem, payToAccountProblem } from './chain-facts';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from './programs';
import { ExactSvmReason } from './reasons';

// The account bytes come from independent encoders: @solana-program/token's for SPL Token accounts and mints,
// and for Token-2022 extensions the @solana-program/token-2022 the stock @x402/svm client decodes mints with
// (its own copy, reached through @x402/svm: no version of it takes kit 8).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const token2022 = require(require.resolve('@solana-program/token-2022', { paths: [path.dirname(require.resolve('@x402/svm'))] })) as {
  getMintEncoder: () => { encode: (mint: unknown) => Uint8Array };
};

const USDC = address('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU');
const MERCHANT = address('2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4');
const STRANGER = address('EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd');
const HOOK_PROGRAM = address('L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95');

const expected = { payee: MERCHANT, mint: USDC, tokenProgram: TOKEN_PROGRAM };
const tokenAccount = (overrides: { mint?: Address; owner?: Address; state?: AccountState } = {}) =>
  new Uint8Array(
    getTokenEncoder().encode({
      mint: overrides.mint ?? USDC,
      owner: overrides.owner ?? MERCHANT,
      amount: 5n,
      delegate: null,
      state: overrides.state ?? AccountState.Initialized,
      isNative: null,
      delegatedAmount: 0n,
      closeAuthority: null,
    }),
  );

describe('payToAccountProblem', () => {
  it('accepts the payTo’s initialised token account for the mint', async () => {
    expect(payToAccountProblem({ owner: TOKEN_PROGRAM, data: tokenAccount() }, expected)).toBeUndefined();
    // the destination the rules derived is where the caller reads it from
    const [destination] = await findAssociatedTokenPda({ owner: MERCHANT, mint: USDC, tokenProgram: TOKEN_PROGRAM });
    expect(destination).not.toBe(MERCHANT);
  });

  it('refuses, clearly, a payTo that has no token account', () => {
    expect(payToAccountProblem(null, expected)).toEqual({
      ok: false,
      reason: ExactSvmReason.InvalidPaymentRequirements,
      problem: 'pay_to_token_account_missing',
      message: `payTo ${MERCHANT} has no token account for mint ${USDC}: its associated token account must be created before it can be paid`,
    });
  });

  it('refuses a frozen token account', () => {
    expect(payToAccountProblem({ owner: TOKEN_PROGRAM, data: tokenAccount({ state: AccountState.Frozen }) }, expected)).toMatchObject({ problem: 'pay_to_token_account_frozen' });
  });

  it.each([
    ['owned by another program', { owner: TOKEN_2022_PROGRAM, data: tokenAccount() }],
    ['too short for a token account', { owner: TOKEN_PROGRAM, data: new Uint8Array(82) }],
    ['for another mint', { owner: TOKEN_PROGRAM, data: tokenAccount({ mint: STRANGER }) }],
    ['of another owner', { owner: TOKEN_PROGRAM, data: tokenAccount({ owner: STRANGER }) }],
    ['not initialised', { owner: TOKEN_PROGRAM, data: tokenAccount({ state: AccountState.Uninitialized }) }],
  ])('refuses a destination %s', (_name, account) => {
    expect(payToAccountProblem(account, expected)).toMatchObject({ ok: false, reason: ExactSvmReason.InvalidPaymentRequirements, problem: 'pay_to_token_account_invalid' });
  });
});

const splMint = () => new Uint8Array(getMintEncoder().encode({ mintAuthority: MERCHANT, supply: 1n, decimals: 6, isInitialized: true, freezeAuthority: null }));
const fee = { epoch: 0n, maximumFee: 10n, transferFeeBasisPoints: 50 };
const token2022Mint = (extensions: unknown[] | null) =>
  token2022.getMintEncoder().encode({ mintAuthority: MERCHANT, supply: 1n, decimals: 6, isInitialized: true, freezeAuthority: null, extensions });
const metadataPointer = { __kind: 'MetadataPointer', authority: MERCHANT, metadataAddress: USDC };
const transferFee = { __kind: 'TransferFeeConfig', transferFeeConfigAuthority: MERCHANT, withdrawWithheldAuthority: MERCHANT, withheldAmount: 0n, olderTransferFee: fee, newerTransferFee: fee };
const zeroFee = { ...transferFee, olderTransferFee: { ...fee, transferFeeBasisPoints: 0, maximumFee: 0n }, newerTransferFee: { ...fee, transferFeeBasisPoints: 0, maximumFee: 0n } };
const transferHook = { __kind: 'TransferHook', authority: MERCHANT, programId: HOOK_PROGRAM };

describe('mintProblem', () => {
  it.each([
    ['an SPL Token mint', { owner: TOKEN_PROGRAM, data: splMint() }],
    ['a Token-2022 mint without extensions', { owner: TOKEN_2022_PROGRAM, data: token2022Mint(null) }],
    ['a Token-2022 mint with a metadata pointer', { owner: TOKEN_2022_PROGRAM, data: token2022Mint([metadataPointer]) }],
  ])('accepts %s', (_name, account) => {
    expect(mintProblem(account)).toBeUndefined();
  });

  it.each([
    ['a transfer fee', [transferFee], 'mint_transfer_fee'],
    ['a transfer fee after another extension', [metadataPointer, transferFee], 'mint_transfer_fee'],
    ['a transfer fee of zero (its authority can raise it)', [zeroFee], 'mint_transfer_fee'],
    ['a transfer hook', [transferHook], 'mint_transfer_hook'],
    ['a transfer hook after another extension', [metadataPointer, transferHook], 'mint_transfer_hook'],
  ])('refuses a Token-2022 mint with %s', (_name, extensions, kind) => {
    expect(mintProblem({ owner: TOKEN_2022_PROGRAM, data: token2022Mint(extensions) })).toMatchObject({ ok: false, reason: ExactSvmReason.InvalidPaymentRequirements, problem: kind });
  });

  it('refuses no mint, and an account that is no mint', () => {
    expect(mintProblem(null)).toMatchObject({ problem: 'mint_missing' });
    expect(mintProblem({ owner: '11111111111111111111111111111111', data: splMint() })).toMatchObject({ problem: 'mint_not_a_token_mint' });
    expect(mintProblem({ owner: TOKEN_PROGRAM, data: new Uint8Array(82) })).toMatchObject({ problem: 'mint_not_a_token_mint' });
    // a Token-2022 token account is no mint, whatever its first bytes
    const account = new Uint8Array(token2022Mint([metadataPointer]));
    account[165] = 2;
    expect(mintProblem({ owner: TOKEN_2022_PROGRAM, data: account })).toMatchObject({ problem: 'mint_not_a_token_mint' });
  });
});
