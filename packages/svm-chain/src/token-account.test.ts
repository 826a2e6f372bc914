import { LocalEd25519Signer } from '@facilitator/signers';
import { address, none, some, type Address } from '@solana/kit';
import { AccountState, getTokenEncoder } from '@solana-program/token';
import { feeAllowanceOf } from './fee-allowance';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from './programs';
import { decodeTokenAccount } from './token-account';

const addressOf = (byte: number): Address => address(new LocalEd25519Signer(new Uint8Array(32).fill(byte)).address);
const [mint, merchant, treasury, other, ata] = [1, 2, 3, 4, 5].map(addressOf);

function tokenBytes(fields: { delegate?: Address; delegatedAmount?: bigint; state?: AccountState; amount?: bigint }): Uint8Array {
  return Uint8Array.from(
    getTokenEncoder().encode({
      mint,
      owner: merchant,
      amount: fields.amount ?? 1_000n,
      delegate: fields.delegate ? some(fields.delegate) : none(),
      state: fields.state ?? AccountState.Initialized,
      isNative: none(),
      delegatedAmount: fields.delegatedAmount ?? 0n,
      closeAuthority: none(),
    }),
  );
}

describe('decodeTokenAccount', () => {
  it('reads mint, owner, amount, delegate and delegated amount, state and program', () => {
    expect(decodeTokenAccount(TOKEN_PROGRAM, tokenBytes({ delegate: treasury, delegatedAmount: 40n }))).toEqual({
      mint,
      owner: merchant,
      amount: 1_000n,
      delegate: treasury,
      delegatedAmount: 40n,
      state: 'initialized',
      tokenProgram: TOKEN_PROGRAM,
    });
    expect(decodeTokenAccount(TOKEN_PROGRAM, tokenBytes({ state: AccountState.Frozen }))).toMatchObject({ state: 'frozen', delegatedAmount: 0n });
    expect(decodeTokenAccount(TOKEN_PROGRAM, tokenBytes({}))).not.toHaveProperty('delegate');
  });

  it('reads a Token-2022 account past its extensions, and nothing that is not an initialised token account', () => {
    const withExtensions = new Uint8Array(200);
    withExtensions.set(tokenBytes({ amount: 7n }));
    expect(decodeTokenAccount(TOKEN_2022_PROGRAM, withExtensions)).toMatchObject({ amount: 7n, tokenProgram: TOKEN_2022_PROGRAM });
    expect(decodeTokenAccount('11111111111111111111111111111111', tokenBytes({}))).toBeUndefined();
    expect(decodeTokenAccount(TOKEN_PROGRAM, new Uint8Array(82))).toBeUndefined();
    expect(decodeTokenAccount(TOKEN_PROGRAM, tokenBytes({ state: AccountState.Uninitialized }))).toBeUndefined();
  });
});

describe('feeAllowanceOf', () => {
  const read = (fields: Parameters<typeof tokenBytes>[0]) => decodeTokenAccount(TOKEN_PROGRAM, tokenBytes(fields));

  it("is the delegated amount when the treasury is the merchant's delegate", () => {
    expect(feeAllowanceOf(ata, read({ delegate: treasury, delegatedAmount: 40n }), treasury, mint)).toEqual({ status: 'delegated', allowance: 40n, balance: 1_000n, tokenAccount: ata });
  });

  it('is 0, saying why, when someone else is the delegate (a token account has one), when none is, when frozen, when there is no account', () => {
    expect(feeAllowanceOf(ata, read({ delegate: other, delegatedAmount: 40n }), treasury, mint)).toEqual({
      status: 'other_delegate',
      allowance: 0n,
      balance: 1_000n,
      tokenAccount: ata,
      delegate: other,
      delegatedAmount: 40n,
    });
    expect(feeAllowanceOf(ata, read({}), treasury, mint)).toMatchObject({ status: 'no_delegate', allowance: 0n });
    expect(feeAllowanceOf(ata, read({ delegate: treasury, delegatedAmount: 40n, state: AccountState.Frozen }), treasury, mint)).toMatchObject({ status: 'frozen', allowance: 0n });
    expect(feeAllowanceOf(ata, undefined, treasury, mint)).toEqual({ status: 'no_token_account', allowance: 0n, tokenAccount: ata });
    expect(feeAllowanceOf(ata, read({ delegate: treasury, delegatedAmount: 40n }), treasury, other)).toMatchObject({ status: 'no_token_account' });
  });
});
