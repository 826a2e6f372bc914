import { tokenBalanceChanges } from './token-balance-changes';
import { transactionErrorText } from './transaction-error';

const balance = (accountIndex: number, amount: string, owner = 'owner') => ({ accountIndex, mint: 'mint', owner, uiTokenAmount: { amount } });

describe('tokenBalanceChanges', () => {
  it('pairs pre and post by account, 0 before for an account the transaction made and 0 after for one it closed', () => {
    const keys = ['feePayer', 'merchantAta', 'treasuryAta', 'closedAta'];
    expect(tokenBalanceChanges(keys, [balance(1, '100'), balance(3, '5')], [balance(2, '10'), balance(1, '90')])).toEqual([
      { account: 'merchantAta', mint: 'mint', owner: 'owner', pre: 100n, post: 90n },
      { account: 'treasuryAta', mint: 'mint', owner: 'owner', pre: 0n, post: 10n },
      { account: 'closedAta', mint: 'mint', owner: 'owner', pre: 5n, post: 0n },
    ]);
  });

  it('refuses an index the transaction does not have', () => {
    expect(() => tokenBalanceChanges(['a'], [balance(4, '1')], [])).toThrow('account 4');
  });
});

describe('transactionErrorText', () => {
  it("writes kit's bigints as numbers", () => {
    expect(transactionErrorText({ InstructionError: [1n, { Custom: 1n }] })).toBe('{"InstructionError":[1,{"Custom":1}]}');
    expect(transactionErrorText('BlockhashNotFound')).toBe('"BlockhashNotFound"');
  });
});
